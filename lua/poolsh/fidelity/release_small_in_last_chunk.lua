-- Fidelity scenario: a small live block in the last chunk of a freed large block's reservation.

return {
  name = "release_small_in_last_chunk",
  summary = "a small live block in the last chunk of a freed large block's reservation",
  run = function(g)
    local p = g.pool{}
    local s = g.stream()
    local big = p:alloc("100 MiB", s)
    local small = p:alloc("1 KiB", s)
    big:free()
    s:sync()
    local again = p:alloc("64 MiB", s)
    again:free()
    s:sync()
    small:free()
    s:sync()
  end,
}
