--- Probe: when do freed blocks join neighbouring free space into one run?
-- Pending frees (behind a spin) against completed ones, same stream and
-- across streams. Prints where each probing allocation lands.
-- Usage: poolsh scripts/calibrate/probe_free_merge.lua
local MiB, KiB = 1024 * 1024, 1024

local function exp(name, opts, body)
  local p = poolsh.pool(opts)
  local s, s2 = poolsh.stream(), poolsh.stream()
  local base
  local function at(b) base = base or b.addr; return ("@%.4f MiB"):format((b.addr - base) / MiB) end
  local function say(what, b)
    print(("%-30s %-44s %s  reserved %d MiB"):format(name, what, b and at(b) or "", p:stats().reserved // MiB))
  end
  local ok, err = pcall(body, p, s, s2, say, at)
  if not ok then print(name, "ERROR", err) end
  poolsh.sync()
end

local TM = { release_threshold = "max" }

exp("pending+fresh", TM, function(p, s, s2, say, at)
  local a = p:alloc(4 * MiB, s); at(a)
  poolsh.spin(s, "200 ms"); a:free(s)
  say("alloc 6 MiB on s", p:alloc(6 * MiB, s))
end)

exp("completed+fresh", TM, function(p, s, s2, say, at)
  local a = p:alloc(4 * MiB, s); at(a)
  a:free(s); poolsh.sleep("20 ms")
  say("alloc 6 MiB on s", p:alloc(6 * MiB, s))
end)

exp("pending+pending", TM, function(p, s, s2, say, at)
  local a, b, k = p:alloc(4 * MiB, s), p:alloc(4 * MiB, s), p:alloc(1 * KiB, s); at(a)
  poolsh.spin(s, "200 ms"); a:free(s); b:free(s)
  say("alloc 6 MiB on s", p:alloc(6 * MiB, s))
end)

exp("pending+pending-split", TM, function(p, s, s2, say, at)
  local a, b, k = p:alloc(4 * MiB, s), p:alloc(4 * MiB, s), p:alloc(1 * KiB, s); at(a)
  a:free(s); poolsh.spin(s, "200 ms"); b:free(s)
  say("alloc 6 MiB on s (A done, B pending)", p:alloc(6 * MiB, s))
end)

exp("retired+pending", TM, function(p, s, s2, say, at)
  local a, b, k = p:alloc(4 * MiB, s), p:alloc(4 * MiB, s), p:alloc(1 * KiB, s); at(a)
  a:free(s); s:sync(); poolsh.spin(s, "200 ms"); b:free(s)
  say("alloc 6 MiB on s", p:alloc(6 * MiB, s))
end)

exp("completed+completed", TM, function(p, s, s2, say, at)
  local a, b, k = p:alloc(4 * MiB, s), p:alloc(4 * MiB, s), p:alloc(1 * KiB, s); at(a)
  a:free(s); b:free(s); poolsh.sleep("20 ms")
  say("alloc 6 MiB on s", p:alloc(6 * MiB, s))
end)

exp("completed+fresh s2 opp1", TM, function(p, s, s2, say, at)
  local a = p:alloc(4 * MiB, s); at(a)
  a:free(s); poolsh.sleep("20 ms")
  say("alloc 6 MiB on s2", p:alloc(6 * MiB, s2))
end)

exp("completed+fresh s2 opp0", { release_threshold = "max", opportunistic = false }, function(p, s, s2, say, at)
  local a = p:alloc(4 * MiB, s); at(a)
  a:free(s); poolsh.sleep("20 ms")
  say("alloc 1 MiB on s2", p:alloc(1 * MiB, s2))
  say("alloc 6 MiB on s2", p:alloc(6 * MiB, s2))
  say("alloc 1 MiB on s", p:alloc(1 * MiB, s))
end)

exp("pending+fresh s2 event", TM, function(p, s, s2, say, at)
  local a = p:alloc(4 * MiB, s); at(a)
  poolsh.spin(s, "200 ms"); a:free(s)
  local e = poolsh.event(); e:record(s); s2:wait(e)
  say("alloc 6 MiB on s2 (waits on e)", p:alloc(6 * MiB, s2))
  say("alloc 2 MiB on s2", p:alloc(2 * MiB, s2))
end)

exp("pending+fresh same-size", TM, function(p, s, s2, say, at)
  local a = p:alloc(4 * MiB, s); at(a)
  poolsh.spin(s, "200 ms"); a:free(s)
  say("alloc 4 MiB on s", p:alloc(4 * MiB, s))
  say("alloc 1 MiB on s", p:alloc(1 * MiB, s))
end)

exp("pending-top-grow", TM, function(p, s, s2, say, at)
  local a = p:alloc(30 * MiB, s); at(a)
  poolsh.spin(s, "200 ms"); a:free(s)
  say("alloc 31 MiB on s", p:alloc(31 * MiB, s))
end)
