-- The caching allocator (lua/poolsh/allocators/caching.lua), PyTorch's
-- rules that the caching_allocator scenario builds on
-- (scenarios_reuse_spec.lua).
local H = require "helpers"
local poolsh = H.poolsh
local C = require "poolsh.allocators.caching"

local MiB = H.MiB

local function has(text, line) assert.truthy(text:find(line, 1, true), "missing: " .. line .. "\n" .. text) end

describe("caching allocator", function()
  local s1, s2
  before_each(function() s1, s2 = poolsh.stream(), poolsh.stream() end)

  -- The blocks of the segment holding block b, as {size, allocated} pairs.
  local function layout(a, b)
    for _, seg in ipairs(a:segments()) do
      if seg.addr == b.segment.addr then
        local t = {}
        for _, x in ipairs(seg.blocks) do t[#t + 1] = { x.size, x.allocated } end
        return t
      end
    end
  end

  it("rounds sizes to 512 B, or to power-of-2 divisions", function()
    for n, want in pairs { [1] = 512, [512] = 512, [513] = 1024, [MiB] = MiB, [MiB + 1] = MiB + 512 } do
      assert.equal(want, C.round_size(n), n)
    end
    assert.equal(1310720, C.round_size(1200000, 4))      -- 1 MiB + 1/4 of it
    assert.equal(MiB + 512, C.round_size(MiB + 1, 1))    -- one division: 512 B steps (PyTorch 2.11)
    assert.equal(4 * MiB, C.round_size(4 * MiB, 4))      -- powers of 2 stay
    assert.equal(1536, C.round_size(1500, 4))            -- below 512 B x divisions: 512 B steps
  end)

  it("picks 2 MiB segments for small requests, 20 MiB below 10 MiB, else the size rounded to 2 MiB", function()
    assert.equal(2 * MiB, C.allocation_size(512))
    assert.equal(2 * MiB, C.allocation_size(MiB))
    assert.equal(20 * MiB, C.allocation_size(MiB + 512))
    assert.equal(20 * MiB, C.allocation_size(10 * MiB - 512))
    assert.equal(10 * MiB, C.allocation_size(10 * MiB))
    assert.equal(12 * MiB, C.allocation_size(11 * MiB))
    local a = C.new()
    local x, y, z = a:alloc(100, s1), a:alloc(3 * MiB, s1), a:alloc(11 * MiB + 1, s2)   -- s2: not from s1's cache
    local sizes = {}
    for _, seg in ipairs(a:segments()) do sizes[seg.pool .. " " .. seg.size] = true end
    assert.same({ ["small " .. 2 * MiB] = true, ["large " .. 20 * MiB] = true, ["large " .. 12 * MiB] = true }, sizes)
    assert.equal(512, x.size)
    assert.equal(100 + 3 * MiB + 11 * MiB + 1, a:stats().requested)
    for _, b in ipairs { x, y, z } do a:free(b) end
    a:empty_cache()
  end)

  it("splits small blocks at 512 B, large ones only when more than 1 MiB is left", function()
    local a = C.new()
    local x, y = a:alloc(1, s1), a:alloc(1, s1)
    assert.equal(x.segment, y.segment)
    assert.equal(512, y.offset)
    assert.same({ { 512, true }, { 512, true }, { 2 * MiB - 1024, false } }, layout(a, x))
    local big = a:alloc(19 * MiB + 512, s1)   -- a 20 MiB segment; 0.5 MiB left: not split
    assert.same({ { 20 * MiB, true } }, layout(a, big))
    assert.equal(20 * MiB, big.size)
    local l = a:alloc(4 * MiB, s1)            -- from a 20 MiB segment: 16 MiB left, split
    assert.same({ { 4 * MiB, true }, { 16 * MiB, false } }, layout(a, l))
    for _, b in ipairs { x, y, big, l } do a:free(b) end
    a:empty_cache()
  end)

  it("merges a freed block with its free neighbours", function()
    local a = C.new()
    local b1, b2, b3 = a:alloc(4 * MiB, s1), a:alloc(4 * MiB, s1), a:alloc(4 * MiB, s1)
    a:free(b2)
    assert.same({ { 4 * MiB, true }, { 4 * MiB, false }, { 4 * MiB, true }, { 8 * MiB, false } }, layout(a, b1))
    a:free(b1)
    assert.same({ { 8 * MiB, false }, { 4 * MiB, true }, { 8 * MiB, false } }, layout(a, b3))
    a:free(b3)
    assert.same({ { 20 * MiB, false } }, layout(a, b3))
    a:empty_cache()
    assert.same({}, a:segments())
  end)

  it("reuses a block only on its stream, best fit by size", function()
    local a = C.new()
    local x = a:alloc(4 * MiB, s1)
    a:free(x)
    local y = a:alloc(4 * MiB, s2)
    assert.are_not.equal(x.segment, y.segment)
    assert.equal(s2, y.stream)
    local z = a:alloc(4 * MiB, s1)
    assert.equal(x.segment, z.segment)
    assert.equal(x.offset, z.offset)
    assert.equal(2, a:stats().segments)
    -- best fit: a 12 MiB segment beats a 20 MiB one for a 3 MiB request
    local w = a:alloc(11 * MiB, s1)
    a:free(w)
    local v = a:alloc(3 * MiB, s1)
    assert.equal(w.segment, v.segment)
    for _, b in ipairs { y, z, v } do a:free(b) end
    a:empty_cache()
  end)

  it("empty_cache frees only the segments with no allocated block, and gives device memory back", function()
    local a = C.new()
    local free0 = poolsh.device().free
    local x, y = a:alloc(4 * MiB, s1), a:alloc(4 * MiB, s2)
    local z = a:alloc(500, s1)
    a:free(y); a:free(z)
    assert.equal(42 * MiB, a:stats().reserved)
    a:empty_cache()
    local st = a:stats()
    assert.equal(1, st.segments)
    assert.equal(20 * MiB, st.reserved)
    assert.equal(2, st.num_device_free)
    assert.equal(x.segment.addr, a:segments()[1].addr)
    a:free(x)
    a:empty_cache()
    assert.equal(0, a:stats().reserved)
    if H.is_sim() then assert.equal(free0, poolsh.device().free) end
  end)

  it("counts allocated, reserved and their peaks", function()
    local a = C.new()
    local x = a:alloc(5 * MiB, s1)
    local y = a:alloc(30 * MiB + 1, s1)
    local st = a:stats()
    assert.equal(5 * MiB + 30 * MiB + 512, st.allocated)   -- 2 MiB - 512 split off the 32 MiB segment
    assert.equal(52 * MiB, st.reserved)
    assert.equal(2, st.active)
    a:free(y)
    st = a:stats()
    assert.equal(5 * MiB, st.allocated)
    assert.equal(35 * MiB + 512, st.peak_allocated)
    assert.equal(52 * MiB, st.peak_reserved)
    a:free(x); a:empty_cache()
    st = a:stats()
    assert.same({ 0, 0, 0, 0, 52 * MiB, 2, 2 },
      { st.reserved, st.allocated, st.active, st.segments, st.peak_reserved, st.num_device_alloc, st.num_device_free })
  end)

  it("with max_split_size, does not split large blocks or give them to smaller requests", function()
    local a = C.new { max_split_size = "32 MiB" }
    local big = a:alloc(40 * MiB, s1)
    a:free(big)
    local small = a:alloc(8 * MiB, s1)             -- not from the cached 40 MiB block
    assert.are_not.equal(big.segment, small.segment)
    local near = a:alloc(36 * MiB, s1)             -- within 20 MiB of it: reused whole, not split
    assert.equal(big.segment, near.segment)
    assert.equal(40 * MiB, near.size)
    a:free(near); a:free(small)
    local far = a:alloc(64 * MiB, s1)              -- larger than the cached block: a new segment
    assert.are_not.equal(big.segment, far.segment)
    a:free(far)
    a:empty_cache()
  end)

  it("takes max_split_size of exactly 20 MiB, and a wider max_non_split_rounding", function()
    local a = C.new { max_split_size = "20 MiB" }
    local big = a:alloc(60 * MiB, s1)
    a:free(big)
    local far = a:alloc(30 * MiB, s1)              -- 30 MiB too large: not reused
    assert.are_not.equal(big.segment, far.segment)
    a:free(far); a:empty_cache()
    local wide = C.new { max_split_size = "20 MiB", max_non_split_rounding = "40 MiB" }
    big = wide:alloc(60 * MiB, s1)
    wide:free(big)
    local near = wide:alloc(30 * MiB, s1)          -- within 40 MiB: reused whole
    assert.equal(big.segment, near.segment)
    assert.equal(60 * MiB, near.size)
    wide:free(near); wide:empty_cache()
    assert.equal("caching allocator: max_non_split_rounding must be at least 20 MiB, got 8.00 MiB",
      H.err(C.new, { max_non_split_rounding = "8 MiB" }))
  end)

  it("on cudaMalloc failure frees the cache and retries once, then raises", function()
    local path = os.tmpname() .. ".lua"
    local f = assert(io.open(path, "w"))
    f:write [[
local C = require "poolsh.allocators.caching"
local a = C.new()
local s = poolsh.stream()
local x = a:alloc("30 MiB", s); a:free(x)
local y = a:alloc("40 MiB", s)
local st = a:stats()
print("retries", st.num_alloc_retries, "reserved", st.reserved, "frees", st.num_device_free)
local ok, err = pcall(a.alloc, a, "40 MiB", s)
print("second", ok, err)
print("ooms", a:stats().num_ooms, "retries", a:stats().num_alloc_retries)
a:free(y); a:empty_cache()
]]
    f:close()
    local out, err, code = H.poolsh_cmd("--backend=sim --sim-memory=64MiB " .. H.quote(path))
    os.remove(path)
    assert.equal(0, code, out .. err)
    has(out, ("retries\t1\treserved\t%d\tfrees\t1"):format(40 * MiB))
    has(out, "second\tfalse\tcaching allocator: out of memory allocating 40.00 MiB on stream s1 (a 40.00 MiB segment; "
      .. "reserved 40.00 MiB, allocated 40.00 MiB after freeing the cache): cudaErrorMemoryAllocation")
    has(out, "ooms\t1\tretries\t2")
  end)

  it("raises clear errors for bad sizes, streams, blocks and options", function()
    local a, other = C.new(), C.new()
    local function msg(f, ...) return H.err(f, ...) end
    assert.equal("caching allocator: size must not be negative", msg(a.alloc, a, -1, s1))
    assert.equal("caching allocator: size must be at least 1 byte", msg(a.alloc, a, 0, s1))
    assert.equal("caching allocator: size 8.00 PiB too large (at most 4 PiB)", msg(a.alloc, a, "8 PiB", s1))
    assert.truthy(msg(a.alloc, a, "lots", s1):find("^caching allocator: invalid size 'lots'"))
    assert.equal("caching allocator: poolsh.Stream expected, got number", msg(a.alloc, a, 1, 7))
    local dead = poolsh.stream(); dead:destroy()
    assert.truthy(msg(a.alloc, a, 1, dead):find("^caching allocator: stream s%d+ was destroyed"))
    assert.truthy(msg(a.alloc, a, "1 PiB", s1):find("^caching allocator: out of memory allocating 1.00 PiB on stream s%d+ "
      .. "%(a 1.00 PiB segment; reserved 0 B, allocated 0 B after freeing the cache%): cudaErrorMemoryAllocation"))
    assert.same({ 1, 1, 0 }, { a:stats().num_ooms, a:stats().num_alloc_retries, a:stats().reserved })
    local b = a:alloc(1, s1)
    assert.equal("caching allocator: the block was not allocated by this allocator", msg(other.free, other, b))
    assert.equal("caching allocator: block expected, got nil", msg(a.free, a, nil))
    assert.equal("caching allocator: the block was not allocated by this allocator", msg(a.free, a, {}))
    a:free(b)
    assert.equal("caching allocator: double free of a block of 1 B", msg(a.free, a, b))
    local c = a:alloc(1, s1)                    -- the same memory, a new block
    assert.equal("caching allocator: double free of a block of 1 B", msg(a.free, a, b))
    a:free(c)
    a:empty_cache()
    assert.equal("caching allocator: unknown option 'max_split'", msg(C.new, { max_split = 1 }))
    assert.equal("caching allocator: max_split_size must be at least 20 MiB, got 8.00 MiB",
      msg(C.new, { max_split_size = "8 MiB" }))
    assert.equal("caching allocator: roundup_power2_divisions must be 0 or a power of 2, got 3",
      msg(C.new, { roundup_power2_divisions = 3 }))
    assert.equal("caching allocator: options table expected, got string", msg(C.new, "x"))
    assert.equal("caching allocator: max_split_size: size must not be negative", msg(C.new, { max_split_size = -1 }))
    assert.equal("caching allocator: per_process_memory_fraction must be a number from 0 to 1, got 1.5",
      msg(C.new, { per_process_memory_fraction = 1.5 }))
    assert.equal("caching allocator: per_process_memory_fraction must be a number from 0 to 1, got -0.5",
      msg(C.new, { per_process_memory_fraction = -0.5 }))
    assert.equal("caching allocator: garbage_collection_threshold must be a number between 0 and 1 "
      .. "(both excluded), got 1", msg(C.new, { garbage_collection_threshold = 1 }))
    assert.equal("caching allocator: garbage_collection_threshold must be a number between 0 and 1 "
      .. "(both excluded), got x", msg(C.new, { garbage_collection_threshold = "x" }))
  end)

  -- Segments of 20, 22 and 24 MiB (the first two freed, the first one
  -- earlier: older), then a request of 26 MiB that no cached block fits:
  -- PyTorch 2.11's garbage_collect_cached_blocks runs before its cudaMalloc.
  -- Returns the allocator's stats then.
  local function collect(opts)
    local a = C.new(opts)
    local x = a:alloc(20 * MiB, s1); a:free(x)   -- cached after 1 lookup
    local y = a:alloc(22 * MiB, s1); a:free(y)   -- after 2
    local z = a:alloc(24 * MiB, s1)              -- reserved 66 MiB
    local w = a:alloc(26 * MiB, s1)              -- lookup 4: ages 3 and 2
    local st = a:stats()
    a:free(z); a:free(w); a:empty_cache()
    return st
  end

  it("with a memory fraction, garbage_collection_threshold frees cached blocks as old as the average first", function()
    local allowed = 100.5 * MiB   -- the fraction's maximum
    local fraction = allowed / poolsh.device().total
    -- threshold 0.5: 66 MiB reserved is 15.75 MiB over; the 20 MiB block
    -- (age 3, the average 2.5) goes and frees enough; the 22 MiB one stays
    local st = collect { per_process_memory_fraction = fraction, garbage_collection_threshold = 0.5 }
    assert.same({ 72 * MiB, 3, 1, 4 }, { st.reserved, st.segments, st.num_device_free, st.num_device_alloc })
    -- threshold 0.4: 25.8 MiB over; a second pass (average now 2) takes the other
    st = collect { per_process_memory_fraction = fraction, garbage_collection_threshold = 0.4 }
    assert.same({ 50 * MiB, 2, 2, 4 }, { st.reserved, st.segments, st.num_device_free, st.num_device_alloc })
    -- a threshold without a fraction (or a fraction of 1) does nothing, as in PyTorch
    st = collect { garbage_collection_threshold = 0.4 }
    assert.same({ 92 * MiB, 4, 0 }, { st.reserved, st.segments, st.num_device_free })
    st = collect { per_process_memory_fraction = 1, garbage_collection_threshold = 0.4 }
    assert.same({ 92 * MiB, 4, 0 }, { st.reserved, st.segments, st.num_device_free })
  end)

  it("with a memory fraction, a segment past it fails as cudaMalloc would: cache freed, retried, then raised", function()
    local a = C.new { per_process_memory_fraction = 50.5 * MiB / poolsh.device().total }
    local x = a:alloc(30 * MiB, s1); a:free(x)
    local y = a:alloc(40 * MiB, s1)              -- 30 + 40 is over: the cached 30 MiB goes
    assert.same({ 40 * MiB, 1, 1, 0 },
      { a:stats().reserved, a:stats().num_device_free, a:stats().num_alloc_retries, a:stats().num_ooms })
    local ok, err = pcall(a.alloc, a, 12 * MiB, s1)
    assert.is_false(ok)
    assert.truthy(err:find("caching allocator: out of memory allocating 12.00 MiB on stream ", 1, true), err)
    assert.truthy(err:find("the memory fraction allows 50.50 MiB: 40.00 MiB reserved, 12.00 MiB more asked", 1, true), err)
    assert.same({ 40 * MiB, 2, 1 }, { a:stats().reserved, a:stats().num_alloc_retries, a:stats().num_ooms })
    local z = a:alloc(10 * MiB, s1)              -- 40 + 10 fits
    a:free(y); a:free(z); a:empty_cache()
    -- expandable segments: pages are mapped up to the same maximum
    local e = C.new { expandable = true, per_process_memory_fraction = 50.5 * MiB / poolsh.device().total }
    local p = e:alloc(30 * MiB, s1)
    assert.is_false((pcall(e.alloc, e, 30 * MiB, s1)))
    assert.same({ 40 * MiB, 1 }, { e:stats().reserved, e:stats().num_ooms })
    e:free(p); e:empty_cache()
  end)
end)
