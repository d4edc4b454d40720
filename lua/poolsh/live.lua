--- What poolsh shows of the allocator: the REPL's live lines, show(),
-- map(pool) and the leak report at exit (docs/live.md).
local core = require "poolsh.core"
local units = require "poolsh.units"
local trace = require "poolsh.trace"

local M = {}

local fmt = units.fmt

-- Display names ("copies", else "s3"; stream 0 "default").
local naming = require "poolsh.naming"
local function name(kind, id)
  if id == nil then return "?" end
  return naming.of(kind, id)
end

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

-- ---- width ---------------------------------------------------------------------

--- Columns the views fit in: nil picks them (columns()), or a number >= 40.
M.width = nil

-- The terminal's columns from stty, or nil.
local function terminal_columns()
  local f = io.popen("stty size </dev/tty 2>/dev/null")
  if not f then return nil end
  local out = f:read("a") or ""        -- nothing when the terminal is gone (SIGHUP)
  f:close()
  return tonumber(out:match("^%s*%d+%s+(%d+)"))
end

--- columns() -> the width the views fit in: poolsh.live.width when set;
-- else $COLUMNS; else the terminal's width when stdout is a terminal
-- (color on, as the REPL sets it); else 80. Never below 40.
function M.columns()
  local w = M.width
  if w ~= nil then
    if math.type(w) ~= "integer" or w < 40 then
      error("poolsh.live.width must be nil or an integer >= 40, got " .. tostring(w), 2)
    end
    return w
  end
  w = math.tointeger(tonumber(os.getenv("COLUMNS") or ""))
  if not w and M.color then w = terminal_columns() end
  return math.max(w or 80, 40)
end

-- Columns a string takes on screen: colour codes take none, a UTF-8
-- sequence one.
local function vlen(s)
  s = s:gsub("\27%[[%d;]*m", "")
  return utf8.len(s) or #s
end

-- s cut to n columns, ending in "..." when cut (s without colour codes).
local function cut(s, n)
  if vlen(s) <= n then return s end
  local at = utf8.len(s) and utf8.offset(s, n - 2) or n - 2
  return s:sub(1, at - 1) .. "..."
end

-- A site on one line: a REPL statement's text can span several.
local function one_line(site) return site and (site:gsub("%s+", " ")) end

