-- Fidelity scenario: a freed block spanning several chunks above a live block, released at a sync.

return {
  name = "release_straddling_block",
  summary = "a freed block spanning several chunks above a live block, released at a sync",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("1 KiB", s)
    local b = p:alloc("100 MiB", s)
    b:free()
    s:sync()
    local c = p:alloc("40 MiB", s)
    local d = p:alloc("40 MiB", s)
    c:free()
    s:sync()
    d:free()
    s:sync()
    a:free()
    s:sync()
  end,
}
