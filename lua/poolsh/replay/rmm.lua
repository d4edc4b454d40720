--- RMM logging CSVs (rmm::mr::logging_resource_adaptor) as Recordings
-- (docs/replay.md), read in chunks of 64 KiB: memory follows the live
-- blocks, not the file's length.
--   Thread,Time,Action,Pointer,Size,Stream
--   140573312345856,14:02:07.123456,allocate,0x7f8a40000000,1024,0x0
-- Time is RMM's %H:%M:%S.%f (a day boundary is crossed forwards) or
-- seconds as a decimal number. Pointer is hex (0x...), decimal, or
-- "(nil)" for a failure. Stream ids stay as recorded: hex or decimal
-- become integers, anything else stays a string. "record N" in errors is
-- the Nth row after the header (blank lines are not rows).
local M = {}

M.header = "Thread,Time,Action,Pointer,Size,Stream"

-- Above this a size is a bad file, not a request (as poolsh.replay.torch).
M.max_size = 1 << 50

--- The longest line read: past it a file is refused, not held in memory.
M.max_line = 1 << 20

--- Bytes read at a time (a reader's results do not depend on it; tests
-- and the rmm_chunks fuzzer vary it).
M.chunk = 65536

local actions = { allocate = "alloc", free = "free", ["allocate failure"] = "alloc_failed" }

local DAY_US = 86400 * 1000000

