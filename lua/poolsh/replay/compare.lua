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

--- Replays rec through each allocator and returns the comparison (see the
-- module's header). opts: allocators (names; default M.default), pool (the
-- pool allocator's settings, a table; the others get none), streams,
-- max_streams, series (true: sample reserved and used for a report),
-- progress (called as progress(name, events, rec.count)). Before each
-- replay poolsh is reset (poolsh.reset()): everything poolsh made before
-- is freed.
function M.run(rec, opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail("options table expected, got %s", type(opts)) end
  if type(rec) ~= "table" or type(rec.events) ~= "function" then
    fail("a Recording expected (poolsh.replay.read.open), got %s", type(rec))
  end
  if opts.pool ~= nil and type(opts.pool) ~= "table" then
    fail("pool: a settings table expected, got %s", type(opts.pool))
  end
  local list = names(opts.allocators)
  for _, n in ipairs(list) do replay.allocator(n) end   -- unknown names fail before any replay
  local c = { file = rec.file, format = rec.format, count = rec.count, backend = poolsh.backend(), allocators = list,
              results = {}, series = opts.series and {} or nil, recorded = M.recorded(rec) }
  for _, name in ipairs(list) do
    poolsh.reset()
    local on_sample, finish
    if opts.series then on_sample, finish = series() end
    local progress = opts.progress and function(n, total) opts.progress(name, n, total) end
    c.results[name] = replay.run(rec, {
      allocator = name, alloc_opts = name == "pool" and opts.pool or nil, streams = opts.streams,
      max_streams = opts.max_streams,
      progress = progress, on_sample = on_sample, sample_every = on_sample and M.sample_every(rec.count),
    })
    if finish then c.series[name] = finish() end
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
-- entry; a "recorded" column when c.recorded.
function M.cells(c)
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

--- The comparison as a text table: labels left, figures right-aligned.
function M.table(c)
  local rows, width = M.cells(c), {}
  for _, row in ipairs(rows) do
    for j, v in ipairs(row) do width[j] = math.max(width[j] or 0, utf8.len(v) or #v) end
  end
  local lines = {}
  for _, row in ipairs(rows) do
    local parts = {}
    for j, v in ipairs(row) do
      local pad = (" "):rep(width[j] - (utf8.len(v) or #v))
      parts[j] = j == 1 and v .. pad or pad .. v
    end
    lines[#lines + 1] = table.concat(parts, "  ")
  end
  return table.concat(lines, "\n") .. "\n"
end

return M
