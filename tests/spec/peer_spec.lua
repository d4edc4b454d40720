-- Several devices, streams on a device, pool access and peer access
-- (docs/multi-gpu.md). Tests that need two devices run on the sim always
-- (it is given two: poolsh.sim.set("devices", 2) after a reset) and on
-- cuda only where two GPUs answer; elsewhere they read pending with the
-- reason.
local H = require "helpers"
local poolsh = H.poolsh
local q = H.quote

local MiB = H.MiB

-- Makes two devices available, or says why not (pending). Returns true
-- when the test may go on.
local function two_devices()
  if H.is_sim() then
    poolsh.reset()
    poolsh.sim.set("devices", 2)
    return true
  end
  if poolsh.device_count() >= 2 then return true end
  pending("needs 2 devices: this machine has " .. poolsh.device_count())
  return false
end

-- The error f(...) raises, which must start with the CUDA error `name`.
local function cuda_err(name, f, ...)
  local e = H.err(f, ...)
  assert.matches("^" .. name .. ": ", e)
  return e
end

-- Runs poolsh on the sim with arguments and a statement.
local function sim(args, stat, env)
  return H.poolsh_cmd("--backend=sim " .. args .. " -e " .. q(stat), env)
end

describe("--sim-devices", function()
  it("sets how many devices the sim models, each with its own memory", function()
    local out, err, code = sim("--sim-devices=2 --sim-memory=64MiB",
      "local a, b = poolsh.pool{device = 0}, poolsh.pool{device = 1}; " ..
      "local x, y = a:alloc('64 MiB'), b:alloc('64 MiB'); " ..
      "print(poolsh.device_count(), poolsh.device(0).free, poolsh.device(1).free, " ..
      "pcall(a.alloc, a, 1)); x:free(); y:free()")
    assert.equal(0, code, err)
    local n, f0, f1, ok = out:match("^(%d+)\t(%d+)\t(%d+)\t(%a+)")
    assert.equal("2", n, out)
    assert.equal("0", f0, out)
    assert.equal("0", f1, out)
    assert.equal("false", ok, out)          -- device 0 is full; device 1's pool did not count there
  end)

  it("reads POOLSH_SIM_DEVICES, which --sim-devices overrides and -E ignores", function()
    local out = sim("", "print(poolsh.device_count())", "POOLSH_SIM_DEVICES=3")
    assert.equal("3\n", out)
    out = sim("--sim-devices=2", "print(poolsh.device_count())", "POOLSH_SIM_DEVICES=3")
    assert.equal("2\n", out)
    out = sim("-E", "print(poolsh.device_count())", "POOLSH_SIM_DEVICES=3")
    assert.equal("1\n", out)
  end)

  it("refuses a bad value in one line, exit status 1", function()
    for _, v in ipairs { "x", "0", "17", "1.5", "-2" } do
      local out, err, code = sim("--sim-devices=" .. q(v), "print('ran')")
      assert.equal(1, code, v)
      assert.equal("", out, v)
      assert.equal(("poolsh: --sim-devices: must be an integer from 1 to 16, got '%s'\n"):format(v), err:gsub("^[^:]*poolsh: ", "poolsh: "))
    end
    local _, err, code = sim("", "print('ran')", "POOLSH_SIM_DEVICES=abc")
    assert.equal(1, code)
    assert.matches("POOLSH_SIM_DEVICES: must be an integer from 1 to 16, got 'abc'", err, 1, true)
  end)

  it("poolsh.configure{sim_devices = } takes a number or its string, before the backend opens", function()
    local paths = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH=" .. q(H.build .. "/lib/?.so;;")
    local out, err, code = H.sh(paths .. " lua5.4 -e " .. q("local poolsh = require 'poolsh'; " ..
      "poolsh.configure{backend = 'sim', sim_devices = '4'}; print(poolsh.device_count())"))
    assert.equal(0, code, err)
    assert.equal("4\n", out)
    assert.matches("already open", H.err(poolsh.configure, { sim_devices = 2 }), 1, true)
  end)

  it("keeps one device as before: device 1 is cudaErrorInvalidDevice", function()
    if poolsh.device_count() > 1 then return pending("this machine has several devices") end
    cuda_err("cudaErrorInvalidDevice", poolsh.stream, { device = 1 })
    cuda_err("cudaErrorInvalidDevice", poolsh.device, 1)
    cuda_err("cudaErrorInvalidDevice", poolsh.default_pool, 1)
    local p <close> = poolsh.pool {}
    cuda_err("cudaErrorInvalidValue", p.access, p, 1)
    cuda_err("cudaErrorInvalidDevice", p.set_access, p, 1, "rw")
    cuda_err("cudaErrorInvalidDevice", poolsh.can_access_peer, 0, 1)
    assert.equal(0, poolsh.default_stream().device)
  end)
end)