-- A row's fields after Thread, and where the sixth ends (unanchored at the
-- end, which is faster: the caller checks that nothing but a CR follows).
local ROW = "^[^,]*,([^,]*),([^,]*),([^,]*),([^,]*),([^,\r]*)()"
-- A whole well-formed row in a chunk, from a given position to its line
-- end (anchored there by find's init): the fields after Thread, and where
-- the next line starts. A line it does not match (blank, short, at the
-- chunk's end) is read as a line by ROW's rules.
local CHUNK_ROW = "^[^,\n]*,([^,\n]*),([^,\n]*),([^,\n]*),([^,\n]*),([^,\r\n]*)\r?\n()"
-- The common row, as RMM writes it: a clock time (its H:M:S and its
-- fraction), the action, a hex pointer, a decimal size, the stream.
local FAST_ROW = "^[^,\n]*,(%d+:%d%d:%d%d)%.?(%d*),([^,\n]*),(0[xX]%x+),(%d+),([^,\r\n]*)\r?\n()"
local sub, find, tonumber, tointeger = string.sub, string.find, tonumber, math.tointeger

local function basename(path) return path:match("[^/]*$") end

local function open_file(path, file)
  local f, err = io.open(path, "rb")
  if not f then error(("%s: cannot open: %s"):format(file, err), 0) end
  return f
end

-- The header line, checked (a UTF-8 BOM and a CR are allowed).
local function check_header(f, file)
  local line = f:read("l")
  if not line then error(file .. ": empty file (an RMM log starts with " .. M.header .. ")", 0) end
  line = line:gsub("^\xef\xbb\xbf", ""):gsub("\r$", "")
  if line ~= M.header then
    error(("%s: record 0: header %q is not RMM's %q"):format(file, line:sub(1, 80), M.header), 0)
  end
end

-- An integer written in hex (0x...) or decimal, or nil.
local function integer(s)
  local n = #s
  if find(s, "^0[xX]%x+$") then
    if n > 18 or (n == 18 and sub(s, 3, 3) > "7") then return nil end
    return tointeger(tonumber(s))
  end
  if n <= 18 and find(s, "^%d+$") then return tointeger(tonumber(s)) end
end

-- Powers of ten that make 1 to 6 digits of a fraction microseconds.
local SCALE = { 100000, 10000, 1000, 100, 10, 1 }

-- Microseconds in a fraction's digits (the first six count), 0 for none.
local function frac_us(f)
  local n = #f
  if n == 0 then return 0 end
  if n > 6 then return tonumber(sub(f, 1, 6)) end
  return tonumber(f) * SCALE[n]
end

-- Microseconds of a Time field (clock time or decimal seconds), or nil.
local function micros(s)
  local _, _, h, m, sec, frac = find(s, "^(%d+):(%d%d):(%d%d)%.?(%d*)$")
  if h then
    return ((tonumber(h) * 60 + tonumber(m)) * 60 + tonumber(sec)) * 1000000 + frac_us(frac)
  end
  local _, _, whole, f2 = find(s, "^(%d+)%.?(%d*)$")
  if whole then return tonumber(whole) * 1000000 + frac_us(f2) end
end

local function bad(file, n, fmt, ...) error(("%s: record %d: " .. fmt):format(file, n, ...), 0) end

-- The byte count of a Size field, or a one-line error.
local function byte_count(s, file, n)
  local bytes = integer(s)
  if not bytes then
    if s:match("^%-%d+$") then bad(file, n, "negative size %s", s) end
    if s:match("^%d+$") then bad(file, n, "size %s is too large (over 1 PiB)", s) end
    bad(file, n, "size %q is not a byte count", s)
  end
  if bytes > M.max_size then bad(file, n, "size %d is too large (over 1 PiB)", bytes) end
  return bytes
end

-- The reader of one file's rows: two functions sharing its state (the
-- live addresses, the streams seen, the clock):
--   row(time, action, ptr, size, stream, n) -> op, addr, size, stream, t
--     for the fields of row n; raises for a bad one;
--   fast(hms, frac, action, hex, size, stream, n) -> the same, for the
--     pieces FAST_ROW took (a clock time, a hex pointer, a decimal size),
--     or nil, changing nothing, when the row is not the common case (a
--     new stream, an unknown action, a number out of range): then row()
--     reads it and says what is wrong.
-- The last Time's seconds are kept with their value (rows logged in the
-- same second share them).
local function row_reader(file)
  local live = {}           -- address -> the record that allocated it
  local streams = {}        -- Stream field -> its id (a file has few)
  local first, last, days = nil, nil, 0
  local last_time, last_us = nil, nil
  local last_hms, hms_us = nil, nil

  -- The clock's day crossing, the live addresses; the event.
  local function finish(op, addr, bytes, id, us, n)
    if last and us + days < last - DAY_US // 2 then days = days + DAY_US end
    us = us + days
    first, last = first or us, us
    if op == "alloc" then
      if live[addr] then bad(file, n, "allocate at 0x%x, which is live (allocated at record %d)", addr, live[addr]) end
      live[addr] = n
    elseif op == "free" then
      if not live[addr] then bad(file, n, "free of 0x%x, which was never allocated or is already free", addr) end
      live[addr] = nil
    end
    return op, addr, bytes, id, us - first
  end

  local function row(time, action, ptr, size, stream, n)
    local op = actions[action]
    if not op then bad(file, n, "unknown action %q", action) end
    local addr = (ptr == "(nil)" or ptr == "") and op == "alloc_failed" and 0 or integer(ptr)
    if not addr then bad(file, n, "pointer %q is not an address", ptr) end
    local bytes = byte_count(size, file, n)
    local id = streams[stream]
    if not id then
      if stream == "" then bad(file, n, "no stream") end
      id = integer(stream) or stream
      streams[stream] = id
    end
    local us
    if time == last_time then us = last_us
    else
      us = micros(time)
      if not us then bad(file, n, "time %q is neither HH:MM:SS.ffffff nor seconds", time) end
      last_time, last_us = time, us
    end
    return finish(op, addr, bytes, id, us, n)
  end

  local function fast(hms, frac, action, hex, size, stream, n)
    local op, id = actions[action], streams[stream]
    local nh, ns, nf = #hex, #size, #frac
    if not (op and id) or nh > 18 or (nh == 18 and sub(hex, 3, 3) > "7") or ns > 18 or nf > 6 then
      return nil
    end
    local bytes = tonumber(size)
    if bytes > M.max_size then return nil end
    if hms ~= last_hms then
      local _, _, h, m, sec = find(hms, "^(%d+):(%d%d):(%d%d)$")
      last_hms, hms_us = hms, ((tonumber(h) * 60 + tonumber(m)) * 60 + tonumber(sec)) * 1000000
    end
    local us = nf == 0 and hms_us or hms_us + tonumber(frac) * SCALE[nf]
    return finish(op, tointeger(tonumber(hex)), bytes, id, us, n)
  end

  return row, fast
end

