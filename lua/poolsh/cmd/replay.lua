--- poolsh replay: replays a recorded workload (a PyTorch snapshot, an RMM
-- log, a poolsh trace) through an allocator and prints what memory it
-- used (docs/replay.md).
local poolsh = require "poolsh"
local replay = require "poolsh.replay"

local USAGE = [[
usage: poolsh [--backend=cuda|sim] replay FILE [--allocator=NAME|PATH.lua]
         [--pool 'SETTINGS'] [--streams=keep|one] [--json] [--report FILE.html]
Replays every allocation and free of FILE (a PyTorch snapshot .pickle or
.pickle.gz, an RMM log .csv, a poolsh trace .json or .csv) in order through
an allocator: pool (default: a cudaMemPool), pytorch, cupy, or a Lua module.
--pool gives the allocator's settings as the body of a Lua table
('release_threshold = "max", opportunistic = false'). --streams=one puts
every event on one stream. --json prints the result as one JSON object;
--report writes the replay's trace as an HTML page.]]

local function fail(msg) error("poolsh replay: " .. msg, 0) end
local function out(s) io.stdout:write(s) end

-- The value of option `name` at args[i] (--name=V or --name V), and the
-- next index; nil when args[i] is not that option.
local function value(args, i, name)
  local a = args[i]
  local v = a:match("^%-%-" .. name .. "=(.*)$")
  if v then return v, i end
  if a ~= "--" .. name then return nil end
  v = args[i + 1]
  if not v or v == "" then fail("--" .. name .. " needs a value") end
  return v, i + 1
end

local function parse(args)
  local o, i = { streams = "keep" }, 1
  while i <= #args do
    local a, v, j = args[i], nil, nil
    if a == "--help" or a == "-h" then o.help = true
    elseif a == "--json" then o.json = true
    else
      for _, name in ipairs { "allocator", "pool", "streams", "report" } do
        v, j = value(args, i, name)
        if v then o[name], i = v, j; break end
      end
      if v then -- taken
      elseif a:match("^%-") then
        fail("unknown option '" .. a .. "' (--allocator, --pool, --streams, --json, --report; --help)")
      elseif o.file then fail("one file at a time: '" .. o.file .. "' and '" .. a .. "'")
      else o.file = a end
    end
    i = i + 1
  end
  return o
end

local function check(o)
  if o.help then return o end
  if not o.file then fail("which file? (poolsh replay FILE; --help)") end
  if o.streams ~= "keep" and o.streams ~= "one" then
    fail("--streams must be keep or one, got '" .. o.streams .. "'")
  end
  if o.report and not o.report:match("%.html$") then
    fail("--report must name a .html file, got '" .. o.report .. "'")
  end
  if o.allocator == "" then fail("--allocator needs a name") end
  return o
end

-- Whether stderr is a terminal (once).
local function stderr_tty()
  return os.execute("test -t 2") == true
end

-- A progress function that rewrites one stderr line at most 4 times a
-- second, and the function that clears it; nil when stderr is no terminal.
local function progress_line()
  if not stderr_tty() then return nil end
  local last, shown = poolsh.wallclock(), false
  local function show(n, total)
    local now = poolsh.wallclock()
    if now - last < 0.25 then return end
    last, shown = now, true
    local of = total and (" of %d (%d%%)"):format(total, n * 100 // math.max(total, 1)) or ""
    io.stderr:write(("\rreplaying: %d events%s "):format(n, of))
  end
  local function clear() if shown then io.stderr:write("\r\27[K") end end
  return show, clear
end

local function mib(n) return poolsh.fmt(n) end

local function summary(o, rec, r)
  local clock = poolsh.backend() == "sim" and "virtual clock" or "wall clock"
  out(("%s: %s recording, %d events, %d stream%s, %d initial blocks\n"):format(rec.file, rec.format,
    r.events, #(rec.streams or {}), #(rec.streams or {}) == 1 and "" or "s", #(rec.initial or {})))
  out(("allocator %s on %s (streams: %s)\n"):format(o.allocator or "pool", poolsh.backend(), o.streams))
  out(("  peak reserved   %s\n  peak used       %s\n  final reserved  %s\n"):format(
    mib(r.peak_reserved), mib(r.peak_used), mib(r.final_reserved)))
  out(("  segments allocated %d, driver frees %d, failed allocations %d\n"):format(
    r.segments_allocated, r.driver_frees, r.failed))
  out(("  %.3f s, %.3f s in allocator calls (%s)\n"):format(r.seconds, r.alloc_seconds, clock))
  local e = rec.expected
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
  local rec = replay.read.open(o.file)
  local show, clear = progress_line()
  if o.report then poolsh.trace.start() end
  local ok, r = pcall(replay.run, rec, { allocator = o.allocator, alloc_opts = alloc_opts,
                                         streams = o.streams, progress = show })
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

return function(args)
  local o = check(parse(args or {}))
  if o.help then out(USAGE .. "\n"); return 0 end
  local ok, r = pcall(run, o)
  if not ok then fail((tostring(r):gsub("^poolsh%.replay: ", ""))) end
  return r
end
