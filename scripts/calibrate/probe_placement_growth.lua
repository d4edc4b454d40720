-- Probe for docs/calibration/h100-2026-11-24-placement.log.
-- Usage: poolsh --backend=cuda scripts/calibrate/probe_placement_growth.lua OUT
-- When does a stream's own free stop being preferred? (convnet #42: a just-freed
-- 64 MiB block was taken over an older 32 MiB hole for 16 MiB)
local P = poolsh
local MiB = 1048576
local out = {}
local function say(...) local s = table.concat({...}, " "); print(s); out[#out+1] = s end
local function case(name, between, spin)
  local p = P.pool{ release_threshold = "max" }
  local s = P.stream()
  local a = p:alloc(32 * MiB, s); local base = a.addr
  local x = p:alloc(1 * MiB, s)
  local b = p:alloc(64 * MiB, s); local y = p:alloc(1 * MiB, s)
  if spin then P.spin(s, spin) end
  a:free()
  local g = between and between(p, s)
  b:free()
  local n = p:alloc(16 * MiB, s)
  say(name, ("A@%.0f B@%.0f -> @%.3f"):format((a.addr - base) / MiB, (b.addr - base) / MiB, (n.addr - base) / MiB),
      g and ("(between: @%.0f)"):format((g.addr - base) / MiB) or "")
  n:free(); x:free(); y:free(); if g then g:free() end
  P.sync(); p:destroy(); s:destroy()
end
case("Y2 nothing between the frees")
case("Y1 a growth (96 MiB) between A's free and B's", function(p, s) return p:alloc(96 * MiB, s) end)
case("Y4 a small alloc from fresh space between", function(p, s) return p:alloc(1024 * 1024, s) end)
case("Y3 a growth between, frees pending (100 ms spin)", function(p, s) return p:alloc(96 * MiB, s) end, 100)
case("Y5 a host sleep (2 ms) between", function(p, s) P.sleep(2) end)
case("Y6 a 1 KiB alloc (carved from A) between", function(p, s) return p:alloc(1024, s) end)
io.open(arg[1], "w"):write(table.concat(out, "\n"), "\n")
