--- Benchmark: what a pool costs as it fills. For N live blocks and N holes
-- (2N blocks of 1-7 KiB allocated on one stream from a pool at release
-- threshold "max", every other one freed), it times an alloc+free pair in
-- C (poolsh.bench_c) and from Lua, a s:sync() and a p:stats(), and reads
-- the host memory each live block costs (VmRSS before and after filling):
-- all of poolsh's (Buffers, ledger, backend), and the backend's alone
-- (the same fill done from C by poolsh.bench_fill, measured as the C heap
-- in use: poolsh.bench_heap). The resident size undercounts what reuses
-- memory freed by an earlier, smaller round. Then the cross-stream case:
-- N/2 of the live blocks freed on a stream `a` behind a long spin (pending,
-- and no other stream may use them), it times allocations on stream `b`,
-- each a search of the pool's space: from Lua, p:alloc on b freed on a
-- third stream `c` (so b has no young frees), and from C, poolsh.bench_fill
-- on b (per allocation; its frees included).
-- Targets (docs/performance.md): the pair at the largest N at most 2x the
-- pair at 1k, the same for the cross-stream case and after a sync; about
-- 200 bytes of host memory per live block.
-- Usage: poolsh scripts/bench_scale.lua [largest N (default 100000; 1000000
--        for the full run)] [pairs per timing (default 20000)]
--        [cross-stream allocations per timing (default 2000)]
local poolsh = poolsh or require "poolsh"

local largest = tonumber(arg and arg[1]) or 100000
local pairs_n = tonumber(arg and arg[2]) or 20000
local cross_n = tonumber(arg and arg[3]) or 2000
local size = 4096

-- Resident host memory in bytes (Linux), or nil.
local function rss()
  local f = io.open("/proc/self/status")
  if not f then return nil end
  local kb = f:read("a"):match("VmRSS:%s*(%d+)")
  f:close()
  return kb and tonumber(kb) * 1024
end

local function us(seconds, n) return seconds / n * 1e6 end

-- The Lua loop a user writes, n pairs.
local function lua_pairs(p, s, n)
  local t0 = poolsh.wallclock()
  for _ = 1, n do
    local b = p:alloc(size, s)
    b:free()
  end
  return poolsh.wallclock() - t0
end

local function measure(n)
  local s = poolsh.stream()
  local p = poolsh.pool { release_threshold = "max" }
  collectgarbage()
  collectgarbage()
  local before = rss()
  local blocks, seed = {}, 12345
  local t0 = poolsh.wallclock()
  for i = 1, 2 * n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    blocks[i] = p:alloc(1024 + seed % (6 * 1024 + 1), s)
  end
  for i = 1, 2 * n, 2 do blocks[i]:free(); blocks[i] = false end
  local fill = poolsh.wallclock() - t0
  collectgarbage()
  collectgarbage()
  local after = rss()
  local r = { n = n, fill = fill }
  r.c = us(poolsh.bench_c(p, s, size, pairs_n), pairs_n)
  r.lua = us(lua_pairs(p, s, pairs_n), pairs_n)
  t0 = poolsh.wallclock()
  s:sync()
  r.sync = us(poolsh.wallclock() - t0, 1)
  r.c_after = us(poolsh.bench_c(p, s, size, pairs_n), pairs_n)   -- holes now retired
  local k = 5
  t0 = poolsh.wallclock()
  for _ = 1, k do p:stats() end
  r.stats = us(poolsh.wallclock() - t0, k)
  r.bytes = before and after and (after - before) / n
  -- Cross-stream: b and c may not use a's frees (pending behind the spin).
  local a, b, c = poolsh.stream(), poolsh.stream(), poolsh.stream()
  poolsh.spin(a, "3600 s")
  for i = 2, 2 * n, 4 do blocks[i]:free(a); blocks[i] = false end
  t0 = poolsh.wallclock()
  for _ = 1, cross_n do p:alloc(size, b):free(c) end
  r.xlua = us(poolsh.wallclock() - t0, cross_n)
  t0 = poolsh.wallclock()
  local release_x = poolsh.bench_fill(p, b, cross_n // 2)
  r.xc = us(poolsh.wallclock() - t0, 2 * (cross_n // 2))
  release_x()
  for i = 2, 2 * n, 2 do if blocks[i] then blocks[i]:free() end end
  a:sync()
  a:destroy(); b:destroy(); c:destroy()
  blocks = nil
  s:sync()
  p:destroy()
  -- The backend's own bytes per live block: the same fill from C, with no
  -- Buffer and no ledger entry (less the 8 bytes bench_fill keeps per block).
  local q = poolsh.pool { release_threshold = "max" }
  collectgarbage()
  before = poolsh.bench_heap()
  local release = poolsh.bench_fill(q, s, n)
  after = poolsh.bench_heap()
  r.backend_bytes = before and after and (after - before) / n - 8
  release()
  s:sync()
  q:destroy()
  s:destroy()
  collectgarbage()
  return r
end

print(("poolsh bench_scale: backend %s, %s, pairs of %d B, %d pairs per timing")
      :format(poolsh.backend(), poolsh.device().name, size, pairs_n))
print(("%9s %10s %10s %12s %12s %12s %10s %12s %12s %10s %10s"):format("live", "C pair",
      "Lua pair", "C after sync", "s:sync()", "p:stats()", "fill s", "B/live block", "backend B",
      "C x-alloc", "Lua x-pair"))
local rows = {}
local n = 1000
while n <= largest do
  local r = measure(n)
  rows[#rows + 1] = r
  print(("%9d %8.3fus %8.3fus %10.3fus %10.1fus %10.1fus %10.2f %12s %12s %8.3fus %8.3fus")
        :format(r.n, r.c, r.lua, r.c_after, r.sync, r.stats, r.fill,
        r.bytes and ("%.0f"):format(r.bytes) or "?",
        r.backend_bytes and ("%.0f"):format(r.backend_bytes) or "?", r.xc, r.xlua))
  io.stdout:flush()
  n = n * 10
end
local first, last = rows[1], rows[#rows]
print(("ratio %d / %d live blocks: C pair %.2f, Lua pair %.2f, C after sync %.2f, "
       .. "C cross-stream %.2f, Lua cross-stream %.2f (target <= 2)")
      :format(last.n, first.n, last.c / first.c, last.lua / first.lua,
              last.c_after / first.c_after, last.xc / first.xc, last.xlua / first.xlua))
