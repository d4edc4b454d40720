-- The HTML pages as pictures (docs/export.md, "The HTML page"): each page
-- loaded in headless Chromium at 1024 and 1920 px with a probe script
-- appended that reads the drawn DOM, moves the mouse over a block and
-- clicks a step: the memory map's rectangles, reuse arrows, releases, the
-- tooltip, the scenario's title, steps and verdict, no horizontal overflow,
-- no absolute path and nothing fetched; screenshots checked for colour.
local export = require "poolsh.export"
local html = require "poolsh.export.html"
local scenario = require "poolsh.scenario"
local cjson = require "cjson"
local poolsh = require "poolsh"
local H = require "helpers"

local MiB = 1024 * 1024
local BASE = 0x7f0000000000

local tmpdir = H.sh("mktemp -d"):gsub("%s+$", "")
local function tmp(name) return tmpdir .. "/" .. name end
local function put(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end

local function have(prog) return select(3, H.sh("command -v " .. prog)) == 0 end

-- Reads what the page drew, hovers the first element matching HOVER, then
-- clicks the second step; writes it all as JSON into <pre id="probe">.
local PROBE = [==[
<script>
(function () {
  var out = {}, q = function (s) { return document.querySelector(s); };
  out.title = (q(".title") || {}).textContent; out.doctitle = document.title;
  out.maps = [].map.call(document.querySelectorAll("svg.map:not(.other-map)"), function (s) {
    return { pool: s.getAttribute("data-pool"), live: s.querySelectorAll("rect.live").length,
      pending: s.querySelectorAll("rect.pending").length, reuse: s.querySelectorAll("path.reuse").length,
      released: s.querySelectorAll("rect.released").length, blocks: +s.getAttribute("data-blocks"),
      releases: [].map.call(s.querySelectorAll("text.release-label"), function (t) { return t.textContent; }),
      width: s.getBoundingClientRect().width };
  });
  out.other = document.querySelectorAll("svg.other-map rect.other-block").length;
  out.otherTitle = (q(".other h3") || {}).textContent;
  out.notes = [].map.call(document.querySelectorAll(".maps + .note, .maps .note, div.note"), function (d) { return d.textContent; });
  out.innerWidth = innerWidth;
  out.scrollWidth = Math.max(document.documentElement.scrollWidth, document.body.scrollWidth);
  out.verdicts = [].map.call(document.querySelectorAll(".verdict"), function (v) { return v.textContent; });
  out.sections = document.querySelectorAll("section.trace").length;
  out.said = [].map.call(document.querySelectorAll("ol.notes .said, ol.notes .notice, #notes .said, #notes .notice"), function (v) { return v.textContent; });
  var target = q(HOVER);
  if (target) {
    var r = target.getBoundingClientRect();
    target.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: r.left + 1, clientY: r.top + 1 }));
    out.tip = document.getElementById("poolsh-tip").textContent;
    out.tipShown = document.getElementById("poolsh-tip").style.display;
  }
  var li = document.querySelectorAll("ol.notes li, #notes li");
  out.steps = li.length;
  if (li.length > 1) {
    out.rangeBefore = q(".map-range").textContent;
    li[1].click();
    out.rangeAfter = q(".map-range").textContent;
  }
  if (q(".mode-order")) {
    out.modeBefore = q(".map-range").textContent;
    q(".mode-order").click(); out.modeOrder = q(".map-range").textContent;
    q(".mode-time").click(); out.modeTime = q(".map-range").textContent;
  }
  var pre = document.createElement("pre"); pre.id = "probe"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
]==]

local function chromium(args, url, width)
  local profile = H.sh("mktemp -d"):gsub("%s+$", "")
  local out = H.sh("timeout 120 chromium --headless --no-sandbox --disable-gpu"
    .. " --disable-background-networking --disable-component-update --disable-sync"
    .. " --no-first-run --force-color-profile=srgb --hide-scrollbars --user-data-dir=" .. profile
    .. " --window-size=" .. width .. ",1000 " .. args .. " file://" .. url)
  os.execute("rm -rf " .. H.quote(profile))
  return out
