-- poolsh.core.counts(), releases() and the peak scopes: what the
-- observation layer counts for poolsh.summary().
local poolsh = require "poolsh"
local H = require "helpers"
local MiB = H.MiB
local core = poolsh.core

-- The counts of pool p now.
local function counts(p) return core.counts().pools[p.id] end

describe("poolsh.core.counts", function()
  it("counts allocations, reuses by rule, fresh ones and growths", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local a = p:alloc("4 MiB", s)              -- fresh, grows the pool
    a:free()
    local b = p:alloc("4 MiB", s)              -- stream order
    local c = p:alloc("40 MiB", s)             -- fresh, grows again
    local n = counts(p)
    assert.equal(3, n.allocs)
    assert.equal(2, n.fresh)
    assert.equal(1, n.reuses["stream order"])
    assert.equal(0, n.reuses["host synchronisation"])
    assert.equal(2, n.growths)
    assert.equal(44 * MiB, n.peak_live)
    assert.equal(0, n.ooms)
    assert.equal(0, n.retries)
    b:free(); c:free(); s:sync(); p:destroy()
  end)

  it("counts releases by the op that caused them, with their threshold", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = 0 }
    local _, before = core.releases(math.maxinteger)
    p:alloc("4 MiB", s):free()
    s:sync()                                   -- threshold 0: all of it goes back
    assert.equal(1, counts(p).releases.stream_sync)
    local list, latest = core.releases(before)
    assert.equal(before + 1, latest)
    assert.equal(1, #list)
    local r = list[1]
    assert.equal(p.id, r.pool)
    assert.equal(32 * MiB, r.size)
    assert.equal(0, r.reserved)
    assert.equal("stream_sync", r.cause_op)
    assert.equal(s.id, r.cause_id)
    assert.equal(0, r.threshold)
    assert.same({}, (core.releases(latest)))
    p:destroy()
  end)

  it("a stream destroyed with work queued: its pool's release comes when the work ends, no sync", function()
    -- an H100 gave the memory back 26-31 ms after a 30 ms spin's stream
    -- was destroyed (docs/calibration.md, Host costs)
    local p = poolsh.pool { release_threshold = 0 }
    local s = poolsh.stream()
    local _, before = core.releases(math.maxinteger)
    local b = p:alloc("64 MiB", s)
    poolsh.spin(s, "30 ms")
    b:free()
    s:destroy()
    local st = p:stats()
    assert.equal(64 * MiB, st.reserved)
    assert.equal(64 * MiB, st.pending)
    assert.same({}, (core.releases(before)))
    local waited = 0
    while p:stats().reserved ~= 0 and waited < 1000 do poolsh.sleep(5); waited = waited + 5 end
    assert.equal(0, p:stats().reserved)
    assert.is_true(waited >= 20)
    st = p:stats()
    assert.equal(0, st.pending)                  -- its frees completed
    local list = core.releases(before)
    assert.equal(1, #list)
    assert.equal("stream_destroy", list[1].cause_op)
    assert.equal(s.id, list[1].cause_id)
    assert.equal(64 * MiB, list[1].size)
    assert.equal(1, counts(p).releases.stream_destroy)
    p:destroy()
  end)

  it("two destroyed busy streams: each pool's release names the stream whose frees it held", function()
    local p1, p2 = poolsh.pool { release_threshold = 0 }, poolsh.pool { release_threshold = 0 }
    local a, b = poolsh.stream(), poolsh.stream()
    local _, before = core.releases(math.maxinteger)
    local x = p1:alloc("64 MiB", a); poolsh.spin(a, "30 ms"); x:free(); a:destroy()
    local y = p2:alloc("32 MiB", b); poolsh.spin(b, "60 ms"); y:free(); b:destroy()
    poolsh.sleep(100)
    p1:stats(); p2:stats()
    local by_pool = {}
    for _, r in ipairs((core.releases(before))) do by_pool[r.pool] = r end
    assert.equal(a.id, by_pool[p1.id].cause_id)
    assert.equal(b.id, by_pool[p2.id].cause_id)
    p1:destroy(); p2:destroy()
  end)

  it("a destroyed busy stream's end releases the pools it freed into, no other", function()
    -- an H100: a pool whose threshold was lowered after its last sync kept
    -- its memory until the next sync (docs/calibration.md, Host costs)
    local pm = poolsh.pool { release_threshold = "max" }
    local s = poolsh.stream()
    pm:alloc("64 MiB", s):free(); s:sync()
    pm.release_threshold = 0
    local p2, s2 = poolsh.pool { release_threshold = 0 }, poolsh.stream()
    local c = p2:alloc("32 MiB", s2); poolsh.spin(s2, "30 ms"); c:free(); s2:destroy()
    poolsh.sleep(80)
    assert.equal(0, p2:stats().reserved)
    assert.equal(64 * MiB, pm:stats().reserved)
    poolsh.sync()
    assert.equal(0, pm:stats().reserved)
    pm:destroy(); p2:destroy()
  end)

  it("total adds every pool's counts, destroyed ones too; its peak is the sum's", function()
    local s = poolsh.stream()
    local before = core.counts().total
    local p, q = poolsh.pool {}, poolsh.pool {}
    local a, b = p:alloc("2 MiB", s), q:alloc("3 MiB", s)
    a:free(); b:free(); s:sync()
    p:destroy(); q:destroy()
    local total = core.counts().total
    assert.equal(before.allocs + 2, total.allocs)
    assert.equal(before.fresh + 2, total.fresh)
    assert.equal(before.releases.stream_sync + 2, total.releases.stream_sync)
    assert.is_true(total.peak_live >= 5 * MiB)
  end)

  it("counts an out-of-memory error and its retry", function()
    local s, p = poolsh.stream(), poolsh.pool { max_size = "32 MiB" }
    assert.matches("^cudaErrorMemoryAllocation", H.err(p.alloc, p, "64 MiB", s))
    local n = counts(p)
    assert.equal(1, n.ooms)
    assert.equal(1, n.retries)
    assert.equal(0, n.allocs)
    p:destroy()
  end)
end)

describe("peak scopes", function()
  it("peak_pop gives the peak live bytes inside the scope, per pool and in total", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local big = p:alloc("8 MiB", s)
    big:free()
    core.peak_push()
    local a = p:alloc("1 MiB", s)
    local b = p:alloc("2 MiB", s)
    a:free(); b:free()
    core.peak_push()                           -- nested: its own peak
    local c = p:alloc("1 MiB", s); c:free()
    local inner = core.peak_pop()
    assert.equal(1 * MiB, inner.pools[p.id])
    local outer = core.peak_pop()
    assert.equal(3 * MiB, outer.pools[p.id])
    assert.equal(3 * MiB, outer.total)
    assert.is_true(counts(p).peak_live >= 8 * MiB)   -- the session's peak is kept
    s:sync(); p:destroy()
  end)

  it("pop without push raises", function()
    assert.matches("no peak scope", H.err(core.peak_pop))
  end)
end)
