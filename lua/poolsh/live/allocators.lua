--- poolsh.live.allocators: live lines for allocators written in Lua
-- (docs/live.md, "Lua allocators"). An allocator registers itself once
-- with a name and a function giving its reserved and used bytes; while
-- the live view is on, it reports what it did through its `watched`
-- field, which is nil otherwise, so that unwatched allocators (replays)
-- pay one field read per allocation:
--
--   live.register(a, "torch", function(a) return reserved, used end)
--   local w = a.watched
--   if w then w(a, "alloc", { size = n, block = b, fresh = segment bytes,
--                             how = "cudaMalloc" }) end
--   if w then w(a, "alloc", { size = n, block = b, from = label, why = "cached block" }) end
--
-- b is the block handed out, b.live_name its name (live.label(a) gives
-- one, "torch.3"; a block in a REPL or lesson variable takes the
-- variable's name, poolsh.naming.adopt), read when the line prints;
-- instead of block, `id` names a Buffer and `label` any other name.
--   if w then w(a, "release", { size = n, cause = "empty_cache" }) end
--   if w then w(a, "own", buffer) end   -- a Buffer it took for itself
--
-- The live view prints a line per allocator whose counters moved, like a
-- pool's, then what it released and its allocations. Buffers it owns are
-- not listed on their own (their allocator's line says what they are).
local units = require "poolsh.units"
local text = require "poolsh.live.text"

local M = {}

local S = text.settings
local fmt = units.fmt
local paint, fit, by_count = text.paint, text.fit, text.by_count

local RING = 64                                     -- events kept per allocator between statements
local registry = setmetatable({}, { __mode = "k" }) -- allocator -> its record
local registered = 0
local watching = false
local owned, owned_ids = {}, {}                     -- Buffer id -> allocator name; the last RING ids

-- What a watched allocator calls: notes one event in its record.
local function note(a, kind, ev)
  local r = registry[a]
  if not r then return end
  if kind == "own" then
    -- only the last RING count: the core lists no more allocations a statement
    local k = #owned_ids + 1
    if k > RING then owned[table.remove(owned_ids, 1)] = nil; k = RING end
    owned_ids[k], owned[ev.id] = ev.id, r.name
    return
  end
  if kind == "release" then
    local cause = ev.cause or "release"
    if not r.released[cause] then r.causes[#r.causes + 1] = cause; r.released[cause] = 0 end
    r.released[cause] = r.released[cause] + ev.size
    return
  end
  r.n = r.n + 1
  r.events[(r.n - 1) % RING + 1] = ev
  local how = ev.fresh and ("fresh " .. (ev.what or "segment")) or (ev.why or "reused")
  r.kinds[how] = (r.kinds[how] or 0) + 1
end

-- Starts a record's statement afresh.
local function clear(r)
  r.events, r.n, r.kinds, r.released, r.causes = {}, 0, {}, {}, {}
end

--- register(a, name, stats) -> a: the live view shows allocator a as
-- `name`, its reserved and used bytes from stats(a) -> reserved, used.
-- Raises for a missing name or stats function.
function M.register(a, name, stats)
  if type(a) ~= "table" then error("poolsh.live.register: allocator (a table) expected, got " .. type(a), 2) end
  if type(name) ~= "string" or name == "" then
    error("poolsh.live.register: name (a non-empty string) expected, got " .. type(name), 2)
  end
  if type(stats) ~= "function" then
    error("poolsh.live.register: stats (a function returning reserved, used) expected, got " .. type(stats), 2)
  end
  registered = registered + 1
  local r = { name = name, stats = stats, order = registered, labels = 0 }
  clear(r)
  registry[a] = r
  a.watched = watching and note or nil
  if watching then r.reserved, r.used = 0, 0 end
  return a
end

--- label(a) -> the next name for one of allocator a's blocks ("torch.3").
-- poolsh.naming.adopt renames a block whose live_name it is.
function M.label(a)
  local r = registry[a]
  if not r then return "?" end
  r.labels = r.labels + 1
  return ("%s.%d"):format(r.name, r.labels)
end

--- is_allocator(a) -> whether a is an allocator registered with the live
-- view (poolsh.naming takes only its blocks for blocks).
function M.is_allocator(a) return a ~= nil and registry[a] ~= nil end

--- registered() -> the registered allocators' names, in order.
function M.registered()
  local list = {}
  for _, r in pairs(registry) do list[#list + 1] = r end
  table.sort(list, function(x, y) return x.order < y.order end)
  for i, r in ipairs(list) do list[i] = r.name end
  return list
end

--- watch(on): the live view turns reporting on or off for every
-- allocator (on: the next lines start from now).
function M.watch(on)
  watching = on
  owned, owned_ids = {}, {}
  for a, r in pairs(registry) do
    a.watched = on and note or nil
    clear(r)
    if on then
      local ok, reserved, used = pcall(r.stats, a)
      r.reserved, r.used = ok and reserved or 0, ok and used or 0
    end
  end
end

--- owner(id) -> the name of the allocator that took Buffer id during this
-- statement, or nil.
function M.owner(id) return owned[id] end

local function delta(d)
  if d == 0 then return "" end
  local s = (d > 0 and "+" or "-") .. fmt(math.abs(d))
  return " (" .. paint(d > 0 and "grow" or "shrink", s) .. ")"
end

-- One allocation's line: "  torch.2 4.00 MiB from torch: reused torch.1's
-- memory (cached block)".
local function alloc_line(out, name, ev, width)
  local what
  if ev.fresh == true then
    what = "fresh " .. (ev.what or "memory")
  elseif ev.fresh then
    what = ("fresh %s (%s %s)"):format(ev.what or "segment", ev.how or "cudaMalloc", fmt(ev.fresh))
  elseif ev.from then
    what = ("reused %s's memory (%s)"):format(ev.from, paint("rule", ev.why or "cached block"))
  else
    what = ev.why or "reused cached memory"
  end
  local label = ev.block and ev.block.live_name or ev.id and text.name("buffer", ev.id) or ev.label
  fit(out, { ("  %s %s from %s: %s"):format(label or "?", fmt(ev.size), name, what) }, width, "    ")
end

--- lines(width) -> the lines for the allocators that did something since
-- the last call, in the order they were registered; each starts afresh.
function M.lines(width)
  local out = {}
  if not watching then return out end
  local list = {}
  for a, r in pairs(registry) do list[#list + 1] = { a, r } end
  table.sort(list, function(x, y) return x[2].order < y[2].order end)
  for _, e in ipairs(list) do
    local a, r = e[1], e[2]
    local ok, reserved, used = pcall(r.stats, a)
    local was_r, was_u = r.reserved or 0, r.used or 0
    if not ok or math.type(reserved) ~= "integer" or math.type(used) ~= "integer" then
      -- closed (its pool destroyed) or broken: said once, then forgotten
      out[#out + 1] = ("%s  closed"):format(r.name)
      registry[a], a.watched = nil, nil
    elseif reserved ~= was_r or used ~= was_u or r.n > 0 or #r.causes > 0 then
      fit(out, { paint("bold", r.name), "reserved " .. fmt(reserved) .. delta(reserved - was_r),
                 "used " .. fmt(used) .. delta(used - was_u) }, width)
      for _, cause in ipairs(r.causes) do
        fit(out, { ("    %s released %s (%s)"):format(r.name, fmt(r.released[cause]), cause) }, width, "      ")
      end
      local first = math.max(1, r.n - RING + 1)
      if r.n > S.alloc_lines then
        out[#out + 1] = ("  %d allocations from %s:"):format(r.n, r.name)
        fit(out, { "    " .. by_count(r.kinds) }, width, "      ")
        out[#out + 1] = paint("dim", ("  the last %d:"):format(math.min(r.n, S.examples)))
        first = r.n - math.min(r.n, S.examples) + 1
      end
      for i = first, r.n do alloc_line(out, r.name, r.events[(i - 1) % RING + 1], width) end
    end
    if registry[a] then
      r.reserved, r.used = reserved, used
      clear(r)
    end
  end
  owned, owned_ids = {}, {}
  return out
end

return M
