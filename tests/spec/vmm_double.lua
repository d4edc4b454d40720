-- TEST DOUBLE of poolsh.vmm (the contract in docs/api.md's VMM section),
-- for specs only, on builds that do not have poolsh.vmm yet: address
-- ranges and physical handles as Lua tables, with the H200's refusals the
-- allocators could run into (mapping over a mapping, unmapping part of one,
-- freeing a range with mappings) and a memory limit (`limit` bytes) past
-- which create fails as cudaErrorMemoryAllocation. Never used by poolsh.
local D = {}

-- Installs a fresh double as poolsh.vmm unless the build has the real one;
-- returns it (nil when the real one is there) and a function that undoes it.
function D.install(poolsh, limit)
  if poolsh.vmm ~= nil and not (type(poolsh.vmm) == "table" and poolsh.vmm.is_double) then
    return nil, function() end
  end
  local old = rawget(poolsh, "vmm")
  local d = D.new(limit)
  rawset(poolsh, "vmm", d)
  return d, function() rawset(poolsh, "vmm", old) end
end

function D.new(limit)
  local v = { is_double = true, created = 0, live_ranges = 0, calls = { create = 0, map = 0, unmap = 0, set_access = 0, release = 0 } }
  local next_addr, next_id = 0x7f0000000000, 1
  local Memory, Range = {}, {}
  Memory.__index, Range.__index = Memory, Range

  function v.granularity() return 2 * 1024 * 1024 end

  function v.reserve(size)
    assert(math.type(size) == "integer" and size > 0 and size % (2 << 20) == 0, "cudaErrorInvalidValue: reserve size")
    local r = setmetatable({ addr = next_addr, size = size, id = next_id, live = true, maps = {} }, Range)
    next_addr = next_addr + size + (2 << 20)
    next_id = next_id + 1
    v.live_ranges = v.live_ranges + 1
    return r
  end

  function v.create(size)
    assert(math.type(size) == "integer" and size > 0 and size % (2 << 20) == 0, "cudaErrorInvalidValue: create size")
    if limit and v.created + size > limit then
      error("cudaErrorMemoryAllocation: out of memory (vmm.create of " .. size .. " bytes)", 0)
    end
    v.calls.create = v.calls.create + 1
    v.created = v.created + size
    local m = setmetatable({ size = size, id = next_id, live = true, mapped = 0, location = "device", device = 0 }, Memory)
    next_id = next_id + 1
    return m
  end

  function Memory:release()
    if not self.live then error("attempt to use a released poolsh.Memory", 0) end
    self.live = false
    v.calls.release = v.calls.release + 1
    if self.mapped == 0 then v.created = v.created - self.size end
  end

  local G = 2 * 1024 * 1024   -- granules: every map and offset is a multiple

  function Range:map(offset, m)
    assert(self.live, "range freed")
    self.used = self.used or {}
    for g = offset // G, (offset + m.size) // G - 1 do
      if self.used[g] then error("cudaErrorInvalidValue: map over a mapping", 0) end
    end
    for g = offset // G, (offset + m.size) // G - 1 do self.used[g] = true end
    self.maps[offset] = { size = m.size, memory = m }
    m.mapped = m.mapped + 1
    v.calls.map = v.calls.map + 1
  end

  function Range:set_access(offset, size)
    v.calls.set_access = v.calls.set_access + 1
    for g = offset // G, (offset + size) // G - 1 do
      if not (self.used and self.used[g]) then error("cudaErrorInvalidValue: set_access over unmapped bytes", 0) end
    end
  end

  function Range:unmap(offset, size)
    local mp = self.maps[offset]
    if not mp then return end
    if mp.size ~= size then error("cudaErrorInvalidValue: unmap of part of a mapping", 0) end
    self.maps[offset] = nil
    for g = offset // G, (offset + size) // G - 1 do self.used[g] = nil end
    v.calls.unmap = v.calls.unmap + 1
    local m = mp.memory
    m.mapped = m.mapped - 1
    if m.mapped == 0 and not m.live then v.created = v.created - m.size end
  end

  function Range:mappings()
    local out = {}
    for off, mp in pairs(self.maps) do out[#out + 1] = { offset = off, size = mp.size, memory = mp.memory } end
    table.sort(out, function(a, b) return a.offset < b.offset end)
    return out
  end

  function Range:free()
    if next(self.maps) then error("cudaErrorInvalidValue: the range still has mappings", 0) end
    if self.live then self.live = false; v.live_ranges = v.live_ranges - 1 end
  end

  return v
end

return D
