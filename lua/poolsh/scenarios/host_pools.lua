-- Host-location pools beside device-location pools: the same chunks,
-- reachable by kernels and copies, counted in host memory, and far
-- costlier to map.
local poolsh = require "poolsh"
local scenario = require "poolsh.scenario"
local timed = scenario.timed
local median = scenario.median

local MAPS = 3   -- chunks mapped (and timed) in each pool after the first
local ms = poolsh.fmt_duration

-- Copies src to dst on s once to warm up, then 3 times; the best ms.
local function copy_ms(dst, src, s)
  poolsh.copy(dst, src, { stream = s }); s:sync()
  local best = math.huge
  for _ = 1, 3 do
    local t = timed(function() poolsh.copy(dst, src, { stream = s }); s:sync() end)
    best = math.min(best, t)
  end
  return best
end

return {
  name = "host_pools",
  summary = "a host pool reserves the same chunks as a device pool, kernels and copies reach it, it takes no device memory, and mapping it costs far more",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local function st(p) return p:stats { estimates = false } end
    local s = poolsh.stream()
    local dp = poolsh.pool { release_threshold = "max" }
    local hp = poolsh.pool { location = "host", release_threshold = "max" }
    local bufs = {}
    local function dev_free() return poolsh.device().free end

    step("allocate 1 byte from a device pool and from a host pool (location = \"host\"); read the device's free memory around each",
      "both reserve one chunk of the same size; the host pool's is pinned host memory (poolsh.device().pinned_held), not device memory")
    local d0 = poolsh.device()
    bufs[#bufs + 1] = dp:alloc(1, s)
    local d1 = poolsh.device()
    bufs[#bufs + 1] = hp:alloc(1, s)
    local d2 = poolsh.device()
    local chunk, host_chunk = st(dp).reserved, st(hp).reserved
    ctx.say(("device pool: chunk %s, device free memory down %s; host pool: chunk %s, device free memory down %s"):format(
      poolsh.fmt(chunk), poolsh.fmt(d0.free - d1.free), poolsh.fmt(host_chunk), poolsh.fmt(d1.free - d2.free)))
    expect.equal(host_chunk, chunk, "the host pool's chunk against the device pool's")
    expect.at_least(d0.free - d1.free, chunk, "device free memory's drop for the device pool")
    expect.at_most(d1.free - d2.free, chunk // 2, "device free memory's drop for the host pool")
    expect.equal(d1.held - d0.held, chunk, "poolsh.device().held's rise for the device pool")
    expect.equal(d2.held - d1.held, 0, "poolsh.device().held's rise for the host pool")
    expect.equal(d2.pinned_held - d1.pinned_held, host_chunk, "poolsh.device().pinned_held's rise for the host pool")

    step(("allocate %d chunk-sized blocks from each, each timed"):format(MAPS), "each maps a new chunk: pinned host memory costs far more to map")
    local dt, ht = {}, {}
    for i = 1, MAPS do
      dt[i], bufs[#bufs + 1] = timed(function() return dp:alloc(chunk, s) end)
      ht[i], bufs[#bufs + 1] = timed(function() return hp:alloc(chunk, s) end)
    end
    local dmap, hmap = median(dt), median(ht)
    ctx.say(("median map: device %s, host %s (%.0fx)"):format(ms(dmap), ms(hmap), hmap / dmap))
    expect.stats(hp, { reserved = (MAPS + 1) * chunk })
    expect.faster(dmap, hmap, 10, "mapping a device chunk against a host chunk")

    local d, h = bufs[#bufs - 1], bufs[#bufs]
    step("fill the last host-pool block with a kernel, verify it; copy a filled device-pool block into it, verify again",
      "kernels and copies reach host-pool memory like device memory")
    poolsh.fill(h, 0x5a, s)
    expect.equal(poolsh.verify(h, 0x5a, s), true, "verify of the filled host-pool block")
    poolsh.fill(d, 0x3c, s)
    poolsh.copy(h, d, { stream = s })
    expect.equal(poolsh.verify(h, 0x3c, s), true, "verify of the host-pool block after the copy")

    step("time copies device to host: into the host-pool block, and into cudaHostAlloc memory of the same size",
      "host-pool memory is pinned: the same speed")
    local pin = poolsh.pinned(chunk)
    local to_pool, to_pin = copy_ms(h, d, s), copy_ms(pin, d, s)
    ctx.say(("host pool %.1f GB/s, pinned %.1f GB/s"):format(chunk / to_pool / 1e6, chunk / to_pin / 1e6))
    expect.at_most(to_pool * 0.8, to_pin, "the host-pool copy x0.8 against the pinned one (ms)")
    pin:free()

    step("free everything, synchronise, trim both pools", "the device's free memory comes back by the device pool's chunks only")
    local before = dev_free()
    for _, b in ipairs(bufs) do b:free() end
    s:sync()
    local dres = st(dp).reserved
    dp:trim(0); hp:trim(0)
    expect.stats(dp, { reserved = 0 })
    expect.stats(hp, { reserved = 0 })
    expect.at_least(dev_free() - before, dres, "device free memory's rise")
    dp:destroy(); hp:destroy()
  end,
}
