--- poolsh.profile: device profiles for the simulated device. A profile is
-- a Lua file that returns a table: the GPU it was measured on, each sim
-- option's value, and the measured facts that the sim does not
-- parameterise (docs/sim.md "Device profiles"). `poolsh --profile=FILE`
-- and POOLSH_PROFILE load one before anything else runs.
local datafile = require "poolsh.datafile"

local M = {}

--- Top-level keys of a profile and their Lua types.
M.keys = {
  gpu = "string", driver = "string", runtime = "number", date = "string", cc = "string",
  values = "table", facts = "table", notes = "table", extra = "table", faults = "table",
}

--- The fields of one fault of `faults` and their Lua types
-- (docs/sim.md "Fault injection").
M.fault_keys = { op = "string", call = "number", error = "string or integer", count = "number",
                 every = "number" }

--- What the sim models where it has no option, as `poolsh calibrate`
-- names and measures it (docs/calibration.md). A profile's facts are
-- checked against these when it is applied.
M.sim_facts = {
  used_accounting = "exact",
  blocks_straddle_chunks = true,
  placement = "best fit",
  carve = "from the start",
  coalescing = true,
  release_on_query = false,
  release_on_other_stream_sync = false,
  release_order = "top down",
  release_past_live = true,
  top_range_last = true,
  pending_joins_fresh = false,
  pending_joins_own_stream = true,
  threshold_rounding = "down",
  trim_rounding = "up",
  max_size_rounding = "up to granularity",
  opportunistic_after_completion = true,
  reuse_pending_without_dependency = false,
  reuse_after_event_dependency = true,
  reuse_after_event_dependency_follow_off = false,
  reuse_after_host_sync_policies_off = true,
  reuse_after_completion_opportunistic_off = false,
  internal_dependency_at_limit = true,
  internal_dependency_waits = true,
  internal_off_at_limit = "fails",
  pool_defaults = "threshold 0, follow, opportunistic, internal",
  default_pool_defaults = "threshold 0, follow, opportunistic, internal",
  host_pool_granularity = "same as device",
}

local loaded   -- the applied profile's identity; nil: the built-in defaults

local function is_flag(name) return name:match("^release_on_") or name == "report_rules" end

--- The unit of a sim option, from its name.
function M.unit(name)
  if name:match("_ns_per_gib$") then return "ns per GiB"
  elseif name:match("_us_per_mib$") then return "us per MiB"
  elseif name:match("_us$") then return "us"
  elseif name:match("_ns$") then return "ns"
  elseif name:match("^bw_") then return "GB/s (1e9 B/s)"
  elseif is_flag(name) then return "flag, 0 or 1"
  end
  return "bytes"
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end
M.sorted_keys = sorted_keys

local function fail(path, fmt, ...)
  error(("poolsh.profile: %s: " .. fmt):format(path, ...), 0)
end

-- The sim's option names as a set, or nil when the sim is not the backend
-- (names come from the C side only there).
local function option_set()
  local core = require "poolsh.core"
  if core.backend() ~= "sim" then return nil end
  local set = {}
  for _, n in ipairs(core.options()) do set[n] = true end
  return set
end

-- Checks one value of `values`: a finite number in the option's kind.
local function check_value(path, k, v, names)
  if type(k) ~= "string" then fail(path, "values: option names must be strings, got %s", type(k)) end
  if names and not names[k] then fail(path, "values.%s: unknown sim option", k) end
  if type(v) ~= "number" then fail(path, "values.%s: number expected, got %s", k, type(v)) end
  if v ~= v or v == math.huge or v == -math.huge then fail(path, "values.%s: must be finite", k) end
  if v < 0 then fail(path, "values.%s: must not be negative, got %s", k, v) end
  local unit = M.unit(k)
  if unit == "bytes" and v ~= math.floor(v) then
    fail(path, "values.%s: must be a whole number of bytes, got %s", k, v)
  elseif is_flag(k) and v ~= 0 and v ~= 1 then
    fail(path, "values.%s: must be 0 or 1, got %s", k, v)
  elseif k:match("^bw_") and v == 0 then
    fail(path, "values.%s: must be > 0", k)
  end
end

-- Values quoted back in messages: cut as the C side cuts them.
local shown = require("poolsh.units").shown

