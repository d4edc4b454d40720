--- poolsh.scenario: runs narrated scenarios (docs/scenarios.md). A
-- scenario is a table {name, summary, run = function(ctx)}; ctx.step(text,
-- notice) narrates, ctx.expect states what must hold. A failed
-- expectation raises a message with expected against observed; the run
-- stops that scenario and reports it failed at its step.
local poolsh = require "poolsh"

local M = {}

local FAIL = {}   -- metatable of a failed expectation
FAIL.__tostring = function(f) return f.msg end

local function fail(what, expected, observed)
  error(setmetatable({ msg = ("%s: expected %s, observed %s"):format(what, expected, observed) }, FAIL), 0)
end

local function show(v)
  if math.type(v) == "integer" and v >= 1024 then return ("%d (%s)"):format(v, poolsh.fmt(v)) end
  if math.type(v) == "float" then return ("%.4g"):format(v) end
  return tostring(v)
end

--- The expectations; `what` names the thing checked in the message.
local expect = {}
M.expect = expect

function expect.equal(observed, expected, what)
  if observed ~= expected then fail(what or "value", show(expected), show(observed)) end
end

function expect.at_least(observed, low, what)
  if not (observed >= low) then fail(what or "value", "at least " .. show(low), show(observed)) end
end

function expect.at_most(observed, high, what)
  if not (observed <= high) then fail(what or "value", "at most " .. show(high), show(observed)) end
end

function expect.truthy(v, what)
  if not v then fail(what or "condition", "true", tostring(v)) end
end

--- b reused freed memory, by `rule` when given (b.reuse_rule).
function expect.reused(b, rule)
  local name = tostring(b.name)
  if not b.reused then
    fail(name .. " reused", "reused" .. (rule and (" by " .. rule) or ""),
      "fresh memory" .. (b.why_fresh and (" (" .. b.why_fresh .. ")") or ""))
  end
  if rule and b.reuse_rule ~= rule then
    fail(name .. " reuse rule", rule, tostring(b.reuse_rule) .. " (from b" .. tostring(b.reused_from) .. ")")
  end
end

--- b took memory no freed buffer had.
function expect.fresh(b)
  if b.reused then
    fail(tostring(b.name) .. " fresh", "fresh memory",
      ("reused b%s by %s"):format(tostring(b.reused_from), tostring(b.reuse_rule)))
  end
end

--- Each field of `want` equals the pool's p:stats() field.
function expect.stats(p, want)
  local st = p:stats { estimates = false }
  local keys = {}
  for k in pairs(want) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if st[k] == nil then error("expect.stats: unknown counter '" .. tostring(k) .. "'", 2) end
    expect.equal(st[k], poolsh.size(want[k]), tostring(p.name) .. " " .. k)
  end
end

--- a_ms is at least `factor` times faster than b_ms (both measured by the
-- scenario); factor defaults to 1.
function expect.faster(a_ms, b_ms, factor, what)
  factor = factor or 1
  if not (a_ms * factor <= b_ms) then
    fail(what or "timing", ("%.4g ms at least %gx faster than %.4g ms"):format(a_ms, factor, b_ms),
      ("ratio %.3g"):format(b_ms / math.max(a_ms, 1e-12)))
  end
end

--- A fresh path for a Unix-domain socket (short: sun_path holds 107 bytes).
function M.socket_path()
  local base = os.tmpname()
  os.remove(base)
  return base .. ".sock"
end

--- Scenario helpers: the ms fn() took on poolsh.now()'s clock, and fn's
-- result; the median of a list of numbers.
function M.timed(fn)
  local t = poolsh.now()
  local r = fn()
  return poolsh.now() - t, r
end

