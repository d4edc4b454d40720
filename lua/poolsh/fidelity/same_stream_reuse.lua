-- Fidelity scenario: the same stream reuses its frees at once, even pending ones.

return {
  name = "same_stream_reuse",
  summary = "the same stream reuses its frees at once, even pending ones",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("4 MiB", s)
    a:free()
    local b = p:alloc("4 MiB", s)
    s:spin("100 ms")
    b:free()
    local c = p:alloc("4 MiB", s)
    s:query()
    local d = p:alloc("2 MiB", s)
    c:free(); d:free()
    s:sync()
  end,
}
