--- The REPL's live lines: what changed after each statement (docs/live.md).
local core = require "poolsh.core"
local units = require "poolsh.units"
local trace = require "poolsh.trace"
local text = require "poolsh.live.text"
local vmm = require "poolsh.live.vmm"
local allocators = require "poolsh.live.allocators"

local M = {}

local S = text.settings
local fmt = units.fmt
local name, paint, fit, by_count = text.name, text.paint, text.fit, text.by_count

local function delta(d)
  if d == 0 then return "" end
  local s = (d > 0 and "+" or "-") .. fmt(math.abs(d))
  return " (" .. paint(d > 0 and "grow" or "shrink", s) .. ")"
end

local watching = false
local last = {}          -- pool id -> {reserved, used, pending}
local last_alloc = 0     -- allocations already reported
local last_release = 0   -- releases already reported
local last_counts = {}   -- pool id -> {allocs, reuses} from core.counts()
local last_collected, last_collected_bytes = 0, 0   -- the collector's frees already reported
local last_ranges = {}   -- VMM range id -> {size, mappings, mapped} (poolsh.live.vmm)
local scope_open = false -- a peak scope (core.peak_push) spans the statement being watched

-- Each device's access to pool p ("none", "read", "rw"), or nil with one
-- device: only several devices make access change (docs/multi-gpu.md).
local function access_of(p, ndev)
  if ndev < 2 then return nil end
  local t = {}
  for d = 0, ndev - 1 do
    local ok, a = pcall(p.access, p, d)
    t[d] = ok and a or "?"
  end
  return t
end

local function snapshot()
  local snap = {}
  local ndev = core.device_count()
  for _, p in ipairs((text.objects())) do
    local st = p:stats{ estimates = false }   -- no free-space estimate: nothing to build
    snap[p.id] = { name = name("pool", p.id), reserved = st.reserved, used = st.used,
                   pending = st.pending, access = access_of(p, ndev) }
  end
  return snap
end

-- "device 1 access rw (was none)" for each device whose access to a pool
-- changed since the last statement.
local function access_parts(was, now)
  local parts = {}
  if not (was and was.access and now.access) then return parts end
  for d = 0, #now.access do
    local a, b = was.access[d], now.access[d]
    if a and b and a ~= b then parts[#parts + 1] = ("device %d access %s (was %s)"):format(d, b, a) end
  end
  return parts
end

-- Per live pool, its allocations and reuses by rule so far (core.counts).
local function pool_counts()
  local t = {}
  for id, c in pairs(core.counts().pools) do
    local reuses = {}
    for rule, n in pairs(c.reuses or {}) do reuses[rule] = n end
    t[id] = { allocs = c.allocs or 0, reuses = reuses }
  end
  return t
end

-- The statement's own peak scope (core.peak_push, the one poolsh.peak
-- uses; the pools' high-water marks, which the user resets, stay
-- untouched): opened after each statement's lines, so that the next
-- statement's highest used bytes per pool are known. Scopes nest, so
-- poolsh.peak(fn) within a statement still works.
local function open_scope()
  if not scope_open then scope_open = pcall(core.peak_push) end
end

-- Closes the statement's scope: per pool id, the most bytes used during
-- it; {} when none was open.
local function close_scope()
  if not scope_open then return {} end
  scope_open = false
  local ok, peaks = pcall(core.peak_pop)
  return ok and peaks.pools or {}
end

-- Forgets what was shown: the next lines start from now.
local function start_from_now()
  close_scope()
  open_scope()
  last = snapshot()
  last_alloc = select(2, core.recent(math.maxinteger))
  last_release = select(2, core.releases(math.maxinteger))
  last_counts = pool_counts()
  last_collected, last_collected_bytes = select(2, core.collected(math.maxinteger))
  last_ranges = vmm.snapshot()
end

--- watch([on]) -> whether the REPL prints what changed after each
-- statement; sets it when given (on by default in the REPL, off in scripts).
function M.watch(on)
  if on ~= nil then
    if type(on) ~= "boolean" then error("poolsh.watch: boolean expected, got " .. type(on), 2) end
    watching = on
    allocators.watch(on)
    if on then start_from_now() else close_scope() end
  end
  return watching
end

--- reset(): after poolsh.core.reset(): forgets every pool and count seen,
-- so the next lines show only what comes after.
function M.reset()
  scope_open = false      -- the core's reset ended every scope
  last, last_alloc, last_release, last_counts = {}, 0, 0, {}
  last_collected, last_collected_bytes = 0, 0
  last_ranges = {}
  allocators.watch(watching)
  if watching then start_from_now() end
end

