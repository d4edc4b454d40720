-- PyTorch's backend:cudaMallocAsync (poolsh.allocators.pytorch_async):
-- the allocator's rules, and replays of tests/data/torch/modes' native
-- snapshots against the peaks the real cudaMallocAsync runs reached
-- (docs/replay.md, "backend:cudaMallocAsync").
local H = require "helpers"
local poolsh = H.poolsh
local replay = require "poolsh.replay"
local cjson = require "cjson"
local P = require "poolsh.allocators.pytorch_async"
local MiB = H.MiB
local CONF = "backend:cudaMallocAsync"

describe("the pytorch allocator with backend:cudaMallocAsync", function()
  local s1, s2

  before_each(function() s1, s2 = poolsh.stream { blocking = false }, poolsh.stream { blocking = false } end)
  after_each(function()
    poolsh.sync()
    s1:destroy(); s2:destroy()
  end)

  it("is what pytorch.new gives for that conf, over the default pool set as PyTorch sets it", function()
    local d = poolsh.default_pool()
    local before = { d.release_threshold, d.follow_event_dependencies, d.opportunistic, d.internal_dependencies }
    local a = require("poolsh.allocators.pytorch").new { conf = " backend : cudaMallocAsync " }
    assert.equal(d, a.inner.pool)
    assert.equal(math.huge, d.release_threshold)
    assert.is_true(d.follow_event_dependencies and d.opportunistic and d.internal_dependencies)
    assert.equal(P.device_lag, a.device_lag)
    a:close()
    assert.same(before, { d.release_threshold, d.follow_event_dependencies, d.opportunistic,
                          d.internal_dependencies })
    -- the native allocator's settings are read and unused, as in PyTorch
    local b = require("poolsh.allocators.pytorch").new { conf = "backend:cudaMallocAsync,max_split_size_mb:64" }
    assert.equal(d, b.inner.pool)
    b:close()
  end)

  it("allocates exactly the bytes asked on the caller's stream, frees on the creation stream", function()
    local a = P.new { conf = CONF }
    local x = a:alloc(1000, s1)
    assert.equal(s1, x.stream)
    assert.equal(1000, a:stats().used)           -- unrounded: UsedMemCurrent counts 1000
    local y = a:alloc(3 * MiB + 1, s2)
    assert.equal(1000 + 3 * MiB + 1, a:stats().used)
    assert.is_false(a:free(x, s2))              -- on s1, whatever the caller says; nothing deferred
    a:free(y)
    assert.equal(0, a:stats().used)
    local z = a:alloc(0, s1)                    -- PyTorch's nullptr: no memory
    assert.equal(0, a:stats().used)
    a:free(z)
    a:close()
  end)

  it("delays a record_stream'ed free until the usage streams' work is done", function()
    local a = P.new { conf = CONF }
    local b = a:alloc(32 * MiB, s1)
    assert.equal(32 * MiB, a:stats().reserved)
    a:record_stream(b, s2)
    a:record_stream(b, s1)                       -- the creation stream: ignored
    poolsh.spin(s2, 50)                          -- s2's work that uses b runs on
    a:free(b)
    local c = a:alloc(32 * MiB, s1)              -- b's memory is not free yet: the pool grows
    assert.equal(64 * MiB, a:stats().reserved)
    a:free(c)
    poolsh.sleep(60)                             -- the device has run past the free
    local d = a:alloc(32 * MiB, s1)              -- opportunistic reuse, no growth
    assert.equal(64 * MiB, a:stats().reserved)
    a:free(d)
    a:close()
    -- without record_stream the same free is reusable at once, in stream order
    local a2 = P.new { conf = CONF }
    local e = a2:alloc(32 * MiB, s1)
    poolsh.spin(s2, 50)
    a2:free(e)
    local f = a2:alloc(32 * MiB, s1)
    assert.equal(32 * MiB, a2:stats().reserved)
    a2:free(f)
    a2:close()
  end)

  it("empty_cache waits for the device and trims the pool to what live blocks hold", function()
    local a = P.new { conf = CONF }
    local live = a:alloc(MiB, s1)
    local gone = a:alloc(64 * MiB, s1)
    a:record_stream(gone, s2)
    poolsh.spin(s2, 20)
    a:free(gone)
    assert.equal(96 * MiB, a:stats().reserved)
    a:empty_cache()                              -- a sync first: the pending free goes too
    assert.equal(32 * MiB, a:stats().reserved)
    a:free(live)
    a:empty_cache()
    assert.equal(0, a:stats().reserved)
    a:close()
  end)

  it("reports the pool's peaks as memory_stats() does, from the allocator's start", function()
    local d = poolsh.default_pool()
    local old = d:alloc(64 * MiB, s1)            -- before: not in this allocator's peaks
    old:free(); poolsh.sync(); d:trim(0)
    local a = P.new { conf = CONF }
    local x, y = a:alloc(20 * MiB, s1), a:alloc(20 * MiB, s1)
    a:free(x); a:free(y)
    local st = a:stats()
    assert.equal(d:stats().reserved_high, st.peak_reserved)
    assert.equal(64 * MiB, st.peak_reserved)
    assert.equal(40 * MiB, st.peak_used)
    assert.equal(2, st.segments_allocated)       -- growths of the pool since new()
    assert.equal(0, st.driver_frees)             -- threshold max: nothing goes back at syncs
    a:close()
    assert.equal(0, d:stats().reserved)          -- close trims
  end)

  it("refuses what is over the per_process_memory_fraction of the device", function()
    local a = P.new { conf = "backend:cudaMallocAsync,per_process_memory_fraction:0.5" }
    local half = poolsh.device().total // 2
    local b, err = a:alloc(half + 1, s1)
    assert.is_nil(b)
    assert.matches("would exceed allowed memory", err)
    local c = a:alloc(MiB, s1)
    a:free(c)
    a:close()
  end)

  it("keeps a block whose free failed live, its usage streams with it", function()
    if not H.is_sim() then return pending("a failing free needs the sim's fault injection") end
    local pf = require "poolsh.profile"
    local a = P.new { conf = CONF }
    local b = a:alloc(MiB, s1)
    a:record_stream(b, s2)
    pf.arm { op = "pool_free", call = pf.calls("pool_free") + 1, error = "cudaErrorInvalidValue" }
    assert.matches("^cudaErrorInvalidValue", H.err(a.free, a, b))
    pf.disarm()
    assert.equal(MiB, a:stats().used)
    assert.is_true(a.live[b])
    assert.is_true(a.uses[b][s2])
    a:free(b)                                    -- the free can be made again
    assert.equal(0, a:stats().used)
    a:close()
  end)

  it("names what is wrong with bad input", function()
    local function msg(f, ...) return H.err(f, ...) end
    assert.equal("pytorch allocator: options table expected, got string", msg(P.new, CONF))
    assert.equal("pytorch allocator: unknown option 'max_split_size' with backend:cudaMallocAsync "
      .. "(conf, device_lag)", msg(P.new, { conf = CONF, max_split_size = 1 }))
    assert.equal("pytorch allocator: conf 'max_split_size_mb:64' does not choose backend:cudaMallocAsync",
      msg(P.new, { conf = "max_split_size_mb:64" }))
    assert.matches("^pytorch allocator: alloc%-conf: ", msg(P.new, { conf = "backend:cudaMalloc" }))
    assert.equal("pytorch allocator: device_lag must be a number of ms >= 0, got -1",
      msg(P.new, { conf = CONF, device_lag = -1 }))
    assert.equal("pytorch allocator: device_lag must be a number of ms >= 0, got inf",
      msg(P.new, { conf = CONF, device_lag = math.huge }))
    local a = P.new { conf = CONF }
    assert.equal("pytorch allocator: size must be a whole number of bytes >= 0, got -1", msg(a.alloc, a, -1, s1))
    assert.equal("pytorch allocator: size must be a whole number of bytes >= 0, got 1.5", msg(a.alloc, a, 1.5, s1))
    assert.equal("pytorch allocator: stream must be a poolsh.Stream, got nil", msg(a.alloc, a, 8))
    assert.equal("pytorch allocator: stream must be a poolsh.Stream, got number", msg(a.alloc, a, 8, 3))
    local b = a:alloc(8, s1)
    assert.equal("pytorch allocator: stream must be a poolsh.Stream, got string", msg(a.record_stream, a, b, "s2"))
    a:free(b)
    assert.matches("is not a live block of this allocator", msg(a.free, a, b))
    assert.matches("is not a live block of this allocator", msg(a.record_stream, a, b, s2))
    assert.matches("is not a live block of this allocator", msg(a.free, a, {}))
    assert.equal(0, a:stats().used)             -- a refused free changed nothing
    a:close()
  end)
end)