-- The fields of a row that CHUNK_ROW did not take, by ROW's rules;
-- raises for a row without 6 fields.
local function line_fields(line, file, n)
  local time, action, ptr, size, stream, stop = line:match(ROW)
  if not stop or (stop <= #line and sub(line, stop) ~= "\r") then
    bad(file, n, "%d fields, 6 expected (%s)", select(2, line:gsub(",", "")) + 1, M.header)
  end
  return time, action, ptr, size, stream
end

-- The Stream field of a row CHUNK_ROW did not take: what follows its last
-- comma (streams are listed before the rows are checked).
local function line_stream(line)
  return "", "", "", "", line:match("^.*,([^,\r]*)\r?$") or ""
end

-- An iterator over the rows of open file f (after its header), blank
-- lines skipped: each call returns what parse(time, action, ptr, size,
-- stream, n) returns for the next row (n: its number), or nil at the end
-- (f closed then). Reads M.chunk bytes at a time (a line they cut is
-- completed alone from the next, and one over M.max_line is refused); a
-- well-formed row is taken
-- by one find over the chunk (no line string made), first by FAST_ROW and
-- fast(...) when given; another line goes to fields(line, file, n).
local function rows(f, file, fields, parse, fast)
  local buf, pos, n, eof = "", 1, 0, false
  local after, after_pos = nil, nil   -- a chunk whose first line ended a cut one
  local chunk = math.max(1, math.tointeger(M.chunk) or 65536)
  return function()
    while true do
      if fast then
        local _, _, hms, frac, action, hex, size, stream, nxt = find(buf, FAST_ROW, pos)
        if nxt then
          local op, addr, bytes, id, t = fast(hms, frac, action, hex, size, stream, n + 1)
          if op then
            pos, n = nxt, n + 1
            return op, addr, bytes, id, t
          end
        end
      end
      local _, _, time, action, ptr, size, stream, nxt = find(buf, CHUNK_ROW, pos)
      if nxt then
        pos, n = nxt, n + 1
        return parse(time, action, ptr, size, stream, n)
      end
      local nl = find(buf, "\n", pos, true)
      if nl or (eof and pos <= #buf) then   -- a line CHUNK_ROW does not take
        local stop = nl or #buf + 1
        local line = sub(buf, pos, stop - 1)
        pos = stop + 1
        if find(line, "[^%s]") then
          n = n + 1
          time, action, ptr, size, stream = fields(line, file, n)
          return parse(time, action, ptr, size, stream, n)
        end
      elseif eof or io.type(f) ~= "file" then
        if io.type(f) == "file" then f:close() end
        buf, pos, eof = "", 1, true
        return nil
      elseif after then   -- a cut line was completed: the rest of its chunk
        buf, pos, after = after, after_pos, nil
      else                -- the next chunk; a line it completes is joined alone
        local tail = sub(buf, pos)
        if #tail > M.max_line then
          if io.type(f) == "file" then f:close() end
          bad(file, n + 1, "a line of more than %d bytes (an RMM row is a few dozen)", M.max_line)
        end
        local more = f:read(chunk)
        if not more then eof = true
        elseif tail == "" then buf, pos = more, 1
        else
          local nl = find(more, "\n", 1, true)
          if nl and nl < #more then
            buf, pos, after, after_pos = tail .. sub(more, 1, nl), 1, more, nl + 1
          else
            buf, pos = tail .. more, 1
          end
        end
      end
    end
  end
end

-- The Stream field and the row's number.
local function stream_of(_, _, _, _, stream, n) return stream, n end

-- The stream ids in order of first appearance (one pass over the file).
local function scan_streams(rec)
  local seen, list = {}, {}
  local f = open_file(rec._path, rec.file)
  check_header(f, rec.file)
  for s, n in rows(f, rec.file, line_stream, stream_of) do
    if not seen[s] then
      if s == "" then
        if io.type(f) == "file" then f:close() end
        bad(rec.file, n, "no stream")
      end
      seen[s] = true
      local id = integer(s) or s
      if not seen[id] then seen[id] = true; list[#list + 1] = id end
    end
  end
  return list
end

local Recording = {}

--- for op, addr, size, stream, t in rec:events() do ... end: reads the file
-- again on each call; the fourth value closes it when a loop ends early.
function Recording:events()
  local f = open_file(self._path, self.file)
  local ok, err = pcall(check_header, f, self.file)
  if not ok then f:close(); error(err, 0) end
  local row, fast = row_reader(self.file)
  return rows(f, self.file, line_fields, row, fast), nil, nil, f
end
-- rec.streams is read from the file when first asked for.
local meta = { __index = function(rec, key)
  if key == "streams" then
    local streams = scan_streams(rec)
    rawset(rec, "streams", streams)
    return streams
  end
  return Recording[key]
end }

--- The Recording of the RMM log at path (its header checked now, its rows
-- as they are read).
function M.open(path)
  assert(type(path) == "string", "poolsh.replay.rmm.open: a file path expected")
  local file = basename(path)
  local f <close> = open_file(path, file)
  check_header(f, file)
  return setmetatable({ format = "rmm", file = file, initial = {}, _path = path }, meta)
end

return M
