-- Fidelity scenario: a device sync releases every pool's completed frees.

return {
  name = "release_device_sync",
  summary = "a device sync releases every pool's completed frees",
  run = function(g)
    local p = g.pool{}
    local s1, s2 = g.stream(), g.stream()
    local a = p:alloc("64 MiB", s1)
    local b = p:alloc("32 MiB", s2)
    a:free(); b:free()
    g.sleep("20 ms")
    g.sync()
  end,
}
