-- What poolsh shows: the REPL's live lines, show(), map(pool), the leak
-- report at exit, and --trace FILE.
local poolsh = require "poolsh"
local H = require "helpers"
local live = poolsh.live

local function joined(lines) return table.concat(lines, "\n") end

-- The views fit poolsh.live.width columns: 80 here, whatever $COLUMNS says.
before_each(function() live.width = 80 end)
after_each(function() live.width = nil end)

describe("the live view", function()
  before_each(function() live.color = false end)
  after_each(function() poolsh.watch(false) end)

  it("says which pools changed, with deltas, and why each new buffer got its memory", function()
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    poolsh.watch(true)
    local a = p:alloc("4 MiB", s)
    local lines = joined(live.lines())
    assert.matches(p.name .. "  reserved %d+%.%d+ MiB %(%+", lines)
    assert.matches("used 4.00 MiB %(%+4.00 MiB%)", lines)
    assert.matches("b" .. a.id .. " 4.00 MiB from " .. p.name .. " on " .. s.name .. ": fresh memory",
                   lines, 1, true)
    a:free()
    lines = joined(live.lines())
    assert.matches("used 0 B %(%-4.00 MiB%)", lines)
    assert.matches("pending 4.00 MiB %(%+4.00 MiB%)", lines)
    local b = p:alloc("4 MiB", s)
    lines = joined(live.lines())
    assert.matches(("b%d's memory (stream order)"):format(a.id), lines, 1, true)
    assert.same({}, live.lines())                  -- nothing changed since
    b:free(); s:sync(); p:destroy()
    assert.matches(p.name .. "  destroyed", joined(live.lines()), 1, true)
  end)

  it("shows the peak of a statement when memory went up and back down within it", function()
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = 0 }
    local q = poolsh.pool { release_threshold = 0 }
    poolsh.watch(true)
    local b = p:alloc("64 MiB", s); b:free(); s:sync()       -- lesson 3's one-liner
    local lines = joined(live.lines())
    assert.matches(p.name .. "  reserved 0 B %(peak 64%.00 MiB%)  used 0 B %(peak 64%.00 MiB%)", lines)
    -- up and down several times, in two pools: the highest of them
    for i = 1, 3 do
      local x = p:alloc(i * H.MiB, s)
      local y = q:alloc((4 - i) * 2 * H.MiB, s)
      x:free(); y:free(); s:sync()
    end
    lines = joined(live.lines())
    assert.matches(p.name .. "  reserved 0 B %(peak %d+%.%d+ MiB%)  used 0 B %(peak 3%.00 MiB%)", lines)
    assert.matches(q.name .. "  reserved 0 B %(peak %d+%.%d+ MiB%)  used 0 B %(peak 6%.00 MiB%)", lines)
    -- used went up and down with nothing else moving: the pool gets its line for that
    p.release_threshold = "max"
    b = p:alloc("8 MiB", s); b:free(); s:sync()
    live.lines()
    b = p:alloc("4 MiB", s); b:free(); s:sync()
    lines = joined(live.lines())
    assert.matches(p.name .. "  reserved %S+ MiB  used 0 B %(peak 4%.00 MiB%)", lines)
    -- no peak when the ends are the highest; the user's marks stay the user's
    p:reset_high()
    local keep = p:alloc("2 MiB", s)
    lines = joined(live.lines())
    assert.is_nil(lines:find("peak", 1, true))
    assert.equal(2 * H.MiB, p:stats().used_high)
    poolsh.peak(function() local z = p:alloc("1 MiB", s); z:free() end)   -- a user's scope nests
    keep:free(); s:sync()
    assert.matches("used 0 B %(%-2%.00 MiB%) %(peak 3%.00 MiB%)", joined(live.lines()))
  end)

  it("gives each Lua allocator its own line, its allocations and what it released", function()
    local s = poolsh.stream()
    local cache = require("poolsh.allocators.caching").new { name = "torch" }
    assert.is_nil(cache.watched)                          -- no one watches: nothing reported
    poolsh.watch(true)
    assert.is_function(cache.watched)
    local x = cache:alloc("4 MiB", s)
    local lines = joined(live.lines())
    assert.matches("torch  reserved 20.00 MiB (+20.00 MiB)  used 4.00 MiB (+4.00 MiB)", lines, 1, true)
    assert.matches("  torch.1 4.00 MiB from torch: fresh segment (cudaMalloc 20.00 MiB)", lines, 1, true)
    assert.is_nil(lines:find("not pool memory", 1, true))  -- the segment is torch's, said once
    cache:free(x)
    local y = cache:alloc("4 MiB", s)
    lines = joined(live.lines())
    assert.matches("  torch.2 4.00 MiB from torch: reused torch.1's memory (cached block)", lines, 1, true)
    assert.same({}, live.lines())
    cache:free(y); cache:empty_cache()
    lines = joined(live.lines())
    assert.matches("torch  reserved 0 B (-20.00 MiB)  used 0 B (-4.00 MiB)", lines, 1, true)
    assert.matches("    torch released 20.00 MiB (empty_cache)", lines, 1, true)
    -- many allocations: summarised, as a pool's
    local blocks = {}
    for i = 1, 20 do blocks[i] = cache:alloc("1 MiB", s) end
    lines = joined(live.lines())
    assert.matches("  20 allocations from torch:", lines, 1, true)
    assert.matches("fresh segment 1", lines, 1, true)
    for i = 1, 20 do cache:free(blocks[i]) end
    cache:empty_cache()
    -- cupy and the pool allocator, through the same interface
    local cp = require("poolsh.allocators.cupy").new()
    local c = cp:alloc("1 MiB", s)
    lines = joined(live.lines())
    assert.matches("cupy  reserved 1.00 MiB (+1.00 MiB)", lines, 1, true)
    assert.matches("from cupy: fresh segment (cudaMalloc 1.00 MiB)", lines, 1, true)
    assert.is_nil(lines:find("not pool memory", 1, true))
    cp:free(c); cp:free_all_blocks()
    assert.matches("cupy released 1.00 MiB (free_all_blocks)", joined(live.lines()), 1, true)
    local pa = require("poolsh.allocators.pool").new { release_threshold = "max", name = "mp" }
    local b = pa:alloc(H.MiB, s)
    lines = joined(live.lines())
    assert.matches("mp  reserved ", lines, 1, true)
    assert.matches(b.name .. " 1.00 MiB from mp: fresh memory", lines, 1, true)
    pa:free(b, s)
    local b2 = pa:alloc(H.MiB, s)
    assert.matches(b2.name .. " 1.00 MiB from mp: reused " .. b.name .. "'s memory (stream order)",
                   joined(live.lines()), 1, true)
    pa:free(b2, s); pa:close()
    assert.matches("mp  closed", joined(live.lines()), 1, true)
    poolsh.watch(false)
    assert.is_nil(cache.watched)
  end)

  it("refuses an allocator registered without a name or stats", function()
    local reg = require("poolsh.live.allocators").register
    assert.matches("name %(a non%-empty string%) expected, got nil", H.err(reg, {}, nil, function() end))
    assert.matches("stats %(a function returning reserved, used%) expected, got number", H.err(reg, {}, "x", 1))
    assert.matches("allocator %(a table%) expected, got string", H.err(reg, "x", "x", function() end))
  end)

  it("announces the buffers the collector freed, after the statement it freed them in", function()
    H.drops_buffers("it tests the live view's note on buffers the collector frees")
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    local keep = p:alloc("1 MiB", s)
    poolsh.watch(true)
    do
      local x, y = p:alloc("4 MiB", s), p:alloc("12 MiB", s)
      x, y = nil, nil
    end
    collectgarbage(); collectgarbage()
    local lines = joined(live.lines())
    assert.matches("collected: b%d+, b%d+ %(16%.00 MiB%) \u{2014} no variable held them", lines)
    assert.matches("used 1.00 MiB", lines, 1, true)
    assert.same({}, live.lines())                    -- said once
    do local z <close> = p:alloc("2 MiB", s) end     -- a scope's end is not the collector
    collectgarbage()
    assert.is_nil(joined(live.lines()):find("collected:", 1, true))
    do local z = p:alloc("2 MiB", s) end
    collectgarbage(); collectgarbage()
    assert.matches("collected: b%d+ %(2%.00 MiB%) \u{2014} no variable held it", joined(live.lines()))
    local before = select(3, poolsh.core.collected(math.maxinteger))
    local many = {}
    for i = 1, 70 do many[i] = p:alloc("1 MiB", s) end
    live.lines()
    many = nil
    collectgarbage(); collectgarbage()
    lines = joined(live.lines()):gsub("\n%s+", " ")   -- more than the ring holds: counted, bytes whole
    assert.matches("collected: b%d+, .- and 62 more %(70%.00 MiB%)", lines)
    assert.equal(before + 70 * H.MiB, select(3, poolsh.core.collected(math.maxinteger)))
    keep:free(); s:sync()
  end)

  it("names every buffer a reuse took memory from, with each rule when they differ", function()
    -- ids no other spec of the run named (names outlive their objects)
    local w = live.reused_words
    local function src(...)
      local t = {}
      for i, r in ipairs { ... } do t[i] = { buffer = 1000000 + i, rule = r } end
      return { sources = t }
    end
    assert.equal("reused b1000001's memory (stream order)", w(src("stream order")))
    assert.equal("reused b1000001's and b1000002's memory (stream order)", w(src("stream order", "stream order")))
    assert.equal("reused b1000001's memory (stream order) and b1000002's (host synchronisation)",
                 w(src("stream order", "host synchronisation")))
    assert.equal("reused b1000001's, b1000002's, b1000003's, b1000004's and 2 more buffers' memory (opportunistic)",
                 w(src("opportunistic", "opportunistic", "opportunistic", "opportunistic", "opportunistic",
                       "opportunistic")))
    local more = src("stream order", "stream order")
    more.sources[3] = { more = 7, bytes = 1 }
    assert.equal("reused b1000001's, b1000002's and 7 more buffers' memory (stream order)", w(more))
    -- an entry without sources (an old ring slot): its first buffer alone
    assert.equal("reused b1000009's memory (event dependency)", w { reused_from = 1000009, rule = "event dependency" })
  end)

  it("colours deltas only when asked", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    poolsh.watch(true)
    live.color = true
    local a = p:alloc(1, s)
    assert.matches("\27%[32m%+", joined(live.lines()))
    a:free(); s:sync()
    assert.matches("\27%[35m%-", joined(live.lines()))   -- magenta: readable on white
    live.color = false
    p:destroy()
  end)

  it("paints nothing when NO_COLOR is set", function()
    local text = require "poolsh.live.text"
    local getenv = os.getenv
    live.color = true
    assert.equal("\27[32mx\27[0m", text.paint("grow", "x"))
    os.getenv = function(k) if k == "NO_COLOR" then return "1" end return getenv(k) end
    local painted = text.paint("grow", "x")
    os.getenv = function(k) if k == "NO_COLOR" then return "" end return getenv(k) end
    local empty = text.paint("grow", "x")
    os.getenv = getenv
    live.color = false
    assert.equal("x", painted)
    assert.equal("\27[32mx\27[0m", empty)
  end)

  it("reads pools without the free-space estimate, which p:stats{estimates = false} leaves out", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local a = p:alloc("1 MiB", s)
    local st, full = p:stats { estimates = false }, p:stats()
    assert.is_nil(st.free)
    assert.is_nil(st.largest_free)
    assert.is_nil(st.free_estimated)
    for _, k in ipairs { "reserved", "reserved_high", "used", "used_high", "live", "pending",
                         "pending_count" } do
      assert.equal(full[k], st[k])
    end
    assert.equal(full.reserved - 1048576, full.free)
    assert.equal(full.free, p:stats { estimates = true }.free)
    assert.matches("p:stats: unknown option 'estimate'", H.err(p.stats, p, { estimate = false }), 1, true)
    assert.matches("option 'estimates' must be a boolean, got number",
                   H.err(p.stats, p, { estimates = 0 }), 1, true)
    a:free(); s:sync(); p:destroy()
  end)

  it("watch refuses a non-boolean and reports its state", function()
    assert.is_false(poolsh.watch())
    assert.is_true(poolsh.watch(true))
    assert.matches("boolean expected", H.err(poolsh.watch, "yes"))
  end)
