-- Probe: host costs, copies, host pools, stream destroy (docs/calibration/h100-2026-11-23-probe.log).
-- Usage: poolsh --backend=cuda scripts/calibrate/probe_host_costs.lua OUT.txt
-- Measures what the scenarios and the sim's calibration need.
local P = poolsh
local function med(t) table.sort(t); return t[(#t + 1) // 2] end
local function us(ms) return ("%.2f"):format(ms * 1000) end
local out = {}
local function say(...) local s = table.concat({...}, " "); print(s); out[#out+1] = s end
local function time(fn) local t = P.now(); fn(); return P.now() - t end
say("device", P.device().name, P.device().driver, P.backend())
local s = P.stream()
-- 1. warm round
do
  local p = P.pool{ release_threshold = "max" }
  local A, F, S, E = {}, {}, {}, {}
  for i = 1, 300 do
    local b
    A[i] = time(function() b = p:alloc("64 MiB", s) end)
    F[i] = time(function() b:free() end)
    S[i] = time(function() s:sync() end)
    E[i] = time(function() s:sync() end)
  end
  say("warm64 alloc_us", us(med(A)), "free_us", us(med(F)), "sync_after_free_us", us(med(S)), "sync_idle_us", us(med(E)))
  -- sync after alloc only
  local S2 = {}
  local bs = {}
  for i = 1, 200 do bs[i] = p:alloc("1 MiB", s); S2[i] = time(function() s:sync() end) end
  for i = 1, 200 do bs[i]:free() end; s:sync()
  say("sync_after_alloc_us", us(med(S2)))
  local S3 = {}
  for i = 1, 200 do P.spin(s, 0); S3[i] = time(function() s:sync() end) end
  say("sync_after_empty_spin_us", us(med(S3)))
  p:destroy()
end
-- 2. cold rounds at threshold 0
for _, sz in ipairs{ "2 MiB", "32 MiB", "64 MiB", "256 MiB", "1 GiB" } do
  local p = P.pool{ release_threshold = 0 }
  local A, F, S, R = {}, {}, {}, {}
  for i = 1, 30 do
    local b
    A[i] = time(function() b = p:alloc(sz, s) end)
    F[i] = time(function() b:free() end)
    S[i] = time(function() s:sync() end)
    R[i] = A[i] + F[i] + S[i]
  end
  say("cold", sz, "alloc_us", us(med(A)), "free_us", us(med(F)), "sync_us", us(med(S)), "round_us", us(med(R)), "reserved", p:stats{estimates=false}.reserved)
  p:destroy()
end
-- cliff loop exact
do
  local function loop(p) local t0 = P.now(); for _ = 1, 100 do local b = p:alloc("64 MiB", s); b:free(); s:sync() end; return P.now() - t0 end
  local p0, pm = P.pool{ release_threshold = 0 }, P.pool{ release_threshold = "max" }
  loop(p0); loop(pm)
  local a, b = loop(p0), loop(pm)
  say("cliff0_round_us", us(a / 100), "cliffmax_round_us", us(b / 100), "ratio", ("%.1f"):format(a / b))
  p0:destroy(); pm:destroy()
end
-- 4. malloc / free
for _, sz in ipairs{ "1 MiB", "64 MiB", "1 GiB" } do
  local A, F = {}, {}
  for i = 1, 15 do local b; A[i] = time(function() b = P.malloc(sz) end); F[i] = time(function() b:free() end) end
  say("malloc", sz, "alloc_us", us(med(A)), "free_us", us(med(F)))
end
do
  local b = P.malloc("64 MiB")
  local s2 = P.stream()
  P.spin(s2, 50)
  local t = time(function() b:free() end)
  say("cudaFree_during_50ms_spin_ms", ("%.3f"):format(t))
  P.spin(s2, 50)
  local b2; local t2 = time(function() b2 = P.malloc("64 MiB") end)
  say("cudaMalloc_during_50ms_spin_ms", ("%.3f"):format(t2))
  s2:sync(); b2:free()
  local p = P.pool{}
  P.spin(s2, 50)
  local pb = p:alloc("64 MiB", s)
  local t3 = time(function() pb:free() end)
  say("pool_free_during_spin_ms", ("%.3f"):format(t3)); s2:sync(); s:sync(); p:destroy()
end
-- 5. pinned, pageable, register
for _, sz in ipairs{ "1 MiB", "64 MiB", "256 MiB" } do
  local A, F, PA, PF, R, U = {}, {}, {}, {}, {}, {}
  for i = 1, 7 do
    local b; A[i] = time(function() b = P.pinned(sz) end); F[i] = time(function() b:free() end)
    local g; PA[i] = time(function() g = P.pageable(sz) end)
    R[i] = time(function() P.register(g) end); U[i] = time(function() P.unregister(g) end)
    PF[i] = time(function() g:free() end)
  end
  say("host", sz, "pinned_alloc_us", us(med(A)), "pinned_free_us", us(med(F)), "pageable_alloc_us", us(med(PA)), "register_us", us(med(R)), "unregister_us", us(med(U)), "pageable_free_us", us(med(PF)))
end
-- 6. bandwidth (GB/s = bytes / ms / 1e6)
do
  local N = 256 * 1024 * 1024
  local d = P.malloc(N); local h = P.pinned(N); local g = P.pageable(N)
  local function bw(dst, src) P.copy(dst, src); P.sync(); local t = time(function() P.copy(dst, src); P.sync() end); return ("%.1f"):format(N / t / 1e6) end
  say("bw_GBps pinned_h2d", bw(d, h), "pinned_d2h", bw(h, d), "pageable_h2d", bw(d, g), "pageable_d2h", bw(g, d))
  P.register(g)
  say("bw_GBps registered_h2d", bw(d, g), "registered_d2h", bw(g, d))
  P.unregister(g)
  local ok, e = pcall(P.fill, g, 1); say("fill_pageable", tostring(ok), tostring(e))
  d:free(); h:free(); g:free()
end
-- 7. host pool
do
  local ok, hp = pcall(P.pool, { location = "host", release_threshold = 0 })
  if not ok then say("hostpool_error", tostring(hp)) else
    local b; local t = time(function() b = hp:alloc(1, s) end)
    say("hostpool first_alloc_us", us(t), "reserved", hp:stats{estimates=false}.reserved)
    local c; t = time(function() c = hp:alloc(100, s) end); say("hostpool warm_alloc_us", us(t), "reserved", hp:stats{estimates=false}.reserved)
    b:free(); c:free(); t = time(function() s:sync() end)
    say("hostpool after_sync_t0 reserved", hp:stats{estimates=false}.reserved, "sync_us", us(t))
    hp.release_threshold = "max"
    local x = hp:alloc("64 MiB", s); x:free(); s:sync()
    say("hostpool max after_sync reserved", hp:stats{estimates=false}.reserved)
    t = time(function() hp:trim(0) end)
    say("hostpool after_trim reserved", hp:stats{estimates=false}.reserved, "trim_us", us(t))
    local hb = hp:alloc("64 MiB", s); local db = P.malloc("64 MiB")
    local function bw(dst, src) P.copy(dst, src); P.sync(); local tt = time(function() P.copy(dst, src); P.sync() end); return ("%.1f"):format(64*1048576 / tt / 1e6) end
    say("hostpool bw h2d", bw(db, hb), "d2h", bw(hb, db))
    local okf, ef = pcall(P.fill, hb, 3); P.sync(); say("hostpool fill", tostring(okf), tostring(ef))
    hb:free(); db:free(); s:sync(); hp:destroy()
  end
end
-- 9. stream destroy release
do
  local p = P.pool{ release_threshold = "max" }
  local s3 = P.stream()
  local b = p:alloc("64 MiB", s3); b:free()
  s3:destroy()
  say("destroy idle stream: reserved", p:stats{estimates=false}.reserved)
  local p2 = P.pool{ release_threshold = 0 }
  local s4 = P.stream()
  local b4 = p2:alloc("64 MiB", s4); b4:free(); s4:destroy()
  say("destroy idle stream thr0: reserved", p2:stats{estimates=false}.reserved)
  local s5 = P.stream()
  local b5 = p2:alloc("64 MiB", s5); P.spin(s5, 30); b5:free(); s5:destroy()
  say("destroy busy stream thr0: reserved", p2:stats{estimates=false}.reserved)
  P.sleep(50)
  say("  after 50ms: reserved", p2:stats{estimates=false}.reserved)
  P.sync()
  say("  after device sync: reserved", p2:stats{estimates=false}.reserved)
  p:destroy(); p2:destroy()
end
io.open(arg[1], "w"):write(table.concat(out, "\n"), "\n")
