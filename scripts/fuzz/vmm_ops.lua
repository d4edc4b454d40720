-- Operation fuzzer for poolsh.vmm: each input is a program of VMM calls
-- (reserve, create, map, unmap, set_access, buffer views and their fill,
-- verify, read, write and copy, release, free, close, mappings), one
-- call per 4 bytes, sizes in pages with unaligned, zero, negative and huge
-- values mixed in. Each call must succeed or raise a clear error; after
-- each, every range's mappings must be in order, apart, inside it and
-- whole memories;
-- after the program every object is closed and the device's free memory
-- must be what it was (nothing leaked). Bounded: at most 64 calls, 4
-- ranges of at most 16 pages, 4 memories of at most 8 pages.
-- Usage: poolsh --backend=sim scripts/fuzz/vmm_ops.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local poolsh = require "poolsh"

local MAX_CALLS, MAX_RANGES, MAX_MEMS, MAX_VIEWS = 64, 4, 4, 8
local ACCESS = { "rw", "read", "none", "write" }

-- A bug, not a refusal: raised so that lib.run reports it as unclear.
local function bug(fmt, ...)
  error("attempt to keep an invariant: " .. fmt:format(...), 0)
end

-- A size from byte v in pages of g: mostly whole pages, sometimes off by
-- a little, zero, negative or huge.
local function size_of(v, g)
  local k = v & 0x1f
  if v >= 0xf8 then return ({ 0, -g, 1 << 62, g - 1, 4096, math.maxinteger, -1, 3 * g + 512 })[v - 0xf7] end
  return (k % 17) * g + ((v & 0x20) ~= 0 and 4096 or 0)
end

-- The error of one call is clear: a message, and the binding's own
-- "attempt to use a freed/released poolsh.X" counts as one.
local function clear(err)
  if type(err) == "string" and err:gsub("^[^\n]-:%d+: ", ""):find("^attempt to use a %a+ poolsh%.%a+") then
    return
  end
  local why = lib.unclear(err)
  if why then bug("a call %s", why) end
end

-- Every live range's mappings: sorted by offset, apart, inside the range,
-- each a whole memory from its offset 0 (the H200 refuses anything else).
local function check(ranges)
  for _, r in ipairs(ranges) do
    if r.live then
      local last = 0
      for i, m in ipairs(r:mappings()) do
        if m.offset < last then bug("mapping %d of r%d at %d overlaps the one before", i, r.id, m.offset) end
        if m.offset + m.size > r.size then bug("mapping %d of r%d ends past the range", i, r.id) end
        if m.memory_offset ~= 0 or m.size ~= m.memory.size then
          bug("mapping %d of r%d holds part of m%d (the GPU maps whole memories only)", i, r.id, m.memory.id)
        end
        last = m.offset + m.size
      end
    end
  end
end

local function pick(list, v) return #list > 0 and list[v % #list + 1] or nil end

