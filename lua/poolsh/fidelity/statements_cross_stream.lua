-- Fidelity scenario: reuse across streams. A free pending on s1 is not
-- taken by s2 without an event (fresh memory); after s2 waits on an event
-- recorded behind the free, it is (event dependency).

return {
  name = "statements_cross_stream",
  summary = "s2 takes fresh memory beside s1's pending free, then reuses it after waiting on an event recorded behind the free",
  extents = true,
  run = function(g)
    local s1, s2 = g.stream(), g.stream()
    local p = g.pool{release_threshold = "max"}
    local a = p:alloc("16 MiB", s1)
    s1:spin("100 ms"); a:free()
    local b = p:alloc("16 MiB", s2)
    local e = s1:record()
    s2:wait(e)
    local c = p:alloc("16 MiB", s2)
    s2:spin("100 ms"); b:free(); c:free()
    g.sync()
    local d = p:alloc("24 MiB", s1)
    d:free()
    g.sync()
  end,
}
