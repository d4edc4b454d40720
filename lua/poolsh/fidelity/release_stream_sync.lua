-- Fidelity scenario: a stream sync of the freeing stream releases, done or pending.

return {
  name = "release_stream_sync",
  summary = "a stream sync of the freeing stream releases, done or pending",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("64 MiB", s)
    a:free()
    g.sleep("20 ms")
    s:sync()
    local b = p:alloc("64 MiB", s)
    s:spin("50 ms")
    b:free()
    s:query()
    s:sync()
    s:query()
  end,
}