local function run_program(input)
  local g = poolsh.vmm.granularity()
  local ranges, mems, views = {}, {}, {}
  local calls = {
    function(a, b) -- reserve
      if #ranges < MAX_RANGES then
        local n = size_of(a, g)
        if n > 16 * g then n = 16 * g end
        ranges[#ranges + 1] = poolsh.vmm.reserve(n, b & 1 == 1 and { align = size_of(b >> 1, g) } or nil)
      end
    end,
    function(a, b) -- create
      if #mems < MAX_MEMS then
        local n = size_of(a, g)
        if n > 8 * g then n = 8 * g end
        mems[#mems + 1] = poolsh.vmm.create(n, b & 1 == 1 and { location = "host" } or nil)
      end
    end,
    function(a, b, c) -- map
      local r, m = pick(ranges, a), pick(mems, b)
      if r and m then r:map(size_of(c, g), m, (b & 0x80) ~= 0 and size_of(b & 0x3f, g) or nil) end
    end,
    function(a, b, c) -- unmap
      local r = pick(ranges, a)
      if r then r:unmap(size_of(b, g), size_of(c, g)) end
    end,
    function(a, b, c) -- set_access
      local r = pick(ranges, a)
      if r then r:set_access(size_of(b, g), size_of(c, g), { access = ACCESS[(a >> 4) % #ACCESS + 1] }) end
    end,
    function(a, b, c) -- a view
      local r = pick(ranges, a)
      if r and #views < MAX_VIEWS then views[#views + 1] = r:buffer(size_of(b, g) // 2, size_of(c, g) // 2 + 1) end
    end,
    function(a, b) -- fill a view
      local v = pick(views, a)
      if v then poolsh.fill(v, b) end
    end,
    function(a, b) -- verify a view
      local v = pick(views, a)
      if v then poolsh.verify(v, b) end
    end,
    function(a, b, c) -- write and read back through a view
      local v = pick(views, a)
      if v then
        local off = b % 64
        v:write(off, string.char(c))
        local back = v:read(off, 1)
        if back ~= string.char(c) then bug("read back %q after writing %q", back, string.char(c)) end
      end
    end,
    function(a, b) -- copy between two views
      local d, s = pick(views, a), pick(views, b)
      if d and s then poolsh.copy(d, s) end
    end,
    function(a) -- release a memory
      local m = pick(mems, a)
      if m then m:release() end
    end,
    function(a, b) -- free or close a range
      local r = pick(ranges, a)
      if r then
        if b & 1 == 1 then r:close() else r:free() end
      end
    end,
  }
  local n = 0
  for i = 1, #input - 3, 4 do
    n = n + 1
    if n > MAX_CALLS then break end
    local op, a, b, c = input:byte(i, i + 3)
    local ok, err = pcall(calls[op % #calls + 1], a, b, c)
    if not ok then clear(err) end
    check(ranges)
  end
  return ranges, mems, views
end

lib.run({
  name = "vmm_ops",
  corpus = {
    -- reserve 8 pages, create 2, map at 0, set access, a view, fill, verify, unmap, release, free
    "\0\8\0\0" .. "\1\2\0\0" .. "\2\0\0\0" .. "\4\0\0\2" .. "\5\0\0\3" .. "\6\0\7\0" ..
      "\7\0\7\0" .. "\3\0\0\2" .. "\10\0\0\0" .. "\11\0\0\0",
    -- two ranges, a memory mapped in both, copies, a release while mapped, closes
    "\0\16\0\0" .. "\0\4\0\0" .. "\1\4\1\0" .. "\2\0\0\2" .. "\2\1\0\0" .. "\4\0\2\4" ..
      "\4\1\0\4" .. "\5\0\4\5" .. "\5\1\0\5" .. "\9\0\1\0" .. "\8\1\9\33" .. "\10\0\0\0" ..
      "\11\0\1\0" .. "\11\1\1\0",
    -- misuse: unaligned map, partial unmap, free with a mapping left, twice released
    "\0\8\0\0" .. "\1\4\0\0" .. "\2\0\0\33" .. "\2\0\0\0" .. "\3\0\0\1" .. "\11\0\0\0" ..
      "\10\0\0\0" .. "\10\0\0\0" .. "\3\0\0\4" .. "\11\0\0\0",
    -- part of a memory: its second half from offset 1 page (refused as on the H200)
    "\0\8\0\0" .. "\1\2\0\0" .. "\2\0\129\0" .. "\4\0\0\1" .. "\11\0\1\0",
  },
  seconds_per_input = 2,
  memory_per_input = 256 * 1024 * 1024,
  decode = function(input)
    local free0 = poolsh.device().free
    local ok, ranges, mems, views = pcall(run_program, input)
    if not ok then error(ranges, 0) end
    for _, v in ipairs(views) do views[_] = nil end
    for _, r in ipairs(ranges) do
      if r.live then
        local cok, cerr = pcall(r.close, r)
        if not cok then bug("closing r%d: %s", r.id, tostring(cerr)) end
      end
    end
    for _, m in ipairs(mems) do if m.live then m:release() end end
    collectgarbage()
    local free = poolsh.device().free
    if free ~= free0 then bug("the device's free memory is %d after the program, %d before", free, free0) end
  end,
}, ...)