-- The six workloads recorded natively and with backend:cudaMallocAsync
-- (tests/data/torch/modes, an H200 with PyTorch 2.11).
local DATA = "tests/data/torch/modes/"
local WORKLOADS = { "resnet18", "resnet18_amp", "transformer", "transformer_2streams", "conv_shapes", "kv_cache" }

-- The real run's stats: {peak (reserved_bytes.all.peak), pool (the default
-- pool's ReservedMemHigh)}, and summary.jsonl's line for it.
local function real(w)
  local st = cjson.decode(H.slurp(DATA .. w .. ".cudaMallocAsync.stats.json"))
  local line
  for l in H.slurp(DATA .. "summary.jsonl"):gmatch("[^\n]+") do
    local t = cjson.decode(l)
    if t.workload == w and t.mode == "async" then line = t end
  end
  return math.tointeger(st["reserved_bytes.all.peak"]), math.tointeger(st.pool_reserved_high), line
end

local function replayed(w, opts)
  local rec = replay.read.open(DATA .. w .. ".pickle.gz")
  local alloc_opts = { conf = CONF }
  for k, v in pairs(opts or {}) do alloc_opts[k] = v end
  return replay.run(rec, { allocator = "pytorch", alloc_opts = alloc_opts })
end

-- Every real cudaMallocAsync run's peak reserved of workload w: the one
-- beside its snapshot and those of async-runs/ (the same script, run again
-- in fresh processes). The real runs differ by a few 32 MiB chunks from
-- run to run (the GPU's progress against the host's).
local function real_runs(w)
  local peaks = { (real(w)) }
  for k = 1, 3 do
    local st = cjson.decode(H.slurp(("%sasync-runs/%s.cudaMallocAsync.run%d.stats.json"):format(DATA, w, k)))
    peaks[#peaks + 1] = math.tointeger(st["reserved_bytes.all.peak"])
  end
  table.sort(peaks)
  return peaks[1], peaks[#peaks]
end

describe("a replay of a native snapshot with backend:cudaMallocAsync", function()
  if not H.is_sim() then
    pending("the figures are the sim's (docs/replay.md); on a GPU see docs/gpu-verification.md")
    return
  end

  for _, w in ipairs(WORKLOADS) do
    it(w .. ": within 1% of the real runs' peaks reserved", function()
      local peak, pool, line = real(w)
      assert.equal(peak, pool)                   -- memory_stats() is the pool's ReservedMemHigh
      assert.equal(peak, math.tointeger(line.peak_reserved))
      local r = replayed(w)
      assert.equal(0, r.failed)
      local lo, hi = real_runs(w)
      assert.is_true(r.peak_reserved >= lo * 0.99 and r.peak_reserved <= hi * 1.01,
        ("%s: replay %d, real runs %d to %d"):format(w, r.peak_reserved, lo, hi))
    end)
  end

  it("an idle device (device_lag = 0) gives the plain pool's figures, which miss the real runs", function()
    local r = replayed("resnet18", { device_lag = 0 })
    local plain = replay.run(replay.read.open(DATA .. "resnet18.pickle.gz"),
      { allocator = "pool", alloc_opts = { release_threshold = "max" } })
    assert.equal(plain.peak_reserved, r.peak_reserved)
    local _, hi = real_runs("resnet18")
    assert.is_true(r.peak_reserved > hi * 1.01)
  end)

  it("runs from the command line with --alloc-conf", function()
    local out = H.poolsh_cmd("--backend=sim replay " .. DATA .. "kv_cache.pickle.gz --json --allocator=pytorch "
      .. "--alloc-conf " .. CONF)
    local r = cjson.decode(out)
    assert.equal(201326592, math.tointeger(r.peak_reserved))
  end)
end)
