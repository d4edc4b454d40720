--- Probe: which reserved chunks a sync or a trim gives back when only part
-- of a pool's memory is free (blocks spanning chunks, live blocks in high
-- or low chunks, completed-but-unsynced frees). Prints one line per
-- observation: experiment, step, reserved, and offsets of new blocks.
-- Usage: poolsh scripts/calibrate/probe_partial_release.lua
local MiB, KiB = 1024 * 1024, 1024
local s = poolsh.stream()

local function exp(name, opts, body)
  local p = poolsh.pool(opts or {})
  local base
  local function say(step, extra)
    local st = p:stats()
    print(("%-28s %-34s reserved %5.0f MiB  used %10d%s"):format(name, step,
      st.reserved / MiB, st.used, extra or ""))
  end
  local function alloc(size)
    local b = p:alloc(size, s)
    base = base or b.addr
    return b, ("  @%+.4f MiB"):format((b.addr - base) / MiB)
  end
  local ok, err = pcall(body, p, say, alloc)
  if not ok then print(name, "ERROR", err) end
  poolsh.sync()
  p:destroy()
end

exp("big-then-small", {}, function(p, say, alloc)
  local a, o1 = alloc(40 * MiB); say("alloc A 40MiB", o1)
  local b, o2 = alloc(1 * KiB); say("alloc B 1KiB", o2)
  a:free(s); s:sync(); say("free A, sync")
  local c, o3 = alloc(1 * KiB); say("alloc C 1KiB", o3)
  b:free(s); c:free(s); s:sync(); say("free B C, sync")
end)

exp("small-then-big", {}, function(p, say, alloc)
  local b, o2 = alloc(1 * KiB); say("alloc B 1KiB", o2)
  local a, o1 = alloc(40 * MiB); say("alloc A 40MiB", o1)
  a:free(s); s:sync(); say("free A, sync")
  local c, o3 = alloc(40 * MiB); say("alloc C 40MiB", o3)
  b:free(s); c:free(s); s:sync(); say("free B C, sync")
end)

exp("live-in-top-chunk", {}, function(p, say, alloc)
  local x = {}
  for i = 1, 3 do local b, o = alloc(16 * MiB); x[i] = b; say("alloc 16MiB #" .. i, o) end
  local d, o = alloc(20 * MiB); say("alloc D 20MiB", o)
  x[1]:free(s); x[2]:free(s); s:sync(); say("free #1 #2, sync")
  local e, o2 = alloc(16 * MiB); say("alloc E 16MiB", o2)
  e:free(s); x[3]:free(s); s:sync(); say("free E #3, sync")
  d:free(s); s:sync(); say("free D, sync")
end)

exp("live-in-bottom-chunk", {}, function(p, say, alloc)
  local x = {}
  for i = 1, 8 do local b, o = alloc(16 * MiB); x[i] = b; if i == 1 or i == 8 then say("alloc 16MiB #" .. i, o) end end
  for i = 2, 8 do x[i]:free(s) end
  s:sync(); say("free #2-#8, sync")
  x[1]:free(s); s:sync(); say("free #1, sync")
end)

exp("big-spanning-small-after", {}, function(p, say, alloc)
  local a, o1 = alloc(100 * MiB); say("alloc A 100MiB", o1)
  local b, o2 = alloc(1 * KiB); say("alloc B 1KiB", o2)
  a:free(s); s:sync(); say("free A, sync")
  local c, o3 = alloc(64 * MiB); say("alloc C 64MiB", o3)
  c:free(s); s:sync(); say("free C, sync")
  b:free(s); s:sync(); say("free B, sync")
end)

exp("trim-live-top", { release_threshold = "max" }, function(p, say, alloc)
  local x = {}
  for i = 1, 8 do local b = alloc(16 * MiB); x[i] = b end
  say("8 x 16MiB")
  for i = 1, 7 do x[i]:free(s) end
  s:sync(); say("free #1-#7, sync")
  p:trim(0); say("trim(0)")
  local e, o = alloc(16 * MiB); say("alloc E 16MiB", o)
  e:free(s); x[8]:free(s); s:sync(); p:trim(0); say("free all, trim(0)")
end)

exp("trim-targets", { release_threshold = "max" }, function(p, say, alloc)
  local x = {}
  for i = 1, 8 do x[i] = alloc(16 * MiB) end
  for i = 1, 8 do x[i]:free(s) end
  s:sync(); say("8x16MiB freed, sync")
  for _, k in ipairs { 127, 97, 96, 95, 65, 64, 63, 33, 32, 31, 1, 0 } do
    p:trim(k * MiB); say("trim(" .. k .. " MiB)")
  end
end)

exp("trim-completed-unsynced", { release_threshold = "max" }, function(p, say, alloc)
  local a = alloc(64 * MiB); say("alloc 64MiB")
  a:free(s); poolsh.sleep("50 ms"); say("free, sleep 50ms")
  p:trim(0); say("trim(0) unsynced")
  s:sync(); p:trim(0); say("sync, trim(0)")
end)