describe("several devices", function()
  after_each(function() if H.is_sim() then poolsh.reset() end end)

  it("each has its info and its default pool, whose access other devices lack", function()
    if not two_devices() then return end
    assert.equal(2, poolsh.device_count())
    assert.equal(1, poolsh.device(1).index)
    cuda_err("cudaErrorInvalidDevice", poolsh.device, 7)
    local d0, d1 = poolsh.default_pool(0), poolsh.default_pool(1)
    assert.are_not.equal(d0, d1)
    assert.equal(1, d1.device)
    assert.equal("rw", d1:access(1))
    assert.equal("none", d1:access(0))
    assert.equal("none", d0:access(1))
  end)

  it("streams belong to a device; the default stream to poolsh's", function()
    if not two_devices() then return end
    local s0, s1 = poolsh.stream(), poolsh.stream { device = 1 }
    assert.equal(0, s0.device)
    assert.equal(1, s1.device)
    assert.equal(0, poolsh.default_stream().device)
    assert.matches("device must be a device index", H.err(poolsh.stream, { device = -1 }), 1, true)
    assert.matches("device must be a device index", H.err(poolsh.stream, { device = "x" }), 1, true)
    local e = cuda_err("cudaErrorInvalidDevice", poolsh.stream, { device = 2 })
    assert.matches("on device 2)", e, 1, true)
    s1:destroy()
    assert.equal(1, s1.device)                       -- readable after destruction
  end)

  it("allocates from a pool of device 0 on a stream of device 1; device 0 reuses it after a sync", function()
    if not two_devices() then return end
    local p, s1 = poolsh.pool { device = 0, release_threshold = "max" }, poolsh.stream { device = 1 }
    local b = p:alloc(MiB, s1)
    assert.equal(MiB, p:stats().used)
    b:free()
    s1:sync()
    local c = p:alloc(MiB)
    assert.is_true(c.reused)
    c:free()
  end)

  it("records events only on streams of poolsh's device; waits on them from any", function()
    if not two_devices() then return end
    local s0, s1 = poolsh.stream(), poolsh.stream { device = 1 }
    local e = poolsh.event()
    local msg = cuda_err("cudaErrorInvalidResourceHandle", e.record, e, s1)
    assert.matches("of device 1: events are created on device 0", msg, 1, true)
    e:record(s0)
    s1:wait(e)
    s1:sync()
    assert.is_true(e:query())
  end)
end)

