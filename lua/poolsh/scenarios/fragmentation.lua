-- Fragmentation: a pool's freed memory lies in holes between live blocks;
-- a request larger than every hole needs new memory although the holes add
-- up to more than it asks.
local poolsh = require "poolsh"

return {
  name = "fragmentation",
  summary = "holes between live blocks: reserved far above used, yet a larger request maps a new chunk",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local function st(p) return p:stats { estimates = false } end
    local s = poolsh.stream()

    step("read the pool's chunk: allocate 1 byte from a scratch pool", "reserved jumps to one chunk, the granularity")
    local scratch = poolsh.pool { release_threshold = "max" }
    local one = scratch:alloc(1, s)
    local chunk = st(scratch).reserved
    one:free(); s:sync(); scratch:destroy()
    ctx.say("chunk " .. poolsh.fmt(chunk))
    expect.at_least(chunk, poolsh.size("2 MiB"), "the chunk")

    local piece = chunk // 16
    step(("fill one chunk with 16 blocks of %s"):format(poolsh.fmt(piece)), "they pack back to back: one chunk, used = reserved")
    local p = poolsh.pool { release_threshold = "max" }
    local bufs = {}
    for i = 1, 16 do bufs[i] = p:alloc(piece, s) end
    expect.stats(p, { reserved = chunk, used = chunk })

    step("free every other block and synchronise", "half the chunk is free, in 8 holes of one block each")
    for i = 1, 16, 2 do bufs[i]:free() end
    s:sync()
    expect.stats(p, { reserved = chunk, used = chunk // 2 })

    local want = 2 * piece
    step(("allocate %s (two holes' worth)"):format(poolsh.fmt(want)), "no hole is large enough: the pool maps a new chunk")
    local big = p:alloc(want, s)
    local t = st(p)
    ctx.say(("reserved %s, used %s; the first chunk had %s free in 8 holes, none of %s"):format(
      poolsh.fmt(t.reserved), poolsh.fmt(t.used), poolsh.fmt(chunk // 2), poolsh.fmt(want)))
    expect.fresh(big)
    expect.truthy(big.why_fresh and big.why_fresh:find("no freed block is large enough", 1, true),
      "why_fresh names the fragmentation (got " .. tostring(big.why_fresh) .. ")")
    expect.at_least(t.reserved, 2 * chunk, "reserved")
    expect.at_most(t.used * 2, t.reserved, "used x2 against reserved")

    step("print poolsh.map(p)", "'#' live, '.' free: the holes of the first chunk, the new block in the second")
    for _, line in ipairs(poolsh.live.map_lines(p, 32)) do ctx.say(line) end

    step(("allocate %s"):format(poolsh.fmt(piece)), "it fits a hole exactly: reused, and the pool does not grow")
    local small = p:alloc(piece, s)
    expect.reused(small, "stream order")
    expect.stats(p, { reserved = t.reserved })

    small:free(); big:free()
    for i = 2, 16, 2 do bufs[i]:free() end
    s:sync()
  end,
}
