-- Fidelity scenario: the default pool: granularity, release at a sync, on the legacy and a created stream.

return {
  name = "default_pool",
  summary = "the default pool: granularity, release at a sync, on the legacy and a created stream",
  run = function(g)
    local p = g.default_pool()
    local s = g.stream()
    local a = p:alloc("1 KiB", s)
    a:free()
    s:sync()
    local b = p:alloc("1 MiB")
    local c = p:alloc("40 MiB")
    b:free()
    g.default_stream:sync()
    c:free()
    g.default_stream:sync()
  end,
}
