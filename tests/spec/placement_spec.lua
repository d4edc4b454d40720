-- Which free block an allocation takes when several fit, and when joined
-- frees of one stream may serve another stream: what an H100 did
-- (docs/calibration/h100-2026-11-23-deps.log, cases C9 and T1-T8). Runs
-- on both backends: on cuda it checks the driver, on the sim the model.
local poolsh = require "poolsh"
local MiB = 1024 * 1024
local SPIN = "150 ms"

-- A pool with only stream order and event dependencies, four streams,
-- and `base`: the pool's first address. Frees behind SPIN stay pending.
local function setup()
  local p = poolsh.pool { release_threshold = "max", opportunistic = false }
  local s = { poolsh.stream(), poolsh.stream(), poolsh.stream(), poolsh.stream() }
  local probe = p:alloc(1, s[1])
  local base = probe.addr
  probe:free(); poolsh.sync()
  return p, s, base
end

local function teardown(p, s, ...)
  for _, b in ipairs { ... } do if b.live then b:free(s[1]) end end
  poolsh.sync(); p:destroy()
  for _, x in ipairs(s) do x:destroy() end
end

-- Five 8 MiB blocks back to back on s1, complete.
local function five(p, s)
  local b = {}
  for i = 1, 5 do b[i] = p:alloc(8 * MiB, s[1]) end
  s[1]:sync()
  return b
end

describe("placement among equal holes", function()
  it("settled holes: the lowest address (T1)", function()
    local p, s = setup()
    local b = five(p, s)
    b[4]:free(); b[2]:free(); poolsh.sync()
    local n = p:alloc(8 * MiB, s[1])
    assert.equal(b[2].addr, n.addr)
    teardown(p, s, n, b[1], b[3], b[5])
  end)

  it("holes pending on the allocating stream: the oldest free (T2)", function()
    local p, s = setup()
    local b = five(p, s)
    poolsh.spin(s[1], SPIN); b[4]:free(); b[2]:free()
    local n = p:alloc(8 * MiB, s[1])
    assert.equal(b[4].addr, n.addr)
    assert.equal("stream order", n.reuse_rule)
    teardown(p, s, n, b[1], b[3], b[5])
  end)

  for _, low_first in ipairs { true, false } do
    it(("holes pending on two other streams: the oldest free, %s (T3, T4)"):format(
      low_first and "the lower one" or "the higher one"), function()
      local p, s = setup()
      local b = five(p, s)
      local first, second = low_first and b[2] or b[4], low_first and b[4] or b[2]
      poolsh.spin(s[2], SPIN); first:free(s[2]); local e2 = s[2]:record()
      poolsh.spin(s[3], SPIN); second:free(s[3]); local e3 = s[3]:record()
      s[4]:wait(e3); s[4]:wait(e2)
      local n = p:alloc(8 * MiB, s[4])
      assert.equal(first.addr, n.addr)
      assert.equal("event dependency", n.reuse_rule)
      teardown(p, s, n, b[1], b[3], b[5])
    end)
  end

  it("a pending hole before a settled one (T6)", function()
    local p, s = setup()
    local b = five(p, s)
    b[4]:free(); poolsh.sync()
    poolsh.spin(s[1], SPIN); b[2]:free()
    local n = p:alloc(8 * MiB, s[1])
    assert.equal(b[2].addr, n.addr)
    teardown(p, s, n, b[1], b[3], b[5])
  end)
end)

