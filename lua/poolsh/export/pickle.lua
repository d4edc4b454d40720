--- A minimal Python pickle writer (protocol 2), enough for data: dict,
-- list, str (UTF-8; bytes that are not become U+FFFD), int (any Lua integer; beyond 32 bits via LONG1),
-- float, bool and None. Python's pickle.load reads it back.
--   pickle.dumps({segments = pickle.list{}, n = 3})
-- A Lua table is a list when pickle.list marks it or when its keys are
-- exactly 1..n (n > 0); otherwise a dict (empty: {} unless marked).
-- pickle.None stands for None inside a list, where nil cannot.
local util = require "poolsh.export.util"
local is_sequence = util.is_sequence

local M = {}

local list_mt = { __name = "poolsh.pickle.list" }
local dict_mt = { __name = "poolsh.pickle.dict" }

--- Marks t as a list (so an empty one pickles as []).
function M.list(t) return setmetatable(t or {}, list_mt) end

--- Marks t as a dict (so a sequence pickles as {1: ..., 2: ...}).
function M.dict(t) return setmetatable(t or {}, dict_mt) end

--- None, where a Lua value is needed.
M.None = setmetatable({}, { __name = "poolsh.pickle.None" })

-- Opcodes of protocols 0-2 (Lib/pickle.py names).
local PROTO, STOP = "\x80", "."
local EMPTY_DICT, EMPTY_LIST, MARK = "}", "]", "("
local SETITEMS, APPENDS = "u", "e"
local BININT, BININT1, BININT2, LONG1 = "J", "K", "M", "\x8a"
local BINFLOAT, BINUNICODE = "G", "X"
local NONE, NEWTRUE, NEWFALSE = "N", "\x88", "\x89"

-- Python pickles containers in batches of 1000 items; so do we.
local BATCH = 1000

-- An integer's shortest little-endian two's complement bytes (LONG1 body).
local function long_bytes(n)
  local b = string.pack("<i8", n)
  local len = 8
  while len > 1 do
    local last, prev = b:byte(len), b:byte(len - 1)
    if (last == 0 and prev < 0x80) or (last == 0xff and prev >= 0x80) then
      len = len - 1
    else
      break
    end
  end
  return b:sub(1, len)
end

-- An integer's pickle.
local function int_bytes(n)
  if n >= 0 and n < 0x100 then
    return BININT1 .. string.char(n)
  elseif n >= 0 and n < 0x10000 then
    return BININT2 .. string.pack("<I2", n)
  elseif n >= -0x80000000 and n < 0x80000000 then
    return BININT .. string.pack("<i4", n)
  end
  local b = long_bytes(n)
  return LONG1 .. string.char(#b) .. b
end

local function int(n, out) out(int_bytes(n)) end

local function is_list(t)
  local mt = getmetatable(t)
  if mt == list_mt then return true end
  if mt == dict_mt then return false end
  return is_sequence(t)
end

-- Keys in a stable order: numbers first (ascending), then strings.
local function sorted_keys(t)
  local keys, strings = {}, true
  for k in pairs(t) do
    local ty = type(k)
    if ty ~= "string" and ty ~= "number" and ty ~= "boolean" then
      error("poolsh.pickle: dict keys must be strings, numbers or booleans, got " .. ty, 0)
    end
    keys[#keys + 1] = k
    strings = strings and ty == "string"
  end
  if strings then table.sort(keys) return keys end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "boolean" then return (not a) and b end
    return a < b
  end)
  return keys
end

local value

-- Items in batches: MARK item... APPENDS (or MARK k v... SETITEMS).
local function batched(items, per, op, out, depth)
  local n = #items
  for first = 1, n, BATCH * per do
    out(MARK)
    for i = first, math.min(n, first + BATCH * per - 1) do value(items[i], out, depth) end
    out(op)
  end
end

local function table_value(t, out, depth)
  if t == M.None then out(NONE); return end
  if depth > 100 then error("poolsh.pickle: table nested too deeply (a cycle?)", 0) end
  if is_list(t) then
    out(EMPTY_LIST)
    local items = {}
    for i = 1, #t do items[i] = t[i] == nil and M.None or t[i] end
    batched(items, 1, APPENDS, out, depth + 1)
  else
    out(EMPTY_DICT)
    local items = {}
    for _, k in ipairs(sorted_keys(t)) do
      items[#items + 1] = k
      items[#items + 1] = t[k]
    end
    batched(items, 2, SETITEMS, out, depth + 1)
  end
end

function value(v, out, depth)
  local ty = type(v)
  if v == nil then out(NONE)
  elseif ty == "boolean" then out(v and NEWTRUE or NEWFALSE)
  elseif math.type(v) == "integer" then int(v, out)
  elseif ty == "number" then out(BINFLOAT .. string.pack(">d", v))
  elseif ty == "string" then
    v = util.valid_utf8(v, "\u{FFFD}")   -- any name pickles as a str (trace.c's pk_str too)
    out(BINUNICODE .. string.pack("<I4", #v) .. v)
  elseif ty == "table" then table_value(v, out, depth)
  else error("poolsh.pickle: cannot pickle a " .. ty, 0) end
end

--- Writes the pickle of v (no header) with out(string), for a writer that
-- builds a container piece by piece with M.op.
function M.value(v, out) value(v, out, 0) end

--- The pickle of v (no header) as a string: M.value's bytes, an integer's
-- without a table.
function M.bytes(v)
  if math.type(v) == "integer" then return int_bytes(v) end
  local buf = {}
  value(v, function(s) buf[#buf + 1] = s end, 0)
  return table.concat(buf)
end

--- The opcodes such a writer needs, and the batch size of APPENDS.
M.op = { header = PROTO .. "\x02", stop = STOP, empty_dict = EMPTY_DICT, empty_list = EMPTY_LIST,
  mark = MARK, appends = APPENDS, setitems = SETITEMS, batch = BATCH }

--- Writes the pickle (protocol 2) of v with out(string), piece by piece.
function M.dump(v, out)
  out(PROTO .. "\x02")
  value(v, out, 0)
  out(STOP)
end

--- The pickle bytes (protocol 2) of v.
function M.dumps(v)
  local buf = {}
  M.dump(v, function(s) buf[#buf + 1] = s end)
  return table.concat(buf)
end

return M