exp("trim-pending", { release_threshold = "max" }, function(p, say, alloc)
  local a = alloc(64 * MiB); say("alloc 64MiB")
  poolsh.spin(s, "200 ms"); a:free(s); say("spin 200ms, free")
  p:trim(0); say("trim(0) pending")
  s:sync(); say("sync")
  p:trim(0); say("trim(0)")
end)

exp("threshold-mid", { release_threshold = "50 MiB" }, function(p, say, alloc)
  local a, o1 = alloc(16 * MiB); local b, o2 = alloc(32 * MiB); local c, o3 = alloc(48 * MiB)
  say("16+32+48", o1 .. o2 .. o3)
  b:free(s); s:sync(); say("free 32 (middle), sync")
  a:free(s); s:sync(); say("free 16, sync")
  c:free(s); s:sync(); say("free 48, sync")
end)

exp("reset-high-in-use", {}, function(p, say, alloc)
  local a = alloc(64 * MiB); local b = alloc(1 * MiB); say("64MiB + 1MiB")
  a:free(s); s:sync(); say("free 64, sync")
  local st = p:stats(); print("  high before reset", st.reserved_high, st.used_high)
  p:reset_high(); st = p:stats(); print("  high after reset", st.reserved_high, st.used_high)
  b:free(s); s:sync(); say("free b, sync")
  st = p:stats(); print("  high at end", st.reserved_high, st.used_high)
end)

exp("huge", {}, function(p, say, alloc)
  for _, n in ipairs { 1, 512, 2048, 4096 } do
    local a, o = alloc(n * MiB + 1); say(n .. " MiB+1", o)
    a:free(s); s:sync(); say("free, sync")
  end
end)

exp("max-size-40", { max_size = "40 MiB" }, function(p, say, alloc)
  local a = alloc(40 * MiB); say("40 MiB")
  local ok, e = pcall(alloc, 30 * MiB); say("30 MiB more: " .. tostring(ok and "ok" or e))
end)

-- Placement: is the run at the arena's top taken last, or by best fit?
exp("top-last-fresh", { release_threshold = "max" }, function(p, say, alloc)
  local x, o1 = alloc(16 * MiB); local y, o2 = alloc(12 * MiB); say("X 16, Y 12", o1 .. o2)
  x:free(s); s:sync(); say("free X, sync")
  local z, o3 = alloc(1 * MiB); say("alloc 1 MiB", o3)
end)

exp("top-run-freed-plus-fresh", { release_threshold = "max" }, function(p, say, alloc)
  local x, o1 = alloc(16 * MiB); local y, o2 = alloc(12 * MiB); say("X 16, Y 12", o1 .. o2)
  y:free(s); s:sync(); say("free Y, sync")
  local z, o3 = alloc(1 * MiB); say("alloc 1 MiB", o3)
  local w, o4 = alloc(14 * MiB); say("alloc 14 MiB", o4)
end)

exp("holes-vs-small-top", { release_threshold = "max" }, function(p, say, alloc)
  local a = alloc(4 * MiB); local k1 = alloc(1 * MiB); local b = alloc(8 * MiB)
  local k2 = alloc(1 * MiB); local f = alloc(16 * MiB); say("4,1,8,1,16 (top fresh 2 MiB)")
  a:free(s); b:free(s); s:sync(); say("free the 4 and the 8, sync")
  local c, o = alloc(1 * MiB); say("alloc 1 MiB", o)
  local d, o2 = alloc(3 * MiB); say("alloc 3 MiB", o2)
  local e, o3 = alloc(6 * MiB); say("alloc 6 MiB", o3)
end)

exp("top-is-freed-block", { release_threshold = "max" }, function(p, say, alloc)
  local a = alloc(8 * MiB); local b = alloc(8 * MiB); local c = alloc(16 * MiB); say("8,8,16")
  a:free(s); c:free(s); s:sync(); say("free 1st and 3rd, sync")
  local d, o = alloc(4 * MiB); say("alloc 4 MiB", o)
  local e, o2 = alloc(10 * MiB); say("alloc 10 MiB", o2)
end)

exp("middle-chunk-hole", {}, function(p, say, alloc)
  local a = alloc(32 * MiB); local b = alloc(32 * MiB); local c = alloc(32 * MiB); say("32,32,32")
  b:free(s); s:sync(); say("free middle, sync")
  local d, o = alloc(1 * KiB); say("alloc 1 KiB", o)
  local e, o2 = alloc(40 * MiB); say("alloc 40 MiB", o2)
end)

exp("cross-stream-top", { release_threshold = "max" }, function(p, say, alloc)
  local s2 = poolsh.stream()
  local a = alloc(4 * MiB); local b = alloc(4 * MiB); say("A 4, B 4 on s")
  poolsh.spin(s, "300 ms"); a:free(s); say("spin 300ms on s, free A on s")
  local c = p:alloc(1 * MiB, s2); say("alloc 1 MiB on s2", ("  @%+.4f MiB"):format((c.addr - b.addr) / MiB + 4))
  s:sync(); s2:sync()
end)

local d = poolsh.device()
print("device", d.name, d.driver, d.driver_api, d.runtime_api, d.total, d.free)
local m = poolsh.malloc(1 * MiB)
local d2 = poolsh.device()
print("malloc 1MiB: free drops by", d.free - d2.free)
m:free()
