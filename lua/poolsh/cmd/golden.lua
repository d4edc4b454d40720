--- poolsh golden: record the fidelity scenarios on a device, replay golden
-- files on the sim and compare them step by step (docs/fidelity.md).
-- This module reads the command line and prints; the work is in
-- poolsh.golden.scenarios, .record and .check.
local poolsh = require "poolsh"
local format = require "poolsh.golden.format"
local scenarios = require "poolsh.golden.scenarios"
local record = require "poolsh.golden.record"
local check = require "poolsh.golden.check"

local USAGE = {
  main = [[
usage: poolsh [--backend=cuda|sim] golden [report|record|check|list|run] ...
  poolsh golden                    the report: each golden file replayed on
                                   the sim
  poolsh golden report [DIR|FILE...]   the same, as a Markdown table
  poolsh golden record [--out DIR] [NAME...]   run scenarios, write golden files
  poolsh golden check [DIR|FILE...]    replay on the sim, compare
  poolsh golden list               scenario names and summaries
  poolsh golden run NAME [--out FILE]   run one scenario here, print its record
Each subcommand takes --help. DIR defaults to tests/golden. To replay
with a profile of your own: poolsh --backend=sim --profile=FILE golden check.]],
  record = [[
usage: poolsh [--backend=cuda|sim] golden record [--out DIR] [NAME...]
Runs each scenario (default: all) in its own poolsh process on this
backend and writes DIR/NAME.lua with the step-by-step observations, naming
the GPU, driver, runtime, date and backend. DIR defaults to
tests/golden/<gpu> (e.g. tests/golden/h100) on cuda; on the sim, --out is
required. A scenario that crashes is reported and the others still run;
the exit status is 1 if any failed.]],
  check = [[
usage: poolsh [--backend=sim --profile=FILE] golden check [DIR|FILE...]
Replays each golden file (default: every *.lua under tests/golden) on the
sim, each in its own poolsh process, with the profile given to this one
(--profile=FILE or POOLSH_PROFILE, on the sim), else for a GPU recording
the shipped profile for its GPU (poolsh.profile.for_gpu) and for a sim
recording the profile it was recorded with, else the built-in profile;
and compares them step by step. Prints "N/M steps agree" per file and the first differing step side
by side. Also holds the statements in each file (sources, fresh, pending,
extents) to its recorded offsets and counters, printing each that fails.
Exit status 1 on any difference, failed statement or unreadable file.]],
  report = [[
usage: poolsh [--backend=sim --profile=FILE] golden [report] [DIR|FILE...]
Replays golden files like check and prints a Markdown table: scenario,
recorded on, profile, steps agreeing. Exit status 1 on any difference.]],
  list = [[
usage: poolsh golden list
Prints each fidelity scenario's name and summary.]],
  run = [[
usage: poolsh [--backend=cuda|sim] golden run NAME [--out FILE]
Runs one scenario in this process and writes its record to FILE (default:
stdout). record and check use it in child processes.]],
}

local function say(...) io.stdout:write(...) end
local function fail(msg) error("poolsh golden: " .. msg, 0) end

---------------------------------------------------------------- options

--- Splits args into {flags}, {positional}; value flags take the next
-- argument or "=value". Returns nil when --help was asked.
local function parse(args, value_flags)
  local flags, pos = {}, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--help" or a == "-h" then return nil end
    local k, v = a:match("^%-%-([%w-]+)=(.*)$")
    if k then
      if not value_flags[k] then fail("unknown option --" .. k) end
      flags[k] = v
    elseif a:match("^%-%-") then
      k = a:sub(3)
      if not value_flags[k] then fail("unknown option " .. a) end
      i = i + 1
      if not args[i] then fail(a .. " needs a value") end
      flags[k] = args[i]
    else
      pos[#pos + 1] = a
    end
    i = i + 1
  end
  return flags, pos
end

---------------------------------------------------------------- subcommands

local function cmd_run(args)
  local flags, pos = parse(args, { out = true })
  if not flags then say(USAGE.run, "\n"); return 0 end
  if #pos ~= 1 then fail("run takes one scenario name") end
  local rec = record.run(pos[1])
  if flags.out then format.write(flags.out, rec) else say(format.encode(rec)) end
  return 0
end

local function cmd_list(args)
  if not parse(args, {}) then say(USAGE.list, "\n"); return 0 end
  local names = scenarios.names()
  local w = 0
  for _, n in ipairs(names) do w = math.max(w, #n) end
  for _, n in ipairs(names) do
    say(("%-" .. w .. "s  %s\n"):format(n, scenarios.load(n).summary or ""))
  end
  return 0
end

local function cmd_record(args)
  local flags, pos = parse(args, { out = true })
  if not flags then say(USAGE.record, "\n"); return 0 end
  local backend = poolsh.backend()
  local names = #pos > 0 and pos or scenarios.names()
  for _, n in ipairs(names) do scenarios.load(n) end
  local dir = flags.out
  if not dir then
    if backend == "sim" then
      fail("on the sim, give --out DIR (tests/golden/<gpu> holds GPU recordings)")
    end
    dir = "tests/golden/" .. record.gpu_slug(poolsh.device().name)
  end
  local failed = record.all(names, dir, function(n, rec, err)
    if rec then
      say(("%-32s %3d steps%s\n"):format(n, #rec.steps, rec.error and ("  (stopped: " .. rec.error .. ")") or ""))
    else
      say(("%-32s FAILED: %s\n"):format(n, err))
    end
  end)
  say(("%d scenarios recorded in %s on %s%s\n"):format(#names - failed, dir, backend,
    failed > 0 and (", " .. failed .. " failed") or ""))
  return failed == 0 and 0 or 1
end

local function cmd_check(args)
  local flags, pos = parse(args, {})
  if not flags then say(USAGE.check, "\n"); return 0 end
  local bad, n = check.replay_all(pos, function(file, gold, profile, res, lines)
    if not gold then say(lines, "\n"); return end
    say(("%s (%s, profile %s): %d/%d steps agree%s\n"):format(
      gold.scenario, gold.gpu or "?", record.basename(profile), res.agree, res.total,
      res.statements and (", " .. res.statements .. " statements fail") or ""))
    for _, l in ipairs(lines) do say(l, "\n") end
  end)
  say(("%d/%d golden files agree\n"):format(n - bad, n))
  return bad == 0 and 0 or 1
end

local function cmd_report(args)
  local flags, pos = parse(args, {})
  if not flags then say(USAGE.report, "\n"); return 0 end
  say("| scenario | recorded on | profile | steps agree |\n|---|---|---|---|\n")
  local errors = {}
  local bad, n = check.replay_all(pos, function(file, gold, profile, res, lines)
    if not gold then errors[#errors + 1] = lines; return end
    local where = table.concat({ gold.gpu or "?", gold.driver or nil }, ", ")
    say(("| %s | %s | %s | %d/%d%s%s |\n"):format(gold.scenario, where, record.basename(profile),
      res.agree, res.total, res.first and (" (first difference: step " .. res.first .. ")") or "",
      res.statements and (", " .. res.statements .. " statements fail") or ""))
  end)
  for _, e in ipairs(errors) do say(e, "\n") end
  say(("\n%d/%d golden files agree\n"):format(n - bad, n))
  return bad == 0 and 0 or 1
end

local SUB = { run = cmd_run, list = cmd_list, record = cmd_record, check = cmd_check, report = cmd_report }

--- The command: golden(args) -> exit status.
return function(args)
  args = args or {}
  local sub = args[1]
  if sub == nil then return cmd_report({}) end
  if sub == "--help" or sub == "-h" or sub == "help" then say(USAGE.main, "\n"); return 0 end
  local f = SUB[sub]
  if not f then
    if sub:match("^%-") then return cmd_report(args) end
    fail(("unknown subcommand '%s' (record, check, report, list, run; --help)"):format(sub))
  end
  return f(table.move(args, 2, #args, 1, {}))
end
