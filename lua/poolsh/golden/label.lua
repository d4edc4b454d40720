--- poolsh.golden.label: exact, readable names for sizes and durations in
-- step names ("4 MiB", "32 MiB + 1 B", "200 ms"). Exact, so that a step
-- name is the same on every machine.
local M = {}

local UNITS = { { "GiB", 1 << 30 }, { "MiB", 1 << 20 }, { "KiB", 1 << 10 } }

--- label.size(n) -> "4 MiB", "1 GiB + 32 MiB", "33554433 B" style text.
function M.size(n)
  if n == math.huge then return "max" end
  for _, u in ipairs(UNITS) do
    local name, k = u[1], u[2]
    if n >= k then
      local q, r = n // k, n % k
      if r == 0 then return ("%d %s"):format(q, name) end
      if k > 1024 and (r < 1024 or r % (1 << 20) == 0) then return ("%d %s + %s"):format(q, name, M.size(r)) end
      break
    end
  end
  return ("%d B"):format(n)
end

--- label.duration(ms) -> "200 ms", "1.5 ms", "250 us".
function M.duration(ms)
  if ms >= 1 then return (("%g ms"):format(ms)) end
  return (("%g us"):format(ms * 1000))
end

return M
