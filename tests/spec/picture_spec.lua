-- poolsh.web.picture: the live memory-map picture's data (docs/web.md,
-- "The picture"), checked against poolsh.core.blocks, the ledger's truth.
local poolsh = require "poolsh"
local cjson = require "cjson"
local H = require "helpers"
local picture = require "poolsh.web.picture"
local F = { SEQ = 1, OP = 3, ST = 4, PO = 5, LABEL = 8, BUF = 10, ADDR = 11, SIZE = 12, PEND = 15, DET = 16 }

local function snap() return cjson.decode(picture.snapshot()) end

local function pool_of(s, p)
  for _, q in ipairs(s.pools) do if q.id == p.id then return q end end
end

-- The pool's blocks in the snapshot as "addr size state" lines, and the
-- same from poolsh.core.blocks.
local function lines_of(q)
  local out = {}
  for _, b in ipairs(q.blocks) do out[#out + 1] = ("%s %d %s"):format(b.addr, b.size, b.state) end
  return out
end
local function truth(p)
  local out = {}
  for _, b in ipairs((poolsh.core.blocks(p))) do
    out[#out + 1] = ("0x%x %d %s"):format(b.addr, b.size, b.pending and "pending" or "live")
  end
  return out
end

-- The rows' blocks of pool p as the renderer's model makes them (picture.js's
-- model, done again here on the rows): buffer -> "live" | "pending" | "done".
local function row_states(s, p)
  local st = {}
  for _, r in ipairs(s.rows) do
    local buf, op = r[F.BUF], r[F.OP]
    if r[F.PO] == p.id and buf ~= cjson.null then
      if op == "alloc" then
        st[buf] = "live"
        local from = (r[F.DET] ~= cjson.null and r[F.DET] or ""):match("reused_from=(%d+)")
        if from and st[tonumber(from)] then st[tonumber(from)] = "done" end
      elseif op == "free" then st[buf] = r[F.PEND] == 0 and "done" or "pending"
      elseif op == "free_completed" then st[buf] = "done" end
    end
  end
  return st
end

local function count(t, what)
  local n = 0
  for _, v in pairs(t) do if v == what then n = n + 1 end end
  return n
end

describe("poolsh.web.picture", function()
  before_each(function()
    poolsh.trace.stop(); poolsh.trace.clear()
    picture.forget()
  end)
  after_each(function()
    -- (the ring's bound outlives a stop: back to none, as the other specs expect)
    poolsh.trace.start { max_events = 0 }
    poolsh.trace.stop(); poolsh.trace.clear()
    picture.forget()
  end)

  it("starts a ring recording when first wanted, and draws alloc, free, reuse and trim as the ledger has them", function()
    assert.is_false(poolsh.trace.recording())
    local s, p = H.fresh()
    picture.version()
    assert.is_true(poolsh.trace.recording())
    local a = p:alloc(4 * H.MiB, s)
    local b = p:alloc(2 * H.MiB, s)
    local sn = snap()
    assert.is_true(sn.started_by_picture)
    assert.same(truth(p), lines_of(pool_of(sn, p)))
    assert.same({ "live", "live" }, { lines_of(pool_of(sn, p))[1]:match("(%a+)$"), lines_of(pool_of(sn, p))[2]:match("(%a+)$") })
    assert.equal(2, count(row_states(sn, p), "live"))
    assert.equal(p.reserved or pool_of(sn, p).reserved, pool_of(sn, p).reserved)

    a:free()                                   -- pending on s until s is synchronized or reused
    sn = snap()
    assert.same(truth(p), lines_of(pool_of(sn, p)))
    assert.equal(1, count(row_states(sn, p), "pending"))
    assert.equal("pending", lines_of(pool_of(sn, p))[1]:match("(%a+)$"))

    local c = p:alloc(4 * H.MiB, s)            -- takes a's memory: reuse in stream order
    sn = snap()
    assert.same(truth(p), lines_of(pool_of(sn, p)))
    local reuse
    for _, r in ipairs(sn.rows) do
      if r[F.OP] == "alloc" and r[F.DET] ~= cjson.null and r[F.DET]:match("reused_from=") then reuse = r end
    end
    assert.is_truthy(reuse, "a reuse row")
    assert.equal(c.addr, tonumber(reuse[F.ADDR]:sub(3), 16))
    -- the last statement's events are marked: the reuse is among them
    assert.is_true(sn.now ~= cjson.null)
    local now_ops = {}
    for i = sn.now + 1, #sn.rows do now_ops[#now_ops + 1] = sn.rows[i][F.OP] end
    assert.same({ "alloc" }, now_ops)

    b:free(); c:free(); s:sync(); p:trim(0)
    sn = snap()
    assert.same({}, truth(p))
    assert.same({}, lines_of(pool_of(sn, p)))
    assert.equal(0, pool_of(sn, p).reserved)
    local released = false
    for _, r in ipairs(sn.rows) do if r[F.OP] == "release" and r[F.PO] == p.id then released = true end end
    assert.is_true(released, "the trim's release is in the rows")
    p:destroy(); s:destroy()
  end)

  it("moves its version only when the picture changed", function()
    local s, p = H.fresh()
    local v0 = picture.version()
    assert.equal(v0, picture.version())
    local sn = snap()
    assert.equal(v0, sn.version)
    local b <close> = p:alloc(H.MiB, s)
    local v1 = picture.version()
    assert.is_true(v1 > v0)
    assert.equal(v1, picture.version())
    assert.equal(v1, snap().version)
    s.name = "copies"                           -- a name given changes the picture too
    local v2 = picture.version()
    assert.is_true(v2 > v1)
    assert.equal("copies", snap().streams[tostring(s.id)])
  end)

  it("is bounded by its window, and says how many events it left out", function()
    local s, p = H.fresh()
    picture.version()
    local keep = {}
    for i = 1, 300 do keep[i] = p:alloc(64 * 1024, s) end
    for i = 1, 300 do keep[i]:free() end
    local big = {}
    for i = 1, 5 do big[i] = p:alloc(H.MiB, s) end
    local sn = snap()
    assert.is_true(#sn.rows <= picture.window + picture.max_before, #sn.rows .. " rows")
    assert.is_true(sn.left_out > 0)
    assert.is_true(#picture.snapshot() < 400 * 1024, "snapshot of " .. #picture.snapshot() .. " bytes")
    -- the blocks still live are there even when their alloc left the window
    assert.same(truth(p), lines_of(pool_of(sn, p)))
    -- many pools, many blocks each: still bounded
    local pools, bufs = {}, {}
    for i = 1, picture.max_pools + 4 do
      pools[i] = poolsh.pool {}
      for j = 1, 40 do bufs[#bufs + 1] = pools[i]:alloc(4096, s) end
    end
    local many = snap()
    assert.equal(picture.max_pools, #many.pools)
    assert.is_true(many.pools_left_out >= 4)
    assert.is_true(#picture.snapshot() < 600 * 1024, "snapshot of " .. #picture.snapshot() .. " bytes")
    for _, b in ipairs(bufs) do b:free() end
    for _, q in ipairs(pools) do q:destroy() end
    local st = row_states(sn, p)
    assert.equal(5, count(st, "live"))
    for i = 1, 5 do big[i]:free() end
    s:sync()
  end)

  it("keeps blocks allocated before the window in the rows, marked as such", function()
    local s, p = H.fresh()
    local old = p:alloc(8 * H.MiB, s)          -- before the picture was wanted: not recorded
    picture.version()
    local b <close> = p:alloc(H.MiB, s)
    local sn = snap()
    local found
    for _, r in ipairs(sn.rows) do
      if r[F.BUF] == old.id then found = r end
    end
    assert.is_truthy(found, "a row for the block allocated before")
    assert.matches("before=true", found[F.DET])
    assert.equal(old.addr, tonumber(found[F.ADDR]:sub(3), 16))
    assert.equal("live", row_states(sn, p)[old.id])
    old:free()
  end)

  it("says so when the user stops or clears the recording, instead of drawing on as if it recorded", function()
    local s, p = H.fresh()
    picture.version()
    local b = p:alloc(H.MiB, s)
    assert.equal(cjson.null, snap().status)
    poolsh.trace.stop()
    local v = picture.version()
    local sn = snap()
    assert.matches("recording the picture draws from is stopped", sn.status, 1, true)
    assert.is_false(sn.recording)
    b:free()                                   -- not recorded: the picture must not claim it
    assert.is_true(picture.version() > v)
    assert.same(truth(p), lines_of(pool_of(snap(), p)))
    poolsh.trace.start { max_events = 100 }
    poolsh.trace.clear()
    sn = snap()
    assert.matches("was cleared", sn.status, 1, true)
    s:sync()
  end)

  it("keeps the ring it started bounded after poolsh.reset() (which records on without a bound)", function()
    picture.version()
    poolsh.reset()
    assert.is_true(poolsh.trace.recording())
    picture.version()
    local s, p = H.fresh()
    for _ = 1, picture.max_events do p:alloc(4096, s):free() end
    picture.version()
    assert.is_true(poolsh.trace.count() <= picture.max_events, poolsh.trace.count() .. " events kept")
    s:sync()
  end)

  it("takes a recording started after the user stopped the picture's as the user's", function()
    picture.version()
    poolsh.trace.stop()
    picture.version()
    poolsh.trace.start()
    local s, p = H.fresh()
    for _ = 1, picture.max_events do p:alloc(4096, s):free() end
    local sn = snap()
    assert.is_true(poolsh.trace.count() > picture.max_events, poolsh.trace.count() .. " events kept")
    assert.is_false(sn.started_by_picture)
    assert.equal(cjson.null, sn.status)
    s:sync()
  end)

  it("leaves a recording the user started alone", function()
    poolsh.trace.start()
    local s, p = H.fresh()
    local b <close> = p:alloc(H.MiB, s)
    local sn = snap()
    assert.is_false(sn.started_by_picture)
    assert.equal(cjson.null, sn.status)
    assert.equal(1, count(row_states(sn, p), "live"))
  end)

  it("reads its page's files from the library's own directory", function()
    local files = picture.page_files()
    assert.matches("PoolshPicture", files["picture.js"], 1, true)
    assert.matches("state.json", files["view.html"], 1, true)
    assert.matches('src="picture.js"', files["view.html"], 1, true)
    assert.matches("poolsh-picture", files["picture.css"], 1, true)
    -- the HTML export inlines picture.js in a <script>: nothing in it may
    -- open or close a script or a comment there
    assert.is_nil(files["picture.js"]:find("<!--", 1, true))
    assert.is_nil(files["picture.js"]:lower():find("<script", 1, true))
    assert.is_nil(files["picture.js"]:lower():find("</script", 1, true))
    -- view.html asks for nothing but its two files and state.json
    for url in files["view.html"]:gmatch('[sh][rr][ce][f]?="([^"]+)"') do
      assert.is_truthy(({ ["picture.js"] = true, ["picture.css"] = true, ["data:,"] = true })[url], url)
    end
    assert.matches("a file name expected", H.err(picture.read, "../x.js"), 1, true)
  end)

  -- view.html, as `poolsh --view` serves it, in headless Chromium against
  -- a stand-in server (tests/web/view_server.py); skipped, saying why,
  -- without node, chromium or puppeteer-core (as tests/spec/web_spec.lua).
  describe("view.html", function()
    local web_src = os.getenv("POOLSH_WEB_SRC") or ((os.getenv("POOLSH_BUILD") or "build") .. "/web-src")
    local why
    if not H.sh("command -v node >/dev/null && command -v chromium >/dev/null && echo yes"):match("yes") then
      why = "node or chromium is not installed"
    elseif not io.open(web_src .. "/node_modules/puppeteer-core/package.json") then
      why = "puppeteer-core is not in " .. web_src .. " (scripts/web/fetch-sources.sh)"
    end
    if why and os.getenv("POOLSH_WEB") ~= "1" then
      pending(why .. ": view.html's test is skipped")
      return
    end

    it("draws state.json, polls with ?v=, redraws a new version and says when poolsh does not answer", function()
      assert(not why, why)
      local dir = H.sh("mktemp -d"):gsub("%s+$", "")
      for name, text in pairs(picture.page_files()) do
        local f = assert(io.open(dir .. "/" .. name, "wb")); f:write(text); f:close()
      end
      local s, p = H.fresh()
      local a = p:alloc(4 * H.MiB, s)
      local f = assert(io.open(dir .. "/state.json", "wb")); f:write(picture.snapshot()); f:close()
      a:free()
      f = assert(io.open(dir .. "/next.json", "wb")); f:write(picture.snapshot()); f:close()
      s:sync()
      local token = "0123456789abcdef0123456789abcdef"
      local pid = H.sh("python3 -u tests/web/view_server.py " .. H.quote(dir) .. " " .. token .. " > "
        .. H.quote(dir .. "/port") .. " 2>&1 & echo $!"):gsub("%s+$", "")
      local port
      for _ = 1, 100 do
        port = (H.slurp_or(dir .. "/port") or ""):match("^(%d+)\n")
        if port then break end
        H.sh("sleep 0.1")
      end
      assert(port, "the stand-in server did not start: " .. tostring(H.slurp_or(dir .. "/port")))
      local out = H.sh("NODE_PATH=" .. H.quote(web_src .. "/node_modules") .. " timeout 120 node tests/web/view_page.js "
        .. H.quote("http://127.0.0.1:" .. port .. "/" .. token .. "/") .. " " .. H.quote(dir) .. " "
        .. H.quote(dir .. "/next.json") .. " " .. pid .. " 2>" .. H.quote(dir .. "/node.err"))
      H.sh("kill " .. pid .. " 2>/dev/null")
      assert(out:match("^{"), "view_page.js failed: " .. tostring(H.slurp_or(dir .. "/node.err")))
      local r = cjson.decode(out)
      assert.same({}, r.errors)
      local pname = poolsh.core.object_name("pool", p.id)
      assert.same({ pname }, r.first.pools)
      assert.equal(1, r.first.live)
      assert.equal(0, r.first.pending)
      assert.equal("", r.first.wait)
      assert.equal(1, r.next.pending)
      assert.matches("waiting for poolsh", r.down.wait, 1, true)
      assert.same({ pname }, r.down.pools, "the last picture stays while poolsh does not answer")
      assert.equal("", r.back.wait)
      assert.matches("waiting for poolsh (no answer", r.gone.wait, 1, true)
      -- the page asked for its files and state.json?v=N, nothing else
      local base = "http://127.0.0.1:" .. port .. "/" .. token .. "/"
      local polls, saw_version = 0, false
      for _, u in ipairs(r.requests) do
        local rest = u:sub(#base + 1)
        assert.equal(base, u:sub(1, #base), u)
        assert.is_truthy(rest == "" or rest == "picture.js" or rest == "picture.css" or rest:match("^state%.json%?v=%-?%d+$"), u)
        if rest:match("^state%.json") then polls = polls + 1 end
        if rest:match("^state%.json%?v=%d+$") then saw_version = true end
      end
      assert.is_true(polls >= 5, polls .. " polls")
      assert.is_true(saw_version, "a poll named the version it had")
      -- unchanged pictures were answered 204 and not fetched again
      local log = H.slurp(dir .. "/requests.log")
      assert.matches("state.json%?v=%-1", log)
      H.sh("rm -rf " .. H.quote(dir))
      p:destroy(); s:destroy()
    end)
  end)
end)

-- Found by the review of issue 23: the user's own recording, many pools,
-- and the cost of publishing under poolsh --view.
describe("the picture beside the user's own work", function()
  local function fresh_trace()
    poolsh.trace.start { max_events = 0 }
    poolsh.trace.stop(); poolsh.trace.clear(); picture.forget()
  end
  before_each(fresh_trace)
  after_each(fresh_trace)

  it("leaves a recording the user starts while the picture's ring runs whole", function()
    picture.version()                                  -- the picture's ring starts
    assert.is_true(poolsh.trace.recording())
    poolsh.trace.start()                               -- the user's own, unbounded
    local s, p = H.fresh()
    for _ = 1, 3000 do p:alloc(4096, s):free() end     -- 6000 events, past the ring's 4096
    picture.version()                                  -- a statement ends: the picture looks
    for _ = 1, 10 do p:alloc(4096, s):free() end
    assert.equal(0, poolsh.trace.dropped(), "events the user's recording dropped")
    assert.is_true(poolsh.trace.count() >= 6020, poolsh.trace.count() .. " events kept")
    s:sync()
  end)

  it("keeps its own ring bounded across poolsh.reset()", function()
    picture.version()
    poolsh.reset()                                     -- records on, unbounded, the picture's still
    local s, p = H.fresh()
    for _ = 1, 3000 do p:alloc(4096, s):free() end
    picture.version()
    assert.is_true(poolsh.trace.count() <= picture.max_events, poolsh.trace.count() .. " events kept")
    s:sync()
  end)

  it("draws no live pool as gone: the older ones past max_pools are left out and said so", function()
    picture.version()
    local P, B, s = {}, {}, poolsh.stream()
    local n = picture.max_pools + 8
    for i = 1, n do P[i] = poolsh.pool(); B[i] = P[i]:alloc(1024 * i, s) end
    local d = snap()
    local listed = {}
    for _, q in ipairs(d.pools) do listed[q.id] = true end
    for _, r in ipairs(d.rows) do
      local id = r[F.PO] ~= cjson.null and math.tointeger(r[F.PO])
      assert.is_true(not id or listed[id], "a row of pool " .. tostring(id) .. ", which is not listed")
    end
    assert.equal(8, d.pools_left_out)
    assert.matches("8 older live pools are not drawn: the picture shows the newest " .. picture.max_pools,
      d.status, 1, true)
    for i = 1, n do B[i]:free() end
    s:sync()
    for i = 1, n do P[i]:destroy() end
  end)

  it("reads at most max_read blocks of a pool (core.blocks' max), counts them all, and says when it missed some", function()
    local s, p = H.fresh()
    local B = {}
    local read = picture.max_read
    picture.max_read = 100
    local n = 150
    for i = 1, n do B[i] = p:alloc(256, s) end
    local d = snap()
    local q = pool_of(d, p)
    assert.equal(n, q.count)
    assert.is_true(#q.blocks <= picture.max_listed)
    assert.matches("50 blocks past the lowest 100 of a pool are not read", d.status, 1, true)
    picture.max_read = read
    assert.equal(cjson.null, snap().status)
    local blocks, _, count = poolsh.core.blocks(p, false, 10)
    assert.equal(10, #blocks)
    assert.equal(n, count)
    assert.equal(B[1].addr, blocks[1].addr)
    for i = 1, n do B[i]:free() end
    s:sync()
  end)

  it("draws the largest blocks allocated before the window, wherever they lie", function()
    picture.version()
    local s, p = H.fresh()
    local keep = {}
    for i = 1, 2000 do keep[i] = p:alloc(256, s) end
    local big = p:alloc(64 << 20, s)
    for _ = 1, 700 do p:alloc(64, s):free() end
    local d = snap()
    local found = false
    for _, r in ipairs(d.rows) do if r[F.BUF] == big.id then found = true end end
    assert.is_true(found, "the 64 MiB block is not drawn")
    assert.equal(2001 - picture.max_before, d.before_left_out)
    for _, b in ipairs(keep) do b:free() end
    big:free()
    s:sync()
  end)
end)

describe("publishing under poolsh --view", function()
  it("costs a loop of 10^5 allocations less than 3x what it costs without --view", function()
    local code = "local p, s = poolsh.pool(), poolsh.stream(); local t0 = os.clock(); local B = {} "
      .. "for i = 1, 100000 do B[i] = p:alloc(256, s) end; io.stdout:write(os.clock() - t0)"
    local function run(view)
      local out = H.sh(H.quote(H.exe) .. " --backend=sim" .. (view and " --view" or "") .. " -e "
        .. H.quote(code) .. " </dev/null 2>/dev/null")
      return tonumber(out:match("^([%d.]+)"))
    end
    local off, on = run(false), run(true)
    assert.truthy(off and on, "both runs printed their time")
    assert.is_true(on < 3 * off + 0.5, ("%.2f s with --view, %.2f s without"):format(on, off))
  end)
end)
