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

--- s with each byte that is not UTF-8 (Lua's strict utf8.len: no overlong
-- forms, surrogates or code points past U+10FFFF) replaced by `with`.
function M.valid_utf8(s, with)
  if utf8.len(s) then return s end
  local out, i = {}, 1
  while true do
    local ok, bad = utf8.len(s, i)
    if ok then out[#out + 1] = s:sub(i); break end
    out[#out + 1] = s:sub(i, bad - 1)
    out[#out + 1] = with
    i = bad + 1
  end
  return table.concat(out)
end

-- A JSON string literal; "<" becomes "\u003c", so that no value can end
-- a <script> element or open a comment or a script inside it; controls
-- are escaped and bytes that are not UTF-8 become U+FFFD, so the text is
-- valid JSON whatever a name holds (src/trace.c's quote too).
local function quote(s)
  if not s:find('[%c"\\<\128-\255]') then return '"' .. s .. '"' end
  s = s:gsub('[%c"\\<]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end)
  return '"' .. M.valid_utf8(s, "\\ufffd") .. '"'
end

-- The shortest decimal that reads back as the same double.
local function number(n)
  if math.type(n) == "integer" then return tostring(n) end
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

M.quote, M.number = quote, number

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

--- A short label for an event: "alloc b7", "copy b2 -> b5", "wait e3";
-- objects named in meta.names (poolsh.naming.all()) by their names.
-- names[kind][id], else letter .. id (M.label's objects).
local function obj(names, kind, letter, id)
  local of = names[kind]
  return of and of[id] or (letter .. tostring(id))
end

local no_names = {}

function M.label(ev, meta)
  local names = meta and meta.names or no_names
  local op = tostring(ev.op)
  if op == "copy" and (ev.dst or ev.src_buffer) then
    return "copy " .. obj(names, "buffer", "b", ev.src_buffer) .. " -> " .. obj(names, "buffer", "b", ev.dst)
  elseif ev.buffer then
    return op .. " " .. obj(names, "buffer", "b", ev.buffer)
  elseif ev.range then
    local s = op .. " " .. obj(names, "range", "r", ev.range)
    if op == "vmm_map" and ev.memory then s = s .. " " .. obj(names, "memory", "m", ev.memory) end
    return s
  elseif ev.memory then
    return op .. " " .. obj(names, "memory", "m", ev.memory)
  elseif ev.event and (op == "record" or op == "wait" or op == "event_sync") then
    return op .. " " .. obj(names, "event", "e", ev.event)
  elseif ev.pool and not ev.stream then
    return op .. " " .. obj(names, "pool", "p", ev.pool)
  end
  return op
end

local function real(v) return type(v) == "number" and v == v and v >= 0 end

--- A function(ev, t) -> start, dur (ms) of a slice (device work), nil for
-- other events. The recorder gives device work its start and dur (the sim
-- always; docs/trace.md); an event without them starts at the later of its
-- call time t and the end of its stream's previous slice, and lasts dur or
-- default_ms.
function M.slicer(default_ms)
  local busy = {}
  return function(ev, t)
    if not M.slice_ops[ev.op] then return nil end
    local s = ev.stream or "?"
    local start = real(ev.start) and ev.start or math.max(t, busy[s] or t)
    local dur = real(ev.dur) and ev.dur or default_ms
    busy[s] = math.max(busy[s] or start, start + dur)
    return start, dur
  end
end

--- When each slice starts, by index (M.slicer over an array).
function M.starts(events, ts, default_ms)
  local starts, slice = {}, M.slicer(default_ms)
  for i, ev in ipairs(events) do starts[i] = slice(ev, ts[i]) end
  return starts
end

---------------------------------------------------------------------------
-- Counters.

local mtype = math.type

--- Walks events and calls fn(ev, pool, state, i) after each event that moves
-- a pool's counters; state = {reserved=, used=, pending=} in bytes. Events
-- carry the counters after the operation; fields they lack keep their last
-- value, except that free_completed without counters takes its size off
-- pending (the recorder says the queued free finished).
function M.each_counter(events, fn)
  local counter = M.counter()
  for i, ev in ipairs(events) do
    local st = counter(ev)
    if st then fn(ev, ev.pool, st, i) end
  end
end

--- A function(ev) -> {reserved=, used=, pending=} after ev when ev moves
-- its pool's counters, else nil (M.each_counter, one event at a time).
function M.counter()
  local states = {}
  return function(ev)
    local pool = ev.pool
    if pool == nil then return nil end
    local st = states[pool]
    if not st then
      st = { reserved = 0, used = 0, pending = 0 }
      states[pool] = st
    end
    local moved = false
    local reserved, used, pending = ev.reserved, ev.used, ev.pending
    if mtype(reserved) then st.reserved = reserved; moved = true end
    if mtype(used) then st.used = used; moved = true end
    if mtype(pending) then st.pending = pending; moved = true end
    if ev.op == "free_completed" and ev.pending == nil and math.type(ev.size) then
      st.pending = math.max(0, st.pending - ev.size)
      moved = true
    end
    if moved then return { reserved = st.reserved, used = st.used, pending = st.pending } end
  end
end

--- A function(ev) -> ev's ms; events without t take the previous one's.
function M.clock()
  local last = 0
  return function(ev)
    if type(ev.t) == "number" and ev.t == ev.t then last = ev.t end
    return last
  end
end

--- Milliseconds of each event, by index (M.clock over an array).
function M.times(events)
  local ts, clock = {}, M.clock()
  for i, ev in ipairs(events) do ts[i] = clock(ev) end
  return ts
end


---------------------------------------------------------------------------
-- Source paths. Sites are recorded as Lua gives them: the script's path
-- as it was run (absolute when run by absolute path), or its tail after
-- "..." when longer than Lua keeps. Pages show them relative.

--- The script the trace came from: meta.script, else the first argument
-- ending in .lua; nil when none.
function M.script(meta)
  if meta and type(meta.script) == "string" then return meta.script end
  if type(_G.arg) ~= "table" then return nil end
  for i = 0, #_G.arg do
    local a = _G.arg[i]
    if type(a) == "string" and a:match("%.lua$") then return a end
  end
end

--- The directory of the script the trace came from: meta.script_dir, else
-- meta.script's directory, else that of the first argument ending in .lua
-- (arg[0] for `poolsh script.lua`, the file `poolsh run FILE.lua` names);
-- nil when none is known.
function M.script_dir(meta)
  if meta and type(meta.script_dir) == "string" then return (meta.script_dir:gsub("/+$", "")) end
  local script = M.script(meta)
  if not script then return nil end
  return script:match("^(.*)/[^/]*$") or "."
end

-- Whether s is a path that names this machine's files: absolute, "~/"
-- or Lua's shortened "...tail".
local function machine_path(s)
  return s:sub(1, 1) == "/" or s:sub(1, 3) == "..." or s:sub(1, 2) == "~/"
end

--- path ("/abs/dir/x.lua:12", ".../dir/x.lua:12", "x.lua:12") as the page
-- shows it: relative to dir (the script's directory) when under it (a
-- shortened path when its tail ends as dir does); poolsh's own Lua files
-- from "poolsh/"; any other absolute path by its file name. Never an
-- absolute path.
function M.relative_path(path, dir)
  if type(path) ~= "string" or not machine_path(path) then return path end
  if dir and dir ~= "" and dir ~= "." then
    local d = dir .. "/"
    local rest = path:sub(1, #d) == d and path:sub(#d + 1)
    if rest and not machine_path(rest) then return rest end
    if path:sub(1, 3) == "..." then
      local tail = path:sub(4)
      -- the longest start of tail (Lua cuts mid-name) that is an end of d
      for k = math.min(#d, #tail), 1, -1 do
        if k >= 2 and d:sub(-k) == tail:sub(1, k) and tail:sub(1, k):find("[^/]") then
          if not machine_path(tail:sub(k + 1)) then return tail:sub(k + 1) end
          break
        end
      end
    end
  end
  local own = path:match("/lua/(poolsh/.*)$") or path:match("^%.%.%.(poolsh/.*)$") or path:match("/(poolsh/[^/]+%.lua.*)$")
    or path:match("/(poolsh/[%w_]+/[^/]+%.lua.*)$")
  if own then return own end
  return path:match("([^/]*)$")
end

--- text with every word that is a machine path (starts with "/", "~/" or
-- "...") written as M.relative_path writes it: for messages and
-- tracebacks shown in a page.
function M.relative_paths(text, dir)
  if type(text) ~= "string" then return text end
  return (text:gsub("([^%s\"'()%[%]<>=,]+)", function(w)
    if machine_path(w) and w:find("/", 2, true) then return M.relative_path(w, dir) end
  end))
end

---------------------------------------------------------------------------
-- Writing.

--- A writer for f: out(s) queues s and writes the queue to f once it holds
-- a MiB; out() writes what is queued. Raises naming path when f:write fails.
function M.writer(f, path)
  local buf, n, size = {}, 0, 0
  local function write(s)
    local ok, err = f:write(s)
    if not ok then error(string.format("poolsh.export.save: cannot write '%s': %s", path, err), 0) end
  end
  local function flush()
    if n == 0 then return end
    write(n == 1 and buf[1] or table.concat(buf, "", 1, n))
    buf, n, size = {}, 0, 0
  end
  return function(s)
    if s == nil then return flush() end
    if #s >= 1048576 then           -- a chunk already: written as it is, not copied
      flush()
      return write(s)
    end
    n = n + 1
    buf[n] = s
    size = size + #s
    if size >= 1048576 then flush() end
  end
end

--- A writer that keeps everything: out(s) appends, text() -> the string.
function M.collector()
  local buf, n = {}, 0
  return function(s) if s then n = n + 1; buf[n] = s end end,
         function() return table.concat(buf, "", 1, n) end
end

return M
