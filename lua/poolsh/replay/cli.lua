--- poolsh.replay.cli: what `poolsh replay` and `poolsh compare` share: their
-- options and the progress line (docs/replay.md, docs/cli.md).
local poolsh = require "poolsh"

local M = {}

-- The options that take a value: {flag, key in parse's table}.
local OPTIONS = { { "allocator" }, { "pool" }, { "alloc-conf", "alloc_conf" }, { "streams" },
                  { "max-streams", "max_streams" }, { "max-inflate", "max_inflate" },
                  { "report" }, { "jobs" } }

-- The value of option `name` at args[i] (--name=V or --name V), and the
-- next index; nil when args[i] is not that option.
local function value(args, i, name, fail)
  local a = args[i]
  local v = a:match("^%-%-" .. name:gsub("%-", "%%-") .. "=(.*)$")
  if v then return v, i end
  if a ~= "--" .. name then return nil end
  v = args[i + 1]
  if not v or v == "" then fail("--" .. name .. " needs a value") end
  return v, i + 1
end

-- The options named, as "--a, --b, --json; --help".
local function listed(only)
  local names = {}
  for _, opt in ipairs(OPTIONS) do
    if not only or only[opt[1]] then names[#names + 1] = "--" .. opt[1] end
  end
  if not only or only.json then names[#names + 1] = "--json" end
  return table.concat(names, ", ") .. "; --help"
end

--- The options in args: {file, allocators = {...} (each --allocator in
-- order), pool, alloc_conf, streams ("keep" by default), report,
-- max_streams, max_inflate, jobs (text until check), json, help}; bad ones
-- raise through fail(message). `only` (a set of option names without
-- their dashes, "json" among them) limits the options a command takes;
-- nil: all of them.
function M.parse(args, fail, only)
  local o, i = { streams = "keep", allocators = {} }, 1
  while i <= #args do
    local a, v, j = args[i], nil, nil
    if a == "--help" or a == "-h" then o.help = true
    elseif a == "--json" and (not only or only.json) then o.json = true
    else
      for _, opt in ipairs(OPTIONS) do
        local name = opt[1]
        if only and not only[name] then goto skip end
        v, j = value(args, i, name, fail)
        if v then
          if name == "allocator" then o.allocators[#o.allocators + 1] = v else o[opt[2] or name] = v end
          i = j
          break
        end
        ::skip::
      end
      if v then -- taken
      elseif a:match("^%-") then
        fail("unknown option '" .. a .. "' (" .. listed(only) .. ")")
      elseif o.file then fail("one file at a time: '" .. o.file .. "' and '" .. a .. "'")
      else o.file = a end
    end
    i = i + 1
  end
  return o
end

--- Checks what parse gave; `which` is the usage hint for a missing file.
function M.check(o, fail, which)
  if o.help then return o end
  if not o.file then fail("which file? (" .. which .. "; --help)") end
  if o.streams ~= "keep" and o.streams ~= "one" then
    fail("--streams must be keep or one, got '" .. o.streams .. "'")
  end
  if o.report and not o.report:match("%.html$") then
    fail("--report must name a .html file, got '" .. o.report .. "'")
  end
  for _, n in ipairs(o.allocators) do
    if n == "" then fail("--allocator needs a name") end
  end
  if o.max_streams then
    local n = math.tointeger(tonumber(o.max_streams))
    if not n or n < 0 or not o.max_streams:match("^%d+$") then
      fail("--max-streams must be a whole number of streams, got '" .. o.max_streams .. "'")
    end
    o.max_streams = n
  end
  if o.jobs then
    local n = math.tointeger(tonumber(o.jobs))
    if not n or n < 1 or n > 64 or not o.jobs:match("^%d+$") then
      fail("--jobs must be a whole number from 1 to 64, got '" .. o.jobs .. "'")
    end
    o.jobs = n
  end
  if o.max_inflate then
    local n, err = require("poolsh.units").size(o.max_inflate)
    if not n or n < 1 then fail("--max-inflate must be a size ('2 GiB'): " .. tostring(err or o.max_inflate)) end
    o.max_inflate = n
  end
  return o
end

--- A progress function show(label, n, total) rewriting one stderr line at
-- most 4 times a second, and the function that clears it; nil when
-- stderr is no terminal.
function M.progress_line()
  if os.execute("test -t 2") ~= true then return nil end
  local last, shown = poolsh.wallclock(), false
  local function show(label, n, total)
    local now = poolsh.wallclock()
    if now - last < 0.25 then return end
    last, shown = now, true
    local of = total and (" of %d (%d%%)"):format(total, n * 100 // math.max(total, 1)) or ""
    io.stderr:write(("\r%s: %d events%s "):format(label, n, of))
  end
  local function clear() if shown then io.stderr:write("\r\27[K") end end
  return show, clear
end

return M