function M.median(t)
  local c = { table.unpack(t) }
  table.sort(c)
  return c[(#c + 1) // 2]
end

--- Whether err is a failed expectation.
function M.is_failure(err) return getmetatable(err) == FAIL end

--- traced(e) -> what a scenario's error is reported as: an expectation's
-- failure as is; a CUDA error (out of memory under --limit, a device
-- refusing) by its message alone, as the REPL prints it; anything else (a
-- bug in the scenario) with its traceback. POOLSH_TRACEBACK=1: always
-- the traceback (docs/errors.md).
function M.traced(e)
  if M.is_failure(e) then return e end
  local msg = tostring(e)
  if msg:match("^cudaError%a+: ") and os.getenv("POOLSH_TRACEBACK") ~= "1" then return msg end
  return debug.traceback(msg, 2)
end

--- The scenarios' former names, each with the name it has now (that of
-- the lesson teaching the same thing): `poolsh run OLD` still runs it,
-- after one line saying the new name.
M.renamed = {
  same_stream_reuse = "same_stream",
  threshold_cliff = "release_threshold",
  trim_high_water = "trim",
  pinned_pool_keeps = "host_memory",
}

--- Loads a scenario from a module name under poolsh.scenarios or a path
-- ending in .lua; raises a one-line error for an unknown one, with the
-- closest names ("did you mean"). A former name (M.renamed) loads the
-- scenario under its new name.
function M.load(name)
  local chunk, err
  name = M.renamed[name] or name
  if name:match("%.lua$") then
    chunk, err = loadfile(name)
    if not chunk then error("cannot load scenario '" .. name .. "': " .. err, 0) end
  else
    local path = name:match("^[%w_]+$") and package.searchpath("poolsh.scenarios." .. name, package.path)
    if not path or name == "init" then
      local names = require "poolsh.scenarios"   -- the current names only
      local hint = require("poolsh.words").did_you_mean(name, names)
      error(("unknown scenario '%s'%s"):format(name, hint ~= "" and hint or " (poolsh scenarios lists them)"), 0)
    end
    chunk = assert(loadfile(path))
  end
  local ok, sc = pcall(chunk)
  if not ok or type(sc) ~= "table" or type(sc.run) ~= "function" then
    error(("scenario '%s' is not a table with a run function%s"):format(name,
      ok and "" or (": " .. tostring(sc))), 0)
  end
  sc.name = sc.name or name:match("([^/]+)%.lua$") or name
  return sc
end

--- Whether a second process can run here (poolsh.spawn). The page
-- (poolsh.web) sets it false: a scenario with processes = 2 is skipped
-- there, saying why.
M.second_process = true

--- Whether sc can run here: it asks for sc.devices devices (default 1).
-- The sim is given them: poolsh resets and sets its `devices` option
-- (M.run resets again after, back to --sim-devices). Returns true, or
-- nil and why it is skipped (another backend with fewer devices).
function M.devices_ready(sc)
  local want = sc.devices or 1
  local have = poolsh.device_count()
  if have >= want then return true end
  local why = ("needs %d devices, this machine has %d"):format(want, have)
  if poolsh.backend() == "sim" then
    poolsh.reset()
    if pcall(poolsh.sim.set, "devices", want) then return true, true end
    why = ("needs %d devices, more than the sim models"):format(want)
  end
  return nil, why
end

--- Runs sc, printing its narration with out(string). opts (all optional):
-- wrap = true folds the narration at words to the terminal's width
-- (`poolsh run` asks for it); live = true prints the live
-- view's lines (poolsh.live.lines: what changed in each pool, reuse
-- reasons) after each step's statements and at the end; before_step =
-- function(n, text) runs before each step is printed (`run --step`
-- pauses there); start = function() runs once the devices are ready (a
-- reset may have come before), just before the scenario (`--report`
-- starts its recording there); stop = function(res) runs when it has
-- ended, with its result, before the sim is reset (`--report` saves
-- there). Returns a result {name, ok, step (number and text of the
-- step that failed), err, skipped, notes = {{t = ms, text = "1. step",
-- notices = {...}, said = {...}}}}: each step's notice and say lines.
-- Names the objects in the local variables of the function `level` up
-- the stack (a scenario's run, calling ctx.step) after those variables,
-- as the REPL names its globals: the live lines then say "a 4.00 MiB
-- from p on s", in the narration's words (poolsh.naming.adopt).
local function adopt_locals(level, scope)
  local vars = {}
  for i = 1, 200 do
    local k, v = debug.getlocal(level, i)
    if k == nil then break end
    if k:sub(1, 1) ~= "(" then vars[k] = v end
  end
  require("poolsh.naming").adopt(vars, scope)
end

function M.run(sc, out, opts)
  opts = opts or {}
  local words = require "poolsh.words"
  local wrap = opts.wrap and function(s) out(words.wrap(s)) end or out
  local res = { name = sc.name, ok = true, notes = {} }
  local ready, why
  if (sc.processes or 1) > 1 and not M.second_process then
    why = "needs a second process: the native poolsh runs it"
  else
    ready, why = M.devices_ready(sc)
  end
  if not ready then
    res.skipped = why
    wrap(("== %s: %s\nSKIPPED: %s\n"):format(sc.name, sc.summary or "", why))
    return res
  end
  local watching = opts.live and poolsh.watch()
  local function live()
    if not opts.live then return end
    for _, l in ipairs(poolsh.live.lines()) do out(l .. "\n") end
  end
  local n, current = 0, "(before the first step)"
  local names = {}   -- the names given in this run (adopt_locals)
  local ctx = { expect = expect }
  function ctx.step(text, notice)
    adopt_locals(3, names)
    live()
    local view = package.loaded["poolsh.view"]   -- poolsh --view: the page shows each step's end
    if view then pcall(view.publish) end
    n = n + 1
    current = text
    if opts.before_step then opts.before_step(n, text) end
    wrap(("%2d. %s\n"):format(n, text))
    local note = { t = poolsh.now(), text = ("%d. %s"):format(n, text), notices = {}, said = {} }
    if notice then
      wrap("    notice: " .. notice .. "\n")
      note.notices[1] = notice
    end
    res.notes[#res.notes + 1] = note
  end
  function ctx.say(text)
    adopt_locals(3, names)
    wrap("    " .. text .. "\n")
    local note = res.notes[#res.notes]
    if note then note.said[#note.said + 1] = text end
  end
  wrap(("== %s: %s\n"):format(sc.name, sc.summary or ""))
  if opts.start then opts.start() end
  if opts.live then poolsh.watch(true) end   -- the live lines start from here
  local ok, err = xpcall(sc.run, M.traced, ctx)
  live()
  if opts.live then poolsh.watch(watching) end
  if not ok then
    res.ok, res.step, res.err = false, ("%d. %s"):format(n, current), tostring(err)
    wrap(("FAILED at step %s\n    %s\n"):format(res.step, res.err))
  end
  if opts.stop then opts.stop(res) end
  pcall(poolsh.sync)
  collectgarbage(); collectgarbage()
  if why == true then poolsh.reset() end   -- the sim's devices as configured again
  return res
end

return M
