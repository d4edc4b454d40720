--- `poolsh calibrate [--out FILE] [--quick]`: measures on this device what
-- the simulated device needs and writes a device profile (poolsh.profile's
-- format). On the cuda backend it measures the GPU; on the sim it measures
-- the sim's own profile back. Host costs are poolsh.now() differences (the
-- host's clock on cuda, the virtual one on sim); device durations are
-- event-timed behind a spin, so they count the device's work only.
local poolsh = require "poolsh"
local profile = require "poolsh.profile"

local MiB, GiB = 1024 * 1024, 1024 * 1024 * 1024
local USAGE = "usage: poolsh calibrate [--out FILE] [--quick]"

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

-- v to 3 significant digits: measurements are not finer than that.
local function sig3(v)
  local r = tonumber(("%.3g"):format(v))
  return math.tointeger(r) or r
end

-- The median over reps of f(), each a number.
local function med(reps, f)
  local t = {}
  for i = 1, reps do t[i] = f(i) end
  return median(t)
end

-- Host ns per call of f, over a batch of n calls.
local function host_ns(n, f)
  local t0 = poolsh.now()
  for i = 1, n do f(i) end
  return (poolsh.now() - t0) * 1e6 / n
end

-- Device ns of the work f queues on s, timed by events behind a spin
-- (so the stream is busy and the host's own time does not count).
local function device_ns(c, f)
  poolsh.spin(c.s, c.lead_ms)
  local a = c.s:record()
  f()
  local b = c.s:record()
  b:sync()
  local ns = a:elapsed(b) * 1e6
  a:destroy(); b:destroy()
  return ns
end

-- Lets the device run what is queued (a free completes in microseconds).
local function settle() poolsh.sleep(2) end

local function pool(opts) return poolsh.pool(opts) end

local function free_all(bs)
  for i = #bs, 1, -1 do if bs[i].live then bs[i]:free() end end
end

---------------------------------------------------------------------------
-- Geometry: granularity, alignment, used, straddling, placement.

local function geometry(c)
  local v, f, s = c.values, c.facts, c.s
  local p = pool { release_threshold = "max" }
  local b1 = p:alloc(1, s)
  local st = p:stats()
  v.pool_granularity, c.g = st.reserved, st.reserved
  f.used_accounting = st.used == 1 and "exact" or ("1 B counts " .. st.used)
  local b2 = p:alloc(1, s)
  v.pool_alignment = b2.addr - b1.addr
  c.align = v.pool_alignment
  local b3 = p:alloc(c.g, s)
  f.blocks_straddle_chunks = b3.addr - b1.addr == 2 * c.align and p:stats().reserved == 2 * c.g
  free_all { b1, b2, b3 }
  s:sync()
  p:destroy()
end

-- Best or first fit: in one chunk of eight units, a 4-unit hole below a
-- 1-unit hole; where does a unit go? Then how a hole is split, and
-- whether adjacent holes merge.
local function placement(c)
  local f, s, u = c.facts, c.s, c.g // 8
  local p = pool { release_threshold = "max" }
  local A, B, C, D = p:alloc(4 * u, s), p:alloc(u, s), p:alloc(u, s), p:alloc(2 * u, s)
  A:free(); C:free()
  local E = p:alloc(u, s)
  f.placement = E.addr == C.addr and "best fit" or E.addr == A.addr and "first fit" or "other"
  local F, G = p:alloc(u, s), p:alloc(u, s)
  f.carve = (F.addr == A.addr and G.addr == A.addr + u) and "from the start" or "other"
  free_all { B, D, E, F, G }
  local X, Y, Z = p:alloc(u, s), p:alloc(u, s), p:alloc(u, s)
  X:free(); Y:free()
  local W = p:alloc(2 * u, s)
  f.coalescing = W.addr == X.addr
  free_all { Z, W }
  s:sync()
  p:destroy()
end

-- cudaMalloc's mapping unit: the largest free-memory drop of a 1 B malloc.
local function malloc_granularity(c)
  local drop = 0
  for _ = 1, 4 do
    local before = poolsh.device().free
    local m = poolsh.malloc(1)
    drop = math.max(drop, before - poolsh.device().free)
    m:free()
  end
  if drop > 0 then
    c.values.malloc_granularity = drop
    c.notes.malloc_granularity = "largest drop of device free memory at a 1 B cudaMalloc (4 tries)"
  else
    c.notes.malloc_granularity = "not measurable: a 1 B cudaMalloc did not change free memory; the sim's default kept"
  end
end

---------------------------------------------------------------------------
-- Release: which calls give memory back at threshold 0.

local TRIGGERS = {
  stream_sync = function(t) t.s2:sync() end,
  event_sync = function(t) t.e:sync() end,
  device_sync = function() poolsh.sync() end,
  cuda_free = function(t) t.m:free() end,
  stream_destroy = function(t) t.s2:destroy() end,
  stream_query = function(t) t.s2:query() end,
  event_query = function(t) t.e:query() end,
  other_stream_sync = function(t) t.other:sync() end,
}

-- Whether `how` releases a 1 B block's chunk freed (and finished) on s2.
local function releases(c, how)
  local t = { s2 = poolsh.stream { blocking = false }, other = c.s2 }
  local p = pool {}
  local b = p:alloc(1, t.s2)
  t.m = how == "cuda_free" and poolsh.malloc(1) or nil
  b:free()
  t.e = t.s2:record()
  settle()
  local before = p:stats().reserved
  TRIGGERS[how](t)
  local after = p:stats().reserved
  if t.m and t.m.live then t.m:free() end
  if t.s2.live then t.s2:sync(); t.s2:destroy() end
  t.e:destroy()
  p:destroy()
  return before > 0 and after < before
end

local function release_rules(c)
  local v, f = c.values, c.facts
  for _, k in ipairs { "stream_sync", "event_sync", "device_sync", "cuda_free", "stream_destroy" } do
    v["release_on_" .. k] = releases(c, k) and 1 or 0
  end
  f.release_on_query = releases(c, "stream_query") or releases(c, "event_query")
  f.release_on_other_stream_sync = releases(c, "other_stream_sync")
  -- The sync used below wherever memory must be released.
  if v.release_on_stream_sync == 1 then c.release = function(s) s:sync() end
  elseif v.release_on_device_sync == 1 then c.release = function() poolsh.sync() end
  elseif v.release_on_event_sync == 1 then c.release = function(s) s:record():sync() end
  end
end

-- Whether a block freed on a stream destroyed while busy goes back when
-- that stream's work completes, with no sync (the host only sleeps).
local function destroyed_done(c)
  local s2, p = poolsh.stream { blocking = false }, pool {}
  local b = p:alloc(1, s2)
  poolsh.spin(s2, c.busy_ms)
  b:free()
  s2:destroy()
  poolsh.sleep(c.busy_ms + 10)   -- the GPU gave it back within 1 ms of the end
  c.values.release_on_destroyed_stream_done = p:stats().reserved == 0 and 1 or 0
  poolsh.sync()
  p:destroy()
end

-- Four chunks freed; threshold 1.5 chunks: how much stays, and which.
local function release_rounding(c)
  if not c.release then
    c.notes.threshold_rounding = "not measured: no sync releases memory"
    return
  end
  local s, g = c.s, c.g
  local p = pool { release_threshold = g + g // 2 }
  local bs = {}
  for i = 1, 4 do bs[i] = p:alloc(g, s) end
  local lo, hi = bs[1].addr, bs[4].addr
  free_all(bs)
  c.release(s)
  local kept = p:stats().reserved
  c.facts.threshold_rounding = kept == g and "down" or kept == 2 * g and "up" or ("keeps " .. kept)
  if kept > 0 then
    local b = p:alloc(g, s)
    c.facts.release_order = b.addr == lo and "top down" or b.addr == hi and "bottom up" or "other"
    b:free()
  end
  s:sync()
  p:destroy()
end

-- Partial release and runs (docs/calibration.md E12): does a chunk below
-- one that must stay go back? Is the free range at the top taken only
-- when no hole fits? Does a free pending on the device join fresh space,
-- and frees of its own stream?
local function holes_and_runs(c)
  local s, g, u = c.s, c.g, c.g // 32
  if c.release then
    local p = pool {}
    local a = p:alloc(g + g // 4, s)
    local b = p:alloc(c.align, s)
    a:free()
    c.release(s)
    c.facts.release_past_live = p:stats().reserved == g
    free_all { b }
    s:sync()
    p:destroy()
  else
    c.notes.release_past_live = "not measured: no sync releases memory"
  end
  local p = pool { release_threshold = "max" }
  local x, y = p:alloc(g // 2, s), p:alloc(g // 2 - g // 8, s)
  x:free()
  s:sync()
  local z = p:alloc(u, s)
  c.facts.top_range_last = z.addr == x.addr
  free_all { y, z }
  s:sync()
  local function lands_on_first(two)
    local q = pool { release_threshold = "max" }
    local a, left = q:alloc(4 * u, s), {}
    local b = two and q:alloc(4 * u, s)
    if two then left[1] = q:alloc(c.align, s) end
    poolsh.spin(s, c.busy_ms * 10)
    a:free()
    if b then b:free() end
    local d = q:alloc(6 * u, s)
    local joined = d.addr == a.addr
    left[#left + 1] = d
    free_all(left)
    s:sync()
    q:destroy()
    return joined
  end
  c.facts.pending_joins_fresh = lands_on_first(false)
  c.facts.pending_joins_own_stream = lands_on_first(true)
  p:destroy()
end

-- Four chunks freed and synced, trim to 1.5 chunks: 1 or 2 stay?
local function trim_rounding(c)
  local s, g = c.s, c.g
  local p = pool { release_threshold = "max" }
  local bs = {}
  for i = 1, 4 do bs[i] = p:alloc(g, s) end
  free_all(bs)
  s:sync()
  p:trim(g + g // 2)
  local kept = p:stats().reserved
  c.facts.trim_rounding = kept == 2 * g and "up" or kept == g and "down" or ("keeps " .. kept)
  p:destroy()
end

-- max_size one byte over a chunk: does a two-chunk block fit?
local function max_size_rounding(c)
  local s, g = c.s, c.g
  local p = pool { max_size = g + 1, release_threshold = "max" }
  local ok, b = pcall(p.alloc, p, 2 * g, s)
  local r
  if ok then
    local over, extra = pcall(p.alloc, p, c.align, s)
    r = over and "larger" or "up to granularity"
    if over then extra:free() end
    b:free()
  else
    local fits, b2 = pcall(p.alloc, p, g + 1, s)
    r = fits and "exact" or "smaller"
    if fits then b2:free() end
  end
  c.facts.max_size_rounding = r
  s:sync()
  p:destroy()
end

---------------------------------------------------------------------------
-- Reuse across streams: s frees, s2 allocates.

-- A pool with opts; b on s freed (after a spin of lead ms when busy),
-- then what prepare(p) does; returns whether s2's block lands on b.
local function reused(c, opts, busy, prepare)
  local s, s2 = c.s, c.s2
  opts.release_threshold = "max"
  local p = pool(opts)
  local b = p:alloc(MiB, s)
  if busy then poolsh.spin(s, c.busy_ms) end
  b:free()
  if prepare then prepare() end
  local b2 = p:alloc(MiB, s2)
  local same = b2.addr == b.addr
  b2:free()
  poolsh.sync()
  p:destroy()
  return same
end

local function wait_event(c) return function() c.s2:wait(c.s:record()) end end

local function reuse_rules(c)
  local f, s = c.facts, c.s
  local off = { follow_event_dependencies = false, opportunistic = false, internal_dependencies = false }
  f.opportunistic_after_completion = reused(c, {}, false, settle)
  f.reuse_pending_without_dependency = reused(c, {}, true)
  f.reuse_after_event_dependency = reused(c, {}, true, wait_event(c))
  f.reuse_after_event_dependency_follow_off =
    reused(c, { follow_event_dependencies = false }, true, wait_event(c))
  f.reuse_after_host_sync_policies_off = reused(c, off, true, function() s:sync() end)
  f.reuse_after_completion_opportunistic_off = reused(c, { opportunistic = false }, false, settle)
end

-- A full max_size pool; a free pending on s; s2 asks for the same size.
local function at_limit(c, internal)
  local s, s2, half = c.s, c.s2, c.g // 2
  local p = pool { max_size = c.g, release_threshold = "max", internal_dependencies = internal }
  local b1, b2 = p:alloc(half, s), p:alloc(half, s)
  poolsh.spin(s, c.busy_ms)
  b1:free()
  local ok, b3 = pcall(p.alloc, p, half, s2)
  local res = { ok = ok, same = ok and b3.addr == b1.addr, waits = ok and not s2:query(),
                err = not ok and tostring(b3):match("cuda%w+") }
  poolsh.sync()
  if ok then b3:free() end
  b2:free()
  poolsh.sync()
  p:destroy()
  return res
end

local function internal_deps(c)
  local on, off = at_limit(c, true), at_limit(c, false)
  c.facts.internal_dependency_at_limit = on.ok and on.same
  c.facts.internal_dependency_waits = on.ok and on.waits
  c.facts.internal_off_at_limit = off.ok and "succeeds" or "fails"
  c.notes.internal_off_at_limit = "the failing allocation raised " .. tostring(off.err)
end

local function describe_settings(p)
  local t = { "threshold " .. tostring(p.release_threshold) }
  if p.follow_event_dependencies then t[#t + 1] = "follow" end
  if p.opportunistic then t[#t + 1] = "opportunistic" end
  if p.internal_dependencies then t[#t + 1] = "internal" end
  return table.concat(t, ", ")
end

local function pool_kinds(c)
  local p = pool {}
  c.facts.pool_defaults = describe_settings(p)
  p:destroy()
  c.facts.default_pool_defaults = describe_settings(poolsh.default_pool())
  local ok, hp = pcall(poolsh.pool, { location = "host", release_threshold = "max" })
  if not ok then
    c.facts.host_pool_granularity = "unsupported"
    c.notes.host_pool_granularity = tostring(hp)
    return
  end
  c.host_pools = true
  local b = hp:alloc(1, c.s)
  local r = hp:stats().reserved
  c.facts.host_pool_granularity = r == c.g and "same as device" or tostring(r)
  b:free()
  c.s:sync()
  hp:destroy()
end

---------------------------------------------------------------------------
-- Host costs.

-- Median host ns of a pool allocation and free (location loc), in C
-- through bench_floor, c.batch of each per batch.
local function pool_api_at(c, loc)
  local p = pool { release_threshold = "max", location = loc }
  local alloc, free = poolsh.bench_floor(p, c.s, 1024)
  local n, blocks, a, f = c.batch, {}, {}, {}
  for r = 0, c.reps do
    local t0 = poolsh.now()
    for i = 1, n do blocks[i] = alloc() end
    local t1 = poolsh.now()
    for i = 1, n do free(blocks[i]) end
    local t2 = poolsh.now()
    if r > 0 then a[r], f[r] = (t1 - t0) * 1e6 / n, (t2 - t1) * 1e6 / n end
  end
  if loc == "host" then
    c.values.host_pool_alloc_ns = sig3(median(a))
  else
    c.values.pool_alloc_ns, c.values.pool_free_ns = sig3(median(a)), sig3(median(f))
    c.notes.pool_alloc_ns = ("median of %d batches of %d pool allocations of 1 KiB (bench_floor)"):format(c.reps, n)
  end
  c.s:sync()
  p:destroy()
end

-- Pool alloc and free, in C through bench_floor, n of each per batch;
-- then a host-location pool's allocations alike.
local function pool_api(c)
  pool_api_at(c, "device")
  if c.host_pools then pool_api_at(c, "host") end
end

-- Host ns of the first allocation of `size` in a fresh pool at location
-- loc (it maps).
local function map_cost(c, size, loc)
  return med(c.reps, function()
    local p = pool { release_threshold = "max", location = loc }
    local alloc, free = poolsh.bench_floor(p, c.s, size)
    local t0 = poolsh.now()
    local blk = alloc()
    local ns = (poolsh.now() - t0) * 1e6
    free(blk)
    c.s:sync()
    p:destroy()
    return ns
  end)
end

-- Fits a + b * x through two points; returns a, b.
local function line(x1, y1, x2, y2)
  local b = (y2 - y1) / (x2 - x1)
  return y1 - b * x1, b
end

-- The sizes of the two-point fits: one chunk, and about 1 GiB of chunks.
local function fit_sizes(c)
  local big = math.max(2, -(-GiB // c.g)) * c.g
  while big > c.g * 2 and big > c.values.memory // 4 do big = big // 2 // c.g * c.g end
  return c.g, big
end

-- The sizes of the host pools' fits: one chunk and c.host_big of chunks.
local function host_fit_sizes(c)
  return c.g, math.max(2, c.host_big // c.g) * c.g
end

-- Sets prefix .. "ns" and prefix .. "ns_per_gib" from a two-point fit of
-- f(size) at the sizes `sizes` returns, minus `minus` from the fixed part;
-- returns the two measurements.
local function fit_values(c, prefix, sizes, f, minus)
  local small, big = sizes(c)
  local t1, t2 = f(small), f(big)
  local base, per = line(small / GiB, t1, big / GiB, t2)
  c.values[prefix .. "ns"] = sig3(math.max(0, math.floor(base - (minus or 0))))   -- below 1 ns: rounding
  c.values[prefix .. "ns_per_gib"] = sig3(math.max(0, per))
  return t1, t2, small, big
end

local function map_costs(c)
  local t1, t2, small, big = fit_values(c, "map_", fit_sizes, function(n) return map_cost(c, n) end,
    c.values.pool_alloc_ns)
  c.notes.map_ns = ("first allocation of a fresh pool: %.0f ns mapping %d B, %.0f ns mapping %d B; minus pool_alloc_ns"):format(t1, small, t2, big)
  if c.host_pools then
    fit_values(c, "host_pool_map_", host_fit_sizes, function(n) return map_cost(c, n, "host") end,
      c.values.host_pool_alloc_ns)
  end
end

-- Host ns of the releasing sync after freeing `size` at threshold 0,
-- minus the same sync with nothing to release.
local function release_cost(c, size, loc)
  local idle = med(c.reps, function() return host_ns(1, function() c.release(c.s) end) end)
  return med(c.reps, function()
    local p = pool { location = loc }
    local alloc, free = poolsh.bench_floor(p, c.s, size)
    free(alloc())
    settle()
    local ns = host_ns(1, function() c.release(c.s) end)
    p:destroy()
    return ns - idle
  end)
end

local function release_costs(c)
  if not c.release then
    c.notes.release_ns = "not measured: no sync releases memory"
    return
  end
  local t1, t2, small, big = fit_values(c, "release_", fit_sizes, function(n) return release_cost(c, n) end)
  c.notes.release_ns = ("sync releasing %d B: %.0f ns, %d B: %.0f ns, beyond a sync with nothing to release"):format(small, t1, big, t2)
  if c.host_pools then
    fit_values(c, "host_pool_release_", host_fit_sizes, function(n) return release_cost(c, n, "host") end)
  end
end

local function trim_cost(c, size, loc)
  return med(c.reps, function()
    local p = pool { release_threshold = "max", location = loc }
    local alloc, free = poolsh.bench_floor(p, c.s, size)
    free(alloc())
    c.s:sync()
    local ns = host_ns(1, function() p:trim(0) end)
    p:destroy()
    return ns
  end)
end

local function trim_costs(c)
  fit_values(c, "trim_", fit_sizes, function(n) return trim_cost(c, n) end)
  if c.host_pools then
    fit_values(c, "host_pool_trim_", host_fit_sizes, function(n) return trim_cost(c, n, "host") end)
  end
end

-- Median host ns of f(), reps batches of n.
local function batch(c, n, f) return sig3(med(c.reps, function() return host_ns(n, f) end)) end

local function api_costs(c)
  local v, s, n = c.values, c.s, c.batch
  v.sync_ns = batch(c, n, function() s:sync() end)
  v.query_ns = batch(c, n, function() s:query() end)
  v.api_ns = batch(c, n, function() poolsh.spin(s, 0) end)
  s:sync()
  local e = poolsh.event()
  v.event_api_ns = batch(c, n, function() e:record(s) end)
  s:sync()
  e:destroy()
  c.notes.api_ns = "host time of a kernel launch (a 0 ms spin), through poolsh's Lua binding"
end

-- Host ns of make(size) and of freeing its result, medians; prepare(b),
-- when given, runs between the two (untimed).
local function alloc_free(c, make, size, prepare)
  local a, f = {}, {}
  for r = 0, c.reps do
    local t0 = poolsh.now()
    local b = make(size)
    local t1 = poolsh.now()
    if prepare then prepare(b) end
    local t2 = poolsh.now()
    b:free()
    if r > 0 then a[r], f[r] = (t1 - t0) * 1e6, (poolsh.now() - t2) * 1e6 end
  end
  return median(a), median(f)
end

-- Sets values fixed and per (per GiB; default fixed .. "_per_gib") from
-- costs t1 at x1 bytes and t2 at x2.
local function set_line(c, fixed, x1, t1, x2, t2, per)
  local base, slope = line(x1 / GiB, t1, x2 / GiB, t2)
  c.values[fixed] = sig3(math.max(0, math.floor(base)))   -- below 1 ns: rounding
  c.values[per or fixed .. "_per_gib"] = sig3(math.max(0, slope))
end

-- A pageable buffer's pages faulted in, as copying into it does: register
-- and unregister it (the register pins every page).
local function touch_pages(b) poolsh.register(b); poolsh.unregister(b) end

local function memory_api(c)
  local v = c.values
  local _, big = fit_sizes(c)
  local ma, mf = alloc_free(c, poolsh.malloc, MiB)
  local ma2, mf2 = alloc_free(c, poolsh.malloc, big)
  local u = v.malloc_granularity or 1   -- cudaMalloc maps whole units
  local m1, m2 = -(-MiB // u) * u, -(-big // u) * u
  set_line(c, "malloc_ns", m1, ma, m2, ma2)
  set_line(c, "free_ns", m1, mf, m2, mf2)
  local small, hbig = 4096, c.host_big
  local pa, pf = alloc_free(c, poolsh.pinned, small)
  local pa2, pf2 = alloc_free(c, poolsh.pinned, hbig)
  set_line(c, "alloc_api_ns", small, pa, hbig, pa2, "pinned_alloc_ns_per_gib")
  set_line(c, "pinned_free_ns", small, pf, hbig, pf2)
  local ga, gf = alloc_free(c, poolsh.pageable, small)
  local ga2 = alloc_free(c, poolsh.pageable, hbig)
  set_line(c, "pageable_alloc_ns", small, ga, hbig, ga2)
  local _, gf2 = alloc_free(c, poolsh.pageable, hbig, touch_pages)
  v.pageable_free_ns = sig3(gf)
  v.pageable_free_ns_per_gib = sig3(math.max(0, (gf2 - gf) / (hbig / GiB)))
  c.notes.alloc_api_ns = "cudaHostAlloc: a two-point fit of 4 KiB and host_big; pinned_alloc_ns_per_gib its slope"
  c.notes.pageable_free_ns = "free of an untouched pageable buffer; per GiB: of one whose pages were registered"
end

-- cudaHostRegister / cudaHostUnregister of a pageable buffer of size:
-- medians of registering it again (its pages resident), and the first
-- register of a fresh buffer of that size.
local function register_cost(c, size)
  local b = poolsh.pageable(size)
  local r, u = {}, {}
  local first = host_ns(1, function() poolsh.register(b) end)
  poolsh.unregister(b)
  for i = 1, c.reps do
    r[i] = host_ns(1, function() poolsh.register(b) end)
    u[i] = host_ns(1, function() poolsh.unregister(b) end)
  end
  b:free()
  return median(r), median(u), first
end

local function register_costs(c)
  local small, big = 4096, c.host_big
  local r1, u1 = register_cost(c, small)
  local r2, u2, fresh = register_cost(c, big)
  set_line(c, "host_register_ns", small, r1, big, r2)
  set_line(c, "host_unregister_ns", small, u1, big, u2)
  c.values.pageable_touch_ns_per_gib = sig3(math.max(0, (fresh - r2) / (big / GiB)))
  c.notes.host_register_ns = "registering a buffer whose pages are resident; pageable_touch_ns_per_gib: a fresh buffer's first register beyond that"
end

---------------------------------------------------------------------------
-- Device durations: kernels, copies, spin.

-- Device ns of op(n) for a tiny and a large n; returns the fixed ns and
-- the bandwidth in GB/s (bytes per ns).
local function fit_device(c, op, tiny, n)
  op(tiny)   -- warm-up
  op(n)
  local t1 = med(c.reps, function() return device_ns(c, function() op(tiny) end) end)
  local t2 = med(c.reps, function() return device_ns(c, function() op(n) end) end)
  local fixed, per_byte = line(tiny, t1, n, t2)
  return fixed, 1 / per_byte
end

local function kernels(c)
  local p = pool { release_threshold = "max" }
  local n = c.fill_bytes
  local big, tiny = p:alloc(n, c.s), p:alloc(c.align, c.s)
  local fixed, bw = fit_device(c, function(k) poolsh.fill(k == n and big or tiny, 7, c.s) end, c.align, n)
  c.values.launch_ns, c.values.bw_fill = sig3(math.max(0, fixed)), sig3(bw)
  c.notes.bw_fill = ("event-timed fill of %d B and of %d B behind a spin"):format(n, c.align)
  local spin = med(c.reps, function() return device_ns(c, function() poolsh.spin(c.s, 20) end) end)
  c.extra.spin_20ms_ns = sig3(spin)
  c.notes.spin_20ms_ns = "a 20 ms spin, event-timed: the sim's spin is exact"
  big:free(); tiny:free()
  c.s:sync()
  p:destroy()
end

-- Fixed ns and GB/s of copies from src to dst (buffers of c.copy_bytes).
local function copy_fit(c, dst, src)
  return fit_device(c, function(k) poolsh.copy(dst, src, { bytes = k, stream = c.s }) end, 4, c.copy_bytes)
end

local function copies(c)
  local v, x, n = c.values, c.extra, c.copy_bytes
  local p = pool { release_threshold = "max" }
  local d1, d2 = p:alloc(n, c.s), p:alloc(n, c.s)
  local h1, h2, pg = poolsh.pinned(n), poolsh.pinned(n), poolsh.pageable(n)
  local fixed, h2d = copy_fit(c, d1, h1)
  local _, d2h = copy_fit(c, h1, d1)
  v.copy_ns = sig3(math.max(0, fixed))
  x.bw_pinned_h2d, x.bw_pinned_d2h = sig3(h2d), sig3(d2h)
  v.bw_pinned = sig3((h2d + d2h) / 2)
  v.bw_pageable_h2d = sig3(select(2, copy_fit(c, d1, pg)))
  v.bw_pageable_d2h = sig3(select(2, copy_fit(c, pg, d1)))
  v.bw_d2d = sig3(select(2, copy_fit(c, d2, d1)))
  v.bw_h2h = sig3(select(2, copy_fit(c, h2, h1)))
  c.notes.bw_pinned = ("mean of H2D and D2H (extra has each); event-timed copies of 4 B and %d B behind a spin; bytes counted once"):format(n)
  for _, b in ipairs { d1, d2, h1, h2, pg } do b:free() end
  c.s:sync()
  p:destroy()
end

---------------------------------------------------------------------------
-- Virtual memory management (poolsh.vmm, the driver's cuMem* calls).

-- v to 3 significant digits, in µs, from ms.
local function us3(ms) return sig3(ms * 1000) end

-- Host µs of each VMM call of one page cycle of `page` bytes (create,
-- map, set_access, unmap, release, in that order, as PyTorch's expandable
-- segments make them): the medians over c.reps cycles, each at its own
-- place of one reservation.
local function vmm_cycle(c, page)
  local vmm = poolsh.vmm
  local r <close> = vmm.reserve(c.reps * page)
  local t = { create = {}, map = {}, set_access = {}, unmap = {}, release = {} }
  for i = 1, c.reps do
    local off = (i - 1) * page
    local t0 = poolsh.now()
    local m = vmm.create(page)
    local t1 = poolsh.now()
    r:map(off, m)
    local t2 = poolsh.now()
    r:set_access(off, page)
    local t3 = poolsh.now()
    r:unmap(off, page)
    local t4 = poolsh.now()
    m:release()
    local t5 = poolsh.now()
    t.create[i], t.map[i], t.set_access[i] = t1 - t0, t2 - t1, t3 - t2
    t.unmap[i], t.release[i] = t4 - t3, t5 - t4
  end
  local out = {}
  for k, v in pairs(t) do out[k] = median(v) end
  return out
end

-- vmm_granularity and the VMM call costs (vmm_*_us): create, map,
-- set_access and unmap at one page (their cost hardly depends on the
-- size: 2 against 20 MiB on an H200), release as a base plus a part per
-- MiB from one page and ten.
local function vmm_costs(c)
  local vmm = poolsh.vmm
  local ok, g = pcall(function() return vmm.granularity() end)
  if not ok then
    c.notes.vmm_granularity = "not measured: " .. tostring(g)
    return
  end
  local rec = vmm.granularity { recommended = true }
  c.values.vmm_granularity = g
  c.notes.vmm_granularity = ("cuMemGetAllocationGranularity of device memory, minimum (recommended: %d B)"):format(rec)
  local small, big = vmm_cycle(c, g), vmm_cycle(c, 10 * g)
  c.values.vmm_create_us = us3(small.create)
  c.values.vmm_map_us = us3(small.map)
  c.values.vmm_set_access_us = us3(small.set_access)
  c.values.vmm_unmap_us = us3(small.unmap)
  local base, per = line(g / MiB, small.release * 1000, 10 * g / MiB, big.release * 1000)
  c.values.vmm_release_us = sig3(math.max(0, base))
  c.values.vmm_release_us_per_mib = sig3(math.max(0, per))
  c.notes.vmm_create_us = ("host time of one call on a page of %d B (create, map, set_access, unmap, release in turn; medians of %d); at %d B: create %.3g, map %.3g, set_access %.3g, unmap %.3g us"):format(
    g, c.reps, 10 * g, big.create * 1000, big.map * 1000, big.set_access * 1000, big.unmap * 1000)
  c.notes.vmm_release_us = ("release of a page of %d B: %.3g us, of %d B: %.3g us; a line through both"):format(
    g, small.release * 1000, 10 * g, big.release * 1000)
end

---------------------------------------------------------------------------
-- The device and the host.

local function meminfo_total()
  local f = io.open("/proc/meminfo", "r")
  if not f then return nil end
  local kb = f:read("a"):match("MemTotal:%s*(%d+)%s*kB")
  f:close()
  return kb and tonumber(kb) * 1024
end

local function identity(c)
  local d = poolsh.device()
  c.t.gpu, c.t.cc = d.name, d.cc
  c.t.driver = (d.driver and d.driver ~= "") and d.driver or
    (d.driver_api and ("CUDA driver API " .. d.driver_api) or "unknown")
  c.t.runtime = math.tointeger(d.runtime_api or 0) or 0
  c.t.date = os.date("!%Y-%m-%d")
  c.values.memory = d.total
  c.notes.memory = "poolsh.device().total (cudaMemGetInfo)"
  local host = poolsh.backend() == "sim" and poolsh.sim.profile().host_memory or meminfo_total()
  if host then
    c.values.host_memory = math.tointeger(host)
    c.notes.host_memory = poolsh.backend() == "sim" and "the simulated host's size (no call measures it)"
      or "MemTotal of /proc/meminfo"
  end
end

local STEPS = {
  identity, geometry, placement, malloc_granularity, release_rules, release_rounding,
  destroyed_done, holes_and_runs, trim_rounding, max_size_rounding, reuse_rules, internal_deps, pool_kinds,
  pool_api, map_costs, release_costs, trim_costs, api_costs, memory_api, register_costs,
  kernels, copies, vmm_costs,
}

-- The settings of a run: repetitions and sizes.
local function context(quick)
  local t = { values = {}, facts = {}, notes = {}, extra = {} }
  local c = {
    t = t, values = t.values, facts = t.facts, notes = t.notes, extra = t.extra,
    s = poolsh.stream { blocking = false }, s2 = poolsh.stream { blocking = false },
    reps = quick and 3 or 7, batch = quick and 50 or 200, lead_ms = 2, busy_ms = 20,
    fill_bytes = (quick and 256 or 1024) * MiB, copy_bytes = (quick and 64 or 256) * MiB,
    host_big = (quick and 64 or 256) * MiB,
  }
  t.notes.method = ("poolsh calibrate%s: medians of %d repetitions; host costs through poolsh's Lua API include its binding's overhead"):format(quick and " --quick" or "", c.reps)
  return c
end

-- Scales the large sizes down on a small (simulated) device.
local function fit_memory(c)
  local cap = c.values.memory // 8
  while c.fill_bytes > cap and c.fill_bytes > MiB do c.fill_bytes = c.fill_bytes // 2 end
  while c.copy_bytes > cap // 2 and c.copy_bytes > MiB do c.copy_bytes = c.copy_bytes // 2 end
end

--- measure{quick = } -> the profile table of this device.
local function measure(opts)
  local c = context(opts.quick)
  for i, step in ipairs(STEPS) do
    step(c)
    if i == 1 then fit_memory(c) end
  end
  c.s:destroy(); c.s2:destroy()
  return c.t
end

local function parse(args)
  local o, i = {}, 1
  while i <= #args do
    local a = args[i]
    if a == "--quick" then o.quick = true
    elseif a == "--out" then
      i = i + 1
      o.out = args[i] or error("poolsh calibrate: --out needs a file name\n" .. USAGE, 0)
    elseif a:match("^%-%-out=") then o.out = a:sub(7)
    elseif a == "-h" or a == "--help" then o.help = true
    else error(("poolsh calibrate: unknown argument '%s'\n%s"):format(a, USAGE), 0) end
    i = i + 1
  end
  if o.out == "" then error("poolsh calibrate: --out needs a file name\n" .. USAGE, 0) end
  return o
end

-- "poolsh calibrate: cannot write OUT: why", from open_atomic's error.
local function cannot(out, e)
  local why = tostring(e):match(": ([^:]*)$") or tostring(e)
  error("poolsh calibrate: cannot write " .. out .. ": " .. why, 0)
end

-- Checks that `out` can be written, before measuring, without touching
-- what is there: its temporary is made and removed.
local function check_out(out)
  local ok, f = pcall(require("poolsh.core").open_atomic, out)
  if not ok then cannot(out, f) end
  f:abort()
end

-- Writes text to out as every saved file (poolsh.core.open_atomic): a
-- temporary beside it renamed into place, so a failure leaves whatever
-- was there, and a symlink at out is replaced, not followed.
local function write_out(out, text)
  local ok, e = pcall(function()
    local f <close> = require("poolsh.core").open_atomic(out)
    f:write(text)   -- a failed write makes the commit raise
    f:commit()
  end)
  if not ok then cannot(out, e) end
end

return function(args)
  local o = parse(args or {})
  if o.help then print(USAGE); return 0 end
  if o.out then check_out(o.out) end
  local t0 = poolsh.wallclock()
  local t = measure(o)
  profile.check(t, "measured profile")
  local text = profile.format(t)
  if o.out then write_out(o.out, text) else io.stdout:write(text) end
  for _, msg in ipairs(profile.fact_mismatches(t.facts)) do io.stderr:write("poolsh calibrate: ", msg, "\n") end
  io.stderr:write(("poolsh calibrate: measured %s in %.1f s%s\n"):format(
    t.gpu, poolsh.wallclock() - t0, o.out and (", wrote " .. o.out) or ""))
  return 0
end
