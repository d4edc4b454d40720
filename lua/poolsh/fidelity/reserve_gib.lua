-- Fidelity scenario: single allocations of several GiB, then two 8 GiB blocks at once.
local GiB = 1 << 30

return {
  name = "reserve_gib",
  summary = "single allocations of several GiB, then two 8 GiB blocks at once",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    for _, size in ipairs { 3 * GiB // 2, "4 GiB", 16 * GiB + 1 } do
      local b = p:alloc(size, s)
      b:free()
      s:sync()
    end
    local a, b = p:alloc("8 GiB", s), p:alloc("8 GiB", s)
    a:free()
    s:sync()
    b:free()
    s:sync()
  end,
}
