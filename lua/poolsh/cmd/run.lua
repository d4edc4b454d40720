--- poolsh run: runs one narrated scenario, or all of them with a pass/fail
-- table (docs/scenarios.md).
local poolsh = require "poolsh"
local scenario = require "poolsh.scenario"
local words = require "poolsh.words"
local text = require "poolsh.live.text"

local USAGE = [[
usage: poolsh [--backend=cuda|sim] run NAME|FILE.lua [options]
       poolsh [--backend=cuda|sim] run --all [options]
Runs a scenario (poolsh scenarios lists them), narrating each step, showing
what changed in each pool after it (the REPL's live lines) and checking its
expectations. --all runs every scenario and prints a pass/fail table. Exit
status 1 if any expectation failed.
  --quiet             no live lines: the narration and the verdict only
  --step              wait for Enter before each step (for presenting)
  --report FILE.html  save the run as an HTML page, the steps over the
                      timeline; with --all, one page, a section per scenario]]

local function fail(msg) error("poolsh run: " .. msg, 0) end
local function out(s) io.stdout:write(s) end
local say = words.writer(out)

local function parse(args)
  local o = {}
  local i = 1
  while i <= #args do
    local a = args[i]
    local v = a:match("^%-%-report=(.*)$")
    if a == "--help" or a == "-h" then o.help = true
    elseif a == "--all" then o.all = true
    elseif a == "--quiet" then o.quiet = true
    elseif a == "--step" then o.step = true
    elseif a == "--report" or v then
      if not v then i = i + 1; v = args[i] end
      if not v or v == "" then fail("--report needs a file name (FILE.html)") end
      if not v:match("%.html$") then fail("--report must name a .html file, got '" .. v .. "'") end
      o.report = v
    elseif a:match("^%-") then
      fail("unknown option '" .. a .. "'"
        .. words.did_you_mean(a, { "--all", "--quiet", "--step", "--report", "--help" })
        .. " (--all, --quiet, --step, --report FILE.html; --help)")
    elseif o.name then fail("one scenario at a time: '" .. o.name .. "' and '" .. a .. "' (or --all)")
    else o.name = a end
    i = i + 1
  end
  if o.help then return o end
  if o.all and o.name then fail("give a NAME or --all, not both") end
  if not o.all and not o.name then fail("which scenario? (poolsh run NAME, or --all; poolsh scenarios lists them)") end
  return o
end

local function load(name)
  local new = scenario.renamed[name]
  if new then
    say(("poolsh run: %s is now called %s, as its lesson\n"):format(name, new))
  end
  local ok, sc = pcall(scenario.load, name)
  if not ok then fail(tostring(sc)) end
  return sc
end

-- Whether standard input is a terminal (--step reads Enter from it).
local function stdin_tty() return os.execute("test -t 0") == true end

-- The before_step function --step runs: waits for Enter on a terminal;
-- without one, says once that it does not pause.
local function stepper(o)
  if not o.step then return nil end
  if not stdin_tty() then
    say("poolsh run: --step: standard input is not a terminal, so the steps do not pause\n")
    return nil
  end
  return function(n)
    out(text.paint("dim", ("-- press Enter for step %d --"):format(n)))
    io.stdout:flush()
    local line = io.stdin:read("l")   -- the terminal echoes the Enter
    if line == nil then fail("--step: standard input ended") end
  end
end

-- The metadata the HTML exporter draws a scenario's page from.
local function meta_of(sc, res, events)
  local meta = poolsh.trace.meta(events)
  meta.title = res.name
  meta.summary = sc.summary
  meta.notes = res.notes
  meta.verdict = { ok = res.ok, step = res.step, err = res.err, skipped = res.skipped }
  return meta
end

-- The trace's events as a list.
local function events()
  local list = {}
  poolsh.trace.each(function(e) list[#list + 1] = e end)
  return list
end

local function verdict(res)
  if res.skipped then return "SKIP " .. res.name .. ": " .. res.skipped end
  return res.ok and text.paint("pass", "PASS") .. " " .. res.name
    or text.paint("fail", "FAIL") .. " " .. res.name
end

-- scenario.run's options: wrapped, live lines unless --quiet, --step's
-- pauses, and with --report a recording from the scenario's start to its
-- end, handed to save(sc, res) before the sim is reset.
local function opts_for(o, sc, save)
  return { wrap = true, live = not o.quiet, before_step = o.pause,
           start = o.report and function() poolsh.trace.clear(); poolsh.trace.start() end,
           stop = o.report and function(res) poolsh.trace.stop(); save(sc, res) end }
end

local function run_one(o)
  local sc = load(o.name)
  o.pause = stepper(o)
  local res = scenario.run(sc, out, opts_for(o, sc, function(s, res)
    require("poolsh.export").save(o.report, poolsh.trace.each, meta_of(s, res))
  end))
  if o.report then say("report: " .. o.report .. "\n") end
  say(verdict(res) .. "\n")
  if res.skipped then return 0 end
  return res.ok and 0 or 1
end

-- The pass/fail table's lines, its last column folded at the width.
local function table_lines(results)
  local rows = {}
  for _, r in ipairs(results) do
    local mark = r.skipped and "skip" or r.ok and text.paint("pass", "pass") or text.paint("fail", "FAIL")
    rows[#rows + 1] = { mark, r.name,
      r.skipped or r.ok and "" or ("step " .. r.step .. ": " .. r.err:match("^[^\n]*")) }
  end
  local lines = text.rows({ "", "scenario", "" }, rows, text.columns() + 2)   -- less the lead cut below
  table.remove(lines, 1)   -- no header row
  for i, l in ipairs(lines) do lines[i] = l:gsub("^  ", "") end
  return lines
end

local function run_all(o)
  local dev = poolsh.device()
  local results, runs = {}, {}
  local html = o.report and require "poolsh.export.html"
  if html and type(html.save_scenarios) ~= "function" then
    fail("--report with --all needs poolsh.export.html.save_scenarios, which this poolsh lacks")
  end
  o.pause = stepper(o)
  for _, name in ipairs(require "poolsh.scenarios") do
    local ok, sc = pcall(scenario.load, name)
    local recorded
    local res = ok and scenario.run(sc, out, opts_for(o, sc, function(s, r)
      recorded = events()
    end)) or { name = name, ok = false, step = "0. (loading)", err = tostring(sc), notes = {} }
    if o.report then   -- a skipped scenario, or one that did not load, has a section too
      runs[#runs + 1] = { meta = meta_of(ok and sc or {}, res, recorded or {}), events = recorded or {} }
    end
    results[#results + 1] = res
    out("\n")
  end
  say(("backend %s, device %s, driver %s\n"):format(poolsh.backend(), dev.name, dev.driver))
  local failed, skipped = 0, 0
  for _, r in ipairs(results) do
    if not r.ok then failed = failed + 1 end
    if r.skipped then skipped = skipped + 1 end
  end
  for _, l in ipairs(table_lines(results)) do out(l .. "\n") end
  local ran = #results - skipped
  say(("%d/%d scenarios pass%s\n"):format(ran - failed, ran,
    skipped > 0 and (", %d skipped"):format(skipped) or ""))
  if o.report then
    html.save_scenarios(o.report, runs)
    say("report: " .. o.report .. "\n")
  end
  return failed == 0 and 0 or 1
end

return function(args)
  local o = parse(args or {})
  if o.help then say(USAGE .. "\n"); return 0 end
  if o.all then return run_all(o) end
  return run_one(o)
end
