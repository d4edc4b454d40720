--- poolsh.allocators.cupy: CuPy's default memory pool (cupy.cuda.MemoryPool,
-- one SingleDeviceMemoryPool per device) written in Lua on poolsh.malloc,
-- behind the replay allocator interface (docs/replay.md).
--
--   local CP = require "poolsh.allocators.cupy"
--   local a = CP.new()
--   local b, err = a:alloc(size, stream)  -- nil and a message on out-of-memory
--   a:free(b [, stream])                  -- back to its stream's arena
--   a:free_all_blocks([stream])           -- cudaFree of every unsplit free chunk
--   a:stats()  -- {reserved (total_bytes), used (used_bytes), segments_allocated,
--              --  driver_frees, segments, peak_reserved, peak_used, free_bytes}
--
-- The rules (CuPy's):
-- * a request is rounded up to 512 B; a request of 0 B gets no memory;
-- * each stream has an arena of free chunks binned by size; a request takes
--   a chunk from the smallest non-empty bin of its size or more (CuPy takes
--   any chunk of that bin; here the lowest address, to be deterministic);
-- * a larger chunk is split: the rest (any size) goes back to the arena;
-- * no chunk fits: cudaMalloc of exactly the rounded size;
-- * a freed chunk merges with the free neighbours of its allocation and
--   goes back to the arena of the stream it was allocated on;
-- * cudaMalloc fails: free_all_blocks() and retry, then a full garbage
--   collection, free_all_blocks() and a last retry.
local poolsh = require "poolsh"
local util = require "poolsh.allocators.util"

local M = { UNIT = 512 }
local A = {}
A.__index = A

local function fail(fmt, ...) error("cupy allocator: " .. fmt:format(...), 0) end

local live = require "poolsh.live.allocators"

--- The size CuPy rounds a request of `size` bytes to.
function M.round_size(size) return (size + M.UNIT - 1) // M.UNIT * M.UNIT end

--- A new pool; one option: name (what the live lines call it, default
-- "cupy": docs/live.md).
function M.new(opts)
  if opts ~= nil and type(opts) ~= "table" then fail("options table expected, got %s", type(opts)) end
  for k in pairs(opts or {}) do
    if k ~= "name" then fail("unknown option '%s' (name)", tostring(k)) end
  end
  local name = opts and opts.name
  if name ~= nil and (type(name) ~= "string" or name == "") then
    fail("name must be a non-empty string, got %s", type(name))
  end
  return live.register(setmetatable({
    arenas = {},     -- [stream] = {sizes = sorted bin sizes, bins = {[size] = chunks by address}}
    in_use = {},     -- chunk -> true
    mems = {},       -- cudaMalloc'd allocations -> true
    st = { reserved = 0, used = 0, segments = 0, segments_allocated = 0, driver_frees = 0,
           peak_reserved = 0, peak_used = 0 },
  }, A), name or "cupy", function(a) return a.st.reserved, a.st.used end)
end

local function addr(c) return c.mem.addr + c.offset end

-- Bins and their sizes are sorted arrays searched with the comparison
-- inline (no comparison function); a chunk in a bin carries its address
-- as c.k, set when it goes in.

-- The first index in sorted array t of integers whose value is not below v.
local function lower_size(t, v)
  local lo, hi = 1, #t + 1
  while lo < hi do
    local mid = (lo + hi) // 2
    if t[mid] < v then lo = mid + 1 else hi = mid end
  end
  return lo
end

-- Puts v at index i of array t, moving the rest up.
local function put(t, i, v)
  local n = #t
  if i <= n then table.move(t, i, n, i + 1) end
  t[i] = v
end

-- Takes index i out of array t, moving the rest down.
local function take(t, i)
  local n = #t
  if i < n then table.move(t, i + 1, n, i) end
  t[n] = nil
end

function A:arena(stream)
  local ar = self.arenas[stream]
  if not ar then ar = { sizes = {}, bins = {} }; self.arenas[stream] = ar end
  return ar
end

-- Puts free chunk c in its arena's bin.
function A:append(c)
  local ar = self:arena(c.stream)
  local size = c.size
  local bin = ar.bins[size]
  if not bin then
    bin = {}
    ar.bins[size] = bin
    put(ar.sizes, lower_size(ar.sizes, size), size)
  end
  local k = c.mem.addr + c.offset
  c.k = k
  put(bin, util.address_bound(bin, k), c)
  c.free = true
end

-- Takes chunk c out of its bin (c is free).
function A:remove(c)
  local ar = self.arenas[c.stream]
  local bin = ar.bins[c.size]
  local i = util.address_bound(bin, c.k)
  assert(bin[i] == c, "cupy allocator: free list out of order")
  take(bin, i)
  if #bin == 0 then
    ar.bins[c.size] = nil
    take(ar.sizes, lower_size(ar.sizes, c.size))
  end
  c.free = false
end

-- A free chunk of `stream` of `size` bytes (split off a larger one), or nil.
function A:get_chunk(size, stream)
  local ar = self.arenas[stream]
  if not ar then return nil end
  local sizes, bins = ar.sizes, ar.bins
  local i = bins[size] and 0 or lower_size(sizes, size)   -- 0: a bin of exactly size
  local s = i == 0 and size or sizes[i]
  if not s then return nil end
  local bin = bins[s]
  local c = bin[1]                  -- the lowest address: out of its bin (remove's work,
  take(bin, 1)                      -- its place known)
  if #bin == 0 then
    bins[s] = nil
    take(sizes, i == 0 and lower_size(sizes, s) or i)
  end
  c.free = false
  if c.size > size then
    local rest = { mem = c.mem, offset = c.offset + size, size = c.size - size, stream = c.stream,
                   prev = c, next = c.next }
    if c.next then c.next.prev = rest end
    c.next, c.size = rest, size
    self:append(rest)
  end
  return c
end

-- The counters that keep a peak, and its name.
local PEAK = { reserved = "peak_reserved", used = "peak_used" }

-- Adds delta to counter `key`, raising its peak with it when it keeps one.
function A:count(key, delta)
  local st = self.st
  local v = st[key] + delta
  st[key] = v
  local peak = PEAK[key]
  if peak and v > st[peak] then st[peak] = v end
end

-- cudaMalloc of `size` bytes as one chunk, or nil and the error.
function A:try_malloc(size, stream)
  local buf, err = util.malloc(size)
  if not buf then return nil, err end
  if self.watched then self.watched(self, "own", buf) end
  local mem = { buffer = buf, addr = buf.addr, size = size }
  self.mems[mem] = true
  self:count("reserved", size); self:count("segments", 1)
  self.st.segments_allocated = self.st.segments_allocated + 1
  return { mem = mem, offset = 0, size = size, stream = stream }
end

-- The stream argument: a live poolsh.Stream, nil for the default stream.
local function check_stream(s)
  if s == nil then return poolsh.default_stream() end
  local mt = getmetatable(s)
  if type(mt) ~= "table" or mt.__name ~= "poolsh.Stream" then fail("poolsh.Stream expected, got %s", type(s)) end
  if not s.live then fail("stream %s was destroyed", s.name) end
  return s
end

--- A block of `size` bytes (>= 0) for `stream`, or nil and the message.
function A:alloc(size, stream)
  local n = size
  if math.type(n) ~= "integer" or n < 0 then
    local ok
    ok, n = pcall(poolsh.size, size)
    if not ok then fail("%s", (tostring(n):gsub("^poolsh%.size: ", ""))) end
  end
  stream = check_stream(stream)
  local b
  if n == 0 then b = { size = 0, requested = 0, owner = self, stream = stream }
  else
    local rounded = M.round_size(n)
    local c = self:get_chunk(rounded, stream)
    local fresh = not c
    if not c then
      local err
      c, err = self:try_malloc(rounded, stream)
      self.cause = "out of memory: free_all_blocks"
      if not c then self:free_all_blocks(); c, err = self:try_malloc(rounded, stream) end
      if not c then collectgarbage(); self:free_all_blocks(); c, err = self:try_malloc(rounded, stream) end
      self.cause = nil
      if not c then
        return nil, ("cupy allocator: out of memory allocating %s on stream %s (total %s): %s"):format(
          poolsh.fmt(n), stream.name, poolsh.fmt(self.st.reserved), err)
      end
    end
    b = c
    b.requested, b.owner = n, self
    self:count("used", c.size)
    local w = self.watched
    if w then
      local from = b.live_name
      b.live_name = live.label(self)
      w(self, "alloc", fresh and { size = n, block = b, fresh = rounded }
                      or { size = n, block = b, from = from,
                             why = from and "cached chunk" or "split off a cached chunk" })
    end
  end
  self.in_use[b] = true
  return b
end

--- Returns block b to the arena of the stream it was allocated on, merged
-- with its free neighbours; `stream` is not needed.
function A:free(b, stream)
  local _ = stream
  if type(b) ~= "table" then fail("block expected, got %s", type(b)) end
  if not self.in_use[b] then
    if b.owner == self then fail("double free of a block of %s", poolsh.fmt(b.requested)) end
    fail("the block was not allocated by this allocator")
  end
  self.in_use[b] = nil
  if not b.mem then return end
  self:count("used", -b.size)
  local c = b
  local nx = c.next
  if nx and nx.free then self:remove(nx); c.size, c.next = c.size + nx.size, nx.next; if nx.next then nx.next.prev = c end end
  local pv = c.prev
  if pv and pv.free then self:remove(pv); pv.size, pv.next = pv.size + c.size, c.next; if c.next then c.next.prev = pv end; c = pv end
  -- a fresh table for the free chunk: a stale block stays known as freed
  if c == b then
    c = { mem = b.mem, offset = b.offset, size = b.size, stream = b.stream, prev = b.prev, next = b.next,
          live_name = b.live_name }
    if c.prev then c.prev.next = c end
    if c.next then c.next.prev = c end
  end
  self:append(c)
end

--- cudaFree of every free chunk that is a whole allocation, in the arena of
-- `stream` or in all.
function A:free_all_blocks(stream)
  local arenas = stream and { [stream] = self.arenas[stream] } or self.arenas
  for _, ar in pairs(arenas) do
    for i = #ar.sizes, 1, -1 do
      local bin = ar.bins[ar.sizes[i]]
      for j = #bin, 1, -1 do
        local c = bin[j]
        if not c.prev and not c.next then self:release(c) end
      end
    end
  end
end
A.empty_cache = A.free_all_blocks

-- cudaFree of free chunk c, a whole allocation.
function A:release(c)
  self:remove(c)
  c.mem.buffer:free()
  self.mems[c.mem] = nil
  self:count("reserved", -c.size); self:count("segments", -1)
  self.st.driver_frees = self.st.driver_frees + 1
  if self.watched then self.watched(self, "release", { size = c.size, cause = self.cause or "free_all_blocks" }) end
end

--- Frees every block still allocated, then every allocation.
function A:close()
  for b in pairs(self.in_use) do self:free(b) end
  self:free_all_blocks()
end

--- The counters (CuPy's used_bytes and total_bytes are used and reserved).
function A:stats()
  local t = {}
  for k, v in pairs(self.st) do t[k] = v end
  t.free_bytes = t.reserved - t.used
  return require("poolsh.stats").mark(t)
end

--- The address of block b (for display), nil for a block of 0 B.
function A:addr(b) return b.mem and addr(b) end

return M
