--- poolsh compare: replays one recording through several allocators and
-- prints their results side by side (docs/replay.md).
local poolsh = require "poolsh"
local replay = require "poolsh.replay"
local compare = require "poolsh.replay.compare"

local USAGE = [[
usage: poolsh [--backend=cuda|sim] compare FILE [--allocator=NAME|PATH.lua ...]
         [--pool 'SETTINGS'] [--streams=keep|one] [--json] [--report FILE.html]
Replays FILE (as poolsh replay reads it) through each allocator named with
--allocator (default: pool and pytorch; names must be distinct), each from a
fresh poolsh, and prints one column per allocator (and the recorded figures
of a PyTorch snapshot with a .stats.json). --pool gives the pool
allocator's settings ('release_threshold = "max"'); the others get none.
--json prints one JSON object; --report draws each allocator's reserved and
used over the replay on an HTML page.]]

local function fail(msg) error("poolsh compare: " .. msg, 0) end
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
        if v and name == "allocator" then
          o.allocators = o.allocators or {}
          o.allocators[#o.allocators + 1] = v
          i = j
          break
        elseif v then o[name], i = v, j; break end
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
  if not o.file then fail("which file? (poolsh compare FILE --allocator=A --allocator=B; --help)") end
  if o.streams ~= "keep" and o.streams ~= "one" then
    fail("--streams must be keep or one, got '" .. o.streams .. "'")
  end
  if o.report and not o.report:match("%.html$") then
    fail("--report must name a .html file, got '" .. o.report .. "'")
  end
  local seen = {}
  for _, n in ipairs(o.allocators or {}) do
    if n == "" then fail("--allocator needs a name") end
    if seen[n] then fail("--allocator " .. n .. " is given twice (names must be distinct)") end
    seen[n] = true
  end
  return o
end

-- A progress function rewriting one stderr line at most 4 times a second,
-- and the one that clears it; nil when stderr is no terminal.
local function progress_line()
  if os.execute("test -t 2") ~= true then return nil end
  local last, shown = poolsh.wallclock(), false
  local function show(name, n, total)
    local now = poolsh.wallclock()
    if now - last < 0.25 then return end
    last, shown = now, true
    local of = total and (" of %d (%d%%)"):format(total, n * 100 // math.max(total, 1)) or ""
    io.stderr:write(("\r%s: replaying: %d events%s "):format(name, n, of))
  end
  local function clear() if shown then io.stderr:write("\r\27[K") end end
  return show, clear
end

-- One JSON object: file, backend, allocators = {name = result}, recorded.
local function json(c)
  local util = require "poolsh.export.util"
  out(("{%s:%s,%s:%s,%s:%s,%s:%s}\n"):format(util.quote("file"), util.quote(tostring(c.file)),
    util.quote("backend"), util.quote(c.backend), util.quote("allocators"), util.json(c.results),
    util.quote("recorded"), c.recorded and util.json(c.recorded) or "null"))
end

local function run(o)
  local pool = o.pool and replay.settings(o.pool) or nil
  local rec = replay.read.open(o.file)
  local show, clear = progress_line()
  local ok, c = pcall(compare.run, rec, { allocators = o.allocators, pool = pool, streams = o.streams,
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

return function(args)
  local o = check(parse(args or {}))
  if o.help then out(USAGE .. "\n"); return 0 end
  local ok, r = pcall(run, o)
  if not ok then fail((tostring(r):gsub("^poolsh%.replay: ", ""))) end
  return r
end
