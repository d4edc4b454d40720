--- The buffers still live, and the leak report at exit (docs/live.md).
local core = require "poolsh.core"
local units = require "poolsh.units"
local text = require "poolsh.live.text"

local M = {}

local S = text.settings
local fmt = units.fmt
local name, fit, one_line = text.name, text.fit, text.one_line

--- leaks() -> the buffers still live, oldest first, with where they were
-- allocated (known while recording or when poolsh.sources(true)).
function M.leaks()
  return (core.live())
end

--- Sites with more live buffers than this get one line for all of them.
S.leak_group = 3

local function leak_line(b)
  local pool = b.pool and (" from %s on %s"):format(name("pool", b.pool), name("stream", b.stream)) or ""
  return ("%s %s %s%s"):format(name("buffer", b.buffer), fmt(b.size), b.kind, pool)
end

--- leak_lines() -> the leak report's lines, empty when nothing leaks: per
-- allocation site, oldest first, its buffers one a line, or one line for
-- a site with more than leak_group; at most show_max lines.
function M.leak_lines()
  local width = text.columns()
  local live, n = core.live()
  if n == 0 then return {} end
  local sites, order = {}, {}
  for _, b in ipairs(live) do
    local key = one_line(b.src) or "?"
    local site = sites[key]
    if not site then
      site = { src = one_line(b.src), bufs = {}, bytes = 0 }
      sites[key], order[#order + 1] = site, site
    end
    site.bufs[#site.bufs + 1], site.bytes = b, site.bytes + b.size
  end
  local entries = {}     -- one per line to print: a buffer, or a site's group
  for _, site in ipairs(order) do
    if #site.bufs > S.leak_group then
      entries[#entries + 1] = { site = site, first = site.bufs[1].buffer }
    else
      for _, b in ipairs(site.bufs) do entries[#entries + 1] = { b = b, first = b.buffer } end
    end
  end
  table.sort(entries, function(a, b) return a.first < b.first end)
  local out = { ("poolsh: %d buffer%s still live at exit (freed now):"):format(n, n == 1 and "" or "s") }
  local unknown, shown = false, 0
  for i = 1, math.min(#entries, S.show_max) do
    local e = entries[i]
    if e.b then
      fit(out, { ("  %s, allocated at %s"):format(leak_line(e.b), one_line(e.b.src) or "?") }, width)
      shown = shown + 1
    else
      local site = e.site
      fit(out, { ("  %d buffers (%s) allocated at %s, the oldest %s"):format(#site.bufs,
        fmt(site.bytes), site.src or "?", name("buffer", site.bufs[1].buffer)) }, width)
      shown = shown + #site.bufs
    end
    unknown = unknown or not (e.b or e.site).src
  end
  if n > shown then out[#out + 1] = ("  ... and %d more (poolsh.leaks() lists them)"):format(n - shown) end
  if unknown then
    out[#out + 1] = "  (allocation sites are known while recording or with poolsh.sources(true))"
  end
  return out
end

function M.report_leaks()
  for _, l in ipairs(M.leak_lines()) do io.stderr:write(l, "\n") end
end

return M
