--- poolsh.trace: recording every operation as an event (docs/trace.md)
-- and saving the record in the formats people already open.
local core = require "poolsh.core"
local naming = require "poolsh.naming"

local trace = {}

--- Events kept in memory between two writes when streaming.
trace.stream_batch = 65536

-- Closes the stream when the state closes, if nothing saved it before.
local closer

-- trace.start{stream_to = path, batch = n}'s arguments to the core after
-- max_events: path, its header, the batch size.
local function stream_args(path, batch)
  local export = require "poolsh.export"
  local header = export.line_header(path)
  if not header then
    local lines = {}
    for ext in pairs(export.line_formats) do lines[#lines + 1] = "." .. ext end
    table.sort(lines)
    error(("poolsh.trace.start: stream_to must name a line format (%s), got '%s'")
      :format(table.concat(lines, ", "), path), 3)
  end
  closer = closer or setmetatable({}, { __gc = function() pcall(core.trace_save) end })
  return header, batch or trace.stream_batch
end

--- trace.start([opts]): records every operation from now on.
-- opts.max_events = N keeps only the newest N events (a ring); without it
-- (or 0) every event is kept. opts.stream_to = path (a .csv) writes the
-- events to path as the run goes, opts.batch (trace.stream_batch) at a
-- time, dropping them once written; trace.save(path) writes the rest.
-- Naming the path streamed to again with a batch sets the batch size.
function trace.start(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("poolsh.trace.start: options table expected ({max_events = N}), got " .. type(opts), 2)
  end
  local max = opts and opts.max_events
  if max ~= nil and (math.type(max) ~= "integer" or max < 0) then
    error("poolsh.trace.start: max_events must be a non-negative integer, got " .. tostring(max), 2)
  end
  local path, batch = opts and opts.stream_to, opts and opts.batch
  if path ~= nil and type(path) ~= "string" then
    error("poolsh.trace.start: stream_to must be a path (a string), got " .. type(path), 2)
  end
  if batch ~= nil and (math.type(batch) ~= "integer" or batch < 1) then
    error("poolsh.trace.start: batch must be a positive integer, got " .. tostring(batch), 2)
  end
  if batch ~= nil and not path then
    error("poolsh.trace.start: batch is the size of stream_to's writes: give stream_to too", 2)
  end
  if path and max and max > 0 then
    error("poolsh.trace.start: stream_to cannot be combined with max_events", 2)
  end
  local current = core.trace_streaming()
  if path and current and current ~= path then
    error(("poolsh.trace.start: already streaming to '%s'"):format(current), 2)
  end
  local ok, err
  if path and (not current or batch) then
    ok, err = pcall(core.trace_start, max or 0, path, stream_args(path, batch))
  else
    ok, err = pcall(core.trace_start, max or 0)
  end
  if not ok then error(err, 2) end
  trace.starts = trace.starts + 1
end

--- How many times trace.start started or changed a recording: whoever
-- started one can tell whether someone has started another since (the
-- live picture, poolsh.web.picture, leaves the user's recording alone).
trace.starts = 0

--- trace.record_to(path): starts recording for a save to path at the end
-- (--trace): streaming when path's format is a line format (.csv).
function trace.record_to(path)
  if require("poolsh.export").line_header(path) then
    trace.start { stream_to = path }
  else
    trace.start()
  end
end

--- trace.streaming() -> the path streamed to (nil: none), events written
-- to it so far, and the error that stopped the writes (nil: none).
function trace.streaming()
  local path, written, _, err = core.trace_streaming()
  return path, written, err
end
--- trace.stop(): stops recording; what was recorded stays.
trace.stop = core.trace_stop
--- trace.clear(): forgets what was recorded.
trace.clear = core.trace_clear
--- trace.recording() -> boolean.
trace.recording = core.trace_recording
--- trace.count() -> how many events are kept in memory (when streaming,
-- those not written yet).
function trace.count() return (core.trace_count()) end
--- trace.dropped() -> how many older events max_events let go since the last clear.
function trace.dropped() return select(2, core.trace_count()) end

local function worded(events)
  for _, e in ipairs(events) do
    if e.cause_op then
      e.cause = trace.cause(e.cause_op, e.cause_id)
      e.cause_op, e.cause_id = nil, nil
    end
  end
  return events
end

--- trace.cause(op, id) -> how a release's cause reads ("s1:sync()"); the
-- live view's release lines use it too.
trace.cause = require "poolsh.render.call"

--- trace.events([from [, to]]) -> array of event tables, oldest first.
function trace.events(from, to)
  return worded(core.trace_events(from, to))
end

--- Events read from C this many at a time by trace.each.
trace.batch = 8192

--- trace.each(fn): calls fn(event, i) for every event kept, oldest first,
-- reading them in batches so that only one batch is in memory at a time.
function trace.each(fn)
  local n, i = core.trace_count(), 0
  for from = 1, n, trace.batch do
    for _, e in ipairs(trace.events(from, math.min(n, from + trace.batch - 1))) do
      i = i + 1
      fn(e, i)
    end
  end
end

--- trace.meta([events]) -> {backend, device, pools, streams, names}: what the
-- events refer to, for the exporters. A pool's location and whether it
-- is the default pool come from its pool_create event, else from the live
-- Pool; names from poolsh.naming.
function trace.meta(events)
  local dev = core.device()
  local meta = {
    backend = core.backend(),
    device = { index = dev.index, name = dev.name, total = dev.total },
    pools = {}, streams = { [0] = { id = 0, name = naming.of("stream", 0) } },
    names = naming.all(),
  }
  local live = {}
  for _, p in ipairs((core.objects())) do live[p.id] = p end
  local function visit(e)
    local id = e.pool
    if id and (not meta.pools[id] or e.op == "pool_create") then
      local p = live[id]
      local loc, default = e.location, e.default
      if loc == nil then loc = p and p.location or "device" end
      if default == nil then default = p and p.default or false end
      meta.pools[id] = { id = id, name = naming.of("pool", id), device = dev.index,
                         location = loc, default = default }
    end
    if e.stream and not meta.streams[e.stream] then
      meta.streams[e.stream] = { id = e.stream, name = naming.of("stream", e.stream) }
    end
  end
  if events then
    for _, e in ipairs(events) do visit(e) end
  else -- the record's pools and streams, read in C (the same as walking it)
    local pools, streams = core.trace_objects()
    for id, flags in pairs(pools) do
      if flags then
        visit { op = "pool_create", pool = id, location = flags & 1 ~= 0 and "host" or "device",
                default = flags & 2 ~= 0 }
      else
        visit { pool = id }
      end
    end
    for id in pairs(streams) do visit { stream = id } end
  end
  return meta
end

--- trace.save(path) -> path, events saved: writes the record; the
-- extension picks the format: .json (Chrome trace events), .csv (RMM log),
-- .pickle (PyTorch memory snapshot), .html (a self-contained report). The
-- events are read in batches and the file written as it goes. The path
-- streamed to: writes the events kept and closes the file.
function trace.save(path)
  if type(path) ~= "string" then
    error("poolsh.trace.save: path expected (a string ending in .json, .csv, .pickle or .html)", 2)
  end
  if path == core.trace_streaming() then
    local ok, n = pcall(core.trace_save)
    if not ok then error(n, 2) end
    return path, n
  end
  local n = core.trace_count()
  local record = { count = n, csv = core.trace_csv, regions = core.trace_regions,
                   html = core.trace_html, json = core.trace_json,
                   pickle = core.trace_pickle, cause = trace.cause }
  return require("poolsh.export").save(path, trace.each, trace.meta(), record), n
end

return trace
