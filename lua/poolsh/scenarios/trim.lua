-- Trim and high-water marks: what trim gives back, and resetting the peaks
-- while memory is in use.
local poolsh = require "poolsh"

return {
  name = "trim",
  summary = "trim frees whole idle chunks only; resetting the peaks while memory is in use",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local function st(p) return p:stats { estimates = false } end
    local MIB16 = poolsh.size("16 MiB")
    local p = poolsh.pool { release_threshold = "max" }
    local s = poolsh.stream()

    step("allocate 8 x 16 MiB, free all but the first, sync", "threshold max: reserved stays, used drops to the live block")
    local bufs = {}
    for i = 1, 8 do bufs[i] = p:alloc(MIB16, s) end
    local full = st(p).reserved
    for i = 2, 8 do bufs[i]:free() end
    s:sync()
    expect.stats(p, { reserved = full, used = MIB16 })

    step("trim(0)", "idle chunks go back; the chunk under the live block stays")
    p:trim(0)
    local kept = st(p).reserved
    ctx.say(("reserved %s -> %s"):format(poolsh.fmt(full), poolsh.fmt(kept)))
    expect.at_least(kept, MIB16, "reserved after trim(0)")
    expect.at_most(kept, full // 2, "reserved after trim(0)")

    step("read the high-water marks", "trim does not lower them")
    expect.stats(p, { reserved_high = full, used_high = 8 * MIB16 })

    step("reset the peaks with the block still live", "they restart from the current values, not from 0")
    p:reset_high()
    expect.stats(p, { reserved_high = kept, used_high = MIB16 })

    step("free the last block behind 100 ms of work, trim(0) at once", "the free is pending: poolsh counts it")
    poolsh.spin(s, "100 ms")
    bufs[1]:free()
    expect.equal(st(p).pending, MIB16, "pending bytes")   -- bufs[1]'s, nothing else's
    p:trim(0)
    ctx.say("reserved right after trim(0): " .. poolsh.fmt(st(p).reserved))

    step("sync, trim(0) again", "nothing is pending or live: everything goes back")
    s:sync()
    p:trim(0)
    expect.stats(p, { reserved = 0, used = 0 })
  end,
}
