-- poolsh.Pool: creation options, settings as fields, stats, trim, alloc.
local poolsh = require "poolsh"
local H = require "helpers"
local MiB = H.MiB

describe("poolsh.pool", function()
  it("creates device pools with the CUDA default settings", function()
    local p = poolsh.pool {}
    assert.is_true(p.live)
    assert.is_false(p.default)
    assert.equal("device", p.location)
    assert.equal(0, p.device)
    assert.equal("p" .. p.id, p.name)
    assert.equal(0, p.release_threshold)
    assert.is_true(p.follow_event_dependencies)
    assert.is_true(p.opportunistic)
    assert.is_true(p.internal_dependencies)
    assert.same({ reserved = 0, used = 0, reserved_high = 0, used_high = 0 }, H.counters(p))
    assert.same({ 0, 0, 0 }, { p:stats().live, p:stats().pending, p:stats().pending_count })
    assert.matches("^poolsh.Pool p%d+ %(device 0%)$", tostring(p))
    p:destroy()
  end)

  it("takes every setting as a creation option", function()
    local p = poolsh.pool { location = "device", device = 0, max_size = "64 MiB",
      release_threshold = "32 MiB", follow_event_dependencies = false,
      opportunistic = false, internal_dependencies = false }
    assert.equal(64 * MiB, p.max_size)
    assert.equal(32 * MiB, p.release_threshold)
    assert.is_false(p.follow_event_dependencies)
    assert.is_false(p.opportunistic)
    assert.is_false(p.internal_dependencies)
    p:destroy()
  end)

  it("creates host pools", function()
    local p = poolsh.pool { location = "host" }
    assert.equal("host", p.location)
    local s = poolsh.stream()
    local b = p:alloc("1 MiB", s)
    assert.equal(MiB, p:stats().used)
    b:write(0, "host pool")
    assert.equal("host pool", b:read(0, 9))
    b:free(); s:sync()
    p:destroy()
  end)

  it("refuses bad options", function()
    assert.matches("unknown option 'size'", H.err(poolsh.pool, { size = 1 }))
    assert.matches("location must be \"device\" or \"host\", got 'gpu'",
                   H.err(poolsh.pool, { location = "gpu" }))
    assert.matches("device", H.err(poolsh.pool, { device = -1 }))
    assert.matches("device", H.err(poolsh.pool, { device = "0" }))
    assert.matches("max_size", H.err(poolsh.pool, { max_size = "lots" }))
    assert.matches("boolean", H.err(poolsh.pool, { opportunistic = 1 }))
  end)

  it("the four settings are writable fields", function()
    local p = poolsh.pool {}
    p.release_threshold = "64 MiB"
    assert.equal(64 * MiB, p.release_threshold)
    p.release_threshold = 1024
    assert.equal(1024, p.release_threshold)
    p.release_threshold = "max"
    assert.equal(math.huge, p.release_threshold)
    p.release_threshold = 0
    p.release_threshold = math.huge
    assert.equal(math.huge, p.release_threshold)
    for _, k in ipairs { "follow_event_dependencies", "opportunistic", "internal_dependencies" } do
      p[k] = false
      assert.is_false(p[k])
      p[k] = true
      assert.is_true(p[k])
    end
    p:destroy()
  end)

  it("refuses bad setting values and unknown fields", function()
    local p = poolsh.pool {}
    assert.matches("release_threshold", H.err(function() p.release_threshold = -1 end))
    assert.matches("release_threshold", H.err(function() p.release_threshold = "lots" end))
    assert.matches("boolean", H.err(function() p.opportunistic = "yes" end))
    assert.matches("no settable field 'max_size'", H.err(function() p.max_size = 1 end))
    assert.matches("no settable field 'bogus'", H.err(function() p.bogus = 1 end))
    assert.is_nil(p.bogus)
    assert.equal(0, p.release_threshold)
    p:destroy()
  end)

  it("stats count used bytes and high-water marks; reset_high resets them", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local a = p:alloc("4 MiB", s)
    local b = p:alloc("8 MiB", s)
    local st = p:stats()
    assert.equal(12 * MiB, st.used)
    assert.is_true(st.reserved >= st.used)
    a:free(); b:free(); s:sync()
    st = p:stats()
    assert.equal(0, st.used)
    assert.equal(12 * MiB, st.used_high)
    assert.is_true(st.reserved_high >= 12 * MiB)
    assert.equal(p, p:reset_high())
    st = p:stats()
    assert.equal(0, st.used_high)
    assert.equal(st.reserved, st.reserved_high)
    p:destroy()
  end)

  it("trim(0) gives back all free memory; trim returns the pool", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    p:alloc("64 MiB", s):free()
    s:sync()
    assert.is_true(p:stats().reserved >= 64 * MiB)
    assert.equal(p, p:trim(0))
    assert.equal(0, p:stats().reserved)
    p:alloc("64 MiB", s):free()
    s:sync()
    p:trim()
    assert.equal(0, p:stats().reserved)
    p:destroy()
  end)

  it("alloc returns a pool buffer tied to its pool and stream", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local b = p:alloc("4 MiB", s)
    assert.equal("pool", b.kind)
    assert.equal(4 * MiB, b.size)
    assert.equal(p, b.pool)
    assert.equal(s, b.stream)
    assert.is_true(b.live)
    b:free(); s:sync()
    p:destroy()
  end)

  it("alloc without a stream uses the default stream", function()
    local p = poolsh.pool {}
    local b = p:alloc("1 MiB")
    assert.equal(poolsh.default_stream(), b.stream)
    b:free()
    poolsh.sync()
    assert.equal(0, p:stats().used)
    p:destroy()
  end)

  it("alloc refuses size 0", function()
    local p = poolsh.pool {}
    assert.matches("at least 1 byte", H.err(p.alloc, p, 0, poolsh.stream()))
    p:destroy()
  end)

  it("destroy makes the pool dead; its uses raise", function()
    local p = poolsh.pool {}
    p:destroy()
    assert.is_false(p.live)
    assert.matches("destroyed", tostring(p))
    for _, f in ipairs { "stats", "trim", "reset_high", "destroy" } do
      assert.matches("destroyed poolsh.Pool", H.err(p[f], p))
    end
    assert.matches("destroyed poolsh.Pool", H.err(p.alloc, p, 1))
    assert.matches("destroyed poolsh.Pool", H.err(function() return p.release_threshold end))
    assert.matches("destroyed poolsh.Pool", H.err(function() p.opportunistic = false end))
  end)
end)

