--- The observation layer's entry points (src/observe.c) seen through the
-- Lua API: counts, releases, waits, pending frees, retries, the frees the
-- collector made, the out-of-memory facts as poolsh.render.oom words them,
-- and the ledger agreeing with the sim after every step of a random run.
local H = require "helpers"
local poolsh = H.poolsh
local core = poolsh.core
local fmt = require("poolsh.units").fmt
local MiB = H.MiB

-- The lines after an out-of-memory error's first, as an array.
local function oom_lines(q, size, s)
  local ok, err = pcall(q.alloc, q, size, s)
  assert.is_false(ok)
  local lines = {}
  for l in tostring(err):gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines
end

-- "; device 0: <free> free of <total>" as the device reads now.
local function device_part()
  local d = poolsh.device()
  return ("; device %d: %s free of %s"):format(d.index, fmt(d.free), fmt(d.total))
end

describe("out of memory, worded by poolsh.render.oom", function()
  local s, s2
  before_each(function()
    s, s2 = poolsh.stream { name = "copies" }, poolsh.stream { name = "loads" }
  end)
  after_each(function() poolsh.sync(); s:destroy(); s2:destroy() end)

  it("with nothing freed and a max_size: free buffers or raise max_size (named pool)", function()
    local q <close> = poolsh.pool { max_size = "64 MiB", name = "big" }
    local l = oom_lines(q, "128 MiB", s)
    assert.same({
      "cudaErrorMemoryAllocation: out of memory allocating 128.00 MiB from pool big on stream copies",
      "  big: reserved 0 B, used 0 B, pending 0 B",
      "  max_size 64.00 MiB" .. device_part(),
      "  collecting garbage before the retry freed 0 B of pool buffers (0 B of big)",
      "  no freed memory to reuse: free buffers or raise max_size",
    }, l)
  end)

  it("with nothing freed and no max_size: free buffers", function()
    local q <close> = poolsh.pool {}
    local l = oom_lines(q, poolsh.device().total * 2, s)
    assert.equal(("  p%d: reserved 0 B, used 0 B, pending 0 B"):format(q.id), l[2])
    assert.equal("  no max_size" .. device_part(), l[3])
    assert.equal("  no freed memory to reuse: free buffers", l[5])
  end)

  it("with memory freed on its own stream: synchronising would not help", function()
    local q <close> = poolsh.pool { max_size = "64 MiB", release_threshold = "max" }
    local a, keep = q:alloc("32 MiB", s), q:alloc("16 MiB", s)
    poolsh.spin(s, "10 ms")
    a:free()
    local l = oom_lines(q, "48 MiB", s)
    keep:free()
    assert.same({
      ("  p%d: reserved 64.00 MiB, used 16.00 MiB, pending 32.00 MiB (copies 32.00 MiB)"):format(q.id),
      "  max_size 64.00 MiB" .. device_part(),
      ("  collecting garbage before the retry freed 0 B of pool buffers (0 B of p%d)"):format(q.id),
      "  the freed memory (32.00 MiB) was usable but holds no free extent of 48.00 MiB: "
        .. "synchronising would not help",
    }, { table.unpack(l, 2) })
  end)

  it("with memory freed on another stream, events followed: sync or wait (named streams)", function()
    local q <close> = poolsh.pool { max_size = "20 MiB", internal_dependencies = false, name = "big" }
    local a = q:alloc("32 MiB", s)
    poolsh.spin(s, "10 ms")
    a:free()
    local l = oom_lines(q, "32 MiB", s2)
    assert.equal("  big: reserved 32.00 MiB, used 0 B, pending 32.00 MiB (copies 32.00 MiB)", l[2])
    assert.equal("  max_size 32.00 MiB (20.00 MiB rounded up)" .. device_part(), l[3])
    assert.equal("  32.00 MiB freed on other streams was not usable from loads: with "
      .. "internal_dependencies on, big would have made loads wait for them; so would copies:sync() "
      .. "before the allocation, or loads:wait(e) on an event e recorded on copies after the frees", l[5])
  end)

  it("with memory freed on the default stream: its sync as a user writes it", function()
    -- a non-blocking stream: on the GPU, a blocking one is ordered after
    -- the legacy default stream's free and may reuse its memory
    -- (docs/sim.md: the sim does not count that order as knowledge)
    local nb = poolsh.stream { name = "readers", blocking = false }
    local q <close> = poolsh.pool { max_size = "20 MiB", internal_dependencies = false }
    local a = q:alloc("32 MiB")
    poolsh.spin(poolsh.default_stream(), "10 ms")
    a:free()
    local l = oom_lines(q, "32 MiB", nb)
    assert.equal(("  p%d: reserved 32.00 MiB, used 0 B, pending 32.00 MiB (default 32.00 MiB)"):format(q.id), l[2])
    assert.matches("so would poolsh.default_stream():sync() before the allocation, or readers:wait(e) on an "
                   .. "event e recorded on default after the frees", l[5], 1, true)
    poolsh.sync(); nb:destroy()
  end)

  it("with memory freed on another stream, events not followed: no wait offered", function()
    local q <close> = poolsh.pool { max_size = "20 MiB", internal_dependencies = false,
                                    follow_event_dependencies = false }
    local a = q:alloc("32 MiB", s)
    poolsh.spin(s, "10 ms")
    a:free()
    local l = oom_lines(q, "32 MiB", s2)
    assert.equal(("  32.00 MiB freed on other streams was not usable from loads: with "
      .. "internal_dependencies on, p%d would have made loads wait for them; so would copies:sync() "
      .. "before the allocation"):format(q.id), l[5])
  end)

  it("with internal dependencies on, memory freed elsewhere still holds no extent", function()
    local q <close> = poolsh.pool { max_size = "64 MiB", release_threshold = "max" }
    local a, keep = q:alloc("32 MiB", s), q:alloc("16 MiB", s2)
    poolsh.spin(s, "10 ms")
    a:free()
    local l = oom_lines(q, "48 MiB", s2)
    keep:free()
    assert.equal("  the freed memory (32.00 MiB) was usable but holds no free extent of 48.00 MiB: "
      .. "synchronising would not help", l[5])
  end)

  -- Nine streams each free 3 MiB of a 32 MiB pool (done: how many of
  -- them query idle first); s then asks for 8 MiB. Returns line 2.
  local function nine_frees(done)
    local q <close> = poolsh.pool { max_size = "32 MiB", internal_dependencies = false,
                                    opportunistic = false, release_threshold = "max" }
    local streams, bufs = {}, {}
    for i = 1, 9 do
      streams[i] = poolsh.stream()
      bufs[i] = q:alloc("3 MiB", streams[i])
    end
    for i = 1, 9 do poolsh.spin(streams[i], "10 ms"); bufs[i]:free() end
    poolsh.sleep(50)
    for i = 1, done do assert.is_true(streams[i]:query()) end   -- known complete now
    local l = oom_lines(q, "8 MiB", s)
    local ids = {}
    for i, st in ipairs(streams) do ids[i] = st.id; st:destroy() end
    return l[2], ids, q.id
  end

  it("cuts the list of streams after eight", function()
    local line, ids, q = nine_frees(0)
    local want = { ("  p%d: reserved 32.00 MiB, used 0 B, pending 27.00 MiB"):format(q) }
    for i = 1, 8 do want[#want + 1] = (i == 1 and " (" or ", ") .. ("s%d 3.00 MiB"):format(ids[i]) end
    assert.equal(table.concat(want) .. ", ...)", line)
  end)

  it("says what completed", function()
    local line, ids = nine_frees(9)
    assert.matches("pending 0 B (s" .. ids[1] .. " 0 B + 3.00 MiB completed, s" .. ids[2]
                   .. " 0 B + 3.00 MiB completed, ", line, 1, true)
  end)

  it("renders nothing for a failure that is not out of memory", function()
    assert.equal("", require("poolsh.render.oom")(nil))
  end)
end)

describe("the observation layer's entry points", function()
  it("count fresh allocations, reuses and growths per pool", function()
    local s, q = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local a = q:alloc("4 MiB", s)
    a:free(s)
    local b = q:alloc("4 MiB", s)                    -- stream order reuses a's block
    local n = core.counts().pools[q.id]
    assert.equal(2, n.allocs)
    assert.equal(1, n.fresh)
    assert.equal(1, n.growths)
    assert.equal(1, n.reuses["stream order"])
    b:free(); s:sync(); q:destroy(); s:destroy()
  end)

  it("count an out-of-memory error and its retry", function()
    local q = poolsh.pool { max_size = "32 MiB" }
    assert.is_false(pcall(q.alloc, q, "64 MiB"))
    local n = core.counts().pools[q.id]
    assert.equal(1, n.ooms)
    assert.equal(1, n.retries)
    q:destroy()
  end)

  it("remember a release and its cause at the host wait that saw it", function()
    local s, q = poolsh.stream(), poolsh.pool { release_threshold = 0 }
    local _, last = core.releases(math.maxinteger)
    q:alloc("8 MiB", s):free()
    s:sync()
    local r = core.releases(last)
    assert.equal(1, #r)
    assert.same({ pool = q.id, size = 32 * MiB, reserved = 0, cause_op = "stream_sync", cause_id = s.id,
                  threshold = 0 }, r[1])
    assert.equal(1, core.counts().pools[q.id].releases.stream_sync)
    q:destroy(); s:destroy()
  end)

  it("keep a free pending until a wait shows it complete, through an event too", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local q = poolsh.pool { release_threshold = "max" }
    poolsh.spin(s1, "5 ms")
    q:alloc("4 MiB", s1):free()
    assert.equal(4 * MiB, q:stats().pending)
    local p = core.pending()
    assert.equal(1, #p)
    assert.equal(s1.id, p[1].stream)
    local e = poolsh.event()
    e:record(s1)
    s2:wait(e)
    assert.equal(4 * MiB, q:stats().pending)        -- s2 knows it; the host does not yet
    s2:sync()                                        -- the host learns what s2 knew
    assert.equal(0, q:stats().pending)
    assert.equal(0, #core.pending())
    e:destroy(); q:destroy(); s1:destroy(); s2:destroy()
  end)

  it("list the frees the collector made", function()
    H.drops_buffers("the collector's frees are what is tested")
    local q = poolsh.pool {}
    local _, last, bytes = core.collected(math.maxinteger)
    do local _ = q:alloc(1000) end
    collectgarbage(); collectgarbage()
    local c, now, after = core.collected(last)
    assert.equal(1, #c)
    assert.equal(last + 1, now)
    assert.same({ buffer = c[1].buffer, size = 1000, pool = q.id }, c[1])
    assert.equal(bytes + 1000, after)
    poolsh.sync(); q:destroy()
  end)
end)

describe("the one table of source names", function()
  after_each(function()
    poolsh.trace.stop(); poolsh.trace.clear(); core.sources(true, 1); core.statement(nil)
  end)

  it("names a site's frames, the trace's sources and a statement alike", function()
    local q = poolsh.pool {}
    core.sources(true, 2)
    poolsh.trace.clear(); poolsh.trace.start()
    local function inner() return q:alloc(100) end
    local b = inner()
    poolsh.trace.stop()
    local src
    for _, e in ipairs(poolsh.trace.events()) do if e.op == "alloc" then src = e.src end end
    local me = debug.getinfo(1, "S").short_src
    assert.matches("^" .. me:gsub("%p", "%%%0") .. ":%d+$", src)
    local site
    for _, x in ipairs(core.sites()) do if x.site:find(src, 1, true) == 1 then site = x.site end end
    assert.is_string(site)
    assert.matches("^" .. src:gsub("%p", "%%%0") .. " < " .. me:gsub("%p", "%%%0") .. ":%d+$", site)
    b:free()
    core.statement("keep = q:alloc(1)")
    local c = assert(load("return (...):alloc(1)", "=stdin"))(q)
    core.statement(nil)
    local found = false
    for _, x in ipairs(core.sites()) do found = found or x.site == "keep = q:alloc(1)" end
    assert.is_true(found)
    c:free(); poolsh.sync(); q:destroy()
  end)
end)

-- The sim's live blocks and the ledger's live extents, address -> size,
-- and the ledger's pending bytes checked against the sim: each pending or
-- done extent lies over memory the sim holds freed, never live.
local function agree(q, step)
  local live, freed = {}, {}
  for _, r in ipairs(core._sim_truth(q)) do
    if r.state == "live" then live[r.addr] = r.req
    elseif r.state ~= "fresh" then freed[#freed + 1] = r end
  end
  local mine, pending = {}, 0
  for _, b in ipairs((core.blocks(q, true))) do
    if b.pending or b.done then
      if b.pending then pending = pending + b.size end
      for addr, size in pairs(live) do
        assert(addr + size <= b.addr or b.addr + b.size <= addr,
               ("step %d: freed extent of b%d at %#x over a live block"):format(step, b.buffer, b.addr))
      end
      for _, r in ipairs(freed) do                   -- known complete: the sim's free is not pending
        assert(b.pending or r.state ~= "pending" or r.addr + r.size <= b.addr or b.addr + b.size <= r.addr,
               ("step %d: the ledger says b%d's free completed, the sim's is pending"):format(step, b.buffer))
      end
    else
      mine[b.addr] = b.size
    end
  end
  assert.same(live, mine, "step " .. step .. ": live blocks")
  assert.equal(pending, q:stats { estimates = false }.pending, "step " .. step .. ": pending bytes")
  return next(mine) ~= nil
end

describe("a random run", function()
  it("keeps the ledger agreeing with the sim after every step", function()
    if not H.is_sim() then pending("the sim's truth only") return end
    math.randomseed(19)
    local streams = { poolsh.stream(), poolsh.stream(), poolsh.stream { blocking = false } }
    local q = poolsh.pool { release_threshold = "max", max_size = "64 MiB" }
    local live, events = {}, {}
    local function pick(t) return t[math.random(#t)] end
    local steps = {
      function()                                     -- allocate, maybe out of memory
        local ok, b = pcall(q.alloc, q, math.random(1, 8) * MiB, pick(streams))
        if ok then live[#live + 1] = b end
      end,
      function()                                     -- free on its stream or another
        if #live == 0 then return end
        local b = table.remove(live, math.random(#live))
        if math.random(2) == 1 then b:free() else b:free(pick(streams)) end
      end,
      function() poolsh.spin(pick(streams), math.random(1, 5) .. " ms") end,
      function()
        local e = poolsh.event()
        e:record(pick(streams))
        events[#events + 1] = e
      end,
      function() if #events > 0 then pick(streams):wait(pick(events)) end end,
      function() pick(streams):sync() end,
      function() pick(streams):query() end,
      function() if #events > 0 then pick(events):sync() end end,
      function() poolsh.sleep(math.random(0, 3)) end,
    }
    local pended, held = 0, 0                        -- steps that left a free pending, a block live
    for step = 1, 400 do
      steps[math.random(#steps)]()
      if agree(q, step) then held = held + 1 end
      if q:stats().pending > 0 then pended = pended + 1 end
    end
    assert(held > 100, "the run holds live blocks: " .. held)
    assert(core.counts().pools[q.id].allocs > 30, "the run allocates")
    assert(pended > 20, "the run keeps frees pending: " .. pended)
    for _, b in ipairs(live) do b:free() end
    poolsh.sync()
    agree(q, 401)
    assert.equal(0, q:stats().pending)
    for _, e in ipairs(events) do e:destroy() end
    q:destroy()
    for _, st in ipairs(streams) do st:destroy() end
  end)
end)
