--- What poolsh shows of the allocator: the REPL's live lines, show(),
-- map(pool) and the leak report at exit (docs/live.md).
local core = require "poolsh.core"
local units = require "poolsh.units"

local M = {}

local fmt = units.fmt

-- ANSI colours, used only when color is on (the host turns it on when
-- stdout is a terminal).
M.color = false
local codes = { grow = "32", shrink = "33", rule = "36", dim = "2", bold = "1" }

local function paint(kind, s)
  if not M.color then return s end
  return "\27[" .. codes[kind] .. "m" .. s .. "\27[0m"
end

local function delta(d)
  if d == 0 then return "" end
  local s = (d > 0 and "+" or "-") .. fmt(math.abs(d))
  return " (" .. paint(d > 0 and "grow" or "shrink", s) .. ")"
end

local function by_id(list)
  table.sort(list, function(a, b) return a.id < b.id end)
  return list
end

--- The live pools and streams, by id.
function M.objects()
  local pools, streams = core.objects()
  return by_id(pools), by_id(streams)
end

local function stream_name(id)
  if id == nil then return "?" end
  return id == 0 and "default" or "s" .. id
end

-- ---- the REPL's live view --------------------------------------------------

local watching = false
local last = {}          -- pool id -> {reserved, used, pending}
local last_alloc = 0     -- allocations already reported

local function snapshot()
  local snap = {}
  for _, p in ipairs((M.objects())) do
    local st = p:stats{ estimates = false }   -- no free-space estimate: nothing to build
    snap[p.id] = { name = p.name, reserved = st.reserved, used = st.used, pending = st.pending }
  end
  return snap
end

--- watch([on]) -> whether the REPL prints what changed after each
-- statement; sets it when given (on by default in the REPL, off in scripts).
function M.watch(on)
  if on ~= nil then
    if type(on) ~= "boolean" then error("poolsh.watch: boolean expected, got " .. type(on), 2) end
    watching = on
    if on then
      last = snapshot()
      last_alloc = select(2, core.recent(math.maxinteger))
    end
  end
  return watching
end

-- One line for an allocation: its size and kind, and whether and why it
-- reused memory.
local function alloc_line(a)
  local where = a.pool and ("p%d on %s"):format(a.pool, stream_name(a.stream)) or "host/device"
  local what
  if a.reused then
    what = ("reused b%d's memory (%s)"):format(a.reused_from, paint("rule", a.rule))
  elseif a.pool then
    what = "fresh memory"
  else
    what = "not pool memory"
  end
  return ("  b%d %s from %s: %s"):format(a.buffer, fmt(a.size), where, what)
end

