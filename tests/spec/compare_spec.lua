-- poolsh compare and poolsh.replay.compare: the real recordings through
-- several allocators side by side, the same figures as `poolsh replay`,
-- the engine's sampling hook, errors, and the report in headless chromium
-- (docs/replay.md).
local H = require "helpers"
local poolsh = H.poolsh
local replay = require "poolsh.replay"
local compare = require "poolsh.replay.compare"
local cjson = require "cjson"

local DATA = "tests/data/torch/"
local RECORDINGS = { "convnet", "transformer", "transformer_2streams" }
local ALLOCATORS = { "pool", "pytorch", "cupy" }

local function path(name) return DATA .. name .. ".pickle.gz" end
local function cmd(args) return H.poolsh_cmd("--backend=" .. H.backend() .. " compare " .. args) end

-- The result without its wall time (the rest is the same every run on the sim).
-- A result less its timings: wall time, and on a GPU also the time in
-- allocator calls (the sim's virtual clock repeats; a GPU's does not).
local function figures(r)
  local t = {}
  for k, v in pairs(r) do
    if k ~= "seconds" and (k ~= "alloc_seconds" or H.is_sim()) then t[k] = v end
  end
  return t
end

local tmpdir = H.sh("mktemp -d"):gsub("%s+$", "")
teardown(function() os.execute("rm -rf " .. H.quote(tmpdir)) end)

-- A small RMM log (no recorded figures): two blocks on two streams.
local function rmm_log()
  local p = tmpdir .. "/small.csv"
  local f = assert(io.open(p, "wb"))
  f:write("Thread,Time,Action,Pointer,Size,Stream\n",
    "1,00:00:00.000001,allocate,0x7f0000000000,1048576,0x0\n",
    "1,00:00:00.000002,allocate,0x7f0000100000,2097152,0x5\n",
    "1,00:00:00.000003,free,0x7f0000000000,1048576,0x0\n",
    "1,00:00:00.000004,free,0x7f0000100000,2097152,0x5\n")
  f:close()
  return p
end

