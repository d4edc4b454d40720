--- Benchmark: replay speed on the sim (issue 11's target: at least 1
-- million events per 10 seconds on a 2-core machine; issue 20's: `pool`
-- at 2.5 s for 10^6 events, `pytorch` and `cupy` at most 2x `pool` in the
-- same run, memory under 50 MiB beyond the live blocks). It times, on a
-- synthetic recording (poolsh.replay.synthetic: 4 streams, 4 KiB-64 MiB
-- blocks, about 1000 live):
--   1. reading the recording alone (its generator);
--   2. the engine over a Lua allocator that does nothing (the engine's cost);
--   3. the engine over each allocator named (default: pool), in one run so
--      that their times compare;
--   4. with "csv": the same events written as an RMM/poolsh CSV, read back
--      by poolsh.replay.read and replayed through `pool` (needs
--      poolsh.replay.rmm).
-- It prints the wall time and events per second, the CPU time (os.clock:
-- steadier on a shared machine), Lua memory (after a full collection) and
-- the C heap (poolsh.bench_heap, which holds Lua's heap too) after each,
-- and for phases 3 and 4 the most the C heap grew during the phase (read
-- every 16384 events, garbage included): the replay's own memory.
-- Usage: poolsh --backend=sim scripts/bench_replay.lua [events (1000000)] [csv] [pool] [cupy] [pytorch]
local poolsh = poolsh or require "poolsh"
local replay = require "poolsh.replay"

local n = math.tointeger(tonumber(arg and arg[1])) or 1000000
local csv, allocators = false, {}
for i = 2, #(arg or {}) do
  if arg[i] == "csv" then csv = true else allocators[#allocators + 1] = arg[i] end
end
if #allocators == 0 then allocators = { "pool" } end

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

-- opts for replay.run that keep the C heap's peak over the replay: the
-- heap is read every 16384 events (progress) and at the end.
local function watched(opts)
  local h0 = poolsh.bench_heap() or 0
  local w = { peak = 0 }
  opts.progress = function()
    local h = (poolsh.bench_heap() or 0) - h0
    if h > w.peak then w.peak = h end
  end
  function w.text()
    opts.progress()
    return ("  heap peak +%.1f MiB"):format(w.peak / 1048576)
  end
  return opts, w
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

for _, name in ipairs(allocators) do
  kib()
  cpu0 = os.clock()
  local opts, w = watched { allocator = name }
  r = replay.run(synthetic(), opts)
  report("3. engine, " .. name, r.events, r.seconds,
    ("%s  (in allocator calls %.2f s virtual; peak reserved %s)"):format(w.text(), r.alloc_seconds,
      poolsh.fmt(r.peak_reserved)))
  assert(not poolsh.trace.recording())
end

if csv then
  local path = os.tmpname() .. ".csv"
  local f = assert(io.open(path, "w"))
  f:write(replay.read.rmm_header, "\n")
  local actions = { alloc = "allocate", free = "free" }
  for op, addr, size, stream in synthetic():events() do
    f:write(("1,00:00:00.000000,%s,0x%x,%d,%d\n"):format(actions[op], addr, size, stream))
  end
  f:close()
  kib()
  cpu0 = os.clock()
  local rec = replay.read.open(path)
  local opts, w = watched { allocator = "pool" }
  r = replay.run(rec, opts)
  os.remove(path)
  report("4. " .. rec.format .. " CSV, pool", r.events, r.seconds, w.text())
end
