--- poolsh.allocators.pytorch: PyTorch's native CUDA caching allocator (as in
-- PyTorch 2.11, its memory fraction and garbage collection included) behind the
-- replay allocator interface (docs/replay.md). The rules themselves live in
-- poolsh.allocators.caching; this module adds what a replay needs:
--
--   local P = require "poolsh.allocators.pytorch"
--   local a = P.new { max_split_size = nil, roundup_power2_divisions = nil,
--                     deferred_free = false }
--   local a = P.new { conf = "expandable_segments:True,max_split_size_mb:128" }
--   local b, err = a:alloc(size, stream)  -- nil and a message on out-of-memory
--   a:free(b, stream)          -- free_requested; back to the cache at once
--                              -- (returns false), or, with deferred_free
--                              -- (returns true), at
--   a:free_completed(b)        -- (a no-op for a block already back)
--   a:record_stream(b, s)      -- once freed, b waits for s's queued work
--   a:empty_cache(); a:close()
--   a:restore(segs, blocks, stream_of)  -- a snapshot's state before its trace
--   a:segment_alloc(addr, size)         -- the snapshot's next cudaMalloc address
--   a:stats()  -- {reserved, used, segments_allocated, driver_frees, segments,
--              --  peak_reserved, peak_used, num_alloc_retries, num_ooms}
--
-- deferred_free: PyTorch returns a block used on another stream
-- (record_stream) to the cache only when that stream's work is done, which
-- its snapshots record as free_completed; a replay of a snapshot sets it and
-- calls free_completed where the snapshot does. Out of memory, the cache is
-- freed (pending blocks first) and the cudaMalloc retried, as in PyTorch.
-- A replay is faithful only from the recorded state (restore: free pieces of
-- the segments live before the trace serve requests) and with the recorded
-- addresses (segment_alloc: best fit breaks ties between equal free blocks
-- by address, and cudaMalloc's addresses are not in allocation order).
local C = require "poolsh.allocators.caching"
local async = require "poolsh.allocators.pytorch_async"

local M = { round_size = C.round_size, allocation_size = C.allocation_size }
local A = {}
A.__index = A

local function rename(msg) return (tostring(msg):gsub("^caching allocator: ", "pytorch allocator: ")) end

-- Calls method f of the inner allocator; its errors name this allocator.
local function call(a, f, ...)
  local ok, r = pcall(f, a.inner, ...)
  if not ok then error(rename(r), 0) end
  return r
end

-- The caching allocator's options from a PYTORCH_CUDA_ALLOC_CONF text of
-- the native backend (poolsh.allocators.pytorch_conf).
local function conf_options(text)
  local ok, t = pcall(require("poolsh.allocators.pytorch_conf").parse, text)
  if not ok then error("pytorch allocator: " .. tostring(t), 0) end
  return {
    max_split_size = t.max_split_size, max_non_split_rounding = t.max_non_split_rounding,
    roundup_power2_divisions = t.roundup_power2_divisions,
    expandable = t.expandable_segments or nil, large_segment_size = t.large_segment_size,
    per_process_memory_fraction = t.per_process_memory_fraction,
    garbage_collection_threshold = t.garbage_collection_threshold,
  }
end

--- A new allocator; options: conf (PyTorch's PYTORCH_CUDA_ALLOC_CONF
-- text; expandable_segments:True maps pages on poolsh.vmm), or
-- max_split_size, max_non_split_rounding, roundup_power2_divisions,
-- per_process_memory_fraction and garbage_collection_threshold one by one; deferred_free (boolean); journal (a function called as
-- journal(action, addr, size, stream, pool, offset) at each map and unmap of
-- expandable pages, action "segment_map" or "segment_unmap" as in PyTorch's
-- snapshots, offset from the start of the segment's address range).
function M.new(opts)
  if async.wants(opts) then return async.new(opts) end   -- backend:cudaMallocAsync
  if opts ~= nil and type(opts) ~= "table" then
    error(("pytorch allocator: options table expected, got %s"):format(type(opts)), 0)
  end
  local inner_opts, deferred, journal = {}, false, nil
  for k, v in pairs(opts or {}) do
    if k == "deferred_free" then
      if type(v) ~= "boolean" then error(("pytorch allocator: deferred_free must be a boolean, got %s"):format(type(v)), 0) end
      deferred = v
    elseif k == "journal" then
      if type(v) ~= "function" then error(("pytorch allocator: journal must be a function, got %s"):format(type(v)), 0) end
      journal = v
    elseif k ~= "conf" and k ~= "name" then
      inner_opts[k] = v
    end
  end
  if opts and opts.conf ~= nil then
    if next(inner_opts) then
      error("pytorch allocator: give conf or the options one by one, not both", 0)
    end
    inner_opts = conf_options(opts.conf)
  end
  if journal then
    inner_opts.journal = function(action, seg, off, size)
      journal(action == "map" and "segment_map" or "segment_unmap", seg.addr + off, size, seg.stream, seg.pool, off)
    end
  end
  inner_opts.name = opts and opts.name or "torch"
  local ok, inner = pcall(C.new, inner_opts)
  if not ok then error(rename(inner), 0) end
  return setmetatable({ inner = inner, deferred = deferred }, A)
end

--- A block of `size` bytes for `stream`, or nil and the message when even
-- after freeing the cache cudaMalloc fails.
function A:alloc(size, stream)
  local ooms = self.inner.st.num_ooms
  local ok, b = pcall(self.inner.alloc, self.inner, size, stream)
  if ok then return b end
  if self.inner.st.num_ooms > ooms then return nil, rename(b) end
  error(rename(b), 0)
end

--- Frees block b (PyTorch's free_requested); `stream` is not needed: a
-- block goes back to the pool of the stream that allocated its segment.
-- Returns whether b waits for free_completed (false: it is back in the
-- cache, and a replay need not remember it).
function A:free(b, stream)
  local _ = stream
  call(self, self.inner.free, b, self.deferred)
  return self.inner.pending[b] == true
end

--- Block b is used on `stream` too: once freed, it waits for the work
-- queued there (PyTorch's Tensor.record_stream).
function A:record_stream(b, stream) call(self, self.inner.record_stream, b, stream) end

--- Returns a freed block to the cache (PyTorch's free_completed).
function A:free_completed(b) call(self, self.inner.free_completed, b) end

--- A recorded run's segment_alloc: its next cudaMalloc, if of `size` bytes,
-- is ordered as if at `addr` (best fit breaks ties by address).
function A:segment_alloc(addr, size) call(self, self.inner.expect_segment, addr, size) end

--- Rebuilds a recorded run's state before its first event: its segments
-- (rec.initial_segments) and the blocks live in them (rec.initial), each at
-- its recorded offset; stream_of maps recorded streams to poolsh.Streams.
-- Returns {[recorded address] = block}.
function A:restore(segments, blocks, stream_of)
  return call(self, self.inner.restore, segments, blocks, stream_of)
end

--- cudaFree of every cached segment with no allocated block.
function A:empty_cache() self.inner:empty_cache() end

--- The address of block b (for display and replays).
function A:addr(b) return b.segment.addr + b.offset end

--- Frees every block still allocated, then every segment.
function A:close()
  local inner = self.inner
  for b in pairs(inner.active) do inner:free(b) end
  inner:empty_cache()
end

--- The counters of the replay interface, PyTorch's names beside.
function A:stats()
  local st = self.inner.st
  return require("poolsh.stats").mark {
    reserved = st.reserved, used = st.allocated,
    segments_allocated = st.num_device_alloc, driver_frees = st.num_device_free,
    segments = st.segments, peak_reserved = st.peak_reserved, peak_used = st.peak_allocated,
    num_alloc_retries = st.num_alloc_retries, num_ooms = st.num_ooms,
  }
end

--- The segments by address (poolsh.allocators.caching's a:segments()).
function A:segments() return self.inner:segments() end

return M
