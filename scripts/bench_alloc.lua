--- Benchmark: a pool alloc+free pair from a Lua loop against the same loop
-- in C (poolsh.bench_c: backend alloc+free with no Lua in between), in one
-- run, on a pool whose release threshold is at its maximum. Rounds
-- alternate C and Lua; the medians' ratio is the figure (target <= 1.25).
-- Usage: poolsh scripts/bench_alloc.lua [pairs] [size] [rounds]
local poolsh = poolsh or require "poolsh"

local pairs_n = tonumber(arg and arg[1]) or 200000
local size = poolsh.size(arg and arg[2] or "1 MiB")
local rounds = tonumber(arg and arg[3]) or 9

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
  local free = alloc(p, size, s).free
  local t0 = poolsh.wallclock()
  for _ = 1, n do
    free(alloc(p, size, s))
  end
  return poolsh.wallclock() - t0
end

local function c_loop(n) return poolsh.bench_c(p, s, size, n) end

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

-- ns per pair: median over rounds, each round running every loop once.
local function measure(loops)
  local times = {}
  for i = 1, #loops do times[i] = {} end
  for _ = 1, rounds do
    for i, f in ipairs(loops) do
      collectgarbage()
      times[i][#times[i] + 1] = f(pairs_n)
    end
  end
  local out = {}
  for i = 1, #loops do out[i] = median(times[i]) / pairs_n * 1e9 end
  return table.unpack(out)
end

lua_loop(pairs_n // 10)               -- warm up: maps the pool's memory once
c_loop(pairs_n // 10)

local c_pair, lua_pair, hoisted = measure { c_loop, lua_loop, lua_loop_hoisted }
local gc_mode = collectgarbage("incremental")
local _, lua_inc = measure { c_loop, lua_loop }
collectgarbage(gc_mode)
s:sync()

print(string.format("backend %s, device %s", poolsh.backend(), poolsh.device().name))
print(string.format("%d pairs of %s alloc+free per round, median of %d rounds", pairs_n,
                    poolsh.fmt(size), rounds))
print(string.format("C pair                     %8.1f ns", c_pair))
print(string.format("Lua pair                   %8.1f ns  (%s GC)", lua_pair, gc_mode))
print(string.format("  methods hoisted          %8.1f ns", hoisted))
print(string.format("  incremental GC           %8.1f ns", lua_inc))
print(string.format("ratio Lua/C = %.3f (target <= 1.25)", lua_pair / c_pair))