describe("the engine's sampling hook", function()
  local rec = replay.read.open(path("transformer_2streams"))

  it("leaves every result unchanged and samples at 0, every k-th event and the end", function()
    for _, a in ipairs(ALLOCATORS) do
      poolsh.reset()
      local plain = replay.run(rec, { allocator = a })
      poolsh.reset()
      local seen = {}
      local sampled = replay.run(rec, { allocator = a, sample_every = 7, on_sample = function(i, st)
        assert.is_number(st.reserved); assert.is_number(st.used)
        seen[#seen + 1] = i
      end })
      assert.same(figures(plain), figures(sampled), a)
      local n = plain.events
      assert.equal(0, seen[1])
      assert.equal(7, seen[2])
      assert.equal(n, seen[#seen])
      assert.equal(n // 7 + 1 + (n % 7 ~= 0 and 1 or 0), #seen, a)
    end
  end)

  it("refuses a bad sample_every or on_sample", function()
    assert.matches("sample_every must be a positive integer",
      H.err(replay.run, rec, { sample_every = 0, on_sample = print }))
    assert.matches("sample_every must be a positive integer",
      H.err(replay.run, rec, { sample_every = 1.5, on_sample = print }))
    assert.matches("on_sample must be a function", H.err(replay.run, rec, { on_sample = 3 }))
  end)
end)

describe("poolsh.replay.compare", function()
  it("gives each allocator what a replay of its own gives", function()
    if not H.is_sim() then pending("the sim's figures; on a GPU see docs/gpu-verification.md") return end
    for _, name in ipairs(RECORDINGS) do
      local c = compare.run(replay.read.open(path(name)), { allocators = ALLOCATORS })
      assert.same(ALLOCATORS, c.allocators)
      assert.equal(name .. ".pickle.gz", c.file)
      assert.is_table(c.recorded)
      for _, a in ipairs(ALLOCATORS) do
        local out, err, code = H.poolsh_cmd("--backend=sim replay " .. path(name) .. " --json --allocator=" .. a)
        assert.equal(0, code, err)
        local alone = cjson.decode(out)
        for k, v in pairs(alone) do alone[k] = math.tointeger(v) or v end
        local mine = figures(c.results[a])
        -- replay --json writes floats with lua-cjson's 14 digits
        assert.is_true(math.abs(alone.alloc_seconds - mine.alloc_seconds) <= 1e-12 * mine.alloc_seconds)
        alone.alloc_seconds, mine.alloc_seconds = nil, nil
        assert.same(figures(alone), mine, name .. " " .. a)
      end
      -- pytorch replays what PyTorch recorded
      assert.equal(c.recorded.peak_reserved, c.results.pytorch.peak_reserved, name)
    end
  end)

  it("resets poolsh before each replay, so the order does not matter", function()
    local rec = replay.read.open(path("convnet"))
    local ab = compare.run(rec, { allocators = { "pool", "cupy" } })
    local ba = compare.run(rec, { allocators = { "cupy", "pool" } })
    for _, a in ipairs { "pool", "cupy" } do assert.same(figures(ab.results[a]), figures(ba.results[a]), a) end
  end)

  it("gives --pool's settings to the pool allocator only", function()
    local rec = replay.read.open(path("convnet"))
    assert.matches("pool allocator: unknown setting 'bogus'",
      H.err(compare.run, rec, { allocators = { "pool", "pytorch" }, pool = { bogus = 1 } }))
    local c = compare.run(rec, { allocators = { "pytorch", "cupy" }, pool = { bogus = 1 } })
    assert.is_table(c.results.cupy)
  end)

  it("gives alloc_conf to the pytorch allocator only, and refuses a bad one before any replay", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local rec = replay.read.open(path("convnet"))
    local conf = "max_split_size_mb:64"
    local c = compare.run(rec, { allocators = { "pool", "pytorch" }, alloc_conf = conf })
    poolsh.reset()
    local plain = replay.run(rec, { allocator = "pytorch" })
    poolsh.reset()
    local mine = replay.run(rec, { allocator = "pytorch", alloc_opts = { conf = conf } })
    assert.same(figures(mine), figures(c.results.pytorch))
    assert.is_not_equal(plain.peak_reserved, c.results.pytorch.peak_reserved)   -- the setting counted
    poolsh.reset()
    assert.same(figures(replay.run(rec, { allocator = "pool" })), figures(c.results.pool))
    local ran = false
    local rec2 = setmetatable({ events = function(...) ran = true; return rec.events(...) end }, { __index = rec })
    assert.matches("alloc%-conf: unknown key 'bogus'",
      H.err(compare.run, rec2, { allocators = { "pool", "pytorch" }, alloc_conf = "bogus:1" }))
    assert.is_false(ran)
    assert.matches("alloc_conf is PyTorch's setting: it goes with the pytorch allocator",
      H.err(compare.run, rec, { allocators = { "pool" }, alloc_conf = conf }))
    assert.matches("alloc_conf: PyTorch's setting text expected, got number",
      H.err(compare.run, rec, { alloc_conf = 64 }))
  end)

  it("keeps at most max_points points a series, from event 0 to the last", function()
    local rec = replay.read.open(path("transformer"))
    local c = compare.run(rec, { allocators = { "pool", "pytorch" }, series = true })
    for _, a in ipairs { "pool", "pytorch" } do
      local s = c.series[a]
      assert.is_true(#s.i > 1000 and #s.i <= compare.max_points + 1, a .. ": " .. #s.i)
      assert.equal(0, s.i[1])
      assert.equal(c.results[a].events, s.i[#s.i])
      local top = 0
      for j = 1, #s.i do top = math.max(top, s.reserved[j]); assert.is_true(s.used[j] <= s.reserved[j]) end
      assert.is_true(top <= c.results[a].peak_reserved)
    end
    -- a recording of unknown length halves its series as it grows
    local saved = compare.max_points
    compare.max_points = 50
    local unknown = setmetatable({ count = false }, { __index = rec })
    local ok, u = pcall(compare.run, unknown, { allocators = { "pool" }, series = true })
    compare.max_points = saved
    assert.is_true(ok, tostring(u))
    local s = u.series.pool
    assert.is_true(#s.i >= 25 and #s.i <= 52, #s.i)
    assert.equal(u.results.pool.events, s.i[#s.i])
    for j = 2, #s.i do assert.is_true(s.i[j] > s.i[j - 1]) end
  end)

  it("refuses duplicate, empty and unknown allocators before replaying", function()
    local rec = replay.read.open(path("convnet"))
    assert.matches("allocator 'pool' named twice", H.err(compare.run, rec, { allocators = { "pool", "pool" } }))
    assert.matches("a list of names expected", H.err(compare.run, rec, { allocators = {} }))
    assert.matches("unknown allocator 'nope'", H.err(compare.run, rec, { allocators = { "pool", "nope" } }))
    assert.matches("a Recording expected", H.err(compare.run, {}, {}))
  end)

  it("lays the table out with the recorded column", function()
    local c = compare.run(replay.read.open(path("convnet")), { allocators = { "pool", "pytorch" } })
    local text = compare.table(c)
    local lines = {}
    for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal(#compare.rows + 1, #lines)
    assert.matches("^%s+pool%s+pytorch%s+recorded$", lines[1])
    assert.matches("^peak reserved%s+" .. poolsh.fmt(c.results.pool.peak_reserved):gsub("%.", "%%.")
      .. "%s+" .. poolsh.fmt(c.results.pytorch.peak_reserved):gsub("%.", "%%.")
      .. "%s+" .. poolsh.fmt(c.recorded.peak_reserved):gsub("%.", "%%.") .. "$", lines[3])
    assert.matches("^seconds%s+[%d.]+%s+[%d.]+%s+%-$", lines[9])
  end)
end)

describe("poolsh compare", function()
  it("prints one column per allocator, pool and pytorch by default", function()
    local out, err, code = cmd(path("transformer"))
    assert.equal(0, code, err)
    assert.matches("transformer.pickle.gz: torch recording", out)
    assert.matches("\n%s+pool%s+pytorch%s+recorded\n", out)
    assert.matches("\nsegments allocated%s+%d+%s+%d+%s+%d+\n", out)
  end)

  it("--json prints one object: file, backend, allocators, recorded", function()
    local out, err, code = cmd(path("convnet") .. " --json --allocator=cupy --allocator pool")
    assert.equal(0, code, err)
    local j = cjson.decode(out)
    local keys = {}
    for k in pairs(j) do keys[#keys + 1] = k end
    table.sort(keys)
    assert.same({ "allocators", "backend", "file", "recorded" }, keys)
    assert.equal("convnet.pickle.gz", j.file)
    assert.equal(H.backend(), j.backend)
    local want = { table.unpack(replay.keys) }
    table.sort(want)
    for _, a in ipairs { "cupy", "pool" } do
      local got = {}
      for k in pairs(j.allocators[a]) do got[#got + 1] = k end
      table.sort(got)
      assert.same(want, got, a)
    end
    assert.is_nil(j.allocators.pytorch)
    assert.equal(805306368, j.recorded.peak_reserved)
    -- a recording with no recorded figures: null, and no recorded column
    out, err, code = cmd(H.quote(rmm_log()) .. " --json")
    assert.equal(0, code, err)
    j = cjson.decode(out)
    assert.equal(cjson.null, j.recorded)
    assert.equal(4, j.allocators.pool.events)
    assert.equal(3 * H.MiB, j.allocators.pool.peak_used)
    out = cmd(H.quote(rmm_log()))
    assert.not_matches("recorded", out)
  end)

  it("--alloc-conf gives the pytorch allocator PyTorch's own setting", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local conf = "'max_split_size_mb:64,roundup_power2_divisions:4'"
    local out, err, code = cmd(path("convnet") .. " --json --alloc-conf " .. conf)
    assert.equal(0, code, err)
    local j = cjson.decode(out)
    local alone = cjson.decode((H.poolsh_cmd("--backend=sim replay " .. path("convnet")
      .. " --allocator=pytorch --json --alloc-conf " .. conf)))
    assert.equal(alone.peak_reserved, j.allocators.pytorch.peak_reserved)
    assert.equal(alone.segments_allocated, j.allocators.pytorch.segments_allocated)
    local plain = cjson.decode((cmd(path("convnet") .. " --json")))
    assert.is_not_equal(plain.allocators.pytorch.peak_reserved, j.allocators.pytorch.peak_reserved)
    assert.same(figures(plain.allocators.pool), figures(j.allocators.pool))
    out = cmd(path("convnet") .. " --help")
    assert.matches("%-%-alloc%-conf", out)
  end)

  it("compares a user's allocator module, given by path, and has --help", function()
    local mod = tmpdir .. "/nocache.lua"
    local f = assert(io.open(mod, "wb"))
    f:write([[
local poolsh = require "poolsh"
local A = {}
A.__index = A
function A:alloc(size)
  local ok, b = pcall(poolsh.malloc, size)
  if not ok then return nil, tostring(b) end
  self.live, self.mallocs = self.live + size, self.mallocs + 1
  return b
end
function A:free(b) self.live, self.frees = self.live - b.size, self.frees + 1; b:free() end
function A:stats()
  return { reserved = self.live, used = self.live, segments_allocated = self.mallocs, driver_frees = self.frees }
end
return { new = function() return setmetatable({ live = 0, mallocs = 0, frees = 0 }, A) end }
]])
    f:close()
    local out, err, code = cmd(path("convnet") .. " --json --allocator=pool --allocator=" .. H.quote(mod))
    assert.equal(0, code, err)
    local j = cjson.decode(out)
    local mine = j.allocators[mod]
    assert.is_table(mine, out)
    assert.equal(mine.peak_used, mine.peak_reserved)   -- nothing cached
    assert.is_true(mine.driver_frees > 100 and mine.segments_allocated > mine.driver_frees)
    assert.is_true(j.allocators.pool.segments_allocated < 100)
    out, err, code = cmd("--help")
    assert.equal(0, code, err)
    assert.matches("^usage: poolsh", out)
  end)

  it("says what is wrong in one line and exits 1", function()
    local f = path("convnet")
    local bad = tmpdir .. "/bad.csv"
    local h = assert(io.open(bad, "wb"))
    h:write("Thread,Time,Action,Pointer,Size,Stream\n1,00:00:00.000001,frobnicate,0x10,4,0x0\n")
    h:close()
    for args, msg in pairs {
      ["--frob"] = "unknown option '%-%-frob'",
      [""] = "which file",
      [f .. " --allocator=nope"] = "unknown allocator 'nope'",
      [f .. " --allocator=pool --allocator=cupy --allocator=pool"] = "%-%-allocator pool is given twice",
      [f .. " --allocator="] = "%-%-allocator needs a name",
      [f .. " --streams=two"] = "%-%-streams must be keep or one",
      [f .. " --pool 'x ='"] = "%-%-pool: bad settings",
      [f .. " --pool 'bogus = 1'"] = "pool allocator: unknown setting 'bogus'",
      [f .. " --report out.txt"] = "%-%-report must name a %.html file",
      [f .. " --allocator=pool --alloc-conf max_split_size_mb:64"] = "%-%-alloc%-conf is PyTorch's setting: it goes with %-%-allocator=pytorch",
      [f .. " --alloc-conf bogus:1"] = "pytorch allocator: alloc%-conf: unknown key 'bogus'",
      [f .. " " .. f] = "one file at a time",
      ["/nonexistent.pickle"] = "cannot open /nonexistent.pickle",
      [H.quote(bad)] = "bad%.csv: record 1",
    } do
      local out, err, code = cmd(args)
      assert.equal(1, code, args)
      assert.equal("", out, args)
      assert.matches("poolsh compare: " .. msg, err)
      assert.equal(1, select(2, err:gsub("\n", "")) - (err:find("simulated device") and 1 or 0), err)
    end
  end)

  describe("--report", function()
    local function have(prog) return select(3, H.sh("command -v " .. prog)) == 0 end
    if not have("chromium") then
      pending("chromium is not installed: the HTML rendering check is skipped")
      return
    end

    local function chromium(args, url)
      local profile = H.sh("mktemp -d"):gsub("%s+$", "")
      local out = H.sh("timeout 120 chromium --headless --no-sandbox --disable-gpu"
        .. " --disable-background-networking --disable-component-update --disable-sync"
        .. " --no-first-run --force-color-profile=srgb --user-data-dir=" .. profile
        .. " --window-size=1200,900 " .. args .. " file://" .. url)
      os.execute("rm -rf " .. H.quote(profile))
      return out
    end

    it("draws each allocator's reserved and used, with the table, self-contained", function()
      local page = tmpdir .. "/cmp.html"
      local out, err, code = cmd(path("transformer_2streams") .. " --allocator=pool --allocator=pytorch --report "
        .. H.quote(page))
      assert.equal(0, code, err)
      assert.matches("report: " .. page:gsub("%p", "%%%0"), out)
      local text = H.slurp(page)
      assert.falsy(text:find("<link", 1, true))
      assert.falsy(text:find('src="', 1, true))
      assert.falsy(text:find("https://", 1, true))
      assert.falsy(text:find("<path", 1, true))   -- the script draws them
      local dom = chromium("--dump-dom", page)
      local drawn = {}
      for tag in dom:gmatch("<path[^>]*>") do
        local a, kind = tag:match('data%-allocator="([^"]+)"'), tag:match('data%-kind="([^"]+)"')
        local n = tonumber(tag:match('data%-points="(%d+)"'))
        if a then
          drawn[a .. " " .. kind] = n
          assert.is_true(#tag:match(' d="([^"]*)"') > 1000, a .. " " .. kind .. ": no line")
        end
      end
      for _, k in ipairs { "pool reserved", "pool used", "pytorch reserved", "pytorch used" } do
        assert.is_true((drawn[k] or 0) > 1000, k .. ": " .. tostring(drawn[k]))
      end
      assert.truthy(dom:find("2 allocators drawn", 1, true))
      assert.truthy(dom:find('<table id="results">', 1, true))
      assert.truthy(dom:find("<th>recorded</th>", 1, true))
      assert.truthy(dom:find("942.00 MiB", 1, true))   -- pytorch's and the recorded peak
    end)

    it("is refused for a comparison without series", function()
      local c = compare.run(replay.read.open(path("convnet")), { allocators = { "pool" } })
      assert.matches("series = true expected", H.err(require("poolsh.export.compare_html").encode, c))
    end)
  end)
end)
