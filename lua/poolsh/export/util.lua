--- What the exporters share: an exact JSON encoder, names, lanes and the
-- pools' counters over time. Pure Lua; events follow docs/trace.md.
local M = {}

---------------------------------------------------------------------------
-- JSON. lua-cjson 2.1 rounds numbers to 14 digits (addresses, epoch
-- timestamps) and writes an empty array as {}; this encoder does neither.

local array_mt = { __name = "poolsh.export.array" }

--- Marks t as a JSON array (so an empty one encodes as []).
function M.array(t)
  return setmetatable(t or {}, array_mt)
end

local escapes = {
  ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
}

-- A JSON string literal; "</" becomes "<\/" so it is safe inside <script>.
local function quote(s)
  s = s:gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end)
  return '"' .. s:gsub("</", "<\\/") .. '"'
end

-- The shortest decimal that reads back as the same double.
local function number(n)
  if math.type(n) == "integer" then return string.format("%d", n) end
  if n ~= n or n == math.huge or n == -math.huge then return "null" end
  for digits = 15, 17 do
    local s = string.format("%." .. digits .. "g", n)
    if tonumber(s) == n then return s end
  end
end

--- Whether t is a sequence 1..#t with nothing else (an empty table is not).
function M.is_sequence(t)
  local n = #t
  if n == 0 then return false end
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end

local function is_array(t)
  return getmetatable(t) == array_mt or M.is_sequence(t)
end

local encode_value

local function encode_table(t, out, depth)
  if depth > 100 then error("poolsh.export: table nested too deeply (a cycle?)", 0) end
  if is_array(t) then
    out[#out + 1] = "["
    for i = 1, #t do
      if i > 1 then out[#out + 1] = "," end
      encode_value(t[i], out, depth + 1)
    end
    out[#out + 1] = "]"
    return
  end
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  out[#out + 1] = "{"
  for i, k in ipairs(keys) do
    if i > 1 then out[#out + 1] = "," end
    out[#out + 1] = quote(tostring(k))
    out[#out + 1] = ":"
    encode_value(t[k], out, depth + 1)
  end
  out[#out + 1] = "}"
end

function encode_value(v, out, depth)
  local ty = type(v)
  if ty == "string" then out[#out + 1] = quote(v)
  elseif ty == "number" then out[#out + 1] = number(v)
  elseif ty == "boolean" then out[#out + 1] = tostring(v)
  elseif ty == "table" then encode_table(v, out, depth)
  else out[#out + 1] = "null" end
end

--- v as JSON text: integers exact, keys sorted, nil/functions as null.
function M.json(v)
  local out = {}
  encode_value(v, out, 0)
  return table.concat(out)
end

---------------------------------------------------------------------------
-- Names.

--- "0x7f00..." for an address; nil for nil.
function M.hex(addr)
  if math.type(addr) ~= "integer" then return nil end
  return string.format("0x%x", addr)
end

--- The pool's name from meta, else "p<id>".
function M.pool_name(meta, id)
  local p = meta and meta.pools and meta.pools[id]
  return (p and p.name) or ("p" .. tostring(id))
end

--- The stream's name from meta, else "s<id>".
function M.stream_name(meta, id)
  local s = meta and meta.streams and meta.streams[id]
  return (s and s.name) or ("s" .. tostring(id))
end

--- The ids of a table keyed by id (meta.pools, meta.streams), sorted.
function M.ids(map)
  local ids = {}
  for id in pairs(map or {}) do ids[#ids + 1] = id end
  table.sort(ids, function(a, b) return tostring(a) < tostring(b) end)
  if #ids > 0 and math.type(ids[1]) == "integer" then table.sort(ids) end
  return ids
end

--- Device work that occupies a stream for `dur`: drawn as slices.
M.slice_ops = { fill = true, touch = true, verify = true, spin = true, copy = true }

--- A short label for an event: "alloc b7", "copy b2 -> b5", "wait e3".
function M.label(ev)
  local op = tostring(ev.op)
  if op == "copy" and (ev.dst or ev.src_buffer) then
    return string.format("copy b%s -> b%s", tostring(ev.src_buffer), tostring(ev.dst))
  elseif ev.buffer then
    return op .. " b" .. tostring(ev.buffer)
  elseif ev.event and (op == "record" or op == "wait" or op == "event_sync") then
    return op .. " e" .. tostring(ev.event)
  elseif ev.pool and not ev.stream then
    return op .. " p" .. tostring(ev.pool)
  end
  return op
end

--- When each slice starts, by index: device work on a stream runs in
-- stream order, so a slice starts at the later of its call time and the end
-- of the stream's previous slice (waits on events are not modelled).
function M.starts(events, ts, default_ms)
  local starts, busy = {}, {}
  for i, ev in ipairs(events) do
    if M.slice_ops[ev.op] then
      local s = ev.stream or "?"
      local start = math.max(ts[i], busy[s] or ts[i])
      local dur = (type(ev.dur) == "number" and ev.dur == ev.dur and ev.dur >= 0) and ev.dur
        or default_ms
      starts[i], busy[s] = start, start + dur
    end
  end
  return starts
end

---------------------------------------------------------------------------
-- Counters.

local counter_fields = { "reserved", "used", "pending" }

--- Walks events and calls fn(ev, pool, state, i) after each event that moves
-- a pool's counters; state = {reserved=, used=, pending=} in bytes. Events
-- carry the counters after the operation; fields they lack keep their last
-- value, except that free_completed without counters takes its size off
-- pending (the recorder says the queued free finished).
function M.each_counter(events, fn)
  local states = {}
  for i, ev in ipairs(events) do
    local pool = ev.pool
    if pool ~= nil then
      local st = states[pool]
      if not st then
        st = { reserved = 0, used = 0, pending = 0 }
        states[pool] = st
      end
      local moved = false
      for _, f in ipairs(counter_fields) do
        if math.type(ev[f]) then st[f] = ev[f]; moved = true end
      end
      if ev.op == "free_completed" and ev.pending == nil and math.type(ev.size) then
        st.pending = math.max(0, st.pending - ev.size)
        moved = true
      end
      if moved then
        fn(ev, pool, { reserved = st.reserved, used = st.used, pending = st.pending }, i)
      end
    end
  end
end

--- Milliseconds of an event; events without t take the previous one's.
function M.times(events)
  local ts, last = {}, 0
  for i, ev in ipairs(events) do
    if type(ev.t) == "number" and ev.t == ev.t then last = ev.t end
    ts[i] = last
  end
  return ts
end

return M
