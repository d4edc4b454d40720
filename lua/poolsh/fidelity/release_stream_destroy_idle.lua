-- Fidelity scenario: destroying an idle stream releases what was freed on it.

return {
  name = "release_stream_destroy_idle",
  summary = "destroying an idle stream releases what was freed on it",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("8 MiB", s)
    a:free()
    g.sleep("20 ms")
    s:destroy()
  end,
}
