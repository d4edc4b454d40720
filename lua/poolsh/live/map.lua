--- poolsh.map(pool): a pool's address space as text (docs/live.md).
local core = require "poolsh.core"
local units = require "poolsh.units"
local text = require "poolsh.live.text"

local M = {}

local fmt = units.fmt
local name, fit, cut = text.name, text.fit, text.cut

--- granularity() -> the bytes a pool maps at a time: the sim's profile,
-- or 32 MiB on cuda (measured, docs/calibration.md).
function M.granularity()
  if core.backend() == "sim" then return math.tointeger(core.option("pool_granularity")) end
  return 32 * 1024 * 1024
end

local LEGEND = "# live  = pending  . free  | chunk"

-- The bar of `cells` cells over [base, top): # live, = pending, . free, a
-- "|" after each cell in which a chunk ends (none when chunks are
-- narrower than a cell).
local function bar(ext, base, top, cells, gran)
  local span = math.max(top - base, 1)
  local c = {}
  for i = 1, cells do c[i] = "." end
  local marks = { live = "#", pending = "=" }
  for _, e in ipairs(ext) do
    if marks[e.what] then
      local from = (e.addr - base) * cells // span + 1
      local to = math.max(from, (e.addr + e.size - base - 1) * cells // span + 1)
      for i = from, math.min(to, cells) do
        if c[i] ~= "#" then c[i] = marks[e.what] end
      end
    end
  end
  local b = {}
  local chunks = gran > 0 and gran * cells >= span
  for i = 1, cells do
    b[#b + 1] = c[i]
    local from, to = (i - 1) * span // cells, i * span // cells
    if chunks and i < cells and to // gran > from // gran then b[#b + 1] = "|" end
  end
  return table.concat(b)
end

--- map_lines(pool [, cells]) -> the pool's address space as text: a bar
-- (# live, = pending, . free, | chunk boundary) and one line per extent.
-- The bar is `cells` wide, else 64 cells or what fits in columns().
function M.map_lines(p, cells)
  local width = text.columns()
  local blocks, base = core.blocks(p)
  local st = p:stats()
  local reserved, gran = st.reserved, M.granularity()
  local pname = name("pool", p.id)
  if reserved == 0 and #blocks == 0 then
    return { ("%s  nothing reserved"):format(pname) }
  end
  if base == 0 and not blocks[1] then
    return fit({}, { pname, ("reserved %s; no block seen yet, so where it lies is unknown"):format(
      fmt(reserved)) }, width)
  end
  if base == 0 then base = blocks[1].addr end
  local top = base + reserved
  for _, b in ipairs(blocks) do top = math.max(top, b.addr + b.size) end
  local out = fit({}, { pname, ("reserved %s from 0x%x (base as seen)"):format(fmt(reserved), base),
                        ("in %s chunks"):format(fmt(gran)) }, width)
  -- extents: blocks and the gaps between them, up to the reserved top
  local ext, at = {}, base
  for _, b in ipairs(blocks) do
    if b.addr > at then ext[#ext + 1] = { addr = at, size = b.addr - at, what = "free" } end
    ext[#ext + 1] = { addr = b.addr, size = b.size, what = b.pending and "pending" or "live", b = b }
    at = math.max(at, b.addr + b.size)
  end
  if top > at then ext[#ext + 1] = { addr = at, size = top - at, what = "free" } end
  local drawn
  if cells then
    drawn = bar(ext, base, top, cells, gran)
  else
    cells = math.min(64, width - 4)
    drawn = bar(ext, base, top, cells, gran)
    if #drawn + 4 > width then   -- the chunk marks take room too
      drawn = bar(ext, base, top, cells - (#drawn + 4 - width), gran)
    end
  end
  drawn = "  [" .. drawn .. "]"
  if #drawn + 2 + #LEGEND <= width then out[#out + 1] = drawn .. "  " .. LEGEND
  else out[#out + 1] = drawn; out[#out + 1] = "  " .. LEGEND end
  for _, e in ipairs(ext) do
    local who = e.b and ("%s on %s"):format(name("buffer", e.b.buffer), name("stream", e.b.stream)) or ""
    local l = ("  0x%x  +%-10s %10s  %-7s"):format(e.addr, fmt(e.addr - base), fmt(e.size), e.what)
    if who == "" then out[#out + 1] = (l:gsub("%s+$", ""))
    else   -- "b2 on s1" folded at its spaces under itself when the line is too narrow
      local lead = #l + 1
      local folded = fit({}, { who }, math.max(width - lead, 16), "")
      for k, f in ipairs(folded) do
        -- a name too long to stand under its column starts further left
        local at = k == 1 and l .. " " or (" "):rep(math.max(4, math.min(lead, width - text.vlen(f))))
        out[#out + 1] = cut(at .. f, width)
      end
    end
  end
  return out
end

function M.map(p)
  for _, l in ipairs(M.map_lines(p)) do io.stdout:write(l, "\n") end
end

return M
