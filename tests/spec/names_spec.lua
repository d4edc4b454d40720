--- Names given to objects (docs/api.md, "Names").
local H = require "helpers"
local poolsh = H.poolsh
local naming = require "poolsh.naming"

describe("object names", function()
  it("are given at creation or by assignment, and shown by tostring", function()
    local s = poolsh.stream{name = "copies"}
    local p = poolsh.pool{name = "weights", release_threshold = 0}
    local e = poolsh.event{name = "done"}
    local b <close> = p:alloc(64, s)
    assert.equal("copies", s.name)
    assert.equal("weights", p.name)
    assert.equal("done", e.name)
    assert.equal(("b%d"):format(b.id), b.name)
    b.name = "activations"
    assert.equal("activations", b.name)
    p.name = "w2"
    assert.equal("w2", p.name)
    assert.equal(0, p.release_threshold)          -- settings still settable beside it
    assert.equal(("poolsh.Stream copies (s%d)"):format(s.id), tostring(s))
    assert.equal(("poolsh.Event done (e%d)"):format(e.id), tostring(e))
    assert.equal(("poolsh.Pool w2 (p%d) (device 0)"):format(p.id), tostring(p))
    assert.equal(("poolsh.Buffer activations (b%d) (64 B pool)"):format(b.id), tostring(b))
    local plain = poolsh.stream()
    assert.equal(("s%d"):format(plain.id), plain.name)
    assert.equal(("poolsh.Stream s%d"):format(plain.id), tostring(plain))
    assert.equal("default", poolsh.default_stream().name)
    plain:destroy(); e:destroy(); s:destroy()
  end)

  it("outlive their objects, for traces and exports", function()
    local s = poolsh.stream{name = "gone"}
    local id = s.id
    s:destroy()
    assert.equal("gone", s.name)
    assert.equal("gone", naming.of("stream", id))
    assert.equal("gone", naming.all().stream[id])
    assert.equal("p99999", naming.of("pool", 99999))
    assert.equal("default", naming.of("stream", 0))
    assert.is_nil(naming.all().buffer[99999])
  end)

  it("refuse what cannot name, before the object is made", function()
    local before = #select(2, poolsh.core.objects())
    assert.equal("poolsh: a name must be a string, got number", H.err(poolsh.stream, {name = 5}))
    assert.equal("poolsh: a name must have 1 to 64 bytes, got 0 ('')", H.err(poolsh.pool, {name = ""}))
    assert.equal("poolsh: a name must not hold control characters ('a\nb')",
                 H.err(poolsh.event, {name = "a\nb"}))
    assert.equal(before, #select(2, poolsh.core.objects()))
    local s = poolsh.stream()
    local long = ("n"):rep(65)
    assert.matches("a name must have 1 to 64 bytes, got 65", H.err(function() s.name = long end))
    assert.equal(("s%d"):format(s.id), s.name)     -- unchanged
    assert.equal("poolsh.Stream has no settable field 'priority'", H.err(function() s.priority = 1 end):gsub("^[^:]+:%d+: ", ""))
    assert.matches("bad argument #1 to 'object_name' (invalid option 'queue')",
                   H.err(function() local _ = poolsh.core.object_name("queue", 1) end), 1, true)
    s:destroy()
  end)
end)
