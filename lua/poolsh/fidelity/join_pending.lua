-- Fidelity scenario: which freed neighbours form one range: pending frees join only frees of their stream.

return {
  name = "join_pending",
  summary = "a free pending on the device joins frees of its stream, not fresh or retired space; a completed one joins all",
  run = function(g)
    local s, s2 = g.stream(), g.stream()
    local function pool() return g.pool{release_threshold = "max"} end
    -- pending free below fresh space
    local p1 = pool()
    local a = p1:alloc("4 MiB", s)
    s:spin("200 ms"); a:free()
    local b = p1:alloc("6 MiB", s)
    s:sync()
    -- completed free below fresh space
    local p2 = pool()
    local c = p2:alloc("4 MiB", s)
    c:free(); g.sleep("20 ms")
    local d = p2:alloc("6 MiB", s)
    -- two pending frees of one stream; a completed one beside a pending one
    local p3 = pool()
    local e1, e2, ek = p3:alloc("4 MiB", s), p3:alloc("4 MiB", s), p3:alloc("1 KiB", s)
    s:spin("200 ms"); e1:free(); e2:free()
    local f = p3:alloc("6 MiB", s)
    s:sync()
    local p4 = pool()
    local h1, h2, hk = p4:alloc("4 MiB", s), p4:alloc("4 MiB", s), p4:alloc("1 KiB", s)
    h1:free(); s:spin("200 ms"); h2:free()
    local i = p4:alloc("6 MiB", s)
    s:sync()
    -- a retired free beside a pending one
    local p5 = pool()
    local j1, j2, jk = p5:alloc("4 MiB", s), p5:alloc("4 MiB", s), p5:alloc("1 KiB", s)
    j1:free(); s:sync(); s:spin("200 ms"); j2:free()
    local k = p5:alloc("6 MiB", s)
    s:sync()
    -- another stream, after an event recorded after a pending free
    local p6 = pool()
    local l = p6:alloc("4 MiB", s)
    s:spin("200 ms"); l:free()
    local ev = g.event()
    s:record(ev); s2:wait(ev)
    local m = p6:alloc("6 MiB", s2)
    local n = p6:alloc("2 MiB", s2)
    s2:sync(); s:sync()
    -- a pending free at the top of a chunk, a request one MiB larger
    local p7 = pool()
    local o = p7:alloc("30 MiB", s)
    s:spin("200 ms"); o:free()
    local q = p7:alloc("31 MiB", s)
    s:sync()
  end,
}
