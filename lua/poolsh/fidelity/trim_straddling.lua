-- Fidelity scenario: trim with a block spanning chunks above a live block, and partial targets.

return {
  name = "trim_straddling",
  summary = "trim with a block spanning chunks above a live block, and partial targets",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local a = p:alloc("1 KiB", s)
    local b = p:alloc("100 MiB", s)
    local c = p:alloc("1 KiB", s)
    b:free()
    s:sync()
    p:trim(0)
    c:free()
    s:sync()
    p:trim("40 MiB")
    p:trim(0)
    a:free()
    s:sync()
    p:trim(0)
  end,
}
