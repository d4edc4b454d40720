-- Growing requests (a batch that gets larger each step: allocate, use,
-- free, then a little more): cached cudaMalloc segments fit none of the
-- later requests, so every step adds a segment; one expandable VMM range
-- serves the same order in place, mapping only the new pages.
local poolsh = require "poolsh"
local expandable = require "poolsh.scenarios.lib.expandable"

local MiB = 1024 * 1024
local STEPS = 6

-- The request of step k: k * 8 MiB + 1 MiB (9, 17, ..., 49 MiB).
local function request(k) return k * 8 * MiB + MiB end

return {
  name = "vmm_growing_batch",
  summary = "growing requests add a cudaMalloc segment each; one expandable VMM range grows in place and maps only the new pages",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local fmt = poolsh.fmt
    local g = poolsh.vmm.granularity()
    ctx.say("VMM granularity " .. fmt(g))

    step(("cudaMalloc segments: %d requests of 9, 17, ... 49 MiB, each freed before the next"):format(STEPS),
      "a caching allocator keeps freed segments, but none holds the next, larger request: a new cudaMalloc each time")
    local segs <close> = expandable.segments()
    local free0 = poolsh.device().free
    local sum = 0
    for k = 1, STEPS do
      local s = segs:alloc(request(k))
      poolsh.fill(s.buf, k)
      segs:free(s)
      sum = sum + expandable.round_up(request(k), 512)
    end
    poolsh.sync()
    local seg_drop = free0 - poolsh.device().free
    ctx.say(("%d cudaMallocs, %s reserved for a largest request of %s; the device's free memory dropped %s"):format(
      segs.mallocs, fmt(segs.reserved), fmt(request(STEPS)), fmt(seg_drop)))
    expect.equal(segs.mallocs, STEPS, "cudaMalloc calls")
    expect.equal(segs.reserved, sum, "bytes in cached segments")
    expect.at_least(seg_drop, sum, "the device's free memory drop")
    segs:close()

    step("the same order in one expandable range (PyTorch's expandable_segments:True)",
      "each block starts at offset 0 again; only the pages past the last high mark are created, mapped and made accessible")
    local r <close> = expandable.range { capacity = 64 * request(STEPS) }
    free0 = poolsh.device().free
    for k = 1, STEPS do
      local before = r.creates
      local b = r:alloc(request(k))
      expect.equal(b.off, 0, ("step %d's block offset"):format(k))
      -- one view over the block's pages, as a tensor spans them
      local view = r:view(b)
      poolsh.fill(view, k)
      expect.truthy(poolsh.verify(view, k), ("step %d's bytes verify"):format(k))
      expect.equal(r.creates - before, expandable.round_up(request(k), g) // g - before,
        ("pages created at step %d"):format(k))
      r:free(b)
    end
    poolsh.sync()
    local vmm_drop = free0 - poolsh.device().free
    local want = expandable.round_up(request(STEPS), g)
    ctx.say(("%d pages created and mapped, %d set_access calls; %s mapped; the device's free memory dropped %s"):format(
      r.creates, r.set_accesses, fmt(r.mapped), fmt(vmm_drop)))
    expect.equal(r.mapped, want, "mapped bytes")
    expect.equal(r.set_accesses, STEPS, "set_access calls (one per growth)")
    expect.equal(#r.r:mappings(), want // g, "the range's mappings")
    expect.at_least(vmm_drop, want, "the device's free memory drop")

    step("compare", "the segments hold the sum of the requests, the range only the largest")
    ctx.say(("segments %s against range %s: %.1fx"):format(fmt(sum), fmt(r.mapped), sum / r.mapped))
    expect.at_least(sum, 3 * r.mapped, "segment bytes against 3x the range's")

    step("empty the range: every page is free, every page is unmapped", "the physical memory goes back to the device")
    local gone = r:empty()
    expect.equal(gone, want, "bytes unmapped")
    expect.equal(#r.r:mappings(), 0, "mappings left")
  end,
}
