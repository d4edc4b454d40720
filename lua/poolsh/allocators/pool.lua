--- poolsh.allocators.pool: a stream-ordered memory pool (what
-- cudaMallocAsync does) as a replay allocator (docs/replay.md).
--
--   local a = require("poolsh.allocators.pool").new { release_threshold = "max" }
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
local poolsh = require "poolsh"

local M = {}
local A = {}
A.__index = A

--- The settings new() takes; all but max_size are read from the default pool.
M.settings = { "release_threshold", "follow_event_dependencies", "opportunistic",
               "internal_dependencies", "max_size" }

local known = {}
for _, k in ipairs(M.settings) do known[k] = true end

local function fail(fmt, ...) error("pool allocator: " .. fmt:format(...), 0) end

--- A new allocator over a new pool; opts: any of M.settings.
function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail("settings table expected, got %s", type(opts)) end
  for k in pairs(opts) do
    if not known[k] then
      fail("unknown setting '%s' (%s)", tostring(k), table.concat(M.settings, ", "))
    end
  end
  local d, settings = poolsh.default_pool(), {}
  for _, k in ipairs(M.settings) do
    if opts[k] ~= nil then settings[k] = opts[k]
    elseif k ~= "max_size" then settings[k] = d[k] end
  end
  local ok, p = pcall(poolsh.pool, settings)
  if not ok then fail("%s", (tostring(p):gsub("^poolsh%.pool: ", ""))) end
  return setmetatable({ pool = p }, A)
end

local palloc = debug.getregistry()["poolsh.Pool"]
palloc = palloc and palloc.methods and palloc.methods.alloc

--- A pool Buffer of `size` bytes on `stream`, or nil and the message when
-- the pool is out of memory; other errors raise.
function A:alloc(size, stream)
  local ok, b = pcall(palloc or self.pool.alloc, self.pool, size, stream)
  if ok then return b end
  if tostring(b):find("cudaErrorMemoryAllocation", 1, true) then return nil, tostring(b) end
  error(b, 0)
end

--- Frees b on `stream` (cudaFreeAsync).
function A:free(b, stream) b:free(stream) end

--- The pool's counters (see the module's comment).
function A:stats()
  local p = self.pool
  local st = p:stats { estimates = false }
  local c = poolsh.core.counts().pools[p.id] or { growths = 0, releases = {} }
  local releases = 0
  for _, n in pairs(c.releases) do releases = releases + n end
  return { reserved = st.reserved, used = st.used, segments_allocated = c.growths,
           driver_frees = releases, peak_reserved = st.reserved_high, peak_used = st.used_high }
end

--- Destroys the pool (free its blocks first).
function A:close()
  if self.pool.live then self.pool:destroy() end
end

return M