describe("pool access", function()
  after_each(function() if H.is_sim() then poolsh.reset() end end)

  it("starts rw for the pool's device and none for others; host pools grant poolsh's device", function()
    if not two_devices() then return end
    local p0, p1 = poolsh.pool { device = 0 }, poolsh.pool { device = 1 }
    assert.equal("rw", p0:access(0))
    assert.equal("none", p0:access(1))
    assert.equal("rw", p1:access(1))
    assert.equal("none", p1:access(0))
    local h = poolsh.pool { location = "host" }
    assert.equal("rw", h:access(0))
    assert.equal("none", h:access(1))
  end)

  it("refuses kernels from a device without access, before launching, and copies", function()
    if not two_devices() then return end
    local p, s1 = poolsh.pool { device = 0 }, poolsh.stream { device = 1 }
    local b = p:alloc(4096)
    poolsh.fill(b, 5)
    local pin = poolsh.pinned(4096)
    for _, f in ipairs {
      function() poolsh.fill(b, 1, s1) end,
      function() poolsh.touch(b, s1) end,
      function() poolsh.verify(b, 5, s1) end,
    } do
      local e = cuda_err("cudaErrorIllegalAddress", f)
      assert.matches("device 1 has no access to b%d+'s pool p%d+ %(on device 0%)", e)
      assert.matches("the process's CUDA context would be lost, so poolsh refused to launch it", e, 1, true)
      assert.matches(('p%d:set_access(1, "rw") grants it'):format(p.id), e, 1, true)
    end
    assert.is_true(poolsh.verify(b, 5))              -- nothing ran: still 5
    assert.is_true(s1:query())                        -- nothing was queued on s1
    -- copies are refused too (an H200 with device 1 current), both ways, and
    -- so are the reads and writes of a buffer allocated on s1 (through s1)
    cuda_err("cudaErrorInvalidValue", poolsh.copy, pin, b, { stream = s1 })
    cuda_err("cudaErrorInvalidValue", poolsh.copy, b, pin, { stream = s1, bytes = 2 })
    local c = p:alloc(16, s1)
    cuda_err("cudaErrorInvalidValue", c.write, c, 0, "abc")
    cuda_err("cudaErrorInvalidValue", c.read, c, 0, 3)
    assert.equal(("\5"):rep(4), b:read(0, 4))     -- on its own device's stream: fine
    c:free(); b:free(); pin:free()
  end)

  it("rw covers blocks allocated before and after; none revokes both", function()
    if not two_devices() then return end
    local p, s1 = poolsh.pool { device = 0 }, poolsh.stream { device = 1 }
    local old = p:alloc(4096)
    assert.equal(p, p:set_access(1, "rw"))
    assert.equal("rw", p:access(1))
    local new = p:alloc(4096)
    poolsh.fill(old, 3, s1)
    poolsh.fill(new, 4, s1)
    assert.is_true(poolsh.verify(old, 3, s1))
    assert.is_true(poolsh.verify(new, 4, s1))
    poolsh.touch(new, s1)
    local pin = poolsh.pinned(4096)
    poolsh.copy(pin, new, { stream = s1 })
    s1:sync()
    assert.equal(("\4"):rep(8), pin:read(0, 8))
    local c = p:alloc(8, s1)
    c:write(0, "peer")
    assert.equal("peer", c:read(0, 4))
    p:set_access(1, "none")
    assert.equal("none", p:access(1))
    cuda_err("cudaErrorIllegalAddress", poolsh.touch, old, s1)
    cuda_err("cudaErrorIllegalAddress", poolsh.touch, new, s1)
    cuda_err("cudaErrorIllegalAddress", poolsh.verify, c, 0, s1)
    cuda_err("cudaErrorInvalidValue", c.read, c, 0, 4)   -- a copy through s1: refused too
    c:free(); old:free(); new:free(); pin:free()
  end)

  it("gives the GPU's errors for bad requests", function()
    if not two_devices() then return end
    local p = poolsh.pool { device = 0 }
    local e = cuda_err("cudaErrorInvalidDevice", p.set_access, p, 0, "none")
    assert.matches("a pool's own device always has rw access", e, 1, true)
    assert.equal("rw", p:access(0))
    assert.equal(p, p:set_access(0, "rw"))          -- rw on its own device: a no-op
    e = cuda_err("cudaErrorNotSupported", p.set_access, p, 1, "read")
    assert.matches('CUDA supports only "rw" and "none"', e, 1, true)
    cuda_err("cudaErrorNotSupported", p.set_access, p, 0, "read")
    assert.equal("none", p:access(1))
    cuda_err("cudaErrorInvalidDevice", p.set_access, p, 7, "rw")
    cuda_err("cudaErrorInvalidDevice", p.set_access, p, -1, "rw")
    cuda_err("cudaErrorInvalidValue", p.access, p, 7)     -- measured: unlike set_access
    cuda_err("cudaErrorInvalidValue", p.access, p, -1)
    assert.matches("bad argument #2 to 'set_access' (invalid option 'write')",
      H.err(function() p:set_access(1, "write") end), 1, true)
    assert.matches("bad argument #2 to 'set_access' (string expected, got no value)",
      H.err(function() p:set_access(1) end), 1, true)
    assert.matches("bad argument #1 to 'access' (number expected, got string)",
      H.err(function() p:access("one") end), 1, true)
    assert.matches("bad argument #1 to 'access' (number has no integer representation)",
      H.err(function() p:access(0.5) end), 1, true)
    assert.matches("bad argument #1 to 'set_access' (device index out of range)",
      H.err(function() p:set_access(2 ^ 40, "rw") end), 1, true)
    assert.matches("poolsh.Pool expected", H.err(p.access, 1, 0), 1, true)
    p:destroy()
    assert.matches("attempt to use a destroyed poolsh.Pool", H.err(p.access, p, 0), 1, true)
    assert.matches("attempt to use a destroyed poolsh.Pool", H.err(p.set_access, p, 1, "rw"), 1, true)
  end)

  it("needs peer capability: without it, granting another device is cudaErrorInvalidDevice", function()
    if not H.is_sim() then return pending("the sim's peer_capable option") end
    two_devices()
    poolsh.sim.set("peer_capable", 0)
    assert.is_false(poolsh.can_access_peer(0, 1))
    local p = poolsh.pool { device = 0 }
    cuda_err("cudaErrorInvalidDevice", p.set_access, p, 1, "rw")
    assert.equal("none", p:access(1))
    local h = poolsh.pool { location = "host" }
    h:set_access(1, "rw")                             -- host memory needs no peer
    assert.equal("rw", h:access(1))
    cuda_err("cudaErrorInvalidValue", poolsh.sim.set, "peer_capable", 2)
  end)

  it("shows in the live lines when a device's access changes", function()
    if not two_devices() then return end
    local p = poolsh.pool { device = 0 }
    local was = poolsh.watch()
    poolsh.watch(true)
    p:set_access(1, "rw")
    local lines = table.concat(poolsh.live.lines(), "\n")
    assert.matches(p.name .. "  reserved 0 B  used 0 B  pending 0 B  device 1 access rw (was none)", lines, 1, true)
    assert.equal(0, #poolsh.live.lines())             -- nothing changed since
    p:set_access(1, "none")
    lines = table.concat(poolsh.live.lines(), "\n")
    assert.matches("device 1 access none (was rw)", lines, 1, true)
    poolsh.watch(was)
  end)

  it("is recorded in the trace as a set of access", function()
    if not two_devices() then return end
    local p = poolsh.pool { device = 0 }
    poolsh.trace.start()
    p:set_access(1, "rw")
    p:set_access(1, "none")
    poolsh.trace.stop()
    local sets = {}
    for _, ev in ipairs(poolsh.trace.events()) do
      if ev.op == "set" then sets[#sets + 1] = ev end
    end
    assert.equal(2, #sets)
    assert.same({ "access", "rw", 1, p.id }, { sets[1].name, sets[1].value, sets[1].device, sets[1].pool })
    assert.same({ "access", "none", 1 }, { sets[2].name, sets[2].value, sets[2].device })
    poolsh.trace.clear()
  end)
end)

describe("peer access (cudaDeviceEnablePeerAccess)", function()
  after_each(function() if H.is_sim() then poolsh.reset() end end)

  it("lets another device reach poolsh.malloc memory, and grants nothing to pools", function()
    if not two_devices() then return end
    assert.is_true(poolsh.can_access_peer(0, 1))
    assert.is_true(poolsh.can_access_peer(1, 0))
    assert.is_false(poolsh.can_access_peer(0, 0))
    local s1 = poolsh.stream { device = 1 }
    local m = poolsh.malloc(4096)
    local e = cuda_err("cudaErrorIllegalAddress", poolsh.fill, m, 9, s1)
    assert.matches("device 1 has no peer access to b%d+ %(cudaMalloc'd on device 0%)", e)
    assert.matches("poolsh.enable_peer_access(0, 1) grants it", e, 1, true)
    local pin = poolsh.pinned(16)
    poolsh.copy(pin, m, { stream = s1, bytes = 16 })     -- copies need no peer access
    s1:sync()
    local p = poolsh.pool { device = 0 }
    local b = p:alloc(4096)
    poolsh.enable_peer_access(0, 1)
    poolsh.fill(m, 9, s1)
    assert.is_true(poolsh.verify(m, 9, s1))
    assert.equal("none", p:access(1))                -- pools keep their own access
    cuda_err("cudaErrorIllegalAddress", poolsh.fill, b, 9, s1)
    b:free(); pin:free(); m:free()
  end)

  it("gives the GPU's errors: same device, out of range, twice, not capable", function()
    if not two_devices() then return end
    cuda_err("cudaErrorPeerAccessUnsupported", poolsh.enable_peer_access, 0)   -- to itself
    cuda_err("cudaErrorPeerAccessUnsupported", poolsh.enable_peer_access, 1, 1)
    cuda_err("cudaErrorInvalidDevice", poolsh.enable_peer_access, 5)
    cuda_err("cudaErrorInvalidDevice", poolsh.enable_peer_access, 0, -1)
    cuda_err("cudaErrorInvalidDevice", poolsh.can_access_peer, 0, 5)
    poolsh.enable_peer_access(1)
    local e = cuda_err("cudaErrorPeerAccessAlreadyEnabled", poolsh.enable_peer_access, 1)
    assert.matches("(enabling peer access from device 0 to device 1)", e, 1, true)
    assert.matches("bad argument #1 to '.-enable_peer_access' %(number expected, got table%)",
      H.err(function() poolsh.enable_peer_access({}) end))
    assert.matches("bad argument #2 to '.-can_access_peer' %(number expected, got nil%)",
      H.err(function() poolsh.can_access_peer(0, nil) end))
    if not H.is_sim() then return end
    poolsh.reset()
    poolsh.sim.set("devices", 2)
    poolsh.sim.set("peer_capable", 0)
    cuda_err("cudaErrorPeerAccessUnsupported", poolsh.enable_peer_access, 1)
  end)
end)

describe("the sim's devices option", function()
  after_each(function() if H.is_sim() then poolsh.reset() end end)

  it("changes only while nothing but the default pools exists; reset goes back to one", function()
    if not H.is_sim() then return pending("sim only") end
    poolsh.reset()
    assert.equal(2, poolsh.sim.set("devices", 2))
    local s = poolsh.stream()
    cuda_err("cudaErrorNotSupported", poolsh.sim.set, "devices", 3)
    s:destroy()
    assert.equal(3, poolsh.sim.set("devices", 3))
    cuda_err("cudaErrorInvalidValue", poolsh.sim.set, "devices", 0)
    cuda_err("cudaErrorInvalidValue", poolsh.sim.set, "devices", 17)
    cuda_err("cudaErrorInvalidValue", poolsh.sim.set, "devices", 1.5)
    assert.is_nil(poolsh.sim.profile().devices)      -- not a profile option
    poolsh.reset()
    assert.equal(1, poolsh.device_count())
    assert.equal(1, poolsh.core.option("peer_capable"))
  end)
end)
