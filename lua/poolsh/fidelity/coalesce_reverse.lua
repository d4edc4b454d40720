-- Fidelity scenario: frees in reverse order with a sync between them still merge.

return {
  name = "coalesce_reverse",
  summary = "frees in reverse order with a sync between them still merge",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local a, b, keep = p:alloc("1 MiB", s), p:alloc("1 MiB", s), p:alloc("1 KiB", s)
    b:free()
    s:sync()
    a:free()
    local c = p:alloc("2 MiB", s)
    local d = p:alloc("512 KiB", s)
  end,
}
