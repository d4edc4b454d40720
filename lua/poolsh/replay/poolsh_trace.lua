--- poolsh.replay.poolsh_trace: a poolsh .json trace (Chrome trace events,
-- docs/export.md) as a Recording (docs/replay.md). poolsh's .csv traces
-- are RMM logs: poolsh.replay.rmm reads them.
--
-- The device memory's alloc, free, free_completed and alloc_failed events
-- are replayed (pool buffers of device pools, and malloc buffers); host
-- memory is left out. The file is read whole. A trace that starts
-- mid-run (poolsh.trace.start{max_events = N}) frees blocks it never
-- allocated: those are the recording's initial blocks.
local M = {}

local OPS = { alloc = true, free = true, free_completed = true, alloc_failed = true }
local DEVICE_KINDS = { pool = true, malloc = true }

local function basename(path) return (path:match("([^/]+)$") or path) end

-- The JSON document in path, or a one-line error.
local function decode(path, file)
  local f, err = io.open(path, "rb")
  if not f then error(("poolsh.replay: cannot open %s"):format(err), 0) end
  local text = f:read("a")
  f:close()
  local ok, doc = pcall(require("cjson").decode, text)
  if not ok then error(("%s: record 0: not JSON: %s"):format(file, tostring(doc)), 0) end
  local meta = type(doc) == "table" and doc.metadata
  if type(meta) ~= "table" or meta.exporter ~= "poolsh" or type(doc.traceEvents) ~= "table" then
    error(("%s: record 0: not a poolsh trace (no traceEvents with metadata.exporter = \"poolsh\")"):format(file), 0)
  end
  return doc
end

-- The ids of the trace's host pools (set).
local function host_pools(meta)
  local host = {}
  for _, p in ipairs(type(meta.pools) == "table" and meta.pools or {}) do
    if type(p) == "table" and p.location == "host" then host[p.id] = true end
  end
  return host
end

-- An integer from a JSON value (a number or a hex string), or nil.
local function int(v)
  if type(v) == "string" then return math.tointeger(tonumber(v)) end
  return math.tointeger(v)
end

-- Whether trace event ev is device memory this reader replays.
local function wanted(ev, host)
  if type(ev) ~= "table" or not OPS[ev.cat] or type(ev.args) ~= "table" then return false end
  local a = ev.args
  if a.kind ~= nil and not DEVICE_KINDS[a.kind] then return false end
  if a.imported then return false end   -- another process's memory (docs/ipc.md)
  return not host[a.pool]
end

-- Appends trace event ev to the columns, checking it. Records are
-- numbered among the events replayed, as the engine numbers them.
local function add(r, file, ev)
  local a = ev.args
  local k = #r.ops + 1
  local op, addr, size = ev.cat, int(a.addr) or 0, int(a.size)
  if not size or size < 0 then
    error(("%s: record %d: %s without a size of whole bytes"):format(file, k, op), 0)
  end
  local stream = int(a.stream) or 0
  r.ops[k], r.addrs[k], r.sizes[k], r.stream_ids[k] = op, addr, size, stream
  r.ts[k] = tonumber(ev.ts)
  if not r.seen[stream] then r.seen[stream] = true; r.streams[#r.streams + 1] = stream end
end

-- Blocks freed before being allocated in the trace: the initial ones.
local function initial(r, file)
  local live, init, was = {}, {}, {}
  for k, op in ipairs(r.ops) do
    local addr = r.addrs[k]
    if op == "alloc" then live[addr] = true
    elseif op == "free" then
      if live[addr] then live[addr] = nil
      elseif was[addr] then error(("%s: record %d: free of 0x%x, which is not allocated"):format(file, k, addr), 0)
      else
        was[addr] = true
        init[#init + 1] = { addr = addr, size = r.sizes[k], stream = r.stream_ids[k] }
      end
    end
  end
  table.sort(init, function(x, y) return x.addr < y.addr end)
  return init
end

local R = {}
R.__index = R

--- for op, addr, size, stream, t in rec:events() do ... end
function R:events()
  local ops, addrs, sizes, streams, ts, t0 = self.ops, self.addrs, self.sizes, self.stream_ids, self.ts, self.ts[1]
  local i = 0
  return function()
    i = i + 1
    local op = ops[i]
    if op == nil then return nil end
    return op, addrs[i], sizes[i], streams[i], ts[i] and t0 and ts[i] - t0
  end
end

--- open(path) -> a Recording of the trace's device memory events.
function M.open(path)
  local file = basename(path)
  local doc = decode(path, file)
  local host = host_pools(doc.metadata)
  local r = { ops = {}, addrs = {}, sizes = {}, stream_ids = {}, ts = {}, seen = {}, streams = {} }
  for _, ev in ipairs(doc.traceEvents) do
    if wanted(ev, host) then add(r, file, ev) end
  end
  local rec = setmetatable({
    format = "poolsh", file = file, streams = r.streams, count = #r.ops,
    ops = r.ops, addrs = r.addrs, sizes = r.sizes, stream_ids = r.stream_ids, ts = r.ts,
  }, R)
  rec.initial = initial(r, file)
  return rec
end

return M