--- reused_words(a): what an allocation that reused memory took, from its
-- sources (core.recent's sources, a Buffer's sources: the buffers whose
-- freed bytes it took, lowest address first, with the rule for each):
-- "reused b1's memory (stream order)", "reused b1's and b2's memory
-- (stream order)", "reused b1's memory (stream order) and b2's (host
-- synchronisation)"; past four buffers, "and 3 more buffers'".
function M.reused_words(a)
  local src = a.sources
  if not src or #src == 0 then src = { { buffer = a.reused_from, rule = a.rule } } end
  local names, rules, same, more = {}, {}, true, 0
  for i, s in ipairs(src) do
    if s.more then more = more + s.more
    elseif #names == 4 then more = more + 1
    else
      names[#names + 1] = name("buffer", s.buffer) .. "'s"
      rules[#rules + 1] = s.rule
      if s.rule ~= src[1].rule then same = false end
    end
  end
  local function list(parts)
    if more > 0 then parts[#parts + 1] = ("%d more buffers'"):format(more) end
    if #parts == 1 then return parts[1] end
    return table.concat(parts, ", ", 1, #parts - 1) .. " and " .. parts[#parts]
  end
  if same then
    return ("reused %s memory (%s)"):format(list(names), paint("rule", rules[1]))
  end
  local parts = {}
  for i, n in ipairs(names) do
    parts[i] = ("%s%s (%s)"):format(n, i == 1 and " memory" or "", paint("rule", rules[i]))
  end
  return "reused " .. list(parts)
end

-- The note for the buffers the collector freed since the last statement
-- (their memory left `used` then): "collected: b5, b6 (16.00 MiB) — no
-- variable held them"; nil when it freed none.
local function collected_note(width)
  local list, n, bytes = core.collected(last_collected)
  local count, freed = n - last_collected, bytes - last_collected_bytes
  last_collected, last_collected_bytes = n, bytes
  if count <= 0 then return nil end
  table.sort(list, function(a, b) return a.buffer < b.buffer end)   -- the collector's order is its own
  local names = {}
  for i = 1, math.min(#list, S.collected_names) do names[i] = name("buffer", list[i].buffer) end
  local said = table.concat(names, ", ")
  if count > #names then said = said .. (" and %d more"):format(count - #names) end
  return fit({}, { ("  collected: %s (%s) \u{2014} no variable held %s"):format(said, fmt(freed),
    count == 1 and "it" or "them") }, width, "    ")
end

-- One line (or more, folded at width) for an allocation: its size and
-- kind, and whether and why it reused memory.
local function alloc_line(out, a, width)
  local where = a.pool and ("%s on %s"):format(name("pool", a.pool), name("stream", a.stream))
                or "host/device"
  local what
  if a.source_pid then        -- another process's buffer (docs/ipc.md)
    fit(out, { ("  %s %s imported from pid %d's b%d"):format(name("buffer", a.buffer), fmt(a.size),
                                                              a.source_pid, a.source_buffer) },
        width)
    return
  elseif a.reused then
    what = M.reused_words(a)
  elseif a.pool then
    what = a.why_fresh and "fresh memory \u{2014} " .. a.why_fresh or "fresh memory"
  else
    what = "not pool memory"
  end
  fit(out, { ("  %s %s from %s: %s"):format(name("buffer", a.buffer), fmt(a.size), where, what) },
      width)
end

-- The summary of n allocations: per pool how many, fresh and by rule
-- (from the counts' change since the last statement), then the last few.
local function alloc_summary(out, n, allocs, counts, width)
  out[#out + 1] = ("  %d allocations:"):format(n)
  local ids, in_pools = {}, 0
  for id in pairs(counts) do ids[#ids + 1] = id end
  table.sort(ids)
  for _, id in ipairs(ids) do
    local now, was = counts[id], last_counts[id] or { allocs = 0, reuses = {} }
    local made = now.allocs - was.allocs
    if made > 0 then
      local rules, reused = {}, 0
      for rule, k in pairs(now.reuses) do
        rules[rule] = k - (was.reuses[rule] or 0)
        reused = reused + rules[rule]
      end
      rules["fresh memory"] = made - reused
      fit(out, { ("    %s: %d (%s)"):format(name("pool", id), made, by_count(rules)) }, width, "      ")
      in_pools = in_pools + made
    end
  end
  -- host and device memory, and pools destroyed since (their counts go)
  if n > in_pools then out[#out + 1] = ("    not in a live pool: %d"):format(n - in_pools) end
  out[#out + 1] = paint("dim", ("  the last %d:"):format(math.min(#allocs, S.examples)))
  for i = math.max(1, #allocs - S.examples + 1), #allocs do alloc_line(out, allocs[i], width) end
end

-- The threshold a release went down to, as a size ("max": never).
local function threshold(t)
  if t == nil then return "?" end
  if t == math.huge or math.type(t) == "integer" and t < 0 or t >= 2^63 then return "max" end
  return fmt(t)
end

-- Per pool id, what the releases since the last statement say: their
-- causes as written (trace.cause) and the threshold they released to;
-- how many releases were before the core's ring (not listed); and per
-- pool id the most it held reserved just before one of them (reserved
-- only shrinks by a release, so that and the ends are its peak).
local function release_parts()
  local list, n = core.releases(last_release)
  local missed = n - last_release - #list
  last_release = n
  local by_pool, before = {}, {}
  for _, r in ipairs(list) do
    local b = r.reserved + r.size
    if b > (before[r.pool] or 0) then before[r.pool] = b end
    local t = by_pool[r.pool] or { order = {}, by = {} }
    by_pool[r.pool] = t
    local cause = trace.cause(r.cause_op, r.cause_id)
    -- a trim releases down to what it keeps, not to the threshold
    local to = r.cause_op ~= "trim" and threshold(r.threshold) or nil
    local key = cause .. "\0" .. (to or "")
    if not t.by[key] then
      t.by[key] = { cause = cause, to = to, size = 0, n = 0 }
      t.order[#t.order + 1] = key
    end
    local g = t.by[key]
    g.size, g.n = g.size + r.size, g.n + 1
  end
  local parts = {}
  for id, t in pairs(by_pool) do
    parts[id] = {}
    for _, key in ipairs(t.order) do
      local g = t.by[key]
      local text = g.cause .. " released"
      -- the size is the reserved delta when one cause released to a threshold
      if #t.order > 1 or not g.to then text = text .. " " .. fmt(g.size) end
      if g.to then text = text .. " down to threshold " .. g.to end
      if g.n > 1 then text = text .. (" (%d releases)"):format(g.n) end
      parts[id][#parts[id] + 1] = text
    end
  end
  return parts, missed, before
end

-- " (peak N)" when peak is above both ends of the statement, else "".
local function peak_words(peak, was, now)
  if not peak or peak <= was or peak <= now then return "" end
  -- no peak that reads as one of the ends (20.00 MiB beside 20.00 MiB)
  if fmt(peak) == fmt(now) or fmt(peak) == fmt(was) then return "" end
  return " (peak " .. fmt(peak) .. ")"
end

--- lines() -> the lines the live view prints for what changed since the
-- last call: pools whose counters moved or that handed out memory (and
-- what released memory), then
-- the new allocations, one line each or summarised when many.
function M.lines()
  local width = text.columns()
  local pools = {}
  local now = snapshot()
  local released, missed, before = release_parts()
  local used_peak = close_scope()
  local allocs, n = core.recent(last_alloc)
  -- pools that handed out memory this statement: their line shows even
  -- when the statement's frees brought used and pending back where they were
  local gave = {}
  for _, a in ipairs(allocs) do if a.pool then gave[a.pool] = true end end
  for id, s in pairs(now) do
    local was = last[id] or { reserved = 0, used = 0, pending = 0 }
    local access = access_parts(last[id], s)
    local rpeak = peak_words(before[id], was.reserved, s.reserved)
    local upeak = peak_words(used_peak[id], was.used, s.used)
    if s.reserved ~= was.reserved or s.used ~= was.used or s.pending ~= was.pending
       or released[id] or #access > 0 or upeak ~= "" or gave[id] then
      local parts = { paint("bold", s.name),
        "reserved " .. fmt(s.reserved) .. delta(s.reserved - was.reserved) .. rpeak,
        "used " .. fmt(s.used) .. delta(s.used - was.used) .. upeak,
        "pending " .. fmt(s.pending) .. delta(s.pending - was.pending) }
      for _, r in ipairs(released[id] or {}) do parts[#parts + 1] = r end
      for _, a in ipairs(access) do parts[#parts + 1] = a end
      pools[#pools + 1] = { id, fit({}, parts, width) }
    end
  end
  for id, was in pairs(last) do
    if not now[id] then pools[#pools + 1] = { id, { ("%s  destroyed"):format(was.name) } } end
  end
  table.sort(pools, function(a, b) return a[1] < b[1] end)
  local out = {}
  for _, p in ipairs(pools) do
    for _, l in ipairs(p[2]) do out[#out + 1] = l end
  end
  local ranges = vmm.snapshot()       -- VMM ranges made, mapped, unmapped or freed
  for _, l in ipairs(vmm.live_lines(last_ranges, ranges, width)) do out[#out + 1] = l end
  last_ranges = ranges
  if missed > 0 then
    out[#out + 1] = paint("dim", ("  (and %d earlier releases, not listed: poolsh.summary() counts them)")
                                 :format(missed))
  end
  for _, l in ipairs(collected_note(width) or {}) do out[#out + 1] = l end
  -- a Lua allocator's own buffers (its segments): its lines say what they are
  local mine = 0
  for i = #allocs, 1, -1 do
    if allocators.owner(allocs[i].buffer) then table.remove(allocs, i); mine = mine + 1 end
  end
  for _, l in ipairs(allocators.lines(width)) do out[#out + 1] = l end
  local counts = pool_counts()
  if n - last_alloc - mine > S.alloc_lines then
    alloc_summary(out, n - last_alloc - mine, allocs, counts, width)
  else
    for _, a in ipairs(allocs) do alloc_line(out, a, width) end
  end
  last, last_alloc, last_counts = now, n, counts
  if watching then open_scope() end
  return out
end

--- after(): the REPL calls it after each statement.
function M.after()
  if not watching then return end
  for _, l in ipairs(M.lines()) do io.stdout:write(l, "\n") end
end

return M
