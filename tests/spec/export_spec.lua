-- poolsh.export: each format written from a synthetic trace (docs/trace.md)
-- and read back by a real consumer: cjson, a CSV reader, Python's pickle,
-- headless chromium.
local export = require "poolsh.export"
local cjson = require "cjson"

local MiB = 1024 * 1024
local BASE = 0x7f0000000000

local function sh(cmd)
  local p = io.popen(cmd .. " 2>/dev/null")
  local out = p:read("a")
  local ok = p:close()
  return out, ok
end

local function have(prog)
  local _, ok = sh("command -v " .. prog)
  return ok
end

local slurp = require("helpers").slurp

local tmpdir = sh("mktemp -d"):gsub("%s+$", "")
local function tmp(name) return tmpdir .. "/" .. name end

-- Writes text to a file and returns its path.
local function put(name, text)
  local f = assert(io.open(tmp(name), "wb"))
  f:write(text)
  f:close()
  return tmp(name)
end

local meta = {
  backend = "sim",
  device = { index = 0, name = "sim device", total = 1024 * MiB },
  pools = { [1] = { id = 1, name = "p1", device = 0, location = "device", default = false } },
  streams = { [2] = { id = 2, name = "s2" } },
}

-- A small run: a pool reserves 32 MiB, two buffers, a kernel, a copy, a
-- free that completes later, a reuse, a failure, a sync, an unknown op.
local function events()
  local p = { stream = 2, pool = 1, kind = "pool" }
  local function e(t) for k, v in pairs(p) do if t[k] == nil and t.op ~= "reserve" then t[k] = v end end return t end
  return {
    { seq = 1, t = 0.0, op = "pool_create", pool = 1, src = "demo.lua:3" },
    { seq = 2, t = 0.0, op = "stream_create", stream = 2, src = "demo.lua:4" },
    { seq = 3, t = 0.01, op = "reserve", pool = 1, addr = BASE, size = 32 * MiB, reserved = 32 * MiB, src = "demo.lua:5" },
    e { seq = 4, t = 0.01, op = "alloc", buffer = 1, addr = BASE, size = 8 * MiB, reused = false,
      rule = "stream order", reserved = 32 * MiB, used = 8 * MiB, pending = 0, src = "demo.lua:5" },
    { seq = 5, t = 0.02, op = "fill", stream = 2, buffer = 1, addr = BASE, size = 8 * MiB, dur = 1.5, src = "demo.lua:6" },
    e { seq = 6, t = 0.03, op = "alloc", buffer = 2, addr = BASE + 8 * MiB, size = 8 * MiB, reused = false,
      rule = "stream order", reserved = 32 * MiB, used = 16 * MiB, pending = 0, src = "demo.lua:7" },
    { seq = 7, t = 0.04, op = "copy", stream = 2, dst = 2, src_buffer = 1, size = 8 * MiB, dur = 0.8, src = "demo.lua:8" },
    e { seq = 8, t = 0.05, op = "free", buffer = 1, addr = BASE, size = 8 * MiB,
      reserved = 32 * MiB, used = 8 * MiB, pending = 8 * MiB, src = "demo.lua:9" },
    { seq = 9, t = 0.06, op = "record", stream = 2, event = 3, src = "demo.lua:10" },
    { seq = 10, t = 0.07, op = "wait", stream = 0, event = 3, src = "demo.lua:11" },
    { seq = 11, t = 2.4, op = "free_completed", stream = 2, pool = 1, buffer = 1, addr = BASE, size = 8 * MiB },
    { seq = 12, t = 2.5, op = "alloc", stream = 0, pool = 1, kind = "pool", buffer = 3, addr = BASE, size = 4 * MiB,
      reused = true, reused_from = 1, rule = "event dependency", reserved = 32 * MiB, used = 12 * MiB,
      pending = 0, src = "demo.lua:13" },
    { seq = 13, t = 2.6, op = "spin", stream = 0, dur = 0.5, src = "demo.lua:14" },
    { seq = 14, t = 2.7, op = "touch", stream = 0, buffer = 3, addr = BASE, size = 4 * MiB, src = "demo.lua:15" },
    e { seq = 15, t = 3.0, op = "alloc_failed", size = 1024 * MiB, reserved = 32 * MiB, used = 12 * MiB,
      pending = 0, src = "demo.lua:16" },
    { seq = 16, t = 3.1, op = "free", stream = 0, pool = 1, kind = "pool", buffer = 3, addr = BASE, size = 4 * MiB,
      reserved = 32 * MiB, used = 8 * MiB, pending = 4 * MiB, src = "demo.lua:17" },
    { seq = 17, t = 3.2, op = "stream_sync", stream = 0, src = "demo.lua:18" },
    { seq = 18, t = 3.2, op = "free_completed", stream = 0, pool = 1, buffer = 3, addr = BASE, size = 4 * MiB },
    { seq = 19, t = 3.3, op = "release", pool = 1, size = 0, cause = "s0:sync()", reserved = 32 * MiB },
    { seq = 20, t = 3.4, op = "mystery", stream = 2, foo = "bar" },
    -- a cudaMalloc'd buffer: its own segment
    { seq = 21, t = 3.5, op = "alloc", stream = 2, kind = "malloc", buffer = 4, addr = 0x7f1000000000, size = 2 * MiB,
      src = "demo.lua:20" },
    { seq = 22, t = 3.6, op = "device_sync" },
  }