end

-- What the probe read from page at width px (hovering the element `hover`).
local function probe(page, width, hover)
  local text = H.slurp(page)
  local copy = page:gsub("%.html$", "") .. "-probe" .. width .. ".html"
  local script = PROBE:gsub("HOVER", function() return cjson.encode(hover or "rect.live") end)
  put(copy, (text:gsub("</body>", function() return script .. "</body>" end)))
  local dom = chromium("--dump-dom", copy, width)
  local json = dom:match('<pre id="probe">(.-)</pre>')
  assert(json, "the probe did not run: " .. dom:sub(1, 300))
  json = json:gsub("&lt;", "<"):gsub("&gt;", ">"):gsub("&amp;", "&")
  return cjson.decode(json)
end

-- The screenshot's pixels of each colour in colours ({name = "#rrggbb"}).
local function colours(page, width, want)
  local shot = page:gsub("%.html$", "") .. width .. ".png"
  chromium("--screenshot=" .. shot, page, width)
  local out, err, code = H.sh("python3 tests/spec/png_colours.py " .. H.quote(shot) .. " " .. H.quote(cjson.encode(want)))
  assert(code == 0, "could not decode the screenshot: " .. err)
  return cjson.decode(out)
end

-- Nothing in text that fetches: no <link>, no http(s) src/href, no @import, no url().
local function self_contained(text)
  assert.falsy(text:find("<link", 1, true))
  assert.falsy(text:lower():find("src%s*=%s*[\"']?https?:"))
  assert.falsy(text:lower():find("href%s*=%s*[\"']?https?:"))
  assert.falsy(text:find("@import", 1, true))
  assert.falsy(text:find("url%(['\"]?http"))
end

-- A scenario run with tracing on: {meta = meta, events = events}.
local function traced(sc, edit)
  poolsh.trace.clear()
  poolsh.trace.start()
  local res = scenario.run(sc, function() end)
  poolsh.trace.stop()
  local meta = poolsh.trace.meta()
  meta.title, meta.summary, meta.notes = sc.name, sc.summary, res.notes
  meta.verdict = { ok = res.ok, step = res.step, err = res.err, skipped = res.skipped }
  if edit then edit(meta, res) end
  local events = poolsh.trace.events()
  poolsh.trace.clear()
  return { meta = meta, events = events }
end

