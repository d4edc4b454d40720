-- Fidelity scenario: sub-allocation in one chunk: 512 B rounding, exact used, a hole refilled.

return {
  name = "suballoc_alignment",
  summary = "sub-allocation in one chunk: 512 B rounding, exact used, a hole refilled",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local b = {}
    for i, size in ipairs { "1 KiB", "1 KiB", "3000 B", "1 MiB", "1 B", "4 MiB", "1 KiB" } do
      b[i] = p:alloc(size, s)
    end
    b[2]:free()
    local c = p:alloc("512 B", s)
    local d = p:alloc("1 KiB", s)
    local e = p:alloc("511 B", s)
    s:sync()
  end,
}
