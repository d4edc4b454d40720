-- Input fuzzer: the RMM reader's chunks (poolsh.replay.rmm reads 64 KiB at
-- a time and completes a row a chunk cuts on its own). A mutated log of
-- 150 KiB, many of its rows across chunk edges, is read with the default
-- chunk size and with one of 1 to 300 bytes: both reads must give the same
-- events, or the same clear error. lib.lua has no way to report a broken
-- invariant, so a difference is written to stderr and raised as a table
-- (lib.run then fails on "raised a table, not a message").
-- Usage: poolsh --backend=sim scripts/fuzz/rmm_chunks.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local rmm = require "poolsh.replay.rmm"

-- A valid log of about 150 KiB: hex and decimal pointers, failures with
-- (nil), clock and decimal-seconds times, CRLF ends, blank lines, three
-- streams (one named).
local function log()
  local t = { rmm.header }
  local streams = { "0x0", "7", "cuda-1" }
  for i = 1, 3000 do
    local slot, phase = (i - 1) % 30, ((i - 1) // 30) % 2
    local addr = 0x7f0000000000 + slot * 0x200000
    local action = phase == 0 and "allocate" or "free"
    local ptr = i % 11 == 4 and tostring(addr) or ("0x%x"):format(addr)
    local time = i % 17 == 0 and ("%d.%d"):format(1700000000 + i // 100, i % 100)
      or ("13:%02d:%02d.%06d"):format(i // 3600 % 60, i // 60 % 60, i * 7919 % 1000000)
    local line = ("%d,%s,%s,%s,%d,%s"):format(140000 + i % 3, time, action, ptr, 512 * (1 + i % 13),
      streams[1 + slot % 3])
    t[#t + 1] = i % 5 == 0 and line .. "\r" or line
    if i % 9 == 0 then t[#t + 1] = ("%d,%s,allocate failure,(nil),%d,0x0"):format(i, time, 1 << 40) end
    if i % 401 == 0 then t[#t + 1] = "" end
  end
  return table.concat(t, "\n") .. "\n"
end

-- The events of the log at path as one string, or its error.
local function read(path)
  local ok, out = pcall(function()
    local list = {}
    for op, addr, size, stream, us in rmm.open(path):events() do
      list[#list + 1] = ("%s %d %d %s %d"):format(op, addr, size, tostring(stream), us)
    end
    return table.concat(list, "\n")
  end)
  return ok, out
end

local default = rmm.chunk

lib.run({
  name = "rmm_chunks",
  suffix = ".csv",
  corpus = { log() },
  seconds_per_input = 4,
  decode = function(_, path)
    rmm.chunk = default
    local ok1, a = read(path)
    rmm.chunk = math.random(1, 300)
    local ok2, b = read(path)
    local chunk = rmm.chunk
    rmm.chunk = default
    if ok1 ~= ok2 or a ~= b then
      io.stderr:write(("rmm_chunks: chunks of %d bytes read otherwise than chunks of %d:\n  %s\n  %s\n")
        :format(chunk, default, tostring(a):sub(1, 200), tostring(b):sub(1, 200)))
      error({ chunk = chunk })
    end
    if not ok1 then error(a, 0) end
  end,
}, ...)
