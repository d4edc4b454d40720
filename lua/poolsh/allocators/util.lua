--- poolsh.allocators.util: what the Lua allocators share.
local poolsh = require "poolsh"

local M = {}

--- poolsh.malloc(bytes), or nil and the message when the device (or a
-- --limit) is out of memory; other errors are raised.
function M.malloc(bytes)
  local ok, buf = pcall(poolsh.malloc, bytes)
  if ok then return buf end
  if tostring(buf):find("cudaErrorMemoryAllocation", 1, true) then return nil, tostring(buf) end
  error(buf, 0)
end

--- Adds delta to counter st[key], raising st["peak_" .. key] with it when
-- that peak is kept.
function M.count(st, key, delta)
  st[key] = st[key] + delta
  local peak = "peak_" .. key
  if st[peak] and st[key] > st[peak] then st[peak] = st[key] end
end

--- The first index in list (entries kept in order of their .k, an
-- address) whose k is not below k.
function M.address_bound(list, k)
  local lo, hi = 1, #list + 1
  while lo < hi do
    local mid = (lo + hi) // 2
    if list[mid].k < k then lo = mid + 1 else hi = mid end
  end
  return lo
end

return M