-- A whole number from 1 to 1e18 (the sim's limit for call numbers).
local function whole(v)
  return type(v) == "number" and v >= 1 and v <= 1e18 and v == math.floor(v)
end

-- Whether the sim knows the "fault.*" option key (an op, or an op and an
-- error name): the sim's tables are the only list of both.
local function sim_knows(key)
  return (pcall(require("poolsh.core").option, key))
end

-- Checks one fault f (faults[i]); with `sim`, also its op and error names
-- against the sim. Returns nil, or the message.
local function fault_problem(i, f, sim)
  local at = ("faults[%d]"):format(i)
  if type(f) ~= "table" then return ("%s: table expected, got %s"):format(at, type(f)) end
  for _, k in ipairs(sorted_keys(f)) do
    local want = M.fault_keys[k]
    if not want then
      return ("%s: unknown key '%s' (known: %s)"):format(at, shown(k),
        table.concat(sorted_keys(M.fault_keys), ", "))
    end
    local ok = type(f[k]) == want or (k == "error" and (type(f[k]) == "string" or math.type(f[k]) == "integer"))
    if not ok then return ("%s.%s: %s expected, got %s"):format(at, k, want, type(f[k])) end
  end
  for _, k in ipairs { "op", "call", "error" } do
    if f[k] == nil then return ("%s.%s: missing"):format(at, k) end
  end
  if not whole(f.call) then return ("%s.call: a whole number >= 1 expected, got %s"):format(at, f.call) end
  if f.every ~= nil and not whole(f.every) then
    return ("%s.every: a whole number >= 1 expected, got %s"):format(at, f.every)
  end
  if f.count ~= nil and not whole(f.count) and f.count ~= math.huge then
    return ("%s.count: a whole number >= 1 or math.huge expected, got %s"):format(at, f.count)
  end
  if not f.op:match("^[%a_][%w_]*$") or (sim and not sim_knows("fault." .. f.op)) then
    return ("%s.op: unknown sim operation '%s'"):format(at, shown(f.op))
  end
  if math.type(f.error) == "integer" then
    if f.error < 1 or f.error > 99999 then
      return ("%s.error: a CUDA error code from 1 to 99999 expected, got %d"):format(at, f.error)
    end
  elseif not f.error:match("^cuda%w+$") or (sim and not sim_knows(("fault.%s.%s"):format(f.op, f.error))) then
    return ("%s.error: unknown CUDA error '%s'"):format(at, shown(f.error))
  end
end

-- Checks a faults array; returns nil or the first problem.
local function faults_problem(list, sim)
  local n = #list
  for k in pairs(list) do
    if math.type(k) ~= "integer" or k < 1 or k > n then
      return ("faults: an array of faults expected, got key '%s'"):format(shown(k))
    end
  end
  for i, f in ipairs(list) do
    local p = fault_problem(i, f, sim)
    if p then return p end
  end
end

-- The first fault whose call was made already, as a message, or nil.
local function past_call(list)
  local core = require "poolsh.core"
  for i, f in ipairs(list) do
    local made = core.option("fault." .. f.op)
    if f.call <= made then
      return ("faults[%d].call: call %d of %s was made already (%d so far)")
        :format(i, math.tointeger(f.call) or f.call, f.op, made)
    end
  end
end

-- Arms every fault of a checked list; on a refusal disarms every fault
-- and returns the message.
local function arm_all(list)
  local core = require "poolsh.core"
  for i, f in ipairs(list) do
    local ok, err = pcall(function()
      core.option("fault.count", f.count or 1)
      core.option("fault.every", f.every or 1)
      core.option(("fault.%s.%s"):format(f.op, f.error), f.call)
    end)
    if not ok then
      core.option("fault.clear", 0)
      return ("faults[%d]: %s"):format(i, tostring(err))
    end
  end
end

-- Checks the facts table: known names, each of the sim's type.
local function check_facts_table(path, facts)
  for _, k in ipairs(sorted_keys(facts)) do
    local want = M.sim_facts[k]
    if want == nil then
      fail(path, "facts.%s: unknown fact (known: %s)", tostring(k),
           table.concat(sorted_keys(M.sim_facts), ", "))
    end
    if type(facts[k]) ~= type(want) then
      fail(path, "facts.%s: %s expected, got %s", k, type(want), type(facts[k]))
    end
  end
end

-- Checks a table of one value type (notes: strings; extra: numbers).
local function check_map(path, name, t, vtype)
  for _, k in ipairs(sorted_keys(t)) do
    if type(k) ~= "string" then fail(path, "%s: keys must be strings, got %s", name, type(k)) end
    if type(t[k]) ~= vtype then fail(path, "%s.%s: %s expected, got %s", name, k, vtype, type(t[k])) end
  end
end

--- Checks a profile table; raises naming `path` and the key at fault.
-- Option names are checked against the sim's when the sim is the backend;
-- values below an option's minimum are refused when applied.
function M.check(t, path)
  path = path or "profile"
  if type(t) ~= "table" then fail(path, "a profile must return a table, got %s", type(t)) end
  for _, k in ipairs(sorted_keys(t)) do
    local want = M.keys[k]
    if not want then
      fail(path, "unknown key '%s' (known: %s)", tostring(k), table.concat(sorted_keys(M.keys), ", "))
    end
    if type(t[k]) ~= want then fail(path, "%s: %s expected, got %s", k, want, type(t[k])) end
  end
  if t.runtime and math.type(t.runtime) ~= "integer" then fail(path, "runtime: integer expected") end
  local names = option_set()
  for _, k in ipairs(sorted_keys(t.values or {})) do check_value(path, k, t.values[k], names) end
  local problem = faults_problem(t.faults or {}, names ~= nil)
  if problem then fail(path, "%s", problem) end
  check_facts_table(path, t.facts or {})
  check_map(path, "notes", t.notes or {}, "string")
  check_map(path, "extra", t.extra or {}, "number")
  return t
end

--- read(path) -> the profile table in file `path`, checked (M.check).
-- The file is data, parsed and never run (poolsh.datafile).
function M.read(path)
  if type(path) ~= "string" then
    error("poolsh.profile.read: file name expected, got " .. type(path), 2)
  end
  local ok, t = datafile.read(path)
  if not ok then error("poolsh.profile: " .. t, 0) end
  return M.check(t, path)
end

-- A Lua literal for a key or a scalar.
local function key_lit(k)
  return k:match("^[%a_][%w_]*$") and k or ("[%q]"):format(k)
end

local function lit(v)
  if type(v) == "string" then return ("%q"):format(v) end
  if math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 2^53 then
    return tostring(math.tointeger(v))
  end
  return tostring(v)
end

-- Lines of a sorted table of scalars; comment(k) gives a trailing comment.
local function section(out, name, t, comment)
  out[#out + 1] = "  " .. name .. " = {"
  for _, k in ipairs(sorted_keys(t)) do
    local c = comment and comment(k)
    out[#out + 1] = ("    %s = %s,%s"):format(key_lit(k), lit(t[k]), c and ("  -- " .. c) or "")
  end
  out[#out + 1] = "  },"
end

-- Lines of the faults array, one fault a line.
local function fault_section(out, list)
  out[#out + 1] = "  faults = {"
  for _, f in ipairs(list) do
    local fields = {}
    for _, k in ipairs { "op", "call", "error", "count", "every" } do
      if f[k] ~= nil then
        fields[#fields + 1] = ("%s = %s"):format(k, f[k] == math.huge and "1/0" or lit(f[k]))
      end
    end
    out[#out + 1] = "    { " .. table.concat(fields, ", ") .. " },"
  end
  out[#out + 1] = "  },"
end

--- format(t) -> the text of a profile file for table t: sorted keys,
-- each value with its unit, notes and facts as given.
function M.format(t)
  local out = {
    ("-- poolsh device profile: %s (driver %s, runtime %s, cc %s), %s."):format(
      t.gpu or "?", t.driver or "?", tostring(t.runtime or "?"), t.cc or "?", t.date or "?"),
    "-- Load it with `poolsh --backend=sim --profile=FILE` (docs/sim.md, Device profiles).",
    "return {",
  }
  for _, k in ipairs(sorted_keys(t)) do
    local v = t[k]
    if k == "faults" then fault_section(out, v)
    elseif k == "values" then section(out, k, v, M.unit)
    elseif k == "extra" then section(out, k, v, M.unit)
    elseif type(v) == "table" then section(out, k, v)
    else out[#out + 1] = ("  %s = %s,"):format(key_lit(k), lit(v)) end
  end
  out[#out + 1] = "}"
  return table.concat(out, "\n") .. "\n"
end

--- The facts where `facts` differs from what the sim models, as messages.
function M.fact_mismatches(facts)
  local out = {}
  for _, k in ipairs(sorted_keys(facts or {})) do
    local want = M.sim_facts[k]
    if want ~= nil and facts[k] ~= want then
      out[#out + 1] = ("fact '%s' is %s on this GPU but the sim models %s: the sim cannot reproduce that GPU there")
        :format(k, tostring(facts[k]), tostring(want))
    end
  end
  return out
end

-- Sets every value through poolsh.sim.set; on an error puts back the old
-- values and raises naming the file and key.
local function set_values(values, path)
  local poolsh = require "poolsh"
  local old = {}
  for _, k in ipairs(sorted_keys(values)) do
    local v = values[k]
    local cur = poolsh.core.option(k)
    if cur ~= v then   -- equal values are not set again (memory once mapped)
      local ok, err = pcall(poolsh.sim.set, k, v)
      if not ok then
        for ok_k, ov in pairs(old) do poolsh.core.option(ok_k, ov) end
        err = tostring(err)
        local hint = err:match("NotSupported") and " (set it before any memory is mapped)" or ""
        fail(path, "values.%s: %s%s", k, err, hint)
      end
      old[k] = cur
    end
  end
end

-- t.values, and the entries of t.extra that name sim options absent from
-- values: profiles written before the sim had an option for a measured
-- cost (host_register_ns, trim_ns, ...) kept it in extra; it feeds the
-- sim now.
local function fed_values(t)
  local v, names = {}, option_set() or {}
  for k, x in pairs(t.extra or {}) do
    if names[k] then v[k] = x end
  end
  for k, x in pairs(t.values or {}) do v[k] = x end
  return v
end

--- apply(t [, path]): sets each of t.values (and of t.extra that names a
-- sim option values lacks) on the sim, arms t.faults,
-- remembers t's identity for poolsh.sim.profile_info(), and warns (warn())
-- for each fact the sim does not reproduce. Raises on the cuda backend.
function M.apply(t, path)
  local where = path or "profile"
  M.check(t, where)
  local backend = require("poolsh.core").backend()
  if backend ~= "sim" then fail(where, "profiles apply to the sim backend (this is %s)", backend) end
  local problem = past_call(t.faults or {})
  if problem then fail(where, "%s", problem) end
  set_values(fed_values(t), where)
  problem = arm_all(t.faults or {})
  if problem then fail(where, "%s", problem) end
  loaded = { gpu = t.gpu, driver = t.driver, runtime = t.runtime, date = t.date, path = path }
  require("poolsh.core").device_name(("poolsh sim (%s profile)"):format(t.gpu or "a custom"))
  for _, msg in ipairs(M.fact_mismatches(t.facts)) do
    warn("poolsh: profile " .. where .. ": " .. msg)
  end
  return t
end

-- Raises for the faults API on another backend than the sim.
local function need_sim(fname)
  local backend = require("poolsh.core").backend()
  if backend ~= "sim" then
    error(("poolsh.profile.%s: faults are the sim's (this is %s)"):format(fname, backend), 3)
  end
end

--- arm(faults): arms faults at run time, as a profile's `faults` does: an
-- array of {op =, call =, error = [, count =] [, every =]}, or one such
-- table. Raises naming the fault at fault, arming none of them (should
-- the sim itself refuse one, out of memory, every fault is disarmed).
function M.arm(list)
  need_sim("arm")
  if type(list) ~= "table" then
    error("poolsh.profile.arm: a fault or an array of faults expected, got " .. type(list), 2)
  end
  if list.op ~= nil then list = { list } end
  local problem = faults_problem(list, true) or past_call(list) or arm_all(list)
  if problem then error("poolsh.profile.arm: " .. problem, 2) end
end

--- disarm(): no fault is armed any more (call counts go on).
function M.disarm()
  need_sim("disarm")
  require("poolsh.core").option("fault.clear", 0)
end

--- calls(op) -> how many calls of the backend operation `op` the sim
-- has counted since it opened, failed ones included.
function M.calls(op)
  need_sim("calls")
  if type(op) ~= "string" or not op:match("^[%a_][%w_]*$") or not sim_knows("fault." .. op) then
    error(("poolsh.profile.calls: unknown sim operation '%s'"):format(shown(op)), 2)
  end
  return require("poolsh.core").option("fault." .. op)
end

--- load(path) = apply(read(path), path).
function M.load(path)
  return M.apply(M.read(path), path)
end

--- The loaded profile's {gpu, driver, runtime, date, path}, or nil while
-- the built-in defaults are in use.
function M.info()
  if not loaded then return nil end
  local c = {}
  for k, v in pairs(loaded) do c[k] = v end
  return c
end

--- The directory of the shipped profiles (beside this module), or nil.
function M.dir()
  local p = package.searchpath("poolsh.profile", package.path)
  return p and (p:gsub("profile%.lua$", "profiles")) or nil
end

local function words(s)
  local w = {}
  for tok in s:gmatch("%w+") do w[tok:lower()] = true end
  return w
end

--- for_gpu(name) -> the path of the shipped profile for GPU `name`: the
-- one whose gpu is `name`, else one that shares its model token ("H100",
-- "H200": a word with letters and digits, which is also its file name);
-- nil when there is none.
function M.for_gpu(name)
  local dir = M.dir()
  if type(name) ~= "string" or not dir then return nil end
  local by_model
  for tok in name:gmatch("%w+") do
    local path = dir .. "/" .. tok:lower() .. ".lua"
    local f = tok:match("%a") and tok:match("%d") and io.open(path, "r")
    if f then
      f:close()
      local gpu = M.read(path).gpu or ""
      if gpu == name then return path end
      if words(gpu)[tok:lower()] then by_model = by_model or path end
    end
  end
  return by_model
end

return M
