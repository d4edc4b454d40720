--- Benchmark: saving a recorded trace in each format. Records alloc/free
-- pairs (two events each) on one stream until N events are kept, then
-- saves the trace as .json, .csv, .pickle and .html, timing each save
-- (wall and this process's CPU seconds, os.clock) and reading the peak
-- resident memory it added: VmHWM after the save minus VmRSS before it,
-- with the peak reset between formats
-- (/proc/self/clear_refs). Results go to docs/performance.md.
-- Usage: poolsh --backend=sim scripts/bench_export.lua [N ...] (default 100000 1000000)
--        [--keep DIR] keeps the files in DIR; [--live L] allocates L buffers
--        first (recorded) and keeps them live through the saves;
--        [--formats json,csv,...] saves only those.
local poolsh = poolsh or require "poolsh"

local sizes, keep, live, formats = {}, nil, 0, { "json", "csv", "pickle", "html" }
local i = 1
while arg and arg[i] do
  if arg[i] == "--keep" then keep = arg[i + 1]; i = i + 1
  elseif arg[i] == "--live" then live = assert(math.tointeger(tonumber(arg[i + 1])), "L must be an integer"); i = i + 1
  elseif arg[i] == "--formats" then
    formats = {}
    for f in arg[i + 1]:gmatch("[^,]+") do formats[#formats + 1] = f end
    i = i + 1
  else sizes[#sizes + 1] = assert(math.tointeger(tonumber(arg[i])), "N must be an integer") end
  i = i + 1
end
if #sizes == 0 then sizes = { 100000, 1000000 } end

local function status(field)
  local f = io.open("/proc/self/status")
  if not f then return nil end
  local kb = f:read("a"):match(field .. ":%s*(%d+)")
  f:close()
  return kb and tonumber(kb) * 1024
end

-- Resets VmHWM to the current VmRSS (Linux 4.0+); false where it cannot.
local function reset_peak()
  local f = io.open("/proc/self/clear_refs", "w")
  if not f then return false end
  local ok = f:write("5")
  f:close()
  return ok ~= nil
end

local function mib(b) return b and string.format("%.0f MiB", b / 1048576) or "?" end

local dir = keep or os.tmpname() .. ".d"
os.execute("mkdir -p '" .. dir .. "'")
print(string.format("%-9s %-7s %9s %9s %10s %12s", "events", "format", "seconds", "cpu s", "file", "peak added"))
for _, n in ipairs(sizes) do
  local s, p = poolsh.stream(), poolsh.pool {}
  poolsh.trace.clear()
  poolsh.trace.start()
  local kept = {}
  for k = 1, live do kept[k] = p:alloc(4096, s) end
  while poolsh.trace.count() < n do p:alloc(4096, s):free() end
  poolsh.trace.stop()
  s:sync()
  for _, ext in ipairs(formats) do
    local path = dir .. "/trace." .. ext
    collectgarbage("collect")
    local reset = reset_peak()
    local before = status("VmRSS")
    local t0, c0 = poolsh.wallclock(), os.clock()
    poolsh.trace.save(path)
    local secs, cpu = poolsh.wallclock() - t0, os.clock() - c0
    local peak = reset and status("VmHWM")
    local f = io.open(path, "rb")
    local bytes = f:seek("end")
    f:close()
    print(string.format("%-9d %-7s %9.2f %9.2f %10s %12s", poolsh.trace.count(), ext, secs, cpu, mib(bytes),
      peak and before and mib(peak - before) or "?"))
    if not keep then os.remove(path) end
  end
  poolsh.trace.clear()
  for _, b in ipairs(kept) do b:free(s) end
  s:sync()
  p:destroy(); s:destroy()
end
if not keep then os.remove(dir) end