end

local function count_ops(evs, ops)
  local n = 0
  for _, ev in ipairs(evs) do if ops[ev.op] then n = n + 1 end end
  return n
end

-- Events that carry only what every event has, or less.
local sparse = {
  { op = "alloc" },
  { op = "free", buffer = 9 },
  { op = "fill", stream = 1 },
  { op = "release", pool = 2 },
  { op = "free_completed", pool = 2, size = 16 },
  { op = "alloc_failed" },
  { seq = 7, t = 1.0 },
  { op = "weird", t = 2.0, stream = 3, pool = 2 },
}

describe("poolsh.export", function()
  describe("save", function()
    it("picks the format by extension and returns the path", function()
      for _, ext in ipairs { "json", "csv", "pickle", "html" } do
        local path = tmp("run." .. ext)
        assert.equal(path, export.save(path, events(), meta))
        assert.equal(export.to_string(ext, events(), meta), slurp(path))
      end
    end)

    it("refuses an unknown extension, naming it and the four supported", function()
      local ok, err = pcall(export.save, tmp("run.txt"), events(), meta)
      assert.is_false(ok)
      err = tostring(err)
      for _, s in ipairs { "'.txt'", ".json", ".csv", ".pickle", ".html" } do
        assert.truthy(err:find(s, 1, true), err)
      end
      ok, err = pcall(export.save, tmp("noext"), events(), meta)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("(none)", 1, true), tostring(err))
    end)

    it("names the path when the file cannot be opened", function()
      local path = tmp("no/such/dir/run.json")
      local ok, err = pcall(export.save, path, events(), meta)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(path, 1, true), tostring(err))
    end)

    it("refuses an unknown format in to_string", function()
      local ok, err = pcall(export.to_string, "xml", {}, {})
      assert.is_false(ok)
      assert.truthy(tostring(err):find("'xml'", 1, true))
    end)

    it("writes every format for an empty trace and for sparse events", function()
      for _, ext in ipairs { "json", "csv", "pickle", "html" } do
        assert.is_string(export.to_string(ext, {}, nil))
        assert.is_string(export.to_string(ext, sparse, {}))
      end
    end)
  end)

  describe("Chrome trace JSON", function()
    local function decode(evs, m)
      return cjson.decode(export.to_string("json", evs, m))
    end

    it("has the trace-event shape", function()
      local doc = decode(events(), meta)
      assert.equal("ms", doc.displayTimeUnit)
      assert.equal("sim", doc.metadata.backend)
      assert.equal("p1", doc.metadata.pools[1].name)
      for _, e in ipairs(doc.traceEvents) do
        assert.is_string(e.ph)
        assert.is_number(e.ts)
        assert.is_number(e.pid)
        assert.is_number(e.tid)
        assert.is_string(e.name)
      end
    end)

    it("has monotone counters per pool with reserved, used, pending", function()
      local doc = decode(events(), meta)
      local last, n = {}, 0
      for _, e in ipairs(doc.traceEvents) do
        if e.ph == "C" then
          n = n + 1
          assert.equal("p1 memory", e.name)
          assert.is_true(e.ts >= (last[e.name] or -math.huge))
          last[e.name] = e.ts
          for _, k in ipairs { "reserved", "used", "pending" } do assert.is_number(e.args[k]) end
          assert.equal(32 * MiB, e.args.reserved)
        end
      end
      assert.is_true(n >= 8)
    end)

    it("draws device work as slices on named stream lanes", function()
      local doc = decode(events(), meta)
      local names, slices = {}, {}
      for _, e in ipairs(doc.traceEvents) do
        if e.ph == "M" and e.name == "thread_name" then names[e.tid] = e.args.name end
        if e.ph == "X" then slices[e.name] = e end
      end
      local fill = assert(slices["fill b1"])
      assert.equal("s2", names[fill.tid])
      assert.near(1500, fill.dur, 1e-6)
      assert.near(20, fill.ts, 1e-6)
      -- the copy waits for the fill: stream order
      assert.near(1520, slices["copy b1 -> b2"].ts, 1e-6)
      -- no dur (cuda): a small default
      assert.is_true(slices["touch b3"].dur > 0)
      assert.equal("s0 (legacy default)", names[slices["spin"].tid])
    end)

    it("marks allocs, frees, syncs, record and wait as thread instants", function()
      local doc = decode(events(), meta)
      local seen = {}
      for _, e in ipairs(doc.traceEvents) do
        if e.ph == "i" then
          assert.equal("t", e.s)
          seen[e.cat] = e
        end
      end
      for _, op in ipairs { "alloc", "free", "free_completed", "release", "stream_sync", "record",
                            "wait", "device_sync", "alloc_failed" } do
        assert.is_table(seen[op], op)
      end
      local a = seen.alloc.args
      assert.equal("demo.lua:20", a.src)
      local first
      for _, e in ipairs(doc.traceEvents) do
        if e.name == "alloc b1" then first = e end
      end
      assert.equal("0x7f0000000000", first.args.addr)
      assert.equal(8 * MiB, first.args.size)
      assert.equal("stream order", first.args.rule)
      assert.near(10, first.ts, 1e-6)
      -- an unknown op is carried through
      assert.equal("bar", seen.mystery.args.foo)
    end)

    it("draws device work from its recorded start for its duration", function()
      local evs = {
        { seq = 1, t = 1.0, op = "spin", stream = 1, start = 1.0, dur = 5.0 },
        -- called at 1.1, after a wait on an event: starts when the spin ends
        { seq = 2, t = 1.1, op = "fill", stream = 2, buffer = 1, start = 6.0, dur = 0.25 },
        -- a pageable copy: its call at 7, its own start and duration
        { seq = 3, t = 7.0, op = "copy", stream = 2, dst = 1, src_buffer = 2, start = 7.0, dur = 4.5 },
        -- cuda: a spin's requested time from the call, marked
        { seq = 4, t = 12.0, op = "spin", stream = 3, start = 12.0, dur = 1.0, dur_estimated = true },
      }
      local doc = decode(evs, meta)
      local slices = {}
      for _, e in ipairs(doc.traceEvents) do
        if e.ph == "X" then slices[e.name .. "@" .. math.tointeger(e.tid)] = e end
      end
      local fill = slices["fill b1@3"]
      assert.near(6000, fill.ts, 1e-6)
      assert.near(250, fill.dur, 1e-6)
      local cp = slices["copy b2 -> b1@3"]
      assert.near(7000, cp.ts, 1e-6)
      assert.near(4500, cp.dur, 1e-6)
      assert.is_true(slices["spin@4"].args.dur_estimated)
    end)

    it("is the same whether events come as an array or in batches", function()
      local evs = events()
      local function each(fn) for _, e in ipairs(evs) do fn(e) end end
      for _, ext in ipairs { "json", "csv", "pickle", "html" } do
        assert.equal(export.to_string(ext, evs, meta), export.to_string(ext, each, meta), ext)
      end
      -- the pickle written entry by entry is the pickle of the whole snapshot
      local whole = require("poolsh.export.pickle").dumps(require("poolsh.export.pytorch").build(each, meta))
      assert.equal(whole, export.to_string("pickle", evs, meta))
      local deep = { index = 2, name = "third" }
      local m2 = setmetatable({ device = deep }, { __index = meta })
      whole = require("poolsh.export.pickle").dumps(require("poolsh.export.pytorch").build(each, m2))
      assert.equal(whole, export.to_string("pickle", evs, m2))
    end)

    it("writes an empty trace as an empty array", function()
      local text = export.to_string("json", {}, nil)
      assert.truthy(text:find('"traceEvents":[', 1, true))
      local doc = cjson.decode(text)
      for _, e in ipairs(doc.traceEvents) do assert.equal("M", e.ph) end
    end)
  end)

  describe("RMM CSV", function()
    -- A CSV reader: header, rows of fields (no quoting: the format needs none).
    local function read_csv(text)
      local lines = {}
      for line in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
      local rows = {}
      for i = 2, #lines do
        local row = {}
        for field in (lines[i] .. ","):gmatch("([^,]*),") do row[#row + 1] = field end
        rows[#rows + 1] = row
      end
      return lines[1], rows
    end

    it("has RMM's header and one row per alloc, free and failure", function()
      local evs = events()
      local header, rows = read_csv(export.to_string("csv", evs, meta))
      assert.equal("Thread,Time,Action,Pointer,Size,Stream", header)
      assert.equal(count_ops(evs, { alloc = true, free = true, alloc_failed = true }), #rows)
      local actions = {}
      for _, r in ipairs(rows) do
        assert.equal(6, #r)
        assert.matches("^%d+$", r[1])
        assert.matches("^%d%d:%d%d:%d%d%.%d%d%d%d%d%d$", r[2])
        assert.matches("^0x%x+$", r[4])
        assert.matches("^%d+$", r[5])
        assert.matches("^%d+$", r[6])
        actions[#actions + 1] = r[3]
      end
      assert.same({ "allocate", "allocate", "free", "allocate", "allocate failure", "free", "allocate" }, actions)
      assert.equal(BASE, tonumber(rows[1][4]:sub(3), 16))
      assert.equal(BASE + 8 * MiB, tonumber(rows[2][4]:sub(3), 16))
      assert.equal("00:00:00.000010", rows[1][2])
      assert.equal("00:00:00.003000", rows[5][2])
    end)

    it("writes a failure's pointer as 0x0 and the stream id in decimal", function()
      local _, rows = read_csv(export.to_string("csv", events(), meta))
      assert.equal("0x0", rows[5][4])
      assert.equal(tostring(1024 * MiB), rows[5][5])
      assert.equal("2", rows[5][6])
      assert.equal("0", rows[4][6])
    end)

    it("writes only the header for an empty trace and skips unknown ops", function()
      assert.equal("Thread,Time,Action,Pointer,Size,Stream\n", export.to_string("csv", {}, nil))
      local _, rows = read_csv(export.to_string("csv", sparse, {}))
      assert.equal(3, #rows)
    end)
  end)

  describe("PyTorch snapshot pickle", function()
    local pickle = require "poolsh.export.pickle"

    if not have("python3") then
      pending("python3 is not installed: the pickle read-back is skipped")
      return
    end

    -- Loads a pickle with Python and returns what `code` prints as JSON.
    local function python(path, code)
      local script = put("check.py", "import json, pickle, sys\n"
        .. "data = pickle.load(open(sys.argv[1], 'rb'))\n" .. code)
      local out, ok = sh("python3 " .. script .. " " .. path)
      assert.is_true(ok, "python3 failed on " .. path)
      return cjson.decode(out)
    end

    it("writes values Python reads back", function()
      local path = put("values.pickle", pickle.dumps {
        list = { 1, -1, 255, 256, 65536, -0x80000000, 0x80000000, BASE, math.maxinteger, math.mininteger },
        text = "héllo \"x\"", flt = 1.5, yes = true, no = false, none = pickle.list { pickle.None },
        empty_list = pickle.list(), empty_dict = {}, nested = { { a = 1 } },
      })
      local got = python(path, [==[
print(json.dumps({"list": [str(v) for v in data["list"]], "text": data["text"],
  "flt": data["flt"], "yes": data["yes"], "no": data["no"], "none": data["none"],
  "types": {k: type(v).__name__ for k, v in data.items()}}))
]==])
      assert.same({ "1", "-1", "255", "256", "65536", "-2147483648", "2147483648",
        tostring(BASE), tostring(math.maxinteger), tostring(math.mininteger) }, got.list)
      assert.equal("héllo \"x\"", got.text)
      assert.equal(1.5, got.flt)
      assert.is_true(got.yes)
      assert.is_false(got.no)
      assert.equal(cjson.null, got.none[1])
      assert.same({ list = "list", text = "str", flt = "float", yes = "bool", no = "bool", none = "list",
        empty_list = "list", empty_dict = "dict", nested = "list" }, got.types)
    end)

    -- What the viewer relies on: types, actions, states, blocks tiling each
    -- segment, and the trace's replay ending in the segments' live blocks.
    local SUMMARY = [==[
def types(xs): return sorted({type(x).__name__ for x in xs})
segs, tr = data["segments"], data["device_traces"]
blocks = [b for s in segs for b in s["blocks"]]
entries = [e for d in tr for e in d]
tiled = True
for s in segs:
    at = s["address"]
    for b in s["blocks"]:
        tiled = tiled and b["address"] == at
        at += b["size"]
    tiled = tiled and at == s["address"] + s["total_size"]
live = {}
for e in tr[0] if tr else []:
    if e["action"] == "alloc": live[e["addr"]] = e["size"]
    if e["action"] == "free_completed": live.pop(e["addr"], None)
active = {b["address"]: b["size"] for b in blocks if b["state"] != "inactive"}
frames = [f for e in entries for f in e["frames"]] + [f for b in blocks for f in b["frames"]]
print(json.dumps({
  "top": sorted(data.keys()), "n_devices": len(tr),
  "seg_types": types(segs), "block_types": types(blocks), "entry_types": types(entries),
  "seg_keys": sorted(set(k for s in segs for k in s)),
  "entry_keys": sorted(set(k for e in entries if e["action"] != "oom" for k in e)),
  "actions": [e["action"] for e in entries],
  "states": sorted(b["state"] for b in blocks),
  "addr_types": types([e["addr"] for e in entries if "addr" in e] + [s["address"] for s in segs]),
  "frame_types": sorted({(type(f["filename"]).__name__, type(f["line"]).__name__, type(f["name"]).__name__) for f in frames}),
  "frame_lines": sorted({f["filename"] + ":" + str(f["line"]) for f in frames}),
  "tiled": tiled, "replay_matches": live == active,
  "sizes": [s["total_size"] for s in segs], "big": str(segs[0]["address"]) if segs else None,
}))
]==]

    it("has the structure torch.cuda._memory_viz reads", function()
      local path = tmp("snap.pickle")
      export.save(path, events(), meta)
      local s = python(path, SUMMARY)
      assert.same({ "device_traces", "segments" }, s.top)
      assert.equal(1, s.n_devices)
      assert.same({ "dict" }, s.seg_types)
      assert.same({ "dict" }, s.block_types)
      assert.same({ "dict" }, s.entry_types)
      assert.same({ "int" }, s.addr_types)
      for _, k in ipairs { "address", "allocated_size", "blocks", "device", "stream", "total_size",
                           "segment_type", "active_size", "requested_size" } do
        assert.truthy(table.concat(s.seg_keys, " "):find(k, 1, true), k)
      end
      assert.same({ "action", "addr", "frames", "size", "stream", "time_us" }, s.entry_keys)
      assert.same({ "segment_alloc", "alloc", "alloc", "free_requested", "free_completed", "alloc", "oom",
        "free_requested", "free_completed", "segment_alloc", "alloc" }, s.actions)
      assert.same({ "active_allocated", "active_allocated", "inactive", "inactive" }, s.states)
      assert.same({ { "str", "int", "str" } }, s.frame_types)
      assert.truthy(table.concat(s.frame_lines, " "):find("demo.lua:5", 1, true))
      assert.is_true(s.tiled)
      assert.is_true(s.replay_matches)
      assert.same({ 32 * MiB, 2 * MiB }, s.sizes)
      assert.equal(tostring(BASE), s.big)
    end)

    it("shows a pending free and frees regions on release", function()
      local evs = {
        { t = 0, op = "reserve", pool = 1, addr = BASE, size = 4 * MiB, reserved = 4 * MiB },
        { t = 1, op = "reserve", pool = 1, addr = BASE + 64 * MiB, size = 4 * MiB, reserved = 8 * MiB },
        { t = 2, op = "alloc", stream = 2, pool = 1, buffer = 1, addr = BASE, size = MiB, src = "a.lua:1" },
        { t = 3, op = "alloc", stream = 2, pool = 1, buffer = 2, addr = BASE + 64 * MiB, size = MiB },
        { t = 4, op = "free", stream = 2, pool = 1, buffer = 2, addr = BASE + 64 * MiB, size = MiB },
        { t = 5, op = "free_completed", stream = 2, pool = 1, buffer = 2, addr = BASE + 64 * MiB, size = MiB },
        { t = 6, op = "release", pool = 1, size = 4 * MiB, reserved = 4 * MiB, cause = "p1:trim()" },
        { t = 7, op = "free", stream = 2, pool = 1, buffer = 1, addr = BASE, size = MiB },
      }
      local path = put("pending.pickle", export.to_string("pickle", evs, meta))
      local s = python(path, SUMMARY)
      assert.same({ 4 * MiB }, s.sizes)
      assert.same({ "active_pending_free", "inactive" }, s.states)
      assert.equal("segment_free", s.actions[7])
      assert.is_true(s.tiled)
    end)

    it("derives one region per pool when there are no reserve events", function()
      local evs = {}
      for _, ev in ipairs(events()) do
        if ev.op ~= "reserve" then evs[#evs + 1] = ev end
      end
      local s = python(put("derived.pickle", export.to_string("pickle", evs, meta)), SUMMARY)
      -- the pool's peak reserved, more than the buffers' span (16 MiB)
      assert.same({ 32 * MiB, 2 * MiB }, s.sizes)
      assert.is_true(s.tiled)
      assert.is_true(s.replay_matches)
    end)

    it("opens a reserve recorded after its alloc at that alloc", function()
      local evs = {
        { t = 1, op = "alloc", stream = 1, pool = 1, buffer = 1, addr = BASE, size = MiB, reserved = 32 * MiB },
        { t = 1, op = "reserve", pool = 1, addr = BASE, size = 32 * MiB, reserved = 32 * MiB },
      }
      local s = python(put("late.pickle", export.to_string("pickle", evs, {})), SUMMARY)
      assert.same({ "segment_alloc", "alloc" }, s.actions)
      assert.same({ 32 * MiB }, s.sizes)
      -- without an address: the derived region spans the pool's peak reserved
      evs[2].addr = nil
      s = python(put("late2.pickle", export.to_string("pickle", evs, {})), SUMMARY)
      assert.same({ "segment_alloc", "alloc" }, s.actions)
      assert.same({ 32 * MiB }, s.sizes)
      assert.is_true(s.tiled)
    end)

    it("completes the frees a release proves done in address order, whatever the buffers' ids", function()
      local evs = { { t = 0, op = "reserve", pool = 1, addr = BASE, size = 4 * MiB, reserved = 4 * MiB } }
      for id = 1, 3 do   -- b1 highest, b3 lowest
        local addr = BASE + (3 - id) * MiB
        evs[#evs + 1] = { t = id, op = "alloc", stream = 1, pool = 1, buffer = id, addr = addr, size = MiB }
        evs[#evs + 1] = { t = id, op = "free", stream = 1, pool = 1, buffer = id, addr = addr, size = MiB }
      end
      evs[#evs + 1] = { t = 9, op = "release", pool = 1, size = 4 * MiB, reserved = 0 }
      local snap = require("poolsh.export.pytorch").build(function(fn)
        for _, ev in ipairs(evs) do fn(ev) end
      end, {})
      local done = {}
      for _, e in ipairs(snap.device_traces[1]) do
        if e.action == "free_completed" then done[#done + 1] = (e.addr - BASE) // MiB end
      end
      assert.same({ 0, 1, 2 }, done)
    end)

    it("completes a pending free when its memory is reused", function()
      local evs = {
        { t = 0, op = "alloc", stream = 1, pool = 1, buffer = 1, addr = BASE, size = MiB },
        { t = 1, op = "free", stream = 1, pool = 1, buffer = 1, addr = BASE, size = MiB },
        { t = 2, op = "alloc", stream = 1, pool = 1, buffer = 2, addr = BASE, size = MiB },
      }
      local s = python(put("reuse.pickle", export.to_string("pickle", evs, {})), SUMMARY)
      assert.same({ "segment_alloc", "alloc", "free_requested", "free_completed", "alloc" }, s.actions)
      assert.is_true(s.replay_matches)
    end)

    it("writes an empty snapshot for an empty trace and survives sparse events", function()
      local s = python(put("empty.pickle", export.to_string("pickle", {}, nil)), SUMMARY)
      assert.same({ "device_traces", "segments" }, s.top)
      assert.same({}, s.actions)
      s = python(put("sparse.pickle", export.to_string("pickle", sparse, {})), SUMMARY)
      assert.is_true(s.tiled)
    end)
  end)

  describe("HTML page", function()
    if not have("chromium") then
      pending("chromium is not installed: the HTML rendering check is skipped")
      return
    end

    local html = require "poolsh.export.html"

    local function chromium(args, url)
      local profile = sh("mktemp -d"):gsub("%s+$", "")
      return sh("timeout 120 chromium --headless --no-sandbox --disable-gpu"
        .. " --disable-background-networking --disable-component-update --disable-sync"
        .. " --no-first-run --force-color-profile=srgb --user-data-dir=" .. profile
        .. " --window-size=1200,1600 " .. args .. " file://" .. url)
    end

    -- Counts the pixels of each exact colour in a PNG (tests/spec/png_colours.py).
    local COUNT = require("helpers").slurp("tests/spec/png_colours.py")

    it("draws the pools' timeline and the stream lanes", function()
      local page = tmp("run.html")
      export.save(page, events(), meta)
      local shot = tmp("run.png")
      chromium("--screenshot=" .. shot, page)
      local script = put("count.py", COUNT)
      local out, ok = sh("python3 " .. script .. " " .. shot .. " '" .. cjson.encode(html.colours) .. "'")
      assert.is_true(ok, "could not decode the screenshot")
      local got = cjson.decode(out)
      assert.equal(1200, got.width)
      -- lines and bars, far more pixels than the legend's swatches (14x3)
      assert.is_true(got.counts.reserved > 1000, "reserved: " .. got.counts.reserved)
      assert.is_true(got.counts.used > 500, "used: " .. got.counts.used)
      assert.is_true(got.counts.pending > 500, "pending: " .. got.counts.pending)
      assert.is_true(got.counts.kernel > 500, "kernel: " .. got.counts.kernel)
      assert.is_true(got.counts.copy > 500, "copy: " .. got.counts.copy)
      assert.is_true(got.counts.alloc > 42, "alloc: " .. got.counts.alloc)
    end)

    it("lists every event with its source after the script ran", function()
      local page = tmp("dom.html")
      local evs = events()
      export.save(page, evs, meta)
      local dom = chromium("--dump-dom", page)
      local rows = select(2, dom:gsub('<tr class="ev">', ""))
      assert.equal(#evs, rows)
      assert.truthy(dom:find("<td>demo.lua:13</td>", 1, true))
      assert.truthy(dom:find("0x7f0000800000", 1, true))
      assert.truthy(dom:find(#evs .. " events", 1, true))
      assert.truthy(dom:find('class="pool-chart"', 1, true))
      assert.truthy(dom:find('id="lanes"', 1, true))
    end)

    -- A trace of n alloc/free pairs on two streams, with kernels.
    local function big(n)
      local evs, t = {}, 0
      for i = 1, n do
        t = t + 0.001
        local s = 1 + i % 2
        evs[#evs + 1] = { seq = 3 * i - 2, t = t, op = "alloc", stream = s, pool = 1, buffer = i,
          addr = BASE + (i % 64) * MiB, size = MiB, reserved = 64 * MiB, used = (i % 64) * MiB, pending = 0 }
        evs[#evs + 1] = { seq = 3 * i - 1, t = t, op = "fill", stream = s, buffer = i, start = t, dur = 0.0008 }
        evs[#evs + 1] = { seq = 3 * i, t = t, op = "free", stream = s, pool = 1, buffer = i,
          addr = BASE + (i % 64) * MiB, size = MiB, reserved = 64 * MiB, used = (i % 64) * MiB,
          pending = (i % 7) * MiB }
      end
      return evs
    end

    it("renders 150,000 events, pages the table and zooms", function()
      local page = tmp("big.html")
      export.save(page, big(50000), { backend = "sim", pools = { [1] = { name = "p1" } } })
      local shot = tmp("big.png")
      chromium("--screenshot=" .. shot, page)
      local script = put("count.py", COUNT)
      local out, ok = sh("python3 " .. script .. " " .. shot .. " '" .. cjson.encode(html.colours) .. "'")
      assert.is_true(ok, "could not decode the screenshot")
      local got = cjson.decode(out)
      assert.is_true(got.counts.reserved > 1000, "reserved: " .. got.counts.reserved)
      assert.is_true(got.counts.used > 1000, "used: " .. got.counts.used)
      assert.is_true(got.counts.kernel > 1000, "kernel: " .. got.counts.kernel)
      local dom = chromium("--dump-dom", page)
      assert.equal(html.page_rows, select(2, dom:gsub('<tr class="ev">', "")))
      assert.truthy(dom:find("events 1 to " .. html.page_rows .. " of 150000 events", 1, true))
      assert.truthy(dom:find('id="zoom-in"', 1, true))
      assert.truthy(dom:find(" ms</span>", 1, true))   -- the range shown
      -- a range named in the link is what the charts show, kept inside the trace
      dom = chromium("--dump-dom", page .. "#t=10,20")
      assert.truthy(dom:find("10.0000 ms to 20.0000 ms", 1, true))
      dom = chromium("--dump-dom", page .. "#t=45,60")
      assert.truthy(dom:find("35.0008 ms to 50.0008 ms", 1, true))
    end)

    -- scripts/render_html.lua checks a recorded trace's page at 10^6
    -- events (docs/performance.md); here at 30,000, the rows from C.
    it("renders a recorded trace saved by poolsh.trace.save (scripts/render_html.lua)", function()
      local out, err, code = require("helpers").poolsh_cmd("--backend=sim scripts/render_html.lua 30000 --timeout 120")
      assert(code == 0, out .. err)
      local n = out:match("^(%d+) events, %d+ MiB of HTML: saved in [%d.]+ s, rendered in [%d.]+ s, "
        .. html.page_rows .. " rows listed")
      assert(n and tonumber(n) >= 30000, out)
    end)

    it("is self-contained and renders an empty trace", function()
      local text = export.to_string("html", {}, nil)
      assert.falsy(text:find("<link", 1, true))
      assert.falsy(text:find('src="', 1, true))
      assert.falsy(text:find("https://", 1, true))
      local page = put("empty.html", text)
      local dom = chromium("--dump-dom", page)
      assert.truthy(dom:find("0 events", 1, true))
      assert.falsy(dom:find('<tr class="ev">', 1, true))
    end)
  end)
end)
