--- PyTorch memory snapshots as Recordings (docs/replay.md): the dict that
-- torch.cuda.memory._snapshot() returns, pickled by _dump_snapshot into
-- NAME.pickle, or gzip-compressed (recognised by its magic bytes).
--   local rec = require("poolsh.replay.torch").open(path [, {device = 0}])
-- The reader holds the whole trace of one device. Trace sizes are the sizes
-- PyTorch was asked for (its alloc and free_requested entries record them);
-- the allocator under replay rounds them as it rounds.
-- A snapshot starts mid-run; what existed before its first event is
-- reconstructed from the trace and `segments` (the state at the end):
--   rec.initial           blocks freed in the trace but not allocated in it,
--                         and blocks active_allocated at the end that the
--                         trace leaves unallocated: {addr, size, stream}
--   rec.initial_segments  segments freed in the trace but not allocated in
--                         it, and segments at the end the trace never
--                         allocated: {addr, size, stream, kind = "small"|"large"}
-- both in address order. A recording made with expandable_segments:True
-- lists its maps and unmaps as segment_map and segment_unmap (not
-- segment_alloc and segment_free), and its initial_segments are the runs
-- of pages mapped before the trace: {addr, size, stream, kind, expandable =
-- true, base}, base the lowest address the recording shows of that pool
-- and stream (where its address range starts). A block freed before the trace whose free was
-- still pending at its start is in neither. An oom entry becomes
-- alloc_failed with addr 0 (PyTorch records the device's free bytes there).
local pickle = require "poolsh.replay.pickle"
local gzip = require "poolsh.replay.gzip"
local cjson = require "cjson"

local M = {}
local premapped

-- Above this a size is a bad file, not a request (1 PiB).
M.max_size = 1 << 50

-- Trace actions and the Recording's ops (false: not a memory event, skipped;
-- an action missing here is an error).
local ops = {
  alloc = "alloc", free_requested = "free", free_completed = "free_completed",
  segment_alloc = "segment_alloc", segment_free = "segment_free", oom = "alloc_failed",
  segment_map = "segment_map", segment_unmap = "segment_unmap",
  snapshot = false, user_defined = false,
}

local function basename(path) return path:match("[^/]*$") end

local function bad(file, fmt, ...) error(file .. ": " .. fmt:format(...), 0) end

local function slurp(path, file)
  local f, err = io.open(path, "rb")
  if not f then bad(file, "cannot open: %s", err) end
  local s = f:read("a")
  f:close()
  return s
end

--- The pickle bytes of the file at path (gunzipped when it starts with
-- gzip's magic bytes, checked to start with PROTO after the first piece;
-- opts.max_inflate bounds the inflated size, poolsh.replay.gzip).
function M.read_bytes(path, file, opts)
  file = file or basename(path)
  local data = slurp(path, file)
  local function proto(s)
    if s:byte(1) ~= 0x80 then bad(file, "not a pickle of protocol 2 or later (no PROTO opcode)") end
  end
  if gzip.is_gzip(data) then
    data = gzip.inflate(data, file, { max = opts and opts.max_inflate, first = proto })
  end
  proto(data)
  return data
end

local function is_list(v) return type(v) == "table" and type(v.n) == "number" end

-- Raises through where() when dict v was met before. A snapshot's trace
-- entries, segments and blocks are each a dict of its own; a pickle that
-- repeats one by memo references (2 bytes each) would cost the reader a
-- record per reference, tens of times the file's size.
local function once(seen, v, where, what)
  if seen[v] then where("%s repeats an earlier one (the same dict by reference)", what) end
  seen[v] = true
end

