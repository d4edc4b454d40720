-- Fidelity scenario: issue 18's sequence, with poolsh's statements held to
-- the addresses: one allocation over two freed blocks, a small one inside a
-- freed range, then the frees of those overlapping consumers.

return {
  name = "statements_two_frees",
  summary = "b3 (40 MiB) covers b1's and b2's freed ranges, b4 lies inside b2's; their frees leave pending within reserved",
  extents = true,
  run = function(g)
    local s = g.stream()
    local p = g.pool{release_threshold = "max"}
    local a, b = p:alloc("16 MiB", s), p:alloc("40 MiB", s)
    s:spin("100 ms"); a:free(); b:free()
    local c = p:alloc("40 MiB", s)
    local d = p:alloc("8 MiB", s)
    s:spin("100 ms"); c:free(); d:free()
    local e = p:alloc("56 MiB", s)
    s:sync()
    e:free()
    g.sync()
  end,
}
