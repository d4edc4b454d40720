-- Fidelity scenario: a block freed on a stream other than the allocating one.

return {
  name = "free_other_stream",
  summary = "a block freed on a stream other than the allocating one",
  run = function(g)
    local p = g.pool{}
    local s1, s2 = g.stream(), g.stream()
    local a = p:alloc("16 MiB", s1)
    s2:spin("100 ms")
    a:free(s2)
    local b = p:alloc("16 MiB", s1)
    local c = p:alloc("16 MiB", s2)
    s1:sync()
    s2:query()
    s2:sync()
    b:free(); c:free(s1)
    s2:sync()
    s1:sync()
  end,
}
