-- Every kind of bad input raises a Lua error naming the problem, and the
-- state keeps working after each one.
local poolsh = require "poolsh"
local H = require "helpers"
local MiB = H.MiB

-- After any error: a fresh alloc/fill/verify/free round trip still works.
local function still_works()
  local s, p = poolsh.stream(), poolsh.pool {}
  local b = p:alloc("1 MiB", s)
  poolsh.fill(b, 9, s)
  assert.is_true(poolsh.verify(b, 9, s))
  b:free(); s:sync()
  assert.equal(0, p:stats().used)
  p:destroy()
end

describe("errors", function()
  local s, p
  before_each(function() s, p = poolsh.stream(), poolsh.pool {} end)
  after_each(function() still_works() end)

  it("wrong types say which type was expected", function()
    assert.matches("poolsh.Stream expected, got table", H.err(p.alloc, p, 16, {}))
    assert.matches("poolsh.Stream expected, got poolsh.Pool", H.err(p.alloc, p, 16, p))
    assert.matches("poolsh.Stream expected, got number", H.err(poolsh.spin, 1, 1))
    assert.matches("poolsh.Stream expected", H.err(s.sync, p))
    assert.matches("poolsh.Stream expected", H.err(poolsh.event().record, poolsh.event(), p))
    assert.matches("poolsh.Event expected", H.err(s.wait, s, s))
    assert.matches("poolsh.Event expected", H.err(s.wait, s))
    assert.matches("poolsh.Pool expected", H.err(p.alloc, s, 16))
    assert.matches("poolsh.Pool expected", H.err(p.stats, {}))
    assert.matches("poolsh.Buffer expected", H.err(poolsh.fill, p, 1))
    assert.matches("poolsh.Buffer expected", H.err(poolsh.register, "b"))
  end)

  it("bad sizes: negative, non-integral, huge, nonsense", function()
    assert.matches("must not be negative", H.err(p.alloc, p, -1, s))
    assert.matches("must not be negative", H.err(p.alloc, p, "-4 KiB", s))
    assert.matches("integer number of bytes", H.err(p.alloc, p, 1.5, s))
    assert.matches("not a whole number", H.err(p.alloc, p, "1.1 KiB", s))
    assert.matches("too large", H.err(p.alloc, p, 2^70, s))
    assert.matches("too large", H.err(p.alloc, p, "99999 PiB", s))
    assert.matches("invalid size", H.err(p.alloc, p, "lots", s))
    assert.matches("size expected", H.err(p.alloc, p, true, s))
    assert.matches("size expected", H.err(p.alloc, p, nil, s))
    assert.matches("size expected", H.err(poolsh.malloc))
    assert.equal(0, p:stats().used)
  end)

  it("a size larger than the device is a CUDA error", function()
    local err = H.err(p.alloc, p, "1 PiB", s)
    assert.matches("^cudaErrorMemoryAllocation", err)
    err = H.err(poolsh.malloc, "1 PiB")
    assert.matches("^cudaErrorMemoryAllocation", err)
  end)

  it("unknown options are named", function()
    assert.matches("poolsh.pool: unknown option 'treshold'", H.err(poolsh.pool, { treshold = 0 }))
    assert.matches("poolsh.stream: unknown option 'x'", H.err(poolsh.stream, { x = 1 }))
    assert.matches("poolsh.event: unknown option 'x'", H.err(poolsh.event, { x = 1 }))
    local a <close> = poolsh.pinned(1)
    local b <close> = poolsh.pinned(1)
    assert.matches("poolsh.copy: unknown option 'x'", H.err(poolsh.copy, a, b, { x = 1 }))
    assert.matches("poolsh.pinned: unknown option 'x'", H.err(poolsh.pinned, 1, { x = 1 }))
    assert.matches("unknown option '1'", H.err(poolsh.pool, { "device" }))
    assert.matches("table expected", H.err(poolsh.pool, "device"))
  end)

  it("freed buffers refuse every use", function()
    local b = p:alloc(64, s)
    b:free()
    for _, f in ipairs {
      function() b:free() end, function() b:read() end, function() b:write(0, "x") end,
      function() poolsh.fill(b, 1) end, function() poolsh.verify(b, 1) end,
      function() poolsh.touch(b) end, function() poolsh.copy(b, b) end,
    } do
      assert.matches("attempt to use a freed poolsh.Buffer %(b%d+%)", H.err(f))
    end
    -- fields stay readable
    assert.equal(64, b.size)
    assert.is_false(b.live)
  end)

  it("destroyed pools, streams and events refuse every use", function()
    local q, t, e = poolsh.pool {}, poolsh.stream(), poolsh.event()
    q:destroy(); t:destroy(); e:destroy()
    assert.matches("destroyed poolsh.Pool %(p%d+%)", H.err(q.alloc, q, 1, s))
    assert.matches("destroyed poolsh.Stream %(s%d+%)", H.err(p.alloc, p, 1, t))
    assert.matches("destroyed poolsh.Stream", H.err(poolsh.spin, t, 1))
    local b <close> = p:alloc(8, s)
    assert.matches("destroyed poolsh.Stream", H.err(poolsh.fill, b, 1, t))
    assert.matches("destroyed poolsh.Event %(e%d+%)", H.err(e.sync, e))
    assert.matches("destroyed poolsh.Event", H.err(s.wait, s, e))
  end)

  it("copies out of bounds", function()
    local a, b = p:alloc(100, s), p:alloc(50, s)
    assert.matches("out of bounds", H.err(poolsh.copy, b, a))
    assert.matches("out of bounds", H.err(poolsh.copy, a, b, { bytes = 60 }))
    assert.matches("beyond the end", H.err(poolsh.copy, a, b, { src_offset = 51 }))
    a:free(); b:free()
  end)

  it("OOM is recoverable with pcall and names the pool and stream", function()
    local q = poolsh.pool { max_size = "64 MiB" }
    local ok, err = pcall(q.alloc, q, "128 MiB", s)
    assert.is_false(ok)
    assert.matches("^cudaErrorMemoryAllocation", err)
    assert.matches("allocating 128.00 MiB", err, 1, true)
    assert.matches("pool p" .. q.id, err, 1, true)
    assert.matches("stream s" .. s.id, err, 1, true)
    -- nothing is held; the driver mapped up to max_size before failing, so
    -- reserved_high reads 64 MiB (measured on the GPU; the sim follows)
    assert.same({ reserved = 0, used = 0, reserved_high = 64 * MiB, used_high = 0 }, H.counters(q))
    -- the pool still works within its limit
    local b = q:alloc("32 MiB", s)
    assert.equal(32 * MiB, q:stats().used)
    b:free(); s:sync()
    q:destroy()
  end)

  it("a CUDA failure raised from inside Lua code still starts with the error name", function()
    -- the contract: CUDA failures raise messages starting with the CUDA
    -- error name, so scripts can match "^cudaErrorMemoryAllocation"
    local q = poolsh.pool { max_size = "64 MiB" }
    local ok, err = pcall(function()
      local b = q:alloc("128 MiB", s)
      return b
    end)
    assert.is_false(ok)
    assert.matches("^cudaErrorMemoryAllocation: ", err)
    q:destroy()
  end)

  it("OOM on the default stream says so", function()
    local q = poolsh.pool { max_size = "64 MiB" }
    local err = H.err(q.alloc, q, "128 MiB")
    assert.matches("^cudaErrorMemoryAllocation", err)
    assert.matches("on stream default", err, 1, true)
    q:destroy()
  end)

  it("OOM runs a full GC and retries: unreachable buffers make room", function()
    H.drops_buffers("the collection on out-of-memory is what frees the unreachable buffer")
    local q = poolsh.pool { max_size = "64 MiB" }
    do local _ = q:alloc("64 MiB", s) end   -- unreachable, not yet collected
    local b = q:alloc("64 MiB", s)          -- would not fit without the GC
    assert.is_true(b.live)
    assert.equal(64 * MiB, q:stats().used)
    b:free(); s:sync()
    q:destroy()
  end)

  it("out of memory explains itself on the lines after the first", function()
    local s2 = poolsh.stream()
    local q = poolsh.pool { max_size = "20 MiB", internal_dependencies = false }
    local a = q:alloc("32 MiB", s)
    poolsh.spin(s, "50 ms")
    a:free()                                   -- pending on s, which s2 may not use
    local err = H.err(q.alloc, q, "32 MiB", s2)
    local lines = {}
    for l in err:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal(("cudaErrorMemoryAllocation: out of memory allocating 32.00 MiB from pool p%d "
                  .. "on stream s%d"):format(q.id, s2.id), lines[1])
    assert.equal(("  p%d: reserved 32.00 MiB, used 0 B, pending 32.00 MiB (s%d 32.00 MiB)")
                 :format(q.id, s.id), lines[2])
    assert.matches("^  max_size 32.00 MiB %(20.00 MiB rounded up%); device 0: .+ free of ", lines[3])
    assert.equal(("  collecting garbage before the retry freed 0 B of pool buffers (0 B of p%d)")
                 :format(q.id), lines[4])
    assert.matches("32.00 MiB freed on other streams was not usable from s" .. s2.id
                   .. ": with internal_dependencies on, p" .. q.id .. " would have made s"
                   .. s2.id .. " wait for them; so would s" .. s.id .. ":sync%(%) before the "
                   .. "allocation, or s" .. s2.id .. ":wait%(e%)", lines[5], 1, false)
    poolsh.sync(); q:destroy(); s2:destroy()
  end)

  it("the retry is recorded and says what the collection freed", function()
    H.drops_buffers("the collection on out-of-memory is what frees the unreachable buffer")
    local q = poolsh.pool { max_size = "64 MiB" }
    do local _ = q:alloc("64 MiB", s) end
    poolsh.trace.clear(); poolsh.trace.start()
    local b = q:alloc("64 MiB", s)
    poolsh.trace.stop()
    local retry
    for _, e in ipairs(poolsh.trace.events()) do if e.op == "alloc_retry" then retry = e end end
    poolsh.trace.clear()
    assert.is_table(retry)
    assert.equal(q.id, retry.pool)
    assert.equal(64 * MiB, retry.size)
    assert.equal(64 * MiB, retry.freed)
    assert.equal(1, poolsh.core.counts().pools[q.id].retries)
    b:free(); s:sync(); q:destroy()
  end)

  it("plain allocations also GC and retry on OOM", function()
    H.drops_buffers("the collection on out-of-memory is what frees the unreachable buffer")
    local total = poolsh.device().total
    local big = math.floor(total * 0.6 / MiB) * MiB
    do local _ = poolsh.malloc(big) end
    local b = poolsh.malloc(big)
    assert.is_true(b.live)
    b:free()
  end)

  it("durations and bytes are checked", function()
    assert.matches("duration", H.err(poolsh.spin, s, "-1 ms"))
    local b <close> = p:alloc(8, s)
    assert.matches("byte must be in 0..255", H.err(poolsh.fill, b, 256))
  end)

  it("configure after the device is open is refused", function()
    poolsh.device_count()
    assert.matches("already open", H.err(poolsh.configure, { backend = "sim" }))
  end)
  it("finalizers called by hand with the wrong value raise instead of crashing", function()
    local s, p, e = poolsh.stream(), poolsh.pool {}, poolsh.event()
    local b = poolsh.malloc(16)
    assert.matches("poolsh.Stream expected", H.err(getmetatable(s).__gc, 1))
    assert.matches("poolsh.Pool expected", H.err(getmetatable(p).__gc, {}))
    assert.matches("poolsh.Event expected", H.err(getmetatable(e).__gc, s))
    assert.matches("poolsh.Buffer expected", H.err(getmetatable(b).__gc, s))
    assert.matches("poolsh.Buffer expected", H.err(getmetatable(b).__close, p))
    assert.is_true(s.live and p.live and e.live and b.live)
    b:free(); p:destroy()
  end)

  it("device indices are checked, not truncated", function()
    for _, bad in ipairs { 4294967296, -1, 1.5, "0" } do
      assert.matches("device must be a device index", H.err(poolsh.pool, { device = bad }))
      assert.matches("device must be a device index", H.err(poolsh.default_pool, bad))
    end
  end)

  it("a negative release threshold names the problem", function()
    local p = poolsh.pool {}
    assert.matches("must not be negative", H.err(function() p.release_threshold = -math.huge end))
    assert.matches("must not be negative", H.err(function() p.release_threshold = -1 end))
    p:destroy()
  end)
end)
