-- Input fuzzer: sequences of poolsh.vmm calls, one a line, on two sim
-- devices under --limit and --pinned-limit (poolsh.configure), so that
-- hostile sizes, offsets, devices and orders meet the bindings' checks:
-- each call either works or raises a clear error, the limits' counts
-- stay within the limits, and poolsh.core.reset() ends what is left.
-- A line: an op and integers (bytes, indexes of earlier results):
--   reserve SIZE | create SIZE [host] | map R OFF M [MOFF [SIZE]]
--   unmap R OFF SIZE | access R OFF SIZE [DEV [rw|read|none]]
--   buffer R OFF SIZE | fill B BYTE [DEV] | release M | free R | close R
-- Usage: poolsh --backend=sim scripts/fuzz/vmm_limits.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local poolsh = require "poolsh"

local LIMIT, PINNED = 64 * 1024 * 1024, 32 * 1024 * 1024

-- The limits and devices are set before the device opens: without them in
-- the environment, the target runs itself again with them, as it was run.
if os.getenv("POOLSH_LIMIT") ~= "64MiB" then
  local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
  local lo = 0
  while arg[lo - 1] do lo = lo - 1 end
  local cmd = { "POOLSH_LIMIT=64MiB POOLSH_PINNED_LIMIT=32MiB POOLSH_SIM_DEVICES=2" }
  for i = lo, #arg do cmd[#cmd + 1] = q(arg[i]) end
  local ok, how, code = os.execute(table.concat(cmd, " "))
  os.exit(ok and 0 or (how == "exit" and code or 1))
end
local d = poolsh.device()
assert(d.limit == LIMIT and d.pinned_limit == PINNED, "vmm_limits: the limits were not set")
local MAX_LINES, MAX_VIEW = 200, 16 * 1024 * 1024

local function bad(fmt, ...) error("vmm_limits: " .. fmt:format(...), 0) end

local function num(s, what)
  local v = s and math.tointeger(tonumber(s))
  if not v then bad("%s must be an integer, got %s", what, tostring(s)) end
  return v
end

local function pick(list, s, what)
  local o = list[num(s, what)]
  if o == nil then bad("no %s %s", what, tostring(s)) end
  return o
end

local function decode(input)
  poolsh.core.reset()                        -- each input starts afresh
  local ranges, mems, views, streams = {}, {}, {}, {}
  local n = 0
  for line in input:gmatch("[^\n]+") do
    n = n + 1
    if n > MAX_LINES then bad("more than %d lines", MAX_LINES) end
    local w = {}
    for x in line:gmatch("%S+") do w[#w + 1] = x end
    local op = w[1]
    if op == "reserve" then
      ranges[#ranges + 1] = poolsh.vmm.reserve(num(w[2], "size"))
    elseif op == "create" then
      mems[#mems + 1] = poolsh.vmm.create(num(w[2], "size"),
        w[3] == "host" and { location = "host" } or nil)
    elseif op == "map" then
      local r = pick(ranges, w[2], "range")
      local off, m = num(w[3], "offset"), pick(mems, w[4], "memory")
      if w[6] then r:map(off, m, num(w[5], "memory offset"), num(w[6], "size"))
      elseif w[5] then r:map(off, m, num(w[5], "memory offset"))
      else r:map(off, m) end
    elseif op == "unmap" then
      pick(ranges, w[2], "range"):unmap(num(w[3], "offset"), num(w[4], "size"))
    elseif op == "access" then
      local r = pick(ranges, w[2], "range")
      local opts = { device = w[5] and num(w[5], "device") or nil, access = w[6] }
      r:set_access(num(w[3], "offset"), num(w[4], "size"), opts)
    elseif op == "buffer" then
      local size = num(w[4], "size")
      if size > MAX_VIEW then bad("a view over %d bytes", MAX_VIEW) end
      views[#views + 1] = pick(ranges, w[2], "range"):buffer(num(w[3], "offset"), size)
    elseif op == "fill" then
      local b, byte = pick(views, w[2], "view"), num(w[3], "byte")
      local dev = w[4] and num(w[4], "device") or 0
      if dev < 0 or dev > 1 then bad("device %d is not 0 or 1", dev) end
      streams[dev] = streams[dev] or poolsh.stream { device = dev }
      poolsh.fill(b, byte, streams[dev])
      poolsh.verify(b, byte, streams[dev])
    elseif op == "release" then pick(mems, w[2], "memory"):release()
    elseif op == "free" then pick(ranges, w[2], "range"):free()
    elseif op == "close" then pick(ranges, w[2], "range"):close()
    else bad("unknown op %s", tostring(op)) end
    local d = poolsh.device()
    if d.held > LIMIT or d.pinned_held > PINNED then
      error(("vmm_limits: BUG held %d, pinned %d past the limits"):format(d.held, d.pinned_held))
    end
  end
end

-- Wraps decode so that a count past a limit is a failure, not a refusal.
local function checked(input, path)
  local ok, e = pcall(decode, input, path)
  if not ok and tostring(e):find("BUG", 1, true) then
    io.stderr:write(tostring(e), "\n")
    os.exit(1)
  end
  -- poolsh's own "attempt to use a freed poolsh.Buffer (b1)" is the clear
  -- error for a dead object; lib.unclear reads every "attempt to " as Lua's
  if not ok and type(e) == "string" and e:find("attempt to use a %a+ poolsh%.%a+ %(%a%d+%)$") then
    error("vmm_limits: refused: " .. e:gsub("attempt to use", "a use of"), 0)
  end
  if not ok then error(e, 0) end
end

local G = "2097152"
lib.run({
  name = "vmm_limits",
  suffix = ".txt",
  corpus = {
    table.concat({ "reserve 8388608", "create 4194304", "map 1 0 1", "access 1 0 4194304",
      "buffer 1 0 4194304", "fill 1 7", "access 1 0 4194304 1", "fill 1 9 1", "release 1",
      "unmap 1 0 4194304", "free 1" }, "\n"),
    table.concat({ "reserve 4194304", "reserve 4194304", "create " .. G, "map 2 0 1",
      "map 1 4194304 1", "map 1 0 1 0 " .. G, "access 1 0 " .. G .. " 0 read",
      "buffer 1 0 " .. G, "close 1", "close 2" }, "\n"),
    table.concat({ "create 33554432", "create 33554432", "create 16777216 host",
      "create 16777216 host", "create 2097152 host", "release 1", "release 3" }, "\n"),
  },
  decode = checked,
  seconds_per_input = 2,
  memory_per_input = 256 * 1024 * 1024,
}, ...)
