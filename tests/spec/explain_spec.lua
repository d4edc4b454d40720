-- Explaining reuse: each of the five rules, on both backends (the sim
-- knows the rule; on cuda poolsh infers it), pending frees and free space.
-- Each scenario is one the GPU was measured doing (docs/calibration.md E6).
local poolsh = require "poolsh"
local H = require "helpers"
local MiB = H.MiB

local function pool(opts)
  opts = opts or {}
  if opts.release_threshold == nil then opts.release_threshold = "max" end
  return poolsh.pool(opts)
end

-- The scenarios run as the backend explains them; on the sim also with
-- report_rules = 0, where the sim says nothing and poolsh infers the rule
-- as it does on cuda, so CI covers the inference too.
local modes = { { name = "", rules = nil } }
if H.is_sim() then modes[2] = { name = " (inferred, as on cuda)", rules = 0 } end

for _, mode in ipairs(modes) do
describe("reuse is explained" .. mode.name, function()
  before_each(function() if mode.rules then poolsh.sim.set("report_rules", mode.rules) end end)
  after_each(function() if mode.rules then poolsh.sim.set("report_rules", 1) end end)

  it("stream order: freed and allocated again on the same stream", function()
    local s, p = poolsh.stream(), pool()
    local a = p:alloc("16 MiB", s)
    a:free()
    local b = p:alloc("16 MiB", s)
    assert.equal(a.addr, b.addr)
    assert.is_true(b.reused)
    assert.equal(a.id, b.reused_from)
    assert.equal("stream order", b.reuse_rule)
    b:free(); s:sync(); p:destroy()
  end)

  it("host synchronisation: the host synchronised past the free, all policies off", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = pool { follow_event_dependencies = false, opportunistic = false,
                     internal_dependencies = false }
    local a = p:alloc("16 MiB", s1)
    a:free()
    s1:sync()
    local b = p:alloc("16 MiB", s2)
    assert.equal(a.addr, b.addr)
    assert.equal(a.id, b.reused_from)
    assert.equal("host synchronisation", b.reuse_rule)
    b:free(); s2:sync(); p:destroy()
  end)

  it("event dependency: the stream waited on an event recorded after the free", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = pool { opportunistic = false }
    local a = p:alloc("16 MiB", s1)
    poolsh.spin(s1, "50 ms")
    a:free()
    s2:wait(s1:record())
    local b = p:alloc("16 MiB", s2)
    assert.equal(a.addr, b.addr)
    assert.equal("event dependency", b.reuse_rule)
    assert.equal(a.id, b.reused_from)
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("event dependency through another stream: s3 waited on s2, which had waited on s1 after the free", function()
    -- measured on an H100 (docs/calibration.md, event dependencies): the
    -- driver follows the waits transitively
    local s1, s2, s3 = poolsh.stream(), poolsh.stream(), poolsh.stream()
    local p = pool { opportunistic = false }
    local a = p:alloc("4 MiB", s1)
    poolsh.spin(s1, "50 ms")
    a:free()
    s2:wait(s1:record())
    poolsh.spin(s2, "1 ms")
    s3:wait(s2:record())
    local b = p:alloc("4 MiB", s3)
    assert.equal(a.addr, b.addr)
    assert.equal("event dependency", b.reuse_rule)
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("no reuse across streams without a rule that allows it", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = pool { follow_event_dependencies = false, opportunistic = false }
    local a = p:alloc("16 MiB", s1)
    poolsh.spin(s1, "50 ms")
    a:free()
    s2:wait(s1:record())
    local b = p:alloc("16 MiB", s2)
    assert.are_not.equal(a.addr, b.addr)
    assert.is_false(b.reused)
    assert.is_nil(b.reused_from)
    assert.is_nil(b.reuse_rule)
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("why_fresh: pending on another stream with no event dependency", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = pool()
    local a = p:alloc("16 MiB", s1)
    poolsh.spin(s1, "50 ms")
    a:free()
    local b = p:alloc("16 MiB", s2)
    assert.is_false(b.reused)
    assert.equal(("b%d's free is pending on s%d, and s%d has no event dependency on it")
                 :format(a.id, s1.id, s2.id), b.why_fresh)
    local r = poolsh.core.recent(0)
    assert.equal(b.why_fresh, r[#r].why_fresh)
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("why_fresh: the event was recorded before the free", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = pool { opportunistic = false }
    local a = p:alloc("16 MiB", s1)
    local e = s1:record()
    poolsh.spin(s1, "50 ms")
    a:free()
    s2:wait(e)
    local b = p:alloc("16 MiB", s2)
    assert.equal(("s%d waited on an event recorded on s%d before b%d's free")
                 :format(s2.id, s1.id, a.id), b.why_fresh)
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("why_fresh: event dependencies not followed, opportunistic reuse off", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = pool { follow_event_dependencies = false, opportunistic = false }
    local a = p:alloc("16 MiB", s1)
    poolsh.spin(s1, "50 ms")
    a:free()
    s2:wait(s1:record())
    local b = p:alloc("16 MiB", s2)
    assert.equal(("s%d waited on an event recorded on s%d after b%d's free, but p%d does not "
                  .. "follow event dependencies"):format(s2.id, s1.id, a.id, p.id), b.why_fresh)
    poolsh.sleep("100 ms")                     -- a's free completes; nothing synchronises
    local c = p:alloc("16 MiB", poolsh.stream())
    assert.equal(("b%d's free on s%d completed, but opportunistic reuse is off in p%d")
                 :format(a.id, s1.id, p.id), c.why_fresh)
    b:free(); c:free(); poolsh.sync(); p:destroy()
  end)

  it("why_fresh: no freed block large enough names the largest", function()
    local s = poolsh.stream()
    local p = pool()
    local a, keep = p:alloc("4 MiB", s), p:alloc("1 MiB", s)
    local a2, keep2 = p:alloc("4 MiB", s), p:alloc("1 MiB", s)
    a:free(); a2:free()                         -- two 4 MiB holes
    local b = p:alloc("8 MiB", s)
    assert.is_false(b.reused)
    assert.equal("no freed block is large enough: the largest is 4.00 MiB", b.why_fresh)
    local c = p:alloc("1 MiB", s)               -- reuses: no why
    assert.is_nil(c.why_fresh)
    b:free(); c:free(); keep:free(); keep2:free(); s:sync(); p:destroy()
  end)

  it("opportunistic: the free had completed on the GPU, with no sync", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = pool()
    local a = p:alloc("16 MiB", s1)
    a:free()
    poolsh.sleep("100 ms")            -- the host waits; nothing synchronises
    local b = p:alloc("16 MiB", s2)
    assert.equal(a.addr, b.addr)
    assert.equal("opportunistic", b.reuse_rule)
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("internal dependency: at max_size the pool makes the stream wait for the free", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = pool { max_size = "32 MiB" }
    local a = p:alloc("32 MiB", s1)
    poolsh.spin(s1, "200 ms")
    a:free()
    local b = p:alloc("32 MiB", s2)
    assert.equal(a.addr, b.addr)
    assert.equal("internal dependency", b.reuse_rule)
    assert.is_false(s2:query())       -- s2 now waits for s1's spin
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("opportunistic when the free was known complete, even if its stream is busy again", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = pool()
    local a = p:alloc("16 MiB", s1)
    a:free()
    poolsh.sleep("50 ms")
    assert.is_true(s1:query())        -- the free completed, and poolsh saw it
    poolsh.spin(s1, "100 ms")         -- s1 is busy with later work
    local b = p:alloc("16 MiB", s2)
    assert.equal(a.addr, b.addr)
    assert.equal("opportunistic", b.reuse_rule)
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("fresh memory after a trim gave it back is not a reuse", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = pool()
    p:alloc("16 MiB", s1):free()
    s1:sync()
    p:trim(0)
    assert.equal(0, p:stats().reserved)
    local b = p:alloc("16 MiB", s2)
    assert.is_false(b.reused)
    b:free(); s2:sync(); p:destroy()
  end)

  it("fresh memory after the pool gave it back is not a reuse", function()
    local s = poolsh.stream()
    local p = pool { release_threshold = 0 }
    local a = p:alloc("16 MiB", s)
    a:free()
    s:sync()                          -- threshold 0: the memory goes back
    assert.equal(0, p:stats().reserved)
    local b = p:alloc("16 MiB", s)
    assert.is_false(b.reused)
    b:free(); s:sync(); p:destroy()
  end)
end)
end

describe("pending frees and free space", function()
  it("a queued free is pending until the host learns it completed", function()
    local s, p = poolsh.stream(), pool()
    local a = p:alloc("4 MiB", s)
    local keep = p:alloc("1 MiB", s)
    poolsh.spin(s, "50 ms")
    a:free()
    local st = p:stats()
    assert.equal(4 * MiB, st.pending)
    assert.equal(1, st.pending_count)
    assert.equal(1 * MiB, st.live)
    poolsh.trace.clear(); poolsh.trace.start()
    s:sync()
    poolsh.trace.stop()
    st = p:stats()
    assert.equal(0, st.pending)
    assert.equal(0, st.pending_count)
    local completed
    for _, e in ipairs(poolsh.trace.events()) do
      if e.op == "free_completed" then completed = e end
    end
    assert.is_table(completed)
    assert.equal(a.id, completed.buffer)
    assert.equal(4 * MiB, completed.size)
    poolsh.trace.clear()
    keep:free(); s:sync(); p:destroy()
  end)

  it("an idle query teaches completion too", function()
    local s, p = poolsh.stream(), pool()
    p:alloc("2 MiB", s):free()
    poolsh.sleep("10 ms")
    assert.is_true(s:query())
    assert.equal(0, p:stats().pending)
    p:destroy()
  end)

  it("free space and the largest free extent inside reserved memory", function()
    local s, p = poolsh.stream(), pool()
    local a, b, c = p:alloc("1 MiB", s), p:alloc("2 MiB", s), p:alloc("1 MiB", s)
    local st = p:stats()
    assert.is_true(st.free_estimated)
    assert.equal(st.reserved - 4 * MiB, st.free)
    b:free(); s:sync()
    st = p:stats()
    assert.equal(st.reserved - 2 * MiB, st.free)
    assert.equal(st.reserved - 4 * MiB, st.largest_free)   -- the 2 MiB hole is smaller
    a:free(); c:free(); s:sync(); p:destroy()
  end)
end)

-- The estimate as docs/explain.md defines it, from poolsh.core.blocks: the
-- arena from the lowest address seen, `reserved` bytes long, less what
-- live and pending blocks cover (they may overlap).
local function reference_free(p)
  local blocks, lo = poolsh.core.blocks(p)
  local reserved = p:stats().reserved
  if lo == 0 then return reserved, reserved end
  local at, top, free, largest = lo, lo + reserved, 0, 0
  for i = 1, #blocks + 1 do
    local b = blocks[i]
    local next = b and math.min(b.addr, top) or top
    if next > at then
      free = free + (next - at)
      largest = math.max(largest, next - at)
    end
    if b and b.addr + b.size > at then at = b.addr + b.size end
  end
  return free, largest
end

describe("the free-space estimate", function()
  local function check(p)
    local st = p:stats()
    local free, largest = reference_free(p)
    assert.equal(free, st.free)
    assert.equal(largest, st.largest_free)
  end

  -- Pools 1 and 2 are asked from the start; pool 3 first at step 400, after
  -- many allocations and frees (its estimate is built late); pools 4 and 5
  -- are destroyed at step 300 with blocks live and pending, 4 asked before,
  -- 5 never, and pool 6 takes over their share from then on.
  it("matches the blocks after each of many random steps, several pools and streams", function()
    local rng = 12345
    local function rand(n)
      rng = (rng * 1103515245 + 12345) % 2147483648
      return rng % n + 1
    end
    local streams = { poolsh.stream(), poolsh.stream() }
    local pools = { pool(), pool { release_threshold = 0 }, pool(), pool(), pool() }
    local asked_from = { 1, 1, 400, 1, math.huge }
    local live = {}
    for step = 1, 600 do
      if step == 300 then
        pools[4]:destroy(); pools[5]:destroy()
        pools[4], pools[5] = pool(), pool()
        asked_from[4] = 300
      end
      local r = rand(10)
      if r <= 5 or #live == 0 then
        local p = pools[rand(#pools)]
        live[#live + 1] = p:alloc(rand(64) * 4096 + rand(3) * 256, streams[rand(2)])
      elseif r <= 9 then
        table.remove(live, rand(#live)):free()
      else
        streams[rand(2)]:sync()
      end
      if step % 7 == 0 or r == 10 then
        for i, p in ipairs(pools) do
          if step >= asked_from[i] then check(p) end
        end
      end
    end
    for _, b in ipairs(live) do b:free() end
    poolsh.sync()
    for _, p in ipairs(pools) do
      local st = p:stats()
      assert.equal(0, st.live)
      assert.equal(0, st.pending)
      assert.equal(st.reserved, st.free)
      p:destroy()
    end
  end)

  it("asked first late, after many allocations and frees, matches the blocks", function()
    local s1, s2, p = poolsh.stream(), poolsh.stream(), pool()
    local kept = {}
    for i = 1, 300 do
      local b = p:alloc((i % 17 + 1) * 4096, i % 2 == 0 and s1 or s2)
      if i % 3 == 0 then kept[#kept + 1] = b else b:free() end
      if i % 50 == 0 then s1:sync() end
    end
    check(p)                          -- built here from live and pending blocks
    for i = 1, #kept, 2 do kept[i]:free() end
    check(p)                          -- and kept from then on
    s1:sync(); s2:sync()
    check(p)
    local st = p:stats { estimates = false }
    assert.is_nil(st.free)
    assert.equal(p:stats().live, st.live)
    for i = 2, #kept, 2 do kept[i]:free() end
    poolsh.sync()
    assert.equal(p:stats().reserved, p:stats().free)
    p:destroy()
  end)
end)

-- Observers (the REPL's live lines, show, map, p:stats, leaks, the
-- recorder) never change what they observe: the same script gives the same
-- clock, rules, addresses and counters whether it is watched or not.
local function scenario(observe)
  collectgarbage()
  collectgarbage("stop")      -- no finalizer of an earlier test's garbage runs in between
  poolsh.sync()
  local out, bufs, index, base = {}, {}, {}, {}
  local s1, s2, s3 = poolsh.stream(), poolsh.stream(), poolsh.stream()
  local p, q = pool(), pool { max_size = "32 MiB" }
  local t0 = poolsh.now()
  local function look()
    if not observe then return end
    poolsh.live.lines()
    poolsh.live.show_lines()
    poolsh.live.map_lines(p)
    poolsh.live.map_lines(q)
    poolsh.leaks()
    p:stats(); q:stats()
  end
  local function note(what)
    look()
    out[#out + 1] = ("%s at %.6f"):format(what, poolsh.now() - t0)
  end
  local function alloc(pl, size, s)
    local b = pl:alloc(size, s)
    bufs[#bufs + 1], index[b.id] = b, #bufs + 1
    base[pl] = base[pl] or b.addr
    note(("b%d +%d %s %s %s"):format(#bufs, b.addr - base[pl], b.reused,
                                     b.reused_from and index[b.reused_from], b.reuse_rule))
    return b
  end
  if observe then poolsh.live.watch(true); poolsh.trace.start() end
  local a = alloc(p, "16 MiB", s1); a:free(); note("free a")
  local b = alloc(p, "16 MiB", s1); poolsh.spin(s1, "20 ms"); b:free(); note("free b")
  local c = alloc(p, "16 MiB", s2); note("c")                -- s1 busy: fresh or internal
  poolsh.sleep("30 ms"); note("sleep")
  local d = alloc(p, "16 MiB", s2); note("d")                -- s1 idle now: opportunistic
  poolsh.spin(s2, "10 ms"); c:free(); d:free()
  s3:wait(s2:record()); note("wait")
  local e = alloc(p, "16 MiB", s3); note("e")                -- event dependency
  local f = alloc(q, "32 MiB", s1); poolsh.spin(s1, "50 ms"); f:free(); note("free f")
  local g = alloc(q, "32 MiB", s2); note("g")                -- internal dependency
  out[#out + 1] = ("queries %s %s %s"):format(s1:query(), s2:query(), s3:query())
  e:free(); s3:sync(); note("sync s3")
  local st = p:stats()
  out[#out + 1] = ("p live %d pending %d/%d used %d reserved %d free %d/%d"):format(
    st.live, st.pending, st.pending_count, st.used, st.reserved, st.free, st.largest_free)
  g:free(); poolsh.sync(); note("sync")
  if observe then poolsh.trace.stop(); poolsh.trace.clear(); poolsh.live.watch(false) end
  p:destroy(); q:destroy()
  collectgarbage("restart")
  return out
end

describe("observing changes nothing", function()
  local rules = H.is_sim() and { 0, 1 } or { 1 }
  for _, r in ipairs(rules) do
    it("the clock, rules and counters are the same watched or not" ..
       (r == 0 and " (inferred, as on cuda)" or ""), function()
      if not H.is_sim() then return pending("sim only: on cuda the clock is the host's") end
      poolsh.sim.set("report_rules", r)
      local plain = scenario(false)
      local watched = scenario(true)
      poolsh.sim.set("report_rules", 1)
      assert.same(plain, watched)
    end)
  end

  if H.is_sim() then
    it("inferring rules (report_rules = 0) costs no simulated time", function()
      poolsh.sim.set("report_rules", 0)
      local inferred = scenario(true)
      poolsh.sim.set("report_rules", 1)
      assert.same(scenario(false), inferred)
    end)
  end

  it("show() tells a stream's state without querying it", function()
    local s, p = poolsh.stream(), pool()
    poolsh.spin(s, "10 ms")
    p:alloc("1 MiB", s):free()
    poolsh.sleep("20 ms")
    local t = poolsh.now()
    local out = table.concat(poolsh.live.show_lines(), "\n")
    assert.matches(s.name .. "%s+idle", out)
    if H.is_sim() then assert.equal(t, poolsh.now()) end   -- cuda: the host's clock runs
    assert.equal(1, p:stats().pending_count)     -- only s:query() or a sync teaches completion
    assert.is_true(s:query())
    assert.equal(0, p:stats().pending_count)
    p:destroy()
  end)
end)
