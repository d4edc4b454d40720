-- Fidelity scenario: trim with a free still pending behind a spin, then after its sync.

return {
  name = "trim_pending",
  summary = "trim with a free still pending behind a spin, then after its sync",
  run = function(g)
    local p = g.pool{release_threshold = "max"}
    local s = g.stream()
    local a = p:alloc("64 MiB", s)
    s:spin("100 ms")
    a:free()
    p:trim(0)
    s:query()
    s:sync()
    p:trim(0)
  end,
}
