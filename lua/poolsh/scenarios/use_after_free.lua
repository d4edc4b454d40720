-- Use-after-free across streams: a block freed on its allocating stream
-- while another stream still writes to it is reused at once (stream
-- order), and the late write corrupts the new buffer; verify catches it.
-- The bug behind PyTorch's record_stream, and its fixes.
local poolsh = require "poolsh"

local SIZE, SPIN = "4 MiB", "50 ms"
local OLD, NEW = 0x22, 0x11

return {
  name = "use_after_free",
  summary = "a block freed on s1 while s2 still writes to it is reused on s1 and corrupted; an event before the free fixes it",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local p = poolsh.pool { release_threshold = "max" }
    local s1, s2 = poolsh.stream(), poolsh.stream()

    -- a on s1, handed to s2 (an event), which writes OLD after SPIN of work.
    local function lend()
      local a = p:alloc(SIZE, s1)
      poolsh.fill(a, 0, s1)
      s2:wait(s1:record())
      poolsh.spin(s2, SPIN)
      poolsh.fill(a, OLD, s2)
      return a
    end

    step("allocate a on s1; s2 waits for it, works 50 ms, then fills it with 0x22", "s2's write is queued, not done")
    local a = lend()
    expect.equal(s2:query(), false, "s2 idle")

    step("free a on s1 at once; allocate b on s1 and fill it with 0x11", "reused by stream order: s1 knows nothing of s2's queued write")
    a:free()
    local b = p:alloc(SIZE, s1)
    poolsh.fill(b, NEW, s1)
    expect.reused(b, "stream order")
    expect.equal(b.reused_from, a.id, "the buffer whose memory b reused")

    step("wait for s2, then verify b holds 0x11", "s2's late write landed on b: verify reports the first wrong byte")
    s2:sync()
    local ok, off = poolsh.verify(b, NEW, s1)
    ctx.say(("verify: %s, first wrong byte at offset %s holds 0x%02x"):format(tostring(ok), tostring(off),
      off and b:read(off, 1):byte() or 0))
    expect.equal(ok, false, "verify of b (0x11) after s2's late write")
    expect.equal(b:read(off, 1):byte(), OLD, "the wrong byte")
    b:free(); poolsh.sync()

    step("the fix: record an event on s2 after its write; s1 waits on it before the free", "what record_stream arranges: the free, and so the reuse, follow s2's write")
    a = lend()
    s1:wait(s2:record())
    a:free()
    b = p:alloc(SIZE, s1)
    poolsh.fill(b, NEW, s1)
    expect.reused(b, "stream order")
    s2:sync()
    ok, off = poolsh.verify(b, NEW, s1)
    ctx.say("verify: " .. tostring(ok))
    expect.equal(ok, true, "verify of b (first wrong byte at " .. tostring(off) .. ")")
    b:free(); poolsh.sync()

    step("another fix: free a on s2, the stream that used it last", "the pool will not give b the block while s2 has not reached the free: b is fresh memory")
    a = lend()
    a:free(s2)
    b = p:alloc(SIZE, s1)
    poolsh.fill(b, NEW, s1)
    expect.fresh(b)
    s2:sync()
    ok, off = poolsh.verify(b, NEW, s1)
    ctx.say(("verify: %s; b took other memory (%s)"):format(tostring(ok), tostring(b.why_fresh)))
    expect.equal(ok, true, "verify of b (first wrong byte at " .. tostring(off) .. ")")
    b:free(); poolsh.sync()
  end,
}
