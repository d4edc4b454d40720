-- The release-threshold cliff: at threshold 0 every sync gives the pool's
-- memory back, and the next allocation maps it again.
local poolsh = require "poolsh"

local N, SIZE = 100, "64 MiB"

-- ms for N rounds of alloc, free, sync on s (poolsh.now: the backend's clock).
local function loop(p, s)
  local t0 = poolsh.now()
  for _ = 1, N do
    local b = p:alloc(SIZE, s)
    b:free()
    s:sync()
  end
  return poolsh.now() - t0
end

return {
  name = "release_threshold",
  summary = "alloc/free/sync in a loop: release threshold 0 against a large one",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local s = poolsh.stream()

    step(("threshold 0: %d rounds of alloc %s, free, sync"):format(N, SIZE), "each sync releases the memory; each alloc maps it again")
    local p0 = poolsh.pool { release_threshold = 0 }
    local t0 = loop(p0, s)
    expect.stats(p0, { reserved = 0 })
    ctx.say(("%.3f ms, %.1f us a round"):format(t0, t0 * 1000 / N))

    step("threshold max: the same loop", "the memory stays reserved; alloc and free only sub-allocate")
    local pm = poolsh.pool { release_threshold = "max" }
    local tm = loop(pm, s)
    expect.at_least(pm:stats { estimates = false }.reserved, poolsh.size(SIZE), "reserved after the loop")
    ctx.say(("%.3f ms, %.1f us a round"):format(tm, tm * 1000 / N))

    step("compare", "threshold 0 is tens of times slower (H100s: 21-31x; the sim about 26x)")
    ctx.say(("ratio %.1fx"):format(t0 / tm))
    expect.faster(tm, t0, 2, "threshold max against threshold 0")
  end,
}
