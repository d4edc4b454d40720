--- poolsh.golden.statements: holds poolsh's statements in a golden record
-- (an allocation's sources or fresh, each pool's pending bytes, the
-- ledger's extents) to what the record measured: every buffer's offset,
-- the order of allocations and frees, and the driver's counters. It does
-- not use the ledger's code: it keeps its own picture of each pool's freed
-- ranges from the step names and recorded offsets (docs/fidelity.md).
local label = require "poolsh.golden.label"

local M = {}

-- Blocks occupy their size rounded up to this (CUDA pools' alignment).
M.align = 512

-- Records of more steps are not checked (the work grows with the square
-- of the steps; the scenarios have fewer than 100).
M.max_steps = 4000

local UNIT = { B = 1, KiB = 1 << 10, MiB = 1 << 20, GiB = 1 << 30 }

--- The bytes of a size label ("32 MiB + 1 B"), or nil.
local function parse_size(text)
  local n = 0
  for part in (text .. " + "):gmatch("(.-) %+ ") do
    local q, u = part:match("^(%d%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?) (%a+)$")   -- at most 12 digits
    if not q or not UNIT[u] then return nil end
    n = n + tonumber(q) * UNIT[u]
  end
  return n
end
M.parse_size = parse_size

local function round(n) return n + (M.align - n % M.align) % M.align end

local function show(n) return ("%d (%s)"):format(n, label.size(n)) end

local function range(lo, hi) return ("[+%s, +%s)"):format(label.size(lo), label.size(hi)) end

--- One pool's picture: buffers by name {lo, hi, live} and the freed
-- ranges not yet taken, {owner, lo, hi, certain} (certain: not possibly
-- released to the driver since the free).
local function new_pool() return { freed = {}, reserved = nil, settings = {} } end

--- The settings in a pool's creation step ("p1 = pool{a = 1, b = x}"),
-- as the runner writes them: name -> value text.
local function settings_of(text)
  local t = {}
  for k, v in (text or ""):gmatch("([%w_]+) = ([^,}]*)") do t[k] = v end
  return t
end

--- Takes [lo, hi) out of pool's freed ranges; returns per owner the bytes
-- taken, {certain = n, maybe = n}.
local function consume(pool, lo, hi)
  local taken, kept = {}, {}
  for _, f in ipairs(pool.freed) do
    local a, b = math.max(lo, f.lo), math.min(hi, f.hi)
    if a < b then
      local t = taken[f.owner] or { certain = 0, maybe = 0 }
      taken[f.owner] = t
      if f.certain then t.certain = t.certain + (b - a) else t.maybe = t.maybe + (b - a) end
      if f.lo < a then kept[#kept + 1] = { owner = f.owner, lo = f.lo, hi = a, certain = f.certain } end
      if b < f.hi then kept[#kept + 1] = { owner = f.owner, lo = b, hi = f.hi, certain = f.certain } end
    else
      kept[#kept + 1] = f
    end
  end
  pool.freed = kept
  return taken
end

-- The pool setting each reuse rule needs (a rule the pool turned off
-- cannot be why it reused memory).
local RULE_SETTING = { ["event dependency"] = "follow_event_dependencies",
                       ["opportunistic"] = "opportunistic",
                       ["internal dependency"] = "internal_dependencies" }

--- Checks a source's rule against the pool's settings and the streams.
local function check_rule(e, name, stream, settings, fail)
  local need = RULE_SETTING[e.rule]
  if need and settings[need] == "false" then
    fail(("poolsh says %s reused %s's memory by %s, but the pool was made with %s = false"):format(
      name, e.buffer, e.rule, need))
  elseif e.rule == "stream order" and stream and type(e.stream) == "string" and e.stream ~= stream then
    fail(("poolsh says %s (on %s) reused %s's memory by stream order, but that free was queued on %s"):format(
      name, stream, e.buffer, e.stream))
  end
end

--- Checks an allocation's statements against what it took (taken).
local function check_alloc(obs, name, buf, taken, fail)
  local where = ("%s at %s"):format(name, range(buf.lo, buf.hi))
  if obs.fresh then
    for owner, t in pairs(taken) do
      if t.certain > 0 then
        fail(("poolsh says %s took fresh memory, but %s overlaps %s's freed range by %s"):format(
          name, where, owner, show(t.certain)))
      end
    end
    return
  end
  local named, more = {}, false
  for _, e in ipairs(obs.sources) do
    if type(e) ~= "table" then
      fail(("%s: a source that is not a table"):format(name))
    elseif e.more then
      more = true
    elseif type(e.buffer) ~= "string" or math.type(e.bytes) ~= "integer" then
      fail(("%s: a source without a buffer name and a byte count"):format(name))
    else
      named[e.buffer] = true
      check_rule(e, name, buf.stream, buf.settings, fail)
      local t = taken[e.buffer]
      local got = t and (t.certain + t.maybe) or 0
      if got == 0 then
        fail(("poolsh says %s reused %s's memory (%s), but %s overlaps no freed range of %s"):format(
          name, e.buffer, show(e.bytes), where, e.buffer))
      elseif (t.maybe == 0 and e.bytes ~= got) or e.bytes > got then
        fail(("poolsh says %s took %s of %s's freed bytes, but %s overlaps %s of them"):format(
          name, show(e.bytes), e.buffer, where, show(got)))
      end
    end
  end
  if more then return end
  for owner, t in pairs(taken) do
    if t.certain > 0 and not named[owner] then
      fail(("poolsh names %s's sources without %s, but %s overlaps %s's freed range by %s"):format(
        name, owner, where, owner, show(t.certain)))
    end
  end
end

--- Checks a step's extents of pool pname against the buffers' offsets.
local function check_extents(list, pname, pool, buffers, counters, fail)
  local prev
  local pending = 0
  local seen = {}
  for _, x in ipairs(list) do
    if type(x) ~= "table" or math.type(x.offset) ~= "integer" or math.type(x.size) ~= "integer"
        or x.size < 0 or x.offset > math.maxinteger - x.size then
      fail(("%s: an extent without an integer offset and size"):format(pname)); return
    end
    if prev and prev.offset + prev.size > x.offset then
      fail(("%s: extents overlap: %s's %s and %s's %s"):format(pname, tostring(prev.owner),
        range(prev.offset, prev.offset + prev.size), tostring(x.owner), range(x.offset, x.offset + x.size)))
    end
    prev = x
    local b = buffers[x.owner]
    -- a live extent is the size asked for or its rounded footprint
    if x.state == "live" then
      seen[x.owner] = true
      if not b or not b.live or b.pool ~= pname then
        fail(("%s: the ledger shows %s live at %s, but the record has no such live buffer"):format(
          pname, tostring(x.owner), range(x.offset, x.offset + x.size)))
      elseif b.lo ~= x.offset or (x.size ~= b.size and x.size ~= b.hi - b.lo) then
        fail(("%s: the ledger shows %s live at %s, but it was allocated at %s"):format(
          pname, x.owner, range(x.offset, x.offset + x.size), range(b.lo, b.hi)))
      end
    else
      if x.state == "pending" then pending = pending + x.size end
      if b and (x.offset < b.lo or x.offset + x.size > b.hi) then
        fail(("%s: the ledger shows %s's freed bytes at %s, outside its former range %s"):format(
          pname, x.owner, range(x.offset, x.offset + x.size), range(b.lo, b.hi)))
      end
    end
  end
  for n, b in pairs(buffers) do
    if b.live and b.pool == pname and not seen[n] then
      fail(("%s: %s is live at %s, but the ledger's extents do not show it"):format(pname, n, range(b.lo, b.hi)))
    end
  end
  if type(counters) == "table" and math.type(counters.pending) == "integer" and counters.pending ~= pending then
    fail(("%s: the ledger's pending extents hold %s, but its pending counter says %s"):format(
      pname, show(pending), show(counters.pending)))
  end
end

--- Checks a pool's counters at one step.
local function check_counters(pname, c, fail)
  for _, k in ipairs { "reserved", "used", "live", "pending", "reserved_high", "used_high" } do
    if c[k] ~= nil and (math.type(c[k]) ~= "integer" or c[k] < 0) then
      fail(("%s: %s is %s, not a byte count"):format(pname, k, tostring(c[k])))
      return
    end
  end
  if c.used and c.pending and c.reserved and c.used + c.pending > c.reserved then
    fail(("%s: poolsh says %s pending, but the driver's used %s and reserved %s leave only %s"):format(
      pname, show(c.pending), show(c.used), show(c.reserved), show(c.reserved - c.used)))
  end
end

--- statements.check(rec) -> an array of problems, each {step = i, name =
-- the step's name, message}; empty when every statement holds.
function M.check(rec)
  local problems = {}
  local pools, buffers = {}, {}
  if type(rec.steps) == "table" and #rec.steps > M.max_steps then
    return { { step = M.max_steps + 1, name = "(record)", message = ("%d steps: statements are checked in records of at most %d")
      :format(#rec.steps, M.max_steps) } }
  end
  for i, obs in ipairs(rec.steps or {}) do
    if type(obs) ~= "table" then break end
    local function fail(msg) problems[#problems + 1] = { step = i, name = obs.step, message = msg } end
    local sname = type(obs.step) == "string" and obs.step or ""
    local made, opts = sname:match("^([%w_]+) = pool(%b{})$")
    if made and not obs.error then
      pools[made] = new_pool()
      pools[made].settings = settings_of(opts)
    end
    local set_pool, field, value = sname:match("^([%w_]+)%.([%w_]+) = (%S+)$")
    if set_pool and pools[set_pool] and not obs.error then pools[set_pool].settings[field] = value end
    local stream = sname:match("^b%d+ = [%w_]+:alloc%(.-, ([%w_]+)%)$")
    local bname, pname, size = sname:match("^(b%d+) = ([%w_]+):alloc%((.-), [%w_]+%)$")
    if not bname then bname, pname, size = sname:match("^(b%d+) = ([%w_]+):alloc%((.-)%)$") end
    local freed = sname:match("^(b%d+):free%(")
    if bname and not obs.error and math.type(obs.offset) == "integer" then
      local bytes = parse_size(size)
      if bytes and math.abs(obs.offset) < 1 << 60 then
        pools[pname] = pools[pname] or new_pool()
        local b = { pool = pname, lo = obs.offset, hi = obs.offset + round(bytes), size = bytes, live = true,
                    stream = stream or "default", settings = pools[pname].settings }
        buffers[bname] = b
        local taken = consume(pools[pname], b.lo, b.hi)
        if obs.fresh or type(obs.sources) == "table" then check_alloc(obs, bname, b, taken, fail) end
      end
    elseif freed and not obs.error and buffers[freed] and buffers[freed].live then
      local b = buffers[freed]
      b.live = false
      local pool = pools[b.pool]
      pool.freed[#pool.freed + 1] = { owner = freed, lo = b.lo, hi = b.hi, certain = true }
    end
    if type(obs.pools) == "table" then
      for pn, c in pairs(obs.pools) do
        if type(c) == "table" then
          check_counters(pn, c, fail)
          local pool = pools[pn]
          if pool and math.type(c.reserved) == "integer" then
            -- the driver gave memory back: which freed ranges went is not
            -- known, so none is certain to be held any more; all of them
            -- when it holds nothing
            if pool.reserved and c.reserved < pool.reserved then
              for _, f in ipairs(pool.freed) do f.certain = false end
              if c.reserved == 0 then pool.freed = {} end
            end
            pool.reserved = c.reserved
          end
        elseif c == "destroyed" then
          pools[pn] = nil
          for n, b in pairs(buffers) do if b.pool == pn then buffers[n] = nil end end
        end
      end
    end
    if type(obs.extents) == "table" then
      for pn, list in pairs(obs.extents) do
        if type(list) == "table" then
          check_extents(list, pn, pools[pn], buffers, type(obs.pools) == "table" and obs.pools[pn], fail)
        end
      end
    end
  end
  return problems
end

--- statements.report(problems) -> lines, one per problem.
function M.report(problems)
  local lines = {}
  for _, p in ipairs(problems) do
    lines[#lines + 1] = ("  statement fails at step %d (%s): %s"):format(p.step, tostring(p.name), p.message)
  end
  return lines
end

return M
