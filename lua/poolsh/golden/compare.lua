--- poolsh.golden.compare: a golden record (the GPU's) against a replay
-- (the sim's), step by step.
local label = require "poolsh.golden.label"

local M = {}

-- Every leaf of t as path -> value ("pools.p1.reserved" -> 33554432).
local function leaves(t, prefix, out)
  out = out or {}
  for k, v in pairs(t) do
    local path = prefix and (prefix .. "." .. tostring(k)) or tostring(k)
    if type(v) == "table" then leaves(v, path, out) else out[path] = v end
  end
  return out
end

--- compare.step(a, b) -> array of {path, a, b} where observations differ
-- (sorted by path; an absent value is nil).
function M.step(a, b)
  local la, lb = leaves(a or {}), leaves(b or {})
  local paths, seen = {}, {}
  for p in pairs(la) do paths[#paths + 1] = p; seen[p] = true end
  for p in pairs(lb) do if not seen[p] then paths[#paths + 1] = p end end
  table.sort(paths)
  local diffs = {}
  for _, p in ipairs(paths) do
    if la[p] ~= lb[p] then diffs[#diffs + 1] = { path = p, a = la[p], b = lb[p] } end
  end
  return diffs
end

-- poolsh's statements, fields a golden file may lack (older recordings).
local STATEMENTS = { "sources", "fresh", "why_fresh", "extents" }

--- compare.has_statements(rec) -> whether any step records a statement.
function M.has_statements(rec)
  for _, s in ipairs(rec.steps or {}) do
    for _, k in ipairs(STATEMENTS) do if s[k] ~= nil then return true end end
  end
  return false
end

--- compare.without_statements(steps) -> copies of steps without them, so
-- that a recording made before poolsh recorded statements still compares.
function M.without_statements(steps)
  local out = {}
  for i, s in ipairs(steps) do
    local c = {}
    for k, v in pairs(s) do c[k] = v end
    for _, k in ipairs(STATEMENTS) do c[k] = nil end
    out[i] = c
  end
  return out
end

--- compare.records(gold, replay) -> {agree = n, total = m, first = i or
-- nil, diffs = the first differing step's differences}. total counts the
-- golden steps (or the replay's, if it has more); a replay error counts
-- as a difference of the step after its last.
function M.records(gold, replay)
  local gs, rs = gold.steps, replay.steps
  if not M.has_statements(gold) then rs = M.without_statements(rs) end
  local total = math.max(#gs, #rs)
  local res = { agree = 0, total = total }
  for i = 1, total do
    local d = M.step(gs[i], rs[i])
    if #d == 0 then
      res.agree = res.agree + 1
    elseif not res.first then
      res.first, res.diffs = i, d
    end
  end
  if (gold.error or replay.error) and gold.error ~= replay.error then
    res.error = { a = gold.error, b = replay.error }
    if not res.first then
      res.first, res.diffs = total + 1, { { path = "error", a = gold.error, b = replay.error } }
    end
  end
  return res
end

--- Shows an observed value; byte counts also in units.
local function show(v)
  if v == nil then return "-" end
  if math.type(v) == "integer" and (v >= 1024 or v <= -1024) then
    return ("%d (%s)"):format(v, v < 0 and ("-" .. label.size(-v)) or label.size(v))
  end
  return tostring(v)
end
M.show = show

--- compare.report(gold, replay, res, a_name, b_name) -> lines showing the
-- first differing step side by side (empty when they agree).
function M.report(gold, replay, res, a_name, b_name)
  if not res.first then return {} end
  local i = res.first
  local ga, rb = gold.steps[i], replay.steps[i]
  local lines = {}
  local name_a = ga and ga.step or "(no step)"
  local name_b = rb and rb.step or "(no step)"
  lines[#lines + 1] = ("  first difference at step %d: %s"):format(i, name_a)
  if name_b ~= name_a then lines[#lines + 1] = ("  (%s ran: %s)"):format(b_name, name_b) end
  local w1, w2 = #"observation", #a_name
  local rows = {}
  for _, d in ipairs(res.diffs) do
    local row = { d.path, show(d.a), show(d.b) }
    rows[#rows + 1] = row
    w1, w2 = math.max(w1, #row[1]), math.max(w2, #row[2])
  end
  local fmt = "    %-" .. w1 .. "s  %-" .. w2 .. "s  %s"
  lines[#lines + 1] = fmt:format("observation", a_name, b_name)
  for _, row in ipairs(rows) do lines[#lines + 1] = fmt:format(row[1], row[2], row[3]) end
  return lines
end

return M
