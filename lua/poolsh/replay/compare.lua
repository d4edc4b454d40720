--- poolsh.replay.compare: one recording replayed through several
-- allocators, each from a fresh poolsh (docs/replay.md, `poolsh compare`).
--
--   local compare = require "poolsh.replay.compare"
--   local c = compare.run(rec, { allocators = { "pool", "pytorch" } })
--   -- c.allocators: the names in order; c.results[name]: poolsh.replay.run's
--   -- result; c.series[name]: {i = {...}, reserved = {...}, used = {...}};
--   -- c.recorded: what the recording says of itself (rec.expected), or nil
--   print(compare.table(c))
local poolsh = require "poolsh"
local replay = require "poolsh.replay"

local M = {}

--- The allocators compared when none are named.
M.default = { "pool", "pytorch" }
--- The most points a series keeps (it halves itself past this).
M.max_points = 2000
--- Events between two samples when the recording's length is unknown.
M.sample_unknown = 64

--- The table's rows: result key and label.
M.rows = {
  { "events", "events" }, { "peak_reserved", "peak reserved" }, { "peak_used", "peak used" },
  { "final_reserved", "final reserved" }, { "segments_allocated", "segments allocated" },
  { "driver_frees", "driver frees" }, { "failed", "failed" }, { "seconds", "seconds" },
  { "alloc_seconds", "alloc seconds" },
}

local bytes = { peak_reserved = true, peak_used = true, final_reserved = true }

local function fail(fmt, ...) error("poolsh.replay: " .. fmt:format(...), 0) end

--- rec.expected in the result's keys (nil where unknown), or nil.
function M.recorded(rec)
  local e = rec.expected
  if type(e) ~= "table" or e.peak_reserved == nil then return nil end
  return { peak_reserved = e.peak_reserved, peak_used = e.peak_allocated,
           final_reserved = e.final_reserved, segments_allocated = e.segments_allocated,
           driver_frees = e.segments_freed, failed = e.ooms }
end

-- Checks opts.allocators: a non-empty list of distinct non-empty names.
local function names(list)
  list = list or M.default
  if type(list) ~= "table" or #list == 0 then fail("allocators: a list of names expected") end
  local seen = {}
  for _, n in ipairs(list) do
    if type(n) ~= "string" or n == "" then fail("allocators: a name expected, got '%s'", tostring(n)) end
    if seen[n] then fail("allocator '%s' named twice (names must be distinct)", n) end
    seen[n] = true
  end
  return list
end

