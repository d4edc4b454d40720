--- poolsh.allocators.pool: a stream-ordered memory pool (what
-- cudaMallocAsync does) as a replay allocator (docs/replay.md).
--
--   local a = require("poolsh.allocators.pool").new { release_threshold = "max" }
--   local d = require("poolsh.allocators.pool").new { default = true, release_threshold = "max" }
--   local b = a:alloc(size, stream)   -- a pool Buffer, or nil, message
--   a:free(b, stream)                 -- cudaFreeAsync on stream
--   a:stats()   -- {reserved, used, segments_allocated, driver_frees,
--               --  peak_reserved, peak_used}
--   a:close()   -- destroys the pool
--
-- The pool is a new poolsh.pool with the default pool's settings, each
-- setting given replacing its own. segments_allocated counts the
-- allocations after which the pool reserved more (poolsh.core.counts'
-- growths), driver_frees its releases; the peaks are the pool's
-- high-water marks (cudaMemPoolAttrReservedMemHigh, UsedMemHigh).
--
-- default = true takes the device's default pool instead (what
-- cudaMallocAsync without a pool and PyTorch's backend:cudaMallocAsync
-- use): the settings given are set on it for the allocator's life, its
-- high-water marks are reset, its counts are taken from then on, and
-- close() trims it to 0 and puts its settings back.
local poolsh = require "poolsh"
local live = require "poolsh.live.allocators"

local M = {}
local A = {}
local watched   -- (a, name) -> a, registered with the live view (below)
A.__index = A

--- The settings new() takes; all but max_size are read from the default pool.
M.settings = { "release_threshold", "follow_event_dependencies", "opportunistic",
               "internal_dependencies", "max_size" }

local known = {}
for _, k in ipairs(M.settings) do known[k] = true end

local function fail(fmt, ...) error("pool allocator: " .. fmt:format(...), 0) end

--- A new allocator over a new pool, or over the device's default pool
-- with opts.default = true; opts: any of M.settings, and default.
function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail("settings table expected, got %s", type(opts)) end
  for k in pairs(opts) do
    if not known[k] and k ~= "default" and k ~= "name" then
      fail("unknown setting '%s' (%s, default, name)", tostring(k), table.concat(M.settings, ", "))
    end
  end
  if opts.default ~= nil and type(opts.default) ~= "boolean" then
    fail("default must be a boolean, got %s", type(opts.default))
  end
  if opts.name ~= nil and (type(opts.name) ~= "string" or opts.name == "") then
    fail("name must be a non-empty string, got %s", type(opts.name))
  end
  local d, settings = poolsh.default_pool(), {}
  if opts.default then
    if opts.max_size ~= nil then fail("max_size cannot be set on the default pool") end
    return M.over_default(d, opts)
  end
  for _, k in ipairs(M.settings) do
    if opts[k] ~= nil then settings[k] = opts[k]
    elseif k ~= "max_size" then settings[k] = d[k] end
  end
  local ok, p = pcall(poolsh.pool, settings)
  if not ok then fail("%s", (tostring(p):gsub("^poolsh%.pool: ", ""))) end
  return watched(setmetatable({ pool = p, base = { growths = 0, releases = 0 } }, A), opts.name)
end

-- Allocator a, registered with the live view (docs/live.md) as `name`.
watched = function(a, name)
  return live.register(a, name or "pool allocator", function(x)
    local st = x.pool:stats { estimates = false }
    return st.reserved, st.used
  end)
end

-- The pool's growths and releases so far (poolsh.core.counts).
local function counted(p)
  local c = poolsh.core.counts().pools[p.id] or { growths = 0, releases = {} }
  local releases = 0
  for _, n in pairs(c.releases) do releases = releases + n end
  return c.growths, releases
end

--- The allocator over default pool d with opts' settings; the settings it
-- had are kept for close().
function M.over_default(d, opts)
  local saved = {}
  for _, k in ipairs(M.settings) do
    if k ~= "max_size" then saved[k] = d[k] end
  end
  for _, k in ipairs(M.settings) do
    if opts[k] ~= nil then
      local ok, err = pcall(function() d[k] = opts[k] end)
      if not ok then
        for sk, v in pairs(saved) do d[sk] = v end
        fail("%s", (tostring(err):gsub("^.-%.lua:%d+: ", ""):gsub("^poolsh%.Pool: ", "")))
      end
    end
  end
  d:reset_high()
  local g, r = counted(d)
  return watched(setmetatable({ pool = d, saved = saved, base = { growths = g, releases = r } }, A), opts.name)
end

local palloc = debug.getregistry()["poolsh.Pool"]
palloc = palloc and palloc.methods and palloc.methods.alloc

--- A pool Buffer of `size` bytes on `stream`, or nil and the message when
-- the pool is out of memory; other errors raise.
function A:alloc(size, stream)
  local ok, b = pcall(palloc or self.pool.alloc, self.pool, size, stream)
  if ok then
    local w = self.watched
    if w then
      w(self, "own", b)
      w(self, "alloc", { size = b.size, id = b.id, fresh = not b.reused or nil, what = "memory",
                         from = b.reused and b.reused_from and poolsh.core.object_name("buffer", b.reused_from),
                         why = b.reuse_rule })
    end
    return b
  end
  if tostring(b):find("cudaErrorMemoryAllocation", 1, true) then return nil, tostring(b) end
  error(b, 0)
end

--- Frees b on `stream` (cudaFreeAsync).
function A:free(b, stream) b:free(stream) end

--- The pool's counters (see the module's comment).
function A:stats()
  local p = self.pool
  local st = p:stats { estimates = false }
  local g, r = counted(p)
  return require("poolsh.stats").mark { reserved = st.reserved, used = st.used, segments_allocated = g - self.base.growths,
           driver_frees = r - self.base.releases, peak_reserved = st.reserved_high,
           peak_used = st.used_high }
end

--- Destroys the pool (free its blocks first); the default pool is
-- trimmed to 0 once the device is idle, and gets its settings back.
function A:close()
  if self.saved then
    poolsh.sync()
    self.pool:trim(0)   -- the pool's own line says what went back
    for k, v in pairs(self.saved) do self.pool[k] = v end
    self.saved = nil
  elseif self.pool.live then
    self.pool:destroy()
  end
end

return M
