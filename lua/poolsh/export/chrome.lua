--- Chrome's trace-event JSON, for Perfetto (ui.perfetto.dev) and
-- chrome://tracing. One process (the device); a lane (tid) per stream with
-- kernels and copies as slices and allocs, frees, syncs as instants; a lane
-- per pool for its own events; a counter per pool ("p1 memory") with
-- reserved, used and pending bytes. ts are microseconds (event.t * 1000);
-- a slice starts when its stream's earlier work has ended (util.starts).
local util = require "poolsh.export.util"

local M = {}

local PID = 1
-- Device work without a known duration (cuda) still shows as a sliver.
M.default_dur_us = 10

-- Lanes: stream s -> 1 + s; pool p -> POOL_TID + p; the host's -> HOST_TID.
local POOL_TID, HOST_TID = 1000000, 999999

local function stream_tid(s) return 1 + s end

local function lane(ev)
  if math.type(ev.stream) == "integer" then return stream_tid(ev.stream) end
  if math.type(ev.pool) == "integer" then return POOL_TID + ev.pool end
  return HOST_TID
end

-- Every field but t and op, addresses as hex strings.
local function args_of(ev)
  local args = {}
  for k, v in pairs(ev) do
    if k ~= "t" and k ~= "op" and type(k) == "string" then
      local ty = type(v)
      if k == "addr" then args.addr = util.hex(v) or v
      elseif ty == "string" or ty == "number" or ty == "boolean" then args[k] = v end
    end
  end
  return args
end

local function event_of(ev, ts, start)
  local out = { name = util.label(ev), cat = tostring(ev.op), pid = PID, tid = lane(ev),
    ts = ts, args = args_of(ev) }
  if util.slice_ops[ev.op] then
    out.ph, out.ts = "X", start * 1000
    out.dur = (type(ev.dur) == "number" and ev.dur == ev.dur and ev.dur >= 0)
      and ev.dur * 1000 or M.default_dur_us
  else
    out.ph, out.s = "i", "t"
  end
  return out
end

local function meta_event(name, tid, args)
  return { ph = "M", name = name, pid = PID, tid = tid, ts = 0, args = args }
end

-- Names the process and every lane the events use, in a stable order.
local function lane_names(events, meta)
  local used = {}
  for id in pairs(meta.streams or {}) do
    if math.type(id) == "integer" then used[stream_tid(id)] = util.stream_name(meta, id) end
  end
  for _, ev in ipairs(events) do
    local tid = lane(ev)
    if not used[tid] then
      if tid == HOST_TID then used[tid] = "host"
      elseif tid >= POOL_TID then used[tid] = util.pool_name(meta, ev.pool) .. " (pool)"
      else used[tid] = util.stream_name(meta, ev.stream) end
    end
  end
  local dev = meta.device or {}
  local out = {
    meta_event("process_name", 0, { name = string.format("poolsh %s: %s",
      tostring(meta.backend or "?"), tostring(dev.name or ("device " .. tostring(dev.index or 0)))) }),
  }
  for _, tid in ipairs(util.ids(used)) do
    local name = used[tid]
    if tid == stream_tid(0) and not (meta.streams and meta.streams[0]) then
      name = "s0 (legacy default)"
    end
    out[#out + 1] = meta_event("thread_name", tid, { name = name })
    out[#out + 1] = meta_event("thread_sort_index", tid, { sort_index = tid })
  end
  return out
end

-- meta with its id-keyed maps as arrays, for JSON.
local function meta_json(meta)
  local pools, streams = util.array(), util.array()
  for _, id in ipairs(util.ids(meta.pools)) do pools[#pools + 1] = meta.pools[id] end
  for _, id in ipairs(util.ids(meta.streams)) do streams[#streams + 1] = meta.streams[id] end
  return { exporter = "poolsh", backend = meta.backend, device = meta.device,
    pools = pools, streams = streams }
end

--- The trace as a Lua table ready for JSON.
function M.build(events, meta)
  meta = meta or {}
  local ts = util.times(events)
  local starts = util.starts(events, ts, M.default_dur_us / 1000)
  local body = {}
  for i, ev in ipairs(events) do
    local e = event_of(ev, ts[i] * 1000, starts[i])
    body[#body + 1] = { ts = e.ts, order = #body, ev = e }
  end
  util.each_counter(events, function(_, pool, st, i)
    body[#body + 1] = { ts = ts[i] * 1000, order = #body,
      ev = { ph = "C", name = util.pool_name(meta, pool) .. " memory", cat = "memory",
        pid = PID, tid = POOL_TID + (math.tointeger(pool) or 0), ts = ts[i] * 1000, args = st } }
  end)
  -- Viewers want time order; ties keep the recorded order.
  table.sort(body, function(a, b)
    if a.ts ~= b.ts then return a.ts < b.ts end
    return a.order < b.order
  end)
  local trace = util.array(lane_names(events, meta))
  for _, b in ipairs(body) do trace[#trace + 1] = b.ev end
  return { traceEvents = trace, displayTimeUnit = "ms", metadata = meta_json(meta) }
end

--- The JSON text.
function M.encode(events, meta)
  return util.json(M.build(events, meta))
end

return M
