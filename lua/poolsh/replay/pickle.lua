--- A reader for the pickle subset that data files use (PyTorch memory
-- snapshots among them): the protocol 2-5 opcodes for dicts, lists, tuples,
-- sets, str, bytes, int, float, bool, None, the memo and frames. Classes
-- (GLOBAL, REDUCE, BUILD...) are refused, so reading never runs code.
--   local v = require("poolsh.replay.pickle").loads(bytes [, label])
-- What Python values become (the writer poolsh.export.pickle reads it back):
--   dict            a table marked pickle.dict (export.pickle's mark)
--   list, tuple     an array with field n, marked pickle.list
--   set, frozenset  a table {[item] = true}, marked pickle.dict
--   None            pickle.None everywhere (lists keep no holes, dicts keep the key)
--   str, bytes      a Lua string (str as UTF-8)
--   int             an integer (an error beyond 64 bits); float: a float
-- Bad input raises one line "LABEL: byte N: what", N being the opcode's
-- offset as pickletools.dis prints it (from 0).
-- Memory is bounded: the reader counts what the values it makes will hold
-- (stack and memo slots, container items and tables, string bytes) and
-- refuses a pickle whose values would take more than M.max_ratio times its
-- size (at least M.min_budget bytes), or whose MARKs nest deeper than
-- M.max_depth: a pickle of millions of references to one memo entry, or
-- of empty dicts, costs a few bytes of file each and 16 to 80 bytes of
-- memory (docs/replay.md, "Limits").
local writer = require "poolsh.export.pickle"

local byte, sub, unpack = string.byte, string.sub, string.unpack
local list, dict = writer.list, writer.dict
local LIST, DICT = getmetatable(list()), getmetatable(dict())
local None = writer.None

local M = { None = None, list = list, dict = dict }

--- The most memory the values may take, in bytes per byte of pickle ...
M.max_ratio = 12
--- ... but at least this.
M.min_budget = 8 << 20
--- The most MARKs open at once (a snapshot nests a few deep).
M.max_depth = 1000

-- What the reader counts for memory, in bytes: a stack, memo or list slot;
-- a table; a dict entry (a hash node of 24 bytes, with its share of the
-- power of two).
local SLOT, TABLE, ENTRY = 16, 64, 32

-- Every opcode of protocols 0-5 (Lib/pickletools.py), for error messages.
local names = {
  [0x28] = "MARK", [0x2e] = "STOP", [0x30] = "POP", [0x31] = "POP_MARK", [0x32] = "DUP",
  [0x46] = "FLOAT", [0x49] = "INT", [0x4a] = "BININT", [0x4b] = "BININT1", [0x4c] = "LONG",
  [0x4d] = "BININT2", [0x4e] = "NONE", [0x50] = "PERSID", [0x51] = "BINPERSID",
  [0x52] = "REDUCE", [0x53] = "STRING", [0x54] = "BINSTRING", [0x55] = "SHORT_BINSTRING",
  [0x56] = "UNICODE", [0x58] = "BINUNICODE", [0x61] = "APPEND", [0x62] = "BUILD",
  [0x63] = "GLOBAL", [0x64] = "DICT", [0x7d] = "EMPTY_DICT", [0x65] = "APPENDS",
  [0x67] = "GET", [0x68] = "BINGET", [0x69] = "INST", [0x6a] = "LONG_BINGET", [0x6c] = "LIST",
  [0x5d] = "EMPTY_LIST", [0x6f] = "OBJ", [0x70] = "PUT", [0x71] = "BINPUT",
  [0x72] = "LONG_BINPUT", [0x73] = "SETITEM", [0x74] = "TUPLE", [0x29] = "EMPTY_TUPLE",
  [0x75] = "SETITEMS", [0x47] = "BINFLOAT", [0x80] = "PROTO", [0x81] = "NEWOBJ",
  [0x82] = "EXT1", [0x83] = "EXT2", [0x84] = "EXT4", [0x85] = "TUPLE1", [0x86] = "TUPLE2",
  [0x87] = "TUPLE3", [0x88] = "NEWTRUE", [0x89] = "NEWFALSE", [0x8a] = "LONG1",
  [0x8b] = "LONG4", [0x42] = "BINBYTES", [0x43] = "SHORT_BINBYTES",
  [0x8c] = "SHORT_BINUNICODE", [0x8d] = "BINUNICODE8", [0x8e] = "BINBYTES8",
  [0x8f] = "EMPTY_SET", [0x90] = "ADDITEMS", [0x91] = "FROZENSET", [0x92] = "NEWOBJ_EX",
  [0x93] = "STACK_GLOBAL", [0x94] = "MEMOIZE", [0x95] = "FRAME", [0x96] = "BYTEARRAY8",
  [0x97] = "NEXT_BUFFER", [0x98] = "READONLY_BUFFER",
}

local STOP, BINGET = 0x2e, 0x68

-- The parser of one pickle: its state lives in these upvalues.
local function parser(s, label, budget)
  local len = #s
  local stack, sp = {}, 0
  local top, cost = 0, 0            -- the stack's high-water mark; memory counted
  local marks, nmarks = {}, 0
  local memo, memo_n = {}, 0
  local at = 1                      -- the current opcode's position

  local function fail(fmt, ...)
    error(("%s: byte %d: %s"):format(label, at - 1, fmt:format(...)), 0)
  end

  local function opname() return names[byte(s, at)] end

  -- Counts n bytes of values made; raises past the budget.
  local function spend(n)
    cost = cost + n
    if cost > budget then
      fail("%s: the values would take more than %d bytes of memory (%d per byte of this "
        .. "%d-byte pickle, at least %d): a bomb of references or containers?",
        opname(), budget, M.max_ratio, len, M.min_budget)
    end
  end

  -- Checks that n bytes follow p.
  local function need(p, n)
    if n < 0 then fail("%s with a negative length %d", opname(), n) end
    if n > len - p + 1 then
      fail("truncated: %s needs %d bytes, %d left", opname(), n, len - p + 1)
    end
  end

  local function push(v)
    sp = sp + 1
    if sp > top then top = sp; spend(SLOT) end
    stack[sp] = v
  end

  local function pop()
    if sp == 0 then fail("%s on an empty stack", opname()) end
    sp = sp - 1
    return stack[sp + 1]
  end

  -- The stack position of the last MARK, which it removes.
  local function pop_mark()
    if nmarks == 0 then fail("%s without a MARK", opname()) end
    nmarks = nmarks - 1
    return marks[nmarks + 1]
  end

  -- The container at stack position k, which must have metatable mt.
  local function container(k, mt, what)
    local c = stack[k]
    if k < 1 or type(c) ~= "table" or getmetatable(c) ~= mt then
      fail("%s needs a %s below its items", opname(), what)
    end
    return c
  end

  -- A dict key: None stays the sentinel; NaN cannot be a Lua key.
  local function key(k)
    if k ~= k then fail("NaN as a dict key") end
    return k
  end

  local function setitems(d, first, last)
    if (last - first + 1) % 2 ~= 0 then fail("%s with an odd number of items", opname()) end
    spend(ENTRY * (last - first + 1) // 2)
    for i = first, last, 2 do d[key(stack[i])] = stack[i + 1] end
  end

  -- A list of stack[first..last] (also used for tuples).
  local function slice(first, last)
    local n = last - first + 1
    spend(TABLE + SLOT * n)
    local t = table.move(stack, first, last, 1, {})
    t.n = n
    return list(t)
  end

  -- A little-endian two's complement integer of n bytes at p.
  local function long(p, n)
    need(p, n)
    if n == 0 then return 0 end
    if n <= 8 then return (unpack("<i" .. n, s, p)) end
    local v = unpack("<i8", s, p)
    local fill = v < 0 and "\xff" or "\0"
    if sub(s, p + 8, p + n - 1) ~= fill:rep(n - 8) then fail("integer beyond 64 bits") end
    return v
  end

  local function bytes(p, n)
    need(p, n)
    spend(n)
    push(sub(s, p, p + n - 1))
    return p + n
  end

  local function get(i)
    local v = memo[i]
    if v == nil then fail("memo entry %d was never stored", i) end
    push(v)
  end

  local function put(i)
    if sp == 0 then fail("%s on an empty stack", opname()) end
    if memo[i] == nil then memo_n = memo_n + 1; spend(ENTRY) end
    memo[i] = stack[sp]
  end

  -- Each handler takes the position after its opcode, returns the next one.
  local h = {}
  h[0x80] = function(p)        -- PROTO
    need(p, 1)
    local v = byte(s, p)
    if v < 2 or v > 5 then fail("protocol %d (2 to 5 are read)", v) end
    return p + 1
  end
  h[0x95] = function(p) need(p, 8); need(p + 8, unpack("<i8", s, p)); return p + 8 end
  h[0x28] = function(p)
    if nmarks >= M.max_depth then fail("MARKs nested more than %d deep", M.max_depth) end
    nmarks = nmarks + 1; marks[nmarks] = sp; return p
  end
  h[0x30] = function(p) pop(); return p end
  h[0x31] = function(p) sp = pop_mark(); return p end
  h[0x32] = function(p) local v = pop(); push(v); push(v); return p end
  h[0x4e] = function(p) push(None); return p end
  h[0x88] = function(p) push(true); return p end
  h[0x89] = function(p) push(false); return p end
  h[0x4b] = function(p) need(p, 1); push(byte(s, p)); return p + 1 end
  h[0x4d] = function(p) need(p, 2); push((unpack("<I2", s, p))); return p + 2 end
  h[0x4a] = function(p) need(p, 4); push((unpack("<i4", s, p))); return p + 4 end
  h[0x8a] = function(p) need(p, 1); local n = byte(s, p); push(long(p + 1, n)); return p + 1 + n end
  h[0x8b] = function(p)
    need(p, 4)
    local n = unpack("<i4", s, p)
    push(long(p + 4, n))
    return p + 4 + n
  end
  h[0x47] = function(p) need(p, 8); push((unpack(">d", s, p))); return p + 8 end
  h[0x8c] = function(p) need(p, 1); return bytes(p + 1, byte(s, p)) end
  h[0x58] = function(p) need(p, 4); return bytes(p + 4, (unpack("<I4", s, p))) end
  h[0x8d] = function(p) need(p, 8); return bytes(p + 8, (unpack("<i8", s, p))) end
  h[0x43], h[0x55] = h[0x8c], h[0x8c]       -- SHORT_BINBYTES, SHORT_BINSTRING
  h[0x42], h[0x54] = h[0x58], h[0x58]       -- BINBYTES, BINSTRING
  h[0x8e], h[0x96] = h[0x8d], h[0x8d]       -- BINBYTES8, BYTEARRAY8
  h[0x94] = function(p) put(memo_n); return p end
  h[0x71] = function(p) need(p, 1); put(byte(s, p)); return p + 1 end
  h[0x72] = function(p) need(p, 4); put((unpack("<I4", s, p))); return p + 4 end
  h[0x68] = function(p) need(p, 1); get(byte(s, p)); return p + 1 end
  h[0x6a] = function(p) need(p, 4); get((unpack("<I4", s, p))); return p + 4 end
  h[0x5d] = function(p) spend(TABLE); push(list { n = 0 }); return p end
  h[0x7d] = function(p) spend(TABLE); push(dict()); return p end
  h[0x29] = h[0x5d]
  h[0x8f] = h[0x7d]
  h[0x61] = function(p)        -- APPEND
    local v = pop()
    local l = container(sp, LIST, "list")
    spend(SLOT)
    l.n = l.n + 1
    l[l.n] = v
    return p
  end
  h[0x65] = function(p)        -- APPENDS
    local k = pop_mark()
    local l = container(k, LIST, "list")
    spend(SLOT * (sp - k))
    table.move(stack, k + 1, sp, l.n + 1, l)
    l.n = l.n + sp - k
    sp = k
    return p
  end
  h[0x73] = function(p)        -- SETITEM
    if sp < 3 then fail("SETITEM needs a dict, a key and a value") end
    setitems(container(sp - 2, DICT, "dict"), sp - 1, sp)
    sp = sp - 2
    return p
  end
  h[0x75] = function(p)        -- SETITEMS
    local k = pop_mark()
    setitems(container(k, DICT, "dict"), k + 1, sp)
    sp = k
    return p
  end
  h[0x90] = function(p)        -- ADDITEMS
    local k = pop_mark()
    local set = container(k, DICT, "set")
    spend(ENTRY * (sp - k))
    for i = k + 1, sp do set[key(stack[i])] = true end
    sp = k
    return p
  end
  h[0x6c] = function(p)        -- LIST, TUPLE: the items since MARK
    local k = pop_mark()
    local t = slice(k + 1, sp)
    sp = k
    push(t)
    return p
  end
  h[0x74] = h[0x6c]
  h[0x85] = function(p) if sp < 1 then fail("TUPLE1 on an empty stack") end
    stack[sp] = slice(sp, sp); return p end
  h[0x86] = function(p) if sp < 2 then fail("TUPLE2 needs 2 items") end
    local t = slice(sp - 1, sp); sp = sp - 1; stack[sp] = t; return p end
  h[0x87] = function(p) if sp < 3 then fail("TUPLE3 needs 3 items") end
    local t = slice(sp - 2, sp); sp = sp - 2; stack[sp] = t; return p end
  h[0x64] = function(p)        -- DICT
    local k = pop_mark()
    spend(TABLE)
    local d = dict()
    setitems(d, k + 1, sp)
    sp = k
    push(d)
    return p
  end
  h[0x91] = function(p)        -- FROZENSET
    local k = pop_mark()
    spend(TABLE + ENTRY * (sp - k))
    local set = dict()
    for i = k + 1, sp do set[key(stack[i])] = true end
    sp = k
    push(set)
    return p
  end

  -- The value the pickle ends with.
  local function stop()
    if sp ~= 1 or nmarks ~= 0 then
      fail("STOP with %d values and %d marks on the stack (1 and 0 expected)", sp, nmarks)
    end
    return stack[1]
  end

  return function()
    local p = 1
    while p <= len do
      at = p
      local op = byte(s, p)
      if op == BINGET then             -- most of a snapshot's opcodes: no call
        local v = memo[byte(s, p + 1)]
        if v ~= nil and sp < top then
          sp = sp + 1
          stack[sp] = v
          p = p + 2
          goto next
        end
      end
      if op == STOP then return stop() end
      local f = h[op]
      if not f then
        if names[op] then fail("opcode %s (0x%02x) is not read (classes and text opcodes are not)", names[op], op) end
        fail("unknown opcode 0x%02x", op)
      end
      p = f(p + 1)
      ::next::
    end
    at = len + 1
    fail("truncated: no STOP")
  end
end

--- The value pickled in the string s. label starts error messages
-- (default "pickle"); max_memory (bytes) replaces the budget of
-- M.max_ratio times #s, at least M.min_budget.
function M.loads(s, label, max_memory)
  assert(type(s) == "string", "pickle.loads: a string expected")
  local budget = max_memory or math.max(M.max_ratio * #s, M.min_budget)
  return parser(s, label or "pickle", budget)()
end

M.opnames = names

return M
