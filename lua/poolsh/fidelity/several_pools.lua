-- Fidelity scenario: several pools at once, each with its own threshold, released by one sync.

return {
  name = "several_pools",
  summary = "several pools at once, each with its own threshold, released by one sync",
  run = function(g)
    local s = g.stream()
    local p = g.pool{}
    local q = g.pool{release_threshold = "64 MiB"}
    local r = g.pool{release_threshold = "max"}
    local a, b, c = p:alloc("48 MiB", s), q:alloc("100 MiB", s), r:alloc("40 MiB", s)
    local d = q:alloc("1 KiB", s)
    a:free(); b:free(); c:free()
    s:sync()
    r:trim("1 MiB")
    q:trim(0)
    d:free()
    s:sync()
    r:destroy()
    s:sync()
  end,
}
