--- A PyTorch CUDA memory snapshot (the dict torch.cuda.memory._snapshot()
-- returns), pickled, so PyTorch's viewers open a poolsh trace:
--   python -m torch.cuda._memory_viz trace_plot run.pickle -o run.html
-- or drag run.pickle onto https://pytorch.org/memory_viz.
--
-- {segments = [segment...], device_traces = [[entry...]]}: the segments are
-- the state at the end of the trace; device_traces[device] replays it with
-- actions alloc, free_requested, free_completed, segment_alloc,
-- segment_free (and oom for alloc_failed).
--
-- Approximations (docs/export.md says more): PyTorch's segments are
-- cudaMalloc'd regions; a poolsh pool's reserve events give its regions.
-- Release events carry no address, so a release frees the newest regions
-- without live blocks until its size is covered (all of them when the pool's
-- reserved drops to 0), completing the queued frees inside first. A reserve recorded just after the alloc that caused
-- it opens its region at that alloc. Allocations outside every reserved
-- region (reserve events without addresses) get one derived region per pool:
-- the span of those buffers, at least the pool's peak reserved. A buffer whose address is reused before its
-- free_completed was recorded is completed just before the reuse.
local pickle = require "poolsh.export.pickle"
local util = require "poolsh.export.util"

local M = {}

local L = pickle.list

--- [{filename=, line=, name=}] for "script.lua:12" (name: the op). The
-- same src and op give the same table (the writer keeps its pickle).
function M.frames(src, op)
  if type(src) ~= "string" or src == "" then return L() end
  local key = src .. "\0" .. tostring(op)
  local f = M.frames_of[key]
  if f then return f end
  local file, line = src:match("^(.*):(%d+)$")
  f = L { { filename = file or src, line = math.tointeger(tonumber(line)) or 0,
    name = tostring(op or "?") } }
  M.frames_of[key] = f
  return f
end

-- M.frames's tables by src and op; let go by the collector.
M.frames_of = setmetatable({}, { __mode = "v" })

-- A trace entry's pickle: the bytes pickle.value writes for Replay:entry's
-- table (a dict, its keys sorted), with each key's and each frames
-- table's bytes made once.
local function entry_writer()
  local bytes, key = pickle.bytes, {}
  for _, k in ipairs { "action", "addr", "device_free", "frames", "size", "stream", "time_us" } do
    key[k] = bytes(k)
  end
  local actions = setmetatable({}, { __index = function(t, a)
    t[a] = bytes(a)
    return t[a]
  end })
  local framed = setmetatable({}, { __mode = "k" })
  local op = pickle.op
  local head, tail = op.empty_dict .. op.mark .. key.action, op.setitems
  return function(e)
    local f = framed[e.frames]
    if not f then
      f = bytes(e.frames)
      framed[e.frames] = f
    end
    return head .. actions[e.action] .. (e.addr ~= nil and key.addr .. bytes(e.addr) or "")
      .. (e.device_free ~= nil and key.device_free .. bytes(e.device_free) or "")
      .. key.frames .. f .. key.size .. bytes(e.size) .. key.stream .. bytes(e.stream)
      .. key.time_us .. bytes(e.time_us) .. tail
  end
end

local function int(v) return math.tointeger(v) or 0 end

local function inside(addr, size, r)
  return addr >= r.addr and addr + size <= r.addr + r.size
end

local function overlaps(a, asize, b, bsize)
  return a < b + bsize and b < a + asize
end

local function is_host(ev)
  return ev.pool == nil and (ev.kind == "pinned" or ev.kind == "pageable")
end