-- The device whose trace to read: opts.device, else the only one with
-- trace entries (0 when none has).
local function pick_device(traces, opts, file)
  if opts.device then
    if not traces[opts.device + 1] then bad(file, "no device %d (the snapshot has %d)", opts.device, traces.n) end
    return opts.device
  end
  local found = {}
  for i = 1, traces.n do
    if is_list(traces[i]) and traces[i].n > 0 then found[#found + 1] = i - 1 end
  end
  if #found > 1 then
    bad(file, "traces on devices %s: say which with opts.device", table.concat(found, ", "))
  end
  return found[1] or 0
end

-- The snapshot dict's trace list and segment list for one device.
local function device_data(snap, opts, file, seen)
  if type(snap) ~= "table" or not is_list(snap.device_traces) or not is_list(snap.segments) then
    bad(file, "not a PyTorch memory snapshot (a dict with device_traces and segments expected)")
  end
  local dev = pick_device(snap.device_traces, opts, file)
  local trace = snap.device_traces[dev + 1]
  if not is_list(trace) then bad(file, "device_traces[%d] is not a list", dev) end
  local segments = {}
  for i = 1, snap.segments.n do
    local seg = snap.segments[i]
    if type(seg) ~= "table" then bad(file, "segments[%d] is not a dict", i - 1) end
    once(seen, seg, function(fmt, ...) bad(file, "segments[%d]: " .. fmt, i - 1, ...) end, "the segment")
    if seg.device == nil or seg.device == dev then segments[#segments + 1] = seg end
  end
  return dev, trace, segments
end

-- A value as an error message shows it.
local function show(v)
  if v == nil then return "missing" end
  if v == pickle.None then return "None" end
  if type(v) == "string" then return ("%q"):format(v:sub(1, 40)) end
  if type(v) == "table" then return v.n and "a list" or "a dict" end
  return tostring(v)
end

-- An integer field of a trace entry or segment, checked.
local function int_field(t, key, where, min, max)
  local v = t[key]
  if math.type(v) ~= "integer" then where("%s is %s, not an integer", key, show(v)) end
  if v < min then where("negative %s %d", key, v) end
  if max and v > max then where("%s %d is too large (over 1 PiB)", key, v) end
  return v
end

-- The events of a trace as parallel arrays (op, addr, size, stream, t).
local function events_of(trace, file, seen)
  local ev = { op = {}, addr = {}, size = {}, stream = {}, t = {}, record = {}, n = 0 }
  local t0
  for i = 1, trace.n do
    local function where(fmt, ...) bad(file, "record %d: " .. fmt, i, ...) end
    local e = trace[i]
    if type(e) ~= "table" then where("a trace entry is not a dict") end
    once(seen, e, where, "the trace entry")
    local op = ops[e.action]
    if op == nil then where(e.action == nil and "no action" or "unknown action %s", show(e.action)) end
    if op then
      local n = ev.n + 1
      ev.n = n
      ev.op[n], ev.record[n] = op, i
      ev.addr[n] = op == "alloc_failed" and 0 or int_field(e, "addr", where, 0)
      ev.size[n] = int_field(e, "size", where, 0, M.max_size)
      ev.stream[n] = int_field(e, "stream", where, math.mininteger)
      local us = e.time_us
      if type(us) == "number" then t0 = t0 or us; ev.t[n] = us - t0 end
    end
  end
  return ev
end

-- The index of the last of sorted values v that is <= x (0 if none).
local function floor_index(v, x)
  local lo, hi = 0, #v
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if v[mid] <= x then lo = mid else hi = mid - 1 end
  end
  return lo
end

-- The runs of pages one pool and stream had mapped before the first event.
-- `ops`: its maps and unmaps in trace order ({op, lo, hi}); `runs`: its
-- mapped runs at the end. Between consecutive addresses where something
-- begins or ends, the piece's first op decides (a map: it was unmapped
-- before; an unmap: mapped), else the end does; each piece is painted once
-- (a next-unpainted chain), so the time is n log n in the entries.
local function group_premapped(ops, runs)
  local pts, seen = {}, {}
  local function pt(x) if not seen[x] then seen[x] = true; pts[#pts + 1] = x end end
  for _, o in ipairs(ops) do pt(o[2]); pt(o[3]) end
  for _, r in ipairs(runs) do pt(r[1]); pt(r[2]) end
  table.sort(pts)
  -- paints [lo, hi) of the pieces not painted yet with v
  local function painter(into)
    local nxt = {}
    local function find(j)   -- the first unpainted piece from j on
      local root = j
      while nxt[root] do root = nxt[root] end
      while nxt[j] do local n = nxt[j]; nxt[j] = root; j = n end
      return root
    end
    return function(lo, hi, v)
      local last = floor_index(pts, hi)
      local j = find(floor_index(pts, lo))
      while j < last do into[j] = v; nxt[j] = j + 1; j = find(j + 1) end
    end
  end
  local first, at_end = {}, {}
  local paint = painter(first)
  for _, o in ipairs(ops) do paint(o[2], o[3], o[1]) end
  paint = painter(at_end)
  for _, r in ipairs(runs) do paint(r[1], r[2], true) end
  local out = {}
  for j = 1, #pts - 1 do
    local was = first[j] == "segment_unmap" or (first[j] == nil and at_end[j])
    if was then
      local last = out[#out]
      if last and last[2] == pts[j] then last[2] = pts[j + 1] else out[#out + 1] = { pts[j], pts[j + 1] } end
    end
  end
  return out
end

-- The runs of expandable pages mapped before the first event (see the
-- top), from the mapped runs at the end and the trace's maps and unmaps,
-- per pool and stream; each with the lowest address seen of its pool and
-- stream.
premapped = function(ev, runs)
  if #runs == 0 then return {} end
  table.sort(runs, function(a, b) return a.addr < b.addr end)
  local starts = {}
  for i, r in ipairs(runs) do starts[i] = r.addr end
  local groups = { small = {}, large = {} }   -- [kind][stream] = {ops =, runs =, base =}
  local function at(kind, stream, addr)
    local g = groups[kind][stream]
    if not g then g = { ops = {}, runs = {}, base = addr }; groups[kind][stream] = g end
    if addr < g.base then g.base = addr end
    return g
  end
  for _, r in ipairs(runs) do
    local g = at(r.kind, r.stream, r.addr)
    g.runs[#g.runs + 1] = { r.addr, r.addr + r.size }
  end
  for i = 1, ev.n do
    local op = ev.op[i]
    if op == "segment_map" or op == "segment_unmap" then
      local addr, size, stream = ev.addr[i], ev.size[i], ev.stream[i]
      -- its pool: the run at the end that holds it, else by its size
      local r = runs[floor_index(starts, addr)]
      local kind = r and r.stream == stream and addr < r.addr + r.size and r.kind
        or (size % (20 << 20) == 0 and "large" or "small")
      local g = at(kind, stream, addr)
      if size > 0 then g.ops[#g.ops + 1] = { op, addr, addr + size } end
    end
  end
  local out = {}
  for kind, by_stream in pairs(groups) do
    for stream, g in pairs(by_stream) do
      for _, iv in ipairs(group_premapped(g.ops, g.runs)) do
        out[#out + 1] = { addr = iv[1], size = iv[2] - iv[1], stream = stream, kind = kind,
          expandable = true, base = g.base }
      end
    end
  end
  return out
end

-- The blocks and segments live before the first event (see the top).
local function initial_state(ev, segments, file, seen)
  local live, freed, seg_live, blocks, segs = {}, {}, {}, {}, {}
  for i = 1, ev.n do
    local op, addr = ev.op[i], ev.addr[i]
    local block = { addr = addr, size = ev.size[i], stream = ev.stream[i] }
    local function where(fmt, ...) bad(file, "record %d: " .. fmt, ev.record[i], ...) end
    if op == "alloc" then
      if live[addr] then where("alloc at 0x%x, which is live", addr) end
      live[addr] = true
    elseif op == "free" then
      if freed[addr] and not live[addr] then where("free of 0x%x, which is not live", addr) end
      if not freed[addr] and not live[addr] then blocks[#blocks + 1] = block end
      live[addr], freed[addr] = nil, true
    elseif op == "segment_alloc" then
      seg_live[addr] = true
    elseif op == "segment_free" then
      if not seg_live[addr] then segs[#segs + 1] = block end
      seg_live[addr] = nil
    end
  end
  local runs = {}   -- expandable segments at the end: mapped runs
  for _, seg in ipairs(segments) do
    local function where(fmt, ...) bad(file, "segment at the end: " .. fmt, ...) end
    local addr = int_field(seg, "address", where, 0)
    if seg.is_expandable == true then
      runs[#runs + 1] = { addr = addr, size = int_field(seg, "total_size", where, 0, M.max_size),
        stream = int_field(seg, "stream", where, math.mininteger),
        kind = seg.segment_type == "small" and "small" or "large" }
    elseif not seg_live[addr] then
      segs[#segs + 1] = { addr = addr, size = int_field(seg, "total_size", where, 0, M.max_size),
        stream = int_field(seg, "stream", where, math.mininteger),
        kind = type(seg.segment_type) == "string" and seg.segment_type or nil }
    end
    for _, b in ipairs(is_list(seg.blocks) and seg.blocks or {}) do
      if type(b) ~= "table" then where("a block is not a dict") end
      once(seen, b, where, "a block")
      if b.state == "active_allocated" and not live[b.address] then
        local size = math.type(b.requested_size) == "integer" and b.requested_size > 0 and "requested_size" or "size"
        blocks[#blocks + 1] = { addr = int_field(b, "address", where, 0),
          size = int_field(b, size, where, 0, M.max_size),
          stream = int_field(seg, "stream", where, math.mininteger) }
      end
    end
  end
  for _, r in ipairs(premapped(ev, runs)) do segs[#segs + 1] = r end
  for _, t in ipairs { blocks, segs } do
    table.sort(t, function(a, b) return a.addr < b.addr end)
  end
  return blocks, segs
end

-- Stream ids in order of first appearance: initial segments and blocks, then events.
local function streams_of(rec, ev)
  local seen, list = {}, {}
  local function see(s) if not seen[s] then seen[s] = true; list[#list + 1] = s end end
  for _, seg in ipairs(rec.initial_segments) do see(seg.stream) end
  for _, b in ipairs(rec.initial) do see(b.stream) end
  for i = 1, ev.n do see(ev.stream[i]) end
  return list
end

--- What the sibling NAME.stats.json (torch.cuda.memory_stats()) says, or nil.
function M.expected(path)
  local stats_path = path:gsub("%.gz$", ""):gsub("%.pickle$", "") .. ".stats.json"
  local f = io.open(stats_path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  local ok, stats = pcall(cjson.decode, text)
  if not ok or type(stats) ~= "table" then bad(basename(stats_path), "not a JSON object: %s", tostring(stats)) end
  for k, v in pairs(stats) do stats[k] = math.tointeger(v) or v end   -- cjson reads floats
  -- expandable segments: no cudaMalloc segments, map and unmap calls instead
  local mapped = stats["segment.all.allocated"] == 0 and (stats.num_device_alloc or 0) > 0
  return {
    peak_reserved = stats["reserved_bytes.all.peak"],
    final_reserved = stats["reserved_bytes.all.current"],
    peak_allocated = stats["allocated_bytes.all.peak"],
    final_allocated = stats["allocated_bytes.all.current"],
    segments_allocated = mapped and stats.num_device_alloc or stats["segment.all.allocated"],   -- since the process began
    segments_freed = mapped and stats.num_device_free or stats["segment.all.freed"],
    segments_current = stats["segment.all.current"],
    ooms = stats.num_ooms, alloc_retries = stats.num_alloc_retries,
    torch_version = stats.torch_version,
    stats = stats,
  }
end

local Recording = {}
Recording.__index = Recording

--- for op, addr, size, stream, t in rec:events() do ... end
function Recording:events()
  local ev, i = self._ev, 0
  local op, addr, size, stream, t = ev.op, ev.addr, ev.size, ev.stream, ev.t
  return function()
    i = i + 1
    if i <= ev.n then return op[i], addr[i], size[i], stream[i], t[i] end
  end
end

--- The Recording of the snapshot at path; opts.device picks a device.
function M.open(path, opts)
  assert(type(path) == "string", "poolsh.replay.torch.open: a file path expected")
  opts = opts or {}
  local file = basename(path)
  local snap = pickle.loads(M.read_bytes(path, file, opts), file)
  local seen = {}
  local dev, trace, segments = device_data(snap, opts, file, seen)
  local ev = events_of(trace, file, seen)
  local rec = setmetatable({ format = "torch", file = file, device = dev, count = ev.n, _ev = ev,
    allocator_settings = snap.allocator_settings, expected = M.expected(path) }, Recording)
  rec.initial, rec.initial_segments = initial_state(ev, segments, file, seen)
  rec.streams = streams_of(rec, ev)
  return rec
end

return M
