--- poolsh.allocators.caching: a caching allocator in the style of PyTorch's
-- CUDACachingAllocator, written in Lua on poolsh.malloc (cudaMalloc).
--
--   local C = require "poolsh.allocators.caching"
--   local a = C.new { max_split_size = nil, roundup_power2_divisions = nil }
--   local b = a:alloc(size [, stream])  -- a block: {segment, offset, size,
--                                       -- requested, stream, allocated}
--   a:free(b)                           -- back to the cache, at once
--   a:free(b, true)                     -- requested only: the block stays out
--   a:free_completed(b)                 -- of the cache until this
--   a:record_stream(b, s)               -- once freed, b waits for s's work
--   a:empty_cache()                     -- cudaFree of every unused segment
--   a:restore(segs, blocks, stream_of)  -- rebuild a recorded state
--   a:expect_segment(addr, size)        -- order the next segment as at addr
--   a:stats()     -- {reserved, allocated, requested, segments, active,
--                 --  peak_reserved, peak_allocated, num_alloc_retries,
--                 --  num_ooms, num_device_alloc, num_device_free}
--   a:segments()  -- {{addr, size, stream, pool, blocks = {{offset, size,
--                 --  allocated}}}} by address
--   C.round_size(size [, divisions]), C.allocation_size(rounded)
--
-- With expandable = true (PyTorch's expandable_segments:True), segments are
-- poolsh.vmm address ranges grown page by page instead (see "Expandable
-- segments" below).
--
-- The rules (PyTorch's):
-- * a request is rounded up to 512 B (with roundup_power2_divisions = N, a
--   power of 2 from 2, sizes above 512*N B go up to the next of N steps
--   between powers of 2; N may differ per power-of-2 interval of sizes: a
--   table by MiB, {[1] = N, [2] = N, ... [32768] = N}, as PyTorch's
--   "[1:N,2:N,...]" and its snapshots' allocator_settings);
-- * rounded sizes up to 1 MiB are small, served from 2 MiB segments; larger
--   ones from 20 MiB segments below 10 MiB, else from a segment of their
--   size rounded up to 2 MiB;
-- * a free block is reused only by the stream that allocated its segment:
--   best fit by size (then address) among that stream's free blocks of the
--   pool (small or large);
-- * a block larger than the request is split when the rest is >= 512 B
--   (small) or > 1 MiB (large, and only for requests below max_split_size);
--   blocks of max_split_size or more are never split, serve requests below
--   it never, and others only when less than 20 MiB too large;
-- * a freed block merges with free neighbours in its segment;
-- * when cudaMalloc fails: free the cached oversize blocks (max_split_size
--   set) and retry, then free every unused segment and retry once more
--   (counted in num_alloc_retries), then raise;
-- * with per_process_memory_fraction below 1, a new segment that would
--   bring reserved above fraction x the device's memory fails as cudaMalloc
--   does (the steps above follow); with garbage_collection_threshold too,
--   before a new segment, while reserved is above threshold x that maximum,
--   cached unsplit blocks of the large pool at least as old as their
--   average are freed (PyTorch's garbage_collect_cached_blocks; a block's
--   age: the lookups in its pool since it was cached).
-- Segments are poolsh.malloc Buffers; empty_cache() and the retries cudaFree
-- them (synchronous, like PyTorch's).
--
-- Expandable segments (PyTorch 2.11's ExpandableSegment):
-- * one segment per (small/large pool, stream), made when first needed: an
--   address range of 1.125 times the device's memory (poolsh.vmm, through
--   poolsh.allocators.vmm_pages), pages of 2 MiB (small) or
--   large_segment_size (default 20 MiB) mapped on demand;
-- * a request no free block fits maps the rounded request's worth of pages
--   at the lowest unmapped address of the stream's segment (a hole before
--   the end first), counting the free block just before it: new pages merge
--   with free mapped neighbours, the request is split from the low end;
-- * best fit as above, except that among blocks of an expandable segment a
--   larger block is taken when its size plus the unmapped run after it is
--   smaller (PyTorch's tie rule: the free end of the mapped part grows last);
-- * any remainder of 512 B or more is split off, large pool included;
--   max_split_size only keeps its say in which free block a request takes;
-- * empty_cache() and the last out-of-memory step unmap every whole free
--   page (after a sync of the segment's stream); a segment left with no
--   mapped page gives its range back;
-- * reserved counts mapped bytes; num_device_alloc and num_device_free count
--   map and unmap calls (one per run of pages); segments stays 0.
local poolsh = require "poolsh"
local util = require "poolsh.allocators.util"
local live = require "poolsh.live.allocators"

local MiB = 1024 * 1024
local M = {
  MIN_BLOCK = 512,            -- every size is rounded to a multiple of this
  SMALL_SIZE = 1 * MiB,       -- the largest small request
  SMALL_BUFFER = 2 * MiB,     -- small segments
  LARGE_BUFFER = 20 * MiB,    -- segments for requests of 1 to 10 MiB
  MIN_LARGE_ALLOC = 10 * MiB, -- from here, a segment of the request's size
  ROUND_LARGE = 2 * MiB,      -- ... rounded up to this
  MAX_SIZE = 1 << 52,         -- larger requests are refused
}
local A = {}
A.__index = A

local function fail(fmt, ...) error("caching allocator: " .. fmt:format(...), 0) end

-- Bytes in v (poolsh.size), or a failure naming what is wrong.
local function bytes(v, what)
  local ok, n = pcall(poolsh.size, v)
  if not ok then fail("%s%s", what, (tostring(n):gsub("^poolsh%.size: ", ""))) end
  return n
end

local function is_pow2(n) return n > 0 and n & (n - 1) == 0 end

-- The highest power of 2 <= n (n >= 1).
local function pow2_floor(n)
  local p = 1
  while p <= n >> 1 do p = p << 1 end
  return p
end

-- The divisions for `size` from a table by MiB interval (PyTorch's 16:
-- [1 MiB, 2 MiB) and below, [2, 4), ... [32 GiB, ...)).
local function interval_divisions(t, size)
  local mib = 1
  while mib < 32768 and (mib << 21) <= size do mib = mib << 1 end
  return t[mib] or t[tostring(mib)] or 0
end

--- The size a request of `size` bytes is rounded to; `divisions`: nil, a
-- number, or a table by MiB interval (see the top).
function M.round_size(size, divisions)
  if size < M.MIN_BLOCK then return M.MIN_BLOCK end
  if type(divisions) == "table" then divisions = interval_divisions(divisions, size) end
  if divisions and divisions > 1 and size > M.MIN_BLOCK * divisions and not is_pow2(size) then
    local floor = pow2_floor(size)
    local step = floor // divisions
    if step == 0 then return floor << 1 end
    return (size + step - 1) // step * step
  end
  return (size + M.MIN_BLOCK - 1) // M.MIN_BLOCK * M.MIN_BLOCK
end

--- The segment cudaMalloc'd for a rounded request that no cached block fits.
function M.allocation_size(size)
  if size <= M.SMALL_SIZE then return M.SMALL_BUFFER end
  if size < M.MIN_LARGE_ALLOC then return M.LARGE_BUFFER end
  return (size + M.ROUND_LARGE - 1) // M.ROUND_LARGE * M.ROUND_LARGE
end

local function check_division(d)
  if math.type(d) ~= "integer" or d < 0 or (d > 0 and not is_pow2(d)) then
    fail("roundup_power2_divisions must be 0 or a power of 2, got %s", tostring(d))
  end
  return d
end

-- The roundup_power2_divisions option, checked; a table is copied with
-- integer keys (the snapshots' allocator_settings have string ones).
local function divisions_option(div)
  if type(div) ~= "table" then return div ~= nil and check_division(div) or nil end
  local t = {}
  for k, d in pairs(div) do
    local mib = math.tointeger(tonumber(k))
    if not mib or mib < 1 or mib > 32768 or not is_pow2(mib) then
      fail("roundup_power2_divisions: interval %s is not a power of 2 MiB from 1 to 32768", tostring(k))
    end
    t[mib] = check_division(d)
  end
  return t
end

-- The options M.new takes.
local OPTIONS = {}
for _, k in ipairs { "max_split_size", "max_non_split_rounding", "roundup_power2_divisions", "expandable",
                     "large_segment_size", "journal", "per_process_memory_fraction",
                     "garbage_collection_threshold", "name" } do
  OPTIONS[k] = true
end

--- A new allocator; options: max_split_size (a size of 20 MiB or more;
-- default none), max_non_split_rounding (how much larger than a request of
-- max_split_size or more a cached block it takes may be: 20 MiB or more,
-- default 20 MiB), roundup_power2_divisions (0, or a power of 2, or a table
-- of them by MiB interval; default off), per_process_memory_fraction (a
-- number from 0 to 1: new segments stop at that share of
-- poolsh.device().total; default 1, no limit), garbage_collection_threshold
-- (a number strictly between 0 and 1; acts only with a fraction below 1),
-- name (what the live lines call it, default "cache": docs/live.md).
function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail("options table expected, got %s", type(opts)) end
  for k in pairs(opts) do
    if not OPTIONS[k] then fail("unknown option '%s'", tostring(k)) end
  end
  if opts.expandable ~= nil and type(opts.expandable) ~= "boolean" then
    fail("expandable must be a boolean, got %s", type(opts.expandable))
  end
  local large_page = M.LARGE_BUFFER
  if opts.large_segment_size ~= nil then
    large_page = bytes(opts.large_segment_size, "large_segment_size: ")
    if large_page < M.SMALL_BUFFER or large_page % M.SMALL_BUFFER ~= 0 then
      fail("large_segment_size must be a multiple of 2 MiB, got %s", poolsh.fmt(large_page))
    end
  end
  if opts.name ~= nil and (type(opts.name) ~= "string" or opts.name == "") then
    fail("name must be a non-empty string, got %s", type(opts.name))
  end
  if opts.journal ~= nil and type(opts.journal) ~= "function" then
    fail("journal must be a function, got %s", type(opts.journal))
  end
  local split = math.maxinteger
  if opts.max_split_size ~= nil then
    split = bytes(opts.max_split_size, "max_split_size: ")
    if split < M.LARGE_BUFFER then fail("max_split_size must be at least 20 MiB, got %s", poolsh.fmt(split)) end
  end
  local rounding = M.LARGE_BUFFER
  if opts.max_non_split_rounding ~= nil then
    rounding = bytes(opts.max_non_split_rounding, "max_non_split_rounding: ")
    if rounding < M.LARGE_BUFFER then
      fail("max_non_split_rounding must be at least 20 MiB, got %s", poolsh.fmt(rounding))
    end
  end
  local div = divisions_option(opts.roundup_power2_divisions)
  local fraction, threshold = opts.per_process_memory_fraction, opts.garbage_collection_threshold
  if fraction ~= nil and (type(fraction) ~= "number" or not (fraction >= 0 and fraction <= 1)) then
    fail("per_process_memory_fraction must be a number from 0 to 1, got %s", tostring(fraction))
  end
  if threshold ~= nil and (type(threshold) ~= "number" or not (threshold > 0 and threshold < 1)) then
    fail("garbage_collection_threshold must be a number between 0 and 1 (both excluded), got %s", tostring(threshold))
  end
  local allowed   -- PyTorch's allowed_memory_maximum, set by a fraction below 1
  if fraction and fraction < 1 then allowed = math.floor(fraction * poolsh.device().total) end
  return live.register(setmetatable({
    allowed = allowed, gc = allowed and threshold and threshold or nil,
    lookups = { small = 0, large = 0 },         -- [pool]: find calls while gc is on (block ages)

    max_split = split, max_rounding = rounding, divisions = div,
    expandable = opts.expandable or false, journal = opts.journal,
    page = { small = M.SMALL_BUFFER, large = large_page },
    free_lists = { small = {}, large = {} },   -- [pool][stream] = blocks by (size, addr)
    unmapped = { small = {}, large = {} },     -- [pool][stream] = unmapped blocks by address
    segs = {}, active = {}, pending = {},       -- segments; allocated blocks; freed, not completed
    spare = {},                                 -- block tables for reuse (A:block)
    waiting = {},                               -- pending block -> events on the streams it was used on
    st = { reserved = 0, allocated = 0, requested = 0, segments = 0, active = 0,
           peak_reserved = 0, peak_allocated = 0, num_alloc_retries = 0, num_ooms = 0,
           num_device_alloc = 0, num_device_free = 0 },
  }, A), opts.name or "cache", function(a) return a.st.reserved, a.st.allocated end)
end

-- A free list holds a (pool, stream)'s free blocks sorted by size, then
-- by address: the segment's own, or the one given by expect_segment (a
-- recorded run's, so that a replay breaks ties as it did). Each block in a
-- list carries that address as b.k, set when it goes in; the searches
-- compare sizes and b.k inline (no comparison function, no key table).

-- The first index in list whose block is not below (size, k).
local function lower_bound(list, size, k)
  local lo, hi = 1, #list + 1
  while lo < hi do
    local mid = (lo + hi) // 2
    local m = list[mid]
    local ms = m.size
    if ms < size or (ms == size and m.k < k) then lo = mid + 1 else hi = mid end
  end
  return lo
end

-- The free list of b's pool and stream (made when first needed).
function A:list(b)
  local pool = self.free_lists[b.segment.pool]
  local l = pool[b.stream]
  if not l then l = {}; pool[b.stream] = l end
  return l
end

-- Puts free block b in its free list.
function A:insert(b)
  local l = self:list(b)
  local k = b.segment.key + b.offset
  b.k = k
  if self.gc then b.gc_base = self.lookups[b.segment.pool] end
  local i, n = lower_bound(l, b.size, k), #l
  if i <= n then table.move(l, i, n, i + 1) end
  l[i] = b
end

-- Takes free block b out of its free list.
function A:remove(b)
  local l = self:list(b)
  local i, n = lower_bound(l, b.size, b.k), #l
  assert(l[i] == b, "caching allocator: free list out of order")
  if i < n then table.move(l, i + 1, n, i) end
  l[n] = nil
end

-- A cached block of `stream` for `size` bytes, taken off its free list.
function A:find(pool, stream, size)
  if self.gc then self.lookups[pool] = self.lookups[pool] + 1 end
  local l = self.free_lists[pool][stream]
  if not l then return nil end
  local i = lower_bound(l, size, math.mininteger)
  local b = l[i]
  if not b then return nil end
  if b.segment.pages then
    -- the size a block of an expandable segment can grow to
    local function grows(x) local nx = x.next; return x.size + (nx and nx.mapped == false and nx.size or 0) end
    while l[i].segment.pages and l[i + 1] and grows(l[i + 1]) < grows(l[i]) do i = i + 1 end
    b = l[i]
  end
  if size < self.max_split and b.size >= self.max_split then return nil end
  if size >= self.max_split and b.size >= size + self.max_rounding then return nil end
  local n = #l
  if i < n then table.move(l, i + 1, n, i) end
  l[n] = nil
  return b
end

-- The counters that keep a peak, and its name.
local PEAK = { reserved = "peak_reserved", allocated = "peak_allocated" }

-- Adds delta to counter `key`, raising its peak with it when it keeps one.
function A:count(key, delta)
  local st = self.st
  local v = st[key] + delta
  st[key] = v
  local peak = PEAK[key]
  if peak and v > st[peak] then st[peak] = v end
end

-- cudaMalloc of a new segment; its one block, or nil and the error.
function A:malloc(pool, stream, bytes)
  local buf, err = util.malloc(bytes)
  if not buf then return nil, err end
  if self.watched then self.watched(self, "own", buf) end
  local key = self.expected and self.expected.size == bytes and self.expected.addr or buf.addr
  self.expected = nil
  local seg = { buffer = buf, addr = buf.addr, key = key, size = bytes, pool = pool, stream = stream }
  seg.head = { segment = seg, offset = 0, size = bytes, stream = stream, allocated = false }
  self.segs[seg] = true
  self:count("reserved", bytes); self:count("segments", 1)
  self.st.num_device_alloc = self.st.num_device_alloc + 1
  return seg.head
end

-- The most block tables kept for reuse.
local SPARE = 64

-- A free block's table: one that a merge freed (never handed out) or a
-- new one.
function A:block(seg, offset, size, stream, prev, nxt)
  local sp = self.spare
  local n = #sp
  local b
  if n > 0 then b = sp[n]; sp[n] = nil; b.k = nil else b = {} end
  b.segment, b.offset, b.size, b.stream, b.allocated, b.prev, b.next = seg, offset, size, stream, false, prev, nxt
  b.mapped, b.live_name = nil, nil
  return b
end

-- A new table in b's place in its segment, so that each allocation hands
-- out a table of its own (a stale one is then known as freed).
function A:renew(b)
  local nb = self:block(b.segment, b.offset, b.size, b.stream, b.prev, b.next)
  nb.mapped = b.mapped
  if nb.prev then nb.prev.next = nb else nb.segment.head = nb end
  if nb.next then nb.next.prev = nb end
  return nb
end

-- cudaFree of a free block that is a whole segment.
function A:release(b)
  self:remove(b)
  local seg = b.segment
  seg.buffer:free()
  self.segs[seg] = nil
  self:count("reserved", -seg.size); self:count("segments", -1)
  self.st.num_device_free = self.st.num_device_free + 1
  if self.watched then self.watched(self, "release", { size = seg.size, cause = self.cause or "empty_cache" }) end
end

local function whole(b) return not b.prev and not b.next end

-- Expandable segments (see the top).

-- The unmapped blocks of b's pool and stream, by address (made when first
-- needed).
function A:unmapped_list(b)
  local pool = self.unmapped[b.segment.pool]
  local l = pool[b.stream]
  if not l then l = {}; pool[b.stream] = l end
  return l
end

-- Puts unmapped block b in its list, in address order.
function A:enlist(b)
  local l = self:unmapped_list(b)
  local k = b.segment.key + b.offset
  b.k = k
  table.insert(l, util.address_bound(l, k), b)
end

-- Takes unmapped block b out of its list.
function A:unlist(b)
  local l = self:unmapped_list(b)
  local i = util.address_bound(l, b.k)
  assert(l[i] == b, "caching allocator: unmapped list out of order")
  table.remove(l, i)
end

-- Whether b is a block a request may grow into (free, mapped or not).
local function allocatable(b) return b ~= nil and not b.allocated end

-- The lowest-address unmapped block of the stream's segments that, with
-- the free block just before it, leaves room for `size` bytes (that free
-- block then); else the unmapped whole of a new segment (PyTorch's
-- find_expandable_block).
function A:find_expandable(pool, stream, size)
  for _, c in ipairs(self.unmapped[pool][stream] or {}) do
    if allocatable(c.prev) then c = c.prev end
    local room, b = 0, c
    while room < size and allocatable(b) do room = room + b.size; b = b.next end
    if room >= size then return c end
  end
  return self:new_expandable(pool, stream)
end

-- A new expandable segment of the pool for stream; its one block, unmapped.
function A:new_expandable(pool, stream)
  local pages = require("poolsh.allocators.vmm_pages").new(self.page[pool], stream)
  local seg = { pages = pages, addr = pages.addr, key = pages.addr, size = pages.size, pool = pool, stream = stream }
  local head = self:block(seg, 0, pages.size, stream, nil, nil)
  head.mapped = false
  seg.head = head
  self.segs[seg] = true
  self:enlist(head)
  return head
end

-- Maps [off, off + size) of expandable segment seg, which must be unmapped
-- (restore: the pages a recording had mapped before its trace).
function A:map_at(seg, off, size)
  local page = seg.pages.page
  if off % page ~= 0 or size % page ~= 0 or off < 0 or off + size > seg.size then
    fail("restore: an expandable run of %s at offset %d is not whole %s pages of its segment",
      poolsh.fmt(size), off, poolsh.fmt(page))
  end
  local u = seg.cursor   -- runs come in address order: go on from the last
  if not u or u.segment ~= seg or u.mapped ~= false or u.offset > off then u = seg.head end
  while u and u.offset + u.size <= off do u = u.next end
  if not u or u.mapped ~= false or u.offset + u.size < off + size then
    fail("restore: expandable runs overlap at offset %d", off)
  end
  if u.offset < off then   -- the unmapped part before stays unmapped
    self:unlist(u)
    local front = self:block(seg, u.offset, off - u.offset, u.stream, u.prev, u)
    front.mapped = false
    if front.prev then front.prev.next = front else seg.head = front end
    u.prev, u.offset, u.size = front, off, u.size - front.size
    self:enlist(front)
    self:enlist(u)
  end
  local ok, err = self:map_block(u, size)
  if not ok then fail("restore: out of memory mapping %s: %s", poolsh.fmt(size), err) end
  seg.cursor = u.next
end

-- Maps the pages under the first `size` bytes of unmapped block b; the
-- rest stays unmapped, the mapped part merges with free mapped
-- neighbours and goes to the free list. True, or nil and the error.
function A:map_block(b, size)
  local seg, at = b.segment, b.offset
  local got, err = seg.pages:map(at, size)
  if not got then return nil, err end
  self:unlist(b)
  b.mapped = true
  if got < b.size then
    local r = self:block(seg, b.offset + got, b.size - got, b.stream, b, b.next)
    r.mapped = false
    if b.next then b.next.prev = r end
    b.next, b.size = r, got
    self:enlist(r)
  end
  self:merge(b, b.prev)
  self:merge(b, b.next)
  self:insert(b)
  self:count("reserved", got)
  self.st.num_device_alloc = self.st.num_device_alloc + 1
  if self.journal then self.journal("map", seg, at, got) end
  return true
end

-- A free mapped block of at least `size` bytes made by mapping pages of the
-- stream's segment (PyTorch's try_allocate_expandable_block), off the free
-- list; or nil and the error when the device is out of memory.
function A:grow(pool, stream, size)
  local ok, c = pcall(self.find_expandable, self, pool, stream, size)
  if not ok then
    if tostring(c):find("cudaErrorMemoryAllocation", 1, true) then return nil, tostring(c) end
    error(c, 0)
  end
  if c.mapped == false then
    local done, err = self:map_block(c, math.min(c.size, size))
    if not done then return nil, err end
  end
  while c.size < size do
    local nx = c.next
    local done, err = self:map_block(nx, math.min(size - c.size, nx.size))
    if not done then return nil, err end
    c = nx
  end
  self:remove(c)
  return c
end

-- Unmaps the whole pages of free block b of an expandable segment (the
-- partial pages at its ends stay mapped, as free blocks of their own); b
-- becomes the unmapped part, merged with unmapped neighbours.
function A:unmap_block(b)
  local seg = b.segment
  local off, got = seg.pages:unmap(b.offset, b.size)
  if got == 0 then return end
  self:remove(b)
  local before, after = off - b.offset, b.offset + b.size - (off + got)
  if before > 0 then
    local f = self:block(seg, b.offset, before, b.stream, b.prev, b)
    f.mapped = true
    if f.prev then f.prev.next = f else seg.head = f end
    b.prev = f
    self:insert(f)
  end
  if after > 0 then
    local f = self:block(seg, off + got, after, b.stream, b, b.next)
    f.mapped = true
    if b.next then b.next.prev = f end
    b.next = f
    self:insert(f)
  end
  b.offset, b.size, b.mapped = off, got, false
  self:merge(b, b.prev)
  self:merge(b, b.next)
  self:enlist(b)
  self:count("reserved", -got)
  self.st.num_device_free = self.st.num_device_free + 1
  if self.watched then self.watched(self, "release", { size = got, cause = self.cause or "empty_cache" }) end
  if self.journal then self.journal("unmap", seg, off, got) end
end

-- Gives back the address range of an expandable segment whose only block,
-- b, is unmapped.
function A:release_expandable(b)
  local seg = b.segment
  self:unlist(b)
  seg.pages:close()
  self.segs[seg] = nil
end

-- Frees cached unsplit blocks of `stream` of max_split_size or more, the
-- smallest one that covers `size`, else from the largest down; whether it
-- freed enough (PyTorch's release_available_cached_blocks).
function A:release_oversize(pool, stream, size)
  local l = self.free_lists[pool][stream]
  if self.max_split == math.maxinteger or not l or self.expandable then return false end
  local want = math.max(size, self.max_split)
  for _, b in ipairs(l) do
    if b.size >= want and whole(b) then self:release(b); return true end
  end
  local freed = 0
  for i = #l, 1, -1 do
    local b = l[i]
    if freed >= want or b.size < self.max_split then break end
    if whole(b) then freed = freed + b.size; self:release(b) end
  end
  return freed >= want
end

--- Says that the next cudaMalloc, if of `size` bytes, is to be ordered as
-- if at address `addr` (a replay passes the recorded run's segment_alloc).
function A:expect_segment(addr, size)
  if math.type(addr) ~= "integer" or math.type(size) ~= "integer" then
    fail("expect_segment: integer address and size expected, got %s and %s", type(addr), type(size))
  end
  self.expected = { addr = addr, size = size }
end

--- Returns every block whose free was requested to the cache, then frees
-- every cached segment that holds no allocated block.
function A:empty_cache(cause)
  self.cause = cause or self.cause
  for _, evs in pairs(self.waiting) do
    for _, e in ipairs(evs) do e:sync() end
  end
  for b in pairs(self.pending) do self:complete(b) end
  local unmap = {}
  for _, pool in pairs(self.free_lists) do
    for _, l in pairs(pool) do
      for i = #l, 1, -1 do
        local b = l[i]
        if b.segment.pages then unmap[#unmap + 1] = b
        elseif whole(b) then self:release(b) end
      end
    end
  end
  for _, b in ipairs(unmap) do
    self:unmap_block(b)
    if whole(b) and b.mapped == false then self:release_expandable(b) end
  end
  self.cause = nil
end

-- The stream argument: a live poolsh.Stream, nil for the default stream.
local function check_stream(s)
  if s == nil then return poolsh.default_stream() end
  local mt = getmetatable(s)
  if type(mt) ~= "table" or mt.__name ~= "poolsh.Stream" then
    fail("poolsh.Stream expected, got %s", type(s))
  end
  if not s.live then fail("stream %s was destroyed", s.name) end
  return s
end

function A:oom(size, stream, bytes, err)
  self.st.num_ooms = self.st.num_ooms + 1
  local st = self.st
  fail("out of memory allocating %s on stream %s (a %s segment; reserved %s, allocated %s after freeing the cache): %s",
    poolsh.fmt(size), stream.name, poolsh.fmt(bytes), poolsh.fmt(st.reserved), poolsh.fmt(st.allocated), err)
end

--- Allocates `size` bytes (>= 1) for `stream`; returns the block.
function A:alloc(size, stream)
  local n = math.type(size) == "integer" and size > 0 and size or bytes(size, "")
  if n < 1 then fail("size must be at least 1 byte") end
  if n > M.MAX_SIZE then fail("size %s too large (at most 4 PiB)", poolsh.fmt(n)) end
  stream = check_stream(stream)
  local rounded = M.round_size(n, self.divisions)
  local pool = rounded <= M.SMALL_SIZE and "small" or "large"
  if next(self.waiting) then self:process_events() end
  local b = self:find(pool, stream, rounded)
  local fresh
  if not b then
    if self.gc then self.cause = "garbage collection"; self:garbage_collect(); self.cause = nil end
    local bytes, err = M.allocation_size(rounded)
    fresh = self.expandable and rounded or bytes
    b, err = self:new_block(pool, stream, rounded, bytes)
    self.cause = "out of memory: cached blocks of max_split_size"
    if not b and self:release_oversize(pool, stream, rounded) then b, err = self:new_block(pool, stream, rounded, bytes) end
    self.cause = nil
    if not b then
      self:empty_cache("out of memory: the whole cache")
      self.st.num_alloc_retries = self.st.num_alloc_retries + 1
      b, err = self:new_block(pool, stream, rounded, bytes)
    end
    if not b then self:oom(n, stream, self.expandable and rounded or bytes, err) end
  end
  self.expected = nil
  local w = self.watched
  if not w then return self:take(b, rounded, n) end
  local from = b.live_name
  b = self:take(b, rounded, n)
  b.live_name = live.label(self)
  if fresh then
    w(self, "alloc", { size = n, block = b, fresh = fresh,
                       what = self.expandable and "pages" or "segment",
                       how = self.expandable and "mapped" or "cudaMalloc" })
  else
    w(self, "alloc", { size = n, block = b, from = from,
                       why = from and "cached block" or "split off a cached segment" })
  end
  return b
end

-- A free block for a rounded request no cached block fits, off the free
-- list: pages mapped (expandable) or a new segment of `bytes`; nil and the
-- error when the memory fraction or the device refuses (PyTorch's
-- alloc_block: the fraction is checked against the segment size, expandable
-- or not).
function A:new_block(pool, stream, rounded, bytes)
  local st = self.st
  if self.allowed and st.reserved + bytes > self.allowed then
    return nil, ("the memory fraction allows %s: %s reserved, %s more asked"):format(
      poolsh.fmt(self.allowed), poolsh.fmt(st.reserved), poolsh.fmt(bytes))
  end
  if self.expandable then return self:grow(pool, stream, rounded) end
  return self:malloc(pool, stream, bytes)
end

-- PyTorch's garbage_collect_cached_blocks: while reserved is above
-- threshold x the allowed maximum, frees (cudaFree) the large pool's cached
-- unsplit blocks whose age is at least the average age, pass after pass,
-- until it freed the excess or a pass freed nothing; a pass does not stop
-- at the target.
function A:garbage_collect()
  local limit = math.floor(self.gc * self.allowed)
  local st = self.st
  if st.reserved <= limit then return end
  local target, reclaimed, now = st.reserved - limit, 0, self.lookups.large
  local total, count = 0, 0
  for _, l in pairs(self.free_lists.large) do
    for _, b in ipairs(l) do
      if whole(b) then total, count = total + now - (b.gc_base or 0), count + 1 end
    end
  end
  local freed = true
  while reclaimed < target and freed and count > 0 do
    local average = total / count
    freed = false
    local old = {}
    for _, l in pairs(self.free_lists.large) do
      for _, b in ipairs(l) do
        if whole(b) and not b.segment.pages and now - (b.gc_base or 0) >= average then old[#old + 1] = b end
      end
    end
    for _, b in ipairs(old) do
      freed = true
      reclaimed = reclaimed + b.size
      total, count = total - (now - (b.gc_base or 0)), count - 1
      self:release(b)
    end
  end
end

-- Hands out free block b (off its free list) for a request of n bytes,
-- `rounded` as rounded: split when the rules allow.
function A:take(b, rounded, n)
  if b.out then b = self:renew(b) end   -- a table handed out before: a new one
  self:split(b, rounded)
  b.allocated, b.requested, b.owner, b.out = true, n, self, true
  self.active[b] = true
  self:count("allocated", b.size); self:count("requested", n); self:count("active", 1)
  return b
end

-- The free block of segment seg that holds offset off, or nil; the walk
-- starts at `from` (a block of seg at or before off) when given.
local function free_at(seg, off, from)
  local b = from or seg.head
  while b and b.offset + b.size <= off do b = b.next end
  if b and not b.allocated and b.mapped ~= false and b.offset <= off then return b end
end

-- Splits free block b at `off` (inside it): the part before stays free.
function A:cut(b, off)
  self:remove(b)
  local front = { segment = b.segment, offset = b.offset, size = off - b.offset, stream = b.stream,
                  allocated = false, prev = b.prev, next = b, mapped = b.mapped }
  if front.prev then front.prev.next = front else b.segment.head = front end
  b.prev, b.offset, b.size = front, off, b.size - front.size
  self:insert(front)
  self:insert(b)
end

--- Rebuilds the state a recorded run had: `segments` ({addr, size, stream,
-- kind = "small"|"large"}) are cudaMalloc'd, ordered as at their recorded
-- addresses; each of `blocks` ({addr, size, stream}) is allocated at its
-- offset in the segment holding it (else as a plain alloc). `stream_of`
-- maps a recorded stream to a poolsh.Stream. Returns {[addr] = block}.
function A:restore(segments, blocks, stream_of)
  if type(segments) ~= "table" or type(blocks) ~= "table" or type(stream_of) ~= "function" then
    fail("restore: segments, blocks (tables) and stream_of (a function) expected, got %s, %s and %s",
      type(segments), type(blocks), type(stream_of))
  end
  for what, list in pairs { segment = segments, block = blocks } do
    for i, x in ipairs(list) do
      if type(x) ~= "table" or math.type(x.addr) ~= "integer" or math.type(x.size) ~= "integer" or x.size < 1 then
        fail("restore: %s %d: integer addr and size >= 1 expected", what, i)
      end
    end
  end
  local out, segs = {}, {}
  if self.expandable then return self:restore_expandable(segments, blocks, stream_of) end
  for i, sg in ipairs(segments) do
    if sg.kind ~= nil and sg.kind ~= "small" and sg.kind ~= "large" then
      fail("restore: segment %d: kind must be small or large, got %s", i, tostring(sg.kind))
    end
    local pool = sg.kind or (sg.size == M.SMALL_BUFFER and "small" or "large")
    self:expect_segment(sg.addr, sg.size)
    local head, err = self:malloc(pool, check_stream(stream_of(sg.stream)), sg.size)
    if not head then fail("restore: out of memory for a segment of %s: %s", poolsh.fmt(sg.size), err) end
    self:insert(head)
    segs[#segs + 1] = head.segment
  end
  for _, bl in ipairs(blocks) do
    out[bl.addr] = self:restore_block(segs, bl, stream_of)
  end
  for _, seg in ipairs(segs) do seg.carved = nil end
  return out
end

-- restore() with expandable segments: the runs of pages mapped before the
-- trace (segments with expandable = true and the base of their range) are
-- mapped at the same offsets, and the blocks carved at theirs; a recording
-- of cudaMalloc segments has no expandable layout to restore: its blocks are
-- allocated in address order, each as a request.
function A:restore_expandable(segments, blocks, stream_of)
  local made, segs = { small = {}, large = {} }, {}
  for i, sg in ipairs(segments) do
    if sg.expandable then
      if math.type(sg.base) ~= "integer" or sg.base > sg.addr then
        fail("restore: expandable segment %d: an integer base at or below its address expected", i)
      end
      local pool = sg.kind == "small" and "small" or "large"
      local stream = check_stream(stream_of(sg.stream))
      local seg = made[pool][stream]
      if not seg then
        seg = self:new_expandable(pool, stream).segment
        seg.recorded = sg.base
        made[pool][stream] = seg
        segs[#segs + 1] = seg
      end
      self:map_at(seg, sg.addr - seg.recorded, sg.size)
    end
  end
  local out = {}
  for _, bl in ipairs(blocks) do out[bl.addr] = self:restore_block(segs, bl, stream_of) end
  for _, seg in ipairs(segs) do seg.cursor, seg.carved = nil, nil end
  return out
end

-- One block of restore(): carved at its offset, or a plain alloc.
function A:restore_block(segs, bl, stream_of)
  local rounded = M.round_size(bl.size, self.divisions)
  for _, seg in ipairs(segs) do
    local off = bl.addr - (seg.recorded or seg.key)
    local from = seg.carved   -- blocks come in address order: go on from the last
    if from and (from.segment ~= seg or from.offset > off or not from.out) then from = nil end
    local b = off >= 0 and off < seg.size and free_at(seg, off, from)
    if b and b.offset + b.size >= off + rounded then
      if off > b.offset then self:cut(b, off) end
      self:remove(b)
      b = self:take(b, rounded, bl.size)
      seg.carved = b
      return b
    end
  end
  return self:alloc(bl.size, stream_of(bl.stream))
end

-- Splits the rest of b past `size` into a free block when the rules allow.
function A:split(b, size)
  local rest = b.size - size
  local ok
  if b.segment.pool == "small" or self.expandable then ok = rest >= M.MIN_BLOCK
  else ok = size < self.max_split and rest > M.SMALL_SIZE end
  if not ok then return end
  local r = self:block(b.segment, b.offset + size, rest, b.stream, b, b.next)
  r.mapped = b.mapped
  if b.next then b.next.prev = r end
  b.next, b.size = r, size
  self:insert(r)
end

-- Merges free neighbour n into b (n is b.prev or b.next).
function A:merge(b, n)
  if not n or n.allocated or (n.mapped == false) ~= (b.mapped == false) then return end
  if n.mapped == false then self:unlist(n) else self:remove(n) end
  if n == b.prev then
    b.offset, b.prev = n.offset, n.prev
    if b.prev then b.prev.next = b else b.segment.head = b end
  else
    b.next = n.next
    if b.next then b.next.prev = b end
  end
  b.size = b.size + n.size
  if not n.out then       -- never handed out: nothing refers to it now
    n.segment, n.prev, n.next = nil, nil, nil
    local sp = self.spare
    if #sp < SPARE then sp[#sp + 1] = n end
  end
end

--- Returns block b to the cache; raises for a block not allocated here.
-- With `requested`, b only stops counting as allocated: it stays out of the
-- cache (and unmerged) until free_completed(b) or empty_cache().
function A:free(b, requested)
  if type(b) ~= "table" then fail("block expected, got %s", type(b)) end
  if not self.active[b] then
    if b.freed and b.owner == self then fail("double free of a block of %s", poolsh.fmt(b.requested)) end
    fail("the block was not allocated by this allocator")
  end
  self.active[b] = nil
  b.freed = true
  self:count("allocated", -b.size)
  if b.uses then
    local evs = {}
    for s in pairs(b.uses) do evs[#evs + 1] = poolsh.event { timing = false }:record(s) end
    b.uses, self.pending[b], self.waiting[b] = nil, true, evs
  elseif requested then self.pending[b] = true
  else self:complete(b) end
end

--- Notes that allocated block b is used on `stream` too: once freed, it
-- goes back to the cache only when the work queued on that stream by then
-- is done (PyTorch's recordStream; seen at each alloc; empty_cache waits).
function A:record_stream(b, stream)
  if type(b) ~= "table" or not self.active[b] then fail("record_stream of a block that is not allocated here") end
  stream = check_stream(stream)
  if stream == b.stream then return end
  b.uses = b.uses or {}
  b.uses[stream] = true
end

-- Returns the freed blocks whose streams' work is done (process_events).
function A:process_events()
  for b, evs in pairs(self.waiting) do
    local done = true
    for _, e in ipairs(evs) do done = done and e:query() end
    if done then self:complete(b) end
  end
end

--- Returns a block whose free was requested to the cache; nothing for a
-- block already back; raises for a block still allocated or not from here.
function A:free_completed(b)
  if type(b) ~= "table" then fail("block expected, got %s", type(b)) end
  if self.pending[b] then return self:complete(b) end
  if not (b.freed and b.owner == self) then fail("free_completed of a block whose free was not requested") end
end

-- Puts freed block b back in the cache, merged with its free neighbours.
function A:complete(b)
  self.pending[b] = nil
  for _, e in ipairs(self.waiting[b] or {}) do e:destroy() end
  self.waiting[b] = nil
  self:count("requested", -b.requested); self:count("active", -1)
  b.allocated = false
  self:merge(b, b.prev)
  self:merge(b, b.next)
  self:insert(b)
end

--- A copy of the counters.
function A:stats()
  local t = {}
  for k, v in pairs(self.st) do t[k] = v end
  return require("poolsh.stats").mark(t)
end

--- The segments by address, each with its blocks in order; an expandable
-- segment gives one entry per run of mapped pages (expandable = true), as
-- PyTorch's snapshots list them.
function A:segments()
  local out = {}
  for seg in pairs(self.segs) do out[#out + 1] = seg end
  table.sort(out, function(x, y) return x.addr < y.addr end)
  local list = {}
  for _, seg in ipairs(out) do
    local run, b = nil, seg.head
    while b do
      if b.mapped == false then run = nil
      else
        if not run then
          run = { addr = seg.addr + b.offset, size = 0, stream = seg.stream, pool = seg.pool,
                  expandable = seg.pages and true or nil, blocks = {} }
          list[#list + 1] = run
        end
        run.blocks[#run.blocks + 1] = { offset = b.offset - (run.addr - seg.addr), size = b.size, allocated = b.allocated }
        run.size = run.size + b.size
      end
      b = b.next
    end
  end
  return list
end

return M
