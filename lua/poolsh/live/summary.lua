--- poolsh.summary() and poolsh.peak(fn): memory and counts per pool and
-- in all, and peaks within a scope (docs/live.md).
local core = require "poolsh.core"
local units = require "poolsh.units"
local text = require "poolsh.live.text"

local M = {}

local fmt = units.fmt
local name, paint, fit, rows, append, by_count =
  text.name, text.paint, text.fit, text.rows, text.append, text.by_count

local summary_mt, peak_mt = {}, {}

-- A pool's counts as the summary gives them (zeros for what the core
-- did not count).
local function counted(c)
  c = c or {}
  local t = { allocs = c.allocs or 0, growths = c.growths or 0, ooms = c.ooms or 0,
              retries = c.retries or 0, peak_live = c.peak_live or 0, reuses = {}, releases = {} }
  for k, n in pairs(c.reuses or {}) do t.reuses[k] = n end
  for k, n in pairs(c.releases or {}) do t.releases[k] = n end
  return t
end

--- summary() -> {pools = {[id] = row}, total = row}: per live pool and in all,
-- reserved, used and pending now and at their peak, and the counts of
-- allocations, reuses by rule, growths, releases by cause, out-of-memory
-- errors and retries; tostring() of it is the report.
function M.summary()
  local counts = core.counts()
  local t = { pools = {}, total = counted(counts.total) }
  local total = t.total
  total.reserved, total.reserved_peak, total.used, total.pending = 0, 0, 0, 0
  for _, p in ipairs((text.objects())) do
    local st = p:stats { estimates = false }
    local row = counted(counts.pools[p.id])
    t.pools[p.id] = row
    row.reserved, row.reserved_peak = st.reserved, st.reserved_high
    row.used, row.used_peak, row.pending = st.used, st.used_high, st.pending
    total.reserved, total.reserved_peak = total.reserved + st.reserved, total.reserved_peak + st.reserved_high
    total.used, total.pending = total.used + st.used, total.pending + st.pending
  end
  for id, row in pairs(t.pools) do row.name = name("pool", id) end
  total.used_peak = total.peak_live
  return setmetatable(t, summary_mt)
end

local function sum(t)
  local n = 0
  for _, k in pairs(t) do n = n + k end
  return n
end

--- summary_lines(summary) -> the report poolsh.summary() prints.
function M.summary_lines(t)
  local width = text.columns()
  local ids = {}
  for id in pairs(t.pools) do ids[#ids + 1] = id end
  table.sort(ids)
  local order = {}
  for _, id in ipairs(ids) do order[#order + 1] = t.pools[id] end
  t.total.name = "total"
  order[#order + 1] = t.total
  local mem, cnt = {}, {}
  for _, r in ipairs(order) do
    mem[#mem + 1] = { r.name, fmt(r.reserved), fmt(r.reserved_peak), fmt(r.used), fmt(r.used_peak),
                      fmt(r.pending) }
    cnt[#cnt + 1] = { r.name, tostring(r.allocs), tostring(sum(r.reuses)), tostring(r.growths),
                      tostring(sum(r.releases)), tostring(r.ooms), tostring(r.retries) }
  end
  local out = { paint("bold", "memory") }
  append(out, rows({ "pool", "reserved", "peak", "used", "peak", "pending" }, mem, width))
  out[#out + 1] = paint("bold", "counts")
  append(out, rows({ "pool", "allocs", "reuses", "growths", "releases", "ooms", "retries" }, cnt, width))
  if #ids < 2 then order[#order] = nil end    -- the total's breakdown repeats the one pool's
  for _, r in ipairs(order) do
    if next(r.reuses) then fit(out, { ("  %s reuses: %s"):format(r.name, by_count(r.reuses)) }, width) end
  end
  for _, r in ipairs(order) do
    if next(r.releases) then fit(out, { ("  %s releases: %s"):format(r.name, by_count(r.releases)) }, width) end
  end
  if #ids > 1 then out[#out + 1] = paint("dim", "  (total reserved peak: the sum of the pools' peaks)") end
  return out
end

summary_mt.__tostring = function(t) return table.concat(M.summary_lines(t), "\n") end

--- peak(fn, ...) -> {pools = {[id] = bytes}, total = bytes}, then fn's
-- results: the highest live bytes per pool and in all while fn ran
-- (scopes nest); fn's error is raised again after the scope closes.
function M.peak(fn, ...)
  if type(fn) ~= "function" then
    error("bad argument #1 to 'peak' (function expected, got " .. type(fn) .. ")", 2)
  end
  core.peak_push()
  local r = table.pack(pcall(fn, ...))
  local peaks = core.peak_pop()
  if not r[1] then error(r[2], 0) end
  return setmetatable(peaks, peak_mt), table.unpack(r, 2, r.n)
end

peak_mt.__tostring = function(t)
  local ids, list = {}, {}
  for id in pairs(t.pools) do ids[#ids + 1] = id end
  table.sort(ids)
  for _, id in ipairs(ids) do list[#list + 1] = ("%s %s"):format(name("pool", id), fmt(t.pools[id])) end
  list[#list + 1] = "total " .. fmt(t.total)
  return "peak: " .. table.concat(list, ", ")
end

return M
