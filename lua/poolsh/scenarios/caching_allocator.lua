-- A caching allocator in the style of PyTorch's (poolsh.allocators.caching,
-- on poolsh.malloc): why its reserved memory stays high after tensors are
-- freed, and what empty_cache() costs the next allocation.
local poolsh = require "poolsh"
local scenario = require "poolsh.scenario"
local timed = scenario.timed
local C = require "poolsh.allocators.caching"

local MiB = 1024 * 1024

return {
  name = "caching_allocator",
  summary = "a PyTorch-style caching allocator keeps freed memory reserved; empty_cache() makes the next allocation cudaMalloc",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local a = C.new()
    local s = poolsh.stream()
    local function st() return a:stats() end
    local function show()
      local t = st()
      ctx.say(("reserved %s in %d segment(s), allocated %s"):format(poolsh.fmt(t.reserved), t.segments,
        poolsh.fmt(t.allocated)))
    end
    local free0 = poolsh.device().free

    step("allocate 1000 bytes, then 8 x 4 MiB", "1000 B rounds to 1024 in a 2 MiB small segment; 4 MiB blocks are split from 20 MiB segments, 5 to a segment")
    local small = a:alloc(1000, s)
    expect.equal(small.size, 1024, "the small block's size")
    local bufs = {}
    for i = 1, 8 do bufs[i] = a:alloc(4 * MiB, s) end
    show()
    expect.equal(st().segments, 3, "segments")
    expect.equal(st().reserved, 2 * MiB + 2 * 20 * MiB, "reserved")
    expect.equal(st().allocated, 1024 + 8 * 4 * MiB, "allocated")

    step("allocate 11 MiB", "no cached block is free on s: above 10 MiB the segment is the request rounded up to 2 MiB")
    local big = a:alloc(11 * MiB, s)
    local reserved = st().reserved
    show()
    expect.equal(reserved, 2 * MiB + 40 * MiB + 12 * MiB, "reserved")

    step("free every tensor", "allocated drops to 0; reserved stays: the segments are cached, cudaFree is never called")
    for _, b in ipairs(bufs) do a:free(b) end
    a:free(big); a:free(small)
    show()
    expect.equal(st().allocated, 0, "allocated")
    expect.equal(st().reserved, reserved, "reserved")
    local drop = free0 - poolsh.device().free
    ctx.say("the device's free memory is still down by " .. poolsh.fmt(drop) .. " (what nvidia-smi shows)")
    expect.at_least(drop, reserved, "device free memory's drop")

    step("allocate 4 MiB again, timed", "a cache hit with no CUDA call: best fit takes the smallest cached block, the 12 MiB segment")
    local hit_ms, b = timed(function() return a:alloc(4 * MiB, s) end)
    ctx.say(("%.4f ms"):format(hit_ms))
    expect.equal(st().reserved, reserved, "reserved")
    expect.equal(st().num_device_alloc, 4, "cudaMalloc calls")
    expect.equal(b.segment.size, 12 * MiB, "the segment of the reused block")

    step("keep it live and call empty_cache()", "segments without a live block go back (cudaFree); the one under the live block stays")
    a:empty_cache()
    show()
    expect.equal(st().segments, 1, "segments")
    expect.equal(st().reserved, 12 * MiB, "reserved")
    a:free(b)
    a:empty_cache()
    expect.equal(st().reserved, 0, "reserved after freeing it and empty_cache()")
    local back = poolsh.device().free - (free0 - drop)
    ctx.say("the device's free memory rose by " .. poolsh.fmt(back))
    expect.at_least(back, reserved, "device free memory's rise")

    step("allocate 4 MiB again, timed", "a cache miss: cudaMalloc of a new 20 MiB segment")
    local miss_ms
    miss_ms, b = timed(function() return a:alloc(4 * MiB, s) end)
    ctx.say(("%.4f ms, against %.4f ms for the hit"):format(miss_ms, hit_ms))
    expect.equal(st().num_device_alloc, 5, "cudaMalloc calls")
    expect.faster(hit_ms, miss_ms, 1, "the cache hit against the allocation after empty_cache()")
    a:free(b)
    a:empty_cache()
    ctx.say(("peaks: reserved %s, allocated %s"):format(poolsh.fmt(st().peak_reserved), poolsh.fmt(st().peak_allocated)))
  end,
}
