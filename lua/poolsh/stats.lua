--- poolsh.stats: how counters read (docs/api.md, "Stats"). p:stats() and
-- the Lua allocators' stats() return plain tables of numbers with one
-- shared metatable, so that code doing arithmetic on st.reserved works as
-- before while tostring (print, the REPL) shows sizes as sizes
-- ("reserved_high = 128.00 MiB") and counts as counts.
local units = require "poolsh.units"

local M = {}

--- M.BYTES: the one list of counters that are sizes in bytes (p:stats()
-- and every allocator's); any other number is a count.
M.BYTES = {
  reserved = true, reserved_high = true, used = true, used_high = true,
  live = true, pending = true, free = true, largest_free = true,
  allocated = true, requested = true, free_bytes = true,
  peak_reserved = true, peak_used = true, peak_allocated = true,
}

-- The order fields are shown in: these first, the rest by name.
local ORDER = { "reserved", "reserved_high", "peak_reserved", "used", "used_high", "peak_used",
  "allocated", "peak_allocated", "requested", "live", "pending", "pending_count", "free",
  "largest_free", "free_estimated", "free_bytes" }
local RANK = {}
for i, k in ipairs(ORDER) do RANK[k] = i end

--- field(key, value) -> how one counter reads: a size for a byte counter
-- ("128.00 MiB"), else the value as tostring shows it.
function M.field(key, value)
  if M.BYTES[key] and math.type(value) == "integer" then return units.fmt(value) end
  return tostring(value)
end

--- lines(st [, width]) -> the counters as "{reserved = 32.00 MiB, ...}"
-- folded between fields to width columns (the terminal's, 80 when unknown).
function M.lines(st, width)
  width = width or require("poolsh.live.text").columns()
  local keys = {}
  for k in pairs(st) do if type(k) == "string" then keys[#keys + 1] = k end end
  table.sort(keys, function(a, b)
    local ra, rb = RANK[a] or math.huge, RANK[b] or math.huge
    if ra ~= rb then return ra < rb end
    return a < b
  end)
  local out, cur = {}, "{"
  for i, k in ipairs(keys) do
    local item = k .. " = " .. M.field(k, st[k]) .. (i < #keys and "," or "}")
    if cur ~= "{" and #cur + 1 + #item > width then
      out[#out + 1] = cur
      cur = " " .. item
    else
      cur = cur .. (cur == "{" and "" or " ") .. item
    end
  end
  if #keys == 0 then cur = "{}" end
  out[#out + 1] = cur
  return out
end

--- M.meta: the stats tables' metatable (__name "poolsh.Stats").
M.meta = { __name = "poolsh.Stats" }
M.meta.__tostring = function(st) return table.concat(M.lines(st), "\n") end

--- mark(st) -> st, with the stats metatable (values unchanged).
function M.mark(st) return setmetatable(st, M.meta) end

return M
