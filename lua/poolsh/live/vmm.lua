--- VMM ranges as text (docs/live.md, docs/vmm.md): poolsh.map(range)'s
-- lines and the rows poolsh.show() adds while ranges live.
local units = require "poolsh.units"
local text = require "poolsh.live.text"

local M = {}

local fmt = units.fmt
local fit, cut = text.fit, text.cut

local LEGEND = "# rw  + read  o no access  . unmapped"
local MARK = { rw = "#", read = "+", none = "o" }

--- extents(r) -> r's mappings and the unmapped gaps between them, in
-- address order: {offset, size, mapping (nil for a gap)}.
function M.extents(r)
  local ext, at = {}, 0
  for _, x in ipairs(r:mappings()) do
    if x.offset > at then ext[#ext + 1] = { offset = at, size = x.offset - at } end
    ext[#ext + 1] = { offset = x.offset, size = x.size, mapping = x }
    at = x.offset + x.size
  end
  if r.size > at then ext[#ext + 1] = { offset = at, size = r.size - at } end
  return ext
end

-- The bar of `cells` cells over the range: each cell shows the extent
-- that covers its first byte.
local function bar(ext, size, cells)
  local b, k = {}, 1
  for i = 0, cells - 1 do
    local at = size * i // cells
    while k < #ext and ext[k].offset + ext[k].size <= at do k = k + 1 end
    local m = ext[k].mapping
    b[#b + 1] = m and MARK[m.access] or "."
  end
  return table.concat(b)
end

--- summary(r) -> "r1  16.00 MiB of addresses at 0x..., 2 mappings, 4.00 MiB mapped".
function M.summary(r)
  local n, bytes = 0, 0
  for _, x in ipairs(r:mappings()) do n, bytes = n + 1, bytes + x.size end
  return ("r%d  %s of addresses at 0x%x, %d mapping%s, %s mapped"):format(
    r.id, fmt(r.size), r.addr, n, n == 1 and "" or "s", fmt(bytes))
end

--- range_lines(r [, cells]) -> poolsh.map(r)'s lines: the summary, a bar
-- (# rw, + read, o no access, . unmapped: the context device's access)
-- and one line per mapping or gap.
function M.range_lines(r, cells)
  local width = text.columns()
  local out = fit({}, { M.summary(r) }, width)
  local ext = M.extents(r)
  cells = cells or math.max(8, math.min(64, width - 4))
  local drawn = "  [" .. bar(ext, r.size, cells) .. "]"
  if #drawn + 2 + #LEGEND <= width then out[#out + 1] = drawn .. "  " .. LEGEND
  else out[#out + 1] = drawn; out[#out + 1] = "  " .. LEGEND end
  for _, e in ipairs(ext) do
    local m = e.mapping
    local what = m and ("m%d+%s %s"):format(m.memory.id, fmt(m.memory_offset), m.access)
      or "unmapped"
    local l = ("  0x%x  +%-10s %10s  %s"):format(r.addr + e.offset, fmt(e.offset), fmt(e.size), what)
    out[#out + 1] = cut(l, width)
  end
  return out
end

--- snapshot() -> the live ranges by id: {size, mappings, mapped}, what
-- the live lines compare from one statement to the next.
function M.snapshot()
  local core = require "poolsh.core"
  local snap = {}
  for _, r in ipairs(core.vmm and core.vmm.ranges() or {}) do
    local n, bytes = 0, 0
    for _, x in ipairs(r:mappings()) do n, bytes = n + 1, bytes + x.size end
    snap[r.id] = { size = r.size, mappings = n, mapped = bytes }
  end
  return snap
end

--- live_lines(was, now, width) -> a line per range made, changed or freed
-- between the snapshots was and now, by id:
-- "r1  16.00 MiB of addresses  2 mappings  4.00 MiB mapped (+2.00 MiB)", "r1  freed".
function M.live_lines(was, now, width)
  local ids, out = {}, {}
  for id in pairs(now) do ids[#ids + 1] = id end
  for id in pairs(was) do if not now[id] then ids[#ids + 1] = id end end
  table.sort(ids)
  for _, id in ipairs(ids) do
    local a, b = was[id], now[id]
    if not b then
      out[#out + 1] = ("r%d  freed"):format(id)
    elseif not a or a.mappings ~= b.mappings or a.mapped ~= b.mapped then
      local d = b.mapped - (a and a.mapped or 0)
      local change = d == 0 and "" or (" (" .. (d > 0 and "+" or "-") .. fmt(math.abs(d)) .. ")")
      fit(out, { ("r%d"):format(id), fmt(b.size) .. " of addresses",
                 ("%d mapping%s"):format(b.mappings, b.mappings == 1 and "" or "s"),
                 fmt(b.mapped) .. " mapped" .. change }, width)
    end
  end
  return out
end

--- rows() -> poolsh.show()'s rows of the live ranges: {range, addresses,
-- mappings, mapped, addr}.
function M.rows(ranges)
  local t = {}
  for _, r in ipairs(ranges) do
    local n, bytes = 0, 0
    for _, x in ipairs(r:mappings()) do n, bytes = n + 1, bytes + x.size end
    t[#t + 1] = { "r" .. r.id, fmt(r.size), tostring(n), fmt(bytes), ("0x%x"):format(r.addr) }
  end
  return t
end

return M
