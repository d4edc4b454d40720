-- Fidelity scenario: reservation for one allocation of sizes around the 32 MiB granularity.
local MiB = 1 << 20

return {
  name = "reserve_granularity",
  summary = "reservation for one allocation of sizes around the 32 MiB granularity",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    for _, size in ipairs { "1 B", "512 B", "1000 B", "4 KiB", "2 MiB", 2 * MiB + 1, "31 MiB",
                            "32 MiB", 32 * MiB + 1, "33 MiB", 64 * MiB + 1 } do
      local b = p:alloc(size, s)
      b:free()
      s:sync()
    end
  end,
}
