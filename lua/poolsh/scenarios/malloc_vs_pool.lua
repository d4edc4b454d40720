-- cudaMalloc/cudaFree against a pool: the latency of each call, and how
-- cudaFree waits for the whole device while a pool free does not.
local poolsh = require "poolsh"
local scenario = require "poolsh.scenario"
local timed = scenario.timed
local median = scenario.median

local SIZE, N, SPIN = "64 MiB", 50, 50
local ms = poolsh.fmt_duration

-- N rounds of alloc() then free(b); the median ms of each call.
local function rounds(alloc)
  local a, f = {}, {}
  for i = 1, N do
    local b
    a[i], b = timed(alloc)
    f[i] = timed(function() b:free() end)
  end
  return median(a), median(f)
end

return {
  name = "malloc_vs_pool",
  summary = "a warm pool allocates and frees many times faster than cudaMalloc/cudaFree; cudaFree waits for all device work, a pool free does not",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local s, s2 = poolsh.stream(), poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }

    step(("cudaMalloc and cudaFree %s, %d rounds"):format(SIZE, N), "each call goes to the driver, which maps or unmaps memory")
    local m_alloc, m_free = rounds(function() return poolsh.malloc(SIZE) end)
    ctx.say(("median cudaMalloc %s, cudaFree %s"):format(ms(m_alloc), ms(m_free)))

    step(("the same from a pool at threshold max, on one stream, %d rounds"):format(N), "after the first round the pool only hands the same block out again: no mapping")
    p:alloc(SIZE, s):free()
    s:sync()
    local p_alloc, p_free = rounds(function() return p:alloc(SIZE, s) end)
    s:sync()
    ctx.say(("median pool alloc %s, free %s"):format(ms(p_alloc), ms(p_free)))
    expect.faster(p_alloc, m_alloc, 5, "pool alloc against cudaMalloc (medians)")
    expect.faster(p_free, m_free, 5, "pool free against cudaFree (medians)")

    step(("queue %d ms of work on another stream, then cudaFree a buffer"):format(SPIN),
      "cudaFree waits until the whole device is idle, s2's work included")
    local m = poolsh.malloc(SIZE)
    local t_spin = poolsh.now()
    poolsh.spin(s2, SPIN)
    local t0 = poolsh.now()
    local busy_free = timed(function() m:free() end)
    local left = SPIN - (t0 - t_spin)
    ctx.say(("cudaFree took %s; the spin had %s left"):format(ms(busy_free), ms(left)))
    expect.equal(s2:query(), true, "s2 done when cudaFree returned")
    expect.at_least(busy_free, 0.9 * left, "cudaFree's time against what was left of the spin")
    expect.faster(m_free, busy_free, 10, "cudaFree of an idle device against one behind the spin")

    step(("the same %d ms of work; cudaMalloc meanwhile"):format(SPIN), "cudaMalloc does not wait")
    t_spin = poolsh.now()
    poolsh.spin(s2, SPIN)
    local busy_malloc
    busy_malloc, m = timed(function() return poolsh.malloc(SIZE) end)
    left = SPIN - (poolsh.now() - t_spin)
    ctx.say(("cudaMalloc took %s"):format(ms(busy_malloc)))
    expect.equal(s2:query(), false, "s2 done when cudaMalloc returned")
    expect.faster(busy_malloc, left, 10, "cudaMalloc against what is left of the spin")
    s2:sync()
    m:free()

    step(("the same %d ms of work; free a pool buffer meanwhile"):format(SPIN), "a pool free is queued on its stream and returns at once")
    local b = p:alloc(SIZE, s)
    poolsh.spin(s2, SPIN)
    local busy_pool_free = timed(function() b:free() end)
    ctx.say(("pool free took %s, against %s for cudaFree"):format(ms(busy_pool_free), ms(busy_free)))
    expect.equal(s2:query(), false, "s2 done when the pool free returned")
    expect.faster(busy_pool_free, busy_free, 100, "the pool free against cudaFree, both behind the spin")
    poolsh.sync()
    p:destroy()
  end,
}