end)

describe("every view at 80 and 60 columns", function()
  before_each(function() live.color = false end)
  after_each(function() poolsh.watch(false) end)

  for _, width in ipairs { 80, 60 } do
    it(("fits %d columns, folds at words, and cuts no name"):format(width), function()
      live.width = width
      local long = "copies_stream_with_long_name"
      local s = poolsh.stream { name = long }
      local p = poolsh.pool { release_threshold = 0, name = "a_rather_long_pool_name" }
      poolsh.watch(true)
      local all = {}
      local function take(lines) for _, l in ipairs(lines) do all[#all + 1] = l end return lines end
      local keep = { p:alloc("8 MiB", s), p:alloc("8 MiB", s) }
      take(live.lines())
      local b = p:alloc("40 MiB", s); b:free(); s:sync()
      take(live.lines())
      for _ = 1, 20 do local x = p:alloc(1000, s); x:free() end
      take(live.lines())
      local cache = require("poolsh.allocators.caching").new { name = "a_long_allocator_name_for_width" }
      local blk = cache:alloc("4 MiB", s)
      take(live.lines())
      cache:free(blk); cache:empty_cache()
      take(live.lines())
      take(live.show_lines())
      local map = take(live.map_lines(p))
      take(live.summary_lines(poolsh.summary()))
      take(live.sites_lines(poolsh.sites()))
      -- a call stack three frames deep, of long paths
      local stack = "/home/someone/src/poolsh/lua/poolsh/allocators/util.lua:9 < "
        .. "/home/someone/src/poolsh/lua/poolsh/allocators/caching.lua:322 < /home/someone/train.lua:633"
      local sites = take(live.sites_lines({ { site = stack, count = 1, peak_bytes = 1, total_bytes = 1,
                                             live_bytes = 0 } }))
      take(live.leak_lines())
      for _, l in ipairs(all) do
        assert.is_true(utf8.len(l) <= width, l)
        assert.is_nil(l:match("^%s*<%s*$"), "a call stack's '<' alone on a line")
      end
      -- the stream's name whole in the map, folded under its line when needed
      local m = table.concat(map, "\n")
      assert.matches(long, m, 1, true)
      for _, l in ipairs(map) do
        if not l:match("^  %[") then assert.is_nil(l:find("...", 1, true), l) end   -- the bar's dots are free cells
      end
      -- a site too long keeps its end: the file and line
      local st = table.concat(sites, "\n")
      assert.matches(width >= 80 and "caching.lua:322" or "lua:322", st, 1, true)
      assert.matches("< ...", st, 1, true)
      for _, x in ipairs(keep) do x:free() end
      s:sync()
    end)
  end
end)

describe("poolsh.show and poolsh.map", function()
  it("show lists pools, streams with queued work, live buffers and pending frees", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local a, b = p:alloc("4 MiB", s), p:alloc("1 MiB", s)
    poolsh.spin(s, "50 ms")
    b:free()
    local out = joined(live.show_lines())
    assert.matches(p.name .. "%s+device%s+32%.00 MiB%s+4%.00 MiB%s+1%.00 MiB %(1%)", out)
    assert.matches(s.name .. "%s+busy%s+%d+", out)
    assert.matches("b" .. a.id .. "%s+4%.00 MiB%s+pool%s+" .. p.name .. " on " .. s.name, out)
    assert.matches("pending frees\n.-b" .. b.id .. "%s+1%.00 MiB%s+" .. p.name .. "%s+" .. s.name, out)
    a:free(); s:sync(); p:destroy()
  end)

  it("show and the leak report list at most show_max buffers and pending frees", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local was, group = live.show_max, live.leak_group
    live.show_max, live.leak_group = 3, math.huge     -- one line per buffer, not per site
    local bufs = {}
    for i = 1, 9 do bufs[i] = p:alloc("1 MiB", s) end
    poolsh.spin(s, "50 ms")
    for i = 1, 4 do bufs[i]:free() end
    local out = joined(live.show_lines())
    local leaks = live.leak_lines()
    live.show_max, live.leak_group = was, group
    assert.matches("... and 2 more buffers (poolsh.leaks() lists them)", out, 1, true)
    assert.matches("... and 1 more pending frees", out, 1, true)
    assert.matches("b" .. bufs[5].id .. "%s+1%.00 MiB", out)            -- oldest first
    assert.is_nil(out:find("b" .. bufs[9].id .. " ", 1, true))
    assert.matches("^poolsh: 5 buffers still live", leaks[1])
    assert.equal("  ... and 2 more (poolsh.leaks() lists them)", leaks[#leaks])
    assert.equal(3, select(2, table.concat(leaks, "\n"):gsub("\n  b%d+ ", "")))   -- show_max of them
    assert.equal(5, #poolsh.leaks())
    for i = 5, 9 do bufs[i]:free() end
    s:sync(); p:destroy()
  end)

  it("leaks and pending frees stay whole while finalizers free buffers during the listing", function()
    H.drops_buffers("it tests listings while finalizers run")
    -- Building the rows allocates, so the collector runs finalizers of
    -- unreachable buffers in the middle: pool buffers become pending,
    -- malloc buffers leave the ledger. Every listing must still be one
    -- consistent snapshot: as many rows as it counts, each buffer once.
    local core = require "poolsh.core"
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local keep, before = {}, #poolsh.leaks()
    local function whole(rows, n, ascending)
      assert.equal(n, #rows)
      local seen, last = {}, 0
      for _, r in ipairs(rows) do
        assert.is_nil(seen[r.buffer])
        seen[r.buffer] = true
        if ascending then assert.is_true(r.buffer > last) end
        last = r.buffer
      end
    end
    for _ = 1, 20 do
      for i = 1, 200 do
        local b = i % 2 == 0 and poolsh.malloc(256) or p:alloc(256, s)
        if i % 5 == 0 then keep[#keep + 1] = b elseif i % 3 == 0 then b:free() end
      end
      local rows, n = core.live()
      whole(rows, n, true)
      whole(core.pending())
      for _, r in ipairs(poolsh.leaks()) do assert.is_string(r.kind) end
    end
    for _, b in ipairs(keep) do b:free() end
    keep = nil
    collectgarbage()
    s:sync()
    assert.equal(before, #poolsh.leaks())
    assert.equal(0, select(2, core.pending()))
    p:destroy()
  end)

  it("map draws live blocks, pending frees and free gaps with addresses", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local a, b, c = p:alloc("4 MiB", s), p:alloc("4 MiB", s), p:alloc("4 MiB", s)
    poolsh.spin(s, "50 ms")
    b:free()
    local lines = live.map_lines(p, 32)
    local out = joined(lines)
    assert.matches(("reserved 32.00 MiB from 0x%x"):format(a.addr), out, 1, true)
    assert.matches("%[####=+####.-%]", lines[2])
    assert.matches(("0x%x  %%+0 B%%s+4.00 MiB  live%%s+b%d"):format(a.addr, a.id), out)
    assert.matches(("0x%x  %%+4.00 MiB%%s+4.00 MiB  pending b%d"):format(b.addr, b.id), out)
    assert.matches(("0x%x  %%+12.00 MiB%%s+20.00 MiB  free"):format(c.addr + 4 * H.MiB), out)
    a:free(); c:free(); s:sync(); p:destroy()
    assert.matches("destroyed poolsh.Pool", H.err(live.map_lines, p))
    local q = poolsh.pool {}
    assert.matches("nothing reserved", joined(live.map_lines(q)))
    q:destroy()
  end)

  it("map marks where each chunk ends", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local gran = poolsh.live.granularity()
    local a = p:alloc(gran + gran // 4, s)          -- spills into a second chunk
    local lines = live.map_lines(p, 64)
    local bar = lines[2]
    assert.matches("^  %[#+|#+%.+%]$", bar)
    local _, marks = bar:gsub("|", "")
    assert.equal(1, marks)
    assert.equal("  # live  = pending  . free  | chunk", lines[3])   -- no room beside the bar in 80
    a:free(); s:sync(); p:destroy()
  end)

  it("map refuses what is not a pool", function()
    assert.matches("poolsh.Pool expected", H.err(poolsh.map, 42))
  end)
end)

describe("at exit", function()
  it("buffers still live are reported with where they were allocated, and freed", function()
    local path = os.tmpname()
    local f = io.open(path, "w")
    f:write('poolsh.sources(true)\nlocal s = poolsh.stream()\nkept = poolsh.pool{}:alloc("2 MiB", s)\n',
            'other = poolsh.pinned(64)\nlocal gone = poolsh.malloc(64); gone:free()\n')
    f:close()
    local out, err, code = H.poolsh_cmd("--backend=sim " .. H.quote(path))
    os.remove(path)
    assert.equal(0, code, err)
    assert.matches("2 buffers still live at exit", err, 1, true)
    assert.matches("2.00 MiB pool from p%d+ on s%d+, allocated at .-:3", err)
    assert.matches("64 B pinned, allocated at .-:4", err)
    assert.not_matches("malloc", err)
  end)

  it("reports leaks oldest first, also when the run is traced", function()
    local file = os.tmpname() .. ".json"
    local _, err, code = H.poolsh_cmd("--backend=sim --trace " .. H.quote(file) ..
      " -e 'poolsh.live.leak_group = 100; local s = poolsh.stream(); local p = poolsh.pool{} " ..
      "for i = 1, 5 do local x = p:alloc(i, s) if i % 2 == 0 then x:free() end end " ..
      "kept = {p:alloc(10, s), p:alloc(11, s)}'")
    os.remove(file)
    assert.equal(0, code, err)
    local ids = {}
    for id in err:gmatch("\n  b(%d+) ") do ids[#ids + 1] = tonumber(id) end
    assert.is_true(#ids >= 2, err)
    for i = 2, #ids do assert.is_true(ids[i - 1] < ids[i], err) end
    assert.matches("allocated at %(command line%):1", err)
  end)

  it("--trace survives a script that breaks poolsh.trace", function()
    local file = os.tmpname() .. ".json"
    local _, err, code = H.poolsh_cmd("--backend=sim --trace " .. H.quote(file) ..
      " -e 'poolsh.trace.stop = nil'")
    os.remove(file)
    assert.are_not.equal(134, code)
    assert.is_nil(err:match("PANIC"))
  end)

  it("says nothing when nothing leaks", function()
    local _, err, code = H.poolsh_cmd("--backend=sim -e 'poolsh.pool{}:alloc(1):free()'")
    assert.equal(0, code)
    assert.not_matches("still live", err)
  end)

  it("--trace FILE records the whole run in the format its extension names", function()
    for _, ext in ipairs { "json", "csv", "pickle", "html" } do
      local file = os.tmpname() .. "." .. ext
      local _, err, code = H.poolsh_cmd("--backend=sim --trace " .. H.quote(file) ..
        " -e 'local s = poolsh.stream(); local p = poolsh.pool{}; p:alloc(\"1 MiB\", s):free(); s:sync()'")
      assert.equal(0, code, err)
      local fh = io.open(file, "rb")
      assert.is_truthy(fh, ext)
      local body = fh:read("a")
      fh:close()
      os.remove(file)
      assert.is_true(#body > 0, ext)
      if ext == "csv" then assert.matches("^Thread,Time,Action,Pointer,Size,Stream\n", body) end
      if ext == "json" then assert.matches('"traceEvents"', body) end
    end
  end)

  it("--trace with a bad extension fails the run with a clear message", function()
    local dir = os.tmpname()             -- a private directory: nothing else writes there
    assert(os.remove(dir) and os.execute("mkdir -m 700 " .. H.quote(dir)))
    local file = dir .. "/x.txt"
    local _, err, code = H.poolsh_cmd("--backend=sim --trace " .. H.quote(file) .. " -e 'poolsh.stream()'")
    local left = io.open(file, "rb")     -- the run wrote no trace file
    if left then left:close() end
    os.remove(file)
    assert(os.remove(dir), "the run left something in " .. dir)
    assert.are_not.equal(0, code)
    assert.matches("x%.txt", err)
    assert.is_nil(left)
  end)
end)

describe("poolsh.map on a destroyed pool", function()
  it("raises at the caller's line", function()
    local p = poolsh.pool {}
    p:destroy()
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, e = pcall(function() poolsh.map(p) end)
    assert.is_false(ok)
    assert.equal("live_spec.lua:" .. line .. ": attempt to use a destroyed poolsh.Pool (p"
                 .. p.id .. ")", e:match("[^/]*$"))
  end)
end)
