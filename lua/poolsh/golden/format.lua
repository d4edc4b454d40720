--- poolsh.golden.format: golden files. A golden file is a Lua table
-- constructor, written with keys in a fixed order (a few first, the rest
-- sorted) and one step per block, so that two recordings diff line by line.
local datafile = require "poolsh.datafile"

local M = {}

-- Keys written first, in this order; the rest follow sorted.
local FIRST = { "scenario", "step", "summary", "gpu", "driver", "driver_api", "runtime",
                "backend", "date", "poolsh" }
local RANK = {}
for i, k in ipairs(FIRST) do RANK[k] = i end

local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta == "number" end
  if ta == "number" then return a < b end
  local ra, rb = RANK[a] or math.huge, RANK[b] or math.huge
  if ra ~= rb then return ra < rb end
  return a < b
end

local function is_array(t)
  local n = #t
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end

local function scalar(v)
  local t = type(v)
  if t == "string" then return ("%q"):format(v) end
  if math.type(v) == "integer" or t == "boolean" then return tostring(v) end
  if t == "number" then
    if v == math.huge then return "math.huge" end
    if v ~= v or v == -math.huge then error("golden format: cannot write " .. tostring(v)) end
    return ("%.17g"):format(v)
  end
  error("golden format: cannot write a " .. t)
end

local function key_text(k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return k end
  return "[" .. scalar(k) .. "]"
end

local function flat(t)
  for _, v in pairs(t) do
    if type(v) == "table" then return false end
  end
  return true
end

local function write(t, indent, out)
  if type(t) ~= "table" then out[#out + 1] = scalar(t); return end
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, key_less)
  local arr = is_array(t)
  if flat(t) then
    local parts = {}
    for _, k in ipairs(keys) do
      parts[#parts + 1] = arr and scalar(t[k]) or (key_text(k) .. " = " .. scalar(t[k]))
    end
    out[#out + 1] = #parts == 0 and "{}" or ("{ " .. table.concat(parts, ", ") .. " }")
    return
  end
  local inner = indent .. "  "
  out[#out + 1] = "{\n"
  for _, k in ipairs(keys) do
    out[#out + 1] = inner
    if not arr then out[#out + 1] = key_text(k) .. " = " end
    write(t[k], inner, out)
    out[#out + 1] = ",\n"
  end
  out[#out + 1] = indent .. "}"
end

--- format.encode(t) -> "return { ... }\n": t's constructor (strings,
-- integers, booleans and tables of them; no cycles).
function M.encode(t)
  local out = { "return " }
  write(t, "", out)
  out[#out + 1] = "\n"
  return table.concat(out)
end

--- format.decode(text, name) -> the table, or nil and a message. The
-- text is data, parsed and never run (poolsh.datafile).
function M.decode(text, name)
  local ok, t = datafile.decode(text, name)
  if not ok then return nil, t end
  if type(t) ~= "table" then return nil, name .. ": not a golden file (no table returned)" end
  return t
end

--- format.check(t, name) -> t, or nil and what is wrong with a golden
-- record (a scenario name and an array of steps, each with a name).
function M.check(t, name)
  if type(t.scenario) ~= "string" or t.scenario == "" then
    return nil, name .. ": not a golden file (no scenario name)"
  end
  if type(t.steps) ~= "table" then return nil, name .. ": not a golden file (no steps)" end
  for _, k in ipairs { "gpu", "backend", "driver", "date" } do
    if t[k] ~= nil and type(t[k]) ~= "string" then
      return nil, ("%s: %s: a string expected, got %s"):format(name, k, type(t[k]))
    end
  end
  if t.profile ~= nil and (type(t.profile) ~= "string" or
      not (t.profile == "built-in" or t.profile:match("^[%w_][%w_.-]*%.lua$"))) then
    return nil, name .. ": profile: a profile file's name (no directory) expected"
  end
  for i, s in ipairs(t.steps) do
    if type(s) ~= "table" or type(s.step) ~= "string" then
      return nil, ("%s: step %d has no name"):format(name, i)
    end
  end
  return t
end

--- format.read(path) -> the checked record, or nil and a message. A file
-- over datafile.max_bytes is refused before it is read.
function M.read(path)
  local f, err = io.open(path, "r")
  if not f then return nil, err end
  local size = f:seek("end")
  if size and size > datafile.max_bytes then
    f:close()
    return nil, ("%s: a data file of %d bytes (at most %d)"):format(path, size, datafile.max_bytes)
  end
  f:seek("set")
  local text = f:read("a")
  f:close()
  local t, e = M.decode(text, path)
  if not t then return nil, e end
  return M.check(t, path)
end

--- format.write(path, t): writes t's encoding through a temporary beside
-- path renamed into place (poolsh.core.open_atomic); raises when it cannot.
function M.write(path, t)
  local text = M.encode(t)
  local ok, err = pcall(function()
    local f <close> = require("poolsh.core").open_atomic(path)
    f:write(text)   -- a failed write makes the commit raise
    f:commit()
  end)
  if not ok then error("poolsh golden: " .. tostring(err), 0) end
end

return M
