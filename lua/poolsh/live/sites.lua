--- poolsh.sites(): per allocation site its calls and bytes, printed as
-- RMM's report (docs/live.md).
local core = require "poolsh.core"
local units = require "poolsh.units"
local text = require "poolsh.live.text"

local M = {}

local S = text.settings
local fmt = units.fmt
local rows, more, one_line = text.rows, text.more, text.one_line

local sites_mt = {}

--- sites() -> per allocation site {site, count, live_bytes, peak_bytes,
-- total_bytes}, highest peak first; tostring() of it is the report.
function M.sites()
  local list = core.sites()
  table.sort(list, function(a, b)
    if a.peak_bytes ~= b.peak_bytes then return a.peak_bytes > b.peak_bytes end
    return a.site < b.site
  end)
  return setmetatable(list, sites_mt)
end

--- sites_lines(sites) -> the report: RMM's columns (ncalls, memory_peak,
-- memory_total, the site) and the live bytes, at most show_max sites.
function M.sites_lines(list)
  local r = {}
  for i = 1, math.min(#list, S.show_max) do
    local s = list[i]
    r[i] = { tostring(s.count), fmt(s.peak_bytes), fmt(s.total_bytes), fmt(s.live_bytes),
             one_line(s.site) }
  end
  local out = rows({ "ncalls", "memory_peak", "memory_total", "live", "site" }, r)
  if #list == 0 then out[1] = "  no allocation sites known (poolsh.sources(true) or a trace records them)" end
  more(out, #list - #r, "sites", "poolsh.sites()")
  return out
end

sites_mt.__tostring = function(list) return table.concat(M.sites_lines(list), "\n") end

return M
