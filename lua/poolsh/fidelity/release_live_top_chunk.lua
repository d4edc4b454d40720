-- Fidelity scenario: a live block in the highest chunk above freed chunks, at a sync and a trim.

return {
  name = "release_live_top_chunk",
  summary = "a live block in the highest chunk above freed chunks, at a sync and a trim",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a, b = p:alloc("32 MiB", s), p:alloc("32 MiB", s)
    local top = p:alloc("1 KiB", s)
    a:free(); b:free()
    s:sync()
    p:trim(0)
    local c = p:alloc("16 MiB", s)
    c:free()
    s:sync()
    top:free()
    s:sync()
  end,
}