describe("a stream's young frees first", function()
  -- A 32 MiB hole A and a 64 MiB block B on one stream, a 1 MiB live block
  -- after each; A is freed, then `between` runs, then B is freed, and 16 MiB
  -- is asked for (an H100: docs/calibration/h100-2026-11-24-placement.log).
  local function two_holes(between, spin)
    local p = poolsh.pool { release_threshold = "max" }
    local s = poolsh.stream()
    local a, x = p:alloc(32 * MiB, s), p:alloc(1 * MiB, s)
    local b, y = p:alloc(64 * MiB, s), p:alloc(1 * MiB, s)
    if spin then poolsh.spin(s, spin) end
    a:free()
    local g = between and between(p, s)
    b:free()
    local n = p:alloc(16 * MiB, s)
    local took = n.addr == a.addr and "A" or n.addr == b.addr and "B" or "elsewhere"
    for _, v in ipairs { n, x, y, g } do if v then v:free() end end
    poolsh.sync(); p:destroy(); s:destroy()
    return took
  end

  it("with nothing between the frees: best fit, the smaller hole (ties4 Y2)", function()
    assert.equal("A", two_holes())
  end)

  it("after a growth between them: the free made since, over the better fit (ties4 Y1)", function()
    assert.equal("B", two_holes(function(p, s) return p:alloc(96 * MiB, s) end))
  end)

  it("after a growth that found A's free still pending: best fit again (ties4 Y3)", function()
    assert.equal("A", two_holes(function(p, s) return p:alloc(96 * MiB, s) end, "100 ms"))
  end)

  it("a stream's own adjacent young frees, taken together before an older free of another stream (C7)", function()
    local p = poolsh.pool { release_threshold = "max", opportunistic = false }
    local s = { poolsh.stream(), poolsh.stream(), poolsh.stream(), poolsh.stream() }
    local ev = {}
    for i = 1, 3 do
      local a = p:alloc(2 * i * MiB, s[i]); poolsh.spin(s[i], "150 ms"); a:free(); ev[i] = s[i]:record()
    end
    for i = 1, 3 do s[4]:wait(ev[i]) end
    local b2 = p:alloc(2 * MiB, s[4]); b2:free()
    local b4 = p:alloc(4 * MiB, s[4]); b4:free()
    local b6 = p:alloc(6 * MiB, s[4])
    assert.equal("stream order", b6.reuse_rule)
    b6:free(); poolsh.sync(); p:destroy()
    for _, x in ipairs(s) do x:destroy() end
  end)
end)

describe("joined frees of one stream", function()
  it("serve another stream only when it is ordered after the newest of them (C9)", function()
    local p, s, base = setup()
    local a = p:alloc(4 * MiB, s[1])
    poolsh.spin(s[1], SPIN); a:free()
    s[3]:wait(s[1]:record())           -- after a's free
    local c = p:alloc(8 * MiB, s[1])   -- right after a's block: joins it when freed
    assert.equal(a.addr + 4 * MiB, c.addr)
    c:free()                           -- after the wait
    local n = p:alloc(4 * MiB, s[3])
    assert.is_false(n.reused)
    assert.is_true(n.addr >= base + 12 * MiB)
    teardown(p, s, n)
  end)

  it("a block apart from later frees serves it (C9c)", function()
    local p, s = setup()
    local a = p:alloc(4 * MiB, s[1])
    local keep = p:alloc(1 * MiB, s[1])
    poolsh.spin(s[1], SPIN); a:free()
    s[3]:wait(s[1]:record())
    local c = p:alloc(8 * MiB, s[1])
    c:free()
    local n = p:alloc(4 * MiB, s[3])
    assert.equal(a.addr, n.addr)
    assert.equal("event dependency", n.reuse_rule)
    teardown(p, s, n, keep)
  end)

  it("holes of two streams side by side do not join (T8)", function()
    local p, s = setup()
    local b = five(p, s)
    poolsh.spin(s[2], SPIN); b[2]:free(s[2]); local e2 = s[2]:record()
    poolsh.spin(s[3], SPIN); b[3]:free(s[3]); local e3 = s[3]:record()
    s[4]:wait(e2); s[4]:wait(e3)
    local n = p:alloc(16 * MiB, s[4])
    assert.is_false(n.reused)
    teardown(p, s, n, b[1], b[4], b[5])
  end)
end)
