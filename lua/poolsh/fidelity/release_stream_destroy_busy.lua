-- Fidelity scenario: destroying a busy stream keeps its pending frees until a sync covers them.

return {
  name = "release_stream_destroy_busy",
  summary = "destroying a busy stream keeps its pending frees until a sync covers them",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("8 MiB", s)
    s:spin("100 ms")
    a:free()
    local e = s:record()
    s:destroy()
    e:query()
    e:sync()
    e:query()
  end,
}
