-- Fidelity scenario: max_size is rounded up to the chunk; exceeding it fails, not sticky.
local MiB = 1 << 20

return {
  name = "max_size_rounding",
  summary = "max_size is rounded up to the chunk; exceeding it fails, not sticky",
  run = function(g)
    local s = g.stream()
    local p = g.pool{max_size = "1 MiB"}
    local a, b = p:alloc("16 MiB", s), p:alloc("16 MiB", s)
    local c = p:alloc("1 B", s)
    a:free()
    local d = p:alloc("16 MiB", s)
    local e = p:alloc("64 MiB", s)
    local q = g.pool{max_size = "33 MiB"}
    local f = q:alloc("64 MiB", s)
    local h = q:alloc("1 B", s)
    local r = g.pool{max_size = 64 * MiB + 1}
    local k = r:alloc("66 MiB", s)
    local l = r:alloc("30 MiB", s)
    local m = r:alloc("1 MiB", s)
  end,
}
