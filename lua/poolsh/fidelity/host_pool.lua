-- Fidelity scenario: a pinned host pool: the same granularity, packing and release.
local MiB = 1 << 20

return {
  name = "host_pool",
  summary = "a pinned host pool: the same granularity, packing and release",
  run = function(g)
    local p = g.pool{location = "host"}
    local s = g.stream()
    local a, b = p:alloc("1 KiB", s), p:alloc("1 MiB", s)
    local c = p:alloc("3 MiB", s)
    local d = p:alloc(32 * MiB + 1, s)
    b:free()
    local e = p:alloc("512 KiB", s)
    a:free(); c:free(); d:free(); e:free()
    s:sync()
  end,
}
