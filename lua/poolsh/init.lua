--- poolsh: CUDA's stream-ordered memory pools, streams, events and host
-- buffers from Lua. The C core (poolsh.core) binds the objects; this
-- module adds what is pure Lua: units, printing, the REPL's helpers.
local core = require "poolsh.core"
local units = require "poolsh.units"

local poolsh = {}
for k, v in pairs(core) do poolsh[k] = v end

core.set_parsers { size = units.size, duration = units.duration }

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
poolsh.fmt_duration = units.fmt_duration

--- poolsh.sim: the simulated device's profile (sim backend only).
poolsh.sim = {}

--- poolsh.sim.profile() -> {name = value, ...} of every profile option.
function poolsh.sim.profile()
  local t = {}
  for _, name in ipairs(core.options()) do t[name] = core.option(name) end
  return t
end

--- poolsh.sim.set(name, value): changes one profile option.
function poolsh.sim.set(name, value)
  if type(value) == "string" then value = poolsh.size(value) end
  return core.option(name, value)
end

--- poolsh.sim.profile_info() -> {gpu, driver, runtime, date, path} of the
-- profile loaded (poolsh.profile), or nil for the built-in defaults.
function poolsh.sim.profile_info() return require("poolsh.profile").info() end


-- The core's raw views stay in poolsh.core; poolsh.trace and poolsh.live
-- are what users call.
for _, k in ipairs { "trace_start", "trace_stop", "trace_clear", "trace_events",
                     "trace_recording", "trace_count", "trace_save", "trace_streaming",
                     "objects", "blocks", "live", "pending",
                     "recent", "stream_state", "device_name", "names", "shown_max",
                     "object_name", "object_names",
                     "releases", "counts", "peak_push", "peak_pop", "statement", "_sim_truth", "open_atomic", "collected" } do
  poolsh[k] = nil
end
poolsh.core = core
-- An error names the function by the first loaded module found to hold it,
-- in no fixed order: as a loaded module, poolsh.core holds only what poolsh
-- does not, so a message reads 'poolsh.fill' on every run.
local own = {}
for k, v in pairs(core) do
  if poolsh[k] ~= v then own[k] = v end
end
package.loaded["poolsh.core"] = setmetatable(own, { __index = core })
poolsh.trace = require "poolsh.trace"
poolsh.live = require "poolsh.live"

--- poolsh.watch([on]): the REPL's live lines after each statement.
poolsh.watch = poolsh.live.watch
--- poolsh.show(): pools, streams, live buffers and pending frees.
poolsh.show = poolsh.live.show
--- poolsh.map(pool): the pool's address space as text.
function poolsh.map(p)
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
  if recording then poolsh.trace.start() end   -- a --trace run records on
end

poolsh.repl = require "poolsh.repl"
poolsh.repl.init(poolsh)

return poolsh
