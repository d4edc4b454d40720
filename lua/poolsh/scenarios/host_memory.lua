-- A pinned host pool keeps its memory after everything is freed, until it
-- is trimmed: the behaviour behind "CuPy's pinned memory is never freed"
-- and free_all_blocks(). Last, a CuPy-style cache over cudaHostAlloc.
local poolsh = require "poolsh"
local scenario = require "poolsh.scenario"
local timed = scenario.timed

local SIZE = "16 MiB"
local ms = poolsh.fmt_duration

-- A pinned-memory cache in the style of CuPy's PinnedMemoryPool: sizes
-- round up to 512 B; a freed block waits in its size's free list for the
-- next request of that size; only free_all_blocks() calls cudaFreeHost.
local function pinned_cache()
  local c = { lists = {}, held = 0 }
  local function round(n) return (n + 511) // 512 * 512 end
  function c:malloc(n)
    n = round(poolsh.size(n))
    local list = self.lists[n]
    if list and #list > 0 then return table.remove(list) end
    self.held = self.held + n
    return poolsh.pinned(n)
  end
  function c:free(b)
    local list = self.lists[b.size] or {}
    self.lists[b.size] = list
    list[#list + 1] = b
  end
  function c:free_all_blocks()
    for n, list in pairs(self.lists) do
      for _, b in ipairs(list) do b:free(); self.held = self.held - n end
      self.lists[n] = {}
    end
  end
  return c
end

return {
  name = "host_memory",
  summary = "a pinned host pool at a high threshold keeps its memory through frees and syncs until trim(0); a CuPy-style cache until free_all_blocks()",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local function st(p) return p:stats { estimates = false } end
    local s = poolsh.stream()
    local hp = poolsh.pool { location = "host", release_threshold = "max" }
    local d = poolsh.malloc(SIZE)
    poolsh.fill(d, 5)

    step("a pinned host pool (location = \"host\", threshold max): copy device data into 3 staging buffers of " .. SIZE,
      "the first allocation maps pinned host memory; reserved grows in whole chunks")
    local bufs = {}
    local first_ms
    first_ms, bufs[1] = timed(function() return hp:alloc(SIZE, s) end)
    for i = 2, 3 do bufs[i] = hp:alloc(SIZE, s) end
    for _, b in ipairs(bufs) do poolsh.copy(b, d, { stream = s }) end
    local reserved = st(hp).reserved
    ctx.say(("reserved %s, used %s; the first allocation took %s"):format(poolsh.fmt(reserved),
      poolsh.fmt(st(hp).used), ms(first_ms)))
    expect.at_least(reserved, 3 * poolsh.size(SIZE), "reserved")

    step("free all three, synchronise the stream, then the device, then sleep 100 ms",
      "used drops to 0; reserved stays: the pool keeps the pinned pages for the next allocation (\"CuPy's pinned memory is never freed\")")
    for _, b in ipairs(bufs) do b:free() end
    s:sync()
    expect.stats(hp, { used = 0, reserved = reserved })
    poolsh.sync()
    poolsh.sleep("100 ms")
    expect.stats(hp, { used = 0, reserved = reserved })

    step("allocate " .. SIZE .. " again, timed", "reused: no new pinned memory, and far cheaper than the first allocation")
    local warm_ms, b = timed(function() return hp:alloc(SIZE, s) end)
    ctx.say(("%s, against %s for the first"):format(ms(warm_ms), ms(first_ms)))
    expect.reused(b)
    expect.stats(hp, { reserved = reserved })
    expect.faster(warm_ms, first_ms, 10, "the reused allocation against the first")
    b:free()
    s:sync()

    step("trim(0)", "what free_all_blocks() does: the pinned memory goes back to the system")
    local pinned = poolsh.device().pinned_held
    hp:trim(0)
    expect.stats(hp, { reserved = 0 })
    expect.equal(pinned - poolsh.device().pinned_held, reserved, "the fall of pinned host memory held (poolsh.device().pinned_held)")

    step("the same pool at threshold 0: allocate, free, synchronise", "the sync gives the memory back at once, and the next allocation maps it again")
    hp.release_threshold = 0
    b = hp:alloc(SIZE, s)
    expect.at_least(st(hp).reserved, poolsh.size(SIZE), "reserved while allocated")
    b:free()
    s:sync()
    expect.stats(hp, { reserved = 0 })

    step("a CuPy-style pinned cache over cudaHostAlloc: allocate 2 x " .. SIZE .. ", free both, allocate one again",
      "freed blocks stay pinned in the cache; the second request of a size takes one without calling CUDA")
    local cache = pinned_cache()
    pinned = poolsh.device().pinned_held
    local miss_ms, x = timed(function() return cache:malloc(SIZE) end)
    local y = cache:malloc(SIZE)
    cache:free(x); cache:free(y)
    local hit_ms, z = timed(function() return cache:malloc(SIZE) end)
    ctx.say(("held %s; a hit took %s, cudaHostAlloc %s"):format(poolsh.fmt(cache.held), ms(hit_ms), ms(miss_ms)))
    expect.equal(cache.held, 2 * poolsh.size(SIZE), "pinned bytes the cache holds")
    expect.faster(hit_ms, miss_ms, 10, "a cache hit against cudaHostAlloc")

    step("free_all_blocks()", "cudaFreeHost of each cached block; the block in use stays")
    cache:free_all_blocks()
    expect.equal(cache.held, poolsh.size(SIZE), "pinned bytes the cache holds")
    cache:free(z)
    cache:free_all_blocks()
    expect.equal(cache.held, 0, "pinned bytes the cache holds")
    expect.equal(poolsh.device().pinned_held, pinned, "pinned host memory held (poolsh.device().pinned_held)")
    d:free()
    hp:destroy()
  end,
}
