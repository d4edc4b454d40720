-- Untrusted recordings and data files (issue 17, section 3; docs/replay.md,
-- "Limits"): each hostile input is refused quickly, with a clear error
-- naming the file, in bounded memory. Memory is measured in a child poolsh
-- (its peak RSS, VmHWM) against a child that reads a small valid file.
local H = require "helpers"
local poolsh = H.poolsh
local zlib = require "zlib"
local torch = require "poolsh.replay.torch"
local pickle = require "poolsh.replay.pickle"
local replay = require "poolsh.replay"
local profile = require "poolsh.profile"
local format = require "poolsh.golden.format"

local MiB = 1024 * 1024

local dir
setup(function()
  local p = io.popen("mktemp -d")
  dir = p:read("l")
  p:close()
end)
teardown(function() os.execute("rm -rf " .. H.quote(dir)) end)

local function write(name, ...)
  local path = dir .. "/" .. name
  local f = assert(io.open(path, "wb"))
  f:write(...)
  f:close()
  return path
end

-- One gzip member of s.
local function gz(s) return (zlib.deflate(9, 31)(s, "finish")) end

-- What a child poolsh says reading path with poolsh.replay.read.open: the
-- error (or "ok"), its peak RSS in bytes, the seconds it took.
local function child_read(path)
  local code = ("local ok, e = pcall(require('poolsh.replay.read').open, %q) "
    .. "local f = io.open('/proc/self/status') local st = f:read('a') f:close() "
    .. "io.write(ok and 'ok' or tostring(e), '\\n', st:match('VmHWM:%%s*(%%d+)'), '\\n')"):format(path)
  local t0 = poolsh.wallclock()
  local out, err = H.poolsh_cmd("--backend=sim -e " .. H.quote(code))
  local took = poolsh.wallclock() - t0
  local msg, kb = out:match("^(.-)\n(%d+)\n$")
  assert(msg, out .. err)
  return msg, tonumber(kb) * 1024, took
end

-- The peak RSS of a child reading a small valid snapshot.
local base_rss
local function baseline()
  if not base_rss then
    local msg
    msg, base_rss = child_read("tests/data/fuzz/trace.pickle")
    assert.equal("ok", msg)
  end
  return base_rss
end

