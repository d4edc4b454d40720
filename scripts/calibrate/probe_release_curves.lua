-- Probe: map/release/trim curves, host memory and malloc costs by size, when a destroyed busy stream releases (docs/calibration/h100-2026-11-23-curves.log).
-- Usage: poolsh --backend=cuda scripts/calibrate/probe_release_curves.lua OUT.txt
local P = poolsh
local function med(t) local c = {}; for i, v in ipairs(t) do c[i] = v end; table.sort(c); return c[(#c + 1) // 2] end
local function mean(t) local s = 0; for _, v in ipairs(t) do s = s + v end; return s / #t end
local function us(ms) return ("%.1f"):format(ms * 1000) end
local out = {}
local function say(...) local s = table.concat({...}, " "); print(s); out[#out+1] = s end
local function time(fn) local t = P.now(); fn(); return P.now() - t end
local s = P.stream()
-- cliff loop, per-round distribution, 3 repetitions each
for rep = 1, 3 do
  for _, thr in ipairs{ 0, "max" } do
    local p = P.pool{ release_threshold = thr }
    local R = {}
    for i = 1, 100 do R[i] = time(function() local b = p:alloc("64 MiB", s); b:free(); s:sync() end) end
    say("cliffround thr", tostring(thr), "rep", rep, "median_us", us(med(R)), "mean_us", us(mean(R)), "max_us", us(math.max(table.unpack(R))))
    p:destroy()
  end
end
-- the scenario's exact loop, total
do
  local function loop(p) local t0 = P.now(); for _ = 1, 100 do local b = p:alloc("64 MiB", s); b:free(); s:sync() end; return P.now() - t0 end
  for rep = 1, 3 do
    local p0 = P.pool{ release_threshold = 0 }; local a = loop(p0)
    local pm = P.pool{ release_threshold = "max" }; local b = loop(pm)
    say("scenario_loop rep", rep, "t0_us_round", us(a / 100), "tmax_us_round", us(b / 100), "ratio", ("%.1f"):format(a / b))
    p0:destroy(); pm:destroy()
  end
end
-- release and map curves: medians of 25
for _, mib in ipairs{ 2, 32, 64, 128, 256, 512, 1024 } do
  local p = P.pool{ release_threshold = 0 }
  local A, S = {}, {}
  for i = 1, 25 do local b; A[i] = time(function() b = p:alloc(mib * 1048576, s) end); b:free(); S[i] = time(function() s:sync() end) end
  say("curve MiB", mib, "map_us", us(med(A)), "release_sync_us", us(med(S)))
  p:destroy()
end
-- host pool curves
for _, mib in ipairs{ 2, 32, 64, 256 } do
  local p = P.pool{ location = "host", release_threshold = 0 }
  local A, S, W = {}, {}, {}
  for i = 1, 5 do local b; A[i] = time(function() b = p:alloc(mib * 1048576, s) end)
    local c; W[i] = time(function() c = p:alloc(512, s) end); c:free()
    b:free(); S[i] = time(function() s:sync() end) end
  say("hostpool MiB", mib, "map_us", us(med(A)), "warm_small_alloc_us", us(med(W)), "release_sync_us", us(med(S)))
  local pm = P.pool{ location = "host", release_threshold = "max" }
  local b = pm:alloc(mib * 1048576, s); b:free(); s:sync()
  local t = time(function() pm:trim(0) end)
  say("hostpool MiB", mib, "trim_us", us(t)); pm:destroy(); p:destroy()
end
-- device pool trim
for _, mib in ipairs{ 32, 256, 1024 } do
  local pm = P.pool{ release_threshold = "max" }
  local T = {}
  for i = 1, 5 do local b = pm:alloc(mib * 1048576, s); b:free(); s:sync(); T[i] = time(function() pm:trim(0) end) end
  say("devtrim MiB", mib, "trim_us", us(med(T))); pm:destroy()
end
-- host memory costs
for _, mib in ipairs{ 1, 16, 64, 256 } do
  local A, F, PA, R, U, PF, PF2 = {}, {}, {}, {}, {}, {}, {}
  for i = 1, 5 do
    local b; A[i] = time(function() b = P.pinned(mib * 1048576) end); F[i] = time(function() b:free() end)
    local g; PA[i] = time(function() g = P.pageable(mib * 1048576) end)
    R[i] = time(function() P.register(g) end); U[i] = time(function() P.unregister(g) end)
    PF[i] = time(function() g:free() end)
    local g2 = P.pageable(mib * 1048576); PF2[i] = time(function() g2:free() end)
  end
  say("hostmem MiB", mib, "pinned_alloc_us", us(med(A)), "pinned_free_us", us(med(F)), "pageable_alloc_us", us(med(PA)), "register_us", us(med(R)), "unregister_us", us(med(U)), "pageable_free_after_register_us", us(med(PF)), "pageable_free_untouched_us", us(med(PF2)))
end
-- malloc curve
for _, mib in ipairs{ 1, 2, 64, 256, 1024 } do
  local A, F = {}, {}
  for i = 1, 9 do local b; A[i] = time(function() b = P.malloc(mib * 1048576) end); F[i] = time(function() b:free() end) end
  say("malloc MiB", mib, "alloc_us", us(med(A)), "free_us", us(med(F)))
end
-- destroy of a busy stream at threshold 0: when is the memory released?
do
  local p = P.pool{ release_threshold = 0 }
  local s5 = P.stream()
  local b = p:alloc("64 MiB", s5); P.spin(s5, 30); b:free()
  local t0 = P.now(); s5:destroy()
  local seen = {}
  for i = 1, 12 do P.sleep(5); seen[#seen+1] = ("%.0fms:%d"):format(P.now() - t0, p:stats{estimates=false}.reserved // 1048576) end
  say("destroy_busy_poll", table.concat(seen, " "))
  -- busy, threshold max: nothing to release
  local pm = P.pool{ release_threshold = "max" }
  local s6 = P.stream()
  local b6 = pm:alloc("64 MiB", s6); P.spin(s6, 10); b6:free(); s6:destroy(); P.sleep(20)
  say("destroy_busy_max reserved", pm:stats{estimates=false}.reserved // 1048576)
  -- destroy idle stream with a live block on it: does the free of others release?
  local s7 = P.stream()
  local keep = p:alloc("32 MiB", s7); local gone = p:alloc("32 MiB", s7); gone:free()
  s7:destroy()
  say("destroy_idle_with_live reserved", p:stats{estimates=false}.reserved // 1048576)
  keep:free(s); P.sync()
  say("after free+sync reserved", p:stats{estimates=false}.reserved // 1048576)
  -- does an event sync or query release? (facts say query does not)
  p:destroy(); pm:destroy()
end
io.open(arg[1], "w"):write(table.concat(out, "\n"), "\n")