describe("poolsh.default_pool", function()
  it("is one Pool per device with the default settings", function()
    local d = poolsh.default_pool()
    assert.equal(d, poolsh.default_pool(0))
    assert.is_true(d.default)
    assert.equal(0, d.device)
    assert.matches("default", tostring(d))
    assert.is_true(d.follow_event_dependencies)
    assert.is_true(d.opportunistic)
    assert.is_true(d.internal_dependencies)
  end)

  it("allocates and frees", function()
    local d, s = poolsh.default_pool(), poolsh.stream()
    local before = d:stats().used
    local b = d:alloc("1 MiB", s)
    assert.equal(before + MiB, d:stats().used)
    b:free(); s:sync()
    assert.equal(before, d:stats().used)
  end)

  it("cannot be destroyed", function()
    local d = poolsh.default_pool()
    assert.matches("cannot be destroyed", H.err(d.destroy, d))
    assert.is_true(d.live)
  end)

  it("refuses a bad device index", function()
    assert.matches("poolsh.default_pool: device must be a device index (an integer from 0), got -1",
                   H.err(poolsh.default_pool, -1), 1, true)
    local n = poolsh.device_count() + 7
    assert.matches(("^cudaErrorInvalidDevice: .* %%(getting the default pool of device %d%%)$"):format(n),
                   H.err(poolsh.default_pool, n))
  end)
end)

describe("pool fields, messages and a size parser written in Lua", function()
  local units = require "poolsh.units"
  after_each(function() poolsh.set_parsers { size = units.size, duration = units.duration } end)

  it("read nil for keys that are not strings", function()
    local p = poolsh.pool {}
    assert.is_nil(p[{}])
    assert.is_nil(p[true])
    p:destroy()
  end)

  it("cut a long option key in the message", function()
    local e = H.err(poolsh.pool, { [("k"):rep(1e6)] = 1 })
    assert.equal("poolsh.pool: unknown option '" .. ("k"):rep(64) .. "...'", e)
  end)

  local function destroying(p)
    poolsh.set_parsers { size = function(v) p:destroy(); return units.size(v) end,
                         duration = units.duration }
    return "attempt to use a destroyed poolsh.Pool (p" .. p.id .. ")"
  end

  it("alloc raises when the parser destroys the pool", function()
    local p = poolsh.pool {}
    assert.equal(destroying(p), H.err(p.alloc, p, "10"))
  end)

  it("trim raises when the parser destroys the pool", function()
    local p = poolsh.pool {}
    assert.equal(destroying(p), H.err(p.trim, p, "10"))
  end)

  it("setting release_threshold raises when the parser destroys the pool", function()
    local p = poolsh.pool {}
    local want = destroying(p)
    assert.matches(want, H.err(function() p.release_threshold = "10" end), 1, true)
  end)
end)
