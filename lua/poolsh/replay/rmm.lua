--- RMM logging CSVs (rmm::mr::logging_resource_adaptor) as Recordings
-- (docs/replay.md), read line by line: memory follows the live blocks,
-- not the file's length.
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

local actions = { allocate = "alloc", free = "free", ["allocate failure"] = "alloc_failed" }

local DAY_US = 86400 * 1000000

-- A row's fields after Thread, and where the sixth ends (unanchored at the
-- end, which is faster: the caller checks that nothing but a CR follows).
local ROW = "^[^,]*,([^,]*),([^,]*),([^,]*),([^,]*),([^,\r]*)()"
local sub = string.sub

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
  if s:match("^0[xX]%x+$") then
    if #s > 18 or (#s == 18 and s:sub(3, 3) > "7") then return nil end
    return math.tointeger(tonumber(s))
  end
  if s:match("^%d+$") and #s <= 18 then return math.tointeger(tonumber(s)) end
end

-- Microseconds of a Time field (clock time or decimal seconds), or nil.
local function micros(s)
  local h, m, sec, frac = s:match("^(%d+):(%d%d):(%d%d)%.?(%d*)$")
  if h then
    local us = tonumber((frac .. "000000"):sub(1, 6))
    return ((tonumber(h) * 60 + tonumber(m)) * 60 + tonumber(sec)) * 1000000 + us
  end
  local whole, f2 = s:match("^(%d+)%.?(%d*)$")
  if whole then return tonumber(whole) * 1000000 + tonumber((f2 .. "000000"):sub(1, 6)) end
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

-- The parser of one file's rows: a function(line, n) returning op, addr,
-- size, stream, t for a row, raising for a bad one.
local function row_parser(file)
  local live = {}           -- address -> the record that allocated it
  local streams = {}        -- Stream field -> its id (a file has few)
  local first, last, days = nil, nil, 0
  return function(line, n)
    local time, action, ptr, size, stream, stop = line:match(ROW)
    if not stop or (stop <= #line and sub(line, stop) ~= "\r") then
      bad(file, n, "%d fields, 6 expected (%s)", select(2, line:gsub(",", "")) + 1, M.header)
    end
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
    local us = micros(time)
    if not us then bad(file, n, "time %q is neither HH:MM:SS.ffffff nor seconds", time) end
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
end

-- Calls each(line, n) for every row of the file at path after its header.
local function each_row(path, file, each)
  local f <close> = open_file(path, file)
  check_header(f, file)
  local n = 0
  for line in f:lines("l") do
    if line:find("[^%s]") then
      n = n + 1
      each(line, n)
    end
  end
end

-- The stream ids in order of first appearance (one pass over the file).
local function scan_streams(rec)
  local seen, list = {}, {}
  each_row(rec._path, rec.file, function(line, n)
    local s = line:match("^.*,([^,\r]*)\r?$") or ""
    if not seen[s] then
      if s == "" then bad(rec.file, n, "no stream") end
      seen[s] = true
      local id = integer(s) or s
      if not seen[id] then seen[id] = true; list[#list + 1] = id end
    end
  end)
  return list
end

local Recording = {}

--- for op, addr, size, stream, t in rec:events() do ... end: reads the file
-- again on each call; the fourth value closes it when a loop ends early.
function Recording:events()
  local f = open_file(self._path, self.file)
  check_header(f, self.file)
  local parse, n = row_parser(self.file), 0
  local function step()
    if io.type(f) ~= "file" then return nil end
    local line = f:read("l")
    while line and not line:find("[^%s]") do line = f:read("l") end
    if not line then f:close(); return nil end
    n = n + 1
    return parse(line, n)
  end
  return step, nil, nil, f
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
