-- Probe: which event dependencies the driver follows (docs/calibration/h100-2026-11-23-deps.log).
-- Usage: poolsh --backend=cuda scripts/calibrate/probe_event_deps.lua OUT.txt
-- Which event dependencies the driver follows for cross-stream reuse.
local P = poolsh
local out = {}
local function say(...) local s = table.concat({...}, " "); print(s); out[#out+1] = s end
local MiB = 1048576
local function r(b) return b.reused and ("reused(" .. tostring(b.reuse_rule) .. ")") or "fresh" end
local function case(name, fn)
  local p = P.pool{ release_threshold = "max", opportunistic = false }
  local s = { P.stream(), P.stream(), P.stream(), P.stream() }
  local res = fn(p, s)
  say(name, res)
  P.sync(); p:destroy()
  for _, x in ipairs(s) do x:destroy() end
end
local SPIN = 150
case("C1 one wait", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  s[3]:wait(e1); local b = p:alloc(4 * MiB, s[3]); local x = r(b); b:free(); return x end)
case("C2 two waits (e1 then e2)", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  local c = p:alloc(8 * MiB, s[2]); P.spin(s[2], SPIN); c:free(); local e2 = s[2]:record()
  s[3]:wait(e1); s[3]:wait(e2)
  local b4 = p:alloc(4 * MiB, s[3]); local b8 = p:alloc(8 * MiB, s[3])
  local x = "4MiB(from s1):" .. r(b4) .. " 8MiB(from s2):" .. r(b8); b4:free(); b8:free(); return x end)
case("C3 two waits (e2 then e1)", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  local c = p:alloc(8 * MiB, s[2]); P.spin(s[2], SPIN); c:free(); local e2 = s[2]:record()
  s[3]:wait(e2); s[3]:wait(e1)
  local b4 = p:alloc(4 * MiB, s[3]); local b8 = p:alloc(8 * MiB, s[3])
  local x = "4MiB(from s1):" .. r(b4) .. " 8MiB(from s2):" .. r(b8); b4:free(); b8:free(); return x end)
case("C4 transitive s1->s2->s3", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  s[2]:wait(e1); local e2 = s[2]:record(); s[3]:wait(e2)
  local b = p:alloc(4 * MiB, s[3]); local x = r(b); b:free(); return x end)
case("C4b transitive with work on s2", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  s[2]:wait(e1); P.spin(s[2], 1); local e2 = s[2]:record(); s[3]:wait(e2)
  local b = p:alloc(4 * MiB, s[3]); local x = r(b); b:free(); return x end)
case("C5 wait then own work", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  s[3]:wait(e1); P.spin(s[3], 1)
  local b = p:alloc(4 * MiB, s[3]); local x = r(b); b:free(); return x end)
case("C6 two frees before e1", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); local c = p:alloc(8 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); c:free(); local e1 = s[1]:record()
  s[3]:wait(e1)
  local b4 = p:alloc(4 * MiB, s[3]); local b8 = p:alloc(8 * MiB, s[3])
  local x = "4:" .. r(b4) .. " 8:" .. r(b8); b4:free(); b8:free(); return x end)
case("C7 three waits", function(p, s)
  local bl = {}
  for i = 1, 3 do local a = p:alloc((2 * i) * MiB, s[i]); P.spin(s[i], SPIN); a:free(); bl[i] = s[i]:record() end
  for i = 1, 3 do s[4]:wait(bl[i]) end
  local got = {}
  for i = 1, 3 do local b = p:alloc((2 * i) * MiB, s[4]); got[#got+1] = (2*i) .. "MiB:" .. r(b); b:free() end
  return table.concat(got, " ") end)
case("C8 waits, then the waiting stream frees and another waits on it", function(p, s)
  -- s1 frees a; s2 waits e1 and frees c; s3 waits e2 (after c's free): is a reusable by s3 (transitive), c (direct)?
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  local c = p:alloc(8 * MiB, s[2]); s[2]:wait(e1); P.spin(s[2], 1); c:free(); local e2 = s[2]:record()
  s[3]:wait(e2)
  local b4 = p:alloc(4 * MiB, s[3]); local b8 = p:alloc(8 * MiB, s[3])
  local x = "4MiB(s1, transitive):" .. r(b4) .. " 8MiB(s2, direct):" .. r(b8); b4:free(); b8:free(); return x end)
case("C9 event re-recorded after the wait", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  s[3]:wait(e1)
  local c = p:alloc(8 * MiB, s[1]); c:free(); e1:record(s[1])
  local b4 = p:alloc(4 * MiB, s[3]); local b8 = p:alloc(8 * MiB, s[3])
  local x = "4:" .. r(b4) .. " 8(freed after the wait):" .. r(b8); b4:free(); b8:free(); return x end)
case("C10 two waits same stream order (two events of s1)", function(p, s)
  local a = p:alloc(4 * MiB, s[1]); P.spin(s[1], SPIN); a:free(); local e1 = s[1]:record()
  local c = p:alloc(8 * MiB, s[1]); c:free(); local e1b = s[1]:record()
  s[3]:wait(e1); s[3]:wait(e1b)
  local b4 = p:alloc(4 * MiB, s[3]); local b8 = p:alloc(8 * MiB, s[3])
  local x = "4:" .. r(b4) .. " 8:" .. r(b8); b4:free(); b8:free(); return x end)
-- the pool_per_stream pattern, each allocation
do
  local SIZES = { 8 * MiB, 24 * MiB, 16 * MiB, 40 * MiB }
  local streams = {}; for i = 1, 4 do streams[i] = P.stream() end
  local shared = P.pool{ release_threshold = "max" }
  local last = {}
  for rr = 1, 3 do
    for i, s in ipairs(streams) do
      for j, e in pairs(last) do if j ~= i then s:wait(e) end end
      local k = (i + rr) % #SIZES + 1
      local x = shared:alloc(SIZES[k], s)
      local y = shared:alloc(SIZES[k % #SIZES + 1], s)
      say(("ppS r%d s%d x %dMiB %s from b%s @%d  y %dMiB %s from b%s @%d  reserved %d"):format(rr, i,
        SIZES[k] // MiB, r(x), tostring(x.reused_from), (x.addr - 0) % (1 << 30) // MiB,
        SIZES[k % #SIZES + 1] // MiB, r(y), tostring(y.reused_from), (y.addr - 0) % (1 << 30) // MiB,
        shared:stats{estimates=false}.reserved // MiB))
      P.spin(s, "1 ms")
      x:free(); y:free()
      last[i] = s:record()
    end
  end
  P.sync()
  say("ppS reserved_high", shared:stats{estimates=false}.reserved_high // MiB)
end
io.open(arg[1], "w"):write(table.concat(out, "\n"), "\n")
