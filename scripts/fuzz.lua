-- Randomised operation-sequence fuzzer for poolsh (issue 8 §4).
-- Usage: poolsh --backend=sim scripts/fuzz.lua [--ops N] [--seed S]
--          [--seconds T] [--memory SIZE] [--tmpdir DIR] [--log] [--quiet]
-- One seed gives one sequence. After every step it checks the pools'
-- counters against its own model of the live buffers, and every read or
-- verify against the bytes it wrote. Any broken invariant, unexpected
-- error or unexpected success prints the seed, the step and the last steps,
-- and exits 1. docs/fuzzing.md explains what it covers and how to replay.
local poolsh = poolsh or require "poolsh"

-- Options ---------------------------------------------------------------

local opt = {seed = 1, tmpdir = os.getenv("TMPDIR") or "/tmp"}
local VALUE = {ops = "integer", seed = "integer", seconds = "integer", memory = "size", tmpdir = "path"}
do
  local args, i = {...}, 1
  while args[i] do
    local k = args[i]:match("^%-%-(%w+)$")
    if k == "log" or k == "quiet" then opt[k] = true; i = i + 1
    elseif VALUE[k] then
      local v = args[i + 1] or error("fuzz.lua: --" .. k .. " needs a value")
      if VALUE[k] == "integer" then
        v = math.tointeger(tonumber(v)) or error("fuzz.lua: --" .. k .. " must be an integer")
      end
      opt[k] = v; i = i + 2
    else
      error("fuzz.lua: unknown argument '" .. args[i] .. "' (see the usage at the top of the file)")
    end
  end
  if not opt.ops and not opt.seconds then opt.ops = 10000 end
end

