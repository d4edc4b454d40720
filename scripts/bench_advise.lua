--- Benchmark: `poolsh advise` (issue 21: "it takes seconds on recordings
-- of 10^5 events"). It writes a synthetic recording of N events
-- (poolsh.replay.synthetic: 4 streams, blocks of 4 KiB to 64 MiB, about
-- 1000 live) as an RMM CSV in a fresh temporary directory, then times the
-- whole advise (reading, every grid point replayed, the ranking) on it and
-- on each recording named after N, printing the wall and CPU time
-- (os.clock), the points replayed and the setting ranked first.
-- jobs=N replays N points at once (poolsh.advise.run's opts.jobs; default 1).
-- Usage: poolsh --backend=sim scripts/bench_advise.lua [events (100000)] [jobs=N] [FILE ...]
local poolsh = poolsh or require "poolsh"
local replay = require "poolsh.replay"
local advise = require "poolsh.advise"

local n = math.tointeger(tonumber(arg and arg[1])) or 100000
local files, jobs = {}, 1
for i = 2, #(arg or {}) do
  local j = arg[i]:match("^jobs=(%d+)$")
  if j then jobs = math.tointeger(tonumber(j)) else files[#files + 1] = arg[i] end
end

-- A fresh private directory (os.tmpname's name, made a directory).
local function tmpdir()
  local base = os.tmpname()
  os.remove(base)
  assert(os.execute("mkdir -m 700 '" .. base .. "'"), "cannot make " .. base)
  return base
end

local function time(label, path)
  local wall, cpu = poolsh.wallclock(), os.clock()
  local rec = replay.read.open(path)
  local a = advise.run(rec, { jobs = jobs, file = path })
  local replayed = #a.ranked
  io.stdout:write(("%-34s %7d events  %2d of %2d points replayed  jobs %d  wall %6.2f s  CPU here %6.2f s  first: %s\n"):format(
    label, a.best.result.events, replayed, #a.points, jobs, poolsh.wallclock() - wall, os.clock() - cpu,
    advise.label(a.best.conf)))
end

local dir = tmpdir()
local csv = dir .. "/synthetic.csv"
local f = assert(io.open(csv, "w"))
f:write(replay.read.rmm_header, "\n")
local actions = { alloc = "allocate", free = "free" }
for op, addr, size, stream in replay.synthetic({ events = n }):events() do
  f:write(("1,00:00:00.000000,%s,0x%x,%d,%d\n"):format(actions[op], addr, size, stream))
end
f:close()
local ok, err = pcall(time, ("synthetic RMM CSV"), csv)
os.remove(csv)
os.remove(dir)
if not ok then error(err, 0) end
for _, path in ipairs(files) do time(path:match("[^/]+$"), path) end