--- fit(out, parts, width [, indent]): appends parts to out as lines of at
-- most width columns: parts joined by two spaces, a part that does not fit
-- starting a line of its own after indent, a part too long for any line
-- broken at its spaces (its leading spaces kept).
function M.fit(out, parts, width, indent)
  indent = indent or "    "
  local line
  local function put(sep, piece)
    if line == nil then line = piece
    elseif vlen(line) + #sep + vlen(piece) <= width then line = line .. sep .. piece
    else out[#out + 1] = line; line = indent .. piece end
  end
  for _, p in ipairs(parts) do
    if vlen(p) > width - #indent then
      local sep, lead = "  ", p:match("^%s*")
      for w in p:gmatch("%S+") do put(sep, lead .. w); sep, lead = " ", "" end
    else
      put("  ", p)
    end
  end
  if line then out[#out + 1] = line end
  return out
end
local fit = M.fit

-- ---- the REPL's live view --------------------------------------------------

--- At most this many allocations are listed one per line after a
-- statement; more are summarised per pool and rule, then the last
-- `examples` listed.
M.alloc_lines = 8
M.examples = 3

local watching = false
local last = {}          -- pool id -> {reserved, used, pending}
local last_alloc = 0     -- allocations already reported
local last_release = 0   -- releases already reported
local last_counts = {}   -- pool id -> {allocs, reuses} from core.counts()
local last_collected, last_collected_bytes = 0, 0   -- the collector's frees already reported

-- Each device's access to pool p ("none", "read", "rw"), or nil with one
-- device: only several devices make access change (docs/multi-gpu.md).
local function access_of(p, ndev)
  if ndev < 2 then return nil end
  local t = {}
  for d = 0, ndev - 1 do
    local ok, a = pcall(p.access, p, d)
    t[d] = ok and a or "?"
  end
  return t
end

local function snapshot()
  local snap = {}
  local ndev = core.device_count()
  for _, p in ipairs((M.objects())) do
    local st = p:stats{ estimates = false }   -- no free-space estimate: nothing to build
    snap[p.id] = { name = name("pool", p.id), reserved = st.reserved, used = st.used,
                   pending = st.pending, access = access_of(p, ndev) }
  end
  return snap
end

-- "device 1 access rw (was none)" for each device whose access to a pool
-- changed since the last statement.
local function access_parts(was, now)
  local parts = {}
  if not (was and was.access and now.access) then return parts end
  for d = 0, #now.access do
    local a, b = was.access[d], now.access[d]
    if a and b and a ~= b then parts[#parts + 1] = ("device %d access %s (was %s)"):format(d, b, a) end
  end
  return parts
end

-- Per live pool, its allocations and reuses by rule so far (core.counts).
local function pool_counts()
  local t = {}
  for id, c in pairs(core.counts().pools) do
    local reuses = {}
    for rule, n in pairs(c.reuses or {}) do reuses[rule] = n end
    t[id] = { allocs = c.allocs or 0, reuses = reuses }
  end
  return t
end

-- Forgets what was shown: the next lines start from now.
local function start_from_now()
  last = snapshot()
  last_alloc = select(2, core.recent(math.maxinteger))
  last_release = select(2, core.releases(math.maxinteger))
  last_counts = pool_counts()
  last_collected, last_collected_bytes = select(2, core.collected(math.maxinteger))
end

--- watch([on]) -> whether the REPL prints what changed after each
-- statement; sets it when given (on by default in the REPL, off in scripts).
function M.watch(on)
  if on ~= nil then
    if type(on) ~= "boolean" then error("poolsh.watch: boolean expected, got " .. type(on), 2) end
    watching = on
    if on then start_from_now() end
  end
  return watching
end

--- reset(): after poolsh.core.reset(): forgets every pool and count seen,
-- so the next lines show only what comes after.
function M.reset()
  last, last_alloc, last_release, last_counts = {}, 0, 0, {}
  last_collected, last_collected_bytes = 0, 0
  if watching then start_from_now() end
end

--- reused_words(a): what an allocation that reused memory took, from its
-- sources (core.recent's sources, a Buffer's sources: the buffers whose
-- freed bytes it took, lowest address first, with the rule for each):
-- "reused b1's memory (stream order)", "reused b1's and b2's memory
-- (stream order)", "reused b1's memory (stream order) and b2's (host
-- synchronisation)"; past four buffers, "and 3 more buffers'".
function M.reused_words(a)
  local src = a.sources
  if not src or #src == 0 then src = { { buffer = a.reused_from, rule = a.rule } } end
  local names, rules, same, more = {}, {}, true, 0
  for i, s in ipairs(src) do
    if s.more then more = more + s.more
    elseif #names == 4 then more = more + 1
    else
      names[#names + 1] = name("buffer", s.buffer) .. "'s"
      rules[#rules + 1] = s.rule
      if s.rule ~= src[1].rule then same = false end
    end
  end
  local function list(parts)
    if more > 0 then parts[#parts + 1] = ("%d more buffers'"):format(more) end
    if #parts == 1 then return parts[1] end
    return table.concat(parts, ", ", 1, #parts - 1) .. " and " .. parts[#parts]
  end
  if same then
    return ("reused %s memory (%s)"):format(list(names), paint("rule", rules[1]))
  end
  local parts = {}
  for i, n in ipairs(names) do
    parts[i] = ("%s%s (%s)"):format(n, i == 1 and " memory" or "", paint("rule", rules[i]))
  end
  return "reused " .. list(parts)
end

--- collected_names: how many collected buffers the note names before
-- "and N more".
M.collected_names = 8

-- The note for the buffers the collector freed since the last statement
-- (their memory left `used` then): "collected: b5, b6 (16.00 MiB) — no
-- variable held them"; nil when it freed none.
local function collected_note(width)
  local list, n, bytes = core.collected(last_collected)
  local count, freed = n - last_collected, bytes - last_collected_bytes
  last_collected, last_collected_bytes = n, bytes
  if count <= 0 then return nil end
  table.sort(list, function(a, b) return a.buffer < b.buffer end)   -- the collector's order is its own
  local names = {}
  for i = 1, math.min(#list, M.collected_names) do names[i] = name("buffer", list[i].buffer) end
  local text = table.concat(names, ", ")
  if count > #names then text = text .. (" and %d more"):format(count - #names) end
  return fit({}, { ("  collected: %s (%s) \u{2014} no variable held %s"):format(text, fmt(freed),
    count == 1 and "it" or "them") }, width, "    ")
end

-- One line (or more, folded at width) for an allocation: its size and
-- kind, and whether and why it reused memory.
local function alloc_line(out, a, width)
  local where = a.pool and ("%s on %s"):format(name("pool", a.pool), name("stream", a.stream))
                or "host/device"
  local what
  if a.source then            -- another process's buffer (docs/ipc.md)
    fit(out, { ("  %s %s imported from %s"):format(name("buffer", a.buffer), fmt(a.size), a.source) },
        width)
    return
  elseif a.reused then
    what = M.reused_words(a)
  elseif a.pool then
    what = a.why_fresh and "fresh memory \u{2014} " .. a.why_fresh or "fresh memory"
  else
    what = "not pool memory"
  end
  fit(out, { ("  %s %s from %s: %s"):format(name("buffer", a.buffer), fmt(a.size), where, what) },
      width)
end

-- "stream order 399990, host synchronisation 10": counts by name, most first.
local function by_count(t)
  local list = {}
  for k, n in pairs(t) do if n > 0 then list[#list + 1] = { k, n } end end
  table.sort(list, function(a, b) if a[2] ~= b[2] then return a[2] > b[2] end return a[1] < b[1] end)
  for i, e in ipairs(list) do list[i] = ("%s %d"):format(e[1], e[2]) end
  return table.concat(list, ", ")
end

-- The summary of n allocations: per pool how many, fresh and by rule
-- (from the counts' change since the last statement), then the last few.
local function alloc_summary(out, n, allocs, counts, width)
  out[#out + 1] = ("  %d allocations:"):format(n)
  local ids, in_pools = {}, 0
  for id in pairs(counts) do ids[#ids + 1] = id end
  table.sort(ids)
  for _, id in ipairs(ids) do
    local now, was = counts[id], last_counts[id] or { allocs = 0, reuses = {} }
    local made = now.allocs - was.allocs
    if made > 0 then
      local rules, reused = {}, 0
      for rule, k in pairs(now.reuses) do
        rules[rule] = k - (was.reuses[rule] or 0)
        reused = reused + rules[rule]
      end
      rules["fresh memory"] = made - reused
      fit(out, { ("    %s: %d (%s)"):format(name("pool", id), made, by_count(rules)) }, width, "      ")
      in_pools = in_pools + made
    end
  end
  -- host and device memory, and pools destroyed since (their counts go)
  if n > in_pools then out[#out + 1] = ("    not in a live pool: %d"):format(n - in_pools) end
  out[#out + 1] = paint("dim", ("  the last %d:"):format(math.min(#allocs, M.examples)))
  for i = math.max(1, #allocs - M.examples + 1), #allocs do alloc_line(out, allocs[i], width) end
end

-- The threshold a release went down to, as a size ("max": never).
local function threshold(t)
  if t == nil then return "?" end
  if t == math.huge or math.type(t) == "integer" and t < 0 or t >= 2^63 then return "max" end
  return fmt(t)
end

-- Per pool id, what the releases since the last statement say: their
-- causes as written (trace.cause) and the threshold they released to;
-- and how many releases were before the core's ring (not listed).
local function release_parts()
  local list, n = core.releases(last_release)
  local missed = n - last_release - #list
  last_release = n
  local by_pool = {}
  for _, r in ipairs(list) do
    local t = by_pool[r.pool] or { order = {}, by = {} }
    by_pool[r.pool] = t
    local cause = trace.cause(r.cause_op, r.cause_id)
    -- a trim releases down to what it keeps, not to the threshold
    local to = r.cause_op ~= "trim" and threshold(r.threshold) or nil
    local key = cause .. "\0" .. (to or "")
    if not t.by[key] then
      t.by[key] = { cause = cause, to = to, size = 0, n = 0 }
      t.order[#t.order + 1] = key
    end
    local g = t.by[key]
    g.size, g.n = g.size + r.size, g.n + 1
  end
  local parts = {}
  for id, t in pairs(by_pool) do
    parts[id] = {}
    for _, key in ipairs(t.order) do
      local g = t.by[key]
      local text = g.cause .. " released"
      -- the size is the reserved delta when one cause released to a threshold
      if #t.order > 1 or not g.to then text = text .. " " .. fmt(g.size) end
      if g.to then text = text .. " down to threshold " .. g.to end
      if g.n > 1 then text = text .. (" (%d releases)"):format(g.n) end
      parts[id][#parts[id] + 1] = text
    end
  end
  return parts, missed
end

--- lines() -> the lines the live view prints for what changed since the
-- last call: pools whose counters moved (and what released memory), then
-- the new allocations, one line each or summarised when many.
function M.lines()
  local width = M.columns()
  local pools = {}
  local now = snapshot()
  local released, missed = release_parts()
  for id, s in pairs(now) do
    local was = last[id] or { reserved = 0, used = 0, pending = 0 }
    local access = access_parts(last[id], s)
    if s.reserved ~= was.reserved or s.used ~= was.used or s.pending ~= was.pending
       or released[id] or #access > 0 then
      local parts = { paint("bold", s.name),
        "reserved " .. fmt(s.reserved) .. delta(s.reserved - was.reserved),
        "used " .. fmt(s.used) .. delta(s.used - was.used),
        "pending " .. fmt(s.pending) .. delta(s.pending - was.pending) }
      for _, r in ipairs(released[id] or {}) do parts[#parts + 1] = r end
      for _, a in ipairs(access) do parts[#parts + 1] = a end
      pools[#pools + 1] = { id, fit({}, parts, width) }
    end
  end
  for id, was in pairs(last) do
    if not now[id] then pools[#pools + 1] = { id, { ("%s  destroyed"):format(was.name) } } end
  end
  table.sort(pools, function(a, b) return a[1] < b[1] end)
  local out = {}
  for _, p in ipairs(pools) do
    for _, l in ipairs(p[2]) do out[#out + 1] = l end
  end
  if missed > 0 then
    out[#out + 1] = paint("dim", ("  (and %d earlier releases, not listed: poolsh.summary() counts them)")
                                 :format(missed))
  end
  for _, l in ipairs(collected_note(width) or {}) do out[#out + 1] = l end
  local allocs, n = core.recent(last_alloc)
  local counts = pool_counts()
  if n - last_alloc > M.alloc_lines then
    alloc_summary(out, n - last_alloc, allocs, counts, width)
  else
    for _, a in ipairs(allocs) do alloc_line(out, a, width) end
  end
  last, last_alloc, last_counts = now, n, counts
  return out
end

--- after(): the REPL calls it after each statement.
function M.after()
  if not watching then return end
  for _, l in ipairs(M.lines()) do io.stdout:write(l, "\n") end
end

-- ---- show() -------------------------------------------------------------------

local function pad(s, n) return s .. string.rep(" ", n - vlen(s)) end

--- rows(header, list [, width]) -> a table's lines, fitted to width
-- columns: when the columns do not fit side by side they are printed in
-- blocks, each repeating the first column; the last column stays when 16
-- columns are left for it, its cells folded at their spaces under
-- themselves; what is still too wide is cut with "...". No lines for no
-- rows.
function M.rows(header, list, width)
  width = width or M.columns()
  local out = {}
  if #list == 0 then return out end
  local w = {}
  for i, h in ipairs(header) do w[i] = vlen(h) end
  for _, r in ipairs(list) do
    for i = 1, #header do w[i] = math.max(w[i], vlen(r[i] or "")) end
  end
  local blocks, cur, used = {}, { 1 }, 2 + w[1]
  for i = 2, #header do
    -- a last column with 16 columns left is cut rather than moved
    local cut_last = i == #header and width - used - 2 >= 16
    if used + 2 + w[i] > width and #cur > 1 and not cut_last then
      blocks[#blocks + 1], cur, used = cur, { 1 }, 2 + w[1]
    end
    cur[#cur + 1], used = i, used + 2 + w[i]
  end
  blocks[#blocks + 1] = cur
  for _, b in ipairs(blocks) do
    local function line(r)
      local cells = {}
      for k = 1, #b - 1 do cells[k] = pad(r[b[k]] or "", w[b[k]]) end
      local lead = "  " .. table.concat(cells, "  ") .. (#b > 1 and "  " or "")
      local last = r[b[#b]] or ""
      if vlen(lead) + vlen(last) <= width or width - vlen(lead) < 16 then
        out[#out + 1] = cut((lead .. last):gsub("%s+$", ""), width)
      else   -- the last cell folded at its spaces, under itself
        local folded = fit({}, { last }, width - vlen(lead), "")
        for k, l in ipairs(folded) do
          out[#out + 1] = cut(((k == 1 and lead or (" "):rep(vlen(lead))) .. l):gsub("%s+$", ""), width)
        end
      end
    end
    line(header)
    for _, r in ipairs(list) do line(r) end
  end
  return out
end
local rows = M.rows

--- At most this many rows of live buffers and of pending frees in show(),
-- and of lines in the leak report; the rest is counted on one line.
M.show_max = 50

-- The line under a table cut at show_max rows.
local function more(out, n, what, hint)
  if n > 0 then out[#out + 1] = paint("dim", ("  ... and %d more %s (%s lists them)"):format(n, what, hint)) end
end

local function append(out, lines)
  for _, l in ipairs(lines) do out[#out + 1] = l end
end

--- show_lines() -> the table poolsh.show() prints: pools, streams with
-- their queued work, live buffers and pending frees.
function M.show_lines()
  local width = M.columns()
  local out = {}
  local pools, streams = M.objects()
  out[#out + 1] = paint("bold", "pools")
  local prow = {}
  for _, p in ipairs(pools) do
    local st = p:stats()
    local th = p.release_threshold
    prow[#prow + 1] = { name("pool", p.id) .. (p.default and " (default)" or ""), p.location,
                        fmt(st.reserved), fmt(st.used),
                        ("%s (%d)"):format(fmt(st.pending), st.pending_count),
                        ("%s (largest %s)"):format(fmt(st.free), fmt(st.largest_free)),
                        th == math.huge and "max" or fmt(th) }
  end
  append(out, rows({ "pool", "location", "reserved", "used", "pending", "free ~", "threshold" },
                   prow, width))
  out[#out + 1] = paint("bold", "streams")
  local srow = {}
  for _, s in ipairs(streams) do
    -- a peek, not s:query(): showing changes nothing (no clock moves, no
    -- free becomes known complete)
    local ops, done, idle = core.stream_state(s)
    local state = idle == nil and "?" or idle and "idle" or "busy"
    srow[#srow + 1] = { name("stream", s.id), state, idle and "0" or tostring(ops - done),
                        s.blocking and "blocking" or "non-blocking" }
  end
  append(out, rows({ "stream", "state", "queued", "kind" }, srow, width))
  out[#out + 1] = paint("bold", "buffers")
  local brow = {}
  local live, nlive = core.live(M.show_max)
  for _, b in ipairs(live) do
    brow[#brow + 1] = { name("buffer", b.buffer), fmt(b.size), b.kind,
                        b.pool and ("%s on %s"):format(name("pool", b.pool), name("stream", b.stream)) or "",
                        ("0x%x"):format(b.addr), one_line(b.src) or "" }
  end
  append(out, rows({ "buffer", "size", "kind", "pool", "addr", "allocated at" }, brow, width))
  more(out, nlive - #live, "buffers", "poolsh.leaks()")
  out[#out + 1] = paint("bold", "pending frees")
  local pending, npending = core.pending(M.show_max)
  table.sort(pending, function(a, b)
    if a.pool ~= b.pool then return a.pool < b.pool end
    return a.addr < b.addr
  end)
  local frow = {}
  for _, blk in ipairs(pending) do
    frow[#frow + 1] = { name("buffer", blk.buffer), fmt(blk.size), name("pool", blk.pool),
                        name("stream", blk.stream), ("0x%x"):format(blk.addr) }
  end
  append(out, rows({ "buffer", "size", "pool", "freed on", "addr" }, frow, width))
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
  local width = M.columns()
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
    local l = ("  0x%x  +%-10s %10s  %-7s %s"):format(e.addr, fmt(e.addr - base), fmt(e.size),
                                                    e.what, who)
    out[#out + 1] = cut(l:gsub("%s+$", ""), width)
  end
  return out
end

function M.map(p)
  for _, l in ipairs(M.map_lines(p)) do io.stdout:write(l, "\n") end
end

-- ---- allocation sites ---------------------------------------------------------


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
  for i = 1, math.min(#list, M.show_max) do
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

-- ---- summary and scoped peaks ------------------------------------------------

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
  for _, p in ipairs((M.objects())) do
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
  local width = M.columns()
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

-- ---- at exit ------------------------------------------------------------------

--- leaks() -> the buffers still live, oldest first, with where they were
-- allocated (known while recording or when poolsh.sources(true)).
function M.leaks()
  return (core.live())
end

--- Sites with more live buffers than this get one line for all of them.
M.leak_group = 3

local function leak_line(b)
  local pool = b.pool and (" from %s on %s"):format(name("pool", b.pool), name("stream", b.stream)) or ""
  return ("%s %s %s%s"):format(name("buffer", b.buffer), fmt(b.size), b.kind, pool)
end

--- leak_lines() -> the leak report's lines, empty when nothing leaks: per
-- allocation site, oldest first, its buffers one a line, or one line for
-- a site with more than leak_group; at most show_max lines.
function M.leak_lines()
  local width = M.columns()
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
    if #site.bufs > M.leak_group then
      entries[#entries + 1] = { site = site, first = site.bufs[1].buffer }
    else
      for _, b in ipairs(site.bufs) do entries[#entries + 1] = { b = b, first = b.buffer } end
    end
  end
  table.sort(entries, function(a, b) return a.first < b.first end)
  local out = { ("poolsh: %d buffer%s still live at exit (freed now):"):format(n, n == 1 and "" or "s") }
  local unknown, shown = false, 0
  for i = 1, math.min(#entries, M.show_max) do
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