-- A series and the on_sample function that fills it, keeping at most
-- M.max_points points: past that, every other point goes and only every
-- other later sample is kept.
local function series()
  local s, keep, calls = { i = {}, reserved = {}, used = {} }, 1, 0
  local function halve()
    local n = 0
    for j = 1, #s.i, 2 do
      n = n + 1
      s.i[n], s.reserved[n], s.used[n] = s.i[j], s.reserved[j], s.used[j]
    end
    for j = #s.i, n + 1, -1 do s.i[j], s.reserved[j], s.used[j] = nil, nil, nil end
    keep = keep * 2
  end
  local last
  local function on_sample(i, st)
    calls = calls + 1
    last = { i, st.reserved, st.used }
    if (calls - 1) % keep ~= 0 then return end
    local n = #s.i + 1
    s.i[n], s.reserved[n], s.used[n] = i, st.reserved, st.used
    if n > M.max_points then halve() end
  end
  -- the last sample always stays (the replay's end)
  local function finish()
    if last and s.i[#s.i] ~= last[1] then
      local n = #s.i + 1
      s.i[n], s.reserved[n], s.used[n] = last[1], last[2], last[3]
    end
    return s
  end
  return on_sample, finish
end

--- Events between two samples for a recording of `count` events (nil:
-- unknown), so that a series holds about M.max_points points.
function M.sample_every(count)
  if not count then return M.sample_unknown end
  return math.max(1, -(-count // M.max_points))
end

--- An empty comparison of rec (the module's header) for the allocators
-- (labels) listed in `list`, with series when `with_series`.
function M.new(rec, list, with_series)
  return { file = rec.file, format = rec.format, count = rec.count, backend = poolsh.backend(),
           allocators = list or {}, results = {}, series = with_series and {} or nil,
           recorded = M.recorded(rec) }
end

--- Replays rec through allocator `spec` (a name, path or module) made with
-- alloc_opts, from a fresh poolsh (poolsh.reset()), and keeps its result
-- (and its series when c has series) under `label` in c. opts: streams,
-- max_streams, progress (called as progress(label, events, rec.count)).
-- Returns the result.
function M.add(c, rec, label, spec, alloc_opts, opts)
  opts = opts or {}
  poolsh.reset()
  local on_sample, finish
  if c.series then on_sample, finish = series() end
  local progress = opts.progress and function(n, total) opts.progress(label, n, total) end
  local r = replay.run(rec, {
    allocator = spec, alloc_opts = alloc_opts, streams = opts.streams, max_streams = opts.max_streams,
    progress = progress, on_sample = on_sample, sample_every = on_sample and M.sample_every(rec.count),
  })
  c.results[label] = r
  if finish then c.series[label] = finish() end
  return r
end

--- Replays rec through each allocator and returns the comparison (see the
-- module's header). opts: allocators (names; default M.default), pool (the
-- pool allocator's settings, a table), alloc_conf (the pytorch
-- allocator's PYTORCH_CUDA_ALLOC_CONF text; the others get no settings),
-- streams, max_streams, series (true: sample reserved and used for a
-- report), progress (called as progress(name, events, rec.count)). Before
-- each replay poolsh is reset (poolsh.reset()): everything poolsh made
-- before is freed.
function M.run(rec, opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail("options table expected, got %s", type(opts)) end
  if type(rec) ~= "table" or type(rec.events) ~= "function" then
    fail("a Recording expected (poolsh.replay.read.open), got %s", type(rec))
  end
  if opts.pool ~= nil and type(opts.pool) ~= "table" then
    fail("pool: a settings table expected, got %s", type(opts.pool))
  end
  if opts.alloc_conf ~= nil and type(opts.alloc_conf) ~= "string" then
    fail("alloc_conf: PyTorch's setting text expected, got %s", type(opts.alloc_conf))
  end
  local list = names(opts.allocators)
  for _, n in ipairs(list) do replay.allocator(n) end   -- unknown names fail before any replay
  local torch = false
  for _, n in ipairs(list) do torch = torch or n == "pytorch" end
  if opts.alloc_conf ~= nil and not torch then
    fail("alloc_conf is PyTorch's setting: it goes with the pytorch allocator")
  end
  -- a bad setting fails before any replay (new() reads it and takes no memory)
  if opts.alloc_conf ~= nil then replay.allocator("pytorch").new { conf = opts.alloc_conf } end
  local c = M.new(rec, list, opts.series)
  for _, name in ipairs(list) do
    local alloc_opts = name == "pool" and opts.pool or nil
    if name == "pytorch" and opts.alloc_conf then alloc_opts = { conf = opts.alloc_conf } end
    M.add(c, rec, name, name, alloc_opts, opts)
  end
  return c
end

-- One cell: bytes through poolsh.fmt, seconds with 3 decimals, counts.
local function cell(key, v)
  if v == nil then return "-" end
  if bytes[key] then return poolsh.fmt(v) end
  if key == "seconds" or key == "alloc_seconds" then return ("%.3f"):format(v) end
  return tostring(v)
end

--- The comparison as rows of cells: a header, then one row per M.rows
-- entry; a "recorded" column when c.recorded. A comparison that brings
-- its own rows (c.cells: poolsh advise's ranking) gives those.
function M.cells(c)
  if c.cells then return c.cells end
  local head = { "" }
  for _, n in ipairs(c.allocators) do head[#head + 1] = n end
  if c.recorded then head[#head + 1] = "recorded" end
  local out = { head }
  for _, r in ipairs(M.rows) do
    local row = { r[2] }
    for _, n in ipairs(c.allocators) do row[#row + 1] = cell(r[1], c.results[n][r[1]]) end
    if c.recorded then row[#row + 1] = cell(r[1], c.recorded[r[1]]) end
    out[#out + 1] = row
  end
  return out
end

--- Rows of cells as a text table: the first `left` cells of a row
-- (default 1) left-aligned, the others right-aligned, two spaces between
-- columns, no spaces at the ends of lines.
function M.format(rows, left)
  left = left or 1
  local width = {}
  for _, row in ipairs(rows) do
    for j, v in ipairs(row) do width[j] = math.max(width[j] or 0, utf8.len(v) or #v) end
  end
  local lines = {}
  for _, row in ipairs(rows) do
    local parts = {}
    for j, v in ipairs(row) do
      local pad = (" "):rep(width[j] - (utf8.len(v) or #v))
      parts[j] = j <= left and v .. pad or pad .. v
    end
    lines[#lines + 1] = (table.concat(parts, "  "):gsub(" +$", ""))
  end
  return table.concat(lines, "\n") .. "\n"
end

--- The comparison as a text table: labels left, figures right-aligned.
function M.table(c) return M.format(M.cells(c)) end

--- difference(got, recorded) -> how a result reads against what the
-- recording measured: "110.00 MiB (12%) less than recorded", "... more
-- than recorded" or "same as recorded" (the percentage is of the recorded
-- figure, "<1%" when it rounds to 0; none when that figure is 0).
function M.difference(got, recorded)
  local d = got - recorded
  if d == 0 then return "same as recorded" end
  local pct = ""
  if recorded > 0 then
    local p = math.floor(math.abs(d) * 100 / recorded + 0.5)
    pct = p == 0 and " (<1%)" or (" (%d%%)"):format(p)
  end
  return ("%s%s %s than recorded"):format(poolsh.fmt(math.abs(d)), pct, d < 0 and "less" or "more")
end

--- against(c) -> text: each allocator's peak reserved beside the
-- recording's ("  pool  832.00 MiB: 110.00 MiB (12%) less than recorded"),
-- or "" when the recording has no such figure.
function M.against(c)
  local want = c.recorded and c.recorded.peak_reserved
  if not want then return "" end
  local rows = {}
  for _, n in ipairs(c.allocators) do rows[#rows + 1] = { "  " .. n, poolsh.fmt(c.results[n].peak_reserved) } end
  local lines = {}
  local i = 0
  for l in M.format(rows):gmatch("[^\n]+") do
    i = i + 1
    lines[i] = l .. ": " .. M.difference(c.results[c.allocators[i]].peak_reserved, want)
  end
  return ("peak reserved against the recording's %s:\n"):format(poolsh.fmt(want))
    .. table.concat(lines, "\n") .. "\n"
end

--- The comparison as one JSON object: file, backend, allocators = {name
-- = result}, recorded (null when unknown), then each {key, value} of
-- `extra` in order (poolsh advise's ranking).
function M.json(c, extra)
  local util = require "poolsh.export.util"
  local parts = {
    util.quote("file") .. ":" .. util.quote(tostring(c.file)),
    util.quote("backend") .. ":" .. util.quote(c.backend),
    util.quote("allocators") .. ":" .. util.json(c.results),
    util.quote("recorded") .. ":" .. (c.recorded and util.json(c.recorded) or "null"),
  }
  for _, kv in ipairs(extra or {}) do
    parts[#parts + 1] = util.quote(kv[1]) .. ":" .. (kv[2] == nil and "null" or util.json(kv[2]))
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

return M
