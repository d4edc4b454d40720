-- Fidelity scenario: release at a stream sync keeps floor(threshold / 32 MiB) chunks (40, 33, 32, 17 MiB, 1 B).

return {
  name = "release_threshold_rounding",
  summary = "release at a stream sync keeps floor(threshold / 32 MiB) chunks (40, 33, 32, 17 MiB, 1 B)",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    for _, t in ipairs { "40 MiB", "33 MiB", "32 MiB", "17 MiB", "1 B", "0 B" } do
      p:set("release_threshold", t)
      local b = {}
      for i = 1, 4 do b[i] = p:alloc("32 MiB", s) end
      for i = 1, 4 do b[i]:free() end
      s:sync()
    end
    p:set("release_threshold", "50 MiB")
    local x, y, z = p:alloc("16 MiB", s), p:alloc("32 MiB", s), p:alloc("48 MiB", s)
    x:free(); y:free(); z:free()
    s:sync()
    local again = { p:alloc("16 MiB", s), p:alloc("16 MiB", s), p:alloc("16 MiB", s) }
  end,
}
