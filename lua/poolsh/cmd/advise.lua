--- poolsh advise: replays a recording through PyTorch's allocator under a
-- grid of PYTORCH_CUDA_ALLOC_CONF settings, ranks them and says which one
-- to use (docs/replay.md, "Which setting should I use?").
local poolsh = require "poolsh"
local replay = require "poolsh.replay"
local compare = require "poolsh.replay.compare"
local advise = require "poolsh.advise"
local cli = require "poolsh.replay.cli"

local USAGE = [[
usage: poolsh [--backend=sim] advise FILE [--limit SIZE] [--profile P]
         [--streams=keep|one] [--max-streams N] [--max-inflate SIZE]
         [--jobs N] [--json] [--report FILE.html]
Replays FILE (as poolsh replay reads it) through the pytorch allocator under
each PYTORCH_CUDA_ALLOC_CONF setting of a small grid (the default,
expandable_segments:True, max_split_size_mb, roundup_power2_divisions,
backend:cudaMallocAsync), each from a fresh poolsh, prints them ranked
(fewest failed allocations, then least peak reserved, fewest driver
allocations, least time in allocator calls on the profile's costs) and ends
with the line to use. --limit SIZE replays under that device limit: a
setting fits when no allocation failed and its peak reserved is within the
limit. A setting the allocator does not model yet is listed as such and
never recommended. --jobs N replays N settings at once in child processes,
each reading FILE again (default: with 4 processors or more, one per
processor, at most 4, when a replay takes a quarter second); a FILE that
is no regular file (a pipe) is replayed by this process alone. --json
prints one JSON object; --report draws each setting's reserved and used
over the replay on an HTML page.]]

local function fail(msg) error("poolsh advise: " .. msg, 0) end
local function out(s) io.stdout:write(s) end

--- The options advise takes (poolsh.replay.cli's names); --limit and
-- --profile are poolsh's own, read before the command runs.
local ONLY = { streams = true, ["max-streams"] = true, ["max-inflate"] = true, report = true, json = true,
               jobs = true }

--- The replays run at once by default: one per processor, at most 4, on
-- a machine of 4 processors or more (on fewer, other work shares them and
-- a child's start and its own reading of the file cost more than it
-- saves), and only when the default's replay took AUTO_AFTER seconds.
local MAX_AUTO_JOBS, MIN_AUTO_PROCESSORS, AUTO_AFTER = 4, 4, 0.25

-- How many processors this machine has (nproc), 1 when unknown.
local function processors()
  local f = io.popen("nproc 2>/dev/null")
  local n = f and math.tointeger(tonumber(f:read("l") or ""))
  if f then f:close() end
  return n and n > 0 and n or 1
end

-- Raises "NAME is a directory, not a recording" when path names one (the
-- readers would see no bytes and call it empty).
local function not_directory(path)
  local f = io.open(path, "rb")
  if not f then return end   -- the reader says why it cannot be opened
  local _, _, code = f:read(0)
  f:close()
  if code == 21 then   -- EISDIR
    error(("%s is a directory, not a recording"):format(replay.read.basename(path)), 0)
  end
end

local function run(o)
  not_directory(o.file)
  local rec = replay.read.open(o.file, { max_inflate = o.max_inflate })
  -- the streams are counted now (an RMM log is scanned once), so that a
  -- recording with more than --max-streams is refused before any event
  if o.streams == "keep" then local _ = rec.streams end
  local limit = poolsh.device().limit
  local line, clear = cli.progress_line()
  local show = line and function(label, n, total) line(label .. ": replaying", n, total) end
  local n = processors()
  local jobs = o.jobs or (n >= MIN_AUTO_PROCESSORS and math.min(n, MAX_AUTO_JOBS) or 1)
  local ok, a = pcall(advise.run, rec, { limit = limit, series = o.report ~= nil, streams = o.streams,
                                         max_streams = o.max_streams, progress = show, jobs = jobs,
                                         file = o.file, max_inflate = o.max_inflate,
                                         parallel_after = o.jobs == nil and AUTO_AFTER or nil })
  if clear then clear() end
  if not ok then error(a, 0) end
  local c, verdict = a.comparison, advise.verdict(a)
  c.cells = advise.cells(a)
  if o.report then require("poolsh.export.compare_html").save(o.report, c) end
  if o.json then
    out(compare.json(c, { { "limit", limit }, { "ranking", advise.ranking(a) },
                          { "recommended", a.best and a.best.conf }, { "line", verdict[#verdict] } }) .. "\n")
    return 0
  end
  local dev = poolsh.device()
  local events = a.best and a.best.result.events or rec.count
  out(("%s: %s recording, %s events, %d stream%s; PyTorch's allocator under %d settings on %s%s\n"):format(
    rec.file, rec.format, events and tostring(events) or "?", #(rec.streams or {}),
    #(rec.streams or {}) == 1 and "" or "s", #a.points, dev.name,
    limit and (", under --limit " .. poolsh.fmt(limit)) or ""))
  out(advise.table(a))
  local clock = poolsh.backend() == "sim" and "the sim's virtual clock" or "the wall clock"
  out(advise.footnote(a, clock) .. "\n")
  local e = c.recorded
  if e and e.peak_reserved then
    out(("recorded run (its own setting): peak reserved %s, driver allocs %s\n"):format(
      poolsh.fmt(e.peak_reserved), tostring(e.segments_allocated or "-")))
  end
  if o.report then out("report: " .. o.report .. "\n") end
  out(table.concat(verdict, "\n") .. "\n")
  return 0
end

-- The options; advise's own only.
local function options(args)
  return cli.check(cli.parse(args, fail, ONLY), fail, "poolsh advise FILE")
end

return function(args)
  local o = options(args or {})
  if o.help then out(USAGE .. "\n"); return 0 end
  local ok, r = pcall(run, o)
  if not ok then fail((tostring(r):gsub("^poolsh%.replay: ", ""):gsub("^poolsh%.advise: ", ""))) end
  return r
end