describe("HTML pictures", function()
  if not have("chromium") then
    pending("chromium is not installed: the HTML rendering checks are skipped")
    return
  end

  -- A small known trace: a 32 MiB reservation, b1 and b2, b1 freed and
  -- pending on s2 until its free completes, b3 reusing b1's bytes, frees,
  -- a release with its cause; a malloc buffer and a VMM range beside.
  local meta = {
    backend = "sim", device = { index = 0, name = "sim device", total = 1024 * MiB },
    pools = { [1] = { id = 1, name = "p1" } }, streams = { [2] = { id = 2, name = "s2" } },
    names = { buffer = { [3] = "act" } },
  }
  local function known()
    local function a(t) t.op = t.op or "alloc"; t.pool = t.pool or 1; t.kind = t.kind or "pool"; return t end
    return {
      { seq = 1, t = 0, op = "pool_create", pool = 1, src = "demo.lua:1" },
      a { seq = 2, t = 0.01, stream = 2, buffer = 1, addr = BASE, size = 8 * MiB, reused = false,
        reserved = 32 * MiB, used = 8 * MiB, pending = 0, src = "demo.lua:2" },
      { seq = 3, t = 0.01, op = "reserve", pool = 1, addr = BASE, size = 32 * MiB, reserved = 32 * MiB, src = "demo.lua:2" },
      a { seq = 4, t = 0.02, stream = 2, buffer = 2, addr = BASE + 8 * MiB, size = 8 * MiB, reused = false,
        reserved = 32 * MiB, used = 16 * MiB, pending = 0, src = "demo.lua:3" },
      a { seq = 5, t = 0.03, op = "free", stream = 2, buffer = 1, addr = BASE, size = 8 * MiB,
        reserved = 32 * MiB, used = 8 * MiB, pending = 8 * MiB, src = "demo.lua:4" },
      { seq = 6, t = 1.0, op = "free_completed", stream = 2, pool = 1, buffer = 1, addr = BASE, size = 8 * MiB },
      a { seq = 7, t = 1.1, stream = 2, buffer = 3, addr = BASE, size = 4 * MiB, reused = true, reused_from = 1,
        rule = "stream order", reserved = 32 * MiB, used = 12 * MiB, pending = 0, src = "demo.lua:5" },
      a { seq = 8, t = 1.2, op = "free", stream = 2, buffer = 3, addr = BASE, size = 4 * MiB,
        reserved = 32 * MiB, used = 8 * MiB, pending = 0, src = "demo.lua:6" },
      a { seq = 9, t = 1.3, op = "free", stream = 2, buffer = 2, addr = BASE + 8 * MiB, size = 8 * MiB,
        reserved = 32 * MiB, used = 0, pending = 0, src = "demo.lua:7" },
      { seq = 10, t = 1.4, op = "release", pool = 1, size = 32 * MiB, cause = "s2:sync()", reserved = 0 },
      { seq = 11, t = 1.5, op = "alloc", stream = 2, kind = "malloc", buffer = 4, addr = 0x7f1000000000,
        size = 2 * MiB, src = "demo.lua:8" },
      { seq = 12, t = 1.6, op = "vmm_reserve", range = 1, addr = 0x7f2000000000, size = 64 * MiB, src = "demo.lua:9" },
      { seq = 13, t = 1.7, op = "free", stream = 2, kind = "malloc", buffer = 4, addr = 0x7f1000000000,
        size = 2 * MiB, src = "demo.lua:10" },
    }
  end

  for _, width in ipairs { 1024, 1920 } do
    it("draws a trace's memory map at " .. width .. " px: blocks, pending, reuse, the release, other memory", function()
      local page = export.save(tmp("known" .. width .. ".html"), known(), meta)
      self_contained(H.slurp(page))
      local got = probe(page, width, 'rect.live[data-b="2"]')
      assert.equal(1, #got.maps)
      local m = got.maps[1]
      assert.equal("p1", m.pool)
      assert.equal(3, m.live)                  -- b1, b2, act
      assert.equal(1, m.pending)               -- b1, on s2 until its free completed
      assert.equal(1, m.reuse)                 -- act on b1's bytes
      assert.equal(1, m.released)              -- the 32 MiB reservation, after the release
      assert.same({ "s2:sync() released 32.0 MiB" }, m.releases)
      assert.equal(2, got.other)               -- the malloc buffer and the VMM range
      assert.matches("Not pool memory: 1 malloc, 1 vmm range", got.otherTitle, 1, true)
      assert.is_true(m.width > width * 0.6 and m.width <= width, "map width " .. m.width)
      assert.is_true(got.scrollWidth <= got.innerWidth, got.scrollWidth .. " > " .. got.innerWidth)
      -- the hover names the block, its stream, its site and the rule of its reuse
      assert.equal("block", got.tipShown)
      assert.matches("^act  4.0 MiB %(pool%) on s2", got.tip)
      assert.matches("site: demo.lua:5", got.tip, 1, true)
      assert.matches("reused b1's memory by stream order", got.tip, 1, true)
      local shot = colours(page, width, { live = html.colours.live, released = html.colours.released })
      assert.equal(width, shot.width)
      assert.is_true(shot.counts.live > 2000, "live pixels: " .. shot.counts.live)
      assert.is_true(shot.counts.released > 2000, "released pixels: " .. shot.counts.released)
    end)
  end

  it("switches the map between time and event order", function()
    local page = export.save(tmp("order.html"), known(), meta)
    local got = probe(page, 1200)
    assert.equal("0.0000 ms to 1.7000 ms", got.modeBefore)   -- a trace without steps: time
    assert.equal("events 0 to 13 of 13", got.modeOrder)
    assert.equal("0.0000 ms to 1.7000 ms", got.modeTime)
  end)

  for _, width in ipairs { 1024, 1920 } do
    it("titles a scenario's page with its name, lists its steps and verdict at " .. width .. " px", function()
      local run = traced(scenario.load("same_stream"))
      local page = export.save(tmp("scenario" .. width .. ".html"), run.events, run.meta)
      local text = H.slurp(page)
      self_contained(text)
      assert.truthy(text:find("<title>same_stream</title>", 1, true))
      local got = probe(page, width, 'rect.live[data-b="1"]')
      assert.equal("same_stream", got.title)
      assert.equal("same_stream", got.doctitle)
      assert.same({ "PASS" }, got.verdicts)
      assert.equal(3, got.steps)
      assert.equal(12, got.maps[1].live)       -- twelve 4 MiB buffers
      assert.equal(11, got.maps[1].reuse)      -- each after the first on the one before's bytes
      -- the hovered block is the scenario's b, on its a's bytes: the scenario's names
      assert.matches("^b  4%.0 MiB %(pool%) on s\n", got.tip)
      assert.matches("reused a's memory by stream order", got.tip)
      assert.matches("site: [%w/]*poolsh/scenarios/same_stream.lua:%d+", got.tip)
      assert.is_true(got.scrollWidth <= got.innerWidth, got.scrollWidth .. " > " .. got.innerWidth)
      -- clicking step 2 zooms the map to the events from step 2 to step 3
      assert.matches("^events 0 to %d+ of %d+$", got.rangeBefore)
      assert.matches("^events %d+ to %d+ of %d+$", got.rangeAfter)
      assert.not_equal(got.rangeBefore, got.rangeAfter)
      local shot = colours(page, width, { live = html.colours.live })
      assert.is_true(shot.counts.live > 2000, "live pixels: " .. shot.counts.live)
    end)
  end

  it("writes --all's page: a table of contents with verdicts and a section per scenario", function()
    local failing = {
      name = "fails_on_purpose", summary = "a scenario whose second step fails",
      run = function(ctx)
        local s, p = poolsh.stream(), poolsh.pool {}
        ctx.step("allocate 1 MiB", "watch the reservation")
        p:alloc(MiB, s):free()
        ctx.step("expect the impossible")
        ctx.expect.equal(1, 2, "the count")
        p:destroy(); s:destroy()
      end,
    }
    local runs = {
      traced(scenario.load("same_stream")),
      traced(failing, function(m)
        m.notes[1].notices = { "watch the reservation" }
        m.notes[1].said = { "measured: 1 alloc" }
      end),
    }
    local page = html.save_scenarios(tmp("all.html"), runs)
    local text = H.slurp(page)
    self_contained(text)
    local got = probe(page, 1024, "rect.live")
    assert.equal(2, got.sections)
    assert.same({ "PASS", "FAIL at step 2", "PASS", "FAIL at step 2: the count: expected 2, observed 1" }, got.verdicts)
    assert.same({ "notice: the free waits behind the work on the GPU",   -- same_stream's own notices
                  "notice: reused: later work on s runs after the free", "notice: the pool does not grow",
                  "notice: watch the reservation", "measured: 1 alloc" }, got.said)
    assert.equal(2, #got.maps)
    assert.is_true(got.scrollWidth <= got.innerWidth, got.scrollWidth .. " > " .. got.innerWidth)
    assert.truthy(text:find('<a href="#scenario-2">fails_on_purpose</a>', 1, true))
  end)

  it("rejects a runs list that is not one, naming what was wrong", function()
    assert.error_matches(function() html.save_scenarios(tmp("x.html"), 3) end,
      "runs must be a list of {meta = meta, events = events}, got number", 1, true)
    assert.error_matches(function() html.save_scenarios(tmp("x.html"), { { meta = 1 } }) end,
      "runs[1] must be {meta = table, events = list}", 1, true)
    assert.error_matches(function() export.to_string("html", {}, { notes = { { t = 1, text = "x", said = { 3 } } } }) end,
      "meta.notes[1].said[1] must be a string, got number", 1, true)
    assert.error_matches(function() export.to_string("html", {}, { verdict = "PASS" }) end,
      "meta.verdict must be a table {ok, step, err, skipped}, got string", 1, true)
  end)

  it("shows sites relative to the script's directory, never an absolute path", function()
    local dir = tmp("proj")
    os.execute("mkdir -p " .. H.quote(dir .. "/lib"))
    put(dir .. "/lib/work.lua", "return function(p, s)\n  return p:alloc(1048576, s)\nend\n")
    put(dir .. "/demo.lua", table.concat {
      "package.path = '", dir, "/?.lua;' .. package.path\n",
      "local work = require 'lib.work'\n",
      "local s, p = poolsh.stream(), poolsh.pool {}\n",
      "poolsh.trace.start()\n",
      "local b = work(p, s)\n",
      "b:free()\n",
      "error_here = pcall(error, '", dir, "/demo.lua:7: a message naming the script')\n",
      "s:sync()\n",
      "poolsh.trace.stop()\n",
      "poolsh.trace.save('", dir, "/rec.html')\n",
      "local meta = poolsh.trace.meta()\n",
      "meta.notes = { { t = 0, text = '1. from ", dir, "/demo.lua:5' } }\n",
      "meta.verdict = { ok = false, step = 1, err = '", dir, "/demo.lua:6: failed' }\n",
      "require('poolsh.export').save('", dir, "/page.html', poolsh.trace.events(), meta)\n",
      "p:destroy(); s:destroy()\n",
    })
    local out, err, code = H.poolsh_cmd("--backend=sim " .. H.quote(dir .. "/demo.lua"))
    assert(code == 0, out .. err)
    local cwd = H.sh("pwd"):gsub("%s+$", "")
    for _, name in ipairs { "rec.html", "page.html" } do
      local text = H.slurp(dir .. "/" .. name)
      assert.falsy(text:find(tmpdir, 1, true), name .. " names the temporary directory")
      assert.falsy(text:find(cwd, 1, true), name .. " names the working directory")
      assert.falsy(text:find('"%.%.%./'), name .. " has a shortened absolute path")
      assert.truthy(text:find('"demo.lua:6"', 1, true), name)   -- b:free()
      assert.truthy(text:find('"lib/work.lua:2"', 1, true), name)
    end
    -- a script's trace is titled by the script's file name, not a path
    assert.truthy(H.slurp(dir .. "/rec.html"):find("<title>demo.lua: poolsh trace (sim", 1, true))
    local page = H.slurp(dir .. "/page.html")
    assert.truthy(page:find("FAIL at step 1: demo.lua:6: failed", 1, true))
    assert.truthy(page:find("from demo.lua:5", 1, true))
  end)

  it("bounds the map of a 100,000-event trace and says what it left out", function()
    local evs, t = {}, 0
    for i = 1, 50000 do
      t = t + 0.001
      local addr = BASE + (i % 256) * MiB
      evs[#evs + 1] = { seq = 2 * i - 1, t = t, op = "alloc", stream = 1 + i % 2, pool = 1, kind = "pool", buffer = i,
        addr = addr, size = MiB, reused = i > 256, reused_from = i > 256 and i - 256 or nil,
        rule = i > 256 and "stream order" or nil, reserved = 256 * MiB, used = MiB, pending = 0, src = "big.lua:3" }
      evs[#evs + 1] = { seq = 2 * i, t = t + 0.0005, op = "free", stream = 1 + i % 2, pool = 1, kind = "pool",
        buffer = i, addr = addr, size = MiB, reserved = 256 * MiB, used = 0, pending = MiB, src = "big.lua:4" }
    end
    local page = export.save(tmp("big.html"), evs, { backend = "sim", pools = { [1] = { name = "p1" } } })
    local size = #H.slurp(page)
    assert.is_true(size < 300 * 100000, "the page is " .. size .. " bytes")
    local t0 = os.time()
    local got = probe(page, 1280, "rect.live")
    assert.is_true(os.time() - t0 < 60, "rendering took " .. (os.time() - t0) .. " s")
    assert.is_true(got.maps[1].blocks <= html.max_blocks, "drew " .. got.maps[1].blocks)
    assert.equal(got.maps[1].blocks, got.maps[1].live)
    local said = table.concat(got.notes, "\n")
    assert.matches("50000 blocks; " .. html.max_blocks .. " of the 50000 in this range drawn (the largest first", said, 1, true)
  end)
  describe("compare's page", function()
    local CPROBE = [==[
<script>
(function () {
  var out = { paths: {} };
  [].forEach.call(document.querySelectorAll("path.series"), function (p) {
    out.paths[p.getAttribute("data-allocator") + " " + p.getAttribute("data-kind")] = {
      shift: +p.getAttribute("data-shift"), dash: p.getAttribute("stroke-dasharray") || "",
      with: p.getAttribute("data-coincides") || "" };
  });
  out.recorded = [].map.call(document.querySelectorAll("text.recorded-label"), function (t) { return t.textContent; });
  out.lines = document.querySelectorAll("line.recorded").length;
  out.coincide = document.getElementById("coincide").textContent;
  out.width = document.getElementById("chart").getBoundingClientRect().width;
  out.innerWidth = innerWidth;
  out.scrollWidth = Math.max(document.documentElement.scrollWidth, document.body.scrollWidth);
  var pre = document.createElement("pre"); pre.id = "probe"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
]==]
    local page
    setup(function()
      local replay = require "poolsh.replay"
      local rec = replay.read.open("tests/data/torch/transformer_2streams.pickle.gz")
      local c = require("poolsh.replay.compare").run(rec, { allocators = { "pool", "pytorch" }, series = true })
      page = tmp("cmp.html")
      require("poolsh.export.compare_html").save(page, c)
    end)

    for _, width in ipairs { 1024, 1920 } do
      it("keeps coinciding lines visible and draws the recorded figures at " .. width .. " px", function()
        self_contained(H.slurp(page))
        local copy = tmp("cmp-probe" .. width .. ".html")
        put(copy, (H.slurp(page):gsub("</body>", function() return CPROBE .. "</body>" end)))
        local json = chromium("--dump-dom", copy, width):match('<pre id="probe">(.-)</pre>')
        assert(json, "the probe did not run")
        local got = cjson.decode((json:gsub("&lt;", "<"):gsub("&gt;", ">"):gsub("&amp;", "&")))
        -- the used lines coincide: drawn apart, with their own dashes, and said so
        local a, b = got.paths["pool used"], got.paths["pytorch used"]
        assert.equal("pool pytorch", a.with)
        assert.equal(0, a.shift)
        assert.equal(3, b.shift)
        assert.not_equal(a.dash, b.dash)
        assert.matches("used lines that coincide (drawn 3 px apart, each with its own dashes): pool and pytorch",
          got.coincide, 1, true)
        assert.equal("", got.paths["pool reserved"].with)   -- 832 MiB against 942: apart
        -- what the recording reserved and used at its peak, as labelled lines
        assert.equal(2, got.lines)
        assert.same({ "recorded peak reserved 942.0 MiB", "recorded peak used 757.6 MiB" }, got.recorded)
        assert.is_true(got.width > width * 0.8 and got.width <= width, "chart width " .. got.width)
        assert.is_true(got.scrollWidth <= got.innerWidth, got.scrollWidth .. " > " .. got.innerWidth)
        local shot = colours(page, width, { pool = "#1f77b4", pytorch = "#d62728" })
        assert.is_true(shot.counts.pool > 1000 and shot.counts.pytorch > 1000, cjson.encode(shot.counts))
      end)
    end
  end)
end)
