--- Formats with one source. src/trace.c writes the RMM CSV rows of a
-- streamed trace in C for speed: they must read, field by field, as
-- lua/poolsh/export/rmm.lua writes the same events, named streams, pools
-- and buffers included. A call's text (a release's cause, the
-- out-of-memory advice) has one source, lua/poolsh/render/call.lua, and
-- shows objects by their names.
local H = require "helpers"
local poolsh = H.poolsh
local rmm = require "poolsh.export.rmm"
local MiB = H.MiB

local tmpdir = H.sh("mktemp -d"):gsub("%s+$", "")
teardown(function() os.execute("rm -rf " .. H.quote(tmpdir)) end)

local FIELDS = {}
for f in rmm.header:gmatch("[^,]+") do FIELDS[#FIELDS + 1] = f end

-- The rows of a CSV text (header first), each an array of its fields.
local function rows(text)
  local t = {}
  for line in text:gmatch("[^\n]+") do
    local r = {}
    for f in (line .. ","):gmatch("([^,]*),") do r[#r + 1] = f end
    t[#t + 1] = r
  end
  return t
end

-- Asserts the two CSV texts equal, naming the first row and field apart.
local function same_csv(c_text, lua_text)
  local c, l = rows(c_text), rows(lua_text)
  for i = 1, math.max(#c, #l) do
    assert(c[i] and l[i], ("row %d: C wrote %d rows, Lua %d"):format(i, #c, #l))
    for k = 1, math.max(#c[i], #l[i]) do
      assert(c[i][k] == l[i][k], ("row %d, %s: C wrote %s, Lua %s"):format(i, FIELDS[k] or k,
        tostring(c[i][k]), tostring(l[i][k])))
    end
  end
  assert.equal(lua_text, c_text)
end

-- Every kind of row, on named and unnamed objects: pool allocations and
-- frees on a named stream, the default stream and another stream; a
-- named pool and buffer; a failed allocation; malloc'd and pinned
-- memory (no stream); a free the collector made.
local WORK = [[
local copies = poolsh.stream { name = "copies" }
local plain = poolsh.stream()
local p = poolsh.pool { name = "big", release_threshold = 0 }
local small = poolsh.pool { max_size = "32 MiB" }
for i = 1, 12 do
  local s = ({ copies, plain, nil })[i % 3 + 1]
  local b = p:alloc(1000 * i + 7, s)
  if i == 5 then b.name = "weights" end
  b:free(s)
end
copies:sync()
assert(not pcall(small.alloc, small, "64 MiB", copies))
poolsh.malloc(64):free()
poolsh.pinned(4096):free()
do local _ = p:alloc(333, plain) end
collectgarbage(); collectgarbage()
poolsh.sync()
small:destroy(); p:destroy(); copies:destroy(); plain:destroy()
]]

local function put(name, text)
  local f = assert(io.open(tmpdir .. "/" .. name, "wb"))
  f:write(text)
  f:close()
  return tmpdir .. "/" .. name
end

local function checked(a, b)
  local text = H.slurp(a)
  assert.matches("\n1,[^\n]*,allocate,0x%x+,1007,", text)
  assert.matches("\n1,[^\n]*,allocate failure,0x0,67108864,", text)
  assert.matches("\n1,[^\n]*,free,0x%x+,64,0\n", text)
  same_csv(text, H.slurp(b))
end

describe("the streamed CSV", function()
  after_each(function() poolsh.trace.stop(); poolsh.trace.clear() end)

  it("reads as rmm.lua writes the same events", function()
    H.drops_buffers("a free by the collector is one of the rows")
    local path = tmpdir .. "/one.csv"
    poolsh.trace.clear()
    poolsh.trace.start { stream_to = path, batch = 1000000 }
    assert(load(WORK, "=workload", "t", setmetatable({ poolsh = poolsh }, { __index = _G })))()
    local events = poolsh.trace.events()
    poolsh.trace.save(path)
    checked(path, put("one_lua.csv", require("poolsh.export").to_string("csv", events)))
  end)

  it("reads as rmm.lua writes the same run, written in batches of three (the sim repeats a run)", function()
    local work = put("work.lua", WORK)
    local streamed, saved = tmpdir .. "/streamed.csv", tmpdir .. "/saved.csv"
    local out, err, code = H.poolsh_cmd(("--backend=sim -e %s %s"):format(
      H.quote(("poolsh.trace.start{stream_to = %q, batch = 3}"):format(streamed)), H.quote(work)))
    assert(code == 0, out .. err)
    out, err, code = H.poolsh_cmd(("--backend=sim -e %s -e %s"):format(H.quote("poolsh.trace.start()"),
      H.quote(("dofile(%q) poolsh.trace.save(%q)"):format(work, saved))))
    assert(code == 0, out .. err)
    checked(streamed, saved)
  end)
end)

describe("a call's text", function()
  local call = require "poolsh.render.call"

  it("names a named stream in a release's cause, as the out-of-memory advice does", function()
    local s = poolsh.stream { name = "copies" }
    local s2 = poolsh.stream()
    local q = poolsh.pool { release_threshold = 0 }
    poolsh.trace.clear(); poolsh.trace.start()
    q:alloc("4 MiB", s):free()
    s:sync()
    poolsh.trace.stop()
    local cause
    for _, e in ipairs(poolsh.trace.events()) do if e.op == "release" then cause = e.cause end end
    poolsh.trace.clear()
    assert.equal("copies:sync()", cause)
    assert.equal("copies:sync()", poolsh.trace.cause("stream_sync", s.id))

    local full = poolsh.pool { max_size = "20 MiB", internal_dependencies = false }
    local a = full:alloc("32 MiB", s)
    poolsh.spin(s, "10 ms")
    a:free()
    local ok, err = pcall(full.alloc, full, "32 MiB", s2)
    assert.is_false(ok)
    assert.matches("so would " .. call("stream_sync", s.id) .. " before the allocation, or "
                   .. call("wait", s2.id) .. " on an event e recorded on copies", err, 1, true)
    poolsh.sync(); full:destroy(); q:destroy(); s:destroy(); s2:destroy()
  end)

  it("names named events, pools and buffers, and the default stream by its call", function()
    local e = poolsh.event { name = "done" }
    local q = poolsh.pool { name = "big" }
    local b = q:alloc(16)
    b.name = "weights"
    assert.equal("done:sync()", call("event_sync", e.id))
    assert.equal("big:trim()", call("trim", q.id))
    assert.equal("weights:free()", call("free", b.id))
    assert.equal("poolsh.verify(weights)", call("verify", b.id))
    assert.equal("poolsh.default_stream():sync()", call("stream_sync", 0))
    assert.equal(("s%d:wait(e)"):format(999), call("wait", 999))
    assert.equal("poolsh.sync()", call("device_sync"))
    b:free(); poolsh.sync(); q:destroy(); e:destroy()
  end)
end)

-- Every op, on named and unnamed objects, with live buffers and pending
-- frees at a release, device work and events.
local EVERY_OP = [[
local copies = poolsh.stream { name = "copies" }
local plain = poolsh.stream()
local p = poolsh.pool { name = "big", release_threshold = 0 }
local small = poolsh.pool { max_size = "32 MiB" }
local live = {}
for i = 1, 12 do
  local s = ({ copies, plain, nil })[i % 3 + 1]
  local b = p:alloc(1000 * i + 7, s)
  if i == 5 then b.name = "weights" end
  if i % 4 == 0 then live[#live + 1] = b else b:free(s) end
end
local a, b = p:alloc("1 MiB", copies), p:alloc("1 MiB", copies)
poolsh.fill(a, 1, copies); poolsh.copy(b, a, { stream = copies }); poolsh.touch(b, copies)
poolsh.verify(a, 1, copies); poolsh.spin(copies, 0.001); b:write(0, "xy"); b:read(0, 2)
p:reset_high()
local e = poolsh.event { name = "done" }
e:record(copies); plain:wait(e); e:sync()
copies:sync()
assert(not pcall(small.alloc, small, "64 MiB", copies))
poolsh.malloc(64):free()
poolsh.pinned(4096):free()
do local _ = p:alloc(333, plain) end
collectgarbage(); collectgarbage()
for _, x in ipairs(live) do x:free() end
a:free(copies); b:free(copies)
poolsh.sync()
p:trim(0)
local vr, vm = poolsh.vmm.reserve("4 MiB"), poolsh.vmm.create("2 MiB", { location = "host" })
vr:map(0, vm, 0, "2 MiB"); vr:set_access(0, "2 MiB", { access = "read" }); vr:unmap(0, "2 MiB")
vm:release(); vr:free()
small:destroy(); p:destroy(); copies:destroy(); plain:destroy(); e:destroy()
]]

describe("poolsh.trace.save", function()
  local export = require "poolsh.export"
  after_each(function() poolsh.trace.stop(); poolsh.trace.clear() end)

  -- Records EVERY_OP (the newest max_events of it, 0: all) and checks that
  -- trace.save, which reads pools, streams, CSV rows and the pickle's
  -- regions from the records in C, writes each format byte for byte as
  -- the Lua writers do from the event tables.
  local function same_saves(max_events, tag)
    H.drops_buffers("a buffer the collector frees is one of the events")
    poolsh.trace.clear()
    poolsh.trace.start { max_events = max_events }
    assert(load(EVERY_OP, "=every_op", "t", setmetatable({ poolsh = poolsh }, { __index = _G })))()
    poolsh.trace.stop()
    local events = poolsh.trace.events()
    assert.same(poolsh.trace.meta(events), poolsh.trace.meta())
    for _, ext in ipairs(export.formats) do
      local fast, slow = tmpdir .. "/fast" .. tag .. "." .. ext, tmpdir .. "/slow" .. tag .. "." .. ext
      poolsh.trace.save(fast)
      export.save(slow, events, poolsh.trace.meta(events))
      local a, b = H.slurp(fast), H.slurp(slow)
      assert(#a > 0 and a == b, ("%s: trace.save wrote %d bytes, the Lua writers %d"):format(ext, #a, #b))
    end
    return events
  end

  it("writes every format as the Lua writers do from the events, every op included", function()
    local ops = {}
    for _, ev in ipairs(same_saves(0, "all")) do ops[ev.op] = true end
    for _, op in ipairs(poolsh.core.names.ops) do assert(ops[op], "the trace has no " .. op) end
  end)

  it("does so over 20,000 events, whose times C formats without printf", function()
    poolsh.trace.clear()
    poolsh.trace.start()
    local p, s = poolsh.pool { release_threshold = 0 }, poolsh.stream()
    local live = {}
    for i = 1, 9000 do
      local b = p:alloc(4096 * (i % 7 + 1), s)
      if i % 3 == 0 then live[#live + 1] = b else b:free(s) end
      if i % 500 == 0 then poolsh.spin(s, 0.0003 * (i % 11)); s:sync() end
    end
    for _, b in ipairs(live) do b:free(s) end
    s:sync()
    poolsh.trace.stop()
    local events = poolsh.trace.events()
    assert(#events > 20000, tostring(#events))
    for _, ext in ipairs(export.formats) do
      local fast, slow = tmpdir .. "/many." .. ext, tmpdir .. "/many_lua." .. ext
      poolsh.trace.save(fast)
      export.save(slow, events, poolsh.trace.meta(events))
      local a, b = H.slurp(fast), H.slurp(slow)
      assert(a == b, ("%s: trace.save wrote %d bytes, the Lua writers %d"):format(ext, #a, #b))
    end
    p:destroy(); s:destroy()
  end)

  it("does so for the newest events of a ring, their reserves let go", function()
    local events = same_saves(40, "ring")
    assert.equal(40, #events)
    assert(poolsh.trace.dropped() > 0)
  end)
end)

describe("poolsh.core.trace_html", function()
  it("raises naming the argument that is not a table or a function", function()
    local core = poolsh.core
    local ok, err = pcall(core.trace_html, 1, 10, nil, {}, print)
    assert.is_false(ok)
    assert.matches("bad argument #3 .*table expected", err)
    ok, err = pcall(core.trace_html, 1, 10, {}, {}, "cause")
    assert.is_false(ok)
    assert.matches("bad argument #5 .*function expected", err)
    assert.equal("", core.trace_html(5, 1, {}, {}, print))
  end)
end)

describe("poolsh.core.trace_json and trace_pickle", function()
  local core = poolsh.core
  after_each(function() poolsh.trace.stop(); poolsh.trace.clear() end)

  it("raise naming the argument that is not a table, function or number", function()
    local ok, err = pcall(core.trace_json, nil, {}, {}, print, print, 0.01)
    assert.is_false(ok)
    assert.matches("bad argument #1 .*table expected", err)
    ok, err = pcall(core.trace_json, {}, {}, {}, print, "out", 0.01)
    assert.is_false(ok)
    assert.matches("bad argument #5 .*function expected", err)
    ok, err = pcall(core.trace_json, {}, {}, {}, print, print, "10 us")
    assert.is_false(ok)
    assert.matches("bad argument #6 .*number expected", err)
    ok, err = pcall(core.trace_pickle, "out")
    assert.is_false(ok)
    assert.matches("bad argument #1 .*function expected", err)
  end)

  it("pass on what out raises, and leave the record as it was", function()
    poolsh.trace.clear(); poolsh.trace.start()
    local p, s = poolsh.pool {}, poolsh.stream()
    for _ = 1, 3000 do p:alloc(4096, s):free(s) end
    poolsh.trace.stop()
    local n = poolsh.trace.count()
    local function full() error("disk full", 0) end
    assert.equal("disk full", select(2, pcall(core.trace_json, {}, {}, {}, poolsh.trace.cause, full, 0.01)))
    assert.equal("disk full", select(2, pcall(core.trace_pickle, full)))
    assert.equal(n, poolsh.trace.count())
    local out, parts = {}, 0
    assert.is_true(core.trace_json({}, {}, {}, poolsh.trace.cause, function(x) parts = parts + 1; out[parts] = x end, 0.01))
    assert(parts >= 1 and #table.concat(out) > 1000)
    p:destroy(); s:destroy()
  end)
end)

describe("the C writers' callbacks", function()
  local core = poolsh.core
  after_each(function() poolsh.trace.stop(); poolsh.trace.clear() end)

  -- A cause callback (or a finalizer the collector runs meanwhile) that
  -- records while a writer holds an event grows the record array: the
  -- writers read a copy of each event (a use-after-free under ASan, a
  -- crash in the plain build, before).
  local function releases_then(writer)
    local p, s = poolsh.pool { release_threshold = 0 }, poolsh.stream()
    poolsh.trace.clear(); poolsh.trace.start()
    for _ = 1, 50 do p:alloc(1 << 20, s):free(s); s:sync() end
    local calls = 0
    local function cause()
      calls = calls + 1
      for _ = 1, 2000 do p:alloc(64, s):free(s) end
      return "x"
    end
    local ok, err = pcall(writer, cause)
    poolsh.trace.stop(); poolsh.trace.clear()
    s:sync(); p:destroy(); s:destroy()
    return ok, err, calls
  end

  it("read no event after a cause callback recorded more (json)", function()
    local ok, err, calls = releases_then(function(cause)
      return core.trace_json(require("poolsh.naming").all(), {}, {}, cause, function() end, 1)
    end)
    assert.is_true(ok, err)
    assert.is_true(calls >= 50)
  end)

  it("read no event after a cause callback recorded more, or cleared the trace (html)", function()
    local ok, err, calls = releases_then(function(cause)
      return core.trace_html(1, poolsh.trace.count(), require("poolsh.naming").all(), {}, cause)
    end)
    assert.is_true(ok, err)
    assert.is_true(calls >= 50)
    ok, err = releases_then(function()
      return core.trace_html(1, poolsh.trace.count(), require("poolsh.naming").all(), {},
        function() poolsh.trace.clear(); return "x" end)
    end)
    assert.is_true(ok, err)
  end)
end)

-- Names poolsh accepts hold quotes, backslashes, "</script>" and bytes that
-- are not UTF-8; a source's chunk name may hold controls too (a NUL ends it).
local HOSTILE = 'q"b\\s</script><!--<script>\xff\xc3(\xed\xa0\x80\xf4\x90\x80\x80\xc0\xafz'

describe("hostile names", function()
  local export = require "poolsh.export"
  local cjson = require "cjson"
  after_each(function() poolsh.trace.stop(); poolsh.trace.clear() end)

  -- Records a run whose pool, stream, buffer, event and source are named
  -- HOSTILE (names hold up to 64 bytes): the file each writer makes of
  -- them, by extension.
  local function hostile_saves()
    poolsh.trace.clear()
    poolsh.trace.start()
    local p = poolsh.pool { name = HOSTILE, release_threshold = 0 }
    local s = poolsh.stream { name = HOSTILE }
    local e = poolsh.event { name = HOSTILE }
    local work = "local p, s, e, name = ... local b = p:alloc(4096, s) b.name = name "
      .. "poolsh.fill(b, 1, s) e:record(s) b:free(s) s:sync() p:alloc(100, s):free(s)"
    assert(load(work, "=src\1\n\127" .. HOSTILE, "t",
      setmetatable({ poolsh = poolsh }, { __index = _G })))(p, s, e, HOSTILE)
    poolsh.trace.stop()
    local events = poolsh.trace.events()
    local files = {}
    for _, ext in ipairs(export.formats) do
      local fast, slow = tmpdir .. "/hostile." .. ext, tmpdir .. "/hostile_lua." .. ext
      poolsh.trace.save(fast)
      export.save(slow, events, poolsh.trace.meta(events))
      files[ext] = H.slurp(fast)
      assert(files[ext] == H.slurp(slow), ext .. ": trace.save and the Lua writers differ")
    end
    poolsh.sync(); p:destroy(); s:destroy(); e:destroy()
    return files
  end

  it("stay escaped in every format: valid UTF-8 JSON, one </script> per script, a pickle of str", function()
    local files = hostile_saves()
    local BAD = "\u{FFFD}"
    local shown = 'q"b\\s</script><!--<script>' .. BAD:rep(2) .. "(" .. BAD:rep(3) .. BAD:rep(4) .. BAD:rep(2) .. "z"
    -- JSON: valid UTF-8 that cjson reads, the names as shown, controls kept
    local text = files.json
    assert(utf8.len(text), "the JSON is not UTF-8")
    assert.is_nil(text:find("[%z\1-\31\127]"))
    local doc = cjson.decode(text)
    local labels, srcs, lanes = {}, {}, {}
    for _, ev in ipairs(doc.traceEvents) do
      labels[ev.name] = true
      if ev.args and ev.args.src then srcs[ev.args.src] = true end
      if ev.name == "thread_name" then lanes[ev.args.name] = true end
    end
    assert(labels["alloc " .. shown], "no alloc labelled by the buffer's name")
    assert(labels["record " .. shown], "no record labelled by the event's name")
    assert(labels[shown .. " memory"], "no counter of the pool")
    assert(lanes[shown], "no lane named by the stream")
    local src_shown = false    -- (Lua keeps the first 59 bytes of a chunk's name)
    for k in pairs(srcs) do
      src_shown = src_shown or k:find("src\1\n\127" .. shown:sub(1, 25), 1, true) == 1
    end
    assert(src_shown, "no event's src as shown")
    -- HTML: the names never close a script early
    local html = files.html
    local _, opened = html:gsub("<script", "")
    local _, closed = html:gsub("</script>", "")
    assert.equal(opened, closed)
    -- nor open a comment or a script inside one (which would keep the
    -- real </script> from closing it): no "<" in the events' data at all
    local rows = html:match('<script type="application/json" id="poolsh%-rows">(.-)</script>')
    assert(rows and #rows > 0 and not rows:find("<", 1, true), "a < in the rows' data")
    assert(utf8.len(html), "the HTML is not UTF-8")
    -- pickle: every string a str, the bad bytes U+FFFD
    assert(files.pickle:find("src\1\n\127" .. shown:sub(1, 25), 1, true), "the source is not in the pickle as shown")
    assert.is_nil(files.pickle:find(HOSTILE, 1, true))
  end)

  it("write the JSON args of every event with their keys in byte order", function()
    local text = hostile_saves().json
    local n = 0
    for args in text:gmatch('"args":(%b{})') do
      local keys = {}
      for k in args:gmatch('[{,]"([%w_]+)":') do keys[#keys + 1] = k end
      local sorted = { table.unpack(keys) }
      table.sort(sorted)
      assert.same(sorted, keys)
      n = n + 1
    end
    assert(n > 10, "too few events")
  end)

  it("stay escaped when an event array's names are huge (the Lua writers)", function()
    local huge = HOSTILE:rep(20000)                      -- about a MiB
    local evs = { { t = 1, op = "alloc", pool = 1, stream = 1, buffer = 1, addr = 4096, size = 64, src = huge .. ":3" } }
    local meta = { pools = { [1] = { id = 1, name = huge } }, streams = { [1] = { id = 1, name = huge } },
                   names = { buffer = { [1] = huge } } }
    for _, fmt in ipairs { "json", "html", "pickle" } do
      local text = export.to_string(fmt, evs, meta)
      assert(fmt == "pickle" or utf8.len(text), fmt .. " is not UTF-8")
      assert.is_nil(text:find(HOSTILE, 1, true))
    end
    local doc = cjson.decode(export.to_string("json", evs, meta))
    assert.equal(huge:gsub("[\128-\255]+", ""), doc.traceEvents[1].args.src:gsub("\u{FFFD}", ""):sub(1, -3))
  end)
end)
