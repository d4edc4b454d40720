--- poolsh compare: replays one recording through several allocators and
-- prints their results side by side (docs/replay.md).
local poolsh = require "poolsh"
local replay = require "poolsh.replay"
local compare = require "poolsh.replay.compare"
local cli = require "poolsh.replay.cli"

local USAGE = [[
usage: poolsh [--backend=cuda|sim] compare FILE [--allocator=NAME|PATH.lua ...]
         [--pool 'SETTINGS'] [--alloc-conf 'PYTORCH_CUDA_ALLOC_CONF']
         [--streams=keep|one] [--max-streams N]
         [--max-inflate SIZE] [--json] [--report FILE.html]
Replays FILE (as poolsh replay reads it) through each allocator named with
--allocator (default: pool and pytorch; names must be distinct), each from a
fresh poolsh, and prints one column per allocator (and the recorded figures
of a PyTorch snapshot with a .stats.json). --pool gives the pool
allocator's settings ('release_threshold = "max"'), --alloc-conf the
pytorch allocator's, as PYTORCH_CUDA_ALLOC_CONF holds them
('max_split_size_mb:128'); the others get none.
--json prints one JSON object; --report draws each allocator's reserved and
used over the replay on an HTML page. --max-streams and --max-inflate: as
for poolsh replay.]]

local function fail(msg) error("poolsh compare: " .. msg, 0) end
local function out(s) io.stdout:write(s) end

local function run(o)
  local pool = o.pool and replay.settings(o.pool) or nil
  local rec = replay.read.open(o.file, { max_inflate = o.max_inflate })
  -- the streams are counted now (an RMM log is scanned once), so that a
  -- recording with more than --max-streams is refused before any event
  if o.streams == "keep" then local _ = rec.streams end
  local line, clear = cli.progress_line()
  local show = line and function(name, n, total) line(name .. ": replaying", n, total) end
  local ok, c = pcall(compare.run, rec, { allocators = o.allocators, pool = pool, alloc_conf = o.alloc_conf,
                                          streams = o.streams,
                                          max_streams = o.max_streams,
                                          series = o.report ~= nil, progress = show })
  if clear then clear() end
  if not ok then error(c, 0) end
  if o.report then require("poolsh.export.compare_html").save(o.report, c) end
  if o.json then out(compare.json(c) .. "\n"); return 0 end
  local clock = poolsh.backend() == "sim" and "virtual clock" or "wall clock"
  out(("%s: %s recording, %d stream%s, %d initial blocks, on %s (streams: %s)\n"):format(rec.file,
    rec.format, #(rec.streams or {}), #(rec.streams or {}) == 1 and "" or "s", #(rec.initial or {}),
    poolsh.backend(), o.streams))
  out(compare.table(c)); out(compare.against(c))   -- then each peak against the recording's
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
  if o.alloc_conf then
    local torch = o.allocators == nil   -- the defaults have pytorch
    for _, n in ipairs(o.allocators or {}) do torch = torch or n == "pytorch" end
    if not torch then fail("--alloc-conf is PyTorch's setting: it goes with --allocator=pytorch") end
  end
  return o
end

return function(args)
  local o = options(args or {})
  if o.help then out(USAGE .. "\n"); return 0 end
  local ok, r = pcall(run, o)
  if not ok then fail((tostring(r):gsub("^poolsh%.replay: ", ""))) end
  return r
end
