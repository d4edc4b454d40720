--- poolsh.golden.check: each golden file replayed on the sim in a poolsh
-- process of its own, compared step by step and its statements held to
-- it (docs/fidelity.md). The loop behind poolsh golden check and report.
local poolsh = require "poolsh"
local format = require "poolsh.golden.format"
local compare = require "poolsh.golden.compare"
local statements = require "poolsh.golden.statements"
local scenarios = require "poolsh.golden.scenarios"
local record = require "poolsh.golden.record"

local M = {}

local function fail(msg) error("poolsh golden: " .. msg, 0) end
local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

--- files(paths) -> the golden files named by paths (directories: their *.lua, sorted).
function M.files(paths)
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

--- profile_for(gold) -> the sim profile to replay a golden file with: the one this process
-- was given; for a sim recording, the one it was recorded with; for a
-- GPU's, the shipped one for its GPU; else nil (the built-in profile).
function M.profile_for(gold)
  local given = poolsh.backend() == "sim" and record.own_profile()
  if given then return given end
  local prof = record.profiles()
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

--- replay_all(paths, show): replays each golden file (default: every one
-- under tests/golden) on the sim; calls show(file, gold, profile,
-- res, lines) per file (gold nil and lines the error when unreadable).
-- Returns how many did not fully agree.
function M.replay_all(pos, show)
  local files = M.files(#pos > 0 and pos or { "tests/golden" })
  local bad = 0
  for _, file in ipairs(files) do
    local gold, err = format.read(file)
    local profile, res, lines
    if gold then
      local ok, e = pcall(scenarios.load, gold.scenario)
      if not ok then gold, err = nil, file .. ": " .. e end
    end
    if gold then
      local ok, p = pcall(M.profile_for, gold)
      if ok then profile = p else gold, err = nil, file .. ": " .. p end
    end
    if gold then
      local replay, rerr = record.child(gold.scenario, "sim", profile)
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

return M
