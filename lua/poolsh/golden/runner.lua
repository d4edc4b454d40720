--- poolsh.golden.runner: runs one fidelity scenario through a step API and
-- takes the observations after every step (docs/fidelity.md).
--
-- A scenario's run(g) gets `g`, whose objects wrap poolsh's: every call on
-- them is one step, named from the scenario's own labels (p1, s1, e1, b1,
-- m1; pd the default pool, default the legacy stream), so names do not
-- depend on poolsh's ids. After each step the runner reads, for every pool
-- the scenario made or used, the four driver counters and poolsh's live
-- and pending bytes; a step adds what it alone shows: an allocation's
-- offset and the freed buffer it landed in, or its error's name; a query's
-- idle or busy; a verify's result.
--
-- An allocation also records poolsh's statements about it (the ledger's):
-- `sources`, each earlier buffer whose freed bytes it took {buffer, bytes,
-- rule, stream}, or `fresh = true` and the `why_fresh` text; a scenario
-- with `extents = true` records after every step each pool's extents
-- (poolsh.core.blocks) as {offset, size, state, owner}. Names in them are
-- the scenario's labels, offsets are from the pool's first block.
local poolsh = require "poolsh"
local label = require "poolsh.golden.label"

local M = {}

local COUNTERS = { "reserved", "used", "reserved_high", "used_high", "live", "pending" }

--- The CUDA error name in an error message (a word of its own:
-- "cudaErrorInvalidValue", never the "cuda21" of a path like
-- /src/poolsh-cuda21/), else the message without its "chunk:line: "
-- prefix (which would name a machine path).
local function error_name(e)
  e = tostring(e)
  return e:match("%f[%w](cuda%u%w*)") or (e:gsub("^[^\n]-:%d+: ", ""))
end
M.error_name = error_name

-- Raised by a step that failed unexpectedly: the scenario stops there.
local ABORT = setmetatable({}, { __tostring = function() return "scenario aborted" end })

local Run = {}
Run.__index = Run

function Run:label(kind)
  self.count[kind] = (self.count[kind] or 0) + 1
  return kind .. self.count[kind]
end

--- A range's mappings as one text each, by offset:
-- "+<offset> <size> <memory>+<memory offset> <access>".
local function mapping_texts(r)
  local out = {}
  for i, m in ipairs(r.h:mappings()) do
    local mem = r.run.memories[m.memory] or "?"
    out[i] = ("+%s %s %s+%s %s"):format(label.size(m.offset), label.size(m.size), mem,
      label.size(m.memory_offset), m.access)
  end
  return out
end

--- Takes the VMM objects into obs: obs.vmm.<range> is its mappings (or
-- "freed"), obs.vmm.<memory> "live" or "released"; with device_memory,
-- obs.device_used is the device's memory taken since the scenario began.
function Run:observe_vmm(obs)
  if #self.vmm == 0 and not self.device_memory then return end
  if #self.vmm > 0 then
    local t = {}
    for _, o in ipairs(self.vmm) do
      if o.kind == "range" then
        t[o.name] = o.h.live and mapping_texts(o) or "freed"
      else
        t[o.name] = o.h.live and "live" or "released"
      end
    end
    obs.vmm = t
  end
  if self.device_memory then obs.device_used = self.free0 - poolsh.device().free end
end

--- Takes the counters of every observed pool into obs.pools.
function Run:observe(obs)
  self:observe_vmm(obs)
  if #self.pools == 0 then return end
  local pools = {}
  for _, p in ipairs(self.pools) do
    if p.destroyed then
      pools[p.name] = "destroyed"
    else
      local st = p.h:stats()
      local t = {}
      for _, k in ipairs(COUNTERS) do t[k] = st[k] end
      pools[p.name] = t
      if self.extents and p.base then
        obs.extents = obs.extents or {}
        obs.extents[p.name] = self:extents_of(p)
      end
    end
  end
  obs.pools = pools
end

--- The scenario's label for poolsh's buffer or stream id (else "?<id>").
function Run:name_of(kind, id)
  return self.names[kind][id] or ("?" .. tostring(id))
end

