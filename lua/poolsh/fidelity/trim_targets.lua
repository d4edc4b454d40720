-- Fidelity scenario: trim keeps ceil(keep / 32 MiB) chunks: targets between chunk multiples.
local MiB = 1 << 20

return {
  name = "trim_targets",
  summary = "trim keeps ceil(keep / 32 MiB) chunks: targets between chunk multiples",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local b = {}
    for i = 1, 8 do b[i] = p:alloc("16 MiB", s) end
    for i = 1, 8 do b[i]:free() end
    s:sync()
    for _, keep in ipairs { "200 MiB", "128 MiB", "100 MiB", "96 MiB", 64 * MiB + 1, "64 MiB", "48 MiB",
                            "33 MiB", "32 MiB", "10 MiB", "1 B", "0 B" } do
      p:trim(keep)
    end
  end,
}
