--- RMM's logging CSV, as rmm::mr::logging_resource_adaptor writes it and
-- RMM's REPLAY_BENCHMARK reads it:
--   Thread,Time,Action,Pointer,Size,Stream
--   1,00:00:01.250000,allocate,0x7f0000000000,1048576,2
-- Only alloc, free and alloc_failed become rows; other ops are skipped.
local util = require "poolsh.export.util"

local M = {}

M.header = "Thread,Time,Action,Pointer,Size,Stream"

-- poolsh calls from one Lua thread: one constant thread id.
local THREAD = 1

local actions = { alloc = "allocate", free = "free", alloc_failed = "allocate failure" }

--- Milliseconds as RMM's "%H:%M:%S.%f": hours, minutes, seconds, microseconds.
function M.time(ms)
  local us = math.max(0, math.floor(ms * 1000 + 0.5))
  local s, frac = us // 1000000, us % 1000000
  return string.format("%02d:%02d:%02d.%06d", s // 3600, s // 60 % 60, s % 60, frac)
end

local function integer(v)
  return math.tointeger(v) or (type(v) == "number" and v == v and math.floor(v)) or 0
end

--- One CSV row for ev at `ms`, or nil when ev is not an allocation row.
-- Pointer is hex (RMM parses it with base 16; a failure logs 0x0); Stream is
-- the stream id in decimal, which the parser's unsigned conversion reads.
function M.row(ev, ms)
  local action = actions[ev.op]
  if not action then return nil end
  local addr = ev.op ~= "alloc_failed" and math.tointeger(ev.addr) or 0
  return string.format("%d,%s,%s,0x%x,%d,%d", THREAD, M.time(ms), action, addr,
    integer(ev.size), integer(ev.stream))
end

-- Rows read from the records in C at a time (about 3 MiB of text).
local CHUNK = 65536

--- Writes the CSV with out(string): header first, "\n" line ends. From
-- poolsh's own record (export.save's record), the rows src/trace.c
-- formats, a chunk at a time.
function M.write(out, each, _, record)
  local clock = util.clock()
  out(M.header .. "\n")
  if record then
    for from = 1, record.count, CHUNK do out(record.csv(from, from + CHUNK - 1)) end
    return
  end
  each(function(ev)
    local row = M.row(ev, clock(ev))
    if row then out(row .. "\n") end
  end)
end

--- The CSV text for events.
function M.encode(events)
  return require("poolsh.export").to_string("csv", events)
end

return M
