-- Reserved against used: the pool reserves whole chunks and sub-allocates;
-- the device's free memory follows reserved, not used.
local poolsh = require "poolsh"

return {
  name = "reserved_vs_used",
  summary = "a 1-byte allocation reserves a whole chunk; device free memory follows reserved",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local function st(p) return p:stats { estimates = false } end
    local p = poolsh.pool { release_threshold = "max" }
    local s = poolsh.stream()
    local free0 = poolsh.device().free

    step("allocate 1 byte", "reserved jumps to a whole chunk; used is tiny")
    local bufs = { p:alloc(1, s) }
    local chunk = st(p).reserved
    ctx.say(("reserved %s, used %s"):format(poolsh.fmt(chunk), poolsh.fmt(st(p).used)))
    expect.at_least(chunk, poolsh.size("2 MiB"), "reserved for 1 byte")
    expect.at_most(st(p).used * 64, chunk, "used x64 against reserved")

    step("allocate 99 more bytes, one at a time", "sub-allocated: reserved does not move")
    for _ = 1, 99 do bufs[#bufs + 1] = p:alloc(1, s) end
    expect.stats(p, { reserved = chunk })

    step("allocate one chunk's worth", "it cannot fit beside the small blocks: reserved grows by at least a chunk")
    bufs[#bufs + 1] = p:alloc(chunk, s)
    local reserved = st(p).reserved
    expect.at_least(reserved, 2 * chunk, "reserved")

    step("read the device's free memory (what nvidia-smi shows)", "it dropped by the pool's reserved, not its used")
    local drop = free0 - poolsh.device().free
    ctx.say(("device free dropped by %s; pool used %s, reserved %s"):format(poolsh.fmt(drop),
      poolsh.fmt(st(p).used), poolsh.fmt(reserved)))
    expect.at_least(drop, reserved, "device free memory's drop")

    step("free everything and synchronise", "threshold max: the pool keeps its memory, used goes to 0")
    for _, b in ipairs(bufs) do b:free() end
    s:sync()
    expect.stats(p, { used = 0, reserved = reserved })

    step("trim to 0", "the memory goes back to the device")
    local before = poolsh.device().free
    p:trim(0)
    expect.stats(p, { reserved = 0 })
    expect.at_least(poolsh.device().free - before, reserved, "device free memory's rise")
  end,
}
