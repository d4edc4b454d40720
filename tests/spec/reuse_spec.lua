-- Pool reuse and release: only what docs/calibration.md shows the real GPU
-- does (H200 run, same driver logic on H100).
local poolsh = require "poolsh"
local H = require "helpers"
local MiB = 1024 * 1024

describe("pool reuse and release (calibration.md)", function()
  it("same-stream reuse gives the same address (E2 split)", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local a = p:alloc("4 MiB", s)
    local addr = a.addr
    a:free()
    local b = p:alloc("4 MiB", s)
    assert.equal(addr, b.addr)
    b:free()
    local c = p:alloc("1 MiB", s)
    local d = p:alloc("1 MiB", s)
    assert.equal(addr, c.addr)
    assert.equal(addr + MiB, d.addr)
    c:free(); d:free(); s:sync(); p:destroy()
  end)

  it("adjacent freed blocks coalesce (E2 coalesce)", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local a, b = p:alloc("1 MiB", s), p:alloc("1 MiB", s)
    local addr = a.addr
    a:free(); b:free()
    local c = p:alloc("2 MiB", s)
    assert.equal(addr, c.addr)
    c:free(); s:sync(); p:destroy()
  end)

  it("used is the exact sum of the requested bytes (E1, E2)", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local bs = { p:alloc(1, s), p:alloc(1000, s), p:alloc(3000, s), p:alloc(MiB + 1, s) }
    assert.equal(1 + 1000 + 3000 + MiB + 1, p:stats().used)
    for _, b in ipairs(bs) do b:free() end
    s:sync(); p:destroy()
  end)

  it("reserved grows in 32 MiB chunks (E1)", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local a = p:alloc(1, s)
    assert.equal(32 * MiB, p:stats().reserved)
    local b = p:alloc(32 * MiB, s)       -- 32 MiB + 1 in use
    assert.equal(64 * MiB, p:stats().reserved)
    a:free(); b:free(); s:sync(); p:destroy()
  end)

  it("threshold 0: a stream sync gives the memory back (E3)", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    p:alloc("64 MiB", s):free()
    assert.is_true(p:stats().reserved >= 64 * MiB)
    s:sync()
    assert.equal(0, p:stats().reserved)
    p:destroy()
  end)

  it("threshold 0: nothing is released without a covering sync (E3)", function()
    local s, other, p = poolsh.stream(), poolsh.stream(), poolsh.pool {}
    p:alloc("64 MiB", s):free()
    assert.is_true(s:query())
    other:sync()
    local m = poolsh.malloc("1 MiB")
    assert.is_true(p:stats().reserved >= 64 * MiB)
    m:free()
    s:sync()
    assert.equal(0, p:stats().reserved)
    p:destroy()
  end)

  it("threshold 0: an event sync after the free or a device sync releases (E3)", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    p:alloc("64 MiB", s):free()
    s:record():sync()
    assert.equal(0, p:stats().reserved)
    p:alloc("64 MiB", s):free()
    poolsh.sync()
    assert.equal(0, p:stats().reserved)
    p:destroy()
  end)

  it("threshold max keeps the memory at a sync (E5)", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    p:alloc("64 MiB", s):free()
    s:sync()
    poolsh.sync()
    assert.is_true(p:stats().reserved >= 64 * MiB)
    assert.equal(0, p:stats().used)
    p:trim(0)
    assert.equal(0, p:stats().reserved)
    p:destroy()
  end)

  it("a threshold keeps at most that much (E4)", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "40 MiB" }
    local bs = {}
    for i = 1, 8 do bs[i] = p:alloc("16 MiB", s) end
    for i = 1, 8 do bs[i]:free() end
    s:sync()
    local r = p:stats().reserved
    assert.is_true(r <= 40 * MiB, "reserved " .. r)
    assert.equal(32 * MiB, r)    -- the largest multiple of 32 MiB <= 40 MiB
    p:destroy()
  end)

  it("trim keeps at least keep bytes, and never live chunks (E5)", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local bs = {}
    for i = 1, 8 do bs[i] = p:alloc("16 MiB", s) end
    for i = 1, 8 do bs[i]:free() end
    s:sync()
    assert.equal(128 * MiB, p:stats().reserved)
    p:trim("10 MiB")
    assert.is_true(p:stats().reserved >= 10 * MiB, "trim(10 MiB) kept " .. p:stats().reserved)
    p:trim(0)
    assert.equal(0, p:stats().reserved)
    local live = p:alloc("16 MiB", s)
    p:trim(0)
    assert.is_true(p:stats().reserved >= 16 * MiB)
    live:free(); s:sync(); p:destroy()
  end)

  it("an idle stream's free is reused by another stream (E6 b2, opportunistic)", function()
    local s1, s2, p = poolsh.stream(), poolsh.stream(), poolsh.pool {}
    local a = p:alloc("16 MiB", s1)
    local addr = a.addr
    a:free()               -- s1 is idle: the free executes at once
    local b = p:alloc("16 MiB", s2)
    assert.equal(addr, b.addr)
    b:free(); s2:sync(); p:destroy()
  end)

  it("a pending free on another stream is not reused (E6 a)", function()
    local s1, s2 = poolsh.stream { blocking = false }, poolsh.stream { blocking = false }
    local p = poolsh.pool {}
    local a = p:alloc("16 MiB", s1)
    local addr = a.addr
    poolsh.spin(s1, "50 ms")
    a:free()
    local b = p:alloc("16 MiB", s2)
    assert.are_not.equal(addr, b.addr)
    assert.is_true(s2:query())       -- s2 was not made to wait
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("an event dependency makes a pending free reusable (E6 d)", function()
    local s1, s2 = poolsh.stream { blocking = false }, poolsh.stream { blocking = false }
    local p = poolsh.pool {}
    local a = p:alloc("16 MiB", s1)
    local addr = a.addr
    poolsh.spin(s1, "50 ms")
    a:free()
    s2:wait(s1:record())
    local b = p:alloc("16 MiB", s2)
    assert.equal(addr, b.addr)
    assert.is_false(s2:query())
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("without follow_event_dependencies the event does not help (E6 d2)", function()
    local s1, s2 = poolsh.stream { blocking = false }, poolsh.stream { blocking = false }
    local p = poolsh.pool { follow_event_dependencies = false, internal_dependencies = false }
    local a = p:alloc("16 MiB", s1)
    local addr = a.addr
    poolsh.spin(s1, "50 ms")
    a:free()
    s2:wait(s1:record())
    local b = p:alloc("16 MiB", s2)
    assert.are_not.equal(addr, b.addr)
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("a host sync of the freeing stream makes it reusable with every policy off (E6 e)", function()
    local s1, s2 = poolsh.stream { blocking = false }, poolsh.stream { blocking = false }
    local p = poolsh.pool { release_threshold = "max", follow_event_dependencies = false,
                            opportunistic = false, internal_dependencies = false }
    local a = p:alloc("16 MiB", s1)
    local addr = a.addr
    poolsh.spin(s1, "20 ms")
    a:free()
    s1:sync()
    local b = p:alloc("16 MiB", s2)
    assert.equal(addr, b.addr)
    b:free(); s2:sync(); p:destroy()
  end)

  it("at max_size, internal dependencies reuse a pending free and make the stream wait (E6 f)", function()
    local s1, s2 = poolsh.stream { blocking = false }, poolsh.stream { blocking = false }
    local p = poolsh.pool { max_size = "32 MiB" }
    local a, keep = p:alloc("16 MiB", s1), p:alloc("16 MiB", s1)
    local addr = a.addr
    poolsh.spin(s1, "200 ms")
    a:free()
    local b = p:alloc("16 MiB", s2)
    assert.equal(addr, b.addr)
    assert.is_false(s2:query())
    s2:sync()
    assert.is_true(s1:query())
    b:free(); keep:free(); poolsh.sync(); p:destroy()
  end)

  it("at max_size without internal dependencies it is cudaErrorMemoryAllocation (E6 f)", function()
    local s1, s2 = poolsh.stream { blocking = false }, poolsh.stream { blocking = false }
    local p = poolsh.pool { max_size = "32 MiB", internal_dependencies = false }
    local a, keep = p:alloc("16 MiB", s1), p:alloc("16 MiB", s1)
    poolsh.spin(s1, "200 ms")
    a:free()
    local ok, err = pcall(p.alloc, p, "16 MiB", s2)
    assert.is_false(ok)
    assert.matches("^cudaErrorMemoryAllocation", err)
    assert.is_true(s2:query())
    keep:free(); poolsh.sync(); p:destroy()
  end)

  it("max_size is rounded up to 32 MiB (E7)", function()
    local s, p = poolsh.stream(), poolsh.pool { max_size = "1 MiB" }
    local b = p:alloc("4 MiB", s)
    assert.equal(4 * MiB, p:stats().used)
    b:free(); s:sync(); p:destroy()
  end)

  it("a max_size pool packs exactly up to the limit (E7)", function()
    local s, p = poolsh.stream(), poolsh.pool { max_size = "64 MiB" }
    local b = p:alloc("64 MiB", s)
    assert.equal(("cudaErrorMemoryAllocation: out of memory allocating 1 B from pool p%d on stream s%d")
                 :format(p.id, s.id), H.err(p.alloc, p, 1, s):match("^[^\n]*"))
    b:free(); s:sync(); p:destroy()
  end)
end)
