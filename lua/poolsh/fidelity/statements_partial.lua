-- Fidelity scenario: an allocation that takes part of a freed range leaves
-- the rest pending with its own history; a small one lands inside it.

return {
  name = "statements_partial",
  summary = "an 8 MiB allocation takes part of a pending 32 MiB free; the remainder stays pending, then is reused",
  extents = true,
  run = function(g)
    local s = g.stream()
    local p = g.pool{release_threshold = "max"}
    local a = p:alloc("32 MiB", s)
    local keep = p:alloc("1 KiB", s)
    s:spin("100 ms"); a:free()
    local b = p:alloc("8 MiB", s)
    local c = p:alloc("3000 B", s)
    s:sync()
    local d = p:alloc("16 MiB", s)
    b:free(); c:free(); d:free(); keep:free()
    g.sync()
  end,
}
