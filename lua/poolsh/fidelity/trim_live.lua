-- Fidelity scenario: trim never gives back a chunk holding a live block.

return {
  name = "trim_live",
  summary = "trim never gives back a chunk holding a live block",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local live = p:alloc("16 MiB", s)
    local b = {}
    for i = 1, 3 do b[i] = p:alloc("32 MiB", s) end
    for i = 1, 3 do b[i]:free() end
    s:sync()
    p:trim(0)
    live:free()
    s:sync()
    p:trim(0)
  end,
}
