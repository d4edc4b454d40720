-- poolsh --limit and --pinned-limit (POOLSH_LIMIT, POOLSH_PINNED_LIMIT):
-- what one process may take from the device and of pinned host memory.
-- A limit is set before the device opens, so most cases run a child
-- poolsh on the backend POOLSH_BACKEND names (the sim by default here).
local H = require "helpers"
local poolsh = H.poolsh
local q, MiB = H.quote, H.MiB

-- What every child script starts with.
local PRELUDE = [[
local MiB, fmt = 1024 * 1024, poolsh.fmt
local function same(want, got, what)
  if want ~= got then error(("%s: expected %s, got %s"):format(what, tostring(want), tostring(got)), 2) end
end
local function refused(f, ...)
  local ok, e = pcall(f, ...)
  if ok then error("expected a refusal, got " .. tostring(e), 2) end
  return tostring(e)
end
-- e starts with head and ends with tail; returns the total it names.
local function says(e, head, tail)
  if e:sub(1, #head) ~= head or e:sub(-#tail) ~= tail then
    error(("the message\n  %s\ndoes not read\n  %s<total>%s"):format(e, head, tail), 2)
  end
  return e:sub(#head + 1, -#tail - 1)
end
local function held() return poolsh.device().held end
local function pinned_held() return poolsh.device().pinned_held end
]]

--- Runs code (after PRELUDE) in a child poolsh with flags; returns
-- stdout, stderr and the exit status.
local function child(flags, code, env)
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(PRELUDE, code)
  f:close()
  local o, e, rc = H.poolsh_cmd(flags .. " " .. q(path), env)
  os.remove(path)
  return o, e, rc
end

--- The same, failing unless the child exits 0 with nothing on stderr
-- (no leak report: a child frees what it made).
local function passes(flags, code, env)
  local o, e, rc = child(flags, code, env)
  e = e:gsub("[^\n]*: poolsh runs on its simulated GPU [^\n]*\n", "")   -- said once per user, no GPU here
  assert(rc == 0 and e == "", ("the child failed (status %s):\n%s%s"):format(tostring(rc), o, e))
  return o
end

local function limits(flags, env)
  return passes(flags, "local d = poolsh.device() print(d.limit, d.pinned_limit)", env)
end

describe("poolsh --limit, --pinned-limit", function()
  it("come from the flags, either form, or the environment; the flags win; -E ignores it", function()
    assert.equal("nil\tnil\n", limits(""))
    assert.equal("1073741824\tnil\n", limits("--limit=1GiB"))
    assert.equal("1073741824\tnil\n", limits("--limit '1 GiB'"))
    assert.equal("nil\t67108864\n", limits("--pinned-limit=64MiB"))
    assert.equal("536870912\t1048576\n", limits("", "POOLSH_LIMIT=512MiB POOLSH_PINNED_LIMIT=1MiB"))
    assert.equal("1073741824\t2097152\n",
      limits("--limit=1GiB --pinned-limit=2MiB", "POOLSH_LIMIT=512MiB POOLSH_PINNED_LIMIT=1MiB"))
    assert.equal("nil\tnil\n", limits("-E", "POOLSH_LIMIT=512MiB POOLSH_PINNED_LIMIT=abc"))
    assert.equal("nil\tnil\n", limits("--limit=0 --pinned-limit=0"))
  end)

  it("refuse bad sizes in one line, naming the option or the variable", function()
    local cases = {
      { "--limit=abc", ": --limit: invalid size 'abc'" },
      { "--limit=-1", ": --limit: size must not be negative" },
      { "--pinned-limit=1.5", ": --pinned-limit: size '1.5' is not a whole number of bytes" },
      { "", ": POOLSH_LIMIT: size '1e30' too large", "POOLSH_LIMIT=1e30" },
      { "", ": POOLSH_PINNED_LIMIT: invalid size 'lots'", "POOLSH_PINNED_LIMIT=lots" },
    }
    for _, c in ipairs(cases) do
      local o, e, rc = child(c[1] .. " -e ''", "", c[3])
      assert.are_not.equal(0, rc)
      assert.is_truthy((o .. e):find(c[2], 1, true), c[2] .. " not in: " .. o .. e)
      assert.is_nil(e:find("traceback", 1, true), e)
    end
  end)

  it("poolsh.configure takes them before the device opens, and refuses bad values", function()
    local paths = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH=" .. q(H.build .. "/lib/?.so;;")
    local function lua(code)
      return H.sh(paths .. " lua5.4 -e " .. q("poolsh = require 'poolsh'; " .. code))
    end
    local o, e = lua("poolsh.configure{limit = '3 MiB', pinned_limit = 4096}; "
      .. "local d = poolsh.device(); print(d.limit, d.pinned_limit)")
    assert.equal("3145728\t4096\n", o, e)
    for v, msg in pairs {
      ["{}"] = "poolsh.configure: limit: size expected (integer or string), got table",
      ["-5"] = "poolsh.configure: limit: size must not be negative",
      ["2^70"] = "poolsh.configure: limit: size too large",
      ["0.5"] = "poolsh.configure: limit: size must be an integer number of bytes",
    } do
      o, e = lua("poolsh.configure{limit = " .. v .. "}")
      assert.is_truthy((o .. e):find(msg, 1, true), msg .. " not in: " .. o .. e)
    end
    assert.matches("poolsh.configure: the %a+ backend is already open",
      H.err(poolsh.configure, { limit = "1 GiB" }))
  end)

  it("poolsh.device() shows what this process holds against each", function()
    collectgarbage()
    collectgarbage("stop")                          -- no pool is collected while we add them up
    finally(function() collectgarbage("restart") end)
    -- what the live pools of a location reserve, as p:stats() reads it
    local function pools(loc)
      local n = 0
      for _, p in ipairs((poolsh.core.objects())) do
        if p.location == loc then n = n + p:stats{ estimates = false }.reserved end
      end
      return n
    end
    local function check(malloc, pinned)
      local d = poolsh.device()
      assert.equal(pools("device") + malloc, d.held)
      assert.equal(pools("host") + pinned, d.pinned_held)
    end
    local d0 = poolsh.device()
    assert.is_nil(d0.limit)
    assert.is_nil(d0.pinned_limit)
    check(0, 0)
    local s, p = H.fresh { release_threshold = "max" }
    local hp = poolsh.pool { location = "host", release_threshold = "max" }
    local b, hb = p:alloc(MiB, s), hp:alloc(MiB, s)
    assert.is_true(p:stats().reserved > 0 and hp:stats().reserved > 0)
    check(0, 0)
    local gran = H.is_sim() and poolsh.core.option("malloc_granularity") or 2 * MiB
    local m = poolsh.malloc(1)
    check(gran, 0)
    local pin = poolsh.pinned(4096)
    local g = poolsh.pageable(8192)
    check(gran, 4096)
    poolsh.register(g)
    check(gran, 4096 + 8192)
    poolsh.unregister(g)
    check(gran, 4096)
    poolsh.register(g)
    m:free(); pin:free(); g:free(); b:free(); hb:free(); s:sync()
    check(0, 0)
    p:destroy(); hp:destroy(); s:destroy()
    check(0, 0)
  end)

  it("refuse a pool allocation that grows the reservations over it, across pools and the default pool", function()
    passes("--limit=128MiB", [[
      local LIMIT = 128 * MiB
      local s = poolsh.stream()
      local p1 = poolsh.pool{release_threshold = "max"}
      local p2 = poolsh.pool{release_threshold = "max"}
      local a = p1:alloc(40 * MiB, s)
      local h = held()
      same(p1:stats().reserved, h, "held")
      assert(h <= LIMIT)
      local size = LIMIT - h + MiB
      local e = refused(p2.alloc, p2, size, s)
      local total = says(e, "cudaErrorMemoryAllocation: out of memory under poolsh --limit 128.00 MiB: p2:alloc("
        .. fmt(size) .. ") would bring the device memory this process holds to ",
        " (pools " .. fmt(h) .. " reserved, poolsh.malloc 0 B)")
      if poolsh.backend() == "sim" then same("160.00 MiB", total, "total") end
      same(0, p2:stats().reserved, "p2's reserved after the refusal")
      same(h, held(), "held after the refusal")
      local b = p2:alloc(MiB, s)                    -- one that fits
      same(h + p2:stats().reserved, held(), "held")
      local dp = poolsh.default_pool()
      local before, h2 = dp:stats().reserved, held()
      size = LIMIT - h2 + MiB
      e = refused(dp.alloc, dp, size, s)
      says(e, "cudaErrorMemoryAllocation: out of memory under poolsh --limit 128.00 MiB: p"
        .. dp.id .. ":alloc(" .. fmt(size) .. ") would bring the device memory this process holds to ",
        " (pools " .. fmt(h2) .. " reserved, poolsh.malloc 0 B)")
      same(before, dp:stats().reserved, "the default pool's reserved after the refusal")
      b:free(); s:sync(); p2:trim(0)
      local c = dp:alloc(MiB, s)                    -- fits once p2 gave its memory back
      c:free(); a:free(); s:sync()
    ]])
  end)

  it("leave no live buffer, block or pending free for a refused allocation; trace and counts say it failed", function()
    passes("--limit=64MiB", [[
      local s = poolsh.stream()
      local p = poolsh.pool{release_threshold = "max"}
      local a = p:alloc(MiB, s)
      poolsh.trace.start()
      refused(p.alloc, p, 64 * MiB, s)
      poolsh.trace.stop()
      local live, nlive = poolsh.core.live()
      same(1, nlive, "live buffers")
      same(a.id, live[1].buffer, "the live buffer")
      same(1, #poolsh.core.blocks(p), "p's blocks")
      same(0, select(2, poolsh.core.pending()), "pending frees")
      local failed, allocs, retries = 0, 0, 0
      for _, ev in ipairs(poolsh.trace.events()) do
        if ev.op == "alloc" then allocs = allocs + 1 end
        if ev.op == "alloc_retry" then retries = retries + 1 end
        if ev.op == "alloc_failed" then
          failed = failed + 1
          same(p.id, ev.pool, "the failed allocation's pool")
          same(64 * MiB, ev.size, "its size")
        end
      end
      local recent = poolsh.core.recent(0)
      same(1, #recent, "recent allocations"); same(a.id, recent[1].buffer, "the recent one")
      same(1, failed, "alloc_failed events"); same(0, allocs, "alloc events"); same(1, retries, "retries")
      local n = poolsh.core.counts().pools[p.id]
      same(1, n.allocs, "allocs"); same(1, n.ooms, "ooms"); same(1, n.retries, "counted retries")
      a:free(); s:sync()
    ]])
  end)

  it("report a refused allocation once: its undo records no sync, trim or release", function()
    passes("--limit=32MiB", [[
      local s = poolsh.stream()
      local p = poolsh.pool{}
      local releases = #poolsh.core.releases()
      poolsh.trace.start()
      refused(p.alloc, p, 64 * MiB, s)
      poolsh.trace.stop()
      local ops = {}
      for _, ev in ipairs(poolsh.trace.events()) do ops[#ops + 1] = ev.op end
      -- the retry after collecting garbage, then the one failure
      same("alloc_retry alloc_failed", table.concat(ops, " "), "the trace of one refused allocation")
      same(releases, #poolsh.core.releases(), "the ledger's releases")
      same(0, p:stats().reserved, "p's reservation")
    ]])
  end)

  it("when undoing fails, raise that failure and leave the block to a live Buffer's finalizer (sim faults)", function()
    passes("--backend=sim --limit=64MiB", [[
      local pf = require "poolsh.profile"
      local s = poolsh.stream()
      local p = poolsh.pool{release_threshold = "max"}
      pf.arm{op = "pool_free", call = pf.calls("pool_free") + 1, error = "cudaErrorInvalidValue"}
      local e = refused(p.alloc, p, 65 * MiB, s)
      pf.disarm()
      assert(e:find("^cudaErrorInvalidValue: invalid argument %(freeing b%d+, over the limit, on stream s1%)$"), e)
      same(1, select(2, poolsh.core.live()), "live buffers")
      collectgarbage()                              -- its finalizer frees it on s
      same(0, select(2, poolsh.core.live()), "live buffers after the collection")
      s:sync(); p:trim(0)
      pf.arm{op = "stream_sync", call = pf.calls("stream_sync") + 1, error = "cudaErrorIllegalAddress"}
      e = refused(p.alloc, p, 65 * MiB, s)
      pf.disarm()
      assert(e:find("(synchronizing stream s1 to give back an allocation over the limit)", 1, true), e)
      same(0, select(2, poolsh.core.live()), "live buffers")
      s:sync(); p:trim(0)
      same(0, held(), "held at the end")
    ]])
  end)

  it("retry once after collecting garbage, as out of memory does", function()
    passes("--limit=128MiB", [[
      local m = poolsh.malloc(100 * MiB)
      m = nil                                       -- garbage: its finalizer frees it
      local z = poolsh.malloc(100 * MiB)
      same(100 * MiB, held(), "held")
      z:free()
      local s = poolsh.stream()
      local p = poolsh.pool{release_threshold = "max"}
      local x = p:alloc(100 * MiB, s)
      x = nil                                       -- its finalizer frees it on s
      local y = p:alloc(100 * MiB, s)               -- reuses x's memory after the collection
      local n = poolsh.core.counts().pools[p.id]
      same(2, n.allocs, "allocs"); same(1, n.retries, "retries"); same(0, n.ooms, "ooms")
      y:free(); s:sync()
    ]])
  end)

  it("refuse poolsh.malloc over it, counting what cudaMalloc rounds to", function()
    passes("--limit=128MiB", [[
      local m = poolsh.malloc(100 * MiB)
      same(100 * MiB, held(), "held")
      local e = refused(poolsh.malloc, 30 * MiB)
      same("cudaErrorMemoryAllocation: out of memory under poolsh --limit 128.00 MiB: poolsh.malloc(30.00 MiB) "
        .. "would bring the device memory this process holds to 130.00 MiB (pools 0 B reserved, poolsh.malloc 100.00 MiB)",
        e, "the message")
      same(100 * MiB, held(), "held after the refusal")
      local one = poolsh.malloc(1)
      same(102 * MiB, held(), "held with 1 B (2 MiB as cudaMalloc rounds it)")
      local s = poolsh.stream()
      local p = poolsh.pool{}
      e = refused(p.alloc, p, 30 * MiB, s)            -- pools and malloc share the limit
      says(e, "cudaErrorMemoryAllocation: out of memory under poolsh --limit 128.00 MiB: p1:alloc(30.00 MiB) "
        .. "would bring the device memory this process holds to ", " (pools 0 B reserved, poolsh.malloc 102.00 MiB)")
      one:free(); m:free()
      same(0, held(), "held after the frees")
      local pin = poolsh.pinned(200 * MiB)            -- not device memory
      local hp = poolsh.pool{location = "host"}
      local hb = hp:alloc(200 * MiB, s)
      hb:free(); s:sync(); pin:free()
    ]])
  end)

  it("--pinned-limit refuses poolsh.pinned, poolsh.register and host pools over it", function()
    passes("--pinned-limit=64MiB", [[
      local head = "cudaErrorMemoryAllocation: out of memory under poolsh --pinned-limit 64.00 MiB: "
      same(nil, poolsh.device().limit, "limit")
      local a = poolsh.pinned(40 * MiB)
      same(40 * MiB, pinned_held(), "pinned_held")
      same(head .. "poolsh.pinned(30.00 MiB) would bring the pinned host memory this process holds to 70.00 MiB "
        .. "(host pools 0 B reserved, poolsh.pinned 40.00 MiB, registered 0 B)", refused(poolsh.pinned, 30 * MiB), "pinned")
      local g = poolsh.pageable(30 * MiB)             -- pageable memory is not pinned
      same(40 * MiB, pinned_held(), "pinned_held with pageable memory")
      same(head .. "poolsh.register(b" .. g.id .. ", 30.00 MiB) would bring the pinned host memory this process holds "
        .. "to 70.00 MiB (host pools 0 B reserved, poolsh.pinned 40.00 MiB, registered 0 B)",
        refused(poolsh.register, g), "register")
      assert(not g.registered)
      local h = poolsh.pageable(20 * MiB)
      poolsh.register(h)
      same(60 * MiB, pinned_held(), "pinned_held")
      local s = poolsh.stream()
      local hp = poolsh.pool{location = "host", release_threshold = "max"}
      local e = refused(hp.alloc, hp, 5 * MiB, s)
      says(e, head .. "p1:alloc(5.00 MiB) would bring the pinned host memory this process holds to ",
        " (host pools 0 B reserved, poolsh.pinned 40.00 MiB, registered 20.00 MiB)")
      same(0, hp:stats().reserved, "the host pool's reserved after the refusal")
      poolsh.unregister(h)
      same(40 * MiB, pinned_held(), "pinned_held after unregister")
      a:free()
      same(0, pinned_held(), "pinned_held after the frees")
      local x = hp:alloc(5 * MiB, s)
      local r = hp:stats().reserved
      same(r, pinned_held(), "pinned_held with a host pool")
      local size = 64 * MiB - r + 1
      same(head .. "poolsh.pinned(" .. fmt(size) .. ") would bring the pinned host memory this process holds to "
        .. fmt(64 * MiB + 1) .. " (host pools " .. fmt(r) .. " reserved, poolsh.pinned 0 B, registered 0 B)",
        refused(poolsh.pinned, size), "pinned beside a host pool")
      local m = poolsh.malloc(100 * MiB)              -- device memory: no limit
      local dp = poolsh.pool{}
      local d = dp:alloc(100 * MiB, s)
      x:free(); d:free(); s:sync(); m:free(); g:free(); h:free()
    ]])
  end)

  it("survives poolsh.reset(), which gives back what was held", function()
    passes("--limit=128MiB --pinned-limit=64MiB", [[
      local s = poolsh.stream()
      local p = poolsh.pool{}
      local keep = { p:alloc(50 * MiB, s), poolsh.malloc(60 * MiB), poolsh.pinned(60 * MiB) }
      local g = poolsh.pageable(MiB)
      poolsh.register(g)
      poolsh.reset()
      local d = poolsh.device()
      same(128 * MiB, d.limit, "limit"); same(64 * MiB, d.pinned_limit, "pinned_limit")
      same(0, d.held, "held"); same(0, d.pinned_held, "pinned_held")
      local m = poolsh.malloc(100 * MiB)
      local pin = poolsh.pinned(60 * MiB)
      refused(poolsh.malloc, 30 * MiB)
      refused(poolsh.pinned, 5 * MiB)
      s = poolsh.stream()
      p = poolsh.pool{}
      local e = refused(p.alloc, p, 29 * MiB, s)
      assert(e:find("under poolsh --limit 128.00 MiB: p1:alloc(29.00 MiB)", 1, true), e)
      m:free(); pin:free()
    ]])
  end)
end)