describe("gzip bombs", function()
  local zeros_1m = gz(("\0"):rep(MiB))

  it("400 members of 1 MiB of zeros: refused after the first piece, in bounded memory", function()
    local path = write("zeros.pickle.gz", zeros_1m:rep(400))    -- 420 KB, 400 MiB inflated
    local msg, rss = child_read(path)
    assert.equal("zeros.pickle.gz: not a pickle of protocol 2 or later (no PROTO opcode)", msg)
    assert.is_true(rss - baseline() < 64 * MiB, ("grew by %d MiB"):format((rss - baseline()) // MiB))
  end)

  it("a pickle's start, then one member of 400 MiB of zeros: refused past the inflate limit", function()
    local d = zlib.deflate(9, 31)
    local parts = { (d("\128\4")) }
    local chunk = ("\0"):rep(MiB)
    for _ = 1, 400 do parts[#parts + 1] = (d(chunk)) end
    parts[#parts + 1] = (d("", "finish"))
    local path = write("one.pickle.gz", table.concat(parts))
    local msg, rss = child_read(path)
    assert.matches("^one%.pickle%.gz: inflates to more than 67108864 bytes, the limit for %d+ bytes of gzip data "
      .. "%(%-%-max%-inflate SIZE raises it%)$", msg)
    assert.is_true(rss - baseline() < 160 * MiB, ("grew by %d MiB"):format((rss - baseline()) // MiB))
    -- the limit is an option: a lower one refuses a real snapshot
    local e = H.err(torch.open, "tests/data/torch/convnet.pickle.gz", { max_inflate = 4096 })
    assert.equal("convnet.pickle.gz: inflates to more than 4096 bytes, the limit for 11344 bytes of gzip "
      .. "data (--max-inflate SIZE raises it)", e)
    local out, err, code = H.poolsh_cmd("--backend=sim replay tests/data/torch/convnet.pickle.gz --max-inflate=4KiB")
    assert.equal(1, code, out)
    assert.matches("inflates to more than 4096 bytes", err)
  end)

  it("empty members cost the same each: 200k take about 10 times what 20k take", function()
    -- sizes where the small file takes milliseconds, best of five: a busy
    -- machine's noise is not a ratio
    local member, empty = gz("\128\4N."), gz("")
    local small = write("20k.pickle.gz", member, empty:rep(20000))
    local big = write("200k.pickle.gz", member, empty:rep(200000))
    local function took(path)
      local best = math.huge
      for _ = 1, 5 do
        collectgarbage()
        local t0 = os.clock()
        assert.equal("\128\4N.", torch.read_bytes(path))
        best = math.min(best, os.clock() - t0)
      end
      return best
    end
    local a, b = took(small), took(big)
    -- linear is 10x, quadratic 100x: 50 tells them apart on a busy machine
    assert.is_true(b / a < 50, ("20k members: %.3f s, 200k: %.3f s"):format(a, b))
  end)
end)

describe("pickle memo bombs", function()
  local function str(s) return "\140" .. string.char(#s) .. s end

  it("a trace of 2M references to one entry is refused, in bounded memory", function()
    local entry = "}\148(" .. str("action") .. str("alloc") .. str("addr") .. "K\1" .. str("size")
      .. "M\0\2" .. str("stream") .. "K\0u"
    local path = write("memo.pickle", "\128\4}(", str("segments"), "]", str("device_traces"), "]]", entry, "a",
      ("(" .. ("h\0"):rep(1000) .. "e"):rep(2000), "au.")
    local msg, rss = child_read(path)
    assert.equal("memo.pickle: record 2: the trace entry repeats an earlier one (the same dict by reference)", msg)
    assert.is_true(rss - baseline() < 100 * MiB, ("grew by %d MiB"):format((rss - baseline()) // MiB))
  end)

  it("2M references on the stack: refused by the reader's memory budget", function()
    local s = "\128\4]\148(" .. ("h\0"):rep(2000000) .. "e."
    local e = H.err(pickle.loads, s, "stack.pickle")
    assert.matches("^stack%.pickle: byte %d+: APPENDS: the values would take more than 48000084 bytes of memory "
      .. "%(12 per byte of this 4000007%-byte pickle, at least 8388608%)", e)
    -- a real snapshot stays well inside the budget
    assert.is_table(pickle.loads(torch.read_bytes("tests/data/torch/transformer.pickle.gz")))
  end)

  it("MARKs nested past the limit are refused", function()
    local e = H.err(pickle.loads, "\128\4" .. ("("):rep(pickle.max_depth + 1), "marks.pickle")
    assert.equal("marks.pickle: byte 1002: MARKs nested more than 1000 deep", e)
  end)
end)

describe("streams of a hostile recording", function()
  -- An RMM log of n streams, each with one allocation and its free.
  local function log(name, n)
    local rows = { "Thread,Time,Action,Pointer,Size,Stream" }
    for i = 1, n do
      rows[#rows + 1] = ("1,%d.0,allocate,0x%x,512,%d"):format(i, 0x10000 + i * 512, i)
      rows[#rows + 1] = ("1,%d.5,free,0x%x,512,%d"):format(i, 0x10000 + i * 512, i)
    end
    return write(name, table.concat(rows, "\n"), "\n")
  end

  it("200k stream ids are refused, naming the cap and the options", function()
    local path = log("streams.csv", 200000)
    local t0 = poolsh.wallclock()
    local out, err, code = H.poolsh_cmd("--backend=sim replay " .. H.quote(path))
    assert.equal(1, code, out)
    assert.equal("./build/poolsh: poolsh replay: streams.csv: 200000 streams, and a replay makes at most 64 "
      .. "(--max-streams N or opts.max_streams raises that; --streams=one puts every event on one stream)\n",
      err:gsub("^%S*poolsh: ", "./build/poolsh: "))
    -- from Lua, where the log's streams are not counted first: refused at the 65th
    local before = #select(2, poolsh.core.objects())
    local e = H.err(replay.run, replay.read.open(path), {})
    assert.equal("poolsh.replay: streams.csv: over 64 streams, and a replay makes at most 64 (--max-streams N "
      .. "or opts.max_streams raises that; --streams=one puts every event on one stream)", e)
    assert.equal(before, #select(2, poolsh.core.objects()))   -- the streams it made are gone
    assert.is_true(poolsh.wallclock() - t0 < 20)
  end)

  it("max_streams raises the cap; streams = \"one\" makes none", function()
    local path = log("100.csv", 100)
    local rec = replay.read.open(path)
    assert.matches("over 64 streams, and a replay makes at most 64", H.err(replay.run, rec, {}))
    assert.equal(200, replay.run(rec, { max_streams = 100 }).events)
    assert.equal(200, replay.run(rec, { streams = "one" }).events)
    local out, err, code = H.poolsh_cmd("--backend=sim replay " .. H.quote(path) .. " --max-streams 100 --json")
    assert.equal(0, code, err)
    assert.matches('"events":200', out)
    assert.matches("max_streams must be a whole number >= 0, got 1.5", H.err(replay.run, rec, { max_streams = 1.5 }))
  end)

  it("queries go to the streams used since the last query, not to every stream", function()
    local path = log("2000.csv", 2000)
    -- the Stream methods: __index's table, or the table among its upvalues
    local index, methods = getmetatable(poolsh.default_stream()).__index, nil
    if type(index) == "table" then methods = index end
    for i = 1, 8 do
      local _, v = debug.getupvalue(index, i)
      if methods == nil and type(v) == "table" and type(rawget(v, "query")) == "function" then methods = v end
    end
    assert.is_table(methods)
    local query, calls = methods.query, 0
    methods.query = function(s) calls = calls + 1; return query(s) end
    local every = replay.query_every
    replay.query_every = 16
    local ok, err = pcall(replay.run, replay.read.open(path), { max_streams = 2000 })
    methods.query, replay.query_every = query, every
    assert(ok, err)
    -- 250 queries of the 16 events' streams (and the default one), not of 2000 streams each
    assert.is_true(calls > 250 and calls < 250 * 20, ("%d queries"):format(calls))
  end)
end)

describe("data files are parsed, never run", function()
  local ATTACKS = {
    rep = '("x"):rep(2^30)',
    find = '("a"):rep(40):find(("a*"):rep(40) .. "b")',
    gsub = '("x"):rep(1e6):gsub(".", "%0%0%0%0")',
    format = '("%99999999d"):format(1)',
    concat = '"x" .. "x"',
  }

  for what, attack in pairs(ATTACKS) do
    it(what .. " in a profile, a golden file and --pool is refused at once with a clear error", function()
      local t0 = os.clock()
      local f = write(what .. ".lua", "-- hostile\nreturn { gpu = " .. attack .. " }\n")
      local e = H.err(profile.read, f)
      assert.matches("^poolsh%.profile: " .. f:gsub("%p", "%%%0") .. ":2: '}' or a separator expected near ", e)
      local t, err = format.decode("return { scenario = " .. attack .. " }", "golden.lua")
      assert.is_nil(t)
      assert.matches("^golden%.lua:1: '}' or a separator expected near ", err)
      e = H.err(replay.settings, "x = " .. attack)
      assert.matches("^poolsh%.replay: %-%-pool: bad settings 'x = .*': '}' or a separator expected near ", e)
      assert.is_true(os.clock() - t0 < 1)
    end)
  end

  it("a loop, a function, a global are refused; a file over the size limit is not read", function()
    for text, want in pairs {
      ["while true do end"] = "t.lua:1: a data file starts with 'return' and its value",
      ["return (function() while true do end end)()"] = "t.lua:1: 'function' is not a value a data file may hold",
      ["return { s = string.rep('x', 2^30) }"] = "t.lua:1: 'string' is not a value a data file may hold",
      ["return { collectgarbage }"] = "t.lua:1: 'collectgarbage' is not a value a data file may hold",
      ["return " .. ("{"):rep(101) .. ("}"):rep(101)] = "t.lua:1: nested more than 100 deep",
      ["return " .. ("- "):rep(50) .. ("("):rep(60) .. "1" .. (")"):rep(60)] = "t.lua:1: nested more than 100 deep",
    } do
      local ok, err = require("poolsh.datafile").decode(text, "t.lua")
      assert.is_false(ok)
      assert.equal(want, err:sub(1, #want))
    end
    local big = write("big.lua", "return { notes = { x = '", ("x"):rep(4 * MiB), "' } }")
    assert.equal("poolsh.profile: " .. big .. ": a data file of 4194333 bytes (at most 4194304)",
      H.err(profile.read, big))
    local t, err = format.read(big)
    assert.is_nil(t)
    assert.equal(big .. ": a data file of 4194333 bytes (at most 4194304)", err)
  end)
end)
