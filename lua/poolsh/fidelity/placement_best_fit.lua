-- Fidelity scenario: best fit: the smallest hole that fits, not the lowest.

return {
  name = "placement_best_fit",
  summary = "best fit: the smallest hole that fits, not the lowest",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    -- fit v1: holes of 1 MiB at 0 and 4 MiB at 2 MiB, a large tail
    local a, b, c, d = p:alloc("1 MiB", s), p:alloc("1 MiB", s), p:alloc("4 MiB", s), p:alloc("1 MiB", s)
    a:free(); c:free()
    local x = p:alloc("1 MiB", s)
    local y = p:alloc("1 MiB", s)
    -- fit v3: a 4 MiB hole below a 1 MiB hole
    local q = g.pool{release_threshold = "max"}
    local h1, k1, h2, k2 = q:alloc("4 MiB", s), q:alloc("1 MiB", s), q:alloc("1 MiB", s), q:alloc("1 MiB", s)
    h1:free(); h2:free()
    local z = q:alloc("1 MiB", s)
    local w = q:alloc("2 MiB", s)
    local v = q:alloc("2 MiB", s)
  end,
}
