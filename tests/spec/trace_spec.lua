-- poolsh.trace: every operation recorded as an event (docs/trace.md).
local poolsh = require "poolsh"
local H = require "helpers"
local MiB = H.MiB

-- Runs f with recording on and returns the events it produced.
local function recorded(f)
  poolsh.trace.clear()
  poolsh.trace.start()
  local ok, err = pcall(f)
  poolsh.trace.stop()
  assert(ok, err)
  return poolsh.trace.events()
end

local function find(events, op, n)
  local seen = 0
  for _, e in ipairs(events) do
    if e.op == op then
      seen = seen + 1
      if seen == (n or 1) then return e end
    end
  end
end

local this_file = debug.getinfo(1, "S").short_src

describe("poolsh.trace", function()
  after_each(function() poolsh.trace.stop(); poolsh.trace.clear() end)

  it("records nothing until started, and nothing after stop", function()
    poolsh.trace.clear()
    local s = poolsh.stream()
    s:sync()
    assert.equal(0, poolsh.trace.count())
    assert.is_false(poolsh.trace.recording())
    poolsh.trace.start()
    assert.is_true(poolsh.trace.recording())
    s:sync()
    poolsh.trace.stop()
    s:sync()
    assert.equal(1, poolsh.trace.count())
    assert.equal("stream_sync", poolsh.trace.events()[1].op)
  end)

  it("records an alloc and a free with ids, sizes, counters and the source line", function()
    local s, p, b, line
    local events = recorded(function()
      s, p = poolsh.stream(), poolsh.pool {}
      line = debug.getinfo(1, "l").currentline + 1
      b = p:alloc("4 MiB", s)
      b:free()
    end)
    local a, f = find(events, "alloc"), find(events, "free")
    assert.equal(b.id, a.buffer)
    assert.equal(p.id, a.pool)
    assert.equal(s.id, a.stream)
    assert.equal(4 * MiB, a.size)
    assert.equal(b.addr, a.addr)
    assert.equal("pool", a.kind)
    assert.equal(4 * MiB, a.used)
    assert.is_true(a.reserved >= 4 * MiB)
    assert.equal(this_file .. ":" .. line, a.src)
    assert.equal(this_file .. ":" .. (line + 1), f.src)
    assert.equal(0, f.used)
    assert.equal(a.reserved, f.reserved)
    assert.is_true(f.seq > a.seq and f.t >= a.t)
    s:sync(); p:destroy()
  end)

  it("records the pool growing as a reserve event", function()
    local events = recorded(function()
      local s, p = poolsh.stream(), poolsh.pool {}
      p:alloc("1 MiB", s):free()
      s:sync(); p:destroy()
    end)
    local r = find(events, "reserve")
    assert.is_table(r)
    assert.is_true(r.size > 0)
    assert.equal(r.size, r.reserved)
  end)

  it("attributes a release to the synchronisation that caused it", function()
    local s, p
    local events = recorded(function()
      s, p = poolsh.stream(), poolsh.pool { release_threshold = 0 }
      p:alloc("8 MiB", s):free()
      s:sync()
    end)
    local r = find(events, "release")
    assert.is_table(r)
    assert.equal(p.id, r.pool)
    assert.equal(("s%d:sync()"):format(s.id), r.cause)
    assert.equal(0, r.reserved)
    assert.is_true(r.size > 0)
    assert.is_true(r.seq > find(events, "stream_sync").seq)
    p:destroy()
  end)

  it("attributes releases to poolsh.sync() and to events", function()
    local events = recorded(function()
      local s, p = poolsh.stream(), poolsh.pool {}
      p:alloc("1 MiB", s):free()
      poolsh.sync()
      p:alloc("1 MiB", s):free()
      local e = s:record()
      e:sync()
      p:destroy()
    end)
    assert.equal("poolsh.sync()", find(events, "release", 1).cause)
    assert.matches("^e%d+:sync%(%)$", find(events, "release", 2).cause)
  end)

  it("keeps no Lua function alive: a buffer only a dropped closure held is collected", function()
    H.drops_buffers("it tests that the collector can free the buffer")
    local s, p = poolsh.stream(), poolsh.pool {}
    local was = poolsh.sources()
    poolsh.sources(true)
    recorded(function()
      do
        local b
        local function keep() b = p:alloc("1 MiB", s) end
        keep()
      end
      collectgarbage(); collectgarbage()
    end)
    poolsh.sources(was)
    assert.equal(0, p:stats().used)
    s:sync(); p:destroy()
  end)

  it("records what a trim gave back as a release caused by it", function()
    local p
    local events = recorded(function()
      local s = poolsh.stream()
      p = poolsh.pool { release_threshold = "max" }
      local a, b = p:alloc("32 MiB", s), p:alloc("32 MiB", s)
      a:free(); b:free(); s:sync()
      p:trim(0)
    end)
    local r = find(events, "release")
    assert.is_table(r)
    assert.equal(("p%d:trim()"):format(p.id), r.cause)
    assert.equal(0, r.reserved)
    assert.is_true(r.size >= 64 * MiB)
    p:destroy()
  end)

  it("carries the pool's pending bytes, and a copy's destination as dst", function()
    local events = recorded(function()
      local s, p = poolsh.stream(), poolsh.pool {}
      local a, b = p:alloc(4096, s), p:alloc(4096, s)
      poolsh.spin(s, "20 ms")
      a:free()
      poolsh.copy(b, b, { stream = s, bytes = 16, dst_offset = 16 })
      b:free(); s:sync(); p:destroy()
    end)
    assert.equal(4096, find(events, "free", 1).pending)
    local cp = find(events, "copy")
    assert.equal(cp.buffer, cp.dst)
    assert.equal(cp.dst, cp.src_buffer)
  end)

  it("records kernels, copies, events, settings and lifetimes", function()
    local events = recorded(function()
      local s, p = poolsh.stream(), poolsh.pool {}
      local a, b = p:alloc(4096, s), p:alloc(4096, s)
      poolsh.fill(a, 7, s)
      poolsh.copy(b, a, { stream = s })
      poolsh.touch(b, s)
      assert(poolsh.verify(b, 7, s))
      poolsh.spin(s, "1 ms")
      local e = s:record()
      poolsh.default_stream():wait(e)
      p.release_threshold = "1 MiB"
      p:reset_high()
      p:trim(0)
      a:free(); b:free(); s:sync()
      p:destroy(); s:destroy()
    end)
    for _, op in ipairs { "stream_create", "pool_create", "fill", "copy", "touch", "verify",
                          "spin", "record", "wait", "set", "trim", "stream_sync",
                          "pool_destroy", "stream_destroy" } do
      assert.is_table(find(events, op), op)
    end
    assert.equal(1.0, find(events, "spin").dur)
    local set = find(events, "set")
    assert.equal("release_threshold", set.name)
    assert.equal(MiB, set.value)
    assert.equal("reset_high", find(events, "set", 2).name)
    assert.equal(find(events, "record").event, find(events, "wait").event)
    assert.equal(0, find(events, "wait").stream)
    local cp = find(events, "copy")
    assert.equal(4096, cp.size)
    assert.is_number(cp.src_buffer)
  end)

  it("records frees done by the collector, marked collected", function()
    H.drops_buffers("it tests how a finalizer's free is recorded")
    local s, p = poolsh.stream(), poolsh.pool {}
    local events = recorded(function()
      do local _ = p:alloc("1 MiB", s) end
      collectgarbage(); collectgarbage()
    end)
    local f = find(events, "free")
    assert.is_table(f)
    assert.is_true(f.collected)
    assert.is_nil(f.src)
    s:sync(); p:destroy()
  end)

  it("records other kinds of memory and failed allocations", function()
    local q = poolsh.pool { max_size = "32 MiB" }
    local events = recorded(function()
      poolsh.malloc(64):free()
      poolsh.pinned(64):free()
      poolsh.pageable(64):free()
      pcall(q.alloc, q, "64 MiB")
    end)
    assert.equal("malloc", find(events, "alloc", 1).kind)
    assert.equal("pinned", find(events, "alloc", 2).kind)
    assert.equal("pageable", find(events, "free", 3).kind)
    local f = find(events, "alloc_failed")
    assert.equal(64 * MiB, f.size)
    assert.equal(q.id, f.pool)
    q:destroy()
  end)

  it("events(from, to) slices; clear forgets; meta names what the events refer to", function()
    local events = recorded(function()
      local s = poolsh.stream()
      s:sync(); s:sync(); s:sync()
    end)
    assert.equal(4, #events)
    local mid = poolsh.trace.events(2, 3)
    assert.equal(2, #mid)
    assert.equal(events[2].seq, mid[1].seq)
    local meta = poolsh.trace.meta(events)
    assert.equal(poolsh.backend(), meta.backend)
    assert.equal("default", meta.streams[0].name)
    assert.is_table(meta.streams[events[1].stream])
    poolsh.trace.clear()
    assert.equal(0, poolsh.trace.count())
    assert.same({}, poolsh.trace.events())
  end)

  it("on the sim, an alloc says whether it reused memory and by which rule #sim_only", function()
    if not H.is_sim() then return pending("sim only: the cuda backend infers rules (issue 3)") end
    local events = recorded(function()
      local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
      p:alloc("1 MiB", s):free()
      p:alloc("1 MiB", s):free()
      s:sync(); p:destroy()
    end)
    assert.is_false(find(events, "alloc", 1).reused)
    assert.is_true(find(events, "alloc", 2).reused)
    assert.equal("stream order", find(events, "alloc", 2).rule)
  end)
  
  describe("device work's start and duration", function()
    it("gives copies, fills, touches, verifies and spins the model's span #sim_only", function()
      if not H.is_sim() then return pending("sim only: cuda estimates (docs/trace.md)") end
      local s = poolsh.stream()
      local p = poolsh.pool {}
      local a, b
      local events = recorded(function()
        a, b = p:alloc("8 MiB", s), p:alloc("8 MiB", s)
        poolsh.fill(a, 1); poolsh.touch(a); poolsh.copy(b, a); poolsh.verify(b, 1)
        poolsh.spin(s, 1.5)
      end)
      local last = -1
      for _, op in ipairs { "fill", "touch", "copy", "verify", "spin" } do
        local e = find(events, op)
        assert.is_number(e.start, op)
        assert.is_true(e.dur > 0, op)
        assert.is_nil(e.dur_estimated, op)
        assert.is_true(e.start >= last - 1e-9, op .. ": stream order")
        if op ~= "verify" then   -- a verify's t is when the host's wait for it ended
          assert.is_true(e.start >= e.t - 1e-9, op .. ": starts after its call")
        end
        last = e.start + e.dur
      end
      -- a fill of 8 MiB at the profile's bandwidth, plus the launch latency
      local prof = poolsh.sim.profile()
      local want = (prof.launch_ns + 8 * MiB / prof.bw_fill) / 1e6
      assert.near(want, find(events, "fill").dur, 1e-6)
      assert.near(1.5, find(events, "spin").dur, 1e-9)
      a:free(); b:free(); s:sync(); p:destroy(); s:destroy()
    end)

    it("starts a stream's work after the event it waits on #sim_only", function()
      if not H.is_sim() then return pending("sim only: cuda estimates (docs/trace.md)") end
      local s1, s2 = poolsh.stream(), poolsh.stream()
      local p = poolsh.pool {}
      local b = p:alloc("1 MiB", s2)
      local events = recorded(function()
        poolsh.spin(s1, 5)
        s2:wait(s1:record())
        poolsh.fill(b, 7)
      end)
      local spin, fill = find(events, "spin"), find(events, "fill")
      assert.is_true(fill.t < spin.start + spin.dur, "called while the spin runs")
      assert.near(spin.start + spin.dur, fill.start, 1e-9)
      b:free(); s2:sync(); s1:sync(); p:destroy(); s1:destroy(); s2:destroy()
    end)

    it("stamps a pageable copy when it was called, with its duration #sim_only", function()
      if not H.is_sim() then return pending("sim only: cuda estimates (docs/trace.md)") end
      local s = poolsh.stream()
      local p = poolsh.pool {}
      local d, h = p:alloc("64 MiB", s), poolsh.pageable("64 MiB")
      local before
      local events = recorded(function()
        before = poolsh.now()
        poolsh.copy(h, d, { stream = s })
      end)
      local cp = find(events, "copy")
      assert.is_true(cp.t <= before + 0.01, "the call's time, not its end")
      assert.is_true(cp.dur > 1, "64 MiB through pageable memory takes ms")
      assert.near(poolsh.now(), cp.start + cp.dur, 1e-6)
      d:free(); h:free(); s:sync(); p:destroy(); s:destroy()
    end)

    it("asks the model without moving its clock #sim_only", function()
      if not H.is_sim() then return pending("sim only: a virtual clock") end
      local script = "local s = poolsh.stream(); local p = poolsh.pool {}; "
        .. "local b = p:alloc(4 << 20, s); poolsh.fill(b, 1); poolsh.spin(s, 1); poolsh.touch(b); "
        .. "poolsh.verify(b, 1); poolsh.copy(b, b, {bytes = 4096, dst_offset = 8192}); "
        .. "b:free(); s:sync(); print(poolsh.now())"
      local function now(trace)
        local out, err, code = H.poolsh_cmd("--backend=sim -e " .. H.quote(
          (trace and "poolsh.trace.start(); " or "") .. script))
        assert.equal(0, code, err)
        return out
      end
      assert.equal(now(false), now(true))
    end)

    it("marks a spin's duration as estimated where the backend cannot tell #cuda_only", function()
      if H.is_sim() then return pending("cuda only") end
      local s = poolsh.stream()
      local events = recorded(function() poolsh.spin(s, 1) end)
      local e = find(events, "spin")
      assert.is_true(e.dur_estimated)
      assert.equal(1.0, e.dur)
      assert.equal(e.t, e.start)
      s:sync(); s:destroy()
    end)
  end)

  describe("max_events", function()
    it("keeps the newest N events and counts the others", function()
      local s = poolsh.stream()
      poolsh.trace.clear()
      poolsh.trace.start { max_events = 5 }
      for _ = 1, 12 do s:sync() end
      poolsh.trace.stop()
      assert.equal(5, poolsh.trace.count())
      assert.equal(7, poolsh.trace.dropped())
      local seqs = {}
      for _, e in ipairs(poolsh.trace.events()) do seqs[#seqs + 1] = e.seq end
      assert.same({ 8, 9, 10, 11, 12 }, seqs)
      -- start() keeps everything again, from what is there
      poolsh.trace.start()
      for _ = 1, 3 do s:sync() end
      poolsh.trace.stop()
      assert.equal(8, poolsh.trace.count())
      assert.equal(15, poolsh.trace.events()[8].seq)
      poolsh.trace.clear()
      assert.equal(0, poolsh.trace.dropped())
      s:destroy()
    end)

    it("keeps a pool's reserve and release records whole when the ring turns", function()
      local s = poolsh.stream()
      local p = poolsh.pool { release_threshold = 0 }
      poolsh.trace.clear()
      poolsh.trace.start { max_events = 3 }
      p:alloc("8 MiB", s):free()
      s:sync()
      poolsh.trace.stop()
      local evs = poolsh.trace.events()
      assert.equal(3, #evs)
      local rel = find(evs, "release")
      assert.equal(("s%d:sync()"):format(s.id), rel.cause)
      assert.is_true(rel.size >= 8 * MiB)
      assert.equal(0, rel.reserved)
      poolsh.trace.start { max_events = 1 }
      p:alloc("8 MiB", s):free()
      poolsh.trace.stop()
      assert.equal(1, poolsh.trace.count())
      p:destroy(); s:destroy()
    end)

    it("refuses a bad max_events", function()
      assert.has_error(function() poolsh.trace.start { max_events = -1 } end,
        "poolsh.trace.start: max_events must be a non-negative integer, got -1")
      assert.has_error(function() poolsh.trace.start { max_events = 1.5 } end,
        "poolsh.trace.start: max_events must be a non-negative integer, got 1.5")
      assert.has_error(function() poolsh.trace.start(5) end,
        "poolsh.trace.start: options table expected ({max_events = N}), got number")
    end)
  end)

  describe("reservations", function()
    it("say where the new memory lies, and the pickle's segments follow them #sim_only", function()
      if not H.is_sim() then return pending("sim only: cuda does not say where a pool maps") end
      local s = poolsh.stream()
      local p = poolsh.pool { release_threshold = 0 }
      local events = recorded(function()
        local a = p:alloc("40 MiB", s)
        local b = p:alloc("40 MiB", s)
        a:free(); b:free()
        s:sync()
      end)
      local reserves, allocs = {}, {}
      for _, e in ipairs(events) do
        if e.op == "reserve" then reserves[#reserves + 1] = e end
        if e.op == "alloc" then allocs[#allocs + 1] = e end
      end
      assert.equal(2, #reserves)
      for i, r in ipairs(reserves) do
        assert.is_number(r.addr)
        local a = allocs[i]
        assert.is_true(a.addr + a.size > r.addr and a.addr < r.addr + r.size, "alloc " .. i .. " in it")
      end
      local function each(fn) for _, e in ipairs(events) do fn(e) end end
      local snap = require("poolsh.export.pytorch").build(each, poolsh.trace.meta(events))
      local segs, frees, done = {}, 0, {}
      for _, t in ipairs(snap.device_traces[1]) do
        if t.action == "segment_alloc" then segs[#segs + 1] = t end
        if t.action == "free_completed" then done[t.addr] = true end
        if t.action == "segment_free" then
          frees = frees + 1
          for _, a in ipairs(allocs) do
            if a.addr >= t.addr and a.addr < t.addr + t.size then
              assert.is_true(done[a.addr], "a segment is freed only after its blocks completed")
            end
          end
        end
      end
      local n = 0
      for _ in pairs(done) do n = n + 1 end
      assert.equal(2, n)
      assert.equal(2, #segs)
      for i, r in ipairs(reserves) do
        assert.equal(r.addr, segs[i].addr)
        assert.equal(r.size, segs[i].size)
        assert.is_true(segs[i].time_us <= math.floor(r.t * 1000 + 0.5))   -- at the alloc that caused it
      end
      assert.equal(2, frees)
      p:destroy(); s:destroy()
    end)
  end)

  describe("meta", function()
    it("names objects as poolsh.naming does, in meta and in the exports", function()
      local s = poolsh.stream { name = "copies" }
      local p = poolsh.pool { name = "weights" }
      local b
      local events = recorded(function()
        b = p:alloc(4096, s)
        b.name = "w0"
        poolsh.fill(b, 1)
        b:free(); s:sync()
      end)
      local meta = poolsh.trace.meta(events)
      assert.equal("copies", meta.streams[s.id].name)
      assert.equal("weights", meta.pools[p.id].name)
      assert.equal("default", meta.streams[0].name)
      assert.equal("w0", meta.names.buffer[b.id])
      local doc = require("cjson").decode(require("poolsh.export").to_string("json", events, meta))
      local lanes, fill = {}, nil
      for _, e in ipairs(doc.traceEvents) do
        if e.name == "thread_name" then lanes[e.args.name] = true end
        if e.ph == "X" then fill = e end
      end
      assert.is_true(lanes.copies)
      assert.is_true(lanes["weights (pool)"] or false)
      assert.equal("fill w0", fill.name)
      p:destroy(); s:destroy()
    end)

    it("tells host pools and the default pool apart", function()
      local s = poolsh.stream()
      local early = poolsh.pool { location = "host" }
      local events = recorded(function()
        local h = poolsh.pool { location = "host" }
        local d = poolsh.default_pool()
        local dev = poolsh.pool {}
        for _, p in ipairs { early, h, d, dev } do p:alloc(4096, s):free() end
        s:sync()
      end)
      local meta = poolsh.trace.meta(events)
      local create = find(events, "pool_create")
      assert.equal("host", create.location)
      assert.is_false(create.default)
      local by = {}
      for _, p in pairs(meta.pools) do by[#by + 1] = p.location .. (p.default and "*" or "") end
      table.sort(by)
      assert.same({ "device", "device*", "host", "host" }, by)
      assert.same(meta, poolsh.trace.meta())      -- read from C in batches, the same
      early:destroy(); s:destroy()
    end)
  end)
end)

-- The pools' counters in events stay right across every call that can make
-- a pool give memory back. On the sim also with report_rules = 0, where
-- poolsh treats the sim as it treats cuda (it infers reuse from addresses).
local modes = { { name = "", rules = nil } }
if H.is_sim() then modes[2] = { name = " (inferred, as on cuda)", rules = 0 } end

for _, mode in ipairs(modes) do
describe("recorded pool counters" .. mode.name, function()
  before_each(function() if mode.rules then poolsh.sim.set("report_rules", mode.rules) end end)
  after_each(function()
    if mode.rules then poolsh.sim.set("report_rules", 1) end
    poolsh.trace.stop(); poolsh.trace.clear()
  end)

  -- The reserve event that follows seq, if any.
  local function reserve_after(events, seq)
    for _, e in ipairs(events) do
      if e.op == "reserve" and e.seq > seq then return e end
    end
  end

  -- Checks the release in events: caused by `cause`, down to 0 reserved,
  -- and the second alloc mapping memory again with the pool's true reserved
  -- bytes (want; the reserve event's when nil). Returns the release.
  local function check_release(events, cause, want)
    local r = find(events, "release")
    assert.is_table(r, cause)
    assert.equal(cause, r.cause)
    assert.equal(0, r.reserved)
    local grew = reserve_after(events, r.seq)
    assert.is_table(grew, cause .. ": the alloc after the release maps memory again")
    assert.equal(want or grew.reserved, find(events, "alloc", 2).reserved)
    return r
  end

    it("attributes releases to the host waits of b:read(), b:write() and poolsh.verify()", function()
      local s, p, keep = poolsh.stream(), poolsh.pool { release_threshold = 0 }, nil
      local other = poolsh.pool { release_threshold = "max" }
      keep = other:alloc(4096, s)                       -- on s: reading it waits for s
      for _, access in ipairs { "read", "write", "verify" } do
        local events = recorded(function()
          p:alloc("8 MiB", s):free()
          if access == "read" then keep:read(0, 16)
          elseif access == "write" then keep:write(0, "poolsh")
          else poolsh.verify(keep, 0, s) end
          p:alloc("8 MiB", s):free()                    -- the pool grows again
        end)
        local wait = find(events, access)
        assert.is_table(wait, access)
        assert.equal(keep.id, wait.buffer)
        assert.equal(s.id, wait.stream)
        local r = check_release(events, access == "verify" and ("poolsh.verify(b%d)"):format(keep.id)
                                        or ("b%d:%s()"):format(keep.id, access))
        assert.equal(p.id, r.pool)
        assert.is_true(r.seq > wait.seq)
      end
      keep:free(); s:sync(); p:destroy(); other:destroy()
    end)

    it("waits for nothing on a zero-byte b:read() or b:write()", function()
      local s, p = poolsh.stream(), poolsh.pool { release_threshold = 0 }
      local keep = poolsh.pool { release_threshold = "max" }:alloc(4096, s)
      local events = recorded(function()
        p:alloc("8 MiB", s):free()
        assert.equal("", keep:read(0, 0))
        keep:write(0, "")
      end)
      assert.is_nil(find(events, "read"))
      assert.is_nil(find(events, "write"))
      assert.is_nil(find(events, "release"))
      assert.is_true(p:stats().reserved > 0)        -- no sync gave it back
      keep:free(); s:sync(); p:destroy()
    end)

    it("reads the pool's reserved bytes again when an alloc may have grown it", function()
      local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
      local small, big
      local events = recorded(function()
        small = p:alloc("1 MiB", s)
        small:free()
        local again = p:alloc("1 MiB", s)               -- inside the freed block
        again:free()
        big = p:alloc("40 MiB", s)                      -- larger than it: may grow
        big:free()
      end)
      local a1, a2, a3 = find(events, "alloc", 1), find(events, "alloc", 2), find(events, "alloc", 3)
      assert.equal(a1.reserved, a2.reserved)
      assert.equal(p:stats().reserved, a3.reserved)
      assert.is_true(a3.reserved > a1.reserved)
      local grew = find(events, "reserve", 2)
      assert.is_table(grew)
      assert.equal(a3.reserved - a1.reserved, grew.size)
      s:sync(); p:destroy()
    end)

    -- Measured: destroying an idle stream releases like a sync of it; a
    -- busy one releases nothing, and a later sync covering its frees does.
    for _, busy in ipairs { false, true } do
      it(("attributes a release to destroying a%s stream, or to the sync after"):format(
           busy and " busy" or "n idle"), function()
        local s, s2, p = poolsh.stream(), poolsh.stream(), poolsh.pool { release_threshold = 0 }
        local want, sid, eid = nil, s.id, nil
        local events = recorded(function()
          if busy then poolsh.spin(s, "20 ms") end
          p:alloc("8 MiB", s):free()
          local e = s:record()
          eid = e.id
          if not busy then               -- the free done on the GPU (a query releases nothing)
            while not s:query() do poolsh.sleep("1 ms") end
          end
          s:destroy()
          e:sync()
          local b = p:alloc("8 MiB", s2)
          want = p:stats().reserved
          b:free()
        end)
        check_release(events, busy and ("e%d:sync()"):format(eid) or ("s%d:destroy()"):format(sid),
                      want)
        s2:sync(); p:destroy()
      end)
    end

    it("keeps the counters right when a cudaFree releases pool memory #sim_only", function()
      -- No driver measured did (docs/calibration.md E3); the sim can.
      if not H.is_sim() then return pending("sim only: a profile option") end
      poolsh.sim.set("release_on_cuda_free", 1)
      local s, p = poolsh.stream(), poolsh.pool { release_threshold = 0 }
      local m = poolsh.malloc("1 MiB")
      local want
      local ok, err = pcall(function()
        local events = recorded(function()
          p:alloc("8 MiB", s):free()
          m:free()
          local b = p:alloc("8 MiB", s)
          want = p:stats().reserved
          b:free()
        end)
        check_release(events, ("b%d:free()"):format(m.id), want)
      end)
      poolsh.sim.set("release_on_cuda_free", 0)
      assert(ok, err)
      s:sync(); p:destroy()
    end)
end)
end

-- Streaming in this process, on any backend (on cuda: ticks settled at
-- each write); tests/spec/stream_trace_spec.lua compares whole files.
describe("poolsh.trace streaming", function()
  it("writes each batch's rows, in order, holding at most a batch", function()
    local base = os.tmpname()
    os.remove(base)
    local path = base .. ".csv"
    poolsh.trace.clear()
    poolsh.trace.start { stream_to = path, batch = 8 }
    local s, p = H.fresh()
    local want, most = {}, 0
    for i = 1, 30 do
      local b = p:alloc(4096 * i, s)
      want[#want + 1] = ("allocate,0x%x,%d,%d"):format(b.addr, 4096 * i, s.id)
      b:free(s)
      want[#want + 1] = ("free,0x%x,%d,%d"):format(b.addr, 4096 * i, s.id)
      most = math.max(most, poolsh.trace.count())
    end
    poolsh.trace.stop()
    local saved, n = poolsh.trace.save(path)
    assert.equal(path, saved)
    assert.truthy(most <= 8)
    assert.equal(0, poolsh.trace.count())
    assert.truthy(n >= 60)
    local lines = {}
    for line in io.lines(path) do lines[#lines + 1] = line end
    os.remove(path)
    assert.equal(require("poolsh.export.rmm").header, table.remove(lines, 1))
    local last = ""
    for i, line in ipairs(lines) do
      local t, rest = line:match("^1,([%d:.]+),(.*)$")
      assert.equal(want[i], rest)
      assert.truthy(t >= last, line)
      last = t
    end
    assert.equal(#want, #lines)
    s:sync(); p:destroy()
  end)
end)
