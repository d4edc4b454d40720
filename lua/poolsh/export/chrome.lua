--- Chrome's trace-event JSON, for Perfetto (ui.perfetto.dev) and
-- chrome://tracing. One process (the device); a lane (tid) per stream with
-- kernels and copies as slices and allocs, frees, syncs as instants; a lane
-- per pool for its own events; a counter per pool ("p1 memory") with
-- reserved, used and pending bytes. ts are microseconds (event.t * 1000);
-- a slice is drawn from the event's start for its dur (util.slicer).
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

local quote, number = util.quote, util.number

local function scalar(v)
  local ty = type(v)
  if ty == "string" then return quote(v) end
  if ty == "number" then return number(v) end
  if ty == "boolean" then return tostring(v) end
end

local key_json = setmetatable({}, { __index = function(t, k)
  local v = quote(k) .. ":"
  t[k] = v
  return v
end })

local mtype, format, sort = math.type, string.format, table.sort

-- Every field but t and op as a JSON object, its keys in byte order (a
-- fixed order: docs/export.md), the address as a hex string. src/trace.c's
-- trace_json writes the same from the records.
local function args_json(ev)
  local keys, nk = {}, 0
  for k in pairs(ev) do
    if k ~= "t" and k ~= "op" and type(k) == "string" then nk = nk + 1; keys[nk] = k end
  end
  sort(keys)
  local parts, n = { "{" }, 1
  for i = 1, nk do
    local k = keys[i]
    local v = ev[k]
    local ty, text = type(v), nil
    if ty == "number" then
      if mtype(v) ~= "integer" then text = number(v)
      elseif k == "addr" then text = format('"0x%x"', v)
      else text = tostring(v) end
    elseif ty == "string" then
      text = quote(v)
    elseif ty == "boolean" then
      text = v and "true" or "false"
    end
    if text then
      parts[n + 1], parts[n + 2], parts[n + 3] = n > 1 and "," or "", key_json[k], text
      n = n + 3
    end
  end
  parts[n + 1] = "}"
  return table.concat(parts)
end

-- Microseconds, to the nanosecond.
local function us(ms) return string.format("%.3f", ms * 1000) end

-- '"cat":<op>,"pid":1,"tid":' by op: the same for every event of an op.
local cat_json = setmetatable({}, { __index = function(t, op)
  local v = string.format('"cat":%s,"pid":%d,"tid":', quote(op), PID)
  t[op] = v
  return v
end })

-- One trace event's JSON: a slice for device work (start and dur in ms),
-- else a thread instant at t. ts and dur are us()'s "%.3f" of µs.
local function event_json(ev, t, start, dur, meta)
  local head = '{"name":' .. quote(util.label(ev, meta)) .. "," .. cat_json[tostring(ev.op)] .. lane(ev) .. ","
  local tail = ',"args":' .. args_json(ev) .. "}"
  if start then
    return head .. format('"ph":"X","ts":%.3f,"dur":%.3f', start * 1000, dur * 1000) .. tail
  end
  return head .. format('"ph":"i","s":"t","ts":%.3f', t * 1000) .. tail
end

-- A function(pool, t, st) -> the pool's counter event at t; each pool's
-- name and lane formatted once.
local function counter_head(meta, pool)
  return format('{"ph":"C","name":%s,"cat":"memory","pid":%d,"tid":%d,"ts":',
    quote(util.pool_name(meta, pool) .. " memory"), PID, POOL_TID + (math.tointeger(pool) or 0))
end

local function counter_writer(meta)
  local heads = {}
  return function(pool, t, st)
    local head = heads[pool]
    if not head then
      head = counter_head(meta, pool)
      heads[pool] = head
    end
    return head .. format('%.3f,"args":{"pending":%d,"reserved":%d,"used":%d}}', t * 1000,
      st.pending, st.reserved, st.used)
  end
end

local function meta_event(name, tid, args)
  return { ph = "M", name = name, pid = PID, tid = tid, ts = 0, args = args }
end

-- Names the process and every lane used (used: tid -> name), in a stable order.
local function lane_names(used, meta)
  for id in pairs(meta.streams or {}) do
    if math.type(id) == "integer" then used[stream_tid(id)] = util.stream_name(meta, id) end
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

--- Writes the trace's JSON with out(string), one event at a time, in the
-- recorded order (viewers sort by ts); the lanes' names come last.
function M.write(out, each, meta, record)
  meta = meta or {}
  local clock, slice, counter = util.clock(), util.slicer(M.default_dur_us / 1000), util.counter()
  local used, first, counter_json = {}, true, counter_writer(meta)
  out('{"displayTimeUnit":"ms","metadata":' .. util.json(meta_json(meta)) .. ',"traceEvents":[')
  local function put(s)
    if first then first = false else s = "," .. s end
    out(s)
  end
  if record then
    -- poolsh's own record: the rows from the records in C, a MiB at a time
    -- (the same bytes: tests/spec/formats_spec.lua); heads[pool] is the
    -- start of its counter events.
    local heads = {}
    for id in pairs(meta.pools or {}) do
      if mtype(id) == "integer" then heads[id] = counter_head(meta, id) end
    end
    local names = type(meta.names) == "table" and meta.names or {}
    local lanes = {}
    if record.json(names, heads, lanes, record.cause, out, M.default_dur_us / 1000) then first = false end
    for tid in pairs(lanes) do
      if tid == HOST_TID then used[tid] = "host"
      elseif tid >= POOL_TID then used[tid] = util.pool_name(meta, tid - POOL_TID) .. " (pool)"
      else used[tid] = util.stream_name(meta, tid - 1) end
    end
    each = function() end
  end
  each(function(ev)
    local t = clock(ev)
    local start, dur = slice(ev, t)
    put(event_json(ev, t, start, dur, meta))
    local tid = lane(ev)
    if not used[tid] then
      if tid == HOST_TID then used[tid] = "host"
      elseif tid >= POOL_TID then used[tid] = util.pool_name(meta, ev.pool) .. " (pool)"
      else used[tid] = util.stream_name(meta, ev.stream) end
    end
    local st = counter(ev)
    if st then put(counter_json(ev.pool, t, st)) end
  end)
  for _, m in ipairs(lane_names(used, meta)) do put(util.json(m)) end
  out("]}")
end

--- The JSON text.
function M.encode(events, meta)
  return require("poolsh.export").to_string("json", events, meta)
end

return M
