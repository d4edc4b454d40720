-- Fidelity scenario: without internal dependencies a full pool fails and the stream is not made to wait.

return {
  name = "max_size_no_internal_deps",
  summary = "without internal dependencies a full pool fails and the stream is not made to wait",
  run = function(g)
    local p = g.pool{max_size = "32 MiB", internal_dependencies = false}
    local s1, s2 = g.stream(), g.stream()
    local a, b = p:alloc("16 MiB", s1), p:alloc("16 MiB", s1)
    s1:spin("200 ms")
    a:free()
    local c = p:alloc("16 MiB", s2)
    s2:query()
    s1:sync()
    local d = p:alloc("16 MiB", s2)
    b:free()
    if d then d:free() end
    g.sync()
  end,
}
