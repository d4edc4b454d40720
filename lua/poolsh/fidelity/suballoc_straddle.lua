-- Fidelity scenario: blocks packed back to back across chunk boundaries (40 MiB and 3 MiB series).

return {
  name = "suballoc_straddle",
  summary = "blocks packed back to back across chunk boundaries (40 MiB and 3 MiB series)",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    for _ = 1, 6 do p:alloc("40 MiB", s) end
    local q = g.pool{release_threshold = "max"}
    for _ = 1, 12 do q:alloc("3 MiB", s) end
  end,
}
