--- poolsh.learn: interactive lessons in the REPL (`poolsh learn`,
-- docs/workshop/README.md). A lesson (lua/poolsh/lessons/<name>.lua) is
-- {name, title, summary, setup = function(env), steps = {{say, check =
-- function(env, expect), hint, solution = "Lua code", start =
-- function(env), done = "text"}, ...}}; a check states what must hold
-- with the scenarios' expectations (poolsh.scenario.expect, plus
-- expect.reused_from) on the learner's own objects (env.freed,
-- env.pending_bytes), and env.stuck when the step can never pass.
local poolsh = require "poolsh"
local core = require "poolsh.core"
local scenario = require "poolsh.scenario"
local naming = require "poolsh.naming"
local words = require "poolsh.words"

local M = {}

-- The scenarios' expectations, plus reused_from(b, src): b's memory came
-- (at least in part) from Buffer src's freed bytes (b.sources).
local expect = setmetatable({}, { __index = scenario.expect })
function expect.reused_from(b, src)
  local want = src and src.id
  local got = {}
  for _, e in ipairs(b.sources or {}) do
    local id = type(e.buffer) == "number" and e.buffer or e.buffer and e.buffer.id
    if id == want then return end
    got[#got + 1] = math.type(id) == "integer" and naming.of("buffer", id) or tostring(id)
  end
  scenario.expect.equal(#got > 0 and table.concat(got, ", ") or "none",
    want and naming.of("buffer", want) or "a buffer", tostring(b.name) .. " reused the memory of")
end

-- ---- progress -----------------------------------------------------------------

--- Where progress is kept when set (a test's file); nil: state_path() picks.
M.path = nil

--- Where progress is kept, in words, when a host keeps it elsewhere
-- than a file of the user's (the page: its browser's storage); nil:
-- `poolsh learn` names the file.
M.progress_place = nil

--- state_path() -> where progress is kept: M.path, else
-- $POOLSH_LEARN_STATE, else $XDG_STATE_HOME/poolsh/learn.json, else
-- $HOME/.local/state/poolsh/learn.json; XDG_STATE_HOME and HOME count
-- only as absolute paths. nil, and why, when there is none: progress is
-- then not kept (never in the current directory).
function M.state_path()
  if M.path then return M.path end
  local p = os.getenv("POOLSH_LEARN_STATE")
  if p and p ~= "" then return p end
  local base = os.getenv("XDG_STATE_HOME")
  if not (base and base:sub(1, 1) == "/") then
    local home = os.getenv("HOME")
    if not (home and home:sub(1, 1) == "/") then
      return nil, "HOME is not set (POOLSH_LEARN_STATE names a file for it)"
    end
    base = home .. "/.local/state"
  end
  return base .. "/poolsh/learn.json"
end

local function warn(msg) io.stderr:write(words.wrap("poolsh learn: " .. msg .. "\n")) end

-- Says once per process that progress is not kept, and why.
local said_unsaved = false
local function unsaved(why)
  if not said_unsaved then warn("progress is not saved: " .. why) end
  said_unsaved = true
end

-- The progress table read from text, or nil and why it is not one.
local function decode(text)
  local ok, doc = pcall(require("cjson").decode, text)
  if not ok then return nil, "not JSON" end
  if type(doc) ~= "table" or type(doc.lessons) ~= "table" then return nil, "no lessons table" end
  local lessons = {}
  for name, l in pairs(doc.lessons) do
    local done = type(l) == "table" and math.tointeger(l.done)
    if type(name) ~= "string" or not done or done < 0 then
      return nil, "bad entry for lesson " .. tostring(name)
    end
    lessons[name] = { done = done, finished = l.finished == true }
  end
  return { lessons = lessons }
end

--- load_progress() -> {lessons = {[name] = {done = steps, finished}}}.
-- A missing file is no progress; a corrupt one gives a one-line warning
-- and no progress.
function M.load_progress()
  local path, why = M.state_path()
  if not path then
    unsaved(why)
    return { lessons = {} }
  end
  local f = io.open(path, "rb")
  if not f then return { lessons = {} } end
  local text = f:read("a") or ""
  f:close()
  local prog, why = decode(text)
  if not prog then
    warn(("ignoring the progress file %s (%s); starting fresh"):format(path, why))
    return { lessons = {} }
  end
  return prog
end

--- save_progress(prog) -> true, or false after a one-line warning (a
-- progress file that cannot be written never stops a lesson).
-- The progress file is written like every file poolsh saves
-- (poolsh.core.open_atomic: an exclusive temporary renamed into place);
-- its directory, when made here, is private (0700).
function M.save_progress(prog)
  local path, why = M.state_path()
  if not path then
    unsaved(why)
    return false
  end
  local dir = path:match("^(.*)/[^/]*$")
  local there = dir and dir ~= "" and io.open(dir .. "/.")
  if there then there:close()
  elseif dir and dir ~= "" then
    os.execute("mkdir -p -m 0700 '" .. dir:gsub("'", "'\\''") .. "' 2>/dev/null")
  end
  local lessons = {}
  for name, l in pairs(prog.lessons) do lessons[name] = { done = l.done, finished = l.finished } end
  local ok, err = pcall(function()
    local f <close> = require("poolsh.core").open_atomic(path)
    f:write(require("cjson").encode { version = 1, lessons = lessons }, "\n")
    f:commit()
  end)
  if not ok then
    warn("cannot write the progress file " .. path .. ": " .. tostring(err):gsub("^.-: ", "", 1))
    return false
  end
  return true
end

--- reset() -> the progress file's path, after removing it.
function M.reset()
  local path, why = M.state_path()
  if not path then return "nothing saved: " .. why end
  os.remove(path)
  return path
end

-- ---- lessons --------------------------------------------------------------------

--- names() -> the lessons, in order (lua/poolsh/lessons/init.lua).
function M.names() return require "poolsh.lessons" end

--- find(which) -> a lesson's name from its name or number, or nil.
function M.find(which)
  local names = M.names()
  local n = math.tointeger(tonumber(which))
  if n then return names[n] end
  for _, name in ipairs(names) do if name == which then return name end end
end

--- load(name) -> the lesson table; raises a one-line error for an unknown
-- lesson or one that is not a lesson table.
function M.load(name)
  local found = M.find(name)
  if not found then error(("unknown lesson '%s'%s (poolsh learn lists them)"):format(name, require("poolsh.words").did_you_mean(tostring(name), M.names())), 0) end
  local ok, l = pcall(require, "poolsh.lessons." .. found)
  if not ok then error(("lesson '%s' cannot load: %s"):format(found, tostring(l):match("^[^\n]*")), 0) end
  if type(l) ~= "table" or type(l.setup) ~= "function" or type(l.steps) ~= "table" or #l.steps == 0 then
    error(("lesson '%s' is not a table with setup and steps"):format(found), 0)
  end
  l.name = l.name or found
  return l
end

-- ---- a session --------------------------------------------------------------------

-- v's poolsh type name ("poolsh.Buffer"), else its Lua type.
local function type_of(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and mt.__name or type(v)
end

-- What the learner's statement can change: allocations, releases, each
-- pool's counters. The check nags only when this moved (print(x) moves nothing).
local function fingerprint()
  local parts = { select(2, core.recent(math.maxinteger)), select(2, core.releases(math.maxinteger)) }
  local pools, streams = core.objects()
  parts[#parts + 1] = #streams
  for _, p in ipairs(pools) do
    local st = p:stats { estimates = false }
    parts[#parts + 1] = ("%d:%d:%d:%d:%d"):format(p.id, st.reserved, st.used, st.pending, st.used_high)
  end
  table.sort(parts, function(a, b) return tostring(a) < tostring(b) end)
  for i, v in ipairs(parts) do parts[i] = tostring(v) end
  return table.concat(parts, " ")
end

-- A check that is not wrong but not complete yet (the learner is half
-- way through the step) raises a WAIT: no hint after the statement.
local WAIT = {}
WAIT.__tostring = function(w) return "waiting for " .. w.what end

-- A check that can never hold any more (the object the step needs was
-- freed, destroyed or replaced) raises a STUCK: the screen says so and
-- offers restart().
local STUCK = {}
STUCK.__tostring = function(w) return w.why end
local RESTART = "this step cannot pass any more (%s): type restart()"

-- The env a lesson's setup, start and check get: G (the learner's
-- globals), mark (what the step's start noted) and helpers.
local function new_env(G)
  local env = { G = G, mark = {} }
  --- env.need(cond, what): the step is not done yet unless cond; what
  -- says what it waits for. Not a wrong answer: no hint.
  function env.need(cond, what)
    if not cond then error(setmetatable({ what = what }, WAIT), 0) end
  end
  --- env.get(name, tname) -> the global `name`; the step waits until it
  -- is a tname (live, for a Buffer).
  function env.get(name, tname)
    local v = G[name]
    env.need(type_of(v) == tname, ("%s (a %s)"):format(name, (tname:gsub("^poolsh%.", ""))))
    if tname == "poolsh.Buffer" then env.need(v.live, name .. " live") end
    return v
  end
  --- env.stuck(cond, why): when cond, the step can never pass any more
  -- (why says what was lost); the screen offers restart().
  function env.stuck(cond, why)
    if cond then error(setmetatable({ why = why }, STUCK), 0) end
  end
  --- env.pending_bytes(b) -> the bytes of freed Buffer b whose free is
  -- still pending, as the ledger has them (its own extent, not its pool's
  -- totals, which other buffers' frees, collected ones too, can fill).
  function env.pending_bytes(b)
    local n = 0
    for _, e in ipairs((core.pending(math.maxinteger))) do
      if e.buffer == b.id then n = n + e.size end
    end
    return n
  end
  --- env.freed(name) -> the Buffer `name`, once freed: the step waits
  -- while it is live, and cannot pass any more once the global holds no
  -- Buffer (the learner dropped the one the lesson made).
  function env.freed(name)
    local v = G[name]
    env.stuck(type_of(v) ~= "poolsh.Buffer", name .. " is no longer a buffer")
    env.need(not v.live, name .. ":free()")
    return v
  end
  function env.stats(p) return p:stats { estimates = false } end
  --- env.counts(p) -> p's counts (poolsh.core.counts()).
  function env.counts(p) return core.counts().pools[p.id] end
  return env
end

-- An error as one line (a failed expectation's message whole).
local function one_line(e)
  if scenario.is_failure(e) or getmetatable(e) == WAIT or getmetatable(e) == STUCK then
    return tostring(e)
  end
  return (tostring(e):match("^[^\n]*"))
end

-- What a check raised, as said to the learner: an error of the check's
-- own (not an expectation) says it could not run.
local function check_error(e)
  if scenario.is_failure(e) or getmetatable(e) == WAIT then return tostring(e) end
  if getmetatable(e) == STUCK then return RESTART:format(e.why) end
  return RESTART:format(("the check could not run: %s"):format(
    (one_line(e):gsub("^[^:\n]+:%d+: ", ""))))
end

local Session = {}
Session.__index = Session

--- new(lesson, opts) -> a session: opts.out(string) prints (default
-- stdout), opts.G holds the learner's globals (default _G), opts.progress
-- (default load_progress()), opts.save (default save_progress).
function M.new(lesson, opts)
  opts = opts or {}
  local G = opts.G or _G
  local s = setmetatable({
    lesson = lesson, G = G, env = new_env(G), step = 1, misses = 0,
    out = opts.out or function(t) io.stdout:write(t) end,
    progress = opts.progress or M.load_progress(), save = opts.save or M.save_progress,
  }, Session)
  return s
end

--- say(fmt, ...): prints a line of prose, wrapped at words to the
-- terminal's width (poolsh.words.wrap: 80 columns when unknown).
function Session:say(fmt, ...) self.out(words.wrap(fmt:format(...) .. "\n")) end

-- Whether s is Lua a learner would type (it compiles as a chunk).
local function is_code(s)
  return type(s) == "string" and s:find("%S") ~= nil and load(s, "=code", "t", {}) ~= nil
end

--- code(label, src [, inline]): prints label and the Lua code src; with
-- inline, on one line when that fits the terminal; else label alone and
-- each line of code below it, indented 2 more than the label. A line of
-- code is never broken: the learner types it as shown.
function Session:code(label, src, inline)
  local text = require "poolsh.live.text"
  local one = label .. " " .. src
  if inline and not src:find("\n") and text.vlen(one) <= text.columns() then
    return self.out(one .. "\n")
  end
  local pad = label:match("^%s*") .. "  "
  self.out(words.wrap(label) .. "\n" .. pad .. src:gsub("\n", "\n" .. pad) .. "\n")
end

-- Prints a hint after label ("  hint:", "hint:"): code as code, prose
-- wrapped.
function Session:say_hint(label, hint)
  if is_code(hint) then return self:code(label, hint, true) end
  self:say("%s %s", label, hint)
end

function Session:prompt()
  if self.finished then return nil end
  return ("learn %d/%d> "):format(self.step, #self.lesson.steps)
end

-- Runs f(env, expect) protected: true, or false, one line, whether it
-- is only waiting (env.need), and whether it can never pass (env.stuck,
-- a lesson object gone, or a check that cannot run).
function Session:try(f)
  local gone = self:lost()
  if gone then return false, RESTART:format(gone), false, true end
  local ok, e = pcall(f, self.env, expect)
  if ok then return true end
  local stuck = getmetatable(e) == STUCK or not (scenario.is_failure(e) or getmetatable(e) == WAIT)
  return false, check_error(e), getmetatable(e) == WAIT, stuck
end

-- The pools and streams the lesson's setup made, by global name.
function Session:keep_setup()
  self.made = {}
  for k, v in pairs(self.G) do
    if not self.before[k] and (type_of(v) == "poolsh.Pool" or type_of(v) == "poolsh.Stream") then
      self.made[k] = v
    end
  end
end

-- What the lesson lost: "p was destroyed", "s was replaced", or nil.
function Session:lost()
  for k, v in pairs(self.made or {}) do
    local now = self.G[k]
    if now ~= v then return k .. " was replaced" end
    local ok, live = pcall(function() return v.live end)
    if ok and live == false then return k .. " was destroyed" end
  end
end

-- Runs a lesson's setup or a step's start: nil, or the error in one line.
function Session:prepare(f)
  local ok, e = pcall(f, self.env)
  if not ok then return one_line(e) end
end

--- show(): the current step, what to do.
function Session:show()
  if self.finished then
    self:say("lesson %s is done. poolsh learn lists the lessons.", self.lesson.name)
    return
  end
  local st = self.lesson.steps[self.step]
  self:say("\n-- %s, step %d/%d --\n%s", self.lesson.title or self.lesson.name, self.step,
    #self.lesson.steps, st.say)
end

-- Runs a step's solution in the learner's globals.
function Session:run_solution(st)
  local chunk, err = load(st.solution or "", "=solution", "t", self.G)
  if not chunk then error("lesson " .. self.lesson.name .. ": bad solution: " .. err, 0) end
  chunk()
end

function Session:begin_step()
  self.misses = 0
  self.stuck_said = false
  self.env.mark = {}
  local st = self.lesson.steps[self.step]
  if st and st.start then
    local e = self:prepare(st.start)
    if e then error(("lesson %s, step %d: %s"):format(self.lesson.name, self.step, e), 0) end
  end
end

function Session:record()
  local rec = self.progress.lessons[self.lesson.name] or {}
  rec.done = self.finished and #self.lesson.steps or self.step - 1
  rec.finished = rec.finished or self.finished or false
  self.progress.lessons[self.lesson.name] = rec
  self.save(self.progress)
end

-- The step passed (or was skipped without holding: skipped says why, and
-- the step is not called done): say so, move on, save.
function Session:advance(skipped)
  local st = self.lesson.steps[self.step]
  if skipped then
    self:say("step %d skipped: it still does not hold (%s)", self.step, skipped)
  else
    self:say("\u{2713} step %d done%s", self.step, st.done and (": " .. st.done) or "")
  end
  if self.step == #self.lesson.steps then
    self.finished = true
    self:record()
    local names, nxt = M.names(), nil
    for i, n in ipairs(names) do if n == self.lesson.name then nxt = names[i + 1] end end
    self:say("\n\u{2713} lesson %s done.%s", self.lesson.name,
      nxt and (" Next: poolsh learn " .. nxt) or " That was the last lesson.")
  else
    self.step = self.step + 1
    self:record()
    self:begin_step()
    self:show()
  end
end

--- start(): runs the setup and, when resuming, the solutions of the steps
-- done before; then shows the step. Raises a one-line error when the
-- lesson's setup fails.
function Session:start()
  local l = self.lesson
  local rec = self.progress.lessons[l.name]
  local from = rec and not rec.finished and rec.done + 1 or 1
  if from > #l.steps then from = 1 end
  self.before = self.before or {}
  if not self.began then
    for k in pairs(self.G) do self.before[k] = true end   -- what is not the lesson's
    self.began = true
  end
  local e = self:prepare(l.setup)
  if e then error(("lesson %s: setup failed: %s"):format(l.name, e), 0) end
  naming.adopt(self.G)       -- the setup's p, s, ... are shown by those names
  self:keep_setup()
  self:say("%s: %s", l.title or l.name, l.summary or "")
  if l.intro then self:say("%s", l.intro) end
  for i = 1, from - 1 do        -- replay what was done before, quietly
    self.step = i
    self:begin_step()
    local st = l.steps[i]
    local ran = pcall(self.run_solution, self, st)
    if not (ran and self:try(st.check)) then from = i break end
  end
  self.step = from
  if from > 1 then self:say("resuming at step %d (the steps before were replayed)", from) end
  self:say("hint() gives a hint, skip() shows the answer and runs it, lesson() shows the step again, check() checks now,"
    .. " restart() starts the lesson over.")
  self:begin_step()
  self:show()
  self.fp = fingerprint()
end

--- after(): after each statement: the step passed (or was skipped),
-- advance; it failed and the statement changed the pools, say why and
-- give the hint (not after check(), which said it already).
function Session:after()
  naming.adopt(self.G)       -- already done by the REPL when G is one of its envs
  if self.finished then return end
  local fp = fingerprint()
  local changed = fp ~= self.fp
  local skipped, checked = self.skipped, self.checked
  self.fp, self.skipped, self.checked = fp, false, false
  local ok, why, waiting, stuck = self:try(self.lesson.steps[self.step].check)
  if ok then return self:advance() end
  if skipped then return self:advance(why) end
  if stuck then
    if not self.stuck_said and not checked then self:say("\u{2717} %s", why) end
    self.stuck_said = true
    return
  end
  if changed and not waiting and not checked then self:miss(why) end
end

function Session:miss(why)
  self.misses = self.misses + 1
  self:say("\u{2717} %s", why)
  self:say_hint("  hint:", self.lesson.steps[self.step].hint or "read the step again: lesson()")
  if self.misses >= 3 then self:say("  (skip() shows the answer and moves on)") end
end

--- check(): checks the step now, saying why when it does not hold.
function Session:check()
  if self.finished then return self:show() end
  local ok, why, _, stuck = self:try(self.lesson.steps[self.step].check)
  if ok then return self:advance() end
  self.checked = true
  if stuck then
    self.stuck_said = true
    return self:say("\u{2717} %s", why)
  end
  self:miss(why)
end

function Session:hint()
  if self.finished then return self:show() end
  self:say_hint("hint:", self.lesson.steps[self.step].hint or "read the step again: lesson()")
end

--- restart(): starts the lesson over: frees the live buffers in the
-- globals made since the lesson began, destroys the pools and streams its
-- setup made, forgets those globals, runs the
-- setup again and shows step 1 (progress: none of its steps done).
function Session:restart()
  local BUFFER = "poolsh.Buffer"
  for k, v in pairs(self.G) do
    if not self.before[k] then
      if type_of(v) == BUFFER and v.live then pcall(v.free, v) end
      if type(v) == "table" and getmetatable(v) == nil then
        for _, x in pairs(v) do if type_of(x) == BUFFER and x.live then pcall(x.free, x) end end
      end
    end
  end
  -- what the setup made goes too: one p and one s after the restart
  pcall(poolsh.sync)
  for _, v in pairs(self.made or {}) do
    if type_of(v) == "poolsh.Pool" and v.live then pcall(v.destroy, v) end
  end
  for _, v in pairs(self.made or {}) do
    if type_of(v) == "poolsh.Stream" and v.live and not v.default then pcall(v.destroy, v) end
  end
  self.made = nil
  -- the live lines start afresh too: no line for the old pool under step 1
  if poolsh.watch() then poolsh.watch(true) end
  for k in pairs(self.G) do if not self.before[k] then self.G[k] = nil end end
  self.finished, self.skipped, self.checked = false, false, false
  local rec = self.progress.lessons[self.lesson.name]
  if rec then rec.done = 0 end
  self:say("restarting lesson %s from step 1", self.lesson.name)
  self:start()
  self:record()
end

--- skip(): shows the step's answer and runs it; the next after() moves
-- on (after the live lines show what the answer did).
function Session:skip()
  if self.finished then return self:show() end
  local st = self.lesson.steps[self.step]
  if st.solution then self:code("the answer:", st.solution) else self:say("the answer: (none)") end
  local ok, e = pcall(self.run_solution, self, st)
  if not ok then self:say("the answer failed here: %s", one_line(e)) end
  self.skipped = true
end

-- ---- the command's entry -------------------------------------------------------------

--- start(which [, opts]) -> the session of lesson `which` (name or
-- number), started: globals hint(), skip(), lesson(), check(), restart() set, the
-- REPL's prompt and after-hook installed.
function M.start(which, opts)
  local s = M.new(M.load(which), opts)
  s:start()
  local G = s.G
  G.hint = function() s:hint() end
  G.skip = function() s:skip() end
  G.lesson = function() s:show() end
  G.check = function() s:check() end
  G.restart = function() s:restart() end
  for _, k in ipairs { "hint", "skip", "lesson", "check", "restart" } do s.before[k] = true end
  local repl = poolsh.repl
  local known = false
  for _, env in ipairs(repl.envs) do known = known or env == G end
  if not known then repl.envs[#repl.envs + 1] = G end   -- named before the live lines
  repl.prompt = s:prompt()
  repl.hooks[#repl.hooks + 1] = function()
    local ok, e = pcall(s.after, s)
    if not ok then io.stderr:write(words.wrap("poolsh learn: " .. one_line(e) .. "\n")) end
    repl.prompt = s:prompt()
  end
  return s
end

return M
