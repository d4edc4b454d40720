-- Fidelity scenario: a full max_size pool reuses a pending free of another stream and makes it wait.

return {
  name = "max_size_internal_deps",
  summary = "a full max_size pool reuses a pending free of another stream and makes it wait",
  run = function(g)
    local p = g.pool{max_size = "32 MiB"}
    local s1, s2 = g.stream(), g.stream()
    local a, b = p:alloc("16 MiB", s1), p:alloc("16 MiB", s1)
    s1:spin("200 ms")
    a:free()
    local c = p:alloc("16 MiB", s2)
    s2:query()
    s2:sync()
    s1:query()
    s2:query()
    b:free(); c:free()
    g.sync()
  end,
}
