-- Fidelity scenario: blocks freed below a live block in a higher chunk, released at a sync and by trim.

return {
  name = "release_below_live",
  summary = "a big block freed under a small live one: its chunks go back highest first, past the live chunk",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("40 MiB", s)
    local b = p:alloc("1 KiB", s)
    a:free()
    s:sync()
    local c = p:alloc("1 KiB", s)
    b:free(); c:free()
    s:sync()
    local q = g.pool{release_threshold = "50 MiB"}
    local x, y, z = q:alloc("16 MiB", s), q:alloc("32 MiB", s), q:alloc("48 MiB", s)
    y:free()
    s:sync()
    x:free()
    s:sync()
    z:free()
    s:sync()
    local t = g.pool{release_threshold = "max"}
    local k = {}
    for i = 1, 8 do k[i] = t:alloc("16 MiB", s) end
    for i = 1, 7 do k[i]:free() end
    s:sync()
    t:trim("0 B")
    local w = t:alloc("16 MiB", s)
    w:free(); k[8]:free()
    s:sync()
    t:trim("0 B")
  end,
}
