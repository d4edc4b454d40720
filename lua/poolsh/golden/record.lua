--- poolsh.golden.record: a scenario run into a record, here or in a poolsh
-- process of its own, and what the record's header says of this process
-- (docs/fidelity.md).
local poolsh = require "poolsh"
local format = require "poolsh.golden.format"
local scenarios = require "poolsh.golden.scenarios"

local M = {}

local function fail(msg) error("poolsh golden: " .. msg, 0) end

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function program()
  if poolsh.program then return poolsh.program end
  local f = io.popen("readlink \"/proc/$PPID/exe\" 2>/dev/null")   -- the shell's parent: this poolsh
  local p = f and f:read("l")
  if f then f:close() end
  return p or "poolsh"
end

--- child(name, backend [, profile]) -> the record of scenario `name` run
-- by `poolsh golden run` in a new poolsh process on `backend` (with the
-- sim profile `profile`, if any), or nil and what went wrong (exit status
-- and the last lines of its output).
function M.child(name, backend, profile)
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

--- gpu_slug(name) -> the lowercase short name of a GPU for a directory: the first model-like
-- word ("NVIDIA H100 80GB HBM3" -> "h100"), else all words joined.
function M.gpu_slug(name)
  local words = {}
  for w in name:lower():gmatch("[%w]+") do
    if w ~= "nvidia" then words[#words + 1] = w end
  end
  for _, w in ipairs(words) do
    if w:match("^%a+%d+%a*$") then return w end
  end
  return #words > 0 and table.concat(words, "-") or "gpu"
end

function M.basename(p) return p and (p:match("([^/]+)$") or p) or "built-in" end

--- profiles() -> poolsh.profile, or nil where it is not installed.
function M.profiles()
  local ok, prof = pcall(require, "poolsh.profile")
  return ok and type(prof) == "table" and prof or nil
end

--- own_profile() -> the profile this process runs with (--profile or POOLSH_PROFILE on
-- the sim), or nil for the built-in one.
function M.own_profile()
  local prof = M.profiles()
  local info = prof and prof.info and prof.info()
  return info and info.path or nil
end

--- The record's header: what this process runs on.
local function header(sc)
  local d = poolsh.device()
  return {
    scenario = sc.name, summary = sc.summary, gpu = d.name,
    driver = d.driver ~= "" and d.driver or nil, driver_api = d.driver_api ~= 0 and d.driver_api or nil,
    runtime = d.runtime_api ~= 0 and d.runtime_api or nil,
    backend = poolsh.backend(), date = os.date("!%Y-%m-%d"), poolsh = poolsh.version,
    profile = poolsh.backend() == "sim" and M.basename(M.own_profile()) or nil,
  }
end

--- run(name) -> the record of scenario `name` run in this process: its
-- header and steps (poolsh.golden.runner), and the run's error if any.
function M.run(name)
  local sc = scenarios.load(name)
  local rec = header(sc)
  local res = require("poolsh.golden.runner").run(sc)
  rec.steps, rec.error = res.steps, res.error
  return rec
end

--- all(names, dir, show) -> how many failed: runs each scenario in a
-- poolsh process of its own on this backend (on the sim with this
-- process's profile) and writes its record to dir/NAME.lua; calls
-- show(name, record) per scenario, or show(name, nil, what went wrong).
function M.all(names, dir, show)
  if not os.execute("mkdir -p -- " .. quote(dir)) then fail("cannot create " .. dir) end
  local backend = poolsh.backend()
  local failed = 0
  for _, n in ipairs(names) do
    local rec, err = M.child(n, backend, backend == "sim" and M.own_profile() or nil)
    if rec then
      format.write(dir .. "/" .. n .. ".lua", rec)
    else
      failed = failed + 1
    end
    show(n, rec, err)
  end
  return failed
end

return M
