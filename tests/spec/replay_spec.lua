-- poolsh.replay: the engine on made-up recordings, the pool allocator, a
-- user's allocator module, poolsh traces, `poolsh replay`, and memory on
-- a long replay (docs/replay.md).
local H = require "helpers"
local poolsh = H.poolsh
local replay = require "poolsh.replay"
local cjson = require "cjson"
local MiB = H.MiB

-- A Recording of `events` ({op, addr, size, stream [, time in µs]}), as
-- readers make them.
local function fake(events, initial)
  local rec = { format = "fake", file = "fake.rec", initial = initial or {}, count = #events, streams = {} }
  function rec.events()
    local i = 0
    return function()
      i = i + 1
      local e = events[i]
      if e then return e[1], e[2], e[3], e[4], e[5] end
    end
  end
  return rec
end

-- An allocator module that logs its calls; blocks are tables. Sizes in
-- `fails` fail. It keeps no peaks: the engine samples stats().
local function spy(fails)
  local log = {}
  local mod = { log = log }
  function mod.new()
    local a = { used = 0 }
    function a.alloc(self, size, stream)
      log[#log + 1] = { "alloc", size, stream }
      if fails and fails[size] then return nil, "out of memory" end
      self.used = self.used + size
      return { size = size, stream = stream }
    end
    function a.free(self, b, stream)
      log[#log + 1] = { "free", b, stream }
      self.used = self.used - b.size
    end
    function a.free_completed(_, b) log[#log + 1] = { "free_completed", b } end
    function a.stats(self)
      return { reserved = self.used * 2, used = self.used, segments_allocated = 0, driver_frees = 0 }
    end
    return a
  end
  return mod
end

local function ops(log)
  local t = {}
  for i, e in ipairs(log) do t[i] = e[1] .. ":" .. (type(e[2]) == "table" and e[2].size or e[2]) end
  return t
end

describe("poolsh.replay.run", function()
  it("allocates the initial blocks first, then replays every event in order", function()
    local s = spy()
    local rec = fake({ { "alloc", 0x300, 30, 0 }, { "free", 0x100, 10, 0 },
                       { "segment_alloc", 0x0, 2 * MiB, 0 }, { "free", 0x300, 30, 0 } },
                     { { addr = 0x100, size = 10, stream = 0 }, { addr = 0x200, size = 20, stream = 0 } })
    local r = replay.run(rec, { allocator = s })
    -- the cleanup completes the frees, then frees the initial block 0x200 still live
    assert.same({ "alloc:10", "alloc:20", "alloc:30", "free:10", "free:30",
                  "free_completed:10", "free_completed:30", "free:20", "free_completed:20" }, ops(s.log))
    assert.equal(4, r.events)
    assert.equal(0, r.failed)
    assert.equal(60, r.peak_used)        -- sampled after each alloc
    assert.equal(120, r.peak_reserved)
    assert.equal(40, r.final_reserved)   -- before the cleanup: 20 live
  end)

  it("keeps recorded streams apart: 0 is the default stream, others streams of their own", function()
    local events = { { "alloc", 1, 10, 0 }, { "alloc", 2, 10, 7 }, { "alloc", 3, 10, 7 },
                     { "alloc", 4, 10, 9 }, { "free", 2, 10, 7 } }
    local s = spy()
    replay.run(fake(events), { allocator = s })
    local d = poolsh.default_stream()
    local l = s.log
    assert.equal(d, l[1][3])
    assert.are_not.equal(d, l[2][3])
    assert.equal(l[2][3], l[3][3])
    assert.are_not.equal(l[2][3], l[4][3])
    assert.equal(l[2][3], l[5][3])           -- freed on its recorded stream
    assert.is_false(l[2][3].blocking)
    assert.is_false(l[2][3].live)            -- the replay destroyed the streams it made
    s = spy()
    replay.run(fake(events), { allocator = s, streams = "one" })
    for i = 1, 5 do assert.equal(d, s.log[i][3]) end
  end)

  it("counts a failed allocation and skips its free", function()
    local s = spy { [666] = true }
    local r = replay.run(fake { { "alloc", 1, 666, 0 }, { "alloc", 2, 5, 0 }, { "free", 1, 666, 0 },
                                { "alloc", 1, 7, 0 }, { "free", 1, 7, 0 }, { "free", 2, 5, 0 } },
                         { allocator = s })
    assert.equal(1, r.failed)
    assert.equal(6, r.events)
    assert.equal(12, r.peak_used)
  end)

  it("makes no allocation of 0 bytes (an allocator refuses them) and skips its free", function()
    local s = spy()
    local r = replay.run(fake({ { "alloc", 1, 0, 0 }, { "alloc", 2, 5, 0 }, { "free", 1, 0, 0 },
                                { "free", 3, 0, 0 }, { "free", 2, 5, 0 } }, { { addr = 3, size = 0, stream = 0 } }),
                         { allocator = s })
    assert.same({ "alloc:5", "free:5", "free_completed:5" }, ops(s.log))
    assert.equal(0, r.failed)
    assert.equal(5, r.events)
    -- through the pool allocator, which raises for 0 bytes: an RMM log's 0-byte allocation
    local dir = os.tmpname()
    local f = assert(io.open(dir, "wb"))
    f:write("Thread,Time,Action,Pointer,Size,Stream\n1,1.0,allocate,0x1,0,0\n1,2.0,free,0x1,0,0\n")
    f:close()
    local ok, res = pcall(replay.run, replay.read.open(dir), {})
    os.remove(dir)
    assert(ok, res)
    assert.equal(2, res.events)
    assert.equal(0, res.failed)
  end)

  it("says which record frees an address not allocated, and frees what it allocated", function()
    local rec = fake { { "alloc", 0x10, MiB, 0 }, { "free", 0x20, MiB, 0 } }
    assert.equal("fake.rec: record 2: free of 0x20, which is not allocated",
      H.err(replay.run, rec, { allocator = "pool" }))
    rec = fake { { "alloc", 0x10, MiB, 0 }, { "alloc", 0x10, MiB, 0 } }
    assert.equal("fake.rec: record 2: alloc at 0x10, which is live", H.err(replay.run, rec, {}))
  end)

  it("passes free_completed on to allocators that have it, and ignores it otherwise", function()
    local events = { { "alloc", 1, 10, 0 }, { "free", 1, 10, 0 }, { "free_completed", 1, 10, 0 },
                     { "free_completed", 99, 10, 0 }, { "alloc_failed", 0, 10, 0 } }
    local s = spy()
    replay.run(fake(events), { allocator = s })
    assert.same({ "alloc:10", "free:10", "free_completed:10" }, ops(s.log))
    assert.equal(s.log[2][2], s.log[3][2])
    local r = replay.run(fake(events), { allocator = "pool" })
    assert.equal(5, r.events)
  end)

  it("takes an allocator by module name", function()
    local s = spy()
    package.preload["replay_spec_alloc"] = function() return s end
    local r = replay.run(fake { { "alloc", 1, 10, 0 } }, { allocator = "replay_spec_alloc" })
    package.preload["replay_spec_alloc"], package.loaded["replay_spec_alloc"] = nil, nil
    assert.equal(10, r.peak_used)
    assert.same({ "alloc:10", "free:10", "free_completed:10" }, ops(s.log))
  end)

  it("refuses bad options, unknown allocators and incomplete ones", function()
    local rec = fake {}
    assert.matches("streams must be \"keep\" or \"one\", got 'two'", H.err(replay.run, rec, { streams = "two" }))
    assert.matches("unknown allocator 'nope' %(pool, pytorch, cupy", H.err(replay.run, rec, { allocator = "nope" }))
    assert.matches("must return a table with a function new", H.err(replay.run, rec, { allocator = {} }))
    local nostats = { new = function() return { alloc = print, free = print } end }
    assert.matches("has no method stats", H.err(replay.run, rec, { allocator = nostats }))
    assert.matches("a Recording expected", H.err(replay.run, {}, {}))
    assert.matches("cannot open", H.err(replay.run, rec, { allocator = "/nonexistent/mine.lua" }))
  end)

  it("reads --pool settings as a table body, parsed as data and never run", function()
    assert.same({ release_threshold = "max", opportunistic = false },
      replay.settings('release_threshold = "max", opportunistic = false'))
    assert.same({ release_threshold = 64 * 2^20, max_size = 1 << 30 },
      replay.settings('release_threshold = 64 * 2^20; max_size = 0x40000000'))
    assert.matches("%-%-pool: bad settings 'x = ': unexpected symbol", H.err(replay.settings, "x = "))
    assert.equal("poolsh.replay: --pool: bad settings 'x = os.exit()': 'os' is not a value a data file may hold "
      .. "(tables, strings, numbers, booleans, math.huge)", H.err(replay.settings, "x = os.exit()"))
    assert.matches("'function' is not a value", H.err(replay.settings, "x = (function() while true do end end)()"))
    assert.matches("the end of the data expected near ', {y = 2'", H.err(replay.settings, "x = 1}, {y = 2"))
    assert.matches("name = value pairs", H.err(replay.settings, "1, 2"))
    -- a long text is cut where it is quoted back
    local e = H.err(replay.settings, ("x"):rep(300) .. " = os")
    assert.truthy(e:find(("x"):rep(64) .. "...'", 1, true), e)
  end)
end)

describe("a replay that keeps the device behind the host", function()
  -- A spy whose allocator asks for device_lag ms: each call logs the host
  -- clock and whether the stream was still busy.
  local function lagging(lag)
    local log, mod = {}, {}
    function mod.new()
      local a = { device_lag = lag }
      function a.alloc(_, size, stream)
        log[#log + 1] = { size = size, at = poolsh.now(), busy = not stream:query() }
        return { size = size, stream = stream }
      end
      function a.free(_, b, stream)
        if stream then log[#log + 1] = { size = -b.size, at = poolsh.now(), busy = not stream:query() } end
      end
      function a.stats() return { reserved = 0, used = 0, segments_allocated = 0, driver_frees = 0 } end
      return a
    end
    return mod, log
  end
  local events = { { "alloc", 1, 10, 0, 1000 }, { "alloc", 2, 20, 7, 6000 }, { "free", 1, 10, 0, 9000 },
                   { "segment_alloc", 3, 2 * MiB, 0, 9500 }, { "alloc", 3, 30, 0, 12000 } }

  it("follows the recorded times and keeps each stream busy device_lag after each call", function()
    local mod, log = lagging(6)
    local t0 = poolsh.now()
    replay.run(fake(events), { allocator = mod })
    assert.equal(4, #log)
    for i, e in ipairs(log) do assert.is_true(e.busy, "call " .. i .. " found its stream idle") end
    if H.is_sim() then
      -- the host reaches each recorded time (µs after the first event), plus the calls' own costs
      local want = { 0, 5, 8, 11 }
      for i, e in ipairs(log) do
        local late = e.at - t0 - want[i]
        assert.is_true(late >= 0 and late < 0.5, ("call %d at %.3f ms, recorded %d ms"):format(i, e.at - t0, want[i]))
      end
    end
  end)

  it("waits at most device_lag + pace_slack between events, whatever the recorded times", function()
    local mod, log = lagging(2)
    local year = 365 * 24 * 3600 * 1e6   -- µs
    local t0 = poolsh.now()
    replay.run(fake { { "alloc", 1, 10, 0, 0 }, { "alloc", 2, 20, 0, 1000 * year }, { "free", 1, 10, 0, 0 / 0 },
                      { "alloc", 3, 30, 0, math.huge }, { "free", 2, 20, 0, -math.huge }, { "alloc", 4, 40, 0, -5 } },
               { allocator = mod })
    assert.equal(6, #log)
    for i, e in ipairs(log) do assert.is_true(e.busy, "call " .. i .. " found its stream idle") end
    if H.is_sim() then
      local most = 6 * (2 + replay.pace_slack) + 1
      assert.is_true(log[6].at - t0 < most, ("the replay waited %.1f ms"):format(log[6].at - t0))
      assert.is_true(log[2].at - log[1].at >= 2 + replay.pace_slack)   -- a long gap is still a wait
    end
  end)

  it("leaves the device idle and the clock alone for allocators without device_lag", function()
    for _, lag in ipairs { false, 0 } do
      local mod, log = lagging(lag or nil)
      local t0 = poolsh.now()
      replay.run(fake(events), { allocator = mod })
      for i, e in ipairs(log) do assert.is_false(e.busy, "call " .. i .. " found its stream busy") end
      if H.is_sim() then assert.is_true(log[4].at - t0 < 1, "the clock followed the recording") end
    end
  end)
end)

describe("the pool allocator", function()
  -- The same operations straight on a new pool: its high marks and growths.
  local function direct(events)
    local p = poolsh.pool {}
    local live = {}
    for _, e in ipairs(events) do
      if e[1] == "alloc" then live[e[2]] = p:alloc(e[3]) else live[e[2]]:free(); live[e[2]] = nil end
    end
    local st, growths = p:stats(), poolsh.core.counts().pools[p.id].growths
    for _, b in pairs(live) do b:free() end
    poolsh.sync()
    p:destroy()
    return st, growths
  end

  it("reports the pool's peaks, final reserved size and growths", function()
    local events = { { "alloc", 1, 3 * MiB, 0 }, { "alloc", 2, 40 * MiB, 0 }, { "free", 1, 3 * MiB, 0 },
                     { "alloc", 3, 100 * MiB, 0 }, { "free", 2, 40 * MiB, 0 }, { "alloc", 4, 1000, 0 } }
    local r = replay.run(fake(events), { allocator = "pool" })
    local st, growths = direct(events)
    assert.equal(st.reserved_high, r.peak_reserved)
    assert.equal(st.used_high, r.peak_used)
    assert.equal(st.reserved, r.final_reserved)
    assert.equal(growths, r.segments_allocated)
    assert.is_true(r.segments_allocated >= 2)
    assert.is_true(r.peak_used >= 140 * MiB)
    assert.equal(0, r.driver_frees)    -- no host waits in a replay: no releases
    assert.equal(0, r.failed)
  end)

  it("takes the default pool's settings, refuses unknown ones, counts out of memory", function()
    local a = require("poolsh.allocators.pool").new { opportunistic = false }
    assert.equal(poolsh.default_pool().release_threshold, a.pool.release_threshold)
    assert.is_false(a.pool.opportunistic)
    a:close()
    assert.matches("unknown setting 'bogus'", H.err(require("poolsh.allocators.pool").new, { bogus = 1 }))
    -- over the default pool: its settings for the allocator's life, then back
    local P, d = require("poolsh.allocators.pool"), poolsh.default_pool()
    local before = { d.release_threshold, d.opportunistic }
    local da = P.new { default = true, release_threshold = "max", opportunistic = false }
    assert.equal(d, da.pool)
    assert.same({ math.huge, false }, { d.release_threshold, d.opportunistic })
    da:close()
    assert.same(before, { d.release_threshold, d.opportunistic })
    assert.equal("pool allocator: release_threshold: invalid size 'bogus' (use e.g. 4096, \"4 KiB\", "
      .. "\"1.5 GiB\", \"64MB\")", H.err(P.new, { default = true, opportunistic = false, release_threshold = "bogus" }))
    assert.equal("pool allocator: internal_dependencies must be a boolean, got string",
      H.err(P.new, { default = true, opportunistic = false, internal_dependencies = "yes" }))
    assert.same(before, { d.release_threshold, d.opportunistic })   -- a refused setting puts them back
    assert.equal("pool allocator: default must be a boolean, got string", H.err(P.new, { default = "yes" }))
    assert.equal("pool allocator: max_size cannot be set on the default pool",
      H.err(P.new, { default = true, max_size = 1 }))
    if H.is_sim() then
      local r = replay.run(fake { { "alloc", 1, 40 * MiB, 0 }, { "alloc", 2, 40 * MiB, 0 } },
                           { allocator = "pool", alloc_opts = { max_size = 64 * MiB } })
      assert.equal(1, r.failed)
    end
  end)
end)

-- The user's allocator of docs/replay.md, taken from the page.
local function doc_module()
  local page = H.slurp("docs/replay.md")
  local code = page:match("```lua\n(%-%- nocache%.lua.-)```")
  assert(code, "docs/replay.md has no nocache.lua example")
  local path = os.tmpname() .. ".lua"
  local f = assert(io.open(path, "w")); f:write(code); f:close()
  return path
end

describe("a user's allocator module", function()
  it("runs from a path: docs/replay.md's nocache.lua", function()
    local path = doc_module()
    local events = { { "alloc", 1, MiB, 0 }, { "alloc", 2, 2 * MiB, 3 }, { "free", 1, MiB, 0 },
                     { "alloc", 3, 4 * MiB, 0 }, { "free", 3, 4 * MiB, 0 } }
    local r = replay.run(fake(events), { allocator = path })
    os.remove(path)
    assert.equal(3, r.segments_allocated)
    assert.equal(2, r.driver_frees)
    assert.equal(6 * MiB, r.peak_used)
    assert.equal(2 * MiB, r.final_reserved)
  end)
end)

describe("poolsh traces", function()
  local json, csv
  setup(function()
    local base = os.tmpname()
    json, csv = base .. ".json", base .. ".csv"
    poolsh.trace.clear()
    poolsh.trace.start()
    local s, p = H.fresh()
    local a = p:alloc("3 MiB", s)
    local b = p:alloc("50 MiB")
    a:free()
    local c = p:alloc("1 MiB", s)
    b:free(); c:free()
    poolsh.sync()
    s:destroy(); p:destroy()
    poolsh.trace.stop()
    poolsh.trace.save(json); poolsh.trace.save(csv)
    poolsh.trace.clear()
  end)
  teardown(function() os.remove(json); os.remove(csv) end)

  it("replays a .json trace: its device memory events, its streams", function()
    local rec = replay.read.open(json)
    assert.equal("poolsh", rec.format)
    assert.equal(json:match("[^/]+$"), rec.file)
    assert.equal(2, #rec.streams)
    local seen = {}
    for op, _, size in rec:events() do seen[#seen + 1] = op .. ":" .. size end
    assert.same({ "alloc:3145728", "alloc:52428800", "free:3145728", "alloc:1048576", "free:52428800",
                  "free:1048576" }, { table.unpack(seen, 1, 6) })
    assert.matches("^free_completed:", seen[7])
    local r = replay.run(rec, {})
    assert.equal(53 * MiB, r.peak_used)
  end)

  it("replays a .csv trace (an RMM log) to the same result", function()
    if not package.searchpath("poolsh.replay.rmm", package.path) then
      pending("poolsh.replay.rmm (the RMM reader) is not here yet")
      return
    end
    local a = replay.run(replay.read.open(json), {})
    local b = replay.run(replay.read.open(csv), {})
    for _, k in ipairs { "peak_reserved", "peak_used", "final_reserved", "segments_allocated", "failed" } do
      assert.equal(a[k], b[k], k)
    end
    assert.equal(6, b.events)
  end)

  it("takes blocks freed but not allocated in a trace as initial blocks", function()
    local path = os.tmpname() .. ".json"
    local s, p = H.fresh()
    local early = p:alloc("2 MiB", s)
    poolsh.trace.clear()
    poolsh.trace.start()
    local b = p:alloc("5 MiB", s)
    early:free(); b:free()
    poolsh.trace.stop()
    poolsh.trace.save(path)
    poolsh.trace.clear()
    poolsh.sync(); s:destroy(); p:destroy()
    local rec = replay.read.open(path)
    os.remove(path)
    assert.equal(1, #rec.initial)
    assert.equal(2 * MiB, rec.initial[1].size)
    local r = replay.run(rec, {})
    assert.equal(7 * MiB, r.peak_used)
  end)

  it("names the file when it is not a recording", function()
    local path = os.tmpname()
    local f = io.open(path, "w"); f:write("hello\n"); f:close()
    assert.matches("not a recording poolsh reads", H.err(replay.read.open, path))
    f = io.open(path, "w"); f:write('{"traceEvents": []}'); f:close()
    assert.matches("record 0: not a poolsh trace", H.err(replay.read.open, path))
    f = io.open(path, "w"); f:write('{"traceEvents": ['); f:close()
    assert.matches("record 0: not JSON", H.err(replay.read.open, path))
    os.remove(path)
    assert.matches("cannot open", H.err(replay.read.open, path))
  end)
end)

describe("poolsh replay (the command)", function()
  local json
  setup(function()
    json = os.tmpname() .. ".json"
    poolsh.trace.clear()
    poolsh.trace.start()
    local s, p = H.fresh()
    local a = p:alloc("3 MiB", s)
    local b = p:alloc("50 MiB")
    a:free(); b:free()
    poolsh.sync()
    s:destroy(); p:destroy()
    poolsh.trace.stop()
    poolsh.trace.save(json)
    poolsh.trace.clear()
  end)
  teardown(function() os.remove(json) end)

  local function cmd(args) return H.poolsh_cmd("--backend=sim replay " .. args) end

  it("--json prints one object of exactly the result's keys", function()
    local out, _, code = cmd(H.quote(json) .. " --json --pool 'release_threshold = \"max\"'")
    assert.equal(0, code)
    assert.equal("}\n", out:sub(-2))
    local r = cjson.decode(out)
    local keys = {}
    for k in pairs(r) do keys[#keys + 1] = k end
    table.sort(keys)
    local want = { table.unpack(replay.keys) }
    table.sort(want)
    assert.same(want, keys)
    assert.equal(6, r.events)
    assert.equal(53 * MiB, r.peak_used)
    assert.equal(0, r.failed)
    assert.is_true(r.peak_reserved >= r.peak_used)
  end)

  it("gives the pytorch allocator PyTorch's own setting with --alloc-conf", function()
    local out, err, code = cmd(H.quote(json) .. " --allocator=pytorch --json --alloc-conf 'max_split_size_mb : 20 , roundup_power2_divisions:[>:4]'")
    assert.equal(0, code, err)
    local r = cjson.decode(out)
    assert.equal(6, r.events)
    assert.equal(0, r.failed)
  end)

  it("prints a summary, and no progress line when stderr is not a terminal", function()
    local out, err, code = cmd(H.quote(json) .. " --streams=one")
    assert.equal(0, code)
    assert.matches("poolsh recording, 6 events", out)
    assert.matches("peak used       53%.00 MiB", out)
    assert.not_matches("replaying", err)
  end)

  it("says what is wrong in one line and exits 1", function()
    for args, msg in pairs {
      ["--frob"] = "unknown option '%-%-frob'",
      [H.quote(json) .. " --allocator=nope"] = "unknown allocator 'nope'",
      [H.quote(json) .. " --streams=two"] = "%-%-streams must be keep or one",
      [H.quote(json) .. " --allocator=pool --allocator=cupy"] = "one %-%-allocator at a time",
      [H.quote(json) .. " --pool 'x ='"] = "%-%-pool: bad settings",
      [H.quote(json) .. " --pool 'bogus = 1'"] = "pool allocator: unknown setting 'bogus'",
      [H.quote(json) .. " --report out.txt"] = "%-%-report must name a %.html file",
      [H.quote(json) .. " --alloc-conf max_split_size_mb:20"] = "%-%-alloc%-conf is PyTorch's setting: it goes with %-%-allocator=pytorch",
      [H.quote(json) .. " --allocator=pytorch --alloc-conf bogus:1"] = "pytorch allocator: alloc%-conf: unknown key 'bogus'",
      [H.quote(json) .. " --allocator=pytorch --alloc-conf 'max_split_size_mb:20' --pool 'conf = \"\"'"] = "%-%-alloc%-conf and %-%-pool's conf: give one",
      ["/nonexistent.json"] = "cannot open /nonexistent.json",
      [""] = "which file",
    } do
      local out, err, code = cmd(args)
      assert.equal(1, code, args)
      assert.equal("", out)
      assert.matches("poolsh replay: " .. msg, err)
      assert.equal(1, select(2, err:gsub("\n", "")) - (err:find("simulated device") and 1 or 0), err)
    end
  end)

  it("--report writes the replay's HTML report", function()
    local html = os.tmpname() .. ".html"
    local out, _, code = cmd(H.quote(json) .. " --report " .. H.quote(html))
    assert.equal(0, code)
    assert.matches("report: ", out)
    local page = H.slurp(html)
    os.remove(html)
    assert.matches("<html", page)
    assert.matches("alloc", page)
  end)
end)

describe("the recordings of tests/data/torch", function()
  it("replay through the pool allocator on the sim as docs/replay.md's table says", function()
    if not H.is_sim() then pending("the table's figures are the sim's") return end
    local page = H.slurp("docs/replay.md")
    for _, name in ipairs { "convnet", "transformer", "transformer_2streams" } do
      local row = page:match("\n| " .. name .. " | ([^\n]+)")
      assert(row, "no row for " .. name)
      local cells = {}
      for c in row:gmatch("([^|]+) |") do cells[#cells + 1] = math.tointeger(tonumber(c)) end
      local rec = replay.read.open("tests/data/torch/" .. name .. ".pickle.gz")
      local r = replay.run(rec, { allocator = "pool" })
      assert.equal(rec.expected.peak_reserved, cells[1], name)
      assert.same({ cells[2], cells[3], cells[4] }, { r.peak_reserved, r.peak_used, r.segments_allocated }, name)
      if name ~= "convnet" then   -- the worked example's claim; the conv net's pool peaked as PyTorch on the H100
        assert.is_true(r.peak_reserved < rec.expected.peak_reserved, name)
      end
    end
  end)
end)

describe("a long replay", function()
  it("keeps Lua memory bounded over 100k events, with recording off", function()
    local counts, recording = {}, false
    local r = replay.run(replay.synthetic { events = 100000, live = 300 }, {
      progress = function(n)
        recording = recording or poolsh.trace.recording()
        collectgarbage(); collectgarbage()
        counts[#counts + 1] = collectgarbage("count")
      end })
    assert.equal(100000, r.events)
    assert.is_false(recording)
    assert.equal(6, #counts)            -- every 16384 events
    for i = 2, #counts do
      assert.is_true(counts[i] < counts[1] + 256, ("%.0f KiB after %.0f KiB"):format(counts[i], counts[1]))
    end
  end)

  it("through the pytorch allocator keeps no freed block when the allocator says it is back", function()
    -- a recording without free_completed events: every freed block is back
    -- in the cache at once, and the engine must not keep it for a free_completed
    local counts = {}
    local r = replay.run(replay.synthetic { events = 50000, live = 300 }, { allocator = "pytorch",
      progress = function()
        collectgarbage(); collectgarbage()
        counts[#counts + 1] = collectgarbage("count")
      end })
    assert.equal(50000, r.events)
    assert.equal(3, #counts)
    for i = 2, #counts do
      assert.is_true(counts[i] < counts[1] + 1024, ("%.0f KiB after %.0f KiB"):format(counts[i], counts[1]))
    end
  end)
end)

describe("a replay against its recording", function()
  local compare = require "poolsh.replay.compare"

  it("says the difference in size and percent of the recorded figure", function()
    assert.equal("110.00 MiB (12%) less than recorded", compare.difference(832 * MiB, 942 * MiB))
    assert.equal("32.00 MiB (4%) more than recorded", compare.difference(800 * MiB, 768 * MiB))
    assert.equal("same as recorded", compare.difference(768 * MiB, 768 * MiB))
    assert.equal("1.00 MiB (<1%) more than recorded", compare.difference(1025 * MiB, 1024 * MiB))
    assert.equal("2.00 MiB more than recorded", compare.difference(2 * MiB, 0))
  end)

  local function run(args)
    return H.sh(("%s --backend=sim %s 2>&1"):format(H.exe, args))
  end

  it("poolsh replay prints its peak beside the recording's", function()
    if not H.is_sim() then pending("the figures are the sim's") return end
    local rec = replay.read.open("tests/data/torch/transformer.pickle.gz")
    local r = replay.run(rec, { allocator = "pool" })
    local want = compare.difference(r.peak_reserved, rec.expected.peak_reserved)
    assert.matches("less than recorded", want, 1, true)
    local out = run("replay tests/data/torch/transformer.pickle.gz")
    assert.matches("\n  peak reserved   " .. poolsh.fmt(r.peak_reserved) .. ": " .. want .. "\n", out, 1, true)
  end)

  it("poolsh compare prints each allocator's peak against the recording's", function()
    local out = run("compare tests/data/torch/convnet.pickle.gz --allocator=pool --allocator=pytorch")
    local rec = replay.read.open("tests/data/torch/convnet.pickle.gz")
    assert.matches("\npeak reserved against the recording's " .. poolsh.fmt(rec.expected.peak_reserved) .. ":\n",
      out, 1, true)
    assert.matches("\n  pool     [%d.]+ [KMG]iB: [^\n]* than recorded\n", out)
    assert.matches("\n  pytorch  [%d.]+ [KMG]iB: [^\n]*recorded\n", out)
  end)
end)
