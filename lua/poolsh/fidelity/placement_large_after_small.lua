-- Fidelity scenario: small and large blocks share one arena (1 KiB, 32 MiB, 1 KiB, 64 MiB, ...).

return {
  name = "placement_large_after_small",
  summary = "small and large blocks share one arena (1 KiB, 32 MiB, 1 KiB, 64 MiB, ...)",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    for _, size in ipairs { "1 KiB", "32 MiB", "1 KiB", "64 MiB", "1 KiB", "40 MiB", "100 MiB" } do
      p:alloc(size, s)
    end
  end,
}
