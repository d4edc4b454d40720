-- poolsh advise and poolsh.advise: the grid of PYTORCH_CUDA_ALLOC_CONF
-- settings replayed and ranked, --limit, --json, --report, the modes not
-- modelled yet, and bad input (docs/replay.md, "Which setting should I
-- use?").
local H = require "helpers"
local poolsh = H.poolsh
local replay = require "poolsh.replay"
local advise = require "poolsh.advise"
local cjson = require "cjson"

local DATA = "tests/data/torch/"
local CONVNET = DATA .. "convnet.pickle.gz"
local RESNET = DATA .. "modes/resnet18.pickle.gz"

local function cmd(args, stdin) return H.poolsh_cmd("--backend=" .. H.backend() .. " advise " .. args, nil, stdin) end

local tmpdir = H.sh("mktemp -d"):gsub("%s+$", "")
teardown(function() os.execute("rm -rf " .. H.quote(tmpdir)) end)

-- Whether replayed point x ranks before y by the documented order.
local function ordered(x, y)
  local a, b = x.result, y.result
  if a.failed ~= b.failed then return a.failed < b.failed end
  if a.peak_reserved ~= b.peak_reserved then return a.peak_reserved < b.peak_reserved end
  if a.segments_allocated ~= b.segments_allocated then return a.segments_allocated < b.segments_allocated end
  return a.alloc_seconds <= b.alloc_seconds
end

-- The last line of text.
local function last_line(text) return text:match("([^\n]*)\n?$") end

describe("poolsh.advise", function()
  it("has PyTorch's default first in its grid, then the modes and their options", function()
    local g = advise.grid()
    assert.equal("", g[1].conf)
    assert.equal(0, g[1].settings)
    local seen = {}
    for _, p in ipairs(g) do
      assert.is_nil(seen[p.conf], p.conf)
      seen[p.conf] = true
      -- every point is a setting PyTorch reads
      require("poolsh.allocators.pytorch_conf").parse(p.conf)
    end
    assert.is_true(seen["expandable_segments:True"])
    assert.is_true(seen["backend:cudaMallocAsync"])
    assert.is_true(seen["max_split_size_mb:64,roundup_power2_divisions:4"])
    assert.is_true(#g >= 10 and #g <= 40, #g)
  end)

  it("ranks by failed allocations, then peak reserved, driver allocations, allocator time, fewer settings", function()
    local function pt(conf, settings, index, failed, peak, segs, secs)
      return { conf = conf, settings = settings, index = index, result = {
        failed = failed, peak_reserved = peak, segments_allocated = segs, alloc_seconds = secs } }
    end
    local a = { ranked = {
      pt("", 0, 1, 0, 300, 5, 1.0),
      pt("a:1", 1, 2, 0, 200, 9, 9.0),          -- less memory beats fewer driver allocations
      pt("b:1", 1, 3, 1, 100, 1, 0.1),          -- a failure loses to any fit
      pt("c:1", 1, 4, 0, 200, 8, 9.0),          -- the same memory, fewer driver allocations
      pt("d:1", 1, 5, 0, 200, 8, 8.0),          -- ... and less time
      pt("e:1,f:2", 2, 6, 0, 200, 8, 8.0),      -- a tie: fewer settings first
      pt("g:1", 1, 7, 0, 200, 8, 8.0),          -- a tie: grid order
    } }
    advise.rank(a)
    local order = {}
    for _, p in ipairs(a.ranked) do order[#order + 1] = p.conf end
    assert.same({ "d:1", "g:1", "e:1,f:2", "c:1", "a:1", "", "b:1" }, order)
    assert.equal("d:1", a.best.conf)
    assert.equal("", a.default.conf)
    assert.equal(7, a.ranked[7].rank)
  end)

  it("shows a mode the allocator refuses as not modelled yet and never recommends it", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local rec = replay.read.open(CONVNET)
    local plain = advise.run(rec)
    local best = plain.best.conf
    assert.is_not_equal("", best)   -- on convnet a setting beats the default
    -- a pytorch allocator that refuses the best setting like a mode not
    -- modelled yet
    local P = require "poolsh.allocators.pytorch"
    local refusing = { new = function(opts)
      if opts.conf == best then error("pytorch allocator: " .. best .. " is not modelled yet (issue 21)", 0) end
      return P.new(opts)
    end }
    local a = advise.run(rec, { allocator = refusing })
    for _, p in ipairs(a.points) do
      if p.conf == best then
        assert.equal("not modelled", p.status)
        assert.is_nil(p.result)
        assert.is_nil(p.rank)
      end
    end
    assert.is_not_equal(best, a.best.conf)
    assert.equal(#plain.ranked - 1, #a.ranked)
    assert.matches("\n%- +" .. best:gsub("%p", "%%%0") .. " +not modelled yet", advise.table(a))
    local verdict = advise.verdict(a)
    assert.is_not_equal("PYTORCH_CUDA_ALLOC_CONF=" .. best, verdict[#verdict])
    -- whatever the allocator does not model today: a row, never the best
    for _, p in ipairs(a.points) do
      if p.status == "not modelled" then assert.is_not_equal(a.best, p) end
    end
  end)

  it("folds a mode's variants into one row when its bare setting is not modelled", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local P = require "poolsh.allocators.pytorch"
    local refusing = { new = function(opts)
      if opts.conf:find("expandable_segments:True", 1, true) then
        error("pytorch allocator: expandable_segments:True is not modelled yet (issue 21)", 0)
      end
      return P.new(opts)
    end }
    local a = advise.run(replay.read.open(CONVNET), { allocator = refusing })
    local folded, variants = 0, 0
    for _, p in ipairs(a.points) do
      if p.mode == "expandable_segments:True" and p.conf ~= p.mode then
        variants = variants + 1
        if p.folded then folded = folded + 1 end
      end
    end
    assert.is_true(variants >= 4)
    assert.equal(variants, folded)
    local text = advise.table(a)
    assert.matches(("\n%%- +expandable_segments:True %%(and its %d variants%%) +not modelled yet"):format(variants), text)
    assert.is_nil(text:find("\n%- +expandable_segments:True,"))
    -- --json keeps every point, with its reason
    local n = 0
    for _, e in ipairs(advise.ranking(a)) do
      if e.conf:find("expandable_segments:True", 1, true) then
        n = n + 1
        assert.equal("not modelled", e.status)
        assert.matches("not modelled yet", e.reason)
      end
    end
    assert.equal(variants + 1, n)
  end)

  it("gives every setting what poolsh replay --alloc-conf gives, whatever the jobs", function()
    if not H.is_sim() then pending("the sim's figures") return end
    -- resnet18's backend:cudaMallocAsync replay is paced by its recorded
    -- times: a replay from advise's cache of the events must be paced too
    local KEYS = { "events", "peak_reserved", "peak_used", "final_reserved", "segments_allocated",
                   "driver_frees", "failed", "alloc_seconds" }
    for _, path in ipairs { CONVNET, RESNET } do
      local alone = {}   -- conf -> poolsh replay's figures, each read afresh
      for _, p in ipairs(advise.grid()) do
        poolsh.reset()
        alone[p.conf] = replay.run(replay.read.open(path), { allocator = "pytorch", alloc_opts = { conf = p.conf } })
      end
      for _, jobs in ipairs { 1, 2 } do
        poolsh.reset()
        local a = advise.run(replay.read.open(path), { jobs = jobs, file = path })
        assert.equal(#advise.grid(), #a.ranked)
        for _, p in ipairs(a.ranked) do
          for _, k in ipairs(KEYS) do
            assert.equal(alone[p.conf][k], p.result[k], ("%s --jobs %d %s %s"):format(path, jobs, p.conf, k))
          end
        end
      end
    end
    -- the figure the review found: 640 MiB on the command line, and so in advise
    local out, err, code = H.poolsh_cmd("--backend=sim replay --allocator=pytorch --alloc-conf backend:cudaMallocAsync "
      .. H.quote(RESNET) .. " --json")
    assert.equal(0, code, err)
    local want = cjson.decode(out).peak_reserved
    for _, jobs in ipairs { 1, 2 } do
      out, err, code = cmd(H.quote(RESNET) .. " --json --jobs " .. jobs)
      assert.equal(0, code, err)
      assert.equal(want, cjson.decode(out).allocators["backend:cudaMallocAsync"].peak_reserved, "--jobs " .. jobs)
    end
  end)

  it("refuses what is not a recording, and a bad limit", function()
    assert.matches("a Recording expected", H.err(advise.run, {}))
    assert.matches("limit must be a positive number of bytes",
      H.err(advise.run, replay.read.open(CONVNET), { limit = -1 }))
  end)
end)

describe("poolsh advise", function()
  it("prints the settings ranked and ends with the line to use", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local out, err, code = cmd(H.quote(CONVNET))
    assert.equal(0, code, err)
    assert.matches("^convnet%.pickle%.gz: torch recording, 1380 events", out)
    assert.matches("\n# +PYTORCH_CUDA_ALLOC_CONF +peak reserved", out)
    assert.matches("\n[%d%-]+ +expandable_segments:True", out)   -- ranked, or not modelled yet
    -- the rows, in rank order, and the line naming the first
    local ranks, first = {}, nil
    for n, conf in out:gmatch("\n(%d+) +(%S+)") do
      ranks[#ranks + 1] = tonumber(n)
      first = first or conf
    end
    assert.is_true(#ranks >= 9, out)
    for k, n in ipairs(ranks) do assert.equal(k, n) end
    local line = last_line(out)
    if first == "(default)" then assert.equal("unset PYTORCH_CUDA_ALLOC_CONF", line)
    else assert.equal("PYTORCH_CUDA_ALLOC_CONF=" .. first, line) end
  end)

  it("--json: one object with every point, the ranking in order and the line", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local out, err, code = cmd(H.quote(CONVNET) .. " --json")
    assert.equal(0, code, err)
    local j = cjson.decode(out)
    assert.equal("convnet.pickle.gz", j.file)
    assert.equal("sim", j.backend)
    assert.equal(cjson.null, j.limit)
    assert.is_table(j.recorded)
    assert.equal(#advise.grid(), #j.ranking)
    local replayed = 0
    for i, e in ipairs(j.ranking) do
      assert.is_string(e.conf)
      if e.status == "replayed" then
        replayed = replayed + 1
        assert.equal(replayed, i)          -- the replayed come first
        assert.equal(i, e.rank)
        for _, k in ipairs(replay.keys) do assert.is_number(e.result[k], k) end
        assert.same(e.result, j.allocators[advise.label(e.conf)])
        if i > 1 then assert.is_true(ordered(j.ranking[i - 1], e), e.conf) end
      else
        assert.is_true(e.status == "not modelled" or e.status == "out of memory", e.status)
        assert.is_string(e.reason)
        assert.is_nil(e.rank)
      end
    end
    assert.is_true(replayed >= 9)
    assert.equal(j.ranking[1].conf, j.recommended)
    assert.equal(j.recommended == "" and "unset PYTORCH_CUDA_ALLOC_CONF" or "PYTORCH_CUDA_ALLOC_CONF=" .. j.recommended,
      j.line)
  end)

  it("--limit: replays under the limit and ranks what fits first", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local out, err, code = cmd(H.quote(CONVNET) .. " --limit 600MiB --json")
    assert.equal(0, code, err)
    local j = cjson.decode(out)
    assert.equal(600 * 1048576, j.limit)
    local fits, misses, seen_miss = 0, 0, false
    for _, e in ipairs(j.ranking) do
      if e.result then
        -- the native allocator's cudaMalloc is refused before it takes memory
        -- (a pool's or a mapping's high-water mark may count what a refused
        -- growth took for a moment)
        if not e.conf:find("expandable_segments:True", 1, true) and not e.conf:find("backend:", 1, true) then
          assert.is_true(e.result.peak_reserved <= j.limit, e.conf)
        end
        if e.result.failed == 0 then
          fits = fits + 1
          assert.is_false(seen_miss, e.conf .. " fits but ranks after one that does not")
        else
          misses, seen_miss = misses + 1, true
        end
      end
    end
    -- under 600 MiB the default fails allocations (fragments) and
    -- max_split_size_mb:64 fits, though without a limit it takes more
    assert.is_true(fits >= 1 and misses >= 1, out)
    assert.is_true(j.ranking[1].result.failed == 0)
    assert.is_true(j.allocators["(default)"].failed > 0)
    -- the text: a fits column, and nothing fits under 100 MiB
    out, err, code = cmd(H.quote(CONVNET) .. " --limit 600MiB")
    assert.equal(0, code, err)
    assert.matches("under %-%-limit 600%.00 MiB", out)
    assert.matches("fits 600%.00 MiB\n1 +" .. j.recommended:gsub("%p", "%%%0") .. " ", out)
    assert.equal("PYTORCH_CUDA_ALLOC_CONF=" .. j.recommended, last_line(out))
    out, err, code = cmd(H.quote(CONVNET) .. " --limit=100MiB")
    assert.equal(0, code, err)
    -- (some allocations fail under every setting, or, where a pool's or a
    -- mapping's high-water mark passes the limit, peak reserved does)
    local line = out:match("\n(nothing fits within 100%.00 MiB: [^\n]*)\n")
    assert.is_truthy(line, out)
    assert.is_truthy(line:match(": some allocations fail under every setting; the fewest failures %(%d+%): ")
      or line:match(": under every setting some allocations fail or peak reserved passes it; the least peak reserved %(.-%): "), line)
  end)

  it("--jobs: children replay a share of the settings, under the same limit, to the same figures", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local function strip(j)   -- wall times vary; the rest is the sim's
      for _, e in ipairs(j.ranking) do if e.result then e.result.seconds = nil end end
      for _, r in pairs(j.allocators) do r.seconds = nil end
      return j
    end
    local one, err1, code1 = cmd(H.quote(CONVNET) .. " --limit 600MiB --jobs 1 --json")
    local three, err3, code3 = cmd(H.quote(CONVNET) .. " --limit 600MiB --jobs 3 --json")
    assert.equal(0, code1, err1)
    assert.equal(0, code3, err3)
    assert.equal("", err3)
    assert.same(strip(cjson.decode(one)), strip(cjson.decode(three)))
    -- from Lua, with the series of a report
    local rec = replay.read.open(CONVNET)
    local a1 = advise.run(rec, { series = true })
    local a2 = advise.run(rec, { series = true, jobs = 2, file = CONVNET })
    assert.equal(#a1.ranked, #a2.ranked)
    for k, p in ipairs(a1.ranked) do
      local q = a2.ranked[k]
      assert.equal(p.conf, q.conf)
      assert.equal(p.result.peak_reserved, q.result.peak_reserved, p.conf)
      assert.equal(p.result.alloc_seconds, q.result.alloc_seconds, p.conf)
      assert.same(a1.comparison.series[advise.label(p.conf)], a2.comparison.series[advise.label(q.conf)])
    end
    assert.matches("jobs must be a whole number from 1 to 64", H.err(advise.run, rec, { jobs = 0 }))
    assert.matches("jobs > 1 needs opts.file", H.err(advise.run, rec, { jobs = 2 }))
    -- a child that cannot read the file, or reads another: one clear error, no child left
    local junk = tmpdir .. "/junk.pickle"
    local f = assert(io.open(junk, "wb"))
    f:write("not a recording\n")
    f:close()
    assert.matches("junk%.pickle: not a recording poolsh reads", H.err(advise.run, rec, { jobs = 2, file = junk }))
    assert.matches("worker 1 read 8874 events from .*transformer%.pickle%.gz, not the 1380 replayed here",
      H.err(advise.run, rec, { jobs = 2, file = DATA .. "transformer.pickle.gz" }))
    -- the child whose parent stopped listening exits without a traceback
    local script = tmpdir .. "/mismatch.lua"
    f = assert(io.open(script, "wb"))
    f:write(([[
      local advise = require "poolsh.advise"
      local rec = require("poolsh.replay").read.open(%q)
      local ok, err = pcall(advise.run, rec, { jobs = 2, file = %q })
      io.stdout:write(ok and "ran\n" or err, "\n")
    ]]):format(CONVNET, DATA .. "transformer.pickle.gz"))
    f:close()
    local out, err, code = H.poolsh_cmd("--backend=sim " .. H.quote(script))
    assert.equal(0, code, err)
    assert.matches("worker 1 read 8874 events", out)
    assert.equal("", err)
  end)

  it("--limit: a setting fits only when its peak reserved is within the limit, not only when nothing failed", function()
    if not H.is_sim() then pending("the sim's figures") return end
    -- every row's fits column and --json's fits say: no failure and peak
    -- reserved within the limit
    local out, err, code = cmd(H.quote(CONVNET) .. " --limit 600MiB --jobs 1")
    assert.equal(0, code, err)
    local rows = 0
    for line in out:gmatch("[^\n]+") do
      local peak, unit, failures, fits = line:match("^%d+ +%S+ +([%d.]+) (%a+) .- (%d+) +[%d.]+ ms +(%a+)$")
      if peak then
        rows = rows + 1
        local bytes = math.floor(tonumber(peak) * (unit == "GiB" and 1024 or 1) * 1048576 + 0.5)
        local want = (failures == "0" and bytes <= 600 * 1048576) and "yes" or "no"
        assert.equal(want, fits, line)
      end
    end
    assert.equal(#advise.grid(), rows, out)
    out, err, code = cmd(H.quote(CONVNET) .. " --limit 600MiB --jobs 1 --json")
    assert.equal(0, code, err)
    local seen = 0
    for _, e in ipairs(cjson.decode(out).ranking) do
      if e.result then
        seen = seen + 1
        assert.equal(e.result.failed == 0 and e.result.peak_reserved <= 600 * 1048576, e.fits, e.conf)
      end
    end
    assert.equal(#advise.grid(), seen)
    out = cmd(H.quote(CONVNET) .. " --jobs 1 --json")
    for _, e in ipairs(cjson.decode(out).ranking) do assert.is_nil(e.fits, e.conf) end
    -- a setting whose peak passes the limit with no failure (a pool's or a
    -- mapping's high-water mark can) never fits, in the table, the JSON
    -- and the verdict
    local function pt(conf, index, failed, peak)
      return { conf = conf, mode = "", settings = conf == "" and 0 or 1, index = index, status = "replayed",
               result = { failed = failed, peak_reserved = peak, segments_allocated = 1, alloc_seconds = 0 } }
    end
    local function ranked(limit, ...)
      local a = { limit = limit, points = { ... } }
      a.ranked = { ... }
      return advise.rank(a)
    end
    local a = ranked(100, pt("", 1, 0, 120), pt("a:1", 2, 0, 90), pt("b:1", 3, 0, 150))
    assert.equal("a:1", a.best.conf)
    assert.is_true(advise.fits(a.best, 100))
    assert.is_false(advise.fits(a.default, 100))
    local fits = {}
    for _, row in ipairs(advise.cells(a)) do fits[row[2]] = row[#row] end
    assert.same({ ["PYTORCH_CUDA_ALLOC_CONF"] = "fits 100 B", ["a:1"] = "yes", ["(default)"] = "no", ["b:1"] = "no" }, fits)
    for _, e in ipairs(advise.ranking(a)) do assert.equal(e.conf == "a:1", e.fits, e.conf) end
    assert.same({ "best: a:1: it fits within 100 B; the default does not (peak reserved 120 B)",
                  "PYTORCH_CUDA_ALLOC_CONF=a:1" }, advise.verdict(a))
    a = ranked(50, pt("", 1, 0, 120), pt("a:1", 2, 0, 90))
    assert.same({ "nothing fits within 50 B: under every setting some allocations fail or peak reserved passes it; the least peak reserved (90 B): a:1",
                  "best: a:1: peak reserved 90 B, 30 B less than the default's 120 B", "PYTORCH_CUDA_ALLOC_CONF=a:1" },
      advise.verdict(a))
    a = ranked(50, pt("", 1, 0, 90), pt("a:1", 2, 0, 120))
    assert.same({ "nothing fits within 50 B: under every setting some allocations fail or peak reserved passes it; the least peak reserved (90 B): PyTorch's default",
                  "unset PYTORCH_CUDA_ALLOC_CONF" }, advise.verdict(a))
  end)

  it("says what driver allocs counts under each mode", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local out, err, code = cmd(H.quote(CONVNET) .. " --jobs 1")
    assert.equal(0, code, err)
    assert.matches("\n%(alloc time: time in allocator calls on the sim's virtual clock; driver allocs: cudaMalloc calls %(native allocator%), page map calls %(expandable_segments:True%), pool growths %(backend:cudaMallocAsync%)%)\n", out)
    -- only the modes with a replayed row
    local a = { ranked = { { conf = "max_split_size_mb:64", mode = "" } } }
    assert.equal("(alloc time: time in allocator calls on the wall clock; driver allocs: cudaMalloc calls (native allocator))",
      advise.footnote(a, "the wall clock"))
  end)

  it("--jobs: children read what this process read, or it replays alone; a directory is named as such", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local want, err, code = cmd(H.quote(CONVNET) .. " --jobs 1 --json")
    assert.equal(0, code, err)
    local function strip(text)   -- the file's name, its stats beside it and wall times differ; the rest is the sim's
      local j = cjson.decode(text)
      j.file, j.title, j.recorded = nil, nil, nil
      for _, e in ipairs(j.ranking) do if e.result then e.result.seconds = nil end end
      for _, r in pairs(j.allocators) do r.seconds = nil end
      return j
    end
    -- /dev/stdin redirected from a file: the children read that file
    local out
    out, err, code = cmd("/dev/stdin --jobs 2 --json", H.slurp(CONVNET))
    assert.equal(0, code, err)
    assert.equal("", err)
    assert.same(strip(want), strip(out))
    -- what a child could not open again to the same bytes: none, and no wait
    local fifo, link = tmpdir .. "/fifo.pickle", tmpdir .. "/link.pickle.gz"
    assert.equal(0, select(3, H.sh("mkfifo " .. H.quote(fifo) .. " && ln -s " .. H.quote(H.sh("realpath " ..
      H.quote(CONVNET)):gsub("\n$", "")) .. " " .. H.quote(link))))
    for _, path in ipairs { "/dev/null", "/dev/zero", tmpdir, fifo, tmpdir .. "/missing.pickle",
                            "", "a\0b", tmpdir .. "/it's" } do
      assert.is_nil(advise.rereadable(path), path)
    end
    assert.matches("^/.*/tests/data/torch/convnet%.pickle%.gz$", advise.rereadable(CONVNET))
    assert.equal(advise.rereadable(CONVNET), advise.rereadable(link))
    -- a file no child can read again: replayed here alone
    local a = advise.run(replay.read.open(CONVNET), { jobs = 2, file = tmpdir })
    assert.equal(#advise.grid(), #a.ranked)
    for _, jobs in ipairs { "1", "2" } do
      out, err, code = cmd(H.quote(tmpdir) .. " --jobs " .. jobs)
      assert.equal(1, code)
      assert.equal("", out)
      assert.matches("^[^\n]*poolsh advise: " .. tmpdir:match("[^/]+$"):gsub("%p", "%%%0") .. " is a directory, not a recording\n$", err)
    end
  end)

  it("replays a recording read from a file once, whatever the number of settings", function()
    local csv = tmpdir .. "/once.csv"
    local f = assert(io.open(csv, "wb"))
    f:write(replay.read.rmm_header, "\n")
    for i = 1, 50 do
      f:write(("1,00:00:00.000001,allocate,0x%x,%d,0x0\n"):format(0x7f0000000000 + i * 0x10000000, i * 1048576))
    end
    for i = 1, 50 do
      f:write(("1,00:00:00.000002,free,0x%x,%d,0x0\n"):format(0x7f0000000000 + i * 0x10000000, i * 1048576))
    end
    f:close()
    local rec = replay.read.open(csv)
    local passes, events = 0, rec.events
    rec.events = function(self) passes = passes + 1; return events(self) end
    local a = advise.run(rec)
    assert.equal(1, passes)
    assert.is_true(#a.ranked >= 9)
    for _, p in ipairs(a.ranked) do assert.equal(100, p.result.events) end
    -- past the cache's bound every replay reads the file again
    local bound = advise.cache_events
    advise.cache_events = 10
    passes = 0
    local ok, b = pcall(advise.run, rec)
    advise.cache_events = bound
    assert(ok, b)
    assert.is_true(passes >= #b.ranked, passes)
    for k, p in ipairs(a.ranked) do assert.same(p.result.peak_reserved, b.ranked[k].result.peak_reserved) end
  end)

  it("--report writes the ranking and each setting's lines on one HTML page", function()
    if not H.is_sim() then pending("the sim's figures") return end
    local page = tmpdir .. "/advise.html"
    local out, err, code = cmd(H.quote(CONVNET) .. " --report " .. H.quote(page))
    assert.equal(0, code, err)
    assert.matches("report: " .. page:gsub("%p", "%%%0"), out)
    local text = H.slurp(page)
    assert.matches("<title>poolsh advise: convnet%.pickle%.gz %(sim%)</title>", text)
    assert.matches("<th>PYTORCH_CUDA_ALLOC_CONF</th>", text)
    assert.matches(">roundup_power2_divisions:4</td>", text)
    assert.matches('"name":"%(default%)"', text)
    assert.falsy(text:find("https://", 1, true))
    assert.falsy(text:find("<link", 1, true))
  end)

  it("says what is wrong in one line and exits 1", function()
    local empty = tmpdir .. "/empty.csv"
    local h = assert(io.open(empty, "wb"))
    h:write("Thread,Time,Action,Pointer,Size,Stream\n")
    h:close()
    local f = H.quote(CONVNET)
    for args, msg in pairs {
      [""] = "poolsh advise: which file%? %(poolsh advise FILE; %-%-help%)",
      [H.quote(tmpdir .. "/missing.pickle")] = "poolsh advise: cannot open .*missing%.pickle",
      [f .. " --limit junk"] = "%-%-limit: invalid size 'junk'",
      [f .. " --frob"] = "poolsh advise: unknown option '%-%-frob' %(%-%-streams, %-%-max%-streams, %-%-max%-inflate, %-%-report, %-%-jobs, %-%-json; %-%-help%)",
      [f .. " --jobs 0"] = "poolsh advise: %-%-jobs must be a whole number from 1 to 64, got '0'",
      [f .. " --allocator=pool"] = "poolsh advise: unknown option '%-%-allocator=pool'",
      [f .. " --alloc-conf max_split_size_mb:64"] = "poolsh advise: unknown option '%-%-alloc%-conf'",
      [f .. " --report out.txt"] = "poolsh advise: %-%-report must name a %.html file",
      [f .. " " .. f] = "poolsh advise: one file at a time",
      [H.quote(empty)] = "poolsh advise: empty%.csv has no events: there is nothing to replay, so nothing to advise",
    } do
      local out, err, code = cmd(args)
      assert.equal(1, code, args)
      assert.equal("", out, args)
      assert.matches(msg, err, 1)
      assert.equal(1, select(2, err:gsub("\n", "")) - (err:find("simulated device") and 1 or 0), err)
    end
  end)

  it("--help prints its usage", function()
    local out, err, code = cmd("--help")
    assert.equal(0, code, err)
    assert.matches("^usage: poolsh %[%-%-backend=sim%] advise FILE", out)
  end)
end)
