--- Benchmark: replay speed on the sim (issue 11's target: at least 1
-- million events per 10 seconds on a 2-core machine). It times, on a
-- synthetic recording (poolsh.replay.synthetic: 4 streams, 4 KiB-64 MiB
-- blocks, about 1000 live):
--   1. reading the recording alone (its generator);
--   2. the engine over a Lua allocator that does nothing (the engine's cost);
--   3. the engine over the pool allocator (the figure that counts);
--   4. with "csv": the same events written as an RMM/poolsh CSV, read back
--      by poolsh.replay.read and replayed (needs poolsh.replay.rmm).
-- It prints the wall time and events per second, the CPU time (os.clock:
-- steadier on a shared machine), and Lua memory (after a full collection)
-- and the C heap (poolsh.bench_heap) after each.
-- Usage: poolsh --backend=sim scripts/bench_replay.lua [events (1000000)] [csv]
local poolsh = poolsh or require "poolsh"
local replay = require "poolsh.replay"

local n = math.tointeger(tonumber(arg and arg[1])) or 1000000
local csv = arg and arg[2] == "csv"

local function kib() collectgarbage(); collectgarbage(); return collectgarbage("count") end

local function heap()
  local h = poolsh.bench_heap()
  return h and ("  C heap %4.0f MiB"):format(h / 1048576) or ""
end

local cpu0 = os.clock()

local function report(what, events, seconds, extra)
  local cpu = os.clock() - cpu0
  print(("%-30s %8d events %6.2f s %9.0f events/s  cpu %5.2f s  Lua %5.0f KiB%s%s"):format(what, events,
    seconds, events / seconds, cpu, kib(), heap(), extra or ""))
  cpu0 = os.clock()
end

-- A Lua allocator that allocates nothing: blocks are sizes.
local null = { new = function()
  return { alloc = function(_, size) return size end, free = function() end,
           stats = function() return { reserved = 0, used = 0, segments_allocated = 0,
             driver_frees = 0, peak_reserved = 0, peak_used = 0 } end }
end }

local function synthetic() return replay.synthetic { events = n } end

assert(not poolsh.trace.recording(), "bench_replay: recording is on; replays must run without it")
print(("backend %s, %d events, Lua %s"):format(poolsh.backend(), n, _VERSION))

cpu0 = os.clock()
local t0, c = poolsh.wallclock(), 0
for _ in synthetic():events() do c = c + 1 end
report("1. read the recording", c, poolsh.wallclock() - t0)

cpu0 = os.clock()
local r = replay.run(synthetic(), { allocator = null })
report("2. engine, null allocator", r.events, r.seconds)

cpu0 = os.clock()
r = replay.run(synthetic(), { allocator = "pool" })
report("3. engine, pool allocator", r.events, r.seconds,
  ("  (in allocator calls %.2f s virtual; peak reserved %s)"):format(r.alloc_seconds, poolsh.fmt(r.peak_reserved)))
assert(not poolsh.trace.recording())

if csv then
  local path = os.tmpname() .. ".csv"
  local f = assert(io.open(path, "w"))
  f:write(replay.read.rmm_header, "\n")
  local actions = { alloc = "allocate", free = "free" }
  for op, addr, size, stream in synthetic():events() do
    f:write(("1,00:00:00.000000,%s,0x%x,%d,%d\n"):format(actions[op], addr, size, stream))
  end
  f:close()
  cpu0 = os.clock()
  local rec = replay.read.open(path)
  r = replay.run(rec, { allocator = "pool" })
  os.remove(path)
  report("4. " .. rec.format .. " CSV, pool allocator", r.events, r.seconds)
end
