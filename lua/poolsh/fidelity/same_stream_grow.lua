-- Fidelity scenario: a request larger than a freed block at the top grows the pool over it, without a sync.

return {
  name = "same_stream_grow",
  summary = "a request larger than a freed block at the top grows the pool over it, without a sync",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("20 MiB", s)
    a:free()
    local b = p:alloc("40 MiB", s)
    s:spin("50 ms")
    b:free()
    local c = p:alloc("70 MiB", s)
    s:query()
    local low = g.pool{}
    local x = low:alloc("1 MiB", s)
    local y = low:alloc("20 MiB", s)
    local z = low:alloc("1 KiB", s)
    y:free()
    local w = low:alloc("24 MiB", s)
    s:sync()
  end,
}
