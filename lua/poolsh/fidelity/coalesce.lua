-- Fidelity scenario: adjacent freed blocks merge; three neighbours freed in any order.

return {
  name = "coalesce",
  summary = "adjacent freed blocks merge; three neighbours freed in any order",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local a, b, keep = p:alloc("1 MiB", s), p:alloc("1 MiB", s), p:alloc("1 KiB", s)
    a:free(); b:free()
    local c = p:alloc("2 MiB", s)
    local x, y, z, keep2 = p:alloc("1 MiB", s), p:alloc("1 MiB", s), p:alloc("1 MiB", s), p:alloc("1 KiB", s)
    x:free(); z:free(); y:free()
    local w = p:alloc("3 MiB", s)
    c:free(); w:free()
    local v = p:alloc("5 MiB", s)
  end,
}
