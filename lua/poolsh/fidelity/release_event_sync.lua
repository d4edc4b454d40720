-- Fidelity scenario: an event sync releases when the event follows the free, not when it precedes it.

return {
  name = "release_event_sync",
  summary = "an event sync releases when the event follows the free, not when it precedes it",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local a = p:alloc("64 MiB", s)
    local before = s:record()
    a:free()
    g.sleep("20 ms")
    before:sync()
    local after = s:record()
    after:sync()
    local b = p:alloc("64 MiB", s)
    s:spin("50 ms")
    b:free()
    local e = s:record()
    e:query()
    e:sync()
    e:query()
  end,
}
