--- Sizes and durations: parsing unit strings and formatting bytes.
-- B, KiB, MiB, GiB, TiB, PiB are powers of 1024; KB, MB, GB, TB, PB powers
-- of 1000. Durations are milliseconds, or strings in ns, us, ms, s, min.
local M = {}

local size_units = {
  [""] = 1, b = 1,
  kib = 2^10, mib = 2^20, gib = 2^30, tib = 2^40, pib = 2^50,
  kb = 1e3, mb = 1e6, gb = 1e9, tb = 1e12, pb = 1e15,
}

local duration_units = {
  ns = 1e-6, us = 1e-3, ["µs"] = 1e-3, ms = 1, [""] = 1, s = 1e3, sec = 1e3, min = 6e4,
}

-- A value quoted back in a message, cut as C cuts them (PS_SHOWN_MAX bytes
-- of src/auxlib.h, poolsh.core.shown_max, then "...").
local SHOWN_MAX = require("poolsh.core").shown_max
local function shown(s)
  s = tostring(s)
  return #s > SHOWN_MAX and s:sub(1, SHOWN_MAX) .. "..." or s
end
M.shown = shown

-- Splits "1.5 GiB" into 1.5 and "gib"; nil when it is not number+unit.
local function split(s)
  local num, unit = s:match("^%s*([%d%.]+[eE]?[%+%-]?%d*)%s*(%S*)%s*$")
  local n = num and tonumber(num)
  if not n then return nil end
  return n, unit:lower()
end

--- Bytes in a size: an integer, or a string with units. Returns the
-- integer, or nil and what is wrong.
function M.size(s)
  if math.type(s) == "integer" then
    if s < 0 then return nil, "size must not be negative" end
    return s
  elseif type(s) == "number" then
    if s ~= math.floor(s) then return nil, "size must be an integer number of bytes" end
    if s < 0 then return nil, "size must not be negative" end
    local i = math.tointeger(s)
    if not i then return nil, "size too large" end
    return i
  elseif type(s) ~= "string" then
    return nil, "size expected (integer or string), got " .. type(s)
  end
  if s:match("^%s*%-") then return nil, "size must not be negative: '" .. shown(s) .. "'" end
  local n, unit = split(s)
  local mult = unit and size_units[unit]
  if not n or not mult then
    return nil, "invalid size '" .. shown(s) .. "' (use e.g. 4096, \"4 KiB\", \"1.5 GiB\", \"64MB\")"
  end
  local bytes = n * mult
  if bytes ~= math.floor(bytes) then
    return nil, "size '" .. shown(s) .. "' is not a whole number of bytes"
  end
  if bytes >= 2^63 then return nil, "size '" .. shown(s) .. "' too large" end
  return math.tointeger(bytes)
end

--- Milliseconds in a duration: a number (ms) or a string ("200 us").
function M.duration(d)
  if type(d) == "number" then
    if d < 0 or d ~= d or d == math.huge then return nil, "duration must be >= 0 and finite" end
    return d
  elseif type(d) ~= "string" then
    return nil, "duration expected (ms or string), got " .. type(d)
  end
  if d:match("^%s*%-") then return nil, "duration must not be negative: '" .. shown(d) .. "'" end
  local n, unit = split(d)
  local mult = unit and duration_units[unit]
  if not n or not mult then
    return nil, "invalid duration '" .. shown(d) .. "' (use e.g. 5, \"200 us\", \"5 ms\", \"1 s\")"
  end
  return n * mult
end

local binary = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

--- "4.00 MiB": bytes in binary units, two decimals (plain bytes below
-- 1 KiB). Bytes are whole: a float with a fraction (1.5), inf or nan
-- raises rather than print "1.50 B".
function M.fmt(bytes)
  if type(bytes) ~= "number" then
    error("bad argument #1 to 'fmt' (number expected, got " .. type(bytes) .. ")", 2)
  end
  local n = math.tointeger(bytes)
  if not n and bytes == math.floor(bytes) and bytes - bytes == 0 then n = bytes end  -- beyond 2^63
  if not n then
    error(("bad argument #1 to 'fmt' (bytes must be a whole number, got %s)"):format(bytes), 2)
  end
  local sign = n < 0 and "-" or ""
  local v, u = n == math.mininteger and -(n + 0.0) or math.abs(n), 1
  if v < 1024 then return ("%s%d B"):format(sign, v) end
  while v >= 1024 and u < #binary do v, u = v / 1024, u + 1 end
  return ("%s%.2f %s"):format(sign, v, binary[u])
end

--- "1.50 ms", "200 us": a duration in ms, formatted.
function M.fmt_duration(ms)
  if type(ms) ~= "number" then
    error("bad argument #1 to 'fmt_duration' (number expected, got " .. type(ms) .. ")", 2)
  end
  if ms >= 1000 then return string.format("%.2f s", ms / 1000) end
  if ms >= 1 then return string.format("%.2f ms", ms) end
  if ms >= 1e-3 then return string.format("%.1f us", ms * 1e3) end
  return string.format("%.0f ns", ms * 1e6)
end

return M
