-- Destroying a stream gives back pool memory freed on it (at threshold 0),
-- as a sync of it would; and when it does not: threshold max, a block
-- still live, a stream whose work is still running.
local poolsh = require "poolsh"

local SIZE, SPIN, POLL = "64 MiB", 100, 10
local ms = poolsh.fmt_duration

return {
  name = "destroy_stream",
  summary = "destroying an idle stream releases its pool's freed memory at threshold 0; not at max, not under a live block, and for a busy stream only once its work ends",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local function reserved(p) return p:stats { estimates = false }.reserved end
    local p0 = poolsh.pool { release_threshold = 0 }
    local pm = poolsh.pool { release_threshold = "max" }

    -- Allocates SIZE from p on a new stream, frees it, lets the GPU finish
    -- (the host sleeps, no sync); returns the stream and reserved then.
    local function used_stream(p)
      local s = poolsh.stream()
      p:alloc(SIZE, s):free()
      poolsh.sleep(POLL)
      return s, reserved(p)
    end

    step("threshold 0: allocate " .. SIZE .. " on a new stream, free it, let the GPU finish (no sync)",
      "nothing released it yet: only a sync (or the like) makes a pool give memory back")
    local s, held = used_stream(p0)
    ctx.say("reserved " .. poolsh.fmt(held))
    expect.at_least(held, poolsh.size(SIZE), "reserved before the destroy")

    step("destroy the stream", "its frees are done: the pool releases them at once, as s:sync() would")
    s:destroy()
    expect.stats(p0, { reserved = 0 })

    step("threshold max: the same, then destroy the stream", "nothing goes back: the threshold keeps it")
    s, held = used_stream(pm)
    s:destroy()
    expect.stats(pm, { reserved = held })
    pm:trim(0)
    expect.stats(pm, { reserved = 0 })

    step("threshold 0: two blocks of " .. poolsh.fmt(held) .. " on a new stream; free one, keep the other; destroy the stream",
      "the freed block's chunks go back; the live block's stay")
    s = poolsh.stream()
    local keep, gone = p0:alloc(held, s), p0:alloc(held, s)
    local before = reserved(p0)
    gone:free()
    poolsh.sleep(POLL)
    s:destroy()
    local after = reserved(p0)
    ctx.say(("reserved %s -> %s"):format(poolsh.fmt(before), poolsh.fmt(after)))
    expect.at_least(after, keep.size, "reserved after the destroy")
    expect.at_most(after, before - gone.size, "reserved after the destroy")
    local s2 = poolsh.stream()
    keep:free(s2)   -- its stream is gone: name another
    s2:sync()
    expect.stats(p0, { reserved = 0 })

    step(("threshold 0: allocate on a new stream, queue %d ms of work, free, destroy the stream at once"):format(SPIN),
      "the free waits behind the work: nothing is released yet")
    s = poolsh.stream()
    local b = p0:alloc(SIZE, s)
    local t0 = poolsh.now()
    poolsh.spin(s, SPIN)
    b:free()
    s:destroy()
    expect.at_least(reserved(p0), poolsh.size(SIZE), "reserved right after the destroy")

    step(("poll reserved every %d ms (poolsh.sleep, no sync)"):format(POLL), "the memory goes back when the destroyed stream's work ends, with no sync")
    local held_at, zero_at = 0, nil
    while not zero_at and poolsh.now() - t0 < 3 * SPIN do
      poolsh.sleep(POLL)
      if reserved(p0) == 0 then zero_at = poolsh.now() - t0 else held_at = poolsh.now() - t0 end
    end
    ctx.say(("still reserved at %s after the spin began; released by %s"):format(ms(held_at),
      zero_at and ms(zero_at) or "never"))
    if not zero_at then
      expect.equal(reserved(p0), 0, ("reserved %s after the spin was queued, no sync"):format(ms(3 * SPIN)))
      zero_at = poolsh.now() - t0   -- released just after the last poll
    end
    expect.at_least(zero_at, SPIN, "when it was released (ms after the spin was queued)")
    expect.at_most(zero_at, 2 * SPIN, "when it was released (ms after the spin was queued)")
    s2:destroy()
    p0:destroy(); pm:destroy()
  end,
}
