-- Fidelity scenario: stream and event queries report idle but release nothing.

return {
  name = "release_queries",
  summary = "stream and event queries report idle but release nothing",
  run = function(g)
    local p = g.pool{}
    local s, other = g.stream(), g.stream()
    local a = p:alloc("64 MiB", s)
    a:free()
    local e = s:record()
    g.sleep("20 ms")
    s:query()
    e:query()
    other:query()
    local b = p:alloc("1 MiB", s)
    b:free()
    s:sync()
  end,
}
