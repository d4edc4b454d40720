-- Fidelity scenario: free chunks below live ones go back too, leaving holes that later blocks map again.

return {
  name = "release_holes",
  summary = "free chunks below and between live ones are released; a block over a hole maps it again",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a, b, c = p:alloc("32 MiB", s), p:alloc("32 MiB", s), p:alloc("32 MiB", s)
    b:free()
    s:sync()
    local d = p:alloc("1 KiB", s)
    local e = p:alloc("40 MiB", s)
    a:free()
    s:sync()
    local f = p:alloc("16 MiB", s)
    c:free(); d:free(); e:free(); f:free()
    s:sync()
  end,
}
