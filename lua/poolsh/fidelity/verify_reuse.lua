-- Fidelity scenario: contents survive a reuse without release; a re-mapped chunk after a release.

return {
  name = "verify_reuse",
  summary = "contents survive a reuse without release; a re-mapped chunk after a release",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("4 MiB", s)
    a:fill(7)
    a:free()
    local b = p:alloc("4 MiB", s)
    b:verify(7)
    b:fill(9)
    b:free()
    s:sync()
    local c = p:alloc("4 MiB", s)
    c:verify(9)
    c:verify(0)
    c:free()
    s:sync()
  end,
}
