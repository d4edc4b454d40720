--- poolsh.trace: recording every operation as an event (docs/trace.md)
-- and saving the record in the formats people already open.
local core = require "poolsh.core"

local trace = {}

--- trace.start(): records every operation from now on.
trace.start = core.trace_start
--- trace.stop(): stops recording; what was recorded stays.
trace.stop = core.trace_stop
--- trace.clear(): forgets what was recorded.
trace.clear = core.trace_clear
--- trace.recording() -> boolean.
trace.recording = core.trace_recording
--- trace.count() -> how many events are recorded.
trace.count = core.trace_count

-- How a release's cause reads, by the cause's op: the call a user wrote.
local cause_call = {
  stream_sync = function(id)
    return id == 0 and "poolsh.default_stream():sync()" or ("s%d:sync()"):format(id)
  end,
  event_sync = "e%d:sync()", trim = "p%d:trim()", verify = "poolsh.verify(b%d)",
  read = "b%d:read()", write = "b%d:write()", free = "b%d:free()",
  stream_destroy = "s%d:destroy()", device_sync = "poolsh.sync()",
}

--- trace.events([from [, to]]) -> array of event tables, oldest first.
function trace.events(from, to)
  local events = core.trace_events(from, to)
  for _, e in ipairs(events) do
    if e.cause_op then
      local call = cause_call[e.cause_op] or "poolsh.sync()"
      e.cause = type(call) == "function" and call(e.cause_id) or call:format(e.cause_id)
      e.cause_op, e.cause_id = nil, nil
    end
  end
  return events
end

--- trace.meta([events]) -> {backend, device, pools, streams}: what the
-- events refer to, for the exporters.
function trace.meta(events)
  events = events or trace.events()
  local dev = core.device()
  local meta = {
    backend = core.backend(),
    device = { index = dev.index, name = dev.name, total = dev.total },
    pools = {}, streams = { [0] = { id = 0, name = "default" } },
  }
  for _, e in ipairs(events) do
    if e.pool and not meta.pools[e.pool] then
      meta.pools[e.pool] = { id = e.pool, name = "p" .. e.pool, device = dev.index,
                             location = "device", default = false }
    end
    if e.stream and not meta.streams[e.stream] then
      meta.streams[e.stream] = { id = e.stream, name = "s" .. e.stream }
    end
  end
  return meta
end

--- trace.save(path) -> path: writes the record; the extension picks the
-- format: .json (Chrome trace events), .csv (RMM log), .pickle (PyTorch
-- memory snapshot), .html (a self-contained report).
function trace.save(path)
  if type(path) ~= "string" then
    error("poolsh.trace.save: path expected (a string ending in .json, .csv, .pickle or .html)", 2)
  end
  local events = trace.events()
  return require("poolsh.export").save(path, events, trace.meta(events))
end

return trace
