--- poolsh compare: replays one recording through several allocators and
-- prints their results side by side (docs/replay.md).
local poolsh = require "poolsh"
local replay = require "poolsh.replay"
local compare = require "poolsh.replay.compare"
local cli = require "poolsh.replay.cli"

local USAGE = [[
usage: poolsh [--backend=cuda|sim] compare FILE [--allocator=NAME|PATH.lua ...]
         [--pool 'SETTINGS'] [--streams=keep|one] [--max-streams N]
         [--max-inflate SIZE] [--json] [--report FILE.html]
Replays FILE (as poolsh replay reads it) through each allocator named with
--allocator (default: pool and pytorch; names must be distinct), each from a
fresh poolsh, and prints one column per allocator (and the recorded figures
of a PyTorch snapshot with a .stats.json). --pool gives the pool
allocator's settings ('release_threshold = "max"'); the others get none.
--json prints one JSON object; --report draws each allocator's reserved and
used over the replay on an HTML page. --max-streams and --max-inflate: as
for poolsh replay.]]

local function fail(msg) error("poolsh compare: " .. msg, 0) end
local function out(s) io.stdout:write(s) end

-- One JSON object: file, backend, allocators = {name = result}, recorded.
local function json(c)
  local util = require "poolsh.export.util"
  out(("{%s:%s,%s:%s,%s:%s,%s:%s}\n"):format(util.quote("file"), util.quote(tostring(c.file)),
    util.quote("backend"), util.quote(c.backend), util.quote("allocators"), util.json(c.results),
    util.quote("recorded"), c.recorded and util.json(c.recorded) or "null"))
end

local function run(o)
  local pool = o.pool and replay.settings(o.pool) or nil
  local rec = replay.read.open(o.file, { max_inflate = o.max_inflate })
  -- the streams are counted now (an RMM log is scanned once), so that a
  -- recording with more than --max-streams is refused before any event
  if o.streams == "keep" then local _ = rec.streams end
  local line, clear = cli.progress_line()
  local show = line and function(name, n, total) line(name .. ": replaying", n, total) end
  local ok, c = pcall(compare.run, rec, { allocators = o.allocators, pool = pool, streams = o.streams,
                                          max_streams = o.max_streams,
                                          series = o.report ~= nil, progress = show })
  if clear then clear() end
  if not ok then error(c, 0) end
  if o.report then require("poolsh.export.compare_html").save(o.report, c) end
  if o.json then json(c); return 0 end
  local clock = poolsh.backend() == "sim" and "virtual clock" or "wall clock"
  out(("%s: %s recording, %d stream%s, %d initial blocks, on %s (streams: %s)\n"):format(rec.file,
    rec.format, #(rec.streams or {}), #(rec.streams or {}) == 1 and "" or "s", #(rec.initial or {}),
    poolsh.backend(), o.streams))
  out(compare.table(c))
  out(("(alloc seconds: time in allocator calls, %s)\n"):format(clock))
  if o.report then out("report: " .. o.report .. "\n") end
  return 0
end

-- The options; each --allocator once.
local function options(args)
  local o = cli.check(cli.parse(args, fail), fail, "poolsh compare FILE --allocator=A --allocator=B")
  local seen = {}
  for _, n in ipairs(o.allocators) do
    if seen[n] then fail("--allocator " .. n .. " is given twice (names must be distinct)") end
    seen[n] = true
  end
  if #o.allocators == 0 then o.allocators = nil end   -- compare's defaults
  return o
end

return function(args)
  local o = options(args or {})
  if o.help then out(USAGE .. "\n"); return 0 end
  local ok, r = pcall(run, o)
  if not ok then fail((tostring(r):gsub("^poolsh%.replay: ", ""))) end
  return r
end
