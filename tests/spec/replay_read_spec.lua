-- The readers of recorded workloads: the pickle subset, PyTorch snapshots
-- (the real H100 recordings in tests/data/torch) and RMM logging CSVs.
local H = require "helpers"
local pickle = require "poolsh.replay.pickle"
local writer = require "poolsh.export.pickle"
local torch = require "poolsh.replay.torch"
local rmm = require "poolsh.replay.rmm"

local TORCH, BAD, RMM = "tests/data/torch/", "tests/data/bad/", "tests/data/rmm/"

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
  return path
end

-- Every event of rec as a list of {op, addr, size, stream, t}.
local function events(rec)
  local list = {}
  for op, addr, size, stream, t in rec:events() do list[#list + 1] = { op, addr, size, stream, t } end
  return list
end

local function count_ops(rec)
  local c, total = {}, 0
  for op in rec:events() do c[op] = (c[op] or 0) + 1; total = total + 1 end
  return c, total
end

-- The message of open(path): one line starting with the file's name.
local function open_error(open, path)
  local e = H.err(open, path)
  assert.is_nil(e:find("\n"), e)
  assert.equal(path:match("[^/]*$") .. ": ", e:sub(1, #path:match("[^/]*$") + 2), e)
  return e
end

-- The message of reading every event of the RMM log at path.
local function rmm_error(path)
  local e = H.err(function() for _ in rmm.open(path):events() do end end)
  assert.is_nil(e:find("\n"), e)
  return e
end

describe("poolsh.replay.pickle", function()
  it("reads what Python pickles with protocols 2 to 5", function()
    local _, _, code = H.sh("python3 -c 'import pickle'")
    if code ~= 0 then return pending("python3 is not installed here") end
    local dir = os.tmpname()
    os.remove(dir)
    local out, err, rc = H.sh("mkdir -p " .. dir .. " && cd " .. dir .. " && python3 -c " .. [['
import pickle
v = {"ints": [0, 1, -1, 255, 256, 65536, -2**31, 2**31, 2**62, -2**63, 2**63 - 1],
     "f": [1.5, -2.25], "s": ["", "h\u00e9llo", "x" * 300], "t": [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)],
     "n": [None, True, False], 7: "int key", "big": list(range(2500)), "d": {str(i): i for i in range(1200)}}
shared = ["shared"]
v["memo"] = [shared, shared]
for p in (2, 3, 4, 5):
    w = dict(v)
    if p >= 3: w["b"] = [b"\x00\xff", b"y" * 300]
    if p >= 4: w["set"] = {1, 2}; w["fs"] = frozenset(["q"])
    if p >= 5: w["ba"] = bytearray(b"zz")
    open("v%d.pickle" % p, "wb").write(pickle.dumps(w, protocol=p))
']])
    assert.equal(0, rc, err .. out)
    for p = 2, 5 do
      local v = pickle.loads(H.slurp(dir .. "/v" .. p .. ".pickle"))
      assert.same({ 0, 1, -1, 255, 256, 65536, -2 ^ 31 // 1, 2 ^ 31 // 1, 1 << 62, math.mininteger,
        math.maxinteger, n = 11 }, v.ints)
      assert.equal("integer", math.type(v.ints[9]))
      assert.same({ 1.5, -2.25, n = 2 }, v.f)
      assert.same({ "", "héllo", ("x"):rep(300), n = 3 }, v.s)
      assert.same({ 0, 1, 2, 3, 4 }, { v.t[1].n, v.t[2].n, v.t[3].n, v.t[4].n, v.t[5].n })
      assert.same({ 1, 2, 3, n = 3 }, v.t[4])
      assert.same({ pickle.None, true, false, n = 3 }, v.n)
      assert.equal("int key", v[7])
      assert.equal(2500, v.big.n)
      assert.equal(2499, v.big[2500])
      assert.equal(1199, v.d["1199"])
      assert.equal(v.memo[1], v.memo[2])                     -- the memo keeps sharing
      if p >= 3 then assert.same({ "\0\xff", ("y"):rep(300), n = 2 }, v.b) end
      if p >= 4 then assert.same({ [1] = true, [2] = true }, v.set); assert.is_true(v.fs.q) end
      if p >= 5 then assert.equal("zz", v.ba) end
    end
    os.execute("rm -rf " .. dir)
  end)

  it("reads back what poolsh.export.pickle writes, with the writer's marks", function()
    local v = { name = "x", sizes = writer.list { 1, 2 ^ 40 // 1, -3 }, none = writer.None,
      empty = writer.list(), nested = { a = { b = { 1.25 } } }, flag = false }
    local back = pickle.loads(writer.dumps(v))
    assert.same({ 1, 1 << 40, -3, n = 3 }, back.sizes)
    assert.equal(pickle.None, back.none)
    assert.equal(0, back.empty.n)
    assert.equal(1.25, back.nested.a.b[1])
    assert.is_false(back.flag)
    assert.equal(getmetatable(writer.list()), getmetatable(back.sizes))
    assert.equal(getmetatable(writer.dict()), getmetatable(back))
    assert.equal(writer.dumps(v), writer.dumps(back))         -- and writes the same bytes again
  end)

  it("says which opcode, at which byte, when it cannot read a pickle", function()
    local function err(s) return H.err(pickle.loads, s, "x.pickle") end
    assert.equal("x.pickle: byte 2: unknown opcode 0xff", err("\x80\x04\xff."))
    assert.equal("x.pickle: byte 2: memo entry 7 was never stored", err("\x80\x04h\x07."))
    assert.matches("^x.pickle: byte 2: opcode GLOBAL %(0x63%) is not read", err("\x80\x02cos\nsystem\n."))
    assert.equal("x.pickle: byte 0: protocol 6 (2 to 5 are read)", err("\x80\x06N."))
    assert.equal("x.pickle: byte 4: truncated: no STOP", err("\x80\x04]N"))
    assert.equal("x.pickle: byte 2: truncated: BINUNICODE needs 16 bytes, 3 left", err("\x80\x04X\x10\0\0\0abc"))
    assert.equal("x.pickle: byte 2: truncated: FRAME needs 100 bytes, 2 left", err("\x80\x04\x95\x64\0\0\0\0\0\0\0N."))
    assert.equal("x.pickle: byte 2: integer beyond 64 bits", err("\x80\x04\x8a\x09\0\0\0\0\0\0\0\0\x01."))
    assert.equal(-1, pickle.loads("\x80\x04\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xff."))
    assert.equal("x.pickle: byte 3: APPENDS without a MARK", err("\x80\x04]e."))
    assert.equal("x.pickle: byte 8: SETITEMS needs a dict below its items", err("\x80\x04](K\1K\2u."))
    assert.equal("x.pickle: byte 4: STOP with 2 values and 0 marks on the stack (1 and 0 expected)",
      err("\x80\x04NN."))
    assert.equal("x.pickle: byte 2: POP on an empty stack", err("\x80\x040."))
    assert.equal("pickle: byte 0: unknown opcode 0x00", H.err(pickle.loads, "\0"))
  end)
end)

describe("poolsh.replay.torch", function()
  -- What python3's pickle sees in each recording (tests/data/torch/README.md).
  local recorded = {
    convnet = { events = 1380, alloc = 455, free = 455, free_completed = 455, segment_alloc = 15,
      last_t = 27356, peak_reserved = 805306368, segments_current = 18 },
    transformer = { events = 8874, alloc = 2936, free = 2936, free_completed = 2936,
      segment_alloc = 66, last_t = 177585, peak_reserved = 968884224, segments_current = 69 },
    transformer_2streams = { events = 8875, alloc = 2936, free = 2936, free_completed = 2935,
      segment_alloc = 68, last_t = 175898, peak_reserved = 987758592, segments_current = 71 },
  }

  for name, want in pairs(recorded) do
    it("reads " .. name .. ".pickle.gz: every event, in order, with its memory_stats", function()
      local rec = torch.open(TORCH .. name .. ".pickle.gz")
      assert.equal("torch", rec.format)
      assert.equal(name .. ".pickle.gz", rec.file)
      assert.equal(want.events, rec.count)
      local c, total = count_ops(rec)
      assert.equal(want.events, total)
      assert.same({ alloc = want.alloc, free = want.free, free_completed = want.free_completed,
        segment_alloc = want.segment_alloc }, c)
      local list = events(rec)
      assert.equal(0, list[1][5])
      assert.equal(want.last_t, list[#list][5])
      for i = 2, #list do assert.is_true(list[i][5] >= list[i - 1][5]) end
      assert.equal(want.peak_reserved, rec.expected.peak_reserved)
      assert.equal(want.segments_current, rec.expected.segments_current)
      assert.equal(3 + want.segment_alloc, rec.expected.segments_current)   -- 3 from before
      assert.equal("integer", math.type(rec.expected.segments_allocated))
    end)

    it("in " .. name .. ", frees only what was allocated before or is an initial block", function()
      local rec = torch.open(TORCH .. name .. ".pickle.gz")
      local live, requested = {}, {}
      for _, b in ipairs(rec.initial) do live[b.addr] = b.size end
      for op, addr, size in rec:events() do
        if op == "alloc" then
          assert.is_nil(live[addr])
          live[addr] = size
        elseif op == "free" then
          assert.equal(live[addr], size)
          live[addr], requested[addr] = nil, true
        elseif op == "free_completed" then
          assert.is_true(requested[addr])
          requested[addr] = nil
        end
      end
    end)
  end

  it("reconstructs convnet's three segments and three blocks from before the recording", function()
    local rec = torch.open(TORCH .. "convnet.pickle.gz")
    -- Two 32 MiB blocks fill two large segments; a 1 MiB block sits in a
    -- 2 MiB small segment, where the recording's first allocation lands.
    assert.same({
      { addr = 139606066462720, size = 33554432, stream = 0 },
      { addr = 139607981162496, size = 33554432, stream = 0 },
      { addr = 139608044539392, size = 1048576, stream = 0 },
    }, rec.initial)
    assert.same({
      { addr = 139606066462720, size = 33554432, stream = 0, kind = "large" },
      { addr = 139607981162496, size = 33554432, stream = 0, kind = "large" },
      { addr = 139608044077056, size = 2097152, stream = 0, kind = "small" },
    }, rec.initial_segments)
    for _, b in ipairs(rec.initial) do
      local inside = false
      for _, s in ipairs(rec.initial_segments) do
        inside = inside or (b.addr >= s.addr and b.addr + b.size <= s.addr + s.size)
      end
      assert.is_true(inside)
    end
    local op, addr = rec:events()()
    assert.same({ "alloc", 139608044077056 }, { op, addr })
    assert.same({ 0 }, rec.streams)
  end)

  it("keeps transformer_2streams' second stream: 25 events on it", function()
    local rec = torch.open(TORCH .. "transformer_2streams.pickle.gz")
    assert.same({ 0, 443033392 }, rec.streams)
    local on = 0
    for _, _, _, stream in rec:events() do if stream == 443033392 then on = on + 1 end end
    assert.equal(25, on)
  end)

  it("knows gzip by its magic bytes, not by the file's name", function()
    local gz = write(os.tmpname() .. ".pickle", H.slurp(TORCH .. "convnet.pickle.gz"))
    local raw = write(os.tmpname() .. ".pickle.gz", torch.read_bytes(TORCH .. "convnet.pickle.gz"))
    assert.equal(1380, torch.open(gz).count)
    assert.equal(1380, torch.open(raw).count)
    assert.is_nil(torch.open(raw).expected)                  -- no sibling .stats.json
    os.remove(gz); os.remove(raw)
  end)

  describe("on a synthesized snapshot", function()
    local L = writer.list
    local function ev(action, addr, size, t, stream)
      return { action = action, addr = addr, size = size, stream = stream or 7, time_us = t,
        frames = L() }
    end
    local function snapshot(traces, segments)
      return write(os.tmpname() .. ".pickle", writer.dumps { device_traces = L(traces),
        segments = L(segments or {}) })
    end

    it("reconstructs blocks and segments from the frees and the end state", function()
      local path = snapshot({ L {
        ev("snapshot", 0, 0, 90),
        ev("free_requested", 0x3000, 100, 100),                -- a block from before
        ev("free_completed", 0x3000, 100, 101),
        ev("segment_free", 0x100000, 1 << 20, 105, 9),          -- a segment from before
        ev("segment_alloc", 0x200000, 2 << 20, 110),
        ev("alloc", 0x200000, 512, 120),
        ev("oom", 123456, 1 << 40, 130),
        ev("free_requested", 0x200000, 512, 140),
      } }, {
        { device = 0, address = 0x1000, total_size = 2 << 20, stream = 7, segment_type = "small",
          blocks = L {
            { address = 0x1000, size = 0x1000, requested_size = 4000, state = "active_allocated" },
            { address = 0x2000, size = 0x1000, state = "inactive" },
            { address = 0x3000, size = 0x1000, requested_size = 100, state = "inactive" },
            { address = 0x4000, size = 0x1000, state = "active_pending_free" } } },
        { device = 0, address = 0x200000, total_size = 2 << 20, stream = 7, segment_type = "large",
          blocks = L { { address = 0x200000, size = 2 << 20, state = "inactive" } } },
      })
      local rec = torch.open(path)
      os.remove(path)
      assert.same({ { addr = 0x1000, size = 4000, stream = 7 }, { addr = 0x3000, size = 100, stream = 7 } },
        rec.initial)
      assert.same({ { addr = 0x1000, size = 2 << 20, stream = 7, kind = "small" },
        { addr = 0x100000, size = 1 << 20, stream = 9 } }, rec.initial_segments)
      assert.same({ 7, 9 }, rec.streams)            -- initial segments first, by address
      assert.equal(7, rec.count)                               -- "snapshot" is no memory event
      assert.same({
        { "free", 0x3000, 100, 7, 0 }, { "free_completed", 0x3000, 100, 7, 1 },
        { "segment_free", 0x100000, 1 << 20, 9, 5 }, { "segment_alloc", 0x200000, 2 << 20, 7, 10 },
        { "alloc", 0x200000, 512, 7, 20 }, { "alloc_failed", 0, 1 << 40, 7, 30 },
        { "free", 0x200000, 512, 7, 40 },
      }, events(rec))
    end)

    it("reads the device opts.device names when several have traces", function()
      local path = snapshot { L { ev("alloc", 0x1000, 8, 1) }, L { ev("alloc", 0x2000, 16, 1) } }
      assert.equal(path:match("[^/]*$") .. ": traces on devices 0, 1: say which with opts.device",
        H.err(torch.open, path))
      local rec = torch.open(path, { device = 1 })
      assert.equal(1, rec.device)
      assert.same({ { "alloc", 0x2000, 16, 7, 0 } }, events(rec))
      assert.matches(": no device 2 %(the snapshot has 2%)$", H.err(torch.open, path, { device = 2 }))
      os.remove(path)
    end)

    it("takes the only device with a trace", function()
      local path = snapshot { L(), L { ev("alloc", 0x2000, 16, 1) } }
      assert.equal(1, torch.open(path).device)
      os.remove(path)
    end)
  end)

  it("rejects bad files in one line naming the file and the record or byte", function()
    local cases = {
      ["truncated.pickle.gz"] = "truncated gzip data %(4000 bytes read%)",
      ["garbage.pickle.gz"] = "bad gzip data at byte 0: ",
      ["truncated.pickle"] = "byte 2: truncated: FRAME needs 65540 bytes, 19989 left",
      ["not_a_pickle.pickle"] = "not a pickle of protocol 2 or later",
      ["wrong_shape.pickle"] = "not a PyTorch memory snapshot",
      ["class.pickle"] = "byte 39: opcode STACK_GLOBAL %(0x93%) is not read",
      ["bad_memo.pickle"] = "byte 12: memo entry 7 was never stored",
      ["unknown_opcode.pickle"] = "byte 3: unknown opcode 0xff",
      ["unknown_action.pickle"] = "record 2: unknown action \"explode\"",
      ["double_free.pickle"] = "record 3: free of 0x1000, which is not live",
      ["negative_size.pickle"] = "record 2: negative size %-512",
      ["huge_size.pickle"] = "record 1: size 1152921504606846976 is too large",
      ["two_devices.pickle"] = "traces on devices 0, 1",
    }
    for file, want in pairs(cases) do
      assert.matches("^" .. file:gsub("%.", "%%.") .. ": " .. want, open_error(torch.open, BAD .. file))
    end
    assert.matches("^nowhere.pickle: cannot open: ", open_error(torch.open, "/nonexistent/nowhere.pickle"))
  end)
end)

-- An RMM log of 12000 rows, about 500 KiB, and its events: many rows are
-- cut by the reader's 64 KiB chunks; every tenth row takes the general
-- path (a decimal pointer), a failure with a (nil) pointer follows every
-- tenth, a new stream comes at row 5000; CRLF ends, blank lines, no
-- newline at the end.
local function big_log()
  local lines, want = { rmm.header }, {}
  local function add(line, event)
    lines[#lines + 1] = #lines % 13 == 0 and line .. "\r" or line
    if #lines % 997 == 0 then lines[#lines + 1] = "  " end
    want[#want + 1] = event
  end
  for i = 1, 12000 do
    local k, slot = (i - 1) // 40, (i - 1) % 40
    local addr, op = 0x7f0000000000 + slot * 0x100000, k % 2 == 0 and "alloc" or "free"
    local stream = i >= 5000 and "0x7" or "0"
    local ptr = i % 10 == 3 and tostring(addr) or ("0x%x"):format(addr)
    local size, us = 512 * (1 + i % 9), i * 37
    local fmt = "%d,00:%02d:%02d.%06d,%s,%s,%d,%s"
    add(fmt:format(i, us // 60000000, us // 1000000 % 60, us % 1000000,
      op == "alloc" and "allocate" or "free", ptr, size, stream), { op, addr, size, i >= 5000 and 7 or 0, us - 37 })
    if i % 10 == 7 then
      add(fmt:format(i, us // 60000000, us // 1000000 % 60, us % 1000000, "allocate failure", "(nil)", 4096, stream),
        { "alloc_failed", 0, 4096, i >= 5000 and 7 or 0, us - 37 })
    end
  end
  return write(os.tmpname(), table.concat(lines, "\n")), want
end

describe("poolsh.replay.rmm", function()
  it("reads allocations, frees and failures with their pointers, streams and times", function()
    local rec = rmm.open(RMM .. "small.csv")
    assert.equal("rmm", rec.format)
    assert.equal("small.csv", rec.file)
    assert.is_nil(rec.count)
    assert.same({}, rec.initial)
    local s2 = 0x55d0c8a1e2b0
    assert.same({
      { "alloc", 0x7f8a40000000, 1024, 0, 0 },
      { "alloc", 0x7f8a40000400, 2048, 0, 500 },
      { "alloc", 0x7f8a40200000, 1048576, s2, 1250 },        -- past midnight
      { "free", 0x7f8a40000000, 1024, 0, 2000 },
      { "alloc_failed", 0, 85899345920, s2, 3000 },
      { "alloc_failed", 0, 85899345920, s2, 4000 },
      { "free", 0x7f8a40200000, 1048576, s2, 5500 },
      { "alloc", 0x7f8a40000000, 512, 0, 6000 },
    }, events(rec))
    assert.same({ 0, s2 }, rec.streams)
  end)

  it("takes CRLF line ends, blank lines, decimal streams and seconds as times", function()
    assert.same({ { "alloc", 0x1000, 256, 2, 0 }, { "free", 0x1000, 256, 2, 500000 } },
      events(rmm.open(RMM .. "crlf.csv")))
    local path = write(os.tmpname(), rmm.header .. "\n1,1634567890.123456,allocate,4096,8,cuda0\n"
      .. "1,1634567890.5,free,0x1000,8,cuda0\n")
    assert.same({ { "alloc", 4096, 8, "cuda0", 0 }, { "free", 4096, 8, "cuda0", 376544 } },
      events(rmm.open(path)))
    os.remove(path)
  end)

  it("reads again from the start on each events() call, and after a break", function()
    local rec = rmm.open(RMM .. "small.csv")
    for op in rec:events() do if op == "free" then break end end
    assert.equal(8, #events(rec))
    assert.equal(8, #events(rec))
  end)

  it("rejects bad files in one line naming the file and the record", function()
    local cases = {
      ["unknown_action.csv"] = 'record 2: unknown action "deallocate"',
      ["unknown_free.csv"] = "record 2: free of 0x2000, which was never allocated or is already free",
      ["double_alloc.csv"] = "record 2: allocate at 0x1000, which is live %(allocated at record 1%)",
      ["negative_size.csv"] = "record 1: negative size %-256",
      ["huge_size.csv"] = "record 2: size 18446744073709551616 is too large",
      ["short_row.csv"] = "record 2: 5 fields, 6 expected",
      ["bad_pointer.csv"] = 'record 1: pointer "0xZZ" is not an address',
      ["bad_time.csv"] = 'record 1: time "yesterday" is neither',
    }
    for file, want in pairs(cases) do
      assert.matches("^" .. file:gsub("%.", "%%.") .. ": " .. want, rmm_error(RMM .. file))
    end
    assert.matches('^wrong_header%.csv: record 0: header "Thread,Time,Action,Pointer,Size" is not RMM',
      open_error(rmm.open, RMM .. "wrong_header.csv"))
    assert.matches("^no_header%.csv: record 0: header ", open_error(rmm.open, RMM .. "no_header.csv"))
    assert.matches("^nowhere.csv: cannot open: ", open_error(rmm.open, "/nonexistent/nowhere.csv"))
    local empty = write(os.tmpname(), "")
    assert.matches(": empty file", open_error(rmm.open, empty))
    os.remove(empty)
  end)

  it("reads rows across its chunks: CRLF, blank lines, decimal and (nil) pointers, no last newline", function()
    local path, want = big_log()
    local got = events(rmm.open(path))
    os.remove(path)
    assert.equal(#want, #got)
    for i = 1, #want do assert.same(want[i], got[i], "row " .. i) end
  end)

  it("reads the same events and errors whatever its chunk size", function()
    local big = big_log()
    local files = { big }
    for _, name in ipairs { "small", "crlf", "double_alloc", "short_row", "unknown_free", "bad_time",
                            "huge_size", "negative_size", "bad_pointer", "unknown_action" } do
      files[#files + 1] = RMM .. name .. ".csv"
    end
    -- the events as one string, or the error
    local function read(path)
      local ok, list = pcall(events, rmm.open(path))
      if not ok then return list end
      for i, e in ipairs(list) do list[i] = table.concat({ e[1], e[2], e[3], tostring(e[4]), e[5] }, " ") end
      return table.concat(list, "\n")
    end
    local default = rmm.chunk
    local ok, err = pcall(function()
      for _, path in ipairs(files) do
        rmm.chunk = default
        local want = read(path)
        for _, chunk in ipairs { 1, 2, 3, 7, 16, 41, 4096 } do
          rmm.chunk = chunk
          assert.equal(want, read(path), path .. " in chunks of " .. chunk)
        end
      end
    end)
    rmm.chunk = default
    os.remove(big)
    assert(ok, err)
  end)

  it("refuses a line over 1 MiB after reading little more than that", function()
    local path = write(os.tmpname(), rmm.header .. "\n1,00:00:00.1,allocate,0x10,16,0\n"
      .. ("9"):rep(3 * 1024 * 1024) .. "\n")
    collectgarbage()
    collectgarbage("stop")
    local k0 = collectgarbage("count")
    assert.equal(("%s: record 2: a line of more than 1048576 bytes (an RMM row is a few dozen)")
      :format(path:match("[^/]*$")), rmm_error(path))
    local grew = collectgarbage("count") - k0
    collectgarbage("restart")
    os.remove(path)
    assert.is_true(grew < 24 * 1024, ("%.0f KiB allocated"):format(grew))
  end)

  it("makes few Lua allocations per row (one find over a chunk, no line string)", function()
    local path, rows = os.tmpname(), 20000
    local f = assert(io.open(path, "wb"))
    f:write(rmm.header, "\n")
    for i = 1, rows do          -- allocations and frees in turn: few live addresses
      local addr, action = 0x7f0000000000 + (i // 2) * 0x1000, i % 2 == 0 and "allocate" or "free"
      if i == 1 then action = "allocate" end
      f:write(("1,00:00:%02d.%06d,%s,0x%x,%d,%d\n"):format(i // 1000000, i % 1000000, action, addr, 4096 + i, i % 3))
    end
    f:close()
    collectgarbage()
    collectgarbage("stop")
    local k0 = collectgarbage("count")
    local n = 0
    for _ in rmm.open(path):events() do n = n + 1 end
    local per_row = (collectgarbage("count") - k0) * 1024 / rows
    collectgarbage("restart")
    os.remove(path)
    assert.equal(rows, n)
    -- the row's text once (the chunk), its pointer, size and time digits, the live table
    assert.is_true(per_row < 200, ("%.0f bytes allocated per row"):format(per_row))   -- 278 before
  end)

  it("streams 200k lines in memory that follows the live blocks, not the lines", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    f:write(rmm.header, "\n")
    local LIVE, N = 64, 200000
    for i = 0, N - 1 do
      local slot, t = i % LIVE, ("00:00:%02d.%06d"):format(i // 1000000, i % 1000000)
      local addr = 0x7f0000000000 + slot * 0x100000
      if (i // LIVE) % 2 == 0 then
        f:write("1,", t, ",allocate,", ("0x%x"):format(addr), ",4096,0x", slot % 3, "\n")
      else
        f:write("1,", t, ",free,", ("0x%x"):format(addr), ",4096,0x", slot % 3, "\n")
      end
    end
    f:close()
    collectgarbage()
    local base, high, n = collectgarbage("count"), 0, 0
    local rec = rmm.open(path)
    for _ in rec:events() do
      n = n + 1
      if n % 20000 == 0 then   -- what is still reachable, not garbage not yet collected
        collectgarbage()
        high = math.max(high, collectgarbage("count") - base)
      end
    end
    assert.equal(N, n)
    assert.same({ 0, 1, 2 }, rec.streams)
    os.remove(path)
    assert.is_true(high < 1024, ("%.0f KiB above the start for a %d-line file"):format(high, N))
  end)
end)
