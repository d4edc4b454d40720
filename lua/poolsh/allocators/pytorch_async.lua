--- poolsh.allocators.pytorch_async: PyTorch's backend:cudaMallocAsync
-- (c10/cuda/CUDAMallocAsyncAllocator.cpp) behind the replay allocator
-- interface (docs/replay.md, "backend:cudaMallocAsync"). pytorch.new
-- hands it every conf whose backend is cudaMallocAsync.
--
--   local P = require "poolsh.allocators.pytorch_async"
--   local a = P.new { conf = "backend:cudaMallocAsync" [, device_lag = ms] }
--   local b, err = a:alloc(size, stream)  -- cudaMallocAsync(size, stream)
--   a:record_stream(b, s)   -- b is used on s too: its free waits for s
--   a:free(b)               -- cudaFreeAsync on b's creation stream, or,
--                           -- after record_stream, on the unifying stream
--   a:empty_cache()         -- cudaDeviceSynchronize + TrimTo(0)
--   a:stats()  -- {reserved, used, segments_allocated, driver_frees,
--              --  peak_reserved, peak_used}
--   a:close()
--
-- What PyTorch does, and so this module: the device's default pool, its
-- release threshold at UINT64_MAX and its three reuse policies on; each
-- request exactly as asked (no rounding, no cache of PyTorch's own); the
-- free on the stream that allocated. A tensor used on other streams
-- (record_stream) is freed without a host wait: an event on its creation
-- stream and on each usage stream, a "unifying" stream of PyTorch's that
-- waits on them all, and cudaFreeAsync on that stream, so that user streams
-- reuse the memory only once the device has run past it. memory_stats()'s
-- reserved and allocated peaks are the pool's ReservedMemHigh and
-- UsedMemHigh. per_process_memory_fraction (PyTorch's memory fraction)
-- refuses an allocation that would bring the bytes asked for above that
-- fraction of the device's memory; the native allocator's settings
-- (max_split_size_mb and the rest) are read and unused, as in PyTorch,
-- which warns only for the keys its CUDA parser marks native-specific
-- (pytorch_conf's native_specific): a.warning, and once on stderr.
--
-- device_lag (ms, default M.device_lag): how far the device runs behind the
-- host in the run being replayed. poolsh.replay reads it from the
-- allocator object and keeps each stream busy until that long after each
-- recorded call (docs/replay.md); 0 leaves the device idle.
local poolsh = require "poolsh"
local pool = require "poolsh.allocators.pool"
local conf = require "poolsh.allocators.pytorch_conf"

local M = {}
local A = {}
A.__index = A

--- How far behind the host the device runs in a replay, in ms: under
-- the 237 to 316 µs the record_stream'ed frees of tests/data/torch/modes's
-- transformer_2streams (an H200) waited for their streams' work, which
-- bounds the lag from above (docs/replay.md, "backend:cudaMallocAsync").
M.device_lag = 0.2

local function fail(fmt, ...) error("pytorch allocator: " .. fmt:format(...), 0) end

local Stream = debug.getregistry()["poolsh.Stream"]

-- Raises unless s is a live poolsh.Stream; names the argument.
local function check_stream(s, what)
  if getmetatable(s) ~= Stream then
    fail("%s must be a poolsh.Stream, got %s", what, s == nil and "nil" or (type(s) == "userdata"
      and tostring(s) or type(s)))
  end
  return s
end

--- Whether opts (pytorch.new's) give a conf whose backend is cudaMallocAsync.
function M.wants(opts)
  if type(opts) ~= "table" or type(opts.conf) ~= "string" then return false end
  local ok, t = pcall(conf.parse, opts.conf)
  return ok and t.backend == "cudaMallocAsync"
end

--- A new allocator; opts: conf (a PYTORCH_CUDA_ALLOC_CONF text whose
-- backend is cudaMallocAsync), device_lag (ms >= 0), deferred_free
-- (accepted for pytorch.new's callers; this backend never defers).
function M.new(opts)
  if type(opts) ~= "table" then fail("options table expected, got %s", type(opts)) end
  for k in pairs(opts) do
    if k ~= "conf" and k ~= "device_lag" and k ~= "deferred_free" and k ~= "name" then
      fail("unknown option '%s' with backend:cudaMallocAsync (conf, device_lag)", tostring(k))
    end
  end
  if type(opts.conf) ~= "string" then fail("conf must be a string, got %s", type(opts.conf)) end
  local ok, t = pcall(conf.parse, opts.conf)
  if not ok then fail("%s", tostring(t)) end
  if t.backend ~= "cudaMallocAsync" then
    fail("conf '%s' does not choose backend:cudaMallocAsync", opts.conf)
  end
  local lag = opts.device_lag
  if lag == nil then lag = M.device_lag end
  if type(lag) ~= "number" or lag < 0 or lag ~= lag or lag == math.huge then
    fail("device_lag must be a number of ms >= 0, got %s", tostring(lag))
  end
  if opts.deferred_free ~= nil and type(opts.deferred_free) ~= "boolean" then
    fail("deferred_free must be a boolean, got %s", type(opts.deferred_free))
  end
  local limit
  if t.per_process_memory_fraction then
    limit = math.floor(t.per_process_memory_fraction * poolsh.device().total)
  end
  local warning   -- PyTorch's, for a native-specific key; on stderr once a process
  if #t.native_specific > 0 then
    warning = conf.ASYNC_WARNING
    if not M.warned then M.warned = true; io.stderr:write("pytorch allocator: warning: ", warning, "\n") end
  end
  local inner = pool.new { default = true, release_threshold = "max", follow_event_dependencies = true,
                           opportunistic = true, internal_dependencies = true, name = opts.name or "torch" }
  return setmetatable({
    inner = inner, device_lag = lag, limit = limit, asked = 0, warning = warning,
    uses = {},      -- block -> {stream = true}: record_stream's usage streams
    live = {},      -- block -> true: allocated and not freed
  }, A)
end

--- A block of `size` bytes (exactly) on `stream`, or nil and the message
-- when the pool or the memory fraction refuses it. Size 0 gives a block
-- of no memory (PyTorch's nullptr).
function A:alloc(size, stream)
  if math.type(size) ~= "integer" or size < 0 then
    fail("size must be a whole number of bytes >= 0, got %s", tostring(size))
  end
  check_stream(stream, "stream")
  if self.limit and self.asked + size > self.limit then
    return nil, ("pytorch allocator: out of memory: allocation of %d bytes would exceed allowed memory "
      .. "(per_process_memory_fraction: %d of %d bytes in use)"):format(size, self.asked, self.limit)
  end
  local b, err
  if size == 0 then b = { size = 0, stream = stream }
  else
    b, err = self.inner:alloc(size, stream)
    if not b then return nil, "pytorch allocator: " .. err end
  end
  self.asked = self.asked + size
  self.live[b] = true
  return b
end

-- Raises unless b is a block of this allocator not yet freed.
function A:check(b)
  if not self.live[b] then
    fail("%s is not a live block of this allocator (freed already, or another's)", tostring(b))
  end
end

--- Block b is used on `stream` too: its free will wait for the work queued
-- there at the time of the free. Its creation stream is ignored (PyTorch
-- warns).
function A:record_stream(b, stream)
  self:check(b)
  check_stream(stream, "stream")
  if stream == b.stream then return end
  local u = self.uses[b] or {}
  u[stream] = true
  self.uses[b] = u
end

-- PyTorch's per-device stream for record_stream'ed frees, made on first use.
function A:unifying()
  if not self.unify then self.unify = poolsh.stream { blocking = false } end
  return self.unify
end

--- Frees b (cudaFreeAsync) on its creation stream; `stream` is not used.
-- After record_stream, the free goes on the unifying stream, which first
-- waits for an event on the creation stream and on each usage stream.
-- Returns false: the block needs no free_completed.
function A:free(b, stream)
  local _ = stream
  self:check(b)
  local uses = self.uses[b]
  if b.size > 0 and uses then
    local u = self:unifying()
    u:wait(b.stream:record(poolsh.event { timing = false }))
    local order = {}
    for s in pairs(uses) do order[#order + 1] = s end
    table.sort(order, function(x, y) return x.id < y.id end)
    for _, s in ipairs(order) do u:wait(s:record(poolsh.event { timing = false })) end
    b:free(u)
  elseif b.size > 0 then
    b:free(b.stream)
  end
  -- only once the free is made: a failed one leaves b live and its uses kept
  self.live[b], self.uses[b] = nil, nil
  self.asked = self.asked - b.size
  return false
end

--- PyTorch's emptyCache: waits for the device, then trims the pool to 0.
function A:empty_cache()
  poolsh.sync()
  local before = self.inner.pool:stats { estimates = false }.reserved
  self.inner.pool:trim(0)
  local w = self.inner.watched
  if w then
    local gone = before - self.inner.pool:stats { estimates = false }.reserved
    if gone > 0 then w(self.inner, "release", { size = gone, cause = "empty_cache" }) end
  end
end

--- The counters of the replay interface (memory_stats(): reserved and
-- allocated peaks are the pool's ReservedMemHigh and UsedMemHigh).
function A:stats() return self.inner:stats() end

--- Frees every block still allocated, trims the pool, gives its settings
-- back and destroys the unifying stream.
function A:close()
  local left = {}
  for b in pairs(self.live) do left[#left + 1] = b end
  for _, b in ipairs(left) do self:free(b) end
  self.inner:close()
  if self.unify then self.unify:destroy(); self.unify = nil end
end

return M
