--- poolsh: CUDA's stream-ordered memory pools, streams, events and host
-- buffers from Lua. The C core binds the objects; this module adds what
-- is pure Lua (units, printing, the REPL's helpers) to the core's own
-- table, in place, and returns it, as LuaSocket's socket.lua does.
-- require "poolsh.core" gives the core's internal views (objects,
-- blocks, live, counts, trace_*, ...), which the Lua modules use, in
-- whatever order they load; the views read the module itself for what
-- they lack (src/init.c), and that module is poolsh. Each C function is
-- held by one loaded table (an error names it the same way on every run).
local core = require "poolsh.core"
local poolsh = getmetatable(core).__index

local units = require "poolsh.units"
poolsh.set_parsers { size = units.size, duration = units.duration }
-- The renderers C calls for words (src/render.c), loaded now: a script
-- that later replaces require or package.path changes no message.
for _, r in ipairs { "size", "why_fresh", "oom", "call" } do require("poolsh.render." .. r) end

--- poolsh.size(s) -> bytes; raises on a bad size.
function poolsh.size(s)
  local n, err = units.size(s)
  if not n then error("poolsh.size: " .. err, 2) end
  return n
end

--- poolsh.duration(d) -> milliseconds; raises on a bad duration.
function poolsh.duration(d)
  local ms, err = units.duration(d)
  if not ms then error("poolsh.duration: " .. err, 2) end
  return ms
end

poolsh.fmt = units.fmt
-- p:stats() tables print sizes as sizes (poolsh.stats; src/pool.c sets it)
require "poolsh.stats"
poolsh.fmt_duration = units.fmt_duration

--- poolsh.sim: the simulated device's profile (sim backend only).
poolsh.sim = {}

--- poolsh.sim.profile() -> {name = value, ...} of every profile option.
function poolsh.sim.profile()
  local t = {}
  for _, name in ipairs(poolsh.options()) do t[name] = poolsh.option(name) end
  return t
end

--- poolsh.sim.set(name, value): changes one profile option.
function poolsh.sim.set(name, value)
  if type(value) == "string" then value = poolsh.size(value) end
  return poolsh.option(name, value)
end

--- poolsh.sim.profile_info() -> {gpu, driver, runtime, date, path} of the
-- profile loaded (poolsh.profile), or nil for the built-in defaults.
function poolsh.sim.profile_info() return require("poolsh.profile").info() end


-- poolsh.trace and poolsh.live are what users call.
poolsh.trace = require "poolsh.trace"
poolsh.live = require "poolsh.live"

--- poolsh.watch([on]): the REPL's live lines after each statement.
poolsh.watch = poolsh.live.watch
--- poolsh.show(): pools, streams, live buffers and pending frees.
poolsh.show = poolsh.live.show
--- poolsh.map(pool): the pool's address space as text; poolsh.map(range):
--- a VMM range's mappings (docs/vmm.md).
function poolsh.map(p)
  local mt = getmetatable(p)
  if mt and mt.__name == "poolsh.Range" then
    if not p.live then error(("attempt to use a freed poolsh.Range (r%d)"):format(p.id), 2) end
    for _, l in ipairs(poolsh.live.range_lines(p)) do io.stdout:write(l, "\n") end
    return
  end
  if getmetatable(p) == nil or getmetatable(p).__name ~= "poolsh.Pool" then
    error("bad argument #1 to 'map' (poolsh.Pool expected, got " .. type(p) .. ")", 2)
  end
  if not p.live then error(("attempt to use a destroyed poolsh.Pool (%s)"):format(p.name), 2) end
  return poolsh.live.map(p)
end
--- poolsh.leaks() -> the live buffers, with where they were allocated.
poolsh.leaks = poolsh.live.leaks
--- poolsh.sites() -> per allocation site its calls and bytes; prints as
-- RMM's report.
poolsh.sites = poolsh.live.sites
--- poolsh.summary() -> per pool and in all, memory and counts; prints as
-- a report.
poolsh.summary = poolsh.live.summary
--- poolsh.peak(fn, ...) -> the peak live bytes while fn ran, fn's results.
poolsh.peak = poolsh.live.peak

--- poolsh.reset(): frees and destroys everything poolsh made (the core
-- reopens the device context), then forgets what the live view saw.
function poolsh.reset()
  local recording = poolsh.trace.recording()
  core.reset()                         -- stops recording, with everything else
  poolsh.live.reset()
  if recording then                   -- a --trace run records on, its owner the same
    local starts = poolsh.trace.starts
    poolsh.trace.start()
    poolsh.trace.starts = starts
  end
end

--- poolsh.view([opts]) -> the URL of the live picture's page; poolsh.view(false)
-- stops serving it (docs/view.md).
function poolsh.view(...) return require("poolsh.view").view(...) end

poolsh.repl = require "poolsh.repl"
poolsh.repl.init(poolsh)

return poolsh
