-- Fidelity scenario: a freed block is split from its start; a large request after a small one grows the pool.

return {
  name = "placement_split",
  summary = "a freed block is split from its start; a large request after a small one grows the pool",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local a = p:alloc("4 MiB", s)
    a:free()
    local b, c = p:alloc("1 MiB", s), p:alloc("1 MiB", s)
    local d = p:alloc("2 MiB", s)
    local e = p:alloc("1 MiB", s)
    local q = g.pool{release_threshold = "max"}
    local f = q:alloc("32 MiB", s)
    f:free()
    local h = q:alloc("1 KiB", s)
    local k = q:alloc("32 MiB", s)
  end,
}
