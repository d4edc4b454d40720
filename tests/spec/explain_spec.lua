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
