--- poolsh golden: record the fidelity scenarios on a device, replay golden
-- files on the sim and compare them step by step (docs/fidelity.md).
local poolsh = require "poolsh"
local format = require "poolsh.golden.format"
local compare = require "poolsh.golden.compare"
local statements = require "poolsh.golden.statements"

local USAGE = {
  main = [[
usage: poolsh [--backend=cuda|sim] golden [report|record|check|list|run] ...
  poolsh golden                    the report: each golden file replayed on the sim
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

---------------------------------------------------------------- scenarios

local function scenario_names() return require "poolsh.fidelity" end

--- Loads scenario `name`; raises a clear error for an unknown one.
local function load_scenario(name)
  if type(name) ~= "string" or not name:match("^[%w_]+$") or name == "init" then
    fail(("unknown scenario '%s' (poolsh golden list shows them)"):format(tostring(name)))
  end
  local mod = "poolsh.fidelity." .. name
  if not package.searchpath(mod, package.path) then
    fail(("unknown scenario '%s' (poolsh golden list shows them)"):format(name))
  end
  local sc = require(mod)
  if type(sc) ~= "table" or type(sc.run) ~= "function" then
    fail(("scenario '%s' is not a table with a run function"):format(name))
  end
  return sc
end

---------------------------------------------------------------- processes

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function program()
  if poolsh.program then return poolsh.program end
  local f = io.popen("readlink \"/proc/$PPID/exe\" 2>/dev/null")   -- the shell's parent: this poolsh
  local p = f and f:read("l")
  if f then f:close() end
  return p or "poolsh"
end

--- Runs scenario `name` in a new poolsh process on `backend` (with the
-- sim profile `profile`, if any). Returns the record, or nil and what
-- went wrong (exit status and the last lines of its output).
local function run_child(name, backend, profile)
  local tmp = os.tmpname()
  local code = ("os.exit(require('poolsh.cmd.golden')({'run', %q, '--out', %q}), true)"):format(name, tmp)
  local cmd = { quote(program()), quote("--backend=" .. backend) }
  if backend == "cuda" then cmd[#cmd + 1] = "--device=" .. poolsh.device().index end
  if profile then cmd[#cmd + 1] = quote("--profile=" .. profile) end
  cmd[#cmd + 1] = "-e " .. quote(code) .. " 2>&1"
  local p = io.popen(table.concat(cmd, " "))
  local out = p:read("a")
  local ok, how, status = p:close()
  local rec, err
  if ok then
    rec, err = format.read(tmp)
  else
    local msg = out:gsub("\nstack traceback:.*", ""):gsub("%s+$", "")
    local tail = msg:match("([^\n]*\n?[^\n]*\n?[^\n]*)$") or ""
    err = ("%s %s%s"):format(how == "signal" and "killed by signal" or "exit status",
      tostring(status), tail ~= "" and (":\n    " .. tail:gsub("\n", "\n    ")) or "")
  end
  os.remove(tmp)
  return rec, err
end

--- Lowercase short name of a GPU for a directory: the first model-like
-- word ("NVIDIA H100 80GB HBM3" -> "h100"), else all words joined.
local function gpu_slug(name)
  local words = {}
  for w in name:lower():gmatch("[%w]+") do
    if w ~= "nvidia" then words[#words + 1] = w end
  end
  for _, w in ipairs(words) do
    if w:match("^%a+%d+%a*$") then return w end
  end
  return #words > 0 and table.concat(words, "-") or "gpu"
end

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

local function basename(p) return p and (p:match("([^/]+)$") or p) or "built-in" end

--- poolsh.profile, or nil where it is not installed.
local function profiles()
  local ok, prof = pcall(require, "poolsh.profile")
  return ok and type(prof) == "table" and prof or nil
end

--- The profile this process runs with (--profile or POOLSH_PROFILE on
-- the sim), or nil for the built-in one.
local function own_profile()
  local prof = profiles()
  local info = prof and prof.info and prof.info()
  return info and info.path or nil
end

---------------------------------------------------------------- subcommands

--- The record's header: what this process runs on.
local function header(sc)
  local d = poolsh.device()
  return {
    scenario = sc.name, summary = sc.summary, gpu = d.name,
    driver = d.driver ~= "" and d.driver or nil, driver_api = d.driver_api ~= 0 and d.driver_api or nil,
    runtime = d.runtime_api ~= 0 and d.runtime_api or nil,
    backend = poolsh.backend(), date = os.date("!%Y-%m-%d"), poolsh = poolsh.version,
    profile = poolsh.backend() == "sim" and basename(own_profile()) or nil,
  }
end

local function cmd_run(args)
  local flags, pos = parse(args, { out = true })
  if not flags then say(USAGE.run, "\n"); return 0 end
  if #pos ~= 1 then fail("run takes one scenario name") end
  local sc = load_scenario(pos[1])
  local rec = header(sc)
  local res = require("poolsh.golden.runner").run(sc)
  rec.steps, rec.error = res.steps, res.error
  if flags.out then format.write(flags.out, rec) else say(format.encode(rec)) end
  return 0
end

local function cmd_list(args)
  if not parse(args, {}) then say(USAGE.list, "\n"); return 0 end
  local names = scenario_names()
  local w = 0
  for _, n in ipairs(names) do w = math.max(w, #n) end
  for _, n in ipairs(names) do
    say(("%-" .. w .. "s  %s\n"):format(n, load_scenario(n).summary or ""))
  end
  return 0
end

local function cmd_record(args)
  local flags, pos = parse(args, { out = true })
  if not flags then say(USAGE.record, "\n"); return 0 end
  local backend = poolsh.backend()
  local names = #pos > 0 and pos or scenario_names()
  for _, n in ipairs(names) do load_scenario(n) end
  local dir = flags.out
  if not dir then
    if backend == "sim" then
      fail("on the sim, give --out DIR (tests/golden/<gpu> holds GPU recordings)")
    end
    dir = "tests/golden/" .. gpu_slug(poolsh.device().name)
  end
  if not os.execute("mkdir -p -- " .. quote(dir)) then fail("cannot create " .. dir) end
  local failed = 0
  for _, n in ipairs(names) do
    local rec, err = run_child(n, backend, backend == "sim" and own_profile() or nil)
    if rec then
      format.write(dir .. "/" .. n .. ".lua", rec)
      say(("%-32s %3d steps%s\n"):format(n, #rec.steps, rec.error and ("  (stopped: " .. rec.error .. ")") or ""))
    else
      failed = failed + 1
      say(("%-32s FAILED: %s\n"):format(n, err))
    end
  end
  say(("%d scenarios recorded in %s on %s%s\n"):format(#names - failed, dir, backend,
    failed > 0 and (", " .. failed .. " failed") or ""))
  return failed == 0 and 0 or 1
end

--- The golden files named by paths (directories: their *.lua, sorted).
local function golden_files(paths)
  local files = {}
  for _, path in ipairs(paths) do
    local f = io.open(path, "r")
    if not f then fail("no such file or directory: " .. path) end
    f:close()
    local arg = quote(path:sub(1, 1) == "-" and "./" .. path or path)   -- not an option
    if os.execute("test -d " .. arg) then
      local p = io.popen("find " .. arg .. " -type f -name '*.lua' | LC_ALL=C sort")
      local n = 0
      for line in p:lines() do files[#files + 1] = line; n = n + 1 end
      p:close()
      if n == 0 then fail("no golden files (*.lua) in " .. path) end
    else
      files[#files + 1] = path
    end
  end
  return files
end

--- The sim profile to replay a golden file with: the one this process
-- was given; for a sim recording, the one it was recorded with; for a
-- GPU's, the shipped one for its GPU; else nil (the built-in profile).
local function profile_for(gold)
  local given = poolsh.backend() == "sim" and own_profile()
  if given then return given end
  local prof = profiles()
  if gold.backend == "sim" then
    if not gold.profile or gold.profile == "built-in" or not (prof and prof.dir) then return nil end
    local path = prof.dir() .. "/" .. gold.profile
    local f = io.open(path, "r")
    if not f then fail(("%s was recorded with profile %s, which is not installed"):format(gold.scenario, gold.profile)) end
    f:close()
    return path
  end
  return prof and prof.for_gpu and prof.for_gpu(gold.gpu) or nil
end

--- Replays each golden file on the sim; calls show(file, gold, profile,
-- res, lines) per file (gold nil and lines the error when unreadable).
-- Returns how many did not fully agree.
local function replay_all(pos, show)
  local files = golden_files(#pos > 0 and pos or { "tests/golden" })
  local bad = 0
  for _, file in ipairs(files) do
    local gold, err = format.read(file)
    local profile, res, lines
    if gold then
      local ok, e = pcall(load_scenario, gold.scenario)
      if not ok then gold, err = nil, file .. ": " .. e end
    end
    if gold then
      local ok, p = pcall(profile_for, gold)
      if ok then profile = p else gold, err = nil, file .. ": " .. p end
    end
    if gold then
      local replay, rerr = run_child(gold.scenario, "sim", profile)
      if replay then
        res = compare.records(gold, replay)
        lines = compare.report(gold, replay, res, gold.backend == "cuda" and "GPU" or "golden", "sim")
        -- poolsh's statements in the file, held to its addresses and counters
        local problems = statements.check(gold)
        if #problems > 0 then
          res.statements = #problems
          for _, l in ipairs(statements.report(problems)) do lines[#lines + 1] = l end
        end
      else
        err = file .. ": replay failed: " .. rerr
        gold = nil
      end
    end
    if not gold or res.first or res.statements then bad = bad + 1 end
    show(file, gold, profile, res, gold and lines or err)
  end
  return bad, #files
end

local function cmd_check(args)
  local flags, pos = parse(args, {})
  if not flags then say(USAGE.check, "\n"); return 0 end
  local bad, n = replay_all(pos, function(file, gold, profile, res, lines)
    if not gold then say(lines, "\n"); return end
    say(("%s (%s, profile %s): %d/%d steps agree%s\n"):format(
      gold.scenario, gold.gpu or "?", basename(profile), res.agree, res.total,
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
  local bad, n = replay_all(pos, function(file, gold, profile, res, lines)
    if not gold then errors[#errors + 1] = lines; return end
    local where = table.concat({ gold.gpu or "?", gold.driver or nil }, ", ")
    say(("| %s | %s | %s | %d/%d%s%s |\n"):format(gold.scenario, where, basename(profile),
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
