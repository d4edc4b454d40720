-- Fidelity scenario: cudaMalloc buffers beside a pool change none of its counters or placement.

return {
  name = "malloc_alongside",
  summary = "cudaMalloc buffers beside a pool change none of its counters or placement",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local m = g.malloc("64 MiB")
    local a = p:alloc("64 MiB", s)
    local n = g.malloc("1 MiB")
    local b = p:alloc("1 MiB", s)
    m:free()
    a:free()
    s:sync()
    n:free()
    b:free()
    s:sync()
  end,
}