math.randomseed(opt.seed)
local R = math.random
local function chance(p) return R() < p end
local function pick(t) return t[R(#t)] end
local sim = poolsh.backend() == "sim"
local MiB = 1024 * 1024

-- Failure reporting ------------------------------------------------------

local step, cur = 0, "start"
local ring, RING, nlog = {}, 40, 0
local counts = {}
local tally = {errors = 0, oom = 0, checked = 0}   -- expected errors, out of memory, bytes compared
local function log(s)
  nlog = nlog + 1
  ring[(nlog - 1) % RING + 1] = ("%d %s"):format(step, s)
  if opt.log then io.stderr:write(step, " ", s, "\n") end
end

local function fail(msg)
  io.stderr:write(("FUZZ FAILURE seed=%d step=%d op=%s: %s\n"):format(opt.seed, step, cur, msg))
  io.stderr:write("last steps (step op):\n")
  for i = math.max(1, nlog - RING + 1), nlog do
    io.stderr:write("  ", ring[(i - 1) % RING + 1], "\n")
  end
  io.stderr:write(("replay: poolsh --backend=sim scripts/fuzz.lua --seed %d --ops %d%s --log\n")
    :format(opt.seed, step, opt.memory and " --memory " .. opt.memory or ""))
  os.exit(1)
end
local function check(ok, fmt, ...) if not ok then fail(fmt:format(...)) end end

-- Calls that may raise ---------------------------------------------------
-- expect: "ok" (must succeed), or a table {ok = true|nil, patterns...}:
-- success allowed when ok is set, else an error matching a pattern.

local OOM = "^cudaErrorMemoryAllocation: out of memory allocating "
local DEAD = "attempt to use a %a+ poolsh%.%a+ %([bspe]%d+%)"

local function clean(msg)  -- the message without Lua's position prefix
  return (msg:gsub("^[^\n:]*:%d+: ", ""))
end

local function call(what, expect, f, ...)
  if opt.log then io.stderr:write("    ", what, "\n") end
  local r = table.pack(pcall(f, ...))
  if r[1] then
    if expect ~= "ok" and not expect.ok then
      fail(("%s succeeded, expected an error like '%s'"):format(what, expect[1]))
    end
    return true, table.unpack(r, 2, r.n)
  end
  local m = r[2]
  tally.errors = tally.errors + 1
  if type(m) ~= "string" then fail(("%s raised a %s, not a string"):format(what, type(m))) end
  if m == "" then fail(what .. " raised an empty message") end
  local body = clean(m)
  if body:gsub("internal_dependencies", ""):find("internal") then fail(what .. ": " .. m) end
  if expect == "ok" then fail(("%s raised: %s"):format(what, m)) end
  for _, pat in ipairs(expect) do
    if body:find(pat) then
      if pat == OOM then tally.oom = tally.oom + 1 end
      return false, body
    end
  end
  fail(("%s raised an unexpected message: %s"):format(what, m))
end

-- Model ------------------------------------------------------------------
-- Streams carry a count of operations queued (seq), how many the host
-- knows complete (done) and a vector clock of what their future work is
-- ordered after (vc). A buffer's busy[n] is the last op on stream n
-- touching it. Tables are keyed by stream number, never by object, so that
-- pairs() walks them in the same order in every run of a seed.

local streams, events, pools, bufs = {}, {}, {}, {}
local grave = {}          -- dead objects, for use-after-free/destroy
local limbo, limbo_ref = {}, setmetatable({}, {__mode = "v"})
local allst, nst = {}, 0   -- every stream record ever, by number
local SHADOW = 32768      -- buffers up to this size are shadowed byte by byte
local gran = poolsh.live.granularity()
local devmem = poolsh.device().total
local tmpn = 0

local function new_stream_rec(s)
  nst = nst + 1
  local st = {s = s, n = nst, seq = 0, done = 0, vc = {}, live = true}
  allst[nst] = st
  return st
end
local defst = new_stream_rec(poolsh.default_stream())
streams[1] = defst

local function bump(st) st.seq = st.seq + 1; return st.seq end
local function learn(st, q)    -- the host knows st's ops up to q are done
  if q > st.done then st.done = q end
end
local function synced(st)      -- st:sync() or equivalent returned
  learn(st, st.seq)
  for n, q in pairs(st.vc) do learn(allst[n], q) end
end
local function ordered(st, t, q)
  return st == t or t.done >= q or (st.vc[t.n] or 0) >= q
end
local dead_streams = {}   -- numbers of destroyed streams whose work is not known done
local taint = false       -- a racy free happened: new buffers' contents are unknown
local function device_synced()
  for _, st in ipairs(streams) do synced(st) end
  for n in pairs(dead_streams) do synced(allst[n]); dead_streams[n] = nil end
  taint = false
  for _, b in ipairs(bufs) do b.tainted = false end
  for _, p in ipairs(pools) do p.freed = false end
end

local function live_streams(nondefault)
  local t = {}
  for _, st in ipairs(streams) do
    if st.live and not (nondefault and st == defst) then t[#t + 1] = st end
  end
  return t
end

-- A spare event for ordering (any live event with timing or not).
local function spare_event()
  for _, ev in ipairs(events) do if ev.live then return ev end end
  local _, e = call("poolsh.event", "ok", poolsh.event, {timing = chance(0.5)})
  local ev = {e = e, live = true, timing = e.timing}
  events[#events + 1] = ev
  return ev
end

local function record(ev, st)
  ev.rec = {st = st, seq = st.seq, vc = {}}
  for n, q in pairs(st.vc) do ev.rec.vc[n] = q end
  ev.rec.vc[st.n] = st.seq
end
local function event_synced(ev)
  if ev.rec then for n, q in pairs(ev.rec.vc) do learn(allst[n], q) end end
end

-- Host waits until every op on t up to q is done.
local function host_wait(t, q)
  if t.done >= q then return end
  local r = R(3)
  if r == 1 and t.live then
    call("s:sync", "ok", t.s.sync, t.s); synced(t)
  elseif r == 2 and t.live then
    local ev = spare_event()
    call("e:record", "ok", ev.e.record, ev.e, t.s); record(ev, t)
    call("e:sync", "ok", ev.e.sync, ev.e); event_synced(ev)
  else
    call("poolsh.sync", "ok", poolsh.sync); device_synced()
  end
end

-- Make future ops on st (nil: the host) ordered after all busy ops of recs.
local function order(st, recs)
  for _, b in ipairs(recs) do
    for n, q in pairs(b.busy) do
      local t = allst[n]
      if t.done >= q then b.busy[n] = nil
      elseif not (st and ordered(st, t, q)) then
        if st and t.live and chance(0.6) then
          local ev = spare_event()
          call("e:record", "ok", ev.e.record, ev.e, t.s); record(ev, t)
          call("s:wait", "ok", st.s.wait, st.s, ev.e)
          for u, p in pairs(ev.rec.vc) do
            if p > (st.vc[u] or 0) then st.vc[u] = p end
          end
        else
          host_wait(t, q)
        end
      end
    end
  end
end
local function touch_busy(st, recs)
  local q = bump(st)
  for _, b in ipairs(recs) do b.busy[st.n] = q end
end

-- Shadow contents: small buffers keep data d and mask m ("\1" known);
-- large ones keep uni, the byte every byte holds, or nil.
local function randbytes(n)
  local t = {}
  for i = 1, (n + 7) // 8 do t[i] = string.pack("<i8", R(math.mininteger, math.maxinteger)) end
  return table.concat(t):sub(1, n)
end
local function shadow_new(b)
  if b.size <= SHADOW then
    b.d, b.m = ("\0"):rep(b.size), ("\0"):rep(b.size)
  else
    b.uni = nil
  end
end
-- Contents of [off, off+n): data, mask (n <= SHADOW), or uni byte.
local function shadow_get(b, off, n)
  if b.d then return b.d:sub(off + 1, off + n), b.m:sub(off + 1, off + n) end
  if n > SHADOW then return nil end
  if b.uni then return string.char(b.uni):rep(n), ("\1"):rep(n) end
  return ("\0"):rep(n), ("\0"):rep(n)
end
local function uniform_of(data, mask)
  if not data or mask:find("\0", 1, true) or #data == 0 then return nil end
  local c = data:byte(1)
  if data == string.char(c):rep(#data) then return c end
end
local function shadow_set(b, off, data, mask, uni, n)
  if b.tainted then data, mask, uni = nil, nil, nil end
  if b.d then
    if not data then data = ("\0"):rep(n); mask = data end
    b.d = b.d:sub(1, off) .. data .. b.d:sub(off + n + 1)
    b.m = b.m:sub(1, off) .. mask .. b.m:sub(off + n + 1)
  else
    uni = uni or uniform_of(data, mask)
    if not (uni and (n == b.size or b.uni == uni)) then uni = nil end
    b.uni = uni
  end
end
local function shadow_fill(b, byte)
  if b.tainted then return shadow_new(b) end
  if b.d then b.d, b.m = string.char(byte):rep(b.size), ("\1"):rep(b.size)
  else b.uni = byte end
end

local function compare(b, off, got, what)
  local n = #got
  if b.d then tally.checked = tally.checked + select(2, b.m:sub(off + 1, off + n):gsub("\1", ""))
  elseif b.uni then tally.checked = tally.checked + n end
  if b.d then
    local d, m = b.d:sub(off + 1, off + n), b.m:sub(off + 1, off + n)
    if not m:find("\0", 1, true) then
      if got == d then return end
    else
      local ok = true
      for s, e in m:gmatch("()\1+()") do
        if got:sub(s, e - 1) ~= d:sub(s, e - 1) then ok = false; break end
      end
      if ok then return end
    end
    for i = 1, n do
      if m:byte(i) == 1 and got:byte(i) ~= d:byte(i) then
        fail(("%s of %s: byte %d reads %d, wrote %d"):format(what, b.b.name, off + i - 1,
          got:byte(i), d:byte(i)))
      end
    end
  elseif b.uni and got ~= string.char(b.uni):rep(n) then
    local i = 1
    while got:byte(i) == b.uni do i = i + 1 end
    fail(("%s of %s: byte %d reads %d, filled with %d"):format(what, b.b.name, off + i - 1,
      got:byte(i), b.uni))
  end
end

-- Buffers -----------------------------------------------------------------

local function rsize()
  local r = R()
  if r < 0.6 then return R(1, 4096)
  elseif r < 0.85 then return R(4097, SHADOW)
  elseif r < 0.97 then return R(SHADOW + 1, 4 * MiB)
  else return R(4 * MiB, 96 * MiB) end
end
local function size_arg(n)   -- sometimes as a unit string
  local r = R(6)
  if r == 1 then return tostring(n) .. " B"
  elseif r == 2 and n % 1024 == 0 then return ("%d KiB"):format(n // 1024)
  elseif r == 3 then return n + 0.0 end
  return n
end

local function add_buf(b, pool, st)
  local rec = {b = b, size = b.size, kind = b.kind, pool = pool, st = st, busy = {},
               tainted = taint}
  shadow_new(rec)
  if st then rec.busy[st.n] = bump(st) end   -- the allocation is ordered on st
  bufs[#bufs + 1] = rec
  if pool then pool.bytes = pool.bytes + rec.size end
  return rec
end
local function remove_buf(rec)
  for i, b in ipairs(bufs) do
    if b == rec then table.remove(bufs, i); break end
  end
  if rec.pool then rec.pool.bytes = rec.pool.bytes - rec.size; rec.pool.freed = true end
  if #grave < 30 then grave[#grave + 1] = rec.b else grave[R(#grave)] = rec.b end
end
-- The stream work on b goes to by default, and where b:read runs.
local function buf_stream(rec)
  if rec.kind == "pool" and rec.st.live then return rec.st end
  return defst
end

local function pick_buf(pred)
  local c = {}
  for _, b in ipairs(bufs) do if not pred or pred(b) then c[#c + 1] = b end end
  return c[1] and pick(c)
end

-- Operations -----------------------------------------------------------
local before_alloc, after_alloc, oracle_synced   -- the oracle's, below

local ops = {}

function ops.stream()
  if #live_streams() > 8 then return end
  local o = {}
  if chance(0.7) then o.priority = R(-5, 0) end
  if chance(0.5) then o.blocking = chance(0.5) end
  if chance(0.05) then
    o.priority = pick{1, -6, 4294967295, math.mininteger, 0.5}
    call("poolsh.stream", {"priority"}, poolsh.stream, o); return
  end
  if chance(0.03) then
    call("poolsh.stream", {"unknown option 'colour'"}, poolsh.stream, {colour = 1}); return
  end
  local _, s = call("poolsh.stream", "ok", poolsh.stream, o)
  check(s.priority == (o.priority or 0) and s.blocking == (o.blocking ~= false) and s.live,
    "stream fields %s %s", s.priority, s.blocking)
  streams[#streams + 1] = new_stream_rec(s)
end

function ops.stream_destroy()
  if chance(0.05) then
    call("destroy default", {"the default stream cannot be destroyed"}, defst.s.destroy, defst.s)
    return
  end
  local c = live_streams(true)
  if #c < 2 then return end
  local st = pick(c)
  call("s:destroy", "ok", st.s.destroy, st.s)
  check(not st.s.live, "%s live after destroy", st.s.name)
  st.live = false
  if st.done < st.seq then dead_streams[st.n] = true end
  grave[#grave + 1] = st.s
  for i, x in ipairs(streams) do if x == st then table.remove(streams, i) break end end
  -- its work still runs: buffers' busy entries and dead_streams keep it in the model
end

function ops.event()
  if #events > 12 then
    local ev = table.remove(events, R(#events))
    if ev.live then call("e:destroy", "ok", ev.e.destroy, ev.e); ev.live = false end
    grave[#grave + 1] = ev.e
    return
  end
  local timing = chance(0.7)
  if chance(0.03) then
    call("poolsh.event", {"option 'timing' must be a boolean"}, poolsh.event, {timing = 1}); return
  end
  local _, e = call("poolsh.event", "ok", poolsh.event, {timing = timing})
  check(e.timing == timing, "event timing field")
  events[#events + 1] = {e = e, live = true, timing = timing}
end

function ops.record()
  local st = pick(live_streams())
  if #events == 0 or chance(0.2) then
    local _, e = call("s:record", "ok", st.s.record, st.s)
    local ev = {e = e, live = true, timing = true}
    events[#events + 1] = ev
    record(ev, st)
    return
  end
  local ev = pick(events)
  if not ev.live then return end
  if chance(0.5) then call("e:record", "ok", ev.e.record, ev.e, st ~= defst and st.s or nil)
  else call("s:record", "ok", st.s.record, st.s, ev.e) end
  record(ev, st)
end

function ops.wait()
  local ev = events[1] and pick(events)
  if not ev or not ev.live then return end
  local st = pick(live_streams())
  call("s:wait", "ok", st.s.wait, st.s, ev.e)
  if ev.rec then
    for t, q in pairs(ev.rec.vc) do if q > (st.vc[t] or 0) then st.vc[t] = q end end
  end
end

function ops.event_sync()
  local ev = events[1] and pick(events)
  if not ev or not ev.live then return end
  local r = R(3)
  if r == 1 then
    call("e:sync", "ok", ev.e.sync, ev.e); event_synced(ev)
  elseif r == 2 then
    local _, done = call("e:query", "ok", ev.e.query, ev.e)
    check(type(done) == "boolean", "e:query returned %s", type(done))
    if not ev.rec then check(done, "an event never recorded reads as not completed") end
    if done then event_synced(ev) end
  else
    local ev2 = pick(events)
    if not ev2.live then return end
    if not (ev.timing and ev2.timing) then
      call("e:elapsed", {"was created with timing=false"}, ev.e.elapsed, ev.e, ev2.e)
    elseif not (ev.rec and ev2.rec) then
      call("e:elapsed", {"^cudaErrorInvalidResourceHandle"}, ev.e.elapsed, ev.e, ev2.e)
    else
      local ok, ms = call("e:elapsed", {ok = true, "^cudaErrorNotReady"}, ev.e.elapsed, ev.e, ev2.e)
      if ok then check(type(ms) == "number" and ms == ms, "elapsed returned %s", tostring(ms)) end
    end
  end
end

function ops.sync()
  local r = R(5)
  if r <= 2 then
    local st = pick(live_streams())
    call("s:sync", "ok", st.s.sync, st.s); synced(st)
  elseif r == 3 then
    local st = pick(live_streams())
    local _, done = call("s:query", "ok", st.s.query, st.s)
    if done then synced(st) end
  elseif r == 4 then
    call("poolsh.sync", "ok", poolsh.sync); device_synced(); oracle_synced()
  else
    call("poolsh.sleep", "ok", poolsh.sleep, R() * 0.05)
  end
end

local function pool_options()
  local o = {}
  if chance(0.3) then o.location = "host" end
  if chance(0.4) then o.max_size = size_arg(pick{0, MiB, 33 * MiB, 64 * MiB + 1, R(1, 128 * MiB)}) end
  if chance(0.5) then o.release_threshold = pick{0, 1, 17 * MiB, 40 * MiB, "max", math.huge, "64 MiB"} end
  for _, k in ipairs{"follow_event_dependencies", "opportunistic", "internal_dependencies"} do
    if chance(0.3) then o[k] = chance(0.5) end
  end
  return o
end

function ops.pool()
  local live = 0
  for _, p in ipairs(pools) do if p.live then live = live + 1 end end
  if live > 6 then return end
  if chance(0.05) then
    local bad = pick{
      {{location = "moon"}, "location must be \"device\" or \"host\""},
      {{device = 1}, "^cudaErrorInvalidValue"},
      {{device = -1}, "device must be a device index"},
      {{max_size = -1}, "max_size: size must not be negative"},
      {{colour = 1}, "unknown option 'colour'"},
      {{opportunistic = 1}, "opportunistic must be a boolean"},
      {{release_threshold = "lots"}, "release_threshold: invalid size"},
    }
    call("poolsh.pool", {bad[2]}, poolsh.pool, bad[1]); return
  end
  if chance(0.1) and not pools.default then
    local _, p = call("poolsh.default_pool", "ok", poolsh.default_pool)
    check(p.default and p == poolsh.default_pool(), "default pool is one object")
    pools.default = {p = p, live = true, bytes = 0, max = 0, default = true, used_seen = 0}
    pools[#pools + 1] = pools.default
    return
  end
  local o = pool_options()
  local ok, p = call("poolsh.pool", {ok = true, "^cudaErrorMemoryAllocation", "^cudaErrorOutOfMemory"},
    poolsh.pool, o)
  if not ok then return end
  local max = o.max_size and poolsh.size(o.max_size) or 0
  check(p.max_size == max and p.location == (o.location or "device") and not p.default,
    "pool fields: max_size %s location %s", p.max_size, p.location)
  pools[#pools + 1] = {p = p, live = true, bytes = 0, max = max, used_seen = 0}
end

local function pick_pool(live)
  local c = {}
  for _, p in ipairs(pools) do if p.live or not live then c[#c + 1] = p end end
  return c[1] and pick(c)
end

function ops.pool_destroy()
  local p = pick_pool(true)
  if not p then return end
  if p.default then
    call("destroy default pool", {"the default pool cannot be destroyed"}, p.p.destroy, p.p)
    return
  end
  call("p:destroy", "ok", p.p.destroy, p.p)
  p.live = false
  grave[#grave + 1] = p.p
  call("p:stats destroyed", {DEAD}, p.p.stats, p.p)
end

local SETTINGS = {"follow_event_dependencies", "opportunistic", "internal_dependencies"}
function ops.pool_attr()
  local p = pick_pool(true)
  if not p then return end
  local pp = p.p
  local r = R(8)
  if r == 1 then
    local v = pick{0, 1, 17 * MiB, 33 * MiB, "max", math.huge, "1 GiB", 2 ^ 40}
    call("set release_threshold", "ok", function() pp.release_threshold = v end)
    local want = (v == "max" or v == math.huge) and math.huge or poolsh.size(v)
    check(pp.release_threshold == want, "release_threshold reads %s after setting %s",
      tostring(pp.release_threshold), tostring(v))
  elseif r <= 4 then
    local k, v = pick(SETTINGS), chance(0.5)
    call("set " .. k, "ok", function() pp[k] = v end)
    check(pp[k] == v, "%s reads %s after setting %s", k, tostring(pp[k]), tostring(v))
  elseif r == 5 then
    local k = pick(SETTINGS)
    call("set " .. k, {k .. " must be a boolean"}, function() pp[k] = 1 end)
  elseif r == 6 then
    call("set field", {"has no settable field 'max_size'", "has no settable field 'colour'"},
      function() pp[pick{"max_size", "colour"}] = 1 end)
  elseif r == 7 then
    call("set release_threshold", {"release_threshold: "},
      function() pp.release_threshold = pick{-1, "soon", 1.5} end)
  else
    local _, a, b, c = call("odd keys", "ok", function() return pp[{}], pp[1], pp.nonesuch end)
    check(a == nil and b == nil and c == nil, "odd keys read non-nil")
  end
end

function ops.trim()
  local p = pick_pool(true)
  if not p then return end
  local before = p.p:stats{estimates = false}
  local keep = pick{0, 0, R(0, 64 * MiB), "32 MiB"}
  call("p:trim", "ok", p.p.trim, p.p, keep)
  local after = p.p:stats{estimates = false}
  check(after.reserved <= before.reserved, "trim grew reserved %d -> %d", before.reserved, after.reserved)
  if sim and after.used == 0 and not p.freed and (p.limbo or 0) == 0 then
    -- nothing live, every free retired by a device sync (a query teaches
    -- poolsh but retires nothing): the sim keeps ceil(keep / granularity) chunks
    local k = poolsh.size(keep)
    check(after.reserved <= (k + gran - 1) // gran * gran,
      "%s: trim(%d) left %d reserved with nothing used or pending", p.p.name, k, after.reserved)
  end
end

function ops.reset_high()
  local p = pick_pool(true)
  if not p then return end
  collectgarbage("stop")   -- no finalizer may free a buffer between the two calls
  call("p:reset_high", "ok", p.p.reset_high, p.p)
  local s = p.p:stats{estimates = false}
  collectgarbage("restart")
  check(s.used_high == s.used and s.reserved_high == s.reserved,
    "after reset_high: used %d high %d, reserved %d high %d", s.used, s.used_high, s.reserved, s.reserved_high)
  p.used_seen, p.res_high = s.used, s.reserved_high
end

local RULES = {["stream order"] = true, ["event dependency"] = true, ["host synchronisation"] = true,
  opportunistic = true, ["internal dependency"] = true}
function ops.alloc()
  if #bufs > 300 then return end
  local p = pick_pool(false)
  if not p then return end
  local st = pick(live_streams())
  local n = rsize()
  if not p.live then call("p:alloc destroyed", {DEAD}, p.p.alloc, p.p, n, st.s); return end
  if chance(0.03) then
    call("p:alloc", {"size must be at least 1 byte", "size must not be negative",
      "size must be an integer", "invalid size"}, p.p.alloc, p.p, pick{0, -1, 1.5, "lots"}, st.s)
    return
  end
  local s_arg = (st ~= defst or chance(0.5)) and st.s or nil
  collectgarbage("stop")   -- no finalizer may free a buffer between the two looks
  local was = before_alloc(p)
  local ok, b = call("p:alloc", {ok = true, OOM}, p.p.alloc, p.p, size_arg(n), s_arg)
  if ok then after_alloc(p, b, was) end
  collectgarbage("restart")
  if not ok then return end
  check(b.size == n and b.kind == "pool" and b.pool == p.p and b.stream == st.s and b.live,
    "alloc fields: size %d kind %s", b.size, b.kind)
  check(not b.reused or (math.type(b.reused_from) == "integer" and RULES[b.reuse_rule]),
    "%s reused: reused_from %s, reuse_rule %s", b.name, tostring(b.reused_from), tostring(b.reuse_rule))
  add_buf(b, p, st)
end

local host_kinds = {"malloc", "pinned", "pageable"}
function ops.other_alloc()
  local kind = pick(host_kinds)
  local nk = 0
  for _, b in ipairs(bufs) do if b.kind == kind then nk = nk + 1 end end
  if nk > 12 then return end
  local n = rsize()
  if chance(0.03) then
    call("poolsh." .. kind, {"size must be at least 1 byte"}, poolsh[kind], 0); return
  end
  local ok, b
  if kind == "pinned" then
    local o = {}
    for _, k in ipairs{"portable", "mapped", "write_combined"} do
      if chance(0.3) then o[k] = chance(0.5) end
    end
    if chance(0.03) then
      call("poolsh.pinned", {"unknown option 'colour'"}, poolsh.pinned, n, {colour = true}); return
    end
    ok, b = call("poolsh.pinned", {ok = true, OOM}, poolsh.pinned, size_arg(n), o)
  else
    ok, b = call("poolsh." .. kind, {ok = true, OOM}, poolsh[kind], size_arg(n))
  end
  if not ok then return end
  check(b.size == n and b.kind == kind and b.pool == nil and b.stream == nil, "%s fields", kind)
  local rec = add_buf(b, nil, nil)
  if kind == "pageable" and chance(0.5) then
    call("poolsh.register", "ok", poolsh.register, b)
  end
end

function ops.register()
  local rec = pick_buf(function(b) return b.kind == "pageable" end)
  if not rec then
    local o = pick_buf()
    if o then call("poolsh.register", {"pageable buffer expected"}, poolsh.register, o.b) end
    return
  end
  order(nil, {rec})   -- no copy may be in flight while it changes
  if rec.b.registered then
    if chance(0.2) then call("poolsh.register", {"is already registered"}, poolsh.register, rec.b) end
    call("poolsh.unregister", "ok", poolsh.unregister, rec.b)
    check(not rec.b.registered, "registered after unregister")
  else
    if chance(0.2) then call("poolsh.unregister", {"is not registered"}, poolsh.unregister, rec.b) end
    call("poolsh.register", "ok", poolsh.register, rec.b)
    check(rec.b.registered, "not registered after register")
  end
end

-- Freeing: explicit on a stream, explicit on the allocating stream, by
-- dropping the last reference (the collector frees it later), rarely racy.
function ops.free()
  local rec = pick_buf()
  if not rec then return end
  local b = rec.b
  if rec.kind ~= "pool" then
    if chance(0.05) then
      call("b:free on a stream", {"only pool buffers are freed on a stream"}, b.free, b, defst.s)
    end
    order(nil, {rec})
    call("b:free", "ok", b.free, b)
  else
    local st
    if not rec.st.live and chance(0.3) then
      call("b:free", {"was destroyed: pass a stream to free it on"}, b.free, b)
    end
    if rec.st.live and chance(0.5) then st = rec.st else st = pick(live_streams()) end
    if chance(0.02) and next(rec.busy) then
      -- racy: the free is not ordered after work on other streams. That work
      -- may write the memory after it is reused (new buffers are unknown
      -- until a device sync) or copy from it after (so what it copies to is)
      taint = true
      for n, q in pairs(rec.busy) do
        if allst[n] ~= st and allst[n].done < q then
          for _, o in ipairs(bufs) do
            if (o.busy[n] or 0) > allst[n].done then o.tainted = true; shadow_new(o) end
          end
        end
      end
    else
      order(st, {rec})
    end
    if st == rec.st and chance(0.5) then call("b:free", "ok", b.free, b)
    else call("b:free(s)", "ok", b.free, b, st.s) end
    bump(st)
  end
  check(not b.live, "%s live after free", b.name)
  remove_buf(rec)
  if chance(0.1) then call("double free", {DEAD}, b.free, b) end
end

local function drop(rec)
  for n, q in pairs(rec.busy) do host_wait(allst[n], q) end   -- its free's stream is not known
  limbo[rec.b.id] = {pool = rec.pool, size = rec.size}
  limbo_ref[rec.b.id] = rec.b
  if rec.pool then rec.pool.limbo = (rec.pool.limbo or 0) + rec.size end
  for i, b in ipairs(bufs) do if b == rec then table.remove(bufs, i) break end end
  if rec.pool then rec.pool.bytes = rec.pool.bytes - rec.size end
end
function ops.drop()
  local rec = pick_buf()
  if rec then drop(rec) end
end

local function full_collect()
  collectgarbage("collect")
  for id, l in pairs(limbo) do
    if limbo_ref[id] == nil then
      if l.pool then l.pool.limbo = l.pool.limbo - l.size; l.pool.freed = true end
      limbo[id] = nil
    end
  end
end

function ops.gc()
  local r = R(6)
  if r <= 2 then full_collect()
  elseif r <= 4 then collectgarbage("step", R(0, 64))
  elseif r == 5 then collectgarbage(pick{"incremental", "generational"})
  else
    check(type(collectgarbage("count")) == "number", "collectgarbage count")
  end
end

local function range(rec)   -- a random offset and length inside rec, sometimes outside
  local size = rec.size
  if chance(0.05) then return size + R(1, 100), R(0, 10), false end
  if chance(0.05) then local o = size - R(0, math.min(size, 100)); return o, size - o + R(1, 100), false end
  local o = R(0, size - 1)
  local n = R(0, math.min(size - o, SHADOW))
  return o, n, true
end

function ops.write()
  local rec = pick_buf()
  if not rec then return end
  local off, n, valid = range(rec)
  local data = randbytes(n)
  if not valid then
    if opt.log then io.stderr:write("    write ", #data, " bytes at ", off, " of ", rec.size, "\n") end
    call("b:write", {"out of bounds of b%d+", "beyond the end of b%d+"}, rec.b.write, rec.b, off, data)
    return
  end
  local host = rec.kind == "pinned" or rec.kind == "pageable"
  local st = buf_stream(rec)
  order(not host and st or nil, {rec})
  local _, ret = call("b:write", "ok", rec.b.write, rec.b, size_arg(off), data)
  check(ret == rec.b, "b:write returns the buffer")
  if not host then synced(st); rec.busy = {} end
  shadow_set(rec, off, data, ("\1"):rep(n), nil, n)
  if not rec.d and chance(0.5) and not rec.tainted then   -- large: read it straight back
    local _, got = call("b:read", "ok", rec.b.read, rec.b, off, n)
    check(got == data, "%s: %d bytes written at %d read back differently", rec.b.name, n, off)
  end
end

function ops.read()
  local rec = pick_buf()
  if not rec then return end
  local off, n, valid = range(rec)
  if not valid then
    call("b:read", {"out of bounds of b%d+", "beyond the end of b%d+"}, rec.b.read, rec.b, off, n)
    return
  end
  local host = rec.kind == "pinned" or rec.kind == "pageable"
  local st = buf_stream(rec)
  order(not host and st or nil, {rec})
  local _, got
  if chance(0.1) and rec.size - off <= SHADOW then
    _, got = call("b:read", "ok", rec.b.read, rec.b, off); n = rec.size - off
  elseif chance(0.05) and rec.size <= SHADOW then
    _, got = call("b:read", "ok", rec.b.read, rec.b); off, n = 0, rec.size
  else
    _, got = call("b:read", "ok", rec.b.read, rec.b, off, size_arg(n))
  end
  if not host then synced(st); rec.busy = {} end
  check(type(got) == "string" and #got == n, "b:read returned %d bytes, asked %d", #tostring(got), n)
  compare(rec, off, got, "read")
end

local function kernel_stream(rec)
  if chance(0.3) then return nil, buf_stream(rec) end
  local st = pick(live_streams())
  return st.s, st
end

local function kernel_ok(rec)
  return not (rec.kind == "pageable" and not rec.b.registered)
end

function ops.fill()
  local rec = pick_buf()
  if not rec then return end
  local byte = R(0, 255)
  if not kernel_ok(rec) then
    call("poolsh.fill", {"is pageable memory, which kernels cannot reach"}, poolsh.fill, rec.b, byte)
    return
  end
  if chance(0.03) then
    call("poolsh.fill", {"byte must be in 0..255", "number has no integer representation"}, poolsh.fill, rec.b, pick{256, -1, 1.5})
    return
  end
  local s, st = kernel_stream(rec)
  order(st, {rec})
  call("poolsh.fill", "ok", poolsh.fill, rec.b, byte, s)
  touch_busy(st, {rec})
  shadow_fill(rec, byte)
end

function ops.touch()
  local rec = pick_buf()
  if not rec then return end
  if not kernel_ok(rec) then
    call("poolsh.touch", {"is pageable memory, which kernels cannot reach"}, poolsh.touch, rec.b)
    return
  end
  local s, st = kernel_stream(rec)
  order(st, {rec})
  call("poolsh.touch", "ok", poolsh.touch, rec.b, s)
  touch_busy(st, {rec})
end

local verify_buf
function ops.verify()
  local rec = pick_buf()
  if not rec then return end
  if not kernel_ok(rec) then
    call("poolsh.verify", {"is pageable memory, which kernels cannot reach"}, poolsh.verify, rec.b, 0)
    return
  end
  local byte
  if rec.uni and chance(0.7) then byte = rec.uni
  elseif rec.d and chance(0.7) then byte = rec.d:byte(R(rec.size))
  else byte = R(0, 255) end
  verify_buf(rec, byte, kernel_stream(rec))
end

-- verify(rec, byte) on stream s (its record st), checked against the shadow.
function verify_buf(rec, byte, s, st)
  order(st, {rec})
  local _, ok, at = call("poolsh.verify", "ok", poolsh.verify, rec.b, byte, s)
  touch_busy(st, {rec})
  synced(st)
  rec.busy = {}
  -- what the shadow says
  local first_bad, all_known
  if rec.d then
    all_known = not rec.m:find("\0", 1, true)
    local ch = string.char(byte)
    for s0, e0 in rec.m:gmatch("()\1+()") do
      local run = rec.d:sub(s0, e0 - 1)
      if run ~= ch:rep(#run) then
        local i = 1
        while run:byte(i) == byte do i = i + 1 end
        first_bad = s0 + i - 2
        break
      end
    end
  else
    all_known = rec.uni ~= nil
    if rec.uni and rec.uni ~= byte then first_bad = 0 end
  end
  if ok then
    check(at == nil, "verify returned true and %s", tostring(at))
    check(not first_bad, "verify(%s, %d) true but byte %d was written otherwise", rec.b.name, byte, first_bad or -1)
  else
    check(ok == false and math.type(at) == "integer" and at >= 0 and at < rec.size,
      "verify returned %s, %s", tostring(ok), tostring(at))
    check(not (all_known and not first_bad), "verify(%s, %d) false at %d, every byte was %d",
      rec.b.name, byte, at, byte)
    if first_bad then
      check(at <= first_bad, "verify(%s, %d) says first difference at %d, model at %d",
        rec.b.name, byte, at, first_bad)
    end
    if rec.d and rec.m:byte(at + 1) == 1 then
      check(rec.d:byte(at + 1) ~= byte, "verify(%s, %d) false at %d, which holds that byte",
        rec.b.name, byte, at)
    end
  end
end

-- Fill a pool until it runs out of memory, then drop or free what it got:
-- the next allocation that fails collects the dropped ones and retries.
function ops.exhaust()
  local p = pick_pool(true)
  if not p then return end
  local st = pick(live_streams())
  local n = math.max(MiB, devmem // R(3, 12))
  local got = {}
  for _ = 1, 40 do
    local ok, b = call("p:alloc", {ok = true, OOM}, p.p.alloc, p.p, n, st.s)
    if not ok then break end
    got[#got + 1] = add_buf(b, p, st)
  end
  for _, rec in ipairs(got) do
    if chance(0.5) then drop(rec)
    else call("b:free", "ok", rec.b.free, rec.b); bump(st); remove_buf(rec) end
  end
end

-- Reuse across streams: a block freed on t behind pending work, a block of
-- the same size allocated and filled on s, checked after t's work is done.
function ops.churn()
  local p, ls = pick_pool(true), live_streams()
  if not p or #ls < 2 then return end
  local t, s = pick(ls), pick(ls)
  local n = R(1, 65536)
  local ok, a = call("p:alloc", {ok = true, OOM}, p.p.alloc, p.p, n, t.s)
  if not ok then return end
  local ra = add_buf(a, p, t)
  local x, y = R(0, 255), R(0, 255)
  call("poolsh.fill", "ok", poolsh.fill, a, x, t.s); touch_busy(t, {ra}); shadow_fill(ra, x)
  call("poolsh.spin", "ok", poolsh.spin, t.s, R() * 2); bump(t)
  call("b:free", "ok", a.free, a); bump(t); remove_buf(ra)
  if chance(0.3) then
    local ev = spare_event()
    call("e:record", "ok", ev.e.record, ev.e, t.s); record(ev, t)
    call("s:wait", "ok", s.s.wait, s.s, ev.e)
    for u, q in pairs(ev.rec.vc) do if q > (s.vc[u] or 0) then s.vc[u] = q end end
  end
  local ok2, b = call("p:alloc", {ok = true, OOM}, p.p.alloc, p.p, n, s.s)
  if not ok2 then return end
  local rb = add_buf(b, p, s)
  call("poolsh.fill", "ok", poolsh.fill, b, y, s.s); touch_busy(s, {rb}); shadow_fill(rb, y)
  verify_buf(rb, y, s.s, s)
  if chance(0.5) then call("poolsh.sync", "ok", poolsh.sync); device_synced()
  else call("s:sync", "ok", t.s.sync, t.s); synced(t) end
  verify_buf(rb, y, s.s, s)
end

function ops.copy()
  local dst, src = pick_buf(), pick_buf()
  if not dst then return end
  if chance(0.2) then src = dst end
  local o = {}
  local doff, soff, n
  local r = R(10)
  if r == 1 then         -- out of bounds or beyond the end
    o.src_offset = src.size + R(1, 10); o.bytes = R(0, 10)
    call("poolsh.copy", {"offset beyond the end of b%d+", "bytes out of bounds"}, poolsh.copy, dst.b, src.b, o)
    return
  elseif r == 2 then
    o.bytes = math.min(src.size, dst.size) + R(1, 10)
    call("poolsh.copy", {"bytes out of bounds"}, poolsh.copy, dst.b, src.b, o)
    return
  end
  local maxn = math.min(src.size, dst.size, SHADOW)
  n = R(0, maxn)
  soff, doff = R(0, src.size - n), R(0, dst.size - n)
  if src == dst and n > 0 and math.abs(soff - doff) < n then
    o.src_offset, o.dst_offset, o.bytes = soff, doff, n
    call("poolsh.copy", {"source and destination overlap"}, poolsh.copy, dst.b, src.b, o)
    return
  end
  if soff ~= 0 or chance(0.5) then o.src_offset = size_arg(soff) end
  if doff ~= 0 or chance(0.5) then o.dst_offset = size_arg(doff) end
  if n ~= src.size - soff or chance(0.5) then o.bytes = size_arg(n) end
  local st
  if chance(0.7) then
    st = pick(live_streams()); o.stream = st.s
  else
    st = dst.kind == "pool" and buf_stream(dst) or src.kind == "pool" and buf_stream(src) or defst
  end
  order(st, {dst, src})
  local data, mask = shadow_get(src, soff, n)
  call("poolsh.copy", "ok", poolsh.copy, dst.b, src.b, o)
  touch_busy(st, {dst, src})
  shadow_set(dst, doff, data, mask, (not src.d) and src.uni or nil, n)
end

function ops.spin()
  local r = R(20)
  if r == 1 then
    call("poolsh.spin", {"duration must be >= 0 and finite", "duration above the limit"},
      poolsh.spin, nil, pick{-1, 1 / 0, 0 / 0, 2e12})
    return
  end
  local st = pick(live_streams())
  local d = pick{R() * 0.2, 0, "50 us", "1 ms"}
  call("poolsh.spin", "ok", poolsh.spin, st ~= defst and st.s or (chance(0.5) and st.s or nil), d)
  bump(st)
end

-- Scoped buffers and errors inside pcall.
function ops.scoped()
  local p = pick_pool(true)
  if not p then return end
  local st = pick(live_streams())
  local n = R(1, 8192)
  local boom = chance(0.5)
  p.freed = true
  local filled, verified = false, false
  local ok, msg = pcall(function()
    local b <close> = p.p:alloc(n, st.s)   -- may run out of memory
    poolsh.fill(b, 7, st.s); filled = true
    check(poolsh.verify(b, 7, st.s), "verify of a scoped buffer failed"); verified = true
    if boom then error("fuzz boom") end
    return b
  end)
  if filled then bump(st) end
  if verified then bump(st); synced(st) end
  if not ok then
    if type(msg) ~= "string" or not (msg:find("fuzz boom", 1, true) or clean(msg):find(OOM)) then
      fail("scoped error: " .. tostring(msg))
    end
  else
    check(not msg.live, "a <close> buffer is live after its scope")
  end
end

local function check_dead_error(what, f, ...)
  call(what, {DEAD}, f, ...)
end

function ops.dead()
  local o = grave[1] and pick(grave)
  if not o then return end
  local mt = getmetatable(o).__name
  local s = defst.s
  if mt == "poolsh.Buffer" then
    local r = R(6)
    if r == 1 then check_dead_error("b:read freed", o.read, o)
    elseif r == 2 then check_dead_error("b:write freed", o.write, o, 0, "x")
    elseif r == 3 then check_dead_error("fill freed", poolsh.fill, o, 1)
    elseif r == 4 then check_dead_error("copy freed", poolsh.copy, o, o)
    elseif r == 5 then check_dead_error("b:free freed", o.free, o)
    else check(not o.live and o.size >= 1 and tostring(o):find("freed"), "freed buffer fields") end
  elseif mt == "poolsh.Stream" then
    local r = R(5)
    if r == 1 then check_dead_error("s:sync destroyed", o.sync, o)
    elseif r == 2 then check_dead_error("s:destroy destroyed", o.destroy, o)
    elseif r == 3 then check_dead_error("spin destroyed", poolsh.spin, o, 0)
    elseif r == 4 and pools[1] and pools[1].live then
      check_dead_error("alloc on destroyed stream", pools[1].p.alloc, pools[1].p, 1, o)
    else check(not o.live and tostring(o):find("destroyed"), "destroyed stream fields") end
  elseif mt == "poolsh.Event" then
    local r = R(4)
    if r == 1 then check_dead_error("e:record destroyed", o.record, o)
    elseif r == 2 then check_dead_error("e:sync destroyed", o.sync, o)
    elseif r == 3 then check_dead_error("s:wait destroyed", s.wait, s, o)
    else check_dead_error("e:destroy destroyed", o.destroy, o) end
  elseif mt == "poolsh.Pool" then
    local r = R(4)
    if r == 1 then check_dead_error("p:trim destroyed", o.trim, o)
    elseif r == 2 then check_dead_error("read setting destroyed", function() return o.opportunistic end)
    elseif r == 3 then check_dead_error("p:reset_high destroyed", o.reset_high, o)
    else check_dead_error("p:destroy destroyed", o.destroy, o) end
  end
end

-- Views, traces and odd arguments: they must not raise, or raise cleanly.
local function tmpfile(ext)
  tmpn = tmpn + 1
  return ("%s/poolsh-fuzz-%d-%d.%s"):format(opt.tmpdir, opt.seed, tmpn, ext)
end
function ops.trace()
  local t = poolsh.trace
  local r = R(8)
  if r == 1 then
    if t.recording() then t.stop() else t.start() end
  elseif r == 2 or t.count() > 4000 then
    t.clear(); check(t.count() == 0, "trace.clear left events")
  elseif r <= 4 then
    local ext = pick{"json", "csv", "pickle", "html"}
    local path = tmpfile(ext)
    local _, ret = call("trace.save", "ok", t.save, path)
    check(ret == path, "trace.save returned %s", tostring(ret))
    local f = io.open(path, "rb")
    check(f and f:seek("end") > 0, "trace.save wrote nothing to %s", path)
    f:close(); os.remove(path)
  elseif r == 5 then
    local bad = pick{
      {tmpfile("txt"), "unsupported extension"},
      {opt.tmpdir .. "/no-such-dir/x.json", "cannot open"},
      {42, "path expected"}}
    call("trace.save", {bad[2]}, t.save, bad[1])
  elseif r == 6 then
    local n = t.count()
    local ev = t.events(math.max(1, n - 20))
    check(#ev <= 21, "trace.events returned %d", #ev)
    call("trace.meta", "ok", t.meta, ev)
  else
    call("trace.events", {"number has no integer representation", "number expected"},
      t.events, 1.5)
  end
end

function ops.view()
  local r = R(7)
  if r == 1 then call("live.show_lines", "ok", poolsh.live.show_lines)
  elseif r == 2 then
    local p = pick_pool(false)
    if p then
      call("live.map_lines", p.live and "ok" or {DEAD}, poolsh.live.map_lines, p.p)
    end
  elseif r == 3 then
    local _, l = call("poolsh.leaks", "ok", poolsh.leaks)
    local n = 0
    for _, b in ipairs(bufs) do if b.b.live then n = n + 1 end end
    check(#l >= n, "poolsh.leaks lists %d buffers, %d are held", #l, n)
  elseif r == 4 then call("poolsh.core.pending", "ok", poolsh.core.pending, R(0, 10))
  elseif r == 5 then call("live.lines", "ok", poolsh.live.lines)
  elseif r == 6 then
    local d = poolsh.device()
    check(d.free >= 0 and d.free <= d.total, "device free %d of %d", d.free, d.total)
  else
    local v = pick{-1, "lots", {}, "1.5 B", 1 / 0}
    call("poolsh.size", {"^poolsh.size: "}, poolsh.size, v)
    call("poolsh.duration", {"^poolsh.duration: "}, poolsh.duration, pick{-1, "soon", {}, 0 / 0})
    call("poolsh.fmt_duration", {"number expected"}, poolsh.fmt_duration, "x")
  end
end

-- The oracle (issue 18) -----------------------------------------------------
-- The sim's own picture of a pool (poolsh.core._sim_truth) against the
-- ledger's (poolsh.core.blocks(p, true)): live extents are the sim's live
-- blocks, byte for byte; every byte the ledger says freed is freed memory
-- in the sim (never live, never fresh), and on the sim its free is still
-- pending wherever the ledger says pending is done; extents never
-- overlap; the counters are the extents' sums; after a device sync nothing
-- is pending. An allocation's sources are exactly the freed extents it
-- covered, and why_fresh comes only with none.

local truth = sim and poolsh.core._sim_truth
local oracle_stats = {checks = 0, sources = 0, multi = 0}

-- The sim's records of p: the live ones by address, and all in address
-- order.
local function sim_picture(p)
  local live, all = {}, truth(p)
  for _, r in ipairs(all) do
    if r.state == "live" then live[r.addr] = r end
  end
  return live, all
end

-- What the sim's records (sorted, from index cur.i on; it only moves
-- forward: the ledger's extents come in address order) hold under [a, e):
-- false when some byte is live or fresh; else true, whether some byte is
-- under a free still pending on the device, and whether some byte is
-- under no record (memory the pool gave back).
local function covered(all, cur, a, e)
  local i = cur.i
  while all[i] and all[i].addr + all[i].size <= a do i = i + 1 end
  cur.i = i
  local at, still, gone = a, false, false
  while at < e do
    local r = all[i]
    if not r or r.addr >= e then gone = true; break end
    if r.addr > at then gone = true end
    if r.state == "live" or r.state == "fresh" then return false end
    if r.state == "pending" then still = true end
    at = r.addr + r.size
    i = i + 1
  end
  return true, still, gone
end

-- The sim's records over [a, e), for a failure's message.
local function sim_rows(p, a, e)
  local t = {}
  for _, r in ipairs(truth(p)) do
    if r.addr < e and r.addr + r.size > a then
      t[#t + 1] = ("%s %#x+%d%s"):format(r.state, r.addr, r.size, r.stream and " s" .. r.stream or "")
    end
  end
  return #t > 0 and table.concat(t, ", ") or "none (not mapped)"
end

-- Whether poolsh's stream id names a destroyed stream.
local function gone_stream(id)
  for _, st in ipairs(allst) do
    if st.s.id == id then return not st.s.live end
  end
  return true
end

local function oracle(p)
  oracle_stats.checks = oracle_stats.checks + 1
  local name = p.p.name
  local live, freed = sim_picture(p.p)
  local blocks = poolsh.core.blocks(p.p, true)
  local st = p.p:stats {estimates = false}
  local nlive, lbytes, pbytes, last, cur = 0, 0, 0, nil, {i = 1}
  for _, b in ipairs(blocks) do
    check(not last or last.addr + last.size <= b.addr, "%s: the ledger's extents of b%d and b%d overlap",
      name, last and last.buffer or -1, b.buffer)
    last = b
    if not b.pending and not b.done then
      local r = live[b.addr]
      check(r and r.req == b.size, "%s: the ledger has b%d live at %#x (%d B), the sim %s", name, b.buffer,
        b.addr, b.size, r and ("a live block of %d B"):format(r.req) or "no live block there")
      nlive, lbytes = nlive + 1, lbytes + b.size
    else
      if b.pending then pbytes = pbytes + b.size end
      local ok, still, gone = covered(freed, cur, b.addr, b.addr + b.size)
      -- a pool may give back a chunk below others it keeps (calibration.md
      -- E12): poolsh cannot see which, so done memory there stays done to
      -- it; the driver never gives back memory under a free not complete
      if ok and gone and b.pending then ok = false end
      if not ok then
        fail(("%s: the ledger has %d B of b%d %s at %#x, but the sim has memory there that is not freed: %s")
          :format(name, b.size, b.buffer, b.pending and "pending" or "freed", b.addr,
                  sim_rows(p.p, b.addr, b.addr + b.size)))
      end
      -- poolsh cannot watch a destroyed stream: it takes that stream's
      -- frees as complete once it is destroyed (docs/explain.md)
      if not b.pending and still and not gone_stream(b.stream) then
        fail(("%s: the ledger says b%d's free at %#x on s%d completed; the sim's is pending"):format(name,
          b.buffer, b.addr, b.stream))
      end
    end
  end
  local nsim = 0
  for _ in pairs(live) do nsim = nsim + 1 end
  check(nsim == nlive, "%s: the sim has %d live blocks, the ledger %d", name, nsim, nlive)
  check(st.live == lbytes and st.used == lbytes, "%s: used %d, live %d, the ledger's live extents %d B",
    name, st.used, st.live, lbytes)
  check(st.pending == pbytes, "%s: pending %d, the ledger's pending extents %d B", name, st.pending, pbytes)
  check(st.used + st.pending <= st.reserved, "%s: used %d + pending %d > reserved %d", name, st.used,
    st.pending, st.reserved)
  return blocks
end

-- After a device sync: nothing pending, in the ledger or the sim.
function oracle_synced()
  if not truth then return end
  for _, p in ipairs(pools) do
    if p.live then
      local st = p.p:stats {estimates = false}
      check(st.pending == 0, "%s: pending %d after a device sync", p.p.name, st.pending)
      for _, r in ipairs(truth(p.p)) do
        check(r.state ~= "pending" and r.state ~= "done", "%s: the sim's free at %#x is %s after a device sync",
          p.p.name, r.addr, r.state)
      end
    end
  end
end

-- Before p:alloc: the ledger's freed extents of p (nil off the sim).
function before_alloc(p)
  if not truth or not p.live then return nil end
  local t = {retries = poolsh.core.counts().total.retries}
  for _, b in ipairs(poolsh.core.blocks(p.p, true)) do
    if b.pending or b.done then t[#t + 1] = b end
  end
  return t
end

-- After p:alloc gave b: its sources are the freed extents it covered
-- (the ledger's, before), each buffer once with the bytes it gave.
function after_alloc(p, b, was)
  -- a retry's collection freed buffers between the two looks
  if not was or poolsh.core.counts().total.retries ~= was.retries then return end
  local align = poolsh.core.option("pool_alignment")
  local lo, hi = b.addr, b.addr + (b.size + align - 1) // align * align
  local want, order = {}, {}
  for _, x in ipairs(was) do
    local a, e = math.max(lo, x.addr), math.min(hi, x.addr + x.size)
    if e > a then
      if not want[x.buffer] then order[#order + 1] = x.buffer end
      want[x.buffer] = (want[x.buffer] or 0) + (e - a)
    end
  end
  local src = b.sources
  if #order == 0 then
    check(#src == 0 and not b.reused, "%s took no freed extent, yet reused %s", b.name, tostring(b.reused_from))
    return
  end
  check(b.why_fresh == nil, "%s lies on freed extents (b%d's), yet why_fresh says: %s", b.name, order[1],
    tostring(b.why_fresh))
  if not b.reused then   -- the sim said fresh: memory poolsh saw freed came back fresh
    check(#src == 0, "%s: fresh, with %d sources", b.name, #src)
    return
  end
  oracle_stats.sources = oracle_stats.sources + 1
  if #order > 1 then oracle_stats.multi = oracle_stats.multi + 1 end
  check(b.reused_from == order[1], "%s: reused_from b%s, but its lowest bytes were b%d's", b.name,
    tostring(b.reused_from), order[1])
  local n = 0
  for i, x in ipairs(src) do
    if x.more then
      n = n + x.more
    else
      n = n + 1
      check(x.buffer == order[i] and x.bytes == want[x.buffer] and RULES[x.rule],
        "%s: source %d is b%s (%s B, %s); the ledger's extents say b%d (%d B)", b.name, i, tostring(x.buffer),
        tostring(x.bytes), tostring(x.rule), order[i], want[order[i]])
    end
  end
  check(n == #order, "%s names %d sources, it covered %d buffers' extents", b.name, n, #order)
end

-- Invariants ---------------------------------------------------------------

local function model_used(p)
  local lo, hi = p.bytes, p.bytes
  for id, l in pairs(limbo) do
    if l.pool == p then
      local b = limbo_ref[id]
      if b and b.live then lo = lo + l.size; hi = hi + l.size
      elseif not b then hi = hi + l.size end
    end
  end
  return lo, hi
end

local function check_pool(p, deep)
  -- deep checks compare two calls: no finalizer may free a buffer between them
  if deep then collectgarbage("stop") end
  local ok, s = call("p:stats", "ok", p.p.stats, p.p, {estimates = deep})
  for _, k in ipairs{"reserved", "reserved_high", "used", "used_high", "live", "pending", "pending_count"} do
    check(math.type(s[k]) == "integer" and s[k] >= 0, "%s %s = %s", p.p.name, k, tostring(s[k]))
  end
  local name = p.p.name
  check(s.used == s.live, "%s: driver used %d, poolsh live %d", name, s.used, s.live)
  local lo, hi = model_used(p)
  check(s.used >= lo and s.used <= hi, "%s: used %d, the fuzzer holds %d..%d bytes of it",
    name, s.used, lo, hi)
  check(s.used <= s.reserved, "%s: used %d > reserved %d", name, s.used, s.reserved)
  check(s.used_high >= s.used, "%s: used_high %d < used %d", name, s.used_high, s.used)
  check(s.reserved_high >= s.reserved, "%s: reserved_high %d < reserved %d", name, s.reserved_high, s.reserved)
  check(s.used_high >= p.used_seen, "%s: used_high %d below a used of %d seen since the reset",
    name, s.used_high, p.used_seen)
  check(s.reserved_high >= (p.res_high or 0), "%s: reserved_high fell from %d to %d without a reset",
    name, p.res_high or 0, s.reserved_high)
  p.used_seen = math.max(p.used_seen, s.used); p.res_high = s.reserved_high
  if p.max > 0 then
    local cap = (p.max + gran - 1) // gran * gran
    check(s.reserved <= cap, "%s: reserved %d above max_size %d", name, s.reserved, p.max)
  end
  if sim then check(s.reserved % gran == 0, "%s: reserved %d not whole chunks", name, s.reserved) end
  if deep then
    check(s.free_estimated == true and s.largest_free >= 0 and s.largest_free <= s.free
      and s.free <= s.reserved, "%s: free %s largest %s reserved %d", name,
      tostring(s.free), tostring(s.largest_free), s.reserved)
    local blocks = poolsh.core.blocks(p.p)
    local live, last = 0, nil
    for _, b in ipairs(blocks) do   -- a pending block's memory may be reused already
      if not b.pending then
        live = live + b.size
        check(not last or last.addr + last.size <= b.addr, "%s: live blocks b%s and b%s overlap",
          name, last and last.buffer, b.buffer)
        last = b
      end
    end
    check(live == s.live, "%s: blocks hold %d live bytes, stats say %d", name, live, s.live)
    collectgarbage("restart")
  end
end

local function invariants()
  local deep = step % 16 == 0
  for _, p in ipairs(pools) do
    if p.live then check_pool(p, deep) end
  end
  if truth then
    collectgarbage("stop")
    for _, p in ipairs(pools) do
      if p.live then oracle(p) end
    end
    collectgarbage("restart")
  end
  if deep then
    for _, b in ipairs(bufs) do
      check(b.b.live, "%s freed behind the fuzzer's back", b.b.name)
    end
  end
end

-- The run --------------------------------------------------------------

local WEIGHTS = {
  alloc = 14, other_alloc = 3, free = 9, drop = 3, write = 10, read = 10, copy = 10,
  fill = 6, touch = 2, verify = 6, spin = 3, sync = 6, event = 2, record = 4, wait = 3,
  event_sync = 3, stream = 1, stream_destroy = 1, pool = 1, pool_destroy = 0.5,
  churn = 2, exhaust = 0.3, pool_attr = 2, trim = 1.5, reset_high = 1, register = 1, gc = 2, scoped = 2,
  dead = 2, trace = 1, view = 1,
}
local names, total = {}, 0
for k in pairs(WEIGHTS) do names[#names + 1] = k end
table.sort(names)
for _, k in ipairs(names) do total = total + WEIGHTS[k] end
local function choose()
  local x = R() * total
  for _, k in ipairs(names) do
    x = x - WEIGHTS[k]
    if x < 0 then return k end
  end
  return names[#names]
end

-- A small device and host so that out-of-memory happens; a chunk size per seed.
if sim then
  local mem = opt.memory and poolsh.size(opt.memory) or pick{96 * MiB, 256 * MiB, 1024 * MiB}
  poolsh.sim.set("memory", mem)
  poolsh.sim.set("host_memory", mem)
  devmem = mem
  if chance(0.3) then poolsh.sim.set("pool_granularity", pick{2 * MiB, 512 * 1024}) end
  gran = poolsh.live.granularity()
end
if chance(0.5) then poolsh.trace.start() end
for _ = 1, 2 do ops.stream() end
ops.pool()

local t0 = poolsh.wallclock()
while true do
  if opt.ops and step >= opt.ops then break end
  if opt.seconds and step % 64 == 0 and poolsh.wallclock() - t0 >= opt.seconds then break end
  step = step + 1
  cur = choose()
  log(cur)
  counts[cur] = (counts[cur] or 0) + 1
  ops[cur]()
  invariants()
end

-- Wind down: free everything so nothing is reported live at exit.
cur = "wind down"
call("poolsh.sync", "ok", poolsh.sync); device_synced()
for i = #bufs, 1, -1 do
  local rec = bufs[i]
  if rec.kind == "pool" then call("b:free(s)", "ok", rec.b.free, rec.b, defst.s)
  else call("b:free", "ok", rec.b.free, rec.b) end
  remove_buf(rec)
end
full_collect()
call("poolsh.sync", "ok", poolsh.sync)
for _, p in ipairs(pools) do
  if p.live then
    check_pool(p, true)
    local s = p.p:stats()
    check(s.used == 0 and s.live == 0, "%s: used %d after freeing everything", p.p.name, s.used)
    call("p:trim", "ok", p.p.trim, p.p, 0)
    s = p.p:stats()
    check(s.reserved == 0, "%s: reserved %d after freeing everything, a device sync and trim(0)",
      p.p.name, s.reserved)
  end
end
poolsh.trace.stop(); poolsh.trace.clear()

if not opt.quiet then
  local parts = {}
  for _, k in ipairs(names) do if counts[k] then parts[#parts + 1] = k .. "=" .. counts[k] end end
  print(("fuzz: ok seed=%d ops=%d %.1fs; %d expected errors (%d out of memory), %d bytes read back as written; %s")
    :format(opt.seed, step, poolsh.wallclock() - t0, tally.errors, tally.oom, tally.checked,
      table.concat(parts, " ")))
  if truth then
    print(("fuzz: oracle: the ledger agreed with the sim at %d looks; %d reuses' sources checked, %d of several buffers")
      :format(oracle_stats.checks, oracle_stats.sources, oracle_stats.multi))
  end
end
