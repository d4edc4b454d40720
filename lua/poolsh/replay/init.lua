--- poolsh.replay: replays a recording (poolsh.replay.read) through an
-- allocator, on the sim or the GPU (docs/replay.md).
--
--   local replay = require "poolsh.replay"
--   local rec = replay.read.open("run.pickle.gz")
--   local r = replay.run(rec, { allocator = "pool", alloc_opts = {release_threshold = "max"} })
--   -- r: events, peak_reserved, peak_used, final_reserved,
--   --    segments_allocated, driver_frees, failed, seconds, alloc_seconds
local poolsh = require "poolsh"
local datafile = require "poolsh.datafile"

local M = {}

--- The allocators poolsh ships (poolsh.allocators.<name>).
M.builtin = { "pool", "pytorch", "cupy" }

--- The result's keys, in the order `poolsh replay` prints them.
M.keys = { "events", "peak_reserved", "peak_used", "final_reserved", "segments_allocated",
           "driver_frees", "failed", "seconds", "alloc_seconds" }

--- Events between two queries of the replay's streams (poolsh learns
-- which frees completed, so its ledger stays as large as the live set).
M.query_every = 4096
--- Events between two calls of opts.progress.
M.progress_every = 16384
--- The most a paced replay waits between two events beyond the device's
-- lag, in ms (see pacer below).
M.pace_slack = 1
--- The most streams a replay makes by default (opts.max_streams,
-- --max-streams): a recording of 200k stream ids must not make 200k
-- streams on a GPU.
M.max_streams = 64

local function fail(fmt, ...) error("poolsh.replay: " .. fmt:format(...), 0) end

setmetatable(M, { __index = function(t, k)
  if k == "read" then t.read = require "poolsh.replay.read"; return t.read end
end })

-- The module of a user's .lua file (a path), or an error.
local function from_file(path)
  local chunk, err = loadfile(path)
  if not chunk then fail("allocator '%s': %s", path, err) end
  local ok, mod = pcall(chunk)
  if not ok then fail("allocator '%s': %s", path, tostring(mod)) end
  return mod
end

-- Whether require(name) would find a Lua module.
local function findable(name)
  return package.loaded[name] ~= nil or package.preload[name] ~= nil
    or package.searchpath(name, package.path) ~= nil
end

-- The built-in allocator `name`, else the module `name`, or an error
-- naming the choices.
local function from_name(name)
  local mod = "poolsh.allocators." .. name
  if not name:find(".", 1, true) and findable(mod) then return require(mod) end
  if not findable(name) then
    fail("unknown allocator '%s' (%s, a module name or a path to a .lua file)", name,
      table.concat(M.builtin, ", "))
  end
  return require(name)
end

--- The allocator module `spec` names: a built-in name, a module name, a
-- path (with a '/' or ending in .lua) or a module table. Checks new().
function M.allocator(spec)
  spec = spec == nil and "pool" or spec
  local mod = spec
  if type(spec) == "string" then
    if spec == "" then fail("allocator name is empty") end
    mod = (spec:find("/", 1, true) or spec:match("%.lua$")) and from_file(spec) or from_name(spec)
  end
  if type(mod) ~= "table" or type(mod.new) ~= "function" then
    fail("allocator '%s' must return a table with a function new(opts)", tostring(spec))
  end
  return mod
end

-- Raises unless allocator object a has alloc, free and stats.
local function check_object(a, spec)
  if type(a) ~= "table" and type(a) ~= "userdata" then
    fail("allocator '%s': new() returned %s, not an object", tostring(spec), type(a))
  end
  for _, m in ipairs { "alloc", "free", "stats" } do
    if type(a[m]) ~= "function" then fail("allocator '%s' has no method %s", tostring(spec), m) end
  end
end

