-- Fidelity scenario: trim of frees that completed on the device but no sync covered.

return {
  name = "trim_completed_unsynced",
  summary = "trim of frees that completed on the device but no sync covered",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local a = p:alloc("64 MiB", s)
    a:free()
    g.sleep("50 ms")
    p:trim(0)
    local b = p:alloc("64 MiB", s)
    s:spin("10 ms")
    b:free()
    g.sleep("100 ms")
    s:query()
    p:trim(0)
    s:sync()
    p:trim(0)
  end,
}
