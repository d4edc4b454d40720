-- Fidelity scenario: the free range at the arena's top is taken only when no hole below fits.

return {
  name = "placement_top_last",
  summary = "holes below are filled by best fit before the free range at the top, however small that is",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local x, y = p:alloc("16 MiB", s), p:alloc("12 MiB", s)
    x:free()
    s:sync()
    local a = p:alloc("1 MiB", s)
    local q = g.pool{release_threshold = "max"}
    local h4, k1, h8, k2, top = q:alloc("4 MiB", s), q:alloc("1 MiB", s), q:alloc("8 MiB", s),
                                q:alloc("1 MiB", s), q:alloc("16 MiB", s)
    h4:free(); h8:free()
    s:sync()
    local b, c, d = q:alloc("1 MiB", s), q:alloc("3 MiB", s), q:alloc("6 MiB", s)
    local e = q:alloc("2 MiB", s)
    local r = g.pool{release_threshold = "max"}
    local u, v = r:alloc("16 MiB", s), r:alloc("12 MiB", s)
    v:free()
    s:sync()
    local m, n = r:alloc("1 MiB", s), r:alloc("14 MiB", s)
  end,
}
