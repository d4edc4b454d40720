-- Probe: joined pending frees and ties between equal holes (docs/calibration/h100-2026-11-23-deps.log).
-- Usage: poolsh --backend=cuda scripts/calibrate/probe_pending_ties.lua OUT.txt
local P = poolsh
local out = {}
local function say(...) local s = table.concat({...}, " "); print(s); out[#out+1] = s end
local MiB = 1048576
local function r(b) return (b.reused and ("reused(" .. tostring(b.reuse_rule) .. ",b" .. tostring(b.reused_from) .. ")") or "fresh") end
local base
local function at(b) return ("@%d"):format((b.addr - base) // MiB) end
local function case(name, fn)
  local p = P.pool{ release_threshold = "max", opportunistic = false }
  local s = { P.stream(), P.stream(), P.stream(), P.stream() }
  local probe = p:alloc(1, s[1]); base = probe.addr; probe:free(); P.sync()
  local res = fn(p, s)
  say(name, res)
  P.sync(); p:destroy()
  for _, x in ipairs(s) do x:destroy() end
end
local SPIN = 150
case("C9 detail", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  s[3]:wait(e1)
  local c = p:alloc(8 * MiB, s[1]); local cat = at(c) .. " " .. r(c); c:free(); e1:record(s[1])
  local b4 = p:alloc(4 * MiB, s[3]); local b8 = p:alloc(8 * MiB, s[3])
  local x = "a" .. at(a) .. " c" .. cat .. " b4:" .. r(b4) .. at(b4) .. " b8:" .. r(b8) .. at(b8); b4:free(); b8:free(); return x end)
case("C9b no re-record", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  s[3]:wait(e1)
  local c = p:alloc(8 * MiB, s[1]); local cat = at(c) .. " " .. r(c); c:free()
  local b4 = p:alloc(4 * MiB, s[3])
  local x = "c" .. cat .. " b4:" .. r(b4) .. at(b4); b4:free(); return x end)
case("C9c re-record, c elsewhere (2 MiB)", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); local keep = p:alloc(1 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  s[3]:wait(e1)
  local c = p:alloc(8 * MiB, s[1]); local cat = at(c) .. " " .. r(c); c:free(); e1:record(s[1])
  local b4 = p:alloc(4 * MiB, s[3])
  local x = "c" .. cat .. " b4:" .. r(b4) .. at(b4); b4:free(); keep:free(); return x end)
case("T1 two equal holes, same stream, synced, freed high then low", function(p, s)
  local b = {}
  for i = 1, 5 do b[i] = p:alloc(8 * MiB, s[1]) end
  b[4]:free(); b[2]:free(); P.sync()
  local n = p:alloc(8 * MiB, s[1]); local x = "holes " .. at(b[2]) .. "," .. at(b[4]) .. " -> " .. at(n) .. " " .. r(n)
  n:free(); b[1]:free(); b[3]:free(); b[5]:free(); return x end)
case("T2 two equal holes pending own stream, freed high then low", function(p, s)
  local b = {}
  for i = 1, 5 do b[i] = p:alloc(8 * MiB, s[1]) end
  P.spin(s[1], SPIN); b[4]:free(); b[2]:free()
  local n = p:alloc(8 * MiB, s[1]); local x = "holes " .. at(b[2]) .. "," .. at(b[4]) .. " -> " .. at(n) .. " " .. r(n)
  n:free(); b[1]:free(); b[3]:free(); b[5]:free(); return x end)
case("T3 equal holes pending on s2 (low) and s3 (high), s4 waits both", function(p, s)
  local b = {}
  for i = 1, 5 do b[i] = p:alloc(8 * MiB, s[1]) end
  s[1]:sync()
  P.spin(s[2], SPIN); b[2]:free(s[2]); local e2 = s[2]:record()
  P.spin(s[3], SPIN); b[4]:free(s[3]); local e3 = s[3]:record()
  s[4]:wait(e2); s[4]:wait(e3)
  local n = p:alloc(8 * MiB, s[4]); local x = "low(s2)" .. at(b[2]) .. " high(s3)" .. at(b[4]) .. " -> " .. at(n) .. " " .. r(n)
  n:free(); b[1]:free(); b[3]:free(); b[5]:free(); return x end)
case("T4 equal holes pending on s3 (low, freed later) and s2 (high)", function(p, s)
  local b = {}
  for i = 1, 5 do b[i] = p:alloc(8 * MiB, s[1]) end
  s[1]:sync()
  P.spin(s[2], SPIN); b[4]:free(s[2]); local e2 = s[2]:record()
  P.spin(s[3], SPIN); b[2]:free(s[3]); local e3 = s[3]:record()
  s[4]:wait(e2); s[4]:wait(e3)
  local n = p:alloc(8 * MiB, s[4]); local x = "low(s3)" .. at(b[2]) .. " high(s2)" .. at(b[4]) .. " -> " .. at(n) .. " " .. r(n)
  n:free(); b[1]:free(); b[3]:free(); b[5]:free(); return x end)
case("T5 equal holes pending on s2 (low) and s3 (high), waits reversed", function(p, s)
  local b = {}
  for i = 1, 5 do b[i] = p:alloc(8 * MiB, s[1]) end
  s[1]:sync()
  P.spin(s[2], SPIN); b[2]:free(s[2]); local e2 = s[2]:record()
  P.spin(s[3], SPIN); b[4]:free(s[3]); local e3 = s[3]:record()
  s[4]:wait(e3); s[4]:wait(e2)
  local n = p:alloc(8 * MiB, s[4]); local x = "low(s2)" .. at(b[2]) .. " high(s3)" .. at(b[4]) .. " -> " .. at(n) .. " " .. r(n)
  n:free(); b[1]:free(); b[3]:free(); b[5]:free(); return x end)
case("T6 pending own-stream hole vs completed-synced equal hole", function(p, s)
  local b = {}
  for i = 1, 5 do b[i] = p:alloc(8 * MiB, s[1]) end
  b[4]:free(); P.sync()
  P.spin(s[1], SPIN); b[2]:free()
  local n = p:alloc(8 * MiB, s[1]); local x = "low pending" .. at(b[2]) .. " high synced" .. at(b[4]) .. " -> " .. at(n) .. " " .. r(n)
  n:free(); b[1]:free(); b[3]:free(); b[5]:free(); return x end)
case("T7 two adjacent pending holes of s2 (same stream) vs one hole of s3", function(p, s)
  local b = {}
  for i = 1, 6 do b[i] = p:alloc(8 * MiB, s[1]) end
  s[1]:sync()
  P.spin(s[2], SPIN); b[2]:free(s[2]); b[3]:free(s[2]); local e2 = s[2]:record()
  P.spin(s[3], SPIN); b[5]:free(s[3]); local e3 = s[3]:record()
  s[4]:wait(e2); s[4]:wait(e3)
  local n = p:alloc(16 * MiB, s[4]); local m = p:alloc(8 * MiB, s[4])
  local x = "s2 pair" .. at(b[2]) .. " s3" .. at(b[5]) .. " -> 16MiB " .. at(n) .. " " .. r(n) .. ", 8MiB " .. at(m) .. " " .. r(m)
  n:free(); m:free(); b[1]:free(); b[4]:free(); b[6]:free(); return x end)
case("T8 adjacent pending holes of s2 and s3 (different streams), both waited: 16 MiB", function(p, s)
  local b = {}
  for i = 1, 5 do b[i] = p:alloc(8 * MiB, s[1]) end
  s[1]:sync()
  P.spin(s[2], SPIN); b[2]:free(s[2]); local e2 = s[2]:record()
  P.spin(s[3], SPIN); b[3]:free(s[3]); local e3 = s[3]:record()
  s[4]:wait(e2); s[4]:wait(e3)
  local n = p:alloc(16 * MiB, s[4])
  local x = "holes " .. at(b[2]) .. "(s2)," .. at(b[3]) .. "(s3) -> 16MiB " .. at(n) .. " " .. r(n)
  n:free(); b[1]:free(); b[4]:free(); b[5]:free(); return x end)
io.open(arg[1], "w"):write(table.concat(out, "\n"), "\n")
