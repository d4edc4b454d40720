-- Fidelity scenario: a device sync waits for pending frees and releases them.

return {
  name = "release_pending_device_sync",
  summary = "a device sync waits for pending frees and releases them",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("64 MiB", s)
    s:spin("100 ms")
    a:free()
    s:query()
    g.sync()
    s:query()
  end,
}
