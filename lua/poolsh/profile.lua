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
  values = "table", facts = "table", notes = "table", extra = "table",
}

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
  check_facts_table(path, t.facts or {})
  check_map(path, "notes", t.notes or {}, "string")
  check_map(path, "extra", t.extra or {}, "number")
  return t
end

--- read(path) -> the profile table in file `path`, checked (M.check).
-- The file runs with an empty environment.
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
    if k == "values" then section(out, k, v, M.unit)
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

--- apply(t [, path]): sets each of t.values on the sim, remembers t's
-- identity for poolsh.sim.profile_info(), and warns (warn()) for each
-- fact the sim does not reproduce. Raises on the cuda backend.
function M.apply(t, path)
  local where = path or "profile"
  M.check(t, where)
  local backend = require("poolsh.core").backend()
  if backend ~= "sim" then fail(where, "profiles apply to the sim backend (this is %s)", backend) end
  set_values(t.values or {}, where)
  loaded = { gpu = t.gpu, driver = t.driver, runtime = t.runtime, date = t.date, path = path }
  for _, msg in ipairs(M.fact_mismatches(t.facts)) do
    warn("poolsh: profile " .. where .. ": " .. msg)
  end
  return t
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
