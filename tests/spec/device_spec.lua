-- The device: device_count, device(), sync, sleep, now, backend, version.
local poolsh = require "poolsh"
local H = require "helpers"

describe("the device", function()
  it("backend() is cuda or sim, version a string", function()
    assert.is_truthy(({ cuda = true, sim = true })[poolsh.backend()])
    assert.matches("^poolsh %d+%.%d+%.%d+$", poolsh.version)
  end)

  it("device_count() is a positive integer", function()
    local n = poolsh.device_count()
    assert.equal("integer", math.type(n))
    assert.is_true(n >= 1)
  end)

  it("device() describes the current device", function()
    local d = poolsh.device()
    assert.equal(0, d.index)
    assert.equal("string", type(d.name))
    assert.is_true(#d.name > 0)
    assert.equal("integer", math.type(d.total))
    assert.equal("integer", math.type(d.free))
    assert.is_true(d.total > 0)
    assert.is_true(d.free > 0 and d.free <= d.total)
    assert.matches("^%d+%.%d+$", d.cc)
    assert.is_true(d.pools_supported)
    assert.same(d.name, poolsh.device(0).name)
  end)

  it("device(i) refuses bad indices", function()
    assert.matches("bad argument #1 to 'poolsh.device' (device index out of range)",
                   H.err(poolsh.device, -1), 1, true)
    assert.matches("^cudaErrorInvalidDevice", H.err(poolsh.device, poolsh.device_count()))
    assert.matches("bad argument #1 to 'poolsh.device' (number expected, got string)",
                   H.err(poolsh.device, "zero"), 1, true)
  end)

  it("device free memory drops with allocations", function()
    poolsh.sync()
    local before = poolsh.device().free
    local b = poolsh.malloc("64 MiB")
    assert.is_true(poolsh.device().free <= before - 64 * H.MiB)
    b:free()
  end)

  it("sync waits for every stream", function()
    local a, b = poolsh.stream(), poolsh.stream { blocking = false }
    poolsh.spin(a, "20 ms")
    poolsh.spin(b, "30 ms")
    assert.is_nil(poolsh.sync())
    assert.is_true(a:query())
    assert.is_true(b:query())
  end)

  it("now() is a number that never goes back", function()
    local t0 = poolsh.now()
    assert.equal("number", type(t0))
    local s = poolsh.stream()
    poolsh.spin(s, "5 ms")
    local t1 = poolsh.now()
    s:sync()
    local t2 = poolsh.now()
    poolsh.sleep(1)
    local t3 = poolsh.now()
    assert.is_true(t0 <= t1 and t1 <= t2 and t2 <= t3)
    assert.is_true(t3 - t0 >= 1)
  end)

  it("sleep takes durations and refuses bad ones", function()
    local t0 = poolsh.now()
    poolsh.sleep("2 ms")
    poolsh.sleep(0)
    assert.is_true(poolsh.now() - t0 >= 2)
    assert.matches("duration", H.err(poolsh.sleep, -1))
    assert.matches("duration", H.err(poolsh.sleep, "later"))
    assert.matches("duration", H.err(poolsh.sleep))
  end)
end)

describe("spin and sleep limits", function()
  local function run(code) return H.poolsh_cmd("--backend=sim -e " .. H.quote(code)) end

  it("name the per-call limit of 1e12 ms", function()
    local s = poolsh.stream()
    assert.matches("duration above the limit of 1e12 ms per call",
                   H.err(poolsh.spin, s, 2e12), 1, true)
    assert.matches("duration above the limit of 1e12 ms per call",
                   H.err(poolsh.sleep, 1e13), 1, true)
    s:destroy()
  end)

  it("refuse spins that would run the sim's clock past its end", function()
    local out = run("local s = poolsh.stream() local n = 0 "
                    .. "local ok, e = pcall(function() for i = 1, 10 do poolsh.spin(s, 1e12) n = i end end) "
                    .. "s:sync() print(n, e) print(poolsh.now() >= 4e12)")
    assert.equal("4\tcudaErrorInvalidValue: invalid argument (spinning stream s1; the virtual "
                 .. "clock ends at 2^62 ns, about 146 years)\ntrue\n", out)
  end)

  it("refuse sleeps that would run the sim's clock past its end", function()
    local out = run("local n = 0 local ok, e = pcall(function() for i = 1, 10 do "
                    .. "poolsh.sleep(1e12) n = i end end) print(n, e) print(poolsh.now())")
    assert.equal("4\tcudaErrorInvalidValue: invalid argument (sleeping 1000000000000 ms; "
                 .. "the virtual clock ends at 2^62 ns, about 146 years)\n4000000000000.0\n", out)
  end)
end)

describe("spin and a duration parser written in Lua", function()
  local units = require "poolsh.units"
  after_each(function() poolsh.set_parsers { size = units.size, duration = units.duration } end)

  it("raises when the parser destroys the stream", function()
    local s = poolsh.stream()
    poolsh.set_parsers { size = units.size,
                         duration = function(v) s:destroy(); return units.duration(v) end }
    assert.equal("attempt to use a destroyed poolsh.Stream (s" .. s.id .. ")",
                 H.err(poolsh.spin, s, "1"))
  end)
end)

describe("backend option names in messages", function()
  it("are cut to 64 bytes with an ellipsis", function()
    local e = H.err(poolsh.sim.set, ("k"):rep(1000), 1)
    assert.matches("option '" .. ("k"):rep(64) .. "...')", e, 1, true)
  end)
end)
