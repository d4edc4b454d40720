--- poolsh replay: replays a recorded workload (a PyTorch snapshot, an RMM
-- log, a poolsh trace) through an allocator and prints what memory it
-- used (docs/replay.md).
local poolsh = require "poolsh"
local replay = require "poolsh.replay"
local cli = require "poolsh.replay.cli"

local USAGE = [[
usage: poolsh [--backend=cuda|sim] replay FILE [--allocator=NAME|PATH.lua]
         [--pool 'SETTINGS'] [--alloc-conf 'PYTORCH_CUDA_ALLOC_CONF']
         [--streams=keep|one] [--max-streams N]
         [--max-inflate SIZE] [--json] [--report FILE.html]
Replays every allocation and free of FILE (a PyTorch snapshot .pickle or
.pickle.gz, an RMM log .csv, a poolsh trace .json or .csv) in order through
an allocator: pool (default: a cudaMemPool), pytorch, cupy, or a Lua module.
--pool gives the allocator's settings as the body of a Lua table
('release_threshold = "max", opportunistic = false'); --alloc-conf gives
the pytorch allocator PyTorch's own setting, as PYTORCH_CUDA_ALLOC_CONF
holds it ('max_split_size_mb:128'). --streams=one puts
every event on one stream; a replay makes at most 64 streams unless
--max-streams says more. A .pickle.gz may inflate to 64 times its size
(at least 64 MiB) unless --max-inflate says more ('4 GiB'). --json prints
the result as one JSON object; --report writes the replay's trace as an
HTML page.]]

local function fail(msg) error("poolsh replay: " .. msg, 0) end
local function out(s) io.stdout:write(s) end

local function mib(n) return poolsh.fmt(n) end

local function summary(o, rec, r)
  local clock = poolsh.backend() == "sim" and "virtual clock" or "wall clock"
  out(("%s: %s recording, %d events, %d stream%s, %d initial blocks\n"):format(rec.file, rec.format,
    r.events, #(rec.streams or {}), #(rec.streams or {}) == 1 and "" or "s", #(rec.initial or {})))
  out(("allocator %s on %s (streams: %s)\n"):format(o.allocator or "pool", poolsh.backend(), o.streams))
  local e = rec.expected
  -- the peak beside what the recording reserved, when it says
  local vs = e and math.type(e.peak_reserved) == "integer"
    and ": " .. require("poolsh.replay.compare").difference(r.peak_reserved, e.peak_reserved) or ""
  out(("  peak reserved   %s%s\n  peak used       %s\n  final reserved  %s\n"):format(
    mib(r.peak_reserved), vs, mib(r.peak_used), mib(r.final_reserved)))
  out(("  segments allocated %d, driver frees %d, failed allocations %d\n"):format(
    r.segments_allocated, r.driver_frees, r.failed))
  out(("  %.3f s, %.3f s in allocator calls (%s)\n"):format(r.seconds, r.alloc_seconds, clock))
  if e and e.peak_reserved then
    out(("recorded: peak reserved %s, segments allocated %s\n"):format(mib(e.peak_reserved),
      tostring(e.segments_allocated)))
  end
end

-- The result as one JSON object, its keys in replay.keys' order; integers
-- in full (lua-cjson writes 14 digits).
local function json(r)
  local cjson, parts = require "cjson", {}
  for _, k in ipairs(replay.keys) do
    local v = r[k]
    parts[#parts + 1] = cjson.encode(k) .. ":" .. (math.type(v) == "integer" and ("%d"):format(v) or cjson.encode(v))
  end
  out("{" .. table.concat(parts, ",") .. "}\n")
end

local function run(o)
  local alloc_opts
  if o.pool then alloc_opts = replay.settings(o.pool) end
  if o.alloc_conf then
    if o.allocator ~= "pytorch" then
      error("--alloc-conf is PyTorch's setting: it goes with --allocator=pytorch", 0)
    end
    alloc_opts = alloc_opts or {}
    if alloc_opts.conf ~= nil then error("--alloc-conf and --pool's conf: give one", 0) end
    alloc_opts.conf = o.alloc_conf
  end
  local rec = replay.read.open(o.file, { max_inflate = o.max_inflate })
  -- the streams are counted now (an RMM log is scanned once), so that a
  -- recording with more than --max-streams is refused before any event
  if o.streams == "keep" then local _ = rec.streams end
  local line, clear = cli.progress_line()
  local show = line and function(n, total) line("replaying", n, total) end
  if o.report then poolsh.trace.start() end
  local ok, r = pcall(replay.run, rec, { allocator = o.allocator, alloc_opts = alloc_opts,
                                         streams = o.streams, max_streams = o.max_streams,
                                         progress = show })
  if clear then clear() end
  if o.report then poolsh.trace.stop() end
  if not ok then error(r, 0) end
  if o.report then
    require("poolsh.export").save(o.report, poolsh.trace.each, poolsh.trace.meta())
    poolsh.trace.clear()
  end
  if o.json then json(r) else summary(o, rec, r) end
  if o.report and not o.json then out("report: " .. o.report .. "\n") end
  return 0
end

-- The options; one --allocator at most.
local function options(args)
  local o = cli.check(cli.parse(args, fail), fail, "poolsh replay FILE")
  if #o.allocators > 1 then fail("one --allocator at a time (poolsh compare takes several)") end
  o.allocator = o.allocators[1]
  return o
end

return function(args)
  local o = options(args or {})
  if o.help then out(USAGE .. "\n"); return 0 end
  local ok, r = pcall(run, o)
  if not ok then fail((tostring(r):gsub("^poolsh%.replay: ", ""))) end
  return r
end
