-- Probe for docs/calibration/h100-2026-11-24-placement.log.
-- Usage: poolsh --backend=cuda scripts/calibrate/probe_placement_ties.lua OUT [legacy]
-- Which hole a 16 MiB request takes when a smaller and a larger one fit (same stream).
local P = poolsh
local MiB = 1048576
local out = {}
local function say(...) local s = table.concat({...}, " "); print(s); out[#out+1] = s end
local function case(name, fn)
  local p = P.pool{ release_threshold = "max" }
  local s = (arg[2] == "legacy") and P.default_stream() or P.stream()
  local probe = p:alloc(1, s); local base = probe.addr; probe:free(); P.sync()
  local function at(b) return ("@%.3f"):format((b.addr - base) / MiB) end
  local res = fn(p, s, at)
  say(name, res)
  P.sync(); p:destroy(); if not s.default then s:destroy() end
end
local SEP = 1 * MiB
case("X1 A32 lower, B64 higher; free A then B", function(p, s, at)
  local a = p:alloc(32 * MiB, s); local x = p:alloc(SEP, s); local b = p:alloc(64 * MiB, s); local y = p:alloc(SEP, s)
  a:free(); b:free()
  local n = p:alloc(16 * MiB, s); local r = "A" .. at(a) .. " B" .. at(b) .. " -> " .. at(n)
  n:free(); x:free(); y:free(); return r end)
case("X2 A32 lower, B64 higher; free B then A", function(p, s, at)
  local a = p:alloc(32 * MiB, s); local x = p:alloc(SEP, s); local b = p:alloc(64 * MiB, s); local y = p:alloc(SEP, s)
  b:free(); a:free()
  local n = p:alloc(16 * MiB, s); local r = "A" .. at(a) .. " B" .. at(b) .. " -> " .. at(n)
  n:free(); x:free(); y:free(); return r end)
case("X3 B64 lower, A32 higher; free A then B", function(p, s, at)
  local b = p:alloc(64 * MiB, s); local x = p:alloc(SEP, s); local a = p:alloc(32 * MiB, s); local y = p:alloc(SEP, s)
  a:free(); b:free()
  local n = p:alloc(16 * MiB, s); local r = "A" .. at(a) .. " B" .. at(b) .. " -> " .. at(n)
  n:free(); x:free(); y:free(); return r end)
case("X4 as X1, synced before the request", function(p, s, at)
  local a = p:alloc(32 * MiB, s); local x = p:alloc(SEP, s); local b = p:alloc(64 * MiB, s); local y = p:alloc(SEP, s)
  a:free(); b:free(); s:sync()
  local n = p:alloc(16 * MiB, s); local r = "A" .. at(a) .. " B" .. at(b) .. " -> " .. at(n)
  n:free(); x:free(); y:free(); return r end)
case("X5 as X1, 1 KiB carved from A before B's free", function(p, s, at)
  local a = p:alloc(32 * MiB, s); local x = p:alloc(SEP, s); local b = p:alloc(64 * MiB, s); local y = p:alloc(SEP, s)
  a:free(); local k = p:alloc(1024, s); b:free()
  local n = p:alloc(16 * MiB, s); local r = "A" .. at(a) .. " k" .. at(k) .. " B" .. at(b) .. " -> " .. at(n)
  n:free(); k:free(); x:free(); y:free(); return r end)
case("X6 as X1, the stream busy (frees pending)", function(p, s, at)
  local a = p:alloc(32 * MiB, s); local x = p:alloc(SEP, s); local b = p:alloc(64 * MiB, s); local y = p:alloc(SEP, s)
  P.spin(s, 100); a:free(); b:free()
  local n = p:alloc(16 * MiB, s); local r = "A" .. at(a) .. " B" .. at(b) .. " -> " .. at(n)
  n:free(); x:free(); y:free(); return r end)
case("X7 A 24, B 40, C 64 (increasing, one separator each); free all in order", function(p, s, at)
  local a = p:alloc(24 * MiB, s); local x1 = p:alloc(SEP, s); local b = p:alloc(40 * MiB, s); local x2 = p:alloc(SEP, s)
  local c = p:alloc(64 * MiB, s); local x3 = p:alloc(SEP, s)
  a:free(); b:free(); c:free()
  local n = p:alloc(16 * MiB, s); local r = "A" .. at(a) .. " B" .. at(b) .. " C" .. at(c) .. " -> " .. at(n)
  n:free(); x1:free(); x2:free(); x3:free(); return r end)
case("X8 two equal 32 MiB holes, freed high then low (own stream, idle)", function(p, s, at)
  local a = p:alloc(32 * MiB, s); local x = p:alloc(SEP, s); local b = p:alloc(32 * MiB, s); local y = p:alloc(SEP, s)
  b:free(); a:free()
  local n = p:alloc(16 * MiB, s); local r = "A" .. at(a) .. " B" .. at(b) .. " -> " .. at(n)
  n:free(); x:free(); y:free(); return r end)
io.open(arg[1], "w"):write(table.concat(out, "\n"), "\n")
