-- The simulated device (#sim_only): the virtual clock, the profile, the
-- contents model and late writes into reused memory.
local poolsh = require "poolsh"
local H = require "helpers"
local MiB = H.MiB

local function skip() if poolsh.backend() ~= "sim" then pending("sim only") return true end end
local prof
local function ms(ns) return ns / 1e6 end

describe("the sim #sim_only", function()
  before_each(function()
    if poolsh.backend() == "sim" then prof = poolsh.sim.profile() end
  end)

  describe("virtual clock", function()
    it("a spin on an idle stream ends exactly api_ns + spin later", function()
      if skip() then return end
      local s = poolsh.stream()
      local t0 = poolsh.now()
      poolsh.spin(s, "5 ms")
      assert.near(t0 + ms(prof.api_ns), poolsh.now(), 1e-9)   -- the call's host cost
      s:sync()
      assert.near(t0 + ms(prof.api_ns) + 5, poolsh.now(), 1e-9)
    end)

    it("queued spins add up; a query costs query_ns and waits for nothing", function()
      if skip() then return end
      local s = poolsh.stream()
      local t0 = poolsh.now()
      poolsh.spin(s, 10)
      poolsh.spin(s, "250 us")
      local t1 = poolsh.now()
      assert.is_false(s:query())
      assert.near(t1 + ms(prof.query_ns), poolsh.now(), 1e-9)
      s:sync()
      assert.near(t0 + ms(prof.api_ns) + 10.25, poolsh.now(), 1e-9)
    end)

    it("sleep moves the clock by exactly the duration", function()
      if skip() then return end
      local t0 = poolsh.now()
      poolsh.sleep("1.5 ms")
      assert.near(t0 + 1.5, poolsh.now(), 1e-9)
      poolsh.sleep(2)
      assert.near(t0 + 3.5, poolsh.now(), 1e-9)
    end)

    it("elapsed between events around a spin on a busy stream is the spin", function()
      if skip() then return end
      local s = poolsh.stream()
      poolsh.spin(s, 10)
      local a = s:record()
      poolsh.spin(s, 5)
      local b = s:record()
      b:sync()
      assert.near(5, a:elapsed(b), 1e-9)
      assert.near(-5, b:elapsed(a), 1e-9)
    end)

    it("a fill takes launch_ns + bytes / bw_fill", function()
      if skip() then return end
      local s, p = poolsh.stream(), poolsh.pool {}
      local b = p:alloc("1 GiB", s)
      s:sync()
      local t0 = poolsh.now()
      poolsh.fill(b, 1, s)
      s:sync()
      local want = prof.api_ns + prof.launch_ns + math.floor(2^30 / prof.bw_fill + 0.5)
      assert.near(t0 + ms(want), poolsh.now(), 1e-9)
      b:free(); s:sync(); p:destroy()
    end)

    it("event sync moves the clock to the event, not to the stream's end", function()
      if skip() then return end
      local s = poolsh.stream()
      local t0 = poolsh.now()
      poolsh.spin(s, 10)
      local e = s:record()
      poolsh.spin(s, 10)
      local t1 = poolsh.now()
      e:sync()
      assert.near(t0 + ms(prof.api_ns) + 10, poolsh.now(), 1e-9)
      assert.is_true(poolsh.now() > t1)
      assert.is_false(s:query())
      s:sync()
      assert.near(t0 + ms(prof.api_ns) + 20, poolsh.now(), 1e-9)
    end)

    it("a non-blocking stream does not wait for the default stream", function()
      if skip() then return end
      local nb = poolsh.stream { blocking = false }
      local bl = poolsh.stream()
      poolsh.spin(poolsh.default_stream(), 50)
      poolsh.spin(nb, 1); poolsh.spin(bl, 1)
      local enb, ebl = nb:record(), bl:record()
      enb:sync()
      assert.is_false(ebl:query())
      assert.is_false(poolsh.default_stream():query())
      poolsh.sync()
      assert.is_true(ebl:query())
    end)

    it("is deterministic: the same script gives the same times and addresses", function()
      if skip() then return end
      local script = "local s, p = poolsh.stream(), poolsh.pool{}; local b = p:alloc('3 MiB', s); "
        .. "poolsh.fill(b, 1, s); s:sync(); print(b.addr, poolsh.now(), p:stats().reserved)"
      local o1, _, c1 = H.poolsh_cmd("--backend=sim -e " .. H.quote(script))
      local o2, _, c2 = H.poolsh_cmd("--backend=sim -e " .. H.quote(script))
      assert.equal(0, c1)
      assert.equal(0, c2)
      assert.matches("^%d+\t[%d%.e%-]+\t%d+\n$", o1)
      assert.equal(o1, o2)
    end)
  end)

  describe("profile", function()
    it("lists every documented option with its value", function()
      if skip() then return end
      for _, k in ipairs { "memory", "host_memory", "api_ns", "event_api_ns",
        "launch_ns", "copy_ns", "bw_fill", "bw_d2d", "bw_pinned", "bw_pageable_h2d",
        "bw_pageable_d2h", "bw_h2h", "pool_granularity", "pool_alignment",
        "malloc_granularity", "pool_alloc_ns", "pool_free_ns", "malloc_ns", "free_ns",
        "sync_ns", "query_ns", "map_ns", "map_ns_per_gib", "release_ns",
        "release_ns_per_gib", "trim_ns_per_gib" } do
        assert.equal("number", type(prof[k]), k)
      end
      assert.equal(poolsh.device().total, prof.memory)
    end)

    it("set changes an option and the clock follows it", function()
      if skip() then return end
      local old = prof.api_ns
      assert.equal(10000, poolsh.sim.set("api_ns", 10000))
      local ok, err = pcall(function()
        local s = poolsh.stream()
        local t0 = poolsh.now()
        poolsh.spin(s, 1)
        s:sync()
        assert.near(t0 + 0.01 + 1, poolsh.now(), 1e-9)
      end)
      poolsh.sim.set("api_ns", old)
      assert(ok, err)
      assert.equal(old, poolsh.sim.profile().api_ns)
    end)

    it("release_on_stream_sync = 0 keeps freed memory at a stream sync", function()
      if skip() then return end
      poolsh.sim.set("release_on_stream_sync", 0)
      local ok, err = pcall(function()
        local s, p = poolsh.stream(), poolsh.pool {}
        p:alloc("64 MiB", s):free()
        s:sync()
        assert.is_true(p:stats().reserved >= 64 * MiB)
        poolsh.sync()
        assert.equal(0, p:stats().reserved)
        p:destroy()
      end)
      poolsh.sim.set("release_on_stream_sync", 1)
      assert(ok, err)
    end)

    it("refuses unknown options and values below the minimum", function()
      if skip() then return end
      assert.matches("cudaErrorInvalidValue", H.err(poolsh.sim.set, "warp_speed", 1))
      assert.matches("cudaErrorInvalidValue", H.err(poolsh.sim.set, "api_ns", -1))
      assert.equal(prof.api_ns, poolsh.sim.profile().api_ns)
    end)

    it("memory cannot change once something is mapped", function()
      if skip() then return end
      local b = poolsh.malloc("2 MiB")
      assert.matches("cudaErrorNotSupported", H.err(poolsh.sim.set, "memory", "1 GiB"))
      b:free()
    end)

    it("a pool grows by ceil(shortfall / pool_granularity) chunks at its top", function()
      if skip() then return end
      local s, p = poolsh.stream(), poolsh.pool {}
      local g = prof.pool_granularity
      local b = p:alloc(1, s)                       -- one chunk; 512 B of it used
      assert.equal(g, p:stats().reserved)
      local c = p:alloc(3 * g + 1, s)               -- packs after b, straddling chunks
      local need = 512 + 3 * g + 1
      assert.equal(((need + g - 1) // g) * g, p:stats().reserved)
      assert.equal(b.addr + 512, c.addr)
      b:free(); c:free(); s:sync(); p:destroy()
    end)
  end)

  describe("costs measured on an H100 (docs/calibration.md, Host costs)", function()
    -- ms of f() on the virtual clock
    local function took(f) local t = poolsh.now(); f(); return poolsh.now() - t end

    it("the threshold cliff: a cold round 20 to 40 times a warm one", function()
      if skip() then return end
      local s = poolsh.stream()
      local function round(p) return took(function() p:alloc("64 MiB", s):free(); s:sync() end) end
      local p0, pm = poolsh.pool { release_threshold = 0 }, poolsh.pool { release_threshold = "max" }
      round(pm)
      local cold, warm = round(p0), round(pm)
      assert.is_true(cold > 0.140 and cold < 0.155, "cold " .. cold)   -- measured 145-152 us
      assert.is_true(cold / warm > 20 and cold / warm < 40, "ratio " .. cold / warm)
      p0:destroy(); pm:destroy(); s:destroy()
    end)

    it("pinned, pageable and cudaMalloc memory cost by size", function()
      if skip() then return end
      local function pinned(n) local b; local a = took(function() b = poolsh.pinned(n) end); return a, took(function() b:free() end) end
      local function malloc(n) local b; local a = took(function() b = poolsh.malloc(n) end); return a, took(function() b:free() end) end
      local a1, f1 = pinned("1 MiB")
      local a2, f2 = pinned("256 MiB")
      assert.is_true(a2 > 100 * a1 and f2 > 50 * f1)
      local m1, g1 = malloc("2 MiB")
      local m2, g2 = malloc("1 GiB")
      assert.near(ms(prof.malloc_ns + prof.malloc_ns_per_gib), m2, 1e-6)
      assert.is_true(m2 > 2 * m1 and g2 > 5 * g1)
    end)

    it("registering fresh pageable pages costs their first touch; freeing touched pages costs by size", function()
      if skip() then return end
      local g = poolsh.pageable("64 MiB")
      local fresh = took(function() poolsh.register(g) end)
      poolsh.unregister(g)
      local warm = took(function() poolsh.register(g) end)
      poolsh.unregister(g)
      assert.near(ms(prof.pageable_touch_ns_per_gib / 16), fresh - warm, 1e-6)
      local touched = took(function() g:free() end)
      local u = poolsh.pageable("64 MiB")
      local untouched = took(function() u:free() end)
      assert.near(ms(prof.pageable_free_ns), untouched, 1e-9)
      assert.near(ms(prof.pageable_free_ns + prof.pageable_free_ns_per_gib / 16), touched, 1e-6)
    end)

    it("host-location pools map, release and trim at far more than device pools", function()
      if skip() then return end
      local s = poolsh.stream()
      local function costs(loc)
        local p = poolsh.pool { location = loc, release_threshold = 0 }
        local b
        local map = took(function() b = p:alloc("64 MiB", s) end)
        b:free()
        local release = took(function() s:sync() end)
        p.release_threshold = "max"
        p:alloc("64 MiB", s):free(); s:sync()
        local trim = took(function() p:trim(0) end)
        p:destroy()
        return map, release, trim
      end
      local dm, dr, dt = costs("device")
      local hm, hr, ht = costs("host")
      assert.is_true(hm > 50 * dm and hr > 10 * dr and ht > 10 * dt)
      assert.is_true(hm > 9.6 and hm < 16, "64 MiB host map: 11.9 ms measured")
      s:destroy()
    end)

    it("a stream destroyed busy gives its pool memory back when its work completes, not before", function()
      if skip() then return end
      local p = poolsh.pool { release_threshold = 0 }
      local s = poolsh.stream()
      local b = p:alloc("64 MiB", s)
      poolsh.spin(s, 30)
      b:free()
      local t0 = poolsh.now()
      s:destroy()
      local seen = {}
      for i = 1, 8 do
        poolsh.sleep(5)
        seen[i] = p:stats { estimates = false }.reserved // MiB
      end
      assert.same({ 64, 64, 64, 64, 64, 0, 0, 0 }, seen)   -- H100: 64 at 26 ms, 0 at 31 ms
      assert.is_true(poolsh.now() - t0 < 40.01, "the host only slept")
      p:destroy()
    end)
  end)

  describe("contents", function()
    it("new device memory reads as zeros", function()
      if skip() then return end
      local b = poolsh.malloc("1 MiB")
      assert.is_true(poolsh.verify(b, 0))
      assert.equal(("\0"):rep(64), b:read(12345, 64))
      b:free()
    end)

    it("a fill lands only when the host passes its end", function()
      if skip() then return end
      local s = poolsh.stream()
      local h = poolsh.pinned(16)
      poolsh.spin(s, 10)
      poolsh.fill(h, 0x33, s)
      assert.equal(("\0"):rep(16), h:read())   -- pinned reads take no time
      s:sync()
      assert.equal(("\x33"):rep(16), h:read())
      h:free()
    end)

    it("huge uniform fills cost nothing and verify", function()
      if skip() then return end
      local s, p = poolsh.stream(), poolsh.pool {}
      local b = p:alloc("16 GiB", s)
      poolsh.fill(b, 0x7e, s)
      assert.is_true(poolsh.verify(b, 0x7e, s))
      b:write(2^34 - 1, "\0")
      assert.same({ false, 2^34 - 1 }, { poolsh.verify(b, 0x7e, s) })
      b:free(); s:sync(); p:destroy()
    end)

    it("a late write from another stream clobbers reused memory", function()
      if skip() then return end
      local s1, s2 = poolsh.stream { blocking = false }, poolsh.stream { blocking = false }
      local p = poolsh.pool {}
      local b = p:alloc("1 MiB", s1)
      local addr = b.addr
      poolsh.spin(s2, 50)
      poolsh.fill(b, 0xaa, s2)     -- lands at ~50 ms: after the reuse below
      b:free()                     -- on s1, which is idle: done at once
      local c = p:alloc("1 MiB", s1)
      assert.equal(addr, c.addr)   -- same-stream reuse
      poolsh.fill(c, 0x11, s1)
      assert.is_true(poolsh.verify(c, 0x11, s1))
      s2:sync()                    -- the late fill lands now
      local ok, off = poolsh.verify(c, 0x11, s1)
      assert.is_false(ok)
      assert.equal(0, off)
      assert.is_true(poolsh.verify(c, 0xaa, s1))
      c:free(); s1:sync(); p:destroy()
    end)

    it("a copy reads its source at its end time", function()
      if skip() then return end
      local s = poolsh.stream()
      local src, dst = poolsh.pinned(4), poolsh.pinned(4)
      src:write(0, "old!")
      poolsh.spin(s, 10)
      poolsh.copy(dst, src, { stream = s })
      src:write(0, "new!")            -- before the copy ends
      s:sync()
      assert.equal("new!", dst:read())
      src:free(); dst:free()
    end)
  end)
end)