-- Per pool: the regions reserve events give, and the span of the buffers
-- outside all of them (nil when none), at least the pool's peak reserved.
local function prepass(each)
  local reserved, hull, peak = {}, {}, {}
  each(function(ev)
    if ev.pool ~= nil and math.type(ev.reserved) then
      peak[ev.pool] = math.max(peak[ev.pool] or 0, ev.reserved)
    end
    if ev.op == "reserve" and ev.pool ~= nil and math.type(ev.addr) and math.type(ev.size) then
      local list = reserved[ev.pool] or {}
      list[#list + 1] = { addr = ev.addr, size = ev.size }
      reserved[ev.pool] = list
    end
  end)
  each(function(ev)
    if ev.op == "alloc" and ev.pool ~= nil and math.type(ev.addr) and math.type(ev.size) then
      local covered = false
      for _, r in ipairs(reserved[ev.pool] or {}) do
        if overlaps(ev.addr, ev.size, r.addr, r.size) then covered = true; break end
      end
      if not covered then
        local h = hull[ev.pool]
        if not h then
          hull[ev.pool] = { lo = ev.addr, hi = ev.addr + ev.size }
        else
          h.lo, h.hi = math.min(h.lo, ev.addr), math.max(h.hi, ev.addr + ev.size)
        end
      end
    end
  end)
  for pool, h in pairs(hull) do
    if not reserved[pool] then h.hi = math.max(h.hi, h.lo + (peak[pool] or 0)) end
  end
  return hull, reserved
end

-- The replay: trace entries plus the live regions and buffers at the end.
local Replay = {}
Replay.__index = Replay

local function new_replay(each, meta, record)
  local dev = meta.device or {}
  local reserved, hull
  if record and record.pickle then reserved, hull = {}, {}
  elseif record then reserved, hull = record.regions() else hull, reserved = prepass(each) end
  return setmetatable({ pools = {}, buffers = {}, completed = {}, order = 0,
    live = {}, freeing = {},
    hull = hull, reserved = reserved, total = math.tointeger(dev.total) }, Replay)
end

-- Buffers are also kept by pool and state, so that an alloc or a release
-- looks only at its own pool's buffers in the state it asks about:
-- self.live[pool] (allocated) and self.freeing[pool] (free pending), each
-- key -> buffer. set_state moves a buffer between them (nil: gone).
function Replay:set_state(key, b, state)
  local by = b.state == "active_allocated" and self.live or self.freeing
  if by[b.pool] then by[b.pool][key] = nil end
  if state == nil then
    self.buffers[key] = nil
    return
  end
  b.state = state
  by = state == "active_allocated" and self.live or self.freeing
  local set = by[b.pool]
  if not set then set = {}; by[b.pool] = set end
  set[key] = b
  self.buffers[key] = b
end

-- The keys of set's buffers that overlap [addr, addr + size), by address
-- (then key), so that several are completed in a stable order.
local function overlapping(set, addr, size)
  local keys = {}
  for key, b in pairs(set or {}) do
    if overlaps(b.addr, b.size, addr, size) then keys[#keys + 1] = key end
  end
  if #keys > 1 then
    table.sort(keys, function(a, b)
      local x, y = set[a], set[b]
      if x.addr ~= y.addr then return x.addr < y.addr end
      return tostring(a) < tostring(b)
    end)
  end
  return keys
end

-- A trace entry, handed to self.emit (which writes it, or keeps it).
function Replay:entry(action, addr, size, stream, frames, t, device_free)
  self.emit { action = action, addr = action ~= "oom" and int(addr) or nil, size = int(size),
    stream = int(stream), frames = frames or L(), time_us = math.floor(t * 1000 + 0.5),
    device_free = device_free }
end

function Replay:pool(id)
  local p = self.pools[id]
  if not p then
    p = { regions = {} }
    self.pools[id] = p
  end
  return p
end

function Replay:add_region(pool, addr, size, stream, t)
  self.order = self.order + 1
  local p = self:pool(pool)
  p.regions[#p.regions + 1] = { addr = addr, size = size, stream = stream or 0, order = self.order }
  self:entry("segment_alloc", addr, size, stream, nil, t)
end

function Replay:drop_region(pool, i, t)
  local r = table.remove(self.pools[pool].regions, i)
  self:entry("segment_free", r.addr, r.size, r.stream, nil, t)
  return r.size
end

-- Whether a live buffer (allocated, not freed) lies in region r.
function Replay:region_busy(pool, r)
  for _, b in pairs(self.live[pool] or {}) do
    if overlaps(b.addr, b.size, r.addr, r.size) then return true end
  end
  return false
end

-- Completes the queued frees in region r: the pool gives it back, which
-- proves them done (their own free_completed, recorded after the release
-- that the same sync caused, is then skipped).
function Replay:complete_in(pool, r, t)
  local set = self.freeing[pool]
  for _, key in ipairs(overlapping(set, r.addr, r.size)) do
    local b = set[key]
    self:entry("free_completed", b.addr, b.size, b.stream, nil, t)
    self:set_state(key, b, nil)
    self.completed[key] = true
  end
end

function Replay:opened(pool, addr, size)
  for _, r in ipairs(self:pool(pool).regions) do
    if r.addr == addr and r.size == size then return true end
  end
  return false
end

function Replay:covered(pool, addr, size)
  for _, r in ipairs(self:pool(pool).regions) do
    if inside(addr, size, r) then return true end
  end
  return false
end

-- Gives an alloc a region when no live one holds it: the reserved region
-- that holds it (its reserve event may come just after the alloc), else the
-- derived one.
function Replay:ensure_region(ev, t)
  if self:covered(ev.pool, ev.addr, ev.size) then return end
  -- the reserved regions it lies in (a block may span two mappings)
  local found = false
  for _, r in ipairs(self.reserved[ev.pool] or {}) do
    if overlaps(ev.addr, ev.size, r.addr, r.size) then
      found = true
      if not self:opened(ev.pool, r.addr, r.size) then
        self:add_region(ev.pool, r.addr, r.size, ev.stream, t)
      end
    end
  end
  if found then return end
  local h = self.hull[ev.pool]
  if h and ev.addr >= h.lo and ev.addr + ev.size <= h.hi then
    self:add_region(ev.pool, h.lo, h.hi - h.lo, ev.stream, t)
  else
    self:add_region(ev.pool, ev.addr, ev.size, ev.stream, t)
  end
end

-- Completes pending frees that an alloc at the same memory proves done.
function Replay:complete_overlapping(ev, t)
  local set = self.freeing[ev.pool]
  for _, key in ipairs(overlapping(set, ev.addr, ev.size)) do
    local b = set[key]
    self:entry("free_completed", b.addr, b.size, b.stream, nil, t)
    self:set_state(key, b, nil)
  end
end

function Replay:alloc(ev, t)
  if not (math.type(ev.addr) and math.type(ev.size)) then return end
  local frames = M.frames(ev.src, ev.op)
  local key = ev.buffer or ("@" .. ev.addr)
  if ev.pool == nil then
    -- A cudaMalloc'd buffer is its own segment.
    self:add_region("malloc:" .. tostring(key), ev.addr, ev.size, ev.stream, t)
  else
    self:complete_overlapping(ev, t)
    self:ensure_region(ev, t)
  end
  local old = self.buffers[key]
  if old then self:set_state(key, old, nil) end
  self:set_state(key, { addr = ev.addr, size = ev.size, stream = ev.stream or 0,
    pool = ev.pool or ("malloc:" .. tostring(key)), frames = frames }, "active_allocated")
  self:entry("alloc", ev.addr, ev.size, ev.stream, frames, t)
end

function Replay:find(ev)
  local key = ev.buffer
  if key == nil and math.type(ev.addr) then key = "@" .. ev.addr end
  return key, key ~= nil and self.buffers[key] or nil
end

function Replay:free(ev, t)
  local key, b = self:find(ev)
  local addr, size = ev.addr or (b and b.addr), ev.size or (b and b.size)
  self:entry("free_requested", addr, size, ev.stream, M.frames(ev.src, ev.op), t)
  if b and type(b.pool) == "string" then
    -- cudaFree: completes at once and gives the segment back.
    self:set_state(key, b, nil)
    self:entry("free_completed", addr, size, ev.stream, nil, t)
    local regions = self.pools[b.pool] and self.pools[b.pool].regions or {}
    for i = #regions, 1, -1 do self:drop_region(b.pool, i, t) end
  elseif b then
    self:set_state(key, b, "active_pending_free")
  end
end

function Replay:free_completed(ev, t)
  local key, b = self:find(ev)
  if key ~= nil and self.completed[key] then self.completed[key] = nil; return end
  if b and b.state ~= "active_pending_free" then return end
  if b then self:set_state(key, b, nil) end
  self:entry("free_completed", ev.addr or (b and b.addr), ev.size or (b and b.size),
    ev.stream or (b and b.stream), nil, t)
end

function Replay:release(ev, t)
  local p = self.pools[ev.pool]
  if not p then return end
  local all = ev.op == "pool_destroy" or ev.reserved == 0
  local want, freed = int(ev.size), 0
  local regions = p.regions
  for i = #regions, 1, -1 do
    if not all and freed >= want then break end
    if all or not self:region_busy(ev.pool, regions[i]) then
      self:complete_in(ev.pool, regions[i], t)
      freed = freed + self:drop_region(ev.pool, i, t)
    end
  end
end

function Replay:reserved_total()
  local sum = 0
  for _, p in pairs(self.pools) do
    for _, r in ipairs(p.regions) do sum = sum + r.size end
  end
  return sum
end

function Replay:oom(ev, t)
  self:entry("oom", nil, ev.size, ev.stream, M.frames(ev.src, ev.op), t,
    self.total and math.max(0, self.total - self:reserved_total()) or 0)
end

function Replay:run(each)
  local clock = util.clock()
  each(function(ev)
    local op, t = ev.op, clock(ev)
    if is_host(ev) then -- luacheck: ignore 542
      -- Host memory is not the device's: PyTorch's snapshot has no place for it.
    elseif op == "reserve" and ev.pool ~= nil and math.type(ev.addr) and math.type(ev.size) then
      if not self:opened(ev.pool, ev.addr, ev.size) then
        self:add_region(ev.pool, ev.addr, ev.size, ev.stream, t)
      end
    elseif op == "alloc" then self:alloc(ev, t)
    elseif op == "free" then self:free(ev, t)
    elseif op == "free_completed" then self:free_completed(ev, t)
    elseif (op == "release" or op == "pool_destroy") and ev.pool ~= nil then self:release(ev, t)
    elseif op == "alloc_failed" then self:oom(ev, t)
    end
  end)
end

-- A region's blocks: live buffers by address, the gaps as inactive blocks.
function Replay:blocks(pool, r)
  local live = {}
  for _, set in ipairs { self.live[pool] or {}, self.freeing[pool] or {} } do
    for _, b in pairs(set) do
      if inside(b.addr, b.size, r) then live[#live + 1] = b end
    end
  end
  table.sort(live, function(a, b) return a.addr < b.addr end)
  local blocks, at = L(), r.addr
  local function gap(upto)
    if upto > at then
      blocks[#blocks + 1] = { address = at, size = upto - at, requested_size = 0,
        state = "inactive", frames = L() }
    end
  end
  for _, b in ipairs(live) do
    if b.addr >= at then -- overlapping buffers (inconsistent input) are left out
      gap(b.addr)
      blocks[#blocks + 1] = { address = b.addr, size = b.size, requested_size = b.size,
        state = b.state, frames = b.frames }
      at = b.addr + b.size
    end
  end
  gap(r.addr + r.size)
  return blocks
end

function Replay:segments(device, meta)
  local regions = {}
  for pool, p in pairs(self.pools) do
    for _, r in ipairs(p.regions) do regions[#regions + 1] = { pool = pool, r = r } end
  end
  table.sort(regions, function(a, b) return a.r.addr < b.r.addr end)
  local segs = L()
  for _, x in ipairs(regions) do
    local blocks = self:blocks(x.pool, x.r)
    local allocated, active = 0, 0
    for _, b in ipairs(blocks) do
      if b.state == "active_allocated" then allocated = allocated + b.size end
      if b.state ~= "inactive" then active = active + b.size end
    end
    local pool_name = type(x.pool) == "string" and "cudaMalloc" or util.pool_name(meta, x.pool)
    local info = type(x.pool) ~= "string" and meta.pools and meta.pools[x.pool] or {}
    segs[#segs + 1] = { device = device, address = x.r.addr, total_size = x.r.size,
      allocated_size = allocated, active_size = active, requested_size = allocated,
      stream = int(x.r.stream), segment_type = "large", is_expandable = false,
      frames = L(), blocks = blocks, poolsh_pool = pool_name,
      poolsh_location = info.location or "device", poolsh_default = info.default == true }
  end
  return segs
end

--- The snapshot as Lua tables (lists marked for pickle), from each(fn)
-- that walks the events (twice).
function M.build(each, meta)
  meta = meta or {}
  local device = math.tointeger(meta.device and meta.device.index) or 0
  local replay, trace = new_replay(each, meta), L()
  replay.emit = function(e) trace[#trace + 1] = e end
  replay:run(each)
  local traces = L()
  for i = 0, device do traces[i + 1] = i == device and trace or L() end
  return { segments = replay:segments(device, meta), device_traces = traces }
end

--- Writes the pickle with out(string): the same bytes as pickling
-- M.build's tables, with each trace entry written as the replay makes it
-- (device_traces comes before segments in a dict's sorted keys).
function M.write(out, each, meta, record)
  meta = meta or {}
  local op = pickle.op
  local device = math.tointeger(meta.device and meta.device.index) or 0
  local replay, n = new_replay(each, meta, record), 0
  out(op.header .. op.empty_dict .. op.mark)
  pickle.value("device_traces", out)
  out(op.empty_list .. op.mark)
  for _ = 1, device do out(op.empty_list) end
  out(op.empty_list)
  if record and record.pickle then
    -- poolsh's own record: the replay runs over the records in C, which
    -- writes the entries (the same bytes: tests/spec/formats_spec.lua) and
    -- hands back the state the segments are made of.
    replay.pools, replay.live, replay.freeing = record.pickle(out, replay.total)
    for _, by in ipairs { replay.live, replay.freeing } do
      for _, set in pairs(by) do
        for _, b in pairs(set) do b.frames, b.src = M.frames(b.src, "alloc"), nil end
      end
    end
    out(op.appends)
    pickle.value("segments", out)
    pickle.value(replay:segments(device, meta), out)
    out(op.setitems .. op.stop)
    return
  end
  local entry = entry_writer()
  replay.emit = function(e)
    if n % op.batch == 0 then out(n > 0 and op.appends .. op.mark or op.mark) end
    out(entry(e))
    n = n + 1
  end
  replay:run(each)
  out((n > 0 and op.appends or "") .. op.appends)
  pickle.value("segments", out)
  pickle.value(replay:segments(device, meta), out)
  out(op.setitems .. op.stop)
end

--- The pickle bytes.
function M.encode(events, meta)
  return require("poolsh.export").to_string("pickle", events, meta)
end

return M