--- Pool p's extents as the ledger has them (freed ones known complete
-- too), in address order: {offset, size, state = live|pending|free, owner}.
function Run:extents_of(p)
  local out = {}
  for _, x in ipairs(poolsh.core.blocks(p.h, true)) do
    out[#out + 1] = { offset = x.addr - p.base, size = x.size, owner = self:name_of("buffer", x.buffer),
                      state = x.pending and "pending" or (x.done and "free" or "live") }
  end
  return out
end

--- Puts buffer h's statements into obs: its sources, or fresh and why.
function Run:statements(obs, h)
  local src = h.sources or {}
  if #src == 0 then
    obs.fresh = true
    local why = h.why_fresh
    if why then
      -- poolsh's names (b7, s2) become the scenario's labels
      why = why:gsub("%f[%w]([bs])(%d+)%f[%W]", function(k, id)
        local n = self.names[k == "b" and "buffer" or "stream"][tonumber(id)]
        return n or (k .. id)
      end)
      obs.why_fresh = why
    end
    return
  end
  local t = {}
  for i, e in ipairs(src) do
    if e.more then
      t[i] = { more = e.more, bytes = e.bytes }
    else
      t[i] = { buffer = self:name_of("buffer", e.buffer), bytes = e.bytes, rule = e.rule,
               stream = e.stream and self:name_of("stream", e.stream) or nil }
    end
  end
  obs.sources = t
end

