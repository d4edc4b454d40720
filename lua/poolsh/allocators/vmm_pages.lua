--- poolsh.allocators.vmm_pages: one expandable segment's address range and
-- its pages, as PyTorch's ExpandableSegment keeps them, on poolsh.vmm (the
-- only module of the allocators that calls it).
--
--   local V = require "poolsh.allocators.vmm_pages"
--   local seg = V.new(page, stream)   -- reserves ceil(1.125 * device memory
--                                     -- / page) pages of address space
--   local bytes, err = seg:map(offset, size)   -- maps every page of
--       -- [offset, offset + size) (offset a page multiple, the end rounded up
--       -- to a page): one vmm.create and one r:map per page, one
--       -- r:set_access for the run; nil and the message when the device is
--       -- out of memory (the pages made for this call are released)
--   local off, bytes = seg:unmap(offset, size) -- the whole pages inside the
--       -- range only, after a sync of the segment's stream; bytes may be 0
--   seg:close()                       -- unmaps what is left, frees the range
--   seg.addr, seg.size, seg.page, seg.mapped (bytes)
local poolsh = require "poolsh"

local M = {}

local function fail(fmt, ...) error("expandable segment: " .. fmt:format(...), 0) end

-- The poolsh.vmm table, or an error naming what is missing.
local function vmm()
  local v = poolsh.vmm
  if type(v) ~= "table" then fail("poolsh.vmm is not in this build (expandable segments map pages with it)") end
  return v
end

local S = {}
S.__index = S

--- A new segment of pages of `page` bytes for `stream` (a poolsh.Stream):
-- the address range is reserved, nothing is mapped.
function M.new(page, stream)
  if math.type(page) ~= "integer" or page < 1 then fail("page size must be a positive integer, got %s", tostring(page)) end
  local v = vmm()
  local total = poolsh.device().total
  local pages = (total + total // 8 + page - 1) // page
  local r = v.reserve(pages * page)
  return setmetatable({ range = r, addr = r.addr, size = pages * page, page = page, pages = pages,
    stream = stream, handles = {}, mapped = 0, vmm = v }, S)
end

-- Whether err (a Lua error) is the device running out of memory.
local function is_oom(err) return tostring(err):find("cudaErrorMemoryAllocation", 1, true) ~= nil end

--- Maps the pages of [offset, offset + size); the bytes mapped, or nil and
-- the message when the device has no memory for them.
function S:map(offset, size)
  local page = self.page
  if offset % page ~= 0 or size < 1 or offset + size > self.size then
    fail("map of %d bytes at offset %d: outside the segment or not at a page", size, offset)
  end
  local first, last = offset // page, (offset + size + page - 1) // page - 1
  local made = {}
  for i = first, last do
    if self.handles[i] then fail("page %d is mapped already", i) end
    local ok, m = pcall(self.vmm.create, page)
    if not ok then
      for _, h in ipairs(made) do h:release() end
      if is_oom(m) then return nil, tostring(m) end
      error(m, 0)
    end
    made[#made + 1] = m
  end
  local r = self.range
  for i = first, last do
    local m = made[i - first + 1]
    r:map(i * page, m)
    self.handles[i] = m
  end
  local bytes = (last - first + 1) * page
  r:set_access(first * page, bytes)
  self.mapped = self.mapped + bytes
  return bytes
end

--- Unmaps the whole pages inside [offset, offset + size) after the
-- segment's stream is done with them; their offset and bytes (0 if none).
function S:unmap(offset, size)
  local page = self.page
  local first, stop = (offset + page - 1) // page, (offset + size) // page
  if first >= stop then return offset, 0 end
  if self.stream and self.stream.live then self.stream:sync() end
  local r = self.range
  for i = first, stop - 1 do
    local m = self.handles[i]
    if not m then fail("page %d is not mapped", i) end
    r:unmap(i * page, page)
    m:release()
    self.handles[i] = nil
  end
  local bytes = (stop - first) * page
  self.mapped = self.mapped - bytes
  return first * page, bytes
end

--- Unmaps every page left and frees the address range (idempotent).
function S:close()
  if not self.range then return end
  local pages = {}
  for i in pairs(self.handles) do pages[#pages + 1] = i end
  table.sort(pages)
  for _, i in ipairs(pages) do
    self.range:unmap(i * self.page, self.page)
    self.handles[i]:release()
  end
  self.handles, self.mapped = {}, 0
  self.range:free()
  self.range = nil
end

return M
