-- Fidelity scenario: single allocations from 64 MiB to 1 GiB + 1 B, each freed and released.
local MiB, GiB = 1 << 20, 1 << 30

return {
  name = "reserve_large",
  summary = "single allocations from 64 MiB to 1 GiB + 1 B, each freed and released",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    for _, size in ipairs { "64 MiB", "100 MiB", "256 MiB", 512 * MiB + 1, "1 GiB", GiB + 1 } do
      local b = p:alloc(size, s)
      b:free()
      s:sync()
    end
  end,
}
