--- Benchmark: a pool alloc+free pair from a Lua loop against the same loop
-- in C (poolsh.bench_c), in one run, on a pool whose release threshold is
-- at its maximum. Prints the per-pair costs and their ratio.
-- Usage: poolsh scripts/bench_alloc.lua [pairs] [size] [rounds]
local poolsh = poolsh or require "poolsh"

local pairs_n = tonumber(arg and arg[1]) or 200000
local size = poolsh.size(arg and arg[2] or "1 MiB")
local rounds = tonumber(arg and arg[3]) or 7

local s = poolsh.stream()
local p = poolsh.pool { release_threshold = "max" }

local function lua_loop(n)
  local t0 = poolsh.wallclock()
  for _ = 1, n do
    local b = p:alloc(size, s)
    b:free()
  end
  return poolsh.wallclock() - t0
end

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

-- Warm up both paths (maps the pool's memory once).
lua_loop(pairs_n // 10)
poolsh.bench_c(p, s, size, pairs_n // 10)

local lua_t, c_t = {}, {}
for r = 1, rounds do
  collectgarbage()
  c_t[r] = poolsh.bench_c(p, s, size, pairs_n)
  lua_t[r] = lua_loop(pairs_n)
end
s:sync()
local lua_pair = median(lua_t) / pairs_n * 1e9
local c_pair = median(c_t) / pairs_n * 1e9
print(string.format("backend %s, device %s", poolsh.backend(), poolsh.device().name))
print(string.format("%d pairs of %s alloc+free, median of %d rounds", pairs_n,
                    poolsh.fmt(size), rounds))
print(string.format("C pair   %8.1f ns", c_pair))
print(string.format("Lua pair %8.1f ns", lua_pair))
print(string.format("ratio Lua/C = %.3f (target <= 1.25)", lua_pair / c_pair))
