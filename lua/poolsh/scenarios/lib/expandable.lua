--- poolsh.scenarios.lib.expandable: two small allocators for the VMM
-- scenarios (docs/scenarios.md), written over poolsh's public API so that
-- they run alike on the sim and on a GPU.
--
-- M.range{capacity, page} is an expandable segment as PyTorch's
-- `expandable_segments:True` makes one: a single poolsh.vmm reservation
-- whose low pages are mapped as blocks need them, one vmm.create + map per
-- page and one set_access per run of new pages. Blocks are carved first
-- fit by offset (512-byte aligned) from the whole range, mapped or not, so
-- a freed block followed by unmapped pages grows in place. empty() unmaps
-- the pages that lie wholly in free space, as PyTorch's empty_cache does.
--
-- M.segments() is the native caching allocator reduced to what the
-- scenarios show: one cudaMalloc segment per request that no cached free
-- segment can hold (best fit, no splitting), segments kept after a free.
local poolsh = require "poolsh"

local M = {}

local ALIGN = 512

local function round_up(n, to) return (n + to - 1) // to * to end
M.round_up = round_up

---------------------------------------------------------------- the range

local Range = {}
Range.__index = Range

--- M.range{capacity = bytes, page = bytes} -> an expandable range of at
-- least `capacity` bytes of addresses, mapped `page` bytes at a time
-- (default: the device's VMM granularity; a multiple of it).
function M.range(opts)
  local g = poolsh.vmm.granularity()
  local page = opts.page or g
  if page % g ~= 0 then
    error(("expandable range: page %d is not a multiple of the granularity %d"):format(page, g), 2)
  end
  local cap = round_up(opts.capacity, page)
  local self = setmetatable({ page = page, cap = cap, pages = {}, mapped = 0, used = 0,
                              creates = 0, maps = 0, set_accesses = 0, unmaps = 0 }, Range)
  self.r = poolsh.vmm.reserve(cap)
  self.free_list = { { off = 0, size = cap } }   -- free extents by offset, mapped or not
  return self
end

-- Maps the pages from first to last (indices from 0) that are not
-- mapped yet; one set_access per run of pages mapped together.
function Range:map_pages(first, last)
  local run_start
  local function flush(upto)
    if run_start then
      self.r:set_access(run_start * self.page, (upto - run_start) * self.page)
      self.set_accesses = self.set_accesses + 1
      run_start = nil
    end
  end
  for i = first, last do
    if self.pages[i] then
      flush(i)
    else
      local m = poolsh.vmm.create(self.page)
      self.creates = self.creates + 1
      self.r:map(i * self.page, m)
      self.maps = self.maps + 1
      self.pages[i] = m
      self.mapped = self.mapped + self.page
      run_start = run_start or i
    end
  end
  flush(last + 1)
end

--- r:alloc(bytes) -> a block {off, size}: the lowest free extent that
-- holds it, its pages mapped first. Raises when the range is full.
function Range:alloc(n)
  n = round_up(math.max(n, 1), ALIGN)
  for i, f in ipairs(self.free_list) do
    if f.size >= n then
      self:map_pages(f.off // self.page, (f.off + n - 1) // self.page)
      local b = { off = f.off, size = n }
      if f.size == n then table.remove(self.free_list, i)
      else f.off, f.size = f.off + n, f.size - n end
      self.used = self.used + n
      return b
    end
  end
  error(("expandable range: no room for %d bytes in %d"):format(n, self.cap), 2)
end

--- r:free(block): its bytes join the free extents (merged with
-- neighbours); its pages stay mapped.
function Range:free(b)
  local list, at = self.free_list, #self.free_list + 1
  for i, f in ipairs(list) do
    if f.off > b.off then at = i; break end
  end
  table.insert(list, at, { off = b.off, size = b.size })
  local nxt = list[at + 1]
  if nxt and list[at].off + list[at].size == nxt.off then
    list[at].size = list[at].size + nxt.size
    table.remove(list, at + 1)
  end
  local prev = list[at - 1]
  if prev and prev.off + prev.size == list[at].off then
    prev.size = prev.size + list[at].size
    table.remove(list, at)
  end
  self.used = self.used - b.size
end

--- r:view(block) -> a poolsh.Buffer of the block's bytes (r:buffer).
function Range:view(b) return self.r:buffer(b.off, b.size) end

--- r:empty() -> bytes unmapped: every mapped page that lies wholly in a
-- free extent is unmapped and its memory released.
function Range:empty()
  local before = self.mapped
  for _, f in ipairs(self.free_list) do
    local first = (f.off + self.page - 1) // self.page
    local last = (f.off + f.size) // self.page - 1
    for i = first, last do
      local m = self.pages[i]
      if m then
        self.r:unmap(i * self.page, self.page)
        self.unmaps = self.unmaps + 1
        m:release()
        self.pages[i] = nil
        self.mapped = self.mapped - self.page
      end
    end
  end
  return before - self.mapped
end

--- r:close(): unmaps and releases every page, frees the reservation.
function Range:close()
  for i, m in pairs(self.pages) do
    self.r:unmap(i * self.page, self.page)
    m:release()
  end
  self.pages, self.mapped = {}, 0
  self.r:free()
end
Range.__close = Range.close

---------------------------------------------------------------- cudaMalloc segments

local Segments = {}
Segments.__index = Segments

--- M.segments() -> a cache of cudaMalloc segments.
function M.segments()
  return setmetatable({ list = {}, reserved = 0, used = 0, mallocs = 0 }, Segments)
end

--- s:alloc(bytes) -> a segment: the smallest cached free one that holds
-- the request, else a new cudaMalloc of the request (512-byte rounded).
function Segments:alloc(n)
  n = round_up(math.max(n, 1), ALIGN)
  local best
  for _, seg in ipairs(self.list) do
    if seg.free and seg.size >= n and (not best or seg.size < best.size) then best = seg end
  end
  if not best then
    best = { buf = poolsh.malloc(n), size = n }
    self.list[#self.list + 1] = best
    self.reserved = self.reserved + n
    self.mallocs = self.mallocs + 1
  end
  best.free, best.req = false, n
  self.used = self.used + n
  return best
end

--- s:free(segment): cached, not given back.
function Segments:free(seg)
  seg.free = true
  self.used = self.used - seg.req
end

--- s:close(): cudaFree of every segment.
function Segments:close()
  for _, seg in ipairs(self.list) do seg.buf:free() end
  self.list, self.reserved = {}, 0
end
Segments.__close = Segments.close

return M
