-- poolsh.core.reset(): everything poolsh made ends, the backend opens
-- again, ids start at 1, and the default stream and pools still work.
local poolsh = require "poolsh"
local H = require "helpers"
local core = poolsh.core

describe("poolsh.core.reset", function()
  it("ends every object, empties the views and starts ids at 1", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local e = s:record()
    local b = p:alloc("4 MiB", s)
    local m = poolsh.pinned(4096)
    local d = poolsh.default_pool():alloc(1024)
    local freed = p:alloc(100, s); freed:free()
    assert.is_true(#core.live() >= 3)
    core.reset()
    for _, o in ipairs { s, p, e, b, m, d, freed } do assert.is_false(o.live) end
    assert.matches("freed poolsh.Buffer", H.err(b.free, b))
    assert.matches("destroyed poolsh.Pool", H.err(p.alloc, p, 16, poolsh.default_stream()))
    assert.matches("destroyed poolsh.Stream", H.err(s.sync, s))
    assert.matches("destroyed poolsh.Event", H.err(e.sync, e))
    local _, nlive = core.live()
    local _, npending = core.pending()
    assert.equal(0, nlive)
    assert.equal(0, npending)
    assert.same({}, (core.recent(0)))
    assert.equal(0, core.counts().total.allocs)
    assert.same({}, core.sites())
    assert.equal(0, poolsh.trace.count())
    local s2, p2 = poolsh.stream(), poolsh.pool {}
    assert.equal(1, s2.id)
    assert.equal(1, p2.id)
    local b2 = p2:alloc(64, s2)
    assert.equal(1, b2.id)
    b2:free(); s2:sync(); p2:destroy(); s2:destroy()
  end)

  it("the default stream and pools work afterwards; finalizers of old objects do nothing", function()
    local old = poolsh.pool {}
    local keep = old:alloc("1 MiB")
    core.reset()
    keep, old = nil, nil
    collectgarbage("collect")                  -- their finalizers run: nothing happens
    assert.is_true(poolsh.default_stream().live)
    local b = poolsh.default_pool():alloc("1 MiB")
    assert.is_true(b.live)
    b:free(); poolsh.sync()
    assert.equal(0, poolsh.default_pool():stats().used)
  end)

  it("keeps whether sources are remembered and the sim's options", function()
    local on, depth = core.sources()
    if H.is_sim() then poolsh.sim.set("report_rules", 0) end
    core.reset()
    assert.same({ on, depth }, { core.sources() })
    if H.is_sim() then
      assert.equal(0, poolsh.sim.profile().report_rules)
      poolsh.sim.set("report_rules", 1)
    end
  end)
end)
