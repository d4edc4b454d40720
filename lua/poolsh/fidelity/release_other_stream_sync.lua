-- Fidelity scenario: syncing another stream, idle or busy, does not release.

return {
  name = "release_other_stream_sync",
  summary = "syncing another stream, idle or busy, does not release",
  run = function(g)
    local p = g.pool{}
    local s1, s2 = g.stream(), g.stream()
    local a = p:alloc("64 MiB", s1)
    a:free()
    g.sleep("20 ms")
    s2:sync()
    s2:spin("1 ms")
    s2:sync()
    s1:sync()
    local b = p:alloc("64 MiB", s1)
    s1:spin("50 ms")
    b:free()
    s2:sync()
    g.sleep("100 ms")
    s2:sync()
    s1:query()
    s1:sync()
  end,
}
