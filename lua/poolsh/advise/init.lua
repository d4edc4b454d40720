--- poolsh.advise: which PYTORCH_CUDA_ALLOC_CONF suits a recording. It
-- replays the recording through the pytorch allocator under each setting
-- of a small grid (M.grid), each from a fresh poolsh, and ranks the
-- settings (docs/replay.md, "Which setting should I use?"; `poolsh advise`).
--
--   local advise = require "poolsh.advise"
--   local a = advise.run(rec, { limit = poolsh.device().limit })
--   -- a.points: every grid point in grid order, {conf, mode, status,
--   --   result, reason}; a.ranked: the replayed ones, best first;
--   -- a.best: a.ranked[1]; a.comparison: poolsh.replay.compare's
--   --   comparison of the replayed points (labels: advise.label(conf))
--   print(advise.table(a)); print(advise.verdict(a))
--
-- Each point is a conf text handed to poolsh.allocators.pytorch's
-- new{conf = ...}. A setting the allocator does not model yet (it raises
-- "... is not modelled yet") is a row that says so, never recommended;
-- when a mode's bare setting is refused, its refused variants fold into
-- its row.
local poolsh = require "poolsh"
local compare = require "poolsh.replay.compare"

local M = {}

--- The allocator modes: each a conf text ("" is PyTorch's default) and
-- whether the option grid below applies to it.
M.modes = {
  { conf = "", grid = true },
  { conf = "expandable_segments:True", grid = true },
  { conf = "backend:cudaMallocAsync", grid = false },
}
--- max_split_size_mb values tried ("": unset). Blocks above it are never
-- split nor cached for a smaller request.
M.max_split_size_mb = { "", "64", "256" }
--- roundup_power2_divisions values tried ("": unset).
M.roundup_power2_divisions = { "", "4", "[256:1,512:2,1024:4,>:8]" }

--- The most replays advise.run runs at once (opts.jobs).
M.max_jobs = 64

local function fail(fmt, ...) error("poolsh.advise: " .. fmt:format(...), 0) end

-- The comma-joined non-empty parts, and how many there are.
local function join(parts)
  local t = {}
  for _, p in ipairs(parts) do if p ~= "" then t[#t + 1] = p end end
  return table.concat(t, ","), #t
end

--- The grid points in order: {conf, mode (the mode's conf), settings (how
-- many keys the conf has)}. The first point is PyTorch's default ("").
function M.grid()
  local points = {}
  for _, m in ipairs(M.modes) do
    local splits = m.grid and M.max_split_size_mb or { "" }
    local roundups = m.grid and M.roundup_power2_divisions or { "" }
    for _, ms in ipairs(splits) do
      for _, ru in ipairs(roundups) do
        local parts = { m.conf, ms ~= "" and "max_split_size_mb:" .. ms or "",
                        ru ~= "" and "roundup_power2_divisions:" .. ru or "" }
        local conf, keys = join(parts)
        points[#points + 1] = { conf = conf, mode = m.conf, settings = keys }
      end
    end
  end
  return points
end

--- A point's label: its conf text, "(default)" for PyTorch's default.
function M.label(conf) return conf == "" and "(default)" or conf end

--- Whether replayed point p fits within limit (bytes; nil: no limit): no
-- allocation failed and its peak reserved is at most the limit (a pool's
-- or a mapping's high-water mark may pass the limit without a failure).
function M.fits(p, limit)
  local r = p.result
  return r ~= nil and r.failed == 0 and (limit == nil or r.peak_reserved <= limit)
end

-- Whether point a ranks before point b (both replayed; M.rank's order).
local function before(a, b)
  local x, y = a.result, b.result
  if x.failed ~= y.failed then return x.failed < y.failed end
  if x.peak_reserved ~= y.peak_reserved then return x.peak_reserved < y.peak_reserved end
  if x.segments_allocated ~= y.segments_allocated then return x.segments_allocated < y.segments_allocated end
  if x.alloc_seconds ~= y.alloc_seconds then return x.alloc_seconds < y.alloc_seconds end
  if a.settings ~= b.settings then return a.settings < b.settings end
  return a.index < b.index
end

--- The most events advise keeps in memory to replay them again (about 80
-- bytes each): a longer recording is read again for each point.
M.cache_events = 1000000

--- rec, reading its events once: the first full pass through
-- rec:events() keeps every field an event has (op, address, size, stream
-- and recorded time t, which paces a backend:cudaMallocAsync replay) in
-- arrays (at most M.cache_events events; past that it keeps none), and
-- later passes replay them from there, so that each pass yields what rec
-- does. Every other field is rec's.
function M.shared(rec)
  if rawget(rec, "advise_shared") then return rec end
  local ops, addrs, sizes, streams, times, n, whole = nil, nil, nil, nil, nil, 0, false
  local w = setmetatable({ advise_shared = true, streams = rawget(rec, "streams") }, { __index = rec })
  function w.events()
    if whole then
      local i = 0
      return function()
        i = i + 1
        if i > n then return nil end
        return ops[i], addrs[i], sizes[i], streams[i], times[i]
      end
    end
    ops, addrs, sizes, streams, times, n = {}, {}, {}, {}, {}, 0
    local keep, it, st, ctl = true, rec:events()
    return function()
      local op, addr, size, stream, t = it(st, ctl)
      ctl = op
      if op == nil then
        whole = keep
        if keep then w.count = n end
        return nil
      end
      if keep then
        n = n + 1
        if n > M.cache_events then keep, ops, addrs, sizes, streams, times, n = false, nil, nil, nil, nil, nil, 0
        else ops[n], addrs[n], sizes[n], streams[n], times[n] = op, addr, size, stream, t end
      end
      return op, addr, size, stream, t
    end
  end
  return w
end

--- Replays rec under the setting of point p (its conf) into comparison c
-- (poolsh.replay.compare.add, under advise.label(conf)) and sets p.status:
-- "replayed" (p.result), "not modelled" or "out of memory" (p.reason: the
-- allocator's message). Raises any other error of the replay. opts: as
-- for M.run.
function M.point(c, rec, p, opts)
  local ok, r = pcall(compare.add, c, rec, M.label(p.conf), opts.allocator or "pytorch", { conf = p.conf }, opts)
  if ok then
    p.status, p.result = "replayed", r
    return p
  end
  local msg = tostring(r)
  if msg:find("not modelled", 1, true) then
    p.status, p.reason = "not modelled", msg
  elseif msg:find("out of memory", 1, true) then
    p.status, p.reason = "out of memory", msg   -- the recorded state did not fit
  else
    error(msg, 0)
  end
  return p
end

-- The path of the worker script (poolsh.advise.worker) on package.path.
local function worker_path()
  local path = package.searchpath("poolsh.advise.worker", package.path)
  if not path then fail("cannot find poolsh.advise.worker on package.path") end
  return path
end

--- The path a child can open to read what this process read from path,
-- or nil: path with every symbolic link resolved (realpath -e, so that
-- /dev/stdin redirected from a file names that file), when that is a
-- regular file outside /dev and /proc. A pipe, a terminal, a directory, a
-- FIFO or a missing file gives nil (nothing is opened: a FIFO's open
-- would wait for a writer); advise.run then replays here, serially.
function M.rereadable(path)
  if type(path) ~= "string" or path == "" or path:find("\0", 1, true) then return nil end
  local q = "'" .. path:gsub("'", "'\\''") .. "'"
  local sh = io.popen("p=$(realpath -e -- " .. q .. " 2>/dev/null) && [ -f \"$p\" ] && printf '%s' \"$p\"")
  if not sh then return nil end
  local real = sh:read("a")
  sh:close()
  if real == "" or real:sub(1, 1) ~= "/" or real:match("^/dev/") or real:match("^/proc/") then return nil end
  return real
end

-- Replays points[k] for k in ks in `workers` children (poolsh.spawn of
-- the worker script, each reading opts.real, else opts.file, itself) and the rest here,
-- the lanes dealt round-robin, and copies each child's point into
-- points[k] (result, series). Every child is closed before it returns or
-- raises.
local function in_parallel(c, rec, points, ks, workers, opts)
  local procs, lanes = {}, {}
  for w = 0, workers do lanes[w] = {} end
  for n, k in ipairs(ks) do local w = n % (workers + 1); lanes[w][#lanes[w] + 1] = k end
  local ok, err = pcall(function()
    local path = worker_path()
    for w = 1, workers do
      if #lanes[w] > 0 then
        procs[w] = poolsh.spawn(path, opts.real or opts.file)
        local confs = {}
        for _, k in ipairs(lanes[w]) do confs[#confs + 1] = points[k].conf end
        procs[w]:send({ confs = confs, max_inflate = opts.max_inflate, streams = opts.streams,
                        max_streams = opts.max_streams, series = c.series ~= nil })
      end
    end
    for _, k in ipairs(lanes[0]) do M.point(c, rec, points[k], opts) end
    for w = 1, workers do
      for _, k in ipairs(procs[w] and lanes[w] or {}) do
        local m = procs[w]:recv()
        if type(m) ~= "table" then fail("worker %d: a point expected, got %s", w, type(m)) end
        if m.error then error(m.error, 0) end
        local p = points[k]
        if m.conf ~= p.conf then fail("worker %d: point '%s' expected, got '%s'", w, p.conf, tostring(m.conf)) end
        p.status, p.result, p.reason = m.status, m.result, m.reason
        if p.result and opts.events and p.result.events ~= opts.events then
          fail("worker %d read %d events from %s, not the %d replayed here", w, p.result.events,
            tostring(opts.file), opts.events)
        end
        if p.result then
          c.results[M.label(p.conf)] = p.result
          if c.series then c.series[M.label(p.conf)] = m.series end
        end
      end
    end
  end)
  for w = 1, workers do
    if procs[w] then pcall(procs[w].close, procs[w]) end
  end
  if not ok then error(err, 0) end
end

--- Replays rec under every grid point and ranks them. opts: limit (bytes:
-- the device limit the replays run under, poolsh.device().limit; nil:
-- none; a point fits under it as M.fits says), series (sample reserved and used for
-- a report), streams, max_streams, progress (called as progress(label,
-- events, rec.count)), allocator (the module each conf is handed to;
-- default "pytorch"), jobs (how many replays run at once, default 1:
-- with more, jobs - 1 children started with poolsh.spawn replay a share of
-- the points, each reading opts.file (M.rereadable's path for it), read
-- with opts.max_inflate, itself; with no such path all run here;
-- the default point is always replayed here first; parallel_after:
-- seconds, run the others here unless the default's replay took that
-- long). Raises when the
-- recording has no events, and with the replay's error when a point
-- fails otherwise than out of memory or as "not modelled yet". A mode
-- whose bare setting is not modelled stands for its variants (folded).
function M.run(rec, opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail("options table expected, got %s", type(opts)) end
  if type(rec) ~= "table" or type(rec.events) ~= "function" then
    fail("a Recording expected (poolsh.replay.read.open), got %s", type(rec))
  end
  local limit, jobs = opts.limit, opts.jobs or 1
  if limit ~= nil and (math.type(limit) ~= "integer" or limit < 1) then
    fail("limit must be a positive number of bytes, got %s", tostring(limit))
  end
  if math.type(jobs) ~= "integer" or jobs < 1 or jobs > M.max_jobs then
    fail("jobs must be a whole number from 1 to %d, got %s", M.max_jobs, tostring(jobs))
  end
  if jobs > 1 and (type(opts.file) ~= "string" or opts.allocator ~= nil) then
    fail("jobs > 1 needs opts.file (the children read it) and the pytorch allocator")
  end
  rec = M.shared(rec)
  local c = compare.new(rec, {}, opts.series)
  c.title = ("poolsh advise: %s (%s)"):format(tostring(rec.file), poolsh.backend())
  local a = { file = rec.file, format = rec.format, limit = limit, points = M.grid(), ranked = {},
              comparison = c }
  for i, p in ipairs(a.points) do p.index = i end
  -- the default first, here: a recording without events stops here
  local first = M.point(c, rec, a.points[1], opts)
  if first.result and first.result.events == 0 then
    fail("%s has no events: there is nothing to replay, so nothing to advise", tostring(rec.file))
  end
  local rest = {}
  for k = 2, #a.points do rest[#rest + 1] = k end
  if jobs > 1 and opts.parallel_after and first.result and first.result.seconds < opts.parallel_after then
    jobs = 1   -- a short replay: the children would cost more than they save
  end
  local file = jobs > 1 and M.rereadable(opts.file)
  if not file then
    jobs = 1   -- a pipe, a FIFO: the children could not read it again
  end
  if jobs > 1 then
    local popts = setmetatable({ events = first.result and first.result.events, real = file }, { __index = opts })
    in_parallel(c, rec, a.points, rest, math.min(jobs - 1, #rest), popts)
  else
    for _, k in ipairs(rest) do M.point(c, rec, a.points[k], opts) end
  end
  local refused = {}   -- mode -> its bare setting's refusal
  for _, p in ipairs(a.points) do
    if p.conf == p.mode and p.status == "not modelled" then refused[p.mode] = true end
  end
  for _, p in ipairs(a.points) do
    if p.result then
      c.allocators[#c.allocators + 1] = M.label(p.conf)
      a.ranked[#a.ranked + 1] = p
    elseif refused[p.mode] and p.conf ~= p.mode and p.status == "not modelled" then
      p.folded = true
    end
  end
  return M.rank(a)
end

--- Ranks a's replayed points (a.ranked) in place, best first, sets each
-- one's rank, a.best and a.default (PyTorch's default, when replayed);
-- returns a. The order: fewer failed allocations, less peak reserved,
-- fewer driver allocations, less time in allocator calls, fewer settings,
-- grid order. Under a limit the points that fit (M.fits) come first: one
-- that does not has failed allocations or more peak reserved than the
-- limit, so more than any that fits.
function M.rank(a)
  table.sort(a.ranked, before)
  for k, p in ipairs(a.ranked) do p.rank = k end
  a.best = a.ranked[1]
  a.default = nil
  for _, p in ipairs(a.ranked) do
    if p.conf == "" then a.default = p end
  end
  return a
end

-- "12.00 MiB less (1.5%)" against the default's peak reserved.
local function against(p, default)
  if not (default and p.result) or p == default then return "" end
  local d, base = p.result.peak_reserved - default.result.peak_reserved, default.result.peak_reserved
  if d == 0 then return "same" end
  local pct = base > 0 and (" (%.1f%%)"):format(math.abs(d) * 100 / base) or ""
  return (d < 0 and "-" or "+") .. poolsh.fmt(math.abs(d)) .. pct
end

--- The ranking as rows of cells (poolsh.replay.compare.format): a header,
-- each replayed point best first, then the points not replayed (a mode
-- not modelled yet once, with how many of its variants it stands for).
function M.cells(a)
  local head = { "#", "PYTORCH_CUDA_ALLOC_CONF", "peak reserved", "vs default", "driver allocs",
                 "failures", "alloc time" }
  if a.limit then head[#head + 1] = "fits " .. poolsh.fmt(a.limit) end
  local rows = { head }
  for _, p in ipairs(a.ranked) do
    local r = p.result
    local row = { tostring(p.rank), M.label(p.conf), poolsh.fmt(r.peak_reserved), against(p, a.default),
                  tostring(r.segments_allocated), tostring(r.failed), ("%.3f ms"):format(r.alloc_seconds * 1000) }
    if a.limit then row[#row + 1] = M.fits(p, a.limit) and "yes" or "no" end
    rows[#rows + 1] = row
  end
  local folded = {}
  for _, p in ipairs(a.points) do
    if p.folded then folded[p.mode] = (folded[p.mode] or 0) + 1 end
  end
  for _, p in ipairs(a.points) do
    if not p.result and not p.folded then
      local label = M.label(p.conf)
      local n = folded[p.conf] or 0
      if n > 0 then label = ("%s (and its %d variants)"):format(label, n) end
      local why = p.status == "not modelled" and "not modelled yet" or "out of memory"
      local row = { "-", label, why, "", "", "", "" }
      if a.limit then row[#row + 1] = p.status == "out of memory" and "no" or "" end
      rows[#rows + 1] = row
    end
  end
  return rows
end

--- What "driver allocs" counts under each mode (M.modes' confs): the
-- allocator's segments_allocated.
M.counts = {
  [""] = "cudaMalloc calls",
  ["expandable_segments:True"] = "page map calls",   -- one per run of pages mapped
  ["backend:cudaMallocAsync"] = "pool growths",      -- allocations after which the pool reserved more
}

--- The line under the table: what alloc time is measured on (clock:
-- "the sim's virtual clock" or "the wall clock") and what driver allocs
-- counts under each mode that has a replayed row.
function M.footnote(a, clock)
  local seen, parts = {}, {}
  for _, p in ipairs(a.ranked) do seen[p.mode or ""] = true end
  for _, m in ipairs(M.modes) do
    if seen[m.conf] then
      local who = m.conf == "" and "native allocator" or m.conf
      parts[#parts + 1] = ("%s (%s)"):format(M.counts[m.conf] or "driver allocations", who)
    end
  end
  local counts = #parts > 0 and "; driver allocs: " .. table.concat(parts, ", ") or ""
  return ("(alloc time: time in allocator calls on %s%s)"):format(clock, counts)
end

--- The ranking as a text table.
function M.table(a) return compare.format(M.cells(a), 2) end

--- The verdict's sentences (a list of lines) and the line to use last:
-- PYTORCH_CUDA_ALLOC_CONF=<best>, or `unset PYTORCH_CUDA_ALLOC_CONF`
-- when PyTorch's default ranks first.
function M.verdict(a)
  local best, default, lines = a.best, a.default, {}
  if not best then
    local why = ""
    for _, p in ipairs(a.points) do
      if p.status == "out of memory" then why = ": " .. p.reason; break end
    end
    lines[1] = "no setting could be replayed, none is recommended" .. why
    return lines
  end
  local r = best.result
  local name = best == default and "PyTorch's default" or best.conf
  if r.failed > 0 then
    lines[#lines + 1] = ("%s: some allocations fail under every setting; the fewest failures (%d): %s"):format(
      a.limit and "nothing fits within " .. poolsh.fmt(a.limit) or "no setting fits", r.failed, name)
  elseif not M.fits(best, a.limit) then
    lines[#lines + 1] = ("nothing fits within %s: under every setting some allocations fail or peak reserved passes it; the least peak reserved (%s): %s")
      :format(poolsh.fmt(a.limit), poolsh.fmt(r.peak_reserved), name)
  end
  if best == default then
    if M.fits(best, a.limit) then
      lines[#lines + 1] = ("PyTorch's default ranks first: peak reserved %s, %d driver allocations; no setting tried does better")
        :format(poolsh.fmt(r.peak_reserved), r.segments_allocated)
    end
    lines[#lines + 1] = "unset PYTORCH_CUDA_ALLOC_CONF"
    return lines
  end
  local why
  if default then
    local d = default.result
    if a.limit and M.fits(best, a.limit) and not M.fits(default, a.limit) then
      why = ("it fits within %s; the default does not (%s)"):format(poolsh.fmt(a.limit),
        d.failed > 0 and ("%d allocations fail"):format(d.failed) or "peak reserved " .. poolsh.fmt(d.peak_reserved))
    elseif r.failed < d.failed then
      why = ("%d allocation failures where the default has %d"):format(r.failed, d.failed)
    elseif r.peak_reserved < d.peak_reserved then
      why = ("peak reserved %s, %s less than the default's %s"):format(poolsh.fmt(r.peak_reserved),
        poolsh.fmt(d.peak_reserved - r.peak_reserved), poolsh.fmt(d.peak_reserved))
    elseif r.segments_allocated < d.segments_allocated then
      why = ("the default's peak reserved (%s) with %d driver allocations, not %d"):format(
        poolsh.fmt(r.peak_reserved), r.segments_allocated, d.segments_allocated)
    else
      why = ("the default's peak reserved (%s) in less allocator time"):format(poolsh.fmt(r.peak_reserved))
    end
  else
    why = ("peak reserved %s"):format(poolsh.fmt(r.peak_reserved))
  end
  lines[#lines + 1] = ("best: %s: %s"):format(best.conf, why)
  lines[#lines + 1] = "PYTORCH_CUDA_ALLOC_CONF=" .. best.conf
  return lines
end

--- The ranking as data for JSON: {conf, status, rank, result, fits (under
-- a limit: M.fits), reason} for every grid point, ranked ones first in
-- rank order.
function M.ranking(a)
  local t = {}
  for _, p in ipairs(a.ranked) do
    local fits = nil
    if a.limit then fits = M.fits(p, a.limit) end
    t[#t + 1] = { conf = p.conf, status = p.status, rank = p.rank, result = p.result, fits = fits }
  end
  for _, p in ipairs(a.points) do
    if not p.result then t[#t + 1] = { conf = p.conf, status = p.status, reason = p.reason } end
  end
  return t
end

return M
