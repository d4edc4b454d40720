-- Fidelity scenario: a live 1 KiB block keeps its chunk at a release; then it goes too.

return {
  name = "release_partial_chunks",
  summary = "a live 1 KiB block keeps its chunk at a release; then it goes too",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local small = p:alloc("1 KiB", s)
    local b = { p:alloc("1 MiB", s) }
    for i = 2, 5 do b[i] = p:alloc("16 MiB", s) end
    for i = 1, 5 do b[i]:free() end
    s:sync()
    small:free()
    s:sync()
    local big = p:alloc("32 MiB", s)
    big:free()
    local inside = p:alloc("1 KiB", s)
    s:sync()
    inside:free()
    s:sync()
  end,
}
