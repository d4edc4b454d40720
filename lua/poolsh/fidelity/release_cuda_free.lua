-- Fidelity scenario: cudaMalloc and cudaFree beside a pool with a completed free.

return {
  name = "release_cuda_free",
  summary = "cudaMalloc and cudaFree beside a pool with a completed free",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("64 MiB", s)
    a:free()
    g.sleep("20 ms")
    local m = g.malloc("1 MiB")
    m:free()
    local n = g.malloc("64 MiB")
    n:free()
    s:sync()
  end,
}
