-- The replay allocators poolsh.allocators.pytorch and poolsh.allocators.cupy
-- (docs/replay.md): their rules, their errors, and the pytorch allocator
-- replaying the recorded PyTorch snapshots of tests/data/torch/.
local H = require "helpers"
local poolsh = H.poolsh
local P = require "poolsh.allocators.pytorch"
local CP = require "poolsh.allocators.cupy"

local MiB = H.MiB

local function has(text, line) assert.truthy(text:find(line, 1, true), "missing: " .. line .. "\n" .. text) end

describe("pytorch allocator", function()
  local s1, s2
  before_each(function() s1, s2 = poolsh.stream(), poolsh.stream() end)
  after_each(function() s1:destroy(); s2:destroy() end)

  -- The blocks of the segment holding b, as {size, allocated} pairs.
  local function layout(a, b)
    for _, seg in ipairs(a:segments()) do
      if seg.addr == b.segment.addr then
        local t = {}
        for _, x in ipairs(seg.blocks) do t[#t + 1] = { x.size, x.allocated } end
        return t
      end
    end
  end

  it("rounds to 512 B (or power-of-2 divisions) and picks PyTorch's segment sizes", function()
    assert.equal(512, P.round_size(1))
    assert.equal(1024, P.round_size(513))
    assert.equal(1310720, P.round_size(1200000, 4))
    assert.equal(MiB + 512, P.round_size(MiB + 1, 1))      -- PyTorch 2.11: one division rounds as none
    local by_mib = { ["1"] = 0, ["2"] = 4, ["4"] = 0 }     -- as in a snapshot's allocator_settings
    assert.same({ 1200128, 2621440, 5 * MiB + 512 },
      { P.round_size(1200000, by_mib), P.round_size(2 * MiB + 1, by_mib), P.round_size(5 * MiB + 1, by_mib) })
    assert.equal(2 * MiB, P.allocation_size(MiB))
    assert.equal(20 * MiB, P.allocation_size(MiB + 512))
    assert.equal(12 * MiB, P.allocation_size(11 * MiB))
    local a = P.new { roundup_power2_divisions = 4 }
    local b = a:alloc(1200000, s1)
    assert.equal(1310720, a:stats().used)
    assert.same({ { 1310720, true }, { 20 * MiB - 1310720, false } }, layout(a, b))
    a:free(b, s1)
    a:close()
    assert.same({ 0, 0, 1, 1 }, { a:stats().reserved, a:stats().used, a:stats().segments_allocated, a:stats().driver_frees })
  end)

  it("takes PyTorch's PYTORCH_CUDA_ALLOC_CONF text as conf, as its options one by one", function()
    local a = P.new { conf = "roundup_power2_divisions:[1:4,>:1], max_split_size_mb:32" }
    local b = a:alloc(1200000, s1)
    assert.equal(1310720, a:stats().used)                  -- four divisions below 2 MiB
    local c = a:alloc(3 * MiB + 1, s1)
    assert.equal(1310720 + 3 * MiB + 512, a:stats().used)  -- none above
    a:free(b, s1); a:free(c, s1)
    local big = a:alloc(40 * MiB, s1)
    a:free(big, s1)
    assert.are_not.equal(big.segment, a:alloc(8 * MiB, s1).segment)   -- max_split_size: not split
    a:close()
    local function msg(opts) return select(2, pcall(P.new, opts)) end
    assert.equal("pytorch allocator: alloc-conf: unknown key 'max_split' (PyTorch knows: backend, "
      .. "expandable_segments, max_split_size_mb, max_non_split_rounding_mb, roundup_power2_divisions, "
      .. "garbage_collection_threshold, per_process_memory_fraction, large_segment_size_mb, "
      .. "release_lock_on_cudamalloc, pinned_use_cuda_host_register, pinned_num_register_threads, "
      .. "pinned_use_background_threads, pinned_reserve_segment_size_mb, graph_capture_record_stream_reuse)",
      msg { conf = "max_split:20" })
    assert.equal("pytorch allocator: give conf or the options one by one, not both",
      msg { conf = "", max_split_size = "32 MiB" })
    assert.equal("pytorch allocator: large_segment_size must be a multiple of 2 MiB, got 21.00 MiB",
      msg { conf = "expandable_segments:True,large_segment_size_mb:21" })
  end)

  it("honours per_process_memory_fraction and garbage_collection_threshold from its conf", function()
    local function conf(allowed, rest)
      return ("per_process_memory_fraction:%.15f%s"):format(allowed / poolsh.device().total, rest or "")
    end
    local a = P.new { conf = conf(50.5 * MiB) }
    local x = a:alloc(30 * MiB, s1); a:free(x, s1)
    local y = a:alloc(40 * MiB, s1)                 -- the cached 30 MiB freed, then retried
    local b, err = a:alloc(12 * MiB, s1)            -- over the fraction: nil and why
    assert.is_nil(b)
    assert.truthy(err:find("pytorch allocator: out of memory allocating 12.00 MiB", 1, true), err)
    assert.truthy(err:find("the memory fraction allows 50.50 MiB", 1, true), err)
    assert.same({ 40 * MiB, 1, 2, 1 },
      { a:stats().reserved, a:stats().driver_frees, a:stats().num_alloc_retries, a:stats().num_ooms })
    a:free(y, s1); a:close()
    -- garbage collection: 20 and 22 MiB cached, 24 MiB live; a 26 MiB
    -- request frees the older cached block before its cudaMalloc
    a = P.new { conf = conf(100.5 * MiB, ",garbage_collection_threshold:0.5") }
    local p = a:alloc(20 * MiB, s1); a:free(p, s1)
    local q = a:alloc(22 * MiB, s1); a:free(q, s1)
    local r, t = a:alloc(24 * MiB, s1), a:alloc(26 * MiB, s1)
    assert.same({ 72 * MiB, 1 }, { a:stats().reserved, a:stats().driver_frees })
    a:free(r, s1); a:free(t, s1); a:close()
  end)

  it("replays resnet18 within the memory fraction, failing the allocations past it", function()
    local rec = require("poolsh.replay.torch").open("tests/data/torch/modes/resnet18.pickle.gz")
    local fraction = 0.001
    local r = require("poolsh.replay").run(rec, { allocator = "pytorch",
      alloc_opts = { conf = "per_process_memory_fraction:" .. fraction } })
    assert.truthy(r.failed > 0, "no allocation failed")
    assert.truthy(r.peak_reserved <= fraction * poolsh.device().total, r.peak_reserved)
  end)

  it("with backend:cudaMallocAsync, warns as PyTorch does for the keys it marks native-specific", function()
    local conf = require "poolsh.allocators.pytorch_conf"
    require("poolsh.allocators.pytorch_async").warned = true   -- stderr is checked below, in a process of its own
    local a = P.new { conf = "backend:cudaMallocAsync,per_process_memory_fraction:0.5" }
    assert.equal(conf.ASYNC_WARNING, a.warning)
    a:close()
    a = P.new { conf = "backend:cudaMallocAsync,max_split_size_mb:128" }   -- 2.11 does not warn here
    assert.is_nil(a.warning)
    a:close()
    local path = os.tmpname() .. ".lua"
    local f = assert(io.open(path, "w"))
    f:write [[
local P = require "poolsh.allocators.pytorch"
for _ = 1, 2 do P.new({ conf = "backend:cudaMallocAsync,release_lock_on_cudamalloc:True" }):close() end
print("made")
]]
    f:close()
    local out, err, code = H.poolsh_cmd("--backend=sim " .. H.quote(path))
    os.remove(path)
    assert.equal(0, code, out .. err)
    has(out, "made")
    local line = "pytorch allocator: warning: " .. conf.ASYNC_WARNING .. "\n"
    assert.equal(line, err)                         -- once, though two were made
  end)

  it("splits small blocks at 512 B, large ones only above 1 MiB left, merges on free", function()
    local a = P.new()
    local x, y = a:alloc(1, s1), a:alloc(700, s1)
    assert.same({ { 512, true }, { 1024, true }, { 2 * MiB - 1536, false } }, layout(a, x))
    local big = a:alloc(19 * MiB + 512, s1)
    assert.same({ { 20 * MiB, true } }, layout(a, big))
    local l1, l2 = a:alloc(4 * MiB, s1), a:alloc(4 * MiB, s1)
    assert.same({ { 4 * MiB, true }, { 4 * MiB, true }, { 12 * MiB, false } }, layout(a, l1))
    a:free(l1, s1)
    assert.same({ { 4 * MiB, false }, { 4 * MiB, true }, { 12 * MiB, false } }, layout(a, l2))
    a:free(l2, s1)
    assert.same({ { 20 * MiB, false } }, layout(a, l2))
    local st = a:stats()
    assert.same({ 42 * MiB, 20 * MiB + 1536, 3 }, { st.reserved, st.used, st.segments_allocated })
    for _, b in ipairs { x, y, big } do a:free(b, s1) end
    a:empty_cache()
    assert.same({ 0, 0, 3 }, { a:stats().reserved, a:stats().used, a:stats().driver_frees })
  end)

  it("reuses a cached block only on the stream that allocated it, best fit", function()
    local a = P.new()
    local x = a:alloc(4 * MiB, s1)
    a:free(x, s1)
    local y = a:alloc(4 * MiB, s2)
    assert.are_not.equal(x.segment, y.segment)
    local z = a:alloc(3 * MiB, s1)
    assert.equal(x.segment, z.segment)
    local w = a:alloc(11 * MiB, s1)
    a:free(w, s1)
    local v = a:alloc(2 * MiB, s1)                -- 12 MiB free beats 17 MiB free
    assert.equal(w.segment, v.segment)
    for _, b in ipairs { y, z, v } do a:free(b) end
    a:close()
  end)

  it("with max_split_size, oversize blocks are not split and serve only requests within 20 MiB", function()
    local a = P.new { max_split_size = "32 MiB" }
    local big = a:alloc(40 * MiB, s1)
    a:free(big, s1)
    local small = a:alloc(8 * MiB, s1)
    assert.are_not.equal(big.segment, small.segment)
    local near = a:alloc(36 * MiB, s1)
    assert.same({ big.segment, 40 * MiB }, { near.segment, near.size })
    a:free(near, s1)
    local far = a:alloc(61 * MiB, s1)             -- 40 + 20 <= 62: a new segment
    assert.are_not.equal(big.segment, far.segment)
    for _, b in ipairs { small, far } do a:free(b, s1) end
    a:close()
  end)

  it("with deferred_free, a freed block stays out of the cache until free_completed", function()
    local a = P.new { deferred_free = true }
    local x = a:alloc(4 * MiB, s1)
    assert.is_true(a:free(x, s1))                 -- x waits for free_completed
    assert.equal(0, a:stats().used)
    local y = a:alloc(4 * MiB, s1)                -- x is not back: the rest of its segment
    assert.same({ { 4 * MiB, true }, { 4 * MiB, true }, { 12 * MiB, false } }, layout(a, y))
    a:free_completed(x)
    assert.same({ { 4 * MiB, false }, { 4 * MiB, true }, { 12 * MiB, false } }, layout(a, y))
    a:free_completed(x)                           -- already back: nothing
    a:free(y, s1)
    a:empty_cache()                               -- completes pending frees first
    assert.equal(0, a:stats().reserved)
    local b = P.new()                             -- default: at once
    local z = b:alloc(1, s1)
    assert.is_false(b:free(z, s1))                -- back in the cache already
    b:free_completed(z)
    assert.equal(2 * MiB, b:stats().reserved)
    b:close()
  end)

  it("after record_stream, a freed block waits for the other stream's work (then empty_cache waits too)", function()
    local a = P.new()
    local x = a:alloc(4 * MiB, s1)
    a:record_stream(x, s2)
    a:record_stream(x, s1)                        -- its own stream: nothing
    poolsh.spin(s2, "5 ms")
    a:free(x, s1)
    local y = a:alloc(4 * MiB, s1)                -- s2 still busy: x is not back
    assert.same({ { 4 * MiB, true }, { 4 * MiB, true }, { 12 * MiB, false } }, layout(a, y))
    s2:sync()
    local z = a:alloc(4 * MiB, s1)                -- x is back: best fit by address, x's place
    assert.same({ x.segment, x.offset }, { z.segment, z.offset })
    a:record_stream(z, s2)
    poolsh.spin(s2, "5 ms")
    a:free(z); a:free(y)
    a:empty_cache()                               -- waits for s2, then frees the segment
    assert.same({ 0, 1 }, { a:stats().reserved, a:stats().driver_frees })
    assert.equal("pytorch allocator: record_stream of a block that is not allocated here", H.err(a.record_stream, a, z, s2))
    a:close()
  end)

  it("restores a recorded state: segments at their recorded addresses, blocks at their offsets", function()
    local a = P.new()
    local live = a:restore({ { addr = 0x10000000, size = 2 * MiB, stream = 0, kind = "small" },
                             { addr = 0x20000000, size = 20 * MiB, stream = 0 } },
                           { { addr = 0x10000000 + 4096, size = 1000, stream = 0 },
                             { addr = 0x20000000 + 2 * MiB, size = 4 * MiB, stream = 0 } },
                           function() return s1 end)
    local b1, b2 = live[0x10000000 + 4096], live[0x20000000 + 2 * MiB]
    assert.same({ { 4096, false }, { 1024, true }, { 2 * MiB - 5120, false } }, layout(a, b1))
    assert.same({ { 2 * MiB, false }, { 4 * MiB, true }, { 14 * MiB, false } }, layout(a, b2))
    assert.same({ 22 * MiB, 2, 1024 + 4 * MiB }, { a:stats().reserved, a:stats().segments_allocated, a:stats().used })
    a:free(b1); a:free(b2)
    a:close()
  end)

  it("orders equal free blocks by the recorded segment addresses it is told", function()
    local a = P.new()
    a:segment_alloc(0x9000000, 32 * MiB)
    local x = a:alloc(32 * MiB, s1)
    a:segment_alloc(0x1000000, 32 * MiB)
    local y = a:alloc(32 * MiB, s1)
    a:free(x); a:free(y)
    local z = a:alloc(16 * MiB, s1)               -- a tie: the lower recorded address
    assert.equal(y.segment, z.segment)
    a:free(z)
    a:close()
  end)

  it("hands out a table of its own per allocation while it reuses the tables merges free", function()
    local a = P.new()
    local x = a:alloc(1000, s1)
    local y = a:alloc(3000, s1)                   -- the rest of x's split, handed out as it is
    a:free(y, s1)
    a:free(x, s1)                                 -- merges: the rest's table goes spare
    local z = a:alloc(1000, s1)                   -- x's place: a table other than x
    assert.is_true(z ~= x and z ~= y)
    assert.equal("pytorch allocator: double free of a block of 1000 B", H.err(a.free, a, x))
    assert.equal("pytorch allocator: double free of a block of 2.93 KiB", H.err(a.free, a, y))
    a:free(z, s1)
    -- steady alloc/free pairs make about one table each (the block handed
    -- out): splits take the tables merges gave back
    local keep = {}
    for i = 1, 50 do keep[i] = a:alloc(4096 * i, s1) end
    for i = 1, 50, 2 do a:free(keep[i], s1); keep[i] = nil end
    collectgarbage()
    collectgarbage("stop")
    local k0 = collectgarbage("count")
    for i = 1, 2000 do
      local u, v = a:alloc(1000 + i % 7 * 512, s1), a:alloc(20000, s1)
      a:free(u, s1); a:free(v, s1)
    end
    local per = (collectgarbage("count") - k0) * 1024 / 2000
    collectgarbage("restart")
    for _, b in pairs(keep) do a:free(b, s1) end
    a:close()
    assert.is_true(per < 1100, ("%.0f bytes per two pairs"):format(per))   -- 1204 when each split made a table
  end)

  it("raises clear errors for bad sizes, streams, blocks and options", function()
    local a, other = P.new(), P.new()
    assert.equal("pytorch allocator: size must be at least 1 byte", H.err(a.alloc, a, 0, s1))
    assert.equal("pytorch allocator: size must not be negative", H.err(a.alloc, a, -1, s1))
    assert.equal("pytorch allocator: poolsh.Stream expected, got number", H.err(a.alloc, a, 1, 7))
    local b = a:alloc(1, s1)
    assert.equal("pytorch allocator: the block was not allocated by this allocator", H.err(other.free, other, b))
    a:free(b)
    assert.equal("pytorch allocator: double free of a block of 1 B", H.err(a.free, a, b))
    assert.equal("pytorch allocator: free_completed of a block whose free was not requested",
      H.err(a.free_completed, a, {}))
    assert.equal("pytorch allocator: unknown option 'max_split'", H.err(P.new, { max_split = 1 }))
    assert.equal("pytorch allocator: deferred_free must be a boolean, got string", H.err(P.new, { deferred_free = "yes" }))
    assert.equal("pytorch allocator: options table expected, got number", H.err(P.new, 3))
    assert.equal("pytorch allocator: roundup_power2_divisions: interval 3 is not a power of 2 MiB from 1 to 32768",
      H.err(P.new, { roundup_power2_divisions = { [3] = 2 } }))
    assert.equal("pytorch allocator: roundup_power2_divisions must be 0 or a power of 2, got 3",
      H.err(P.new, { roundup_power2_divisions = { [4] = 3 } }))
    assert.equal("pytorch allocator: expect_segment: integer address and size expected, got string and number",
      H.err(a.segment_alloc, a, "x", 1))
    local function one() return s1 end
    assert.equal("pytorch allocator: restore: segments, blocks (tables) and stream_of (a function) expected, "
      .. "got nil, table and function", H.err(a.restore, a, nil, {}, one))
    assert.equal("pytorch allocator: restore: segment 1: integer addr and size >= 1 expected",
      H.err(a.restore, a, { { addr = 1, size = 0 } }, {}, one))
    assert.equal("pytorch allocator: restore: block 2: integer addr and size >= 1 expected",
      H.err(a.restore, a, {}, { { addr = 1, size = 1 }, { addr = "x", size = 1 } }, one))
    assert.equal("pytorch allocator: restore: segment 1: kind must be small or large, got huge",
      H.err(a.restore, a, { { addr = 1, size = 1, kind = "huge" } }, {}, one))
    assert.equal(1, a:stats().segments_allocated)   -- the 1 B block's, no more
    a:close()
  end)
end)

describe("cupy allocator", function()
  local s1, s2
  before_each(function() s1, s2 = poolsh.stream(), poolsh.stream() end)
  after_each(function() s1:destroy(); s2:destroy() end)

  it("rounds to 512 B and cudaMallocs exactly the rounded size", function()
    assert.same({ 512, 512, 1024 }, { CP.round_size(1), CP.round_size(512), CP.round_size(513) })
    local a = CP.new()
    local x, y = a:alloc(1000, s1), a:alloc(3 * MiB + 1, s1)
    local st = a:stats()
    assert.same({ 1024, 3 * MiB + 512 }, { x.size, y.size })
    assert.same({ 3 * MiB + 1536, 3 * MiB + 1536, 2 }, { st.reserved, st.used, st.segments_allocated })
    local z = a:alloc(0, s1)                      -- no memory
    assert.same({ 0, 2 }, { z.size, a:stats().segments_allocated })
    for _, b in ipairs { x, y, z } do a:free(b, s1) end
    a:close()
  end)

  it("takes the smallest free chunk that fits, splits it, merges on free", function()
    local a = CP.new()
    local big, mid = a:alloc(8192, s1), a:alloc(4096, s1)
    a:free(big); a:free(mid)
    local x = a:alloc(3000, s1)                   -- best fit: the 4096 B chunk, split
    assert.same({ mid.mem, 3072 }, { x.mem, x.size })
    local y = a:alloc(1024, s1)                   -- the 1024 B rest of it
    assert.same({ mid.mem, 3072 }, { y.mem, y.offset })
    assert.equal(2, a:stats().segments_allocated)
    a:free(x)
    a:free(y)                                     -- merged back: a whole allocation
    a:free_all_blocks()
    assert.same({ 0, 2 }, { a:stats().reserved, a:stats().driver_frees })
    a:close()
  end)

  it("keeps an arena per stream and frees only unsplit chunks", function()
    local a = CP.new()
    local x = a:alloc(MiB, s1)
    a:free(x)
    local y = a:alloc(MiB, s2)                    -- not from s1's arena
    assert.are_not.equal(x.mem, y.mem)
    a:free(y)
    local z = a:alloc(1024, s2)                   -- split off y's chunk
    assert.equal(y.mem, z.mem)
    a:free_all_blocks(s2)                         -- y's allocation is split: kept
    a:free_all_blocks(s1)
    assert.same({ MiB, 1 }, { a:stats().reserved, a:stats().driver_frees })
    a:free(z)
    a:free_all_blocks()
    assert.same({ 0, 2 }, { a:stats().reserved, a:stats().driver_frees })
    a:close()
  end)

  it("raises clear errors for bad sizes, streams, blocks and options", function()
    local a, other = CP.new(), CP.new()
    assert.equal("cupy allocator: size must not be negative", H.err(a.alloc, a, -1, s1))
    assert.equal("cupy allocator: poolsh.Stream expected, got string", H.err(a.alloc, a, 1, "s"))
    local b = a:alloc(1, s1)
    assert.equal("cupy allocator: the block was not allocated by this allocator", H.err(other.free, other, b))
    a:free(b)
    assert.equal("cupy allocator: double free of a block of 1 B", H.err(a.free, a, b))
    assert.equal("cupy allocator: block expected, got nil", H.err(a.free, a, nil))
    assert.equal("cupy allocator: unknown option 'x' (name)", H.err(CP.new, { x = 1 }))
    a:close()
  end)
end)

describe("out of memory", function()
  it("both allocators free their cache and retry, then return nil and a message", function()
    local path = os.tmpname() .. ".lua"
    local f = assert(io.open(path, "w"))
    f:write [[
for _, name in ipairs { "pytorch", "cupy" } do
  local a = require("poolsh.allocators." .. name).new()
  local s = poolsh.stream()
  local x = a:alloc("30 MiB", s); a:free(x, s)
  local y = a:alloc("40 MiB", s)
  local st = a:stats()
  print(name, "reserved", st.reserved, "frees", st.driver_frees, "retries", st.num_alloc_retries)
  local b, err = a:alloc("40 MiB", s)
  print(name, "second", b, err)
  a:free(y, s); a:close(); s:destroy()
end
]]
    f:close()
    local out, err, code = H.poolsh_cmd("--backend=sim --sim-memory=64MiB " .. H.quote(path))
    os.remove(path)
    assert.equal(0, code, out .. err)
    has(out, ("pytorch\treserved\t%d\tfrees\t1\tretries\t1"):format(40 * MiB))
    has(out, "pytorch\tsecond\tnil\tpytorch allocator: out of memory allocating 40.00 MiB on stream s")
    has(out, ("cupy\treserved\t%d\tfrees\t1\tretries\tnil"):format(40 * MiB))
    has(out, "cupy\tsecond\tnil\tcupy allocator: out of memory allocating 40.00 MiB on stream s")
  end)
end)

-- Replays a PyTorch snapshot through the pytorch allocator as PyTorch ran
-- it: the state before the trace restored, recorded segment addresses for
-- best-fit ties, frees completed where the snapshot completes them.
-- Returns the allocator's stats and the segment_alloc sizes, recorded and
-- replayed, each with the index of the event that made it.
local function replay_snapshot(rec)
  local streams, stream_list = {}, {}
  local function stream_of(id)
    if not streams[id] then streams[id] = poolsh.stream(); stream_list[#stream_list + 1] = streams[id] end
    return streams[id]
  end
  local a = P.new { deferred_free = true }
  local live = a:restore(rec.initial_segments, rec.initial, stream_of)
  local recorded, replayed, n = {}, {}, 0
  for op, addr, size, stream in rec:events() do
    n = n + 1
    if op == "segment_alloc" then
      recorded[#recorded + 1] = { size, n + 1 }   -- the alloc that follows made it
      a:segment_alloc(addr, size)
    elseif op == "alloc" then
      local before = a:stats()
      live[addr] = assert(a:alloc(size, stream_of(stream)))
      local after = a:stats()
      if after.segments_allocated > before.segments_allocated then
        replayed[#replayed + 1] = { after.reserved - before.reserved, n }
      end
    elseif op == "free" then
      a:free(assert(live[addr]), stream_of(stream))
    elseif op == "free_completed" then
      a:free_completed(live[addr]); live[addr] = nil
    end
  end
  local st = a:stats()
  a:close()
  for _, s in ipairs(stream_list) do s:destroy() end
  return st, recorded, replayed
end

describe("pytorch allocator replaying tests/data/torch/", function()
  local T = require "poolsh.replay.torch"
  for _, name in ipairs { "convnet", "transformer", "transformer_2streams" } do
    it(name .. ": PyTorch's peak reserved, segments and segment_alloc sequence", function()
      local rec = T.open("tests/data/torch/" .. name .. ".pickle.gz")
      local st, recorded, replayed = replay_snapshot(rec)
      assert.equal(rec.expected.peak_reserved, st.peak_reserved)
      -- segment.all.allocated counts from the process start (the warm-up and
      -- earlier recordings); what the snapshot holds is current = peak here
      assert.equal(rec.expected.segments_current, st.segments)
      assert.equal(#rec.initial_segments + #recorded, st.segments_allocated)
      assert.same(recorded, replayed)
      -- the replay engine (poolsh replay --allocator=pytorch) agrees
      local r = require("poolsh.replay").run(rec, { allocator = "pytorch" })
      assert.same({ rec.expected.peak_reserved, st.segments_allocated, rec.expected.peak_allocated, 0 },
        { r.peak_reserved, r.segments_allocated, r.peak_used, r.failed })
    end)
  end
end)

describe("the allocators' names in the live view", function()
  it("each registers under its name option, also beside a conf, and refuses a bad one", function()
    local live = require "poolsh.live.allocators"
    local function last() local l = live.registered(); return l[#l] end
    local s = poolsh.stream()
    local a = require("poolsh.allocators.pytorch").new { conf = "expandable_segments:True", name = "tx" }
    assert.equal("tx", last())
    require("poolsh.allocators.pytorch").new {}
    assert.equal("torch", last())
    require("poolsh.allocators.cupy").new { name = "cp" }
    assert.equal("cp", last())
    local pa = require("poolsh.allocators.pool").new { name = "mp" }
    assert.equal("mp", last())
    pa:close()
    assert.matches("name must be a non%-empty string, got number",
      H.err(require("poolsh.allocators.pytorch").new, { name = 5 }))
    assert.matches("name must be a non%-empty string, got string",
      H.err(require("poolsh.allocators.cupy").new, { name = "" }))
    a:close(); s:destroy()
  end)
end)