--- Pool settings from `--pool`'s text: the body of a Lua table
-- constructor ('release_threshold = "max", opportunistic = false'),
-- parsed as data (poolsh.datafile: never run).
function M.settings(text)
  if type(text) ~= "string" then fail("--pool: settings text expected, got %s", type(text)) end
  local shown = #text > 64 and text:sub(1, 64) .. "..." or text
  local ok, t = datafile.decode("return {" .. text .. "\n}", "--pool")
  if not ok then fail("--pool: bad settings '%s': %s", shown, (t:gsub("^%-%-pool:%d+: ", ""))) end
  for k in pairs(t) do
    if type(k) ~= "string" then fail("--pool: settings are name = value pairs, got '%s'", shown) end
  end
  return t
end

-- Whether recorded stream id is the legacy default stream.
local function is_default(id) return id == 0 or id == "0" or id == "0x0" or id == nil end

-- The refusal of a recording with more streams than max.
local function too_many(file, n, max)
  fail("%s: %s streams, and a replay makes at most %d (--max-streams N or opts.max_streams "
    .. "raises that; --streams=one puts every event on one stream)", tostring(file or "recording"),
    n, max)
end

-- A function id -> poolsh.Stream for opts.streams ("keep" or "one"), the
-- list of streams it created and the set of streams used since their last
-- query found them idle. Recorded stream 0 is the legacy default stream;
-- every other recorded stream becomes a non-blocking stream, at most max
-- of them.
local function stream_map(mode, max, file)
  local default = poolsh.default_stream()
  local made, map, busy = {}, {}, {}
  if mode == "one" then return function() busy[default] = true; return default end, made, busy end
  return function(id)
    local s = map[id]
    if s then busy[s] = true; return s end
    if is_default(id) then s = default
    else
      if #made >= max then too_many(file, "over " .. max, max) end
      s = poolsh.stream { blocking = false }; made[#made + 1] = s
    end
    map[id], busy[s] = s, true
    return s
  end, made, busy
end

local function check_opts(opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail("options table expected, got %s", type(opts)) end
  local streams = opts.streams or "keep"
  if streams ~= "keep" and streams ~= "one" then
    fail("streams must be \"keep\" or \"one\", got '%s'", tostring(streams))
  end
  if opts.progress ~= nil and type(opts.progress) ~= "function" then
    fail("progress must be a function, got %s", type(opts.progress))
  end
  if opts.on_sample ~= nil and type(opts.on_sample) ~= "function" then
    fail("on_sample must be a function, got %s", type(opts.on_sample))
  end
  local k = opts.sample_every
  if k ~= nil and (math.type(k) ~= "integer" or k < 1) then
    fail("sample_every must be a positive integer, got %s", tostring(k))
  end
  local m = opts.max_streams
  if m ~= nil and (math.type(m) ~= "integer" or m < 0) then
    fail("max_streams must be a whole number >= 0, got %s", tostring(m))
  end
  return opts, streams
end

-- The replay's state: the allocator, the blocks by address, the counts.
local function new_state(rec, opts, mode)
  local spec = opts.allocator
  local a = M.allocator(spec).new(opts.alloc_opts)
  check_object(a, spec or "pool")
  local stream_of, made, busy = stream_map(mode, opts.max_streams or M.max_streams, rec.file)
  return {
    rec = rec, a = a, stream_of = stream_of, made = made, busy = busy,
    live = {},        -- addr -> block
    lost = {},        -- addr -> true: its alloc failed, its free is skipped
    requested = type(a.free_completed) == "function" and {} or nil,   -- addr -> freed block
    n = 0, failed = 0, alloc_ms = 0, peak_reserved = 0, peak_used = 0,
  }
end

-- A one-line error naming the recording and record n.
local function bad(st, fmt, ...)
  error(("%s: record %d: %s"):format(tostring(st.rec.file or "recording"), st.n, fmt:format(...)), 0)
end

-- Reads reserved and used after an allocation, for the peaks.
local function sample(st)
  local s = st.a:stats()
  if s.reserved > st.peak_reserved then st.peak_reserved = s.reserved end
  if s.used > st.peak_used then st.peak_used = s.used end
end

-- An allocator with restore() rebuilds the recorded layout before the
-- first event (a PyTorch snapshot's initial_segments and blocks).
local function restore(st)
  local live = st.a:restore(st.rec.initial_segments, st.rec.initial or {}, st.stream_of)
  if type(live) ~= "table" then
    fail("the allocator's restore() must return {[address] = block}, got %s", type(live))
  end
  st.live = live
  if st.sampling then sample(st) end
end

-- Allocates the blocks live before the first event.
local function initial(st)
  if type(st.a.restore) == "function" and st.rec.initial_segments then return restore(st) end
  for i, b in ipairs(st.rec.initial or {}) do
    st.n = i
    if b.size == 0 then st.lost[b.addr] = true; goto next end   -- nothing to allocate
    local t0 = poolsh.now()
    local blk = st.a:alloc(b.size, st.stream_of(b.stream))
    st.alloc_ms = st.alloc_ms + (poolsh.now() - t0)
    if blk == nil then st.failed = st.failed + 1; st.lost[b.addr] = true
    else st.live[b.addr] = blk end
    if st.sampling then sample(st) end
    ::next::
  end
  st.n = 0
end

-- Queries the replay's streams used since a query last found them idle:
-- poolsh's ledger learns which frees completed (a query moves no pool's
-- state). Idle streams are not asked again, so the queries cost what the
-- events since the last ones cost, whatever the number of streams.
local function query(busy)
  for s in pairs(busy) do
    if s:query() then busy[s] = nil end
  end
  poolsh.default_stream():query()
end

-- The next event after n at which to query the streams or call on_sample.
local function next_stop(n, qevery, severy)
  local q = n - n % qevery + qevery
  if not severy then return q end
  local s = n - n % severy + severy
  return s < q and s or q
end

-- The device-behind-host model (docs/replay.md, "backend:cudaMallocAsync"):
-- a function (t, s) for an allocator with a device_lag (ms > 0), called
-- before each recorded allocation and free at t µs (counted from the first
-- one) on stream s. The host's clock follows the recorded one (poolsh.sleep
-- while it is early), and s is kept busy (poolsh.spin) until device_lag
-- after that, so that a free completes on the device device_lag after the
-- host made it, as if the run's kernels were still queued before it.
-- Nil for any other allocator: the device stays idle, as before.
-- A wait longer than device_lag + M.pace_slack ms is cut to that: by then
-- every stream is idle, so a longer one changes nothing but the clock, and
-- a recording's times (untrusted) cannot make one wait long; the total is
-- at most that much per event.
local function pacer(a)
  local ok, lag = pcall(function() return a.device_lag end)   -- a may be a userdata
  if not ok or type(lag) ~= "number" or not (lag > 0) or lag == math.huge then return nil end
  local now, sleep, spin = poolsh.now, poolsh.sleep, poolsh.spin
  local base, first, tails, cap = now(), nil, {}, lag + M.pace_slack
  return function(t, s)
    if type(t) ~= "number" or t ~= t then return end
    first = first or t
    local at, h = base + (t - first) / 1000, now()
    if at - h > cap then base = base - (at - h - cap); at = h + cap end
    if at > h then sleep(at - h); h = now() end
    local want = (at > h and at or h) + lag
    local tail = tails[s] or 0
    if tail < want then
      spin(s, want - (tail > h and tail or h))
      tails[s] = want
    end
  end
end

-- Every recorded event, in order: the hot loop (no closures, no strings
-- per event). Allocator calls are timed on poolsh.now().
local function events(st, progress)
  local a, live, lost, requested = st.a, st.live, st.lost, st.requested
  local pace = pacer(a)
  local hint = type(a.segment_alloc) == "function"
  local alloc, free, stream_of, now = a.alloc, a.free, st.stream_of, poolsh.now
  local sampling, qevery, pevery = st.sampling, M.query_every, M.progress_every
  local on_sample, severy = st.on_sample, st.on_sample and st.sample_every
  local n, failed, ms = 0, 0, st.alloc_ms
  local stop = next_stop(0, qevery, severy)
  for op, addr, size, stream, t in st.rec:events() do
    n = n + 1
    if op == "alloc" then
      if live[addr] then st.n = n; bad(st, "alloc at 0x%x, which is live", addr) end
      if size == 0 then lost[addr] = true; goto next end   -- nothing to allocate; its free is skipped
      if pace then pace(t, stream_of(stream)) end
      local t0 = now()
      local blk = alloc(a, size, stream_of(stream))
      ms = ms + (now() - t0)
      if blk == nil then failed = failed + 1; lost[addr] = true
      else
        live[addr] = blk
        if sampling then sample(st) end
      end
    elseif op == "free" then
      local blk = live[addr]
      if blk then
        live[addr] = nil
        if pace then pace(t, stream_of(stream)) end
        local t0 = now()
        local waits = free(a, blk, stream_of(stream))
        ms = ms + (now() - t0)
        -- an allocator whose free returns false has the block back already
        if requested and waits ~= false then requested[addr] = blk end
      elseif lost[addr] then lost[addr] = nil
      else st.n = n; bad(st, "free of 0x%x, which is not allocated", addr) end
    elseif op == "segment_alloc" and hint then
      a:segment_alloc(addr, size)   -- recorded addresses break best-fit ties
    elseif op == "free_completed" and requested then
      local blk = requested[addr]
      if blk then
        requested[addr] = nil
        local t0 = now()
        a:free_completed(blk)
        ms = ms + (now() - t0)
      end
    end
    ::next::
    if n == stop then
      st.n, st.failed, st.alloc_ms = n, failed, ms
      if n % qevery == 0 then
        query(st.busy)
        if progress and n % pevery == 0 then progress(n, st.rec.count) end
      end
      if severy and n % severy == 0 then on_sample(n, a:stats()) end
      stop = next_stop(n, qevery, severy)
    end
  end
  st.n, st.failed, st.alloc_ms = n, failed, ms
  if on_sample and n % severy ~= 0 then on_sample(n, a:stats()) end
end

-- The blocks of t (addr -> block) in address order.
local function by_address(t)
  local addrs = {}
  for addr in pairs(t) do addrs[#addrs + 1] = addr end
  table.sort(addrs)
  for i, addr in ipairs(addrs) do addrs[i] = t[addr] end
  return addrs
end

-- Completes the frees requested, then frees and completes what is still
-- allocated, in address order; closes the allocator, destroys the streams
-- the replay made. Errors here are the allocator's.
local function cleanup(st)
  local a, requested = st.a, st.requested
  if requested then
    for _, blk in ipairs(by_address(requested)) do a:free_completed(blk) end
  end
  local live = by_address(st.live)
  st.live = {}
  for _, blk in ipairs(live) do a:free(blk, nil) end
  if requested then
    for _, blk in ipairs(live) do a:free_completed(blk) end
  end
  if a.close then a:close() end
  poolsh.sync()
  for _, s in ipairs(st.made) do s:destroy() end
end

-- The result table (M.keys) from the state and the allocator's stats.
local function result(st, wall0)
  local s = st.a:stats()
  return {
    events = st.n, failed = st.failed,
    peak_reserved = st.sampling and st.peak_reserved or s.peak_reserved,
    peak_used = st.sampling and st.peak_used or s.peak_used,
    final_reserved = s.reserved, segments_allocated = s.segments_allocated,
    driver_frees = s.driver_frees,
    seconds = poolsh.wallclock() - wall0, alloc_seconds = st.alloc_ms / 1000,
  }
end

--- A synthetic Recording of opts.events events (default 1e6), made as
-- it is read (memory proportional to its live blocks): allocations of 4 KiB
-- to 64 MiB (log-uniform) on opts.streams streams (default 4; stream 0
-- takes about 70%), freed on their stream in random order, about opts.live
-- blocks (default 1000) live. Addresses are ids (each allocation its
-- own). Deterministic for a given opts.seed.
function M.synthetic(opts)
  opts = opts or {}
  local n, nstreams, target = opts.events or 1000000, opts.streams or 4, opts.live or 1000
  local rec = { format = "synthetic", file = "synthetic", count = n, initial = {} }
  rec.streams = {}
  for i = 1, nstreams do rec.streams[i] = i - 1 end
  function rec.events()
    local x = opts.seed or 88172645463325252
    local function rnd()   -- xorshift64; a float in [0, 1)
      x = x ~ (x << 13); x = x ~ (x >> 7); x = x ~ (x << 17)
      return (x >> 11) * (1.0 / (1 << 53))
    end
    local addrs, sizes, streams, live, made, i = {}, {}, {}, 0, 0, 0
    return function()
      i = i + 1
      if i > n then return nil end
      local u = rnd()
      if live > 0 and (live > target * 1.5 or (live >= target * 0.5 and u < 0.5)) then
        local k = 1 + math.floor(rnd() * live)
        local addr, size, stream = addrs[k], sizes[k], streams[k]
        addrs[k], sizes[k], streams[k] = addrs[live], sizes[live], streams[live]
        addrs[live], sizes[live], streams[live] = nil, nil, nil
        live = live - 1
        return "free", addr, size, stream, nil
      end
      made, live = made + 1, live + 1
      local size = math.floor(4096 * 2 ^ (rnd() * 14))
      local s = (nstreams == 1 or rnd() < 0.7) and 0 or 1 + math.floor(rnd() * (nstreams - 1))
      addrs[live], sizes[live], streams[live] = 0x100000000000 + made * 512, size, s
      return "alloc", addrs[live], size, s, nil
    end
  end
  return rec
end

--- Replays rec (a Recording, docs/replay.md) and returns the result (M.keys).
-- opts: allocator (name, path or module; default "pool"), alloc_opts
-- (the allocator's new() options), streams ("keep" or "one"), progress
-- (called as progress(events so far, rec.count) every M.progress_every),
-- on_sample (called as on_sample(i, a:stats()) after the initial blocks
-- with i = 0, after every sample_every-th event (default 1000) and after
-- the last; it must not touch the replay's blocks), max_streams (the most
-- streams the replay makes, default M.max_streams: a recording with more
-- is refused, before any event when it lists them in rec.streams).
function M.run(rec, opts)
  local mode
  opts, mode = check_opts(opts)
  if type(rec) ~= "table" or type(rec.events) ~= "function" then
    fail("a Recording expected (poolsh.replay.read.open), got %s", type(rec))
  end
  -- a recording that lists its streams is refused before anything is made
  local listed, max = rawget(rec, "streams"), opts.max_streams or M.max_streams
  if mode == "keep" and type(listed) == "table" then
    local n = 0
    for _, id in ipairs(listed) do if not is_default(id) then n = n + 1 end end
    if n > max then too_many(rec.file, n, max) end
  end
  local wall0 = poolsh.wallclock()
  local st = new_state(rec, opts, mode)
  local first = st.a:stats()
  st.sampling = not (first.peak_reserved and first.peak_used)
  st.on_sample, st.sample_every = opts.on_sample, opts.sample_every or 1000
  local ok, res = pcall(function()
    initial(st)
    if st.on_sample then st.on_sample(0, st.a:stats()) end
    events(st, opts.progress)
    return result(st, wall0)
  end)
  local cok, cerr = pcall(cleanup, st)
  if not ok then error(res, 0) end
  if not cok then error(cerr, 0) end
  return res
end

return M