--- lines() -> the lines the live view prints for what changed since the
-- last call (pools whose counters moved, then the new allocations).
function M.lines()
  local out = {}
  local now = snapshot()
  for id, s in pairs(now) do
    local was = last[id] or { reserved = 0, used = 0, pending = 0 }
    if s.reserved ~= was.reserved or s.used ~= was.used or s.pending ~= was.pending then
      out[#out + 1] = { id, ("%s  reserved %s%s  used %s%s  pending %s%s"):format(
        paint("bold", s.name), fmt(s.reserved), delta(s.reserved - was.reserved),
        fmt(s.used), delta(s.used - was.used), fmt(s.pending), delta(s.pending - was.pending)) }
    end
  end
  for id, was in pairs(last) do
    if not now[id] then out[#out + 1] = { id, ("%s  destroyed"):format(was.name) } end
  end
  table.sort(out, function(a, b) return a[1] < b[1] end)
  for i, l in ipairs(out) do out[i] = l[2] end
  local allocs, n = core.recent(last_alloc)
  if n - last_alloc > #allocs then
    out[#out + 1] = paint("dim", ("  (%d allocations; the last %d:)"):format(n - last_alloc, #allocs))
  end
  for _, a in ipairs(allocs) do out[#out + 1] = alloc_line(a) end
  last, last_alloc = now, n
  return out
end

--- after(): the REPL calls it after each statement.
function M.after()
  if not watching then return end
  for _, l in ipairs(M.lines()) do io.stdout:write(l, "\n") end
end

-- ---- show() -------------------------------------------------------------------

local function pad(s, n) return s .. string.rep(" ", n - #s) end

local function rows(header, list)
  local width = {}
  for _, r in ipairs(list) do
    for i, c in ipairs(r) do width[i] = math.max(width[i] or 0, #c, #(header[i] or "")) end
  end
  local out = {}
  local function line(r)
    local cells = {}
    for i, c in ipairs(r) do cells[i] = pad(c, width[i]) end
    out[#out + 1] = ("  " .. table.concat(cells, "  ")):gsub("%s+$", "")
  end
  if #list > 0 then line(header) end
  for _, r in ipairs(list) do line(r) end
  return out
end

--- At most this many rows of live buffers and of pending frees in show(),
-- and of buffers in the leak report; the rest is counted on one line.
M.show_max = 50

-- The line under a table cut at show_max rows.
local function more(out, n, what, hint)
  if n > 0 then out[#out + 1] = paint("dim", ("  ... and %d more %s (%s lists them)"):format(n, what, hint)) end
end

--- show_lines() -> the table poolsh.show() prints: pools, streams with
-- their queued work, live buffers and pending frees.
function M.show_lines()
  local out = {}
  local pools, streams = M.objects()
  out[#out + 1] = paint("bold", "pools")
  local prow = {}
  for _, p in ipairs(pools) do
    local st = p:stats()
    local th = p.release_threshold
    prow[#prow + 1] = { p.name .. (p.default and " (default)" or ""), p.location, fmt(st.reserved),
                        fmt(st.used), ("%s (%d)"):format(fmt(st.pending), st.pending_count),
                        ("%s (largest %s)"):format(fmt(st.free), fmt(st.largest_free)),
                        th == math.huge and "max" or fmt(th) }
  end
  for _, l in ipairs(rows({ "pool", "location", "reserved", "used", "pending", "free ~",
                            "threshold" }, prow)) do out[#out + 1] = l end
  out[#out + 1] = paint("bold", "streams")
  local srow = {}
  for _, s in ipairs(streams) do
    -- a peek, not s:query(): showing changes nothing (no clock moves, no
    -- free becomes known complete)
    local ops, done, idle = core.stream_state(s)
    local state = idle == nil and "?" or idle and "idle" or "busy"
    srow[#srow + 1] = { s.name, state, idle and "0" or tostring(ops - done),
                        s.blocking and "blocking" or "non-blocking" }
  end
  for _, l in ipairs(rows({ "stream", "state", "queued", "kind" }, srow)) do out[#out + 1] = l end
  out[#out + 1] = paint("bold", "buffers")
  local brow = {}
  local live, nlive = core.live(M.show_max)
  for _, b in ipairs(live) do
    brow[#brow + 1] = { "b" .. b.buffer, fmt(b.size), b.kind,
                        b.pool and ("p%d on %s"):format(b.pool, stream_name(b.stream)) or "",
                        ("0x%x"):format(b.addr), b.src or "" }
  end
  for _, l in ipairs(rows({ "buffer", "size", "kind", "pool", "addr", "allocated at" }, brow)) do
    out[#out + 1] = l
  end
  more(out, nlive - #live, "buffers", "poolsh.leaks()")
  out[#out + 1] = paint("bold", "pending frees")
  local pending, npending = core.pending(M.show_max)
  local names = {}
  for _, p in ipairs(pools) do names[p.id] = p.name end
  table.sort(pending, function(a, b)
    if a.pool ~= b.pool then return a.pool < b.pool end
    return a.addr < b.addr
  end)
  local frow = {}
  for _, blk in ipairs(pending) do
    frow[#frow + 1] = { "b" .. blk.buffer, fmt(blk.size), names[blk.pool] or ("p" .. blk.pool),
                        stream_name(blk.stream), ("0x%x"):format(blk.addr) }
  end
  for _, l in ipairs(rows({ "buffer", "size", "pool", "freed on", "addr" }, frow)) do
    out[#out + 1] = l
  end
  more(out, npending - #pending, "pending frees", "poolsh.map(pool)")
  return out
end

function M.show()
  for _, l in ipairs(M.show_lines()) do io.stdout:write(l, "\n") end
end

-- ---- map(pool) ----------------------------------------------------------------

--- granularity() -> the bytes a pool maps at a time: the sim's profile,
-- or 32 MiB on cuda (measured, docs/calibration.md).
function M.granularity()
  if core.backend() == "sim" then return math.tointeger(core.option("pool_granularity")) end
  return 32 * 1024 * 1024
end

--- map_lines(pool [, width]) -> the pool's address space as text: a bar
-- (# live, = pending, . free, | chunk boundary) and one line per extent.
function M.map_lines(p, width)
  width = width or 64
  local blocks, base = core.blocks(p)
  local st = p:stats()
  local reserved, gran = st.reserved, M.granularity()
  local out = {}
  if reserved == 0 and #blocks == 0 then
    return { ("%s  nothing reserved"):format(p.name) }
  end
  if base == 0 and not blocks[1] then
    return { ("%s  reserved %s; no block seen yet, so where it lies is unknown"):format(
      p.name, fmt(reserved)) }
  end
  if base == 0 then base = blocks[1].addr end
  local top = base + reserved
  for _, b in ipairs(blocks) do top = math.max(top, b.addr + b.size) end
  out[#out + 1] = ("%s  reserved %s from 0x%x, in %s chunks (arena base as seen: an estimate)")
                  :format(p.name, fmt(reserved), base, fmt(gran))
  -- extents: blocks and the gaps between them, up to the reserved top
  local ext, at = {}, base
  for _, b in ipairs(blocks) do
    if b.addr > at then ext[#ext + 1] = { addr = at, size = b.addr - at, what = "free" } end
    ext[#ext + 1] = { addr = b.addr, size = b.size, what = b.pending and "pending" or "live", b = b }
    at = math.max(at, b.addr + b.size)
  end
  if top > at then ext[#ext + 1] = { addr = at, size = top - at, what = "free" } end
  -- the bar
  local span = math.max(top - base, 1)
  local cells = {}
  for i = 1, width do cells[i] = "." end
  local marks = { live = "#", pending = "=" }
  for _, e in ipairs(ext) do
    if marks[e.what] then
      local from = (e.addr - base) * width // span + 1
      local to = math.max(from, (e.addr + e.size - base - 1) * width // span + 1)
      for i = from, math.min(to, width) do
        if cells[i] ~= "#" then cells[i] = marks[e.what] end
      end
    end
  end
  -- a "|" after each cell in which a chunk ends (offsets from the base,
  -- which is chunk-aligned); none when chunks are narrower than a cell
  local bar = {}
  local marks_chunks = gran > 0 and gran * width >= span
  for i = 1, width do
    bar[#bar + 1] = cells[i]
    local from, to = (i - 1) * span // width, i * span // width
    if marks_chunks and i < width and to // gran > from // gran then bar[#bar + 1] = "|" end
  end
  out[#out + 1] = "  [" .. table.concat(bar) .. "]  # live  = pending  . free  | chunk"
  for _, e in ipairs(ext) do
    local who = e.b and ("b%d on %s"):format(e.b.buffer, stream_name(e.b.stream)) or ""
    out[#out + 1] = ("  0x%x  +%-10s %10s  %-7s %s"):format(e.addr, fmt(e.addr - base), fmt(e.size),
                                                           e.what, who)
  end
  return out
end

function M.map(p)
  for _, l in ipairs(M.map_lines(p)) do io.stdout:write(l, "\n") end
end

-- ---- at exit ------------------------------------------------------------------

--- leaks() -> the buffers still live, oldest first, with where they were
-- allocated (known while recording or when poolsh.sources(true)).
function M.leaks()
  return (core.live())
end

--- leak_lines() -> the leak report's lines, empty when nothing leaks: the
-- oldest show_max buffers, then how many more.
function M.leak_lines()
  local live, n = core.live(M.show_max)
  if n == 0 then return {} end
  local out = { ("poolsh: %d buffer%s still live at exit (freed now):"):format(n,
                n == 1 and "" or "s") }
  local unknown = false
  for _, b in ipairs(live) do
    local pool = b.pool and (" from p%d on %s"):format(b.pool, stream_name(b.stream)) or ""
    out[#out + 1] = ("  b%d %s %s%s, allocated at %s"):format(b.buffer, fmt(b.size), b.kind, pool,
                                                            b.src or "?")
    unknown = unknown or not b.src
  end
  if n > #live then out[#out + 1] = ("  ... and %d more (poolsh.leaks() lists them)"):format(n - #live) end
  if unknown then
    out[#out + 1] = "  (allocation sites are known while recording or with poolsh.sources(true))"
  end
  return out
end

function M.report_leaks()
  for _, l in ipairs(M.leak_lines()) do io.stderr:write(l, "\n") end
end

return M
