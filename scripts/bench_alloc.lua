--- Benchmark: a pool alloc+free pair from a Lua loop against the same loop
-- in C (poolsh.bench_c: the backend's alloc and free with no Lua between),
-- in one run, on a pool whose release threshold is at its maximum.
-- Each round times a batch of C pairs and a batch of Lua pairs back to back
-- (alternating which goes first) and takes their ratio, so a machine that
-- speeds up or slows down during the run affects both; the figure is the
-- median of the rounds' ratios (issue 20's target: at most 1.45 on the
-- GPU). Many short rounds give a steadier median than a few long ones on a
-- shared machine; the A/A line (the Lua pair against itself) shows what
-- the method reads for no change.
-- Usage: poolsh scripts/bench_alloc.lua [pairs per batch] [size] [rounds]
local poolsh = poolsh or require "poolsh"

local batch = tonumber(arg and arg[1]) or 5000
local size = poolsh.size(arg and arg[2] or "1 MiB")
local rounds = tonumber(arg and arg[3]) or 201

local s = poolsh.stream()
local p = poolsh.pool { release_threshold = "max" }

-- The loop a user writes.
local function lua_loop(n)
  local t0 = poolsh.wallclock()
  for _ = 1, n do
    local b = p:alloc(size, s)
    b:free()
  end
  return poolsh.wallclock() - t0
end

-- Diagnostic: the same with the method lookups hoisted out of the loop.
local function lua_loop_hoisted(n)
  local alloc = p.alloc
  local first = alloc(p, size, s)
  local free = first.free
  free(first)
  local t0 = poolsh.wallclock()
  for _ = 1, n do
    free(alloc(p, size, s))
  end
  return poolsh.wallclock() - t0
end

-- Diagnostic: the floor, the thinnest binding of the two calls
-- (poolsh.bench_floor: no fields, no finalizer, no method lookup).
local floor_alloc, floor_free = poolsh.bench_floor(p, s, size)
local function lua_loop_floor(n)
  local t0 = poolsh.wallclock()
  for _ = 1, n do
    floor_free(floor_alloc())
  end
  return poolsh.wallclock() - t0
end

local function c_loop(n) return poolsh.bench_c(p, s, size, n) end

-- The user's loop with poolsh.sources (allocation sites remembered for
-- the leak report: on in the poolsh host) the other way round.
local sources_on = poolsh.sources()
local function lua_loop_sources(n)
  poolsh.sources(not sources_on)
  local t = lua_loop(n)
  poolsh.sources(sources_on)
  return t
end

-- The user's loop with poolsh.trace recording every operation.
local function lua_loop_traced(n)
  poolsh.trace.clear()
  poolsh.trace.start()
  local t = lua_loop(n)
  poolsh.trace.stop()
  return t
end

local function median(t)
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  table.sort(c)
  return c[(#c + 1) // 2], c[math.max(1, #c // 4)], c[#c - #c // 4]
end

-- Per round: batches of base and of other back to back (alternating which
-- goes first); returns the medians of base's and other's times (ns per
-- pair) and the per-round ratios other/base.
local function measure(other, base)
  base = base or c_loop
  local base_ns, other_ns, ratio = {}, {}, {}
  for r = 1, rounds do
    local tb, to
    if r % 2 == 1 then tb = base(batch); to = other(batch)
    else to = other(batch); tb = base(batch) end
    base_ns[r], other_ns[r], ratio[r] = tb / batch * 1e9, to / batch * 1e9, to / tb
  end
  return median(base_ns), median(other_ns), ratio
end

lua_loop(batch); c_loop(batch)          -- warm up: maps the pool's memory once

local c_pair, lua_pair, ratios = measure(lua_loop)
local _, hoisted, hoisted_ratios = measure(lua_loop_hoisted)
local _, floor, floor_ratios = measure(lua_loop_floor)
local _, traced, traced_ratios = measure(lua_loop_traced, lua_loop)
local _, sourced, sourced_ratios = measure(lua_loop_sources, lua_loop)
local _, _, same_ratios = measure(lua_loop, lua_loop)
poolsh.trace.clear()
s:sync()

local r, r_lo, r_hi = median(ratios)
print(string.format("backend %s, device %s", poolsh.backend(), poolsh.device().name))
print(string.format("%d rounds of %d %s alloc+free pairs in C and in Lua", rounds, batch,
                    poolsh.fmt(size)))
print(string.format("C pair                     %8.1f ns (median)", c_pair))
print(string.format("Lua pair                   %8.1f ns (median)", lua_pair))
print(string.format("  methods hoisted          %8.1f ns (median), ratio %.3f", hoisted,
                    (median(hoisted_ratios))))
print(string.format("  floor (bench_floor)      %8.1f ns (median), ratio %.3f", floor,
                    (median(floor_ratios))))
print(string.format("recording on (poolsh.trace) %8.1f ns (median), %.3f x the Lua pair (target <= 1.10)",
                    traced, (median(traced_ratios))))
print(string.format("sources %-3s (poolsh.sources) %6.1f ns (median), %.3f x the Lua pair (sources %s)",
                    sources_on and "off" or "on", sourced, (median(sourced_ratios)),
                    sources_on and "on" or "off"))
print(string.format("A/A (the Lua pair against itself)  %.3f x (no change reads 1)", (median(same_ratios))))
print(string.format("ratio Lua/C = %.3f (median of rounds; quartiles %.3f..%.3f; target <= 1.45 on the GPU)",
                    r, r_lo, r_hi))