--- Runs fn(obs) as the step `name`. An error in fn is the step's
-- observation and stops the scenario, unless fn caught it itself.
function Run:step(name, fn)
  local obs = { step = name }
  local ok, err = pcall(fn, obs)
  if not ok then obs.error = error_name(err) end
  local ook, oerr = pcall(self.observe, self, obs)
  if not ook then obs.error = obs.error or error_name(oerr) end
  self.steps[#self.steps + 1] = obs
  if not ok or not ook then error(ABORT, 0) end
end

--- Where a new block of pool p landed: its offset from the pool's first
-- block, and the latest freed buffer of the scenario whose range holds it.
function Run:place(p, addr)
  p.base = p.base or addr
  local off = addr - p.base
  for i = #p.freed, 1, -1 do
    local f = p.freed[i]
    if off >= f.lo and off < f.hi then return off, f.name end
  end
  return off, nil
end

-- Formats an options table as "{a = 1, b = 32 MiB}" (keys sorted).
local function options_text(opts)
  if not opts or next(opts) == nil then return "" end
  local keys = {}
  for k in pairs(opts) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    local v = opts[k]
    if (k == "max_size" or k == "release_threshold") and v ~= "max" then
      v = label.size(v == math.huge and v or poolsh.size(v))
    end
    parts[#parts + 1] = ("%s = %s"):format(k, tostring(v))
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

---------------------------------------------------------------- objects

local Pool, Stream, Event, Buffer = {}, {}, {}, {}
Pool.__index, Stream.__index, Event.__index, Buffer.__index = Pool, Stream, Event, Buffer

-- Every object stays reachable until the scenario ends: the collector
-- would otherwise free a buffer the scenario dropped at a moment that
-- depends on Lua's heap, not on the scenario.
local function wrap(mt, run, name, h, extra)
  local o = extra or {}
  o.run, o.name, o.h = run, name, h
  run.objects[#run.objects + 1] = o
  return setmetatable(o, mt)
end

--- p:alloc(size [, stream]) -> a Buffer, or nil when the allocation
-- failed (the failure is the step's observation).
function Pool:alloc(size, s)
  local r = self.run
  size = poolsh.size(size)
  s = s or r.default_stream
  local name = r:label("b")
  local buf
  r:step(("%s = %s:alloc(%s, %s)"):format(name, self.name, label.size(size), s.name), function(obs)
    local ok, h = pcall(self.h.alloc, self.h, size, s.h)
    if not ok then obs.error = error_name(h); return end
    buf = wrap(Buffer, r, name, h, { pool = self, size = size })
    r.names.buffer[h.id] = name
    buf.offset, obs.reused = r:place(self, h.addr)
    obs.offset = buf.offset
    r:statements(obs, h)
  end)
  return buf
end

function Pool:trim(keep)
  keep = poolsh.size(keep or 0)
  self.run:step(("%s:trim(%s)"):format(self.name, label.size(keep)), function() self.h:trim(keep) end)
end

function Pool:reset_high()
  self.run:step(self.name .. ":reset_high()", function() self.h:reset_high() end)
end

--- p:set(field, value): a setting (release_threshold, the reuse policies).
function Pool:set(field, value)
  local shown = value
  if field == "release_threshold" and value ~= "max" then
    shown = label.size(value == math.huge and value or poolsh.size(value))
  end
  self.run:step(("%s.%s = %s"):format(self.name, field, tostring(shown)), function()
    self.h[field] = value
  end)
end

function Pool:destroy()
  self.run:step(self.name .. ":destroy()", function() self.h:destroy(); self.destroyed = true end)
end

function Stream:sync()
  self.run:step(self.name .. ":sync()", function() self.h:sync() end)
end

function Stream:query()
  self.run:step(self.name .. ":query()", function(obs)
    obs.query = self.h:query() and "idle" or "busy"
  end)
end

function Stream:spin(d)
  local ms = poolsh.duration(d)
  self.run:step(("%s:spin(%s)"):format(self.name, label.duration(ms)), function() poolsh.spin(self.h, ms) end)
end

--- s:record([event]) -> the event (a new one when none is given).
function Stream:record(e)
  local r = self.run
  if e then
    r:step(("%s:record(%s)"):format(self.name, e.name), function() self.h:record(e.h) end)
    return e
  end
  local name = r:label("e")
  r:step(("%s = %s:record()"):format(name, self.name), function()
    e = wrap(Event, r, name, self.h:record())
  end)
  return e
end

function Stream:wait(e)
  self.run:step(("%s:wait(%s)"):format(self.name, e.name), function() self.h:wait(e.h) end)
end

function Stream:destroy()
  self.run:step(self.name .. ":destroy()", function() self.h:destroy() end)
end

function Event:record(s)
  s = s or self.run.default_stream
  self.run:step(("%s:record(%s)"):format(self.name, s.name), function() self.h:record(s.h) end)
end

function Event:sync()
  self.run:step(self.name .. ":sync()", function() self.h:sync() end)
end

function Event:query()
  self.run:step(self.name .. ":query()", function(obs)
    obs.query = self.h:query() and "idle" or "busy"
  end)
end

--- b:free([stream]): a pool buffer on its stream or `stream`; a malloc
-- buffer with cudaFree.
function Buffer:free(s)
  local r = self.run
  local name = s and ("%s:free(%s)"):format(self.name, s.name) or self.name .. ":free()"
  r:step(name, function()
    self.h:free(s and s.h)
    local p = self.pool
    if p then p.freed[#p.freed + 1] = { name = self.name, lo = self.offset, hi = self.offset + self.size } end
  end)
end

local function with_stream(b, what, byte, s)
  return s and ("%s:%s(%d, %s)"):format(b.name, what, byte, s.name) or ("%s:%s(%d)"):format(b.name, what, byte)
end

function Buffer:fill(byte, s)
  self.run:step(with_stream(self, "fill", byte, s), function() poolsh.fill(self.h, byte, s and s.h) end)
end

--- b:verify(byte [, stream]): observes "ok" or "bad at <offset>".
function Buffer:verify(byte, s)
  self.run:step(with_stream(self, "verify", byte, s), function(obs)
    local ok, off = poolsh.verify(self.h, byte, s and s.h)
    obs.verify = ok and "ok" or ("bad at %d"):format(off)
  end)
end

---------------------------------------------------------------- VMM

local Range, Memory, View = {}, {}, {}
Range.__index, Memory.__index, View.__index = Range, Memory, View

-- Runs a VMM call as the step `name`: an error is the step's observation
-- and the scenario goes on (misuse is what these scenarios record).
local function vmm_step(run, name, fn)
  run:step(name, function(obs)
    local ok, err = pcall(fn, obs)
    if not ok then obs.error = error_name(err) end
  end)
end

local function vmm_opts(opts)
  local t = options_text(opts)
  return t ~= "" and (", " .. t) or ""
end

--- r:map(offset, memory [, memory_offset [, size]]).
function Range:map(off, m, moff, size)
  local args = { label.size(off), m.name }
  if moff then args[#args + 1] = label.size(moff) end
  if size then args[#args + 1] = label.size(size) end
  vmm_step(self.run, ("%s:map(+%s)"):format(self.name, table.concat(args, ", ")), function()
    self.h:map(off, m.h, moff, size)
  end)
end

function Range:unmap(off, size)
  vmm_step(self.run, ("%s:unmap(+%s, %s)"):format(self.name, label.size(off), label.size(size)), function()
    self.h:unmap(off, size)
  end)
end

--- r:set_access(offset, size [, options]).
function Range:set_access(off, size, opts)
  vmm_step(self.run, ("%s:set_access(+%s, %s%s)"):format(self.name, label.size(off), label.size(size), vmm_opts(opts)),
    function() self.h:set_access(off, size, opts) end)
end

--- r:buffer(offset, size) -> a View, or nil when refused (the refusal
-- is the step's observation).
function Range:buffer(off, size)
  local r = self.run
  local name = r:label("v")
  local buf
  vmm_step(r, ("%s = %s:buffer(+%s, %s)"):format(name, self.name, label.size(off), label.size(size)), function()
    buf = wrap(View, r, name, self.h:buffer(off, size), { size = size })
  end)
  return buf
end

--- v:fill(byte) and v:verify(byte) on a range's view, on the legacy
-- stream; a refusal (bytes unmapped since) is the step's observation.
function View:fill(byte)
  vmm_step(self.run, ("%s:fill(%d)"):format(self.name, byte), function() poolsh.fill(self.h, byte) end)
end

function View:verify(byte)
  vmm_step(self.run, ("%s:verify(%d)"):format(self.name, byte), function(obs)
    local ok, off = poolsh.verify(self.h, byte)
    obs.verify = ok and "ok" or ("bad at %d"):format(off)
  end)
end

function Range:free()
  vmm_step(self.run, self.name .. ":free()", function() self.h:free() end)
end

function Memory:release()
  vmm_step(self.run, self.name .. ":release()", function() self.h:release() end)
end

--- The median host ms of each VMM call over n page cycles (create, map,
-- set_access, unmap, release), as the order of the four calls whose
-- costs lie well apart, cheapest first: "map < create < unmap <
-- set_access", and release against unmap.
local function cost_order(n)
  local g = poolsh.vmm.granularity()
  local r <close> = poolsh.vmm.reserve(n * g)
  local t = { create = {}, map = {}, set_access = {}, unmap = {}, release = {} }
  for i = 1, n do
    local off = (i - 1) * g
    local t0 = poolsh.now()
    local m = poolsh.vmm.create(g)
    local t1 = poolsh.now()
    r:map(off, m)
    local t2 = poolsh.now()
    r:set_access(off, g)
    local t3 = poolsh.now()
    r:unmap(off, g)
    local t4 = poolsh.now()
    m:release()
    local t5 = poolsh.now()
    t.create[i], t.map[i], t.set_access[i], t.unmap[i], t.release[i] = t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4
  end
  local med = {}
  for k, v in pairs(t) do
    table.sort(v)
    med[k] = v[(#v + 1) // 2]
  end
  local names = { "map", "create", "unmap", "set_access" }
  table.sort(names, function(a, b) return med[a] < med[b] end)
  return table.concat(names, " < "), med.release < med.unmap and "release < unmap" or "release >= unmap"
end

---------------------------------------------------------------- g

local function new_g(r)
  local g = {}

  --- g.pool([options]) -> Pool (poolsh.pool's options).
  function g.pool(opts)
    local name = r:label("p")
    local p
    r:step(("%s = pool%s"):format(name, options_text(opts) ~= "" and options_text(opts) or "{}"), function()
      p = wrap(Pool, r, name, poolsh.pool(opts or {}), { freed = {} })
      r.pools[#r.pools + 1] = p
    end)
    return p
  end

  --- g.default_pool() -> the device's default pool, observed as pd.
  function g.default_pool()
    local p
    r:step("pd = default_pool()", function()
      p = wrap(Pool, r, "pd", poolsh.default_pool(), { freed = {} })
      r.pools[#r.pools + 1] = p
    end)
    return p
  end

  --- g.stream([options]) -> Stream.
  function g.stream(opts)
    local name = r:label("s")
    local s
    r:step(("%s = stream%s"):format(name, options_text(opts) ~= "" and options_text(opts) or "()"), function()
      s = wrap(Stream, r, name, poolsh.stream(opts or {}))
      r.names.stream[s.h.id] = name
    end)
    return s
  end

  --- g.default_stream: the legacy default stream (no step).
  g.default_stream = r.default_stream

  --- g.event([options]) -> Event.
  function g.event(opts)
    local name = r:label("e")
    local e
    r:step(("%s = event%s"):format(name, options_text(opts) ~= "" and options_text(opts) or "()"), function()
      e = wrap(Event, r, name, poolsh.event(opts or {}))
    end)
    return e
  end

  --- g.malloc(size) -> a cudaMalloc Buffer (freed with cudaFree).
  function g.malloc(size)
    size = poolsh.size(size)
    local name = r:label("m")
    local m
    r:step(("%s = malloc(%s)"):format(name, label.size(size)), function()
      m = wrap(Buffer, r, name, poolsh.malloc(size), { size = size })
      r.names.buffer[m.h.id] = name
    end)
    return m
  end

  --- g.vmm_reserve(size [, options]) -> Range (poolsh.vmm.reserve).
  function g.vmm_reserve(size, opts)
    size = poolsh.size(size)
    local name = r:label("r")
    local o
    vmm_step(r, ("%s = vmm.reserve(%s%s)"):format(name, label.size(size), vmm_opts(opts)), function()
      o = wrap(Range, r, name, poolsh.vmm.reserve(size, opts), { kind = "range" })
      r.vmm[#r.vmm + 1] = o
    end)
    return o
  end

  --- g.vmm_create(size [, options]) -> Memory (poolsh.vmm.create).
  function g.vmm_create(size, opts)
    size = poolsh.size(size)
    local name = r:label("h")
    local o
    vmm_step(r, ("%s = vmm.create(%s%s)"):format(name, label.size(size), vmm_opts(opts)), function()
      o = wrap(Memory, r, name, poolsh.vmm.create(size, opts), { kind = "memory" })
      r.vmm[#r.vmm + 1] = o
      r.memories[o.h] = name
    end)
    return o
  end

  --- g.vmm_granularity([options]): observed as `granularity`.
  function g.vmm_granularity(opts)
    vmm_step(r, ("vmm.granularity(%s)"):format(options_text(opts)), function(obs)
      obs.granularity = poolsh.vmm.granularity(opts)
    end)
  end

  --- g.vmm_cost_order(n): n page cycles timed on poolsh.now()'s clock;
  -- observed as the order of the calls' medians (cost_order).
  function g.vmm_cost_order(n)
    vmm_step(r, ("vmm cost order (%d page cycles)"):format(n), function(obs)
      obs.cost_order, obs.release = cost_order(n)
    end)
  end

  --- g.sync(): cudaDeviceSynchronize.
  function g.sync() r:step("sync()", function() poolsh.sync() end) end

  --- g.sleep(duration): the host sleeps.
  function g.sleep(d)
    local ms = poolsh.duration(d)
    r:step(("sleep(%s)"):format(label.duration(ms)), function() poolsh.sleep(ms) end)
  end

  return g
end

--- runner.run(scenario) -> {steps = {...}, error = message or nil}.
-- A step that fails ends the scenario (its observation holds the error);
-- an error outside the steps is the run's error.
function M.run(scenario)
  local r = setmetatable({ steps = {}, pools = {}, count = {}, objects = {}, vmm = {}, memories = {},
                          names = { buffer = {}, stream = {} }, extents = scenario.extents,
                          device_memory = scenario.device_memory }, Run)
  if r.device_memory then r.free0 = poolsh.device().free end
  r.default_stream = wrap(Stream, r, "default", poolsh.default_stream())
  r.names.stream[r.default_stream.h.id] = "default"
  local ok, err = pcall(scenario.run, new_g(r))
  local result = { steps = r.steps }
  if not ok and err ~= ABORT then result.error = error_name(err) end
  return result
end

return M
