-- Fidelity scenario: high-water marks, and their reset while memory is in use.

return {
  name = "high_water_reset",
  summary = "high-water marks, and their reset while memory is in use",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local a = p:alloc("64 MiB", s)
    local b = p:alloc("1 KiB", s)
    a:free()
    s:sync()
    p:reset_high()
    p:set("release_threshold", "0 B")
    s:sync()
    p:reset_high()
    local c = p:alloc("40 MiB", s)
    c:free()
    p:reset_high()
    s:sync()
    p:reset_high()
    b:free()
    s:sync()
    p:reset_high()
  end,
}
