-- Cross-stream reuse: when a block freed on s1 may serve s2.
local poolsh = require "poolsh"

return {
  name = "cross_stream",
  summary = "a block freed on s1 is reused by s2 only after an event, completion or a host sync",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local p = poolsh.pool { release_threshold = "max" }
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local SIZE, SPIN = "16 MiB", "100 ms"
    local function reset(b) b:free(); poolsh.sync(); p:trim(0) end

    step("free a block on s1 behind 100 ms of work; allocate on s2", "not reused: the free is pending on s1 and s2 does not wait for it")
    local a = p:alloc(SIZE, s1)
    poolsh.spin(s1, SPIN); a:free()
    local b = p:alloc(SIZE, s2)
    expect.fresh(b)
    reset(b)

    step("record an event on s1 BEFORE the free; s2 waits on it; allocate on s2", "not reused: the event does not cover the free")
    a = p:alloc(SIZE, s1)
    local e = s1:record()
    poolsh.spin(s1, SPIN); a:free()
    s2:wait(e)
    b = p:alloc(SIZE, s2)
    expect.fresh(b)
    reset(b)

    step("record an event on s1 AFTER the free; s2 waits on it; allocate on s2", "reused: s2's work is ordered after the free")
    a = p:alloc(SIZE, s1)
    poolsh.spin(s1, SPIN); a:free()
    e = s1:record()
    s2:wait(e)
    b = p:alloc(SIZE, s2)
    expect.reused(b, "event dependency")
    expect.equal(b.reused_from, a.id, "the buffer whose memory b reused")
    reset(b)

    step("free on s1, let the GPU finish it (host sleeps 100 ms), allocate on s2", "reused opportunistically: the driver sees the free done")
    a = p:alloc(SIZE, s1)
    a:free()
    poolsh.sleep(SPIN)
    b = p:alloc(SIZE, s2)
    expect.reused(b, "opportunistic")
    expect.equal(b.reused_from, a.id, "the buffer whose memory b reused")
    reset(b)

    step("the same with opportunistic = false", "not reused: no sync, no event, so no known order")
    p.opportunistic = false
    a = p:alloc(SIZE, s1)
    a:free()
    poolsh.sleep(SPIN)
    b = p:alloc(SIZE, s2)
    expect.fresh(b)
    reset(b)

    step("free on s1 behind 20 ms of work, synchronise s1 on the host, allocate on s2", "reused (opportunistic still off): the host saw the free complete")
    a = p:alloc(SIZE, s1)
    poolsh.spin(s1, "20 ms"); a:free()
    s1:sync()
    b = p:alloc(SIZE, s2)
    expect.reused(b, "host synchronisation")
    expect.equal(b.reused_from, a.id, "the buffer whose memory b reused")
    reset(b)
  end,
}
