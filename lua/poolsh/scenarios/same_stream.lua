-- Same-stream reuse: a stream reuses its own frees at once, in stream order.
local poolsh = require "poolsh"

return {
  name = "same_stream",
  summary = "a block freed on a stream is reused by that stream at once, no synchronisation",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local p = poolsh.pool { release_threshold = "max" }
    local s = poolsh.stream()

    step("allocate 4 MiB on s, queue 100 ms of work, free it", "the free waits behind the work on the GPU")
    local a = p:alloc("4 MiB", s)
    poolsh.spin(s, "100 ms")
    a:free()
    -- exactly a's 4 MiB: the ledger once counted freed ranges it had lost track of
    expect.equal(p:stats { estimates = false }.pending, poolsh.size("4 MiB"), "pending bytes")

    step("allocate 4 MiB on s again, nothing synchronised", "reused: later work on s runs after the free")
    local b = p:alloc("4 MiB", s)
    expect.reused(b, "stream order")
    expect.equal(b.reused_from, a.id, "the buffer whose memory b reused")
    expect.equal(#b.sources, 1, "the buffers whose memory b reused")
    local reserved = p:stats { estimates = false }.reserved

    step("free and allocate 4 MiB on s ten more times", "the pool does not grow")
    for _ = 1, 10 do
      local was = b
      b:free()
      b = p:alloc("4 MiB", s)
      expect.reused(b, "stream order")
      expect.equal(b.reused_from, was.id, "the buffer whose memory b reused")
    end
    expect.stats(p, { reserved = reserved })
    b:free()
    s:sync()
  end,
}
