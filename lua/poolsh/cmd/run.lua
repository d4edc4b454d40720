--- poolsh run: runs one narrated scenario, or all of them with a pass/fail
-- table (docs/scenarios.md).
local poolsh = require "poolsh"
local scenario = require "poolsh.scenario"

local USAGE = [[
usage: poolsh [--backend=cuda|sim] run NAME|FILE.lua [--report FILE.html]
       poolsh [--backend=cuda|sim] run --all
Runs a scenario (poolsh scenarios lists them), narrating each step and
checking its expectations; --report writes the trace as an HTML page with
the steps over the timeline. --all runs every scenario and prints a
pass/fail table. Exit status 1 if any expectation failed.]]

local function fail(msg) error("poolsh run: " .. msg, 0) end
local function out(s) io.stdout:write(s) end

local function parse(args)
  local o = {}
  local i = 1
  while i <= #args do
    local a = args[i]
    local v = a:match("^%-%-report=(.*)$")
    if a == "--help" or a == "-h" then o.help = true
    elseif a == "--all" then o.all = true
    elseif a == "--report" or v then
      if not v then i = i + 1; v = args[i] end
      if not v or v == "" then fail("--report needs a file name (FILE.html)") end
      if not v:match("%.html$") then fail("--report must name a .html file, got '" .. v .. "'") end
      o.report = v
    elseif a:match("^%-") then fail("unknown option '" .. a .. "' (--all, --report FILE.html; --help)")
    elseif o.name then fail("one scenario at a time: '" .. o.name .. "' and '" .. a .. "' (or --all)")
    else o.name = a end
    i = i + 1
  end
  if o.help then return o end
  if o.all and o.name then fail("give a NAME or --all, not both") end
  if o.all and o.report then fail("--report takes one scenario, not --all") end
  if not o.all and not o.name then fail("which scenario? (poolsh run NAME, or --all; poolsh scenarios lists them)") end
  return o
end

local function load(name)
  local ok, sc = pcall(scenario.load, name)
  if not ok then fail(tostring(sc)) end
  return sc
end

local function run_one(o)
  local sc = load(o.name)
  if o.report then poolsh.trace.start() end
  local res = scenario.run(sc, out)
  if o.report then
    poolsh.trace.stop()
    local meta = poolsh.trace.meta()
    meta.notes = res.notes
    require("poolsh.export").save(o.report, poolsh.trace.each, meta)
    out("report: " .. o.report .. "\n")
  end
  if res.skipped then out("SKIP " .. res.name .. ": " .. res.skipped .. "\n"); return 0 end
  out(res.ok and ("PASS " .. res.name .. "\n") or ("FAIL " .. res.name .. "\n"))
  return res.ok and 0 or 1
end

local function run_all()
  local dev = poolsh.device()
  local results = {}
  for _, name in ipairs(require "poolsh.scenarios") do
    local ok, sc = pcall(scenario.load, name)
    results[#results + 1] = ok and scenario.run(sc, out)
      or { name = name, ok = false, step = "0. (loading)", err = tostring(sc) }
    out("\n")
  end
  out(("backend %s, device %s, driver %s\n"):format(poolsh.backend(), dev.name, dev.driver))
  local failed, skipped = 0, 0
  for _, r in ipairs(results) do
    if not r.ok then failed = failed + 1 end
    if r.skipped then skipped = skipped + 1 end
    local line = ("%-4s %-20s %s"):format(r.skipped and "skip" or r.ok and "pass" or "FAIL", r.name,
      r.skipped or r.ok and "" or ("step " .. r.step .. ": " .. r.err:match("^[^\n]*")))
    out(line:gsub("%s+$", "") .. "\n")
  end
  local ran = #results - skipped
  out(("%d/%d scenarios pass%s\n"):format(ran - failed, ran,
    skipped > 0 and (", %d skipped"):format(skipped) or ""))
  return failed == 0 and 0 or 1
end

return function(args)
  local o = parse(args or {})
  if o.help then out(USAGE .. "\n"); return 0 end
  if o.all then return run_all() end
  return run_one(o)
end
