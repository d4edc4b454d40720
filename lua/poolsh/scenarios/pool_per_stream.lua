-- A pool per stream against one shared pool: the same work on 4 streams,
-- each stream's working set at its peak while the others are idle.
local poolsh = require "poolsh"

local MiB = 1024 * 1024
local SIZES = { 8 * MiB, 24 * MiB, 16 * MiB, 40 * MiB }   -- each turn allocates two of them
local ROUNDS = 3

-- Runs ROUNDS rounds in which each stream in turn allocates two blocks,
-- works 1 ms and frees them; a turn starts after every other stream's last
-- turn: it waits on the event each recorded after its frees (the order a
-- pipeline has). pool_of(i) gives stream i's pool.
local function work(streams, pool_of)
  local last = {}
  for r = 1, ROUNDS do
    for i, s in ipairs(streams) do
      for j, e in pairs(last) do if j ~= i then s:wait(e) end end
      local k = (i + r) % #SIZES + 1
      local x = pool_of(i):alloc(SIZES[k], s)
      local y = pool_of(i):alloc(SIZES[k % #SIZES + 1], s)
      poolsh.spin(s, "1 ms")
      x:free(); y:free()
      last[i] = s:record()
    end
  end
  poolsh.sync()
end

return {
  name = "pool_per_stream",
  summary = "4 streams taking turns: one shared pool reserves one working set, a pool per stream one each",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local function high(p) return p:stats { estimates = false }.reserved_high end
    local streams = {}
    for i = 1, 4 do streams[i] = poolsh.stream() end

    step("4 pools, one per stream: 3 rounds of 4 turns, each alloc 2 blocks, work 1 ms, free", "each pool holds the largest working set its stream ever had")
    local pools = {}
    for i = 1, 4 do pools[i] = poolsh.pool { release_threshold = "max" } end
    work(streams, function(i) return pools[i] end)
    local sum = 0
    for i, p in ipairs(pools) do
      ctx.say(("%s (for %s): reserved_high %s"):format(p.name, streams[i].name, poolsh.fmt(high(p))))
      sum = sum + high(p)
    end
    ctx.say("sum " .. poolsh.fmt(sum))

    step("one pool shared by the 4 streams: the same work", "each turn waits on the other streams' events: their frees are ordered before it, so it reuses their blocks")
    local shared = poolsh.pool { release_threshold = "max" }
    work(streams, function() return shared end)
    local c = poolsh.core.counts().pools[shared.id]
    local reuses = c.reuses["event dependency"]
    ctx.say(("shared: reserved_high %s; %d of %d allocations reused a block by event dependency"):format(
      poolsh.fmt(high(shared)), reuses, c.allocs))
    expect.at_least(reuses, 1, "reuses by event dependency")

    step("compare", "the shared pool needs one working set; the four pools one each")
    ctx.say(("shared %s against %s for 4 pools (%.1fx)"):format(poolsh.fmt(high(shared)), poolsh.fmt(sum),
      sum / high(shared)))
    expect.at_most(high(shared), sum, "the shared pool's reserved_high")
    expect.at_most(high(shared) * 2, sum, "the shared pool's reserved_high x2 against the 4 pools'")
  end,
}
