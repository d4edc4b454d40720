-- poolsh golden: golden files, their format and comparison, and the replay
-- of every committed golden file on the sim (docs/fidelity.md).
local H = require "helpers"
local format = require "poolsh.golden.format"
local compare = require "poolsh.golden.compare"
local label = require "poolsh.golden.label"

--- Runs `poolsh --backend=sim golden ARGS...`; returns stdout, stderr, code.
local function golden(...)
  local args = {}
  for _, a in ipairs { ... } do args[#args + 1] = ("%q"):format(a) end
  local code = ("os.exit(require('poolsh.cmd.golden')({%s}), true)"):format(table.concat(args, ", "))
  return H.poolsh_cmd("--backend=sim -e " .. H.quote(code))
end

local function tmpdir()
  local p = io.popen("mktemp -d")
  local d = p:read("l")
  p:close()
  return d
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function gpu_files(dir)
  local p = io.popen("find " .. H.quote(dir) .. " -type f -name '*.lua' 2>/dev/null")
  local n = 0
  for _ in p:lines() do n = n + 1 end
  p:close()
  return n
end

describe("golden files recorded on a GPU", function()
  it("replay on the sim step for step", function()
    if gpu_files("tests/golden") == 0 then
      pending("no GPU recordings under tests/golden yet")
      return
    end
    local out, err, code = golden("check", "tests/golden")
    assert(code == 0, "poolsh golden check tests/golden failed:\n" .. out .. err)
  end)
end)

describe("golden check", function()
  it("replays the committed sim recordings", function()
    local out, err, code = golden("check", "tests/data/golden-sim")
    assert(code == 0, out .. err)
    assert.matches("(%d+)/%1 golden files agree", out)
  end)

  it("records every scenario on the sim and replays it", function()
    local dir = tmpdir()
    local out, err, code = golden("record", "--out", dir)
    assert(code == 0, out .. err)
    local n = #require "poolsh.fidelity"
    assert.is_true(n >= 40)
    assert.matches(n .. " scenarios recorded", out)
    out, err, code = golden("check", dir)
    assert(code == 0, out .. err)
    assert.matches(("%d/%d golden files agree"):format(n, n), out)
    os.execute("rm -rf " .. H.quote(dir))
  end)

  it("reports the first differing step side by side and exits 1", function()
    local dir = tmpdir()
    local rec = assert(format.read("tests/data/golden-sim/suballoc_alignment.lua"))
    rec.backend, rec.gpu = "cuda", "Test GPU"   -- no shipped profile: the built-in one
    rec.steps[3].offset = 4096
    rec.steps[3].pools.p1.reserved = 64 << 20
    format.write(dir .. "/x.lua", rec)
    local out, _, code = golden("check", dir .. "/x.lua")
    assert.equals(1, code)
    assert.matches("suballoc_alignment %(.-%): " .. (#rec.steps - 1) .. "/" .. #rec.steps .. " steps agree", out)
    assert.matches("first difference at step 3: b1 = p1:alloc%(1 KiB, s1%)", out)
    assert.matches("observation%s+GPU%s+sim", out)
    assert.matches("offset%s+4096 %(4 KiB%)%s+0\n", out)
    assert.matches("pools%.p1%.reserved%s+67108864 %(64 MiB%)%s+33554432 %(32 MiB%)", out)
    assert.matches("0/1 golden files agree", out)
    os.execute("rm -rf " .. H.quote(dir))
  end)

  it("refuses a missing file, a malformed file and an unknown scenario clearly", function()
    local dir = tmpdir()
    local out, err, code = golden("check", dir .. "/nope.lua")
    assert.equals(1, code)
    assert.matches("poolsh golden: no such file or directory: .*nope%.lua", out .. err)

    write(dir .. "/broken.lua", "return { scenario = ")
    write(dir .. "/empty.lua", "return 42")
    write(dir .. "/unknown.lua", 'return { scenario = "no_such_scenario", steps = {} }')
    write(dir .. "/nameless.lua", 'return { scenario = "coalesce", steps = { { offset = 1 } } }')
    out, err, code = golden("check", dir)
    assert.equals(1, code)
    assert.matches("broken%.lua:1: unexpected symbol", out)
    assert.matches("empty%.lua: not a golden file %(no table returned%)", out)
    assert.matches("unknown%.lua: poolsh golden: unknown scenario 'no_such_scenario'", out)
    assert.matches("nameless%.lua: step 1 has no name", out)
    assert.matches("0/4 golden files agree", out)
    assert.not_matches("traceback", out .. err)

    local empty = dir .. "/none"
    os.execute("mkdir " .. H.quote(empty))
    out, err, code = golden("check", empty)
    assert.equals(1, code)
    assert.matches("no golden files %(%*%.lua%) in", err)
    os.execute("rm -rf " .. H.quote(dir))
  end)
end)

describe("golden record, run and list", function()
  it("records on the sim with the profile poolsh was given", function()
    local dir = tmpdir()
    local code = ("os.exit(require('poolsh.cmd.golden')({'record', '--out', %q, 'coalesce'}), true)"):format(dir)
    local _, err, status = H.poolsh_cmd("--backend=sim --profile=lua/poolsh/profiles/h200.lua -e " .. H.quote(code))
    assert.equals(0, status, err)
    local rec = assert(format.read(dir .. "/coalesce.lua"))
    assert.equals("h200.lua", rec.profile)
    assert.equals("poolsh sim (NVIDIA H200 profile)", rec.gpu)
    os.execute("rm -rf " .. H.quote(dir))
  end)

  it("needs --out on the sim", function()
    local _, err, code = golden("record", "coalesce")
    assert.equals(1, code)
    assert.matches("on the sim, give %-%-out DIR", err)
  end)

  it("refuses an unknown scenario and an unknown subcommand", function()
    local _, err, code = golden("run", "nope")
    assert.equals(1, code)
    assert.matches("unknown scenario 'nope'", err)
    _, err, code = golden("run", "../init")
    assert.equals(1, code)
    assert.matches("unknown scenario '../init'", err)
    _, err, code = golden("frobnicate")
    assert.equals(1, code)
    assert.matches("unknown subcommand 'frobnicate'", err)
    _, err, code = golden("check", "--bogus")
    assert.equals(1, code)
    assert.matches("unknown option %-%-bogus", err)
  end)

  it("writes a record naming the device, backend and date, without paths", function()
    local out, _, code = golden("run", "coalesce_reverse")
    assert.equals(0, code)
    local rec = assert(format.decode(out, "run"))
    assert.equals("coalesce_reverse", rec.scenario)
    assert.equals("sim", rec.backend)
    assert.matches("^%d%d%d%d%-%d%d%-%d%d$", rec.date)
    assert.is_string(rec.gpu)
    assert.not_matches("/", out)
    assert.equals("p1 = pool{release_threshold = max}", rec.steps[1].step)
    local c = rec.steps[9]
    assert.equals("b4 = p1:alloc(2 MiB, s1)", c.step)
    assert.equals(0, c.offset)
    assert.equals("b1", c.reused)
  end)

  it("lists at least 40 scenarios with summaries", function()
    local out, _, code = golden("list")
    assert.equals(0, code)
    local n = 0
    for line in out:gmatch("[^\n]+") do
      assert.matches("^[%w_]+%s+%S", line)
      n = n + 1
    end
    assert.is_true(n >= 40)
  end)

  it("prints help for each subcommand", function()
    for _, sub in ipairs { "record", "check", "report", "list", "run" } do
      local out, _, code = golden(sub, "--help")
      assert.equals(0, code)
      assert.matches("usage: poolsh .*golden", out)
    end
  end)
end)

describe("golden format", function()
  it("writes keys in a fixed order and reads back the same table", function()
    local t = {
      scenario = "x", backend = "sim", gpu = "G",
      steps = { { step = "a", pools = { p2 = { used = 1, reserved = 2 }, p1 = { used = 3 } }, offset = 0 },
                { step = "b \"q\"", verify = "ok", error = "cudaErrorMemoryAllocation" } },
    }
    local text = format.encode(t)
    assert.equals([[
return {
  scenario = "x",
  gpu = "G",
  backend = "sim",
  steps = {
    {
      step = "a",
      offset = 0,
      pools = {
        p1 = { used = 3 },
        p2 = { reserved = 2, used = 1 },
      },
    },
    { step = "b \"q\"", error = "cudaErrorMemoryAllocation", verify = "ok" },
  },
}
]], text)
    assert.same(t, format.decode(text, "t"))
    assert.equals(text, format.encode(format.decode(text, "t")))
  end)

  it("refuses what it cannot write, and code in a golden file is not run", function()
    assert.has_error(function() format.encode { f = print } end, "golden format: cannot write a function")
    local t, err = format.decode("return os.exit(3)", "evil")
    assert.is_nil(t)
    assert.matches("evil:1: 'os' is not a value a data file may hold", err)
    t, err = format.decode("while true do end", "loop")
    assert.is_nil(t)
    assert.matches("loop:1: a data file starts with 'return'", err)
  end)

  it("refuses header fields of the wrong type and a profile outside the profiles", function()
    local steps = "steps = { { step = 'a' } }"
    for text, want in pairs {
      ["return { scenario = 'x', gpu = {}, " .. steps .. " }"] = "gpu: a string expected, got table",
      ["return { scenario = 'x', profile = '../../x.lua', " .. steps .. " }"] = "profile: a profile file's name",
      ["return { scenario = 'x', profile = 7, " .. steps .. " }"] = "profile: a profile file's name",
    } do
      local t, err = format.check(format.decode(text, "f"), "f")
      assert.is_nil(t)
      assert.matches(want, err, 1, true)
    end
    assert.is_table(format.check(format.decode("return { scenario = 'x', profile = 'h100.lua', "
      .. steps .. " }", "f"), "f"))
  end)
end)

describe("golden compare", function()
  local gold = { steps = { { step = "a", pools = { p1 = { reserved = 1 } } },
                           { step = "b", offset = 0, reused = "b1" } } }

  it("agrees with itself", function()
    local r = compare.records(gold, gold)
    assert.same({ agree = 2, total = 2 }, r)
    assert.same({}, compare.report(gold, gold, r, "GPU", "sim"))
  end)

  it("finds each differing observation of a step, a missing step and a run error", function()
    local sim = { steps = { { step = "a", pools = { p1 = { reserved = 1 } } },
                            { step = "b", offset = 2048, query = "busy" } } }
    local r = compare.records(gold, sim)
    assert.equals(1, r.agree)
    assert.equals(2, r.first)
    assert.same({ { path = "offset", a = 0, b = 2048 }, { path = "query", b = "busy" },
                  { path = "reused", a = "b1" } }, r.diffs)
    local lines = compare.report(gold, sim, r, "GPU", "sim")
    assert.equals("  first difference at step 2: b", lines[1])
    assert.matches("^    observation%s+GPU%s+sim$", lines[2])
    assert.matches("^    offset%s+0%s+2048 %(2 KiB%)$", lines[3])
    assert.matches("^    query%s+%-%s+busy$", lines[4])

    local short = { steps = { gold.steps[1] }, error = "boom" }
    r = compare.records(gold, short)
    assert.same({ agree = 1, total = 2, first = 2 }, { agree = r.agree, total = r.total, first = r.first })
    assert.same({ a = nil, b = "boom" }, r.error)
    lines = compare.report(gold, short, r, "GPU", "sim")
    assert.equals("  (sim ran: (no step))", lines[2])
  end)

  it("labels sizes exactly", function()
    assert.equals("1 B", label.size(1))
    assert.equals("3000 B", label.size(3000))
    assert.equals("4 KiB", label.size(4096))
    assert.equals("32 MiB + 1 B", label.size(32 * H.MiB + 1))
    assert.equals("1 GiB + 32 MiB", label.size(H.GiB + 32 * H.MiB))
    assert.equals("max", label.size(math.huge))
    assert.equals("200 ms", label.duration(200))
    assert.equals("250 us", label.duration(0.25))
  end)
end)

describe("golden statements", function()
  local statements = require "poolsh.golden.statements"

  local function files(dir)
    local p = io.popen("find " .. H.quote(dir) .. " -type f -name '*.lua' 2>/dev/null | LC_ALL=C sort")
    local t = {}
    for l in p:lines() do t[#t + 1] = l end
    p:close()
    return t
  end

  local function step_of(rec, name)
    for i, s in ipairs(rec.steps) do if s.step == name then return s, i end end
    error("no step " .. name)
  end

  -- The messages of rec's failing statements, joined.
  local function failures(rec)
    local lines = statements.report(statements.check(rec))
    return table.concat(lines, "\n"), #lines
  end

  local function two_frees()
    return assert(format.read("tests/golden/h200/statements_two_frees.lua"))
  end

  it("hold in every committed recording, GPU ones included", function()
    local all = files("tests/golden")
    for _, f in ipairs(files("tests/data/golden-sim")) do all[#all + 1] = f end
    assert.is_true(#all >= 7)
    local with = 0
    for _, f in ipairs(all) do
      local rec = assert(format.read(f))
      local text, n = failures(rec)
      assert(n == 0, f .. ":\n" .. text)
      if compare.has_statements(rec) then with = with + 1 end
    end
    assert.is_true(with >= 3)
  end)

  it("are recorded: b3 names b1's and b2's bytes, b4 b2's, with extents", function()
    local rec = two_frees()
    local b3 = step_of(rec, "b3 = p1:alloc(40 MiB, s1)")
    assert.same({ { buffer = "b1", bytes = 16 * H.MiB, rule = "stream order", stream = "s1" },
                  { buffer = "b2", bytes = 24 * H.MiB, rule = "stream order", stream = "s1" } }, b3.sources)
    assert.is_nil(b3.fresh)
    local b4 = step_of(rec, "b4 = p1:alloc(8 MiB, s1)")
    assert.same({ { buffer = "b2", bytes = 8 * H.MiB, rule = "stream order", stream = "s1" } }, b4.sources)
    assert.equals(3, #b4.extents.p1)
    assert.is_true(step_of(rec, "b1 = p1:alloc(16 MiB, s1)").fresh)
    local cross = assert(format.read("tests/golden/h200/statements_cross_stream.lua"))
    assert.equals("b1's free is pending on s1, and s2 has no event dependency on it",
      step_of(cross, "b2 = p1:alloc(16 MiB, s2)").why_fresh)
  end)

  it("catch a claim of reuse from a buffer the block does not overlap", function()
    local rec = two_frees()
    step_of(rec, "b4 = p1:alloc(8 MiB, s1)").sources[1].buffer = "b1"
    local text = failures(rec)
    assert.matches("step 9 %(b4 = p1:alloc%(8 MiB, s1%)%): poolsh says b4 reused b1's memory %(8388608 %(8 MiB%)%), "
      .. "but b4 at %[%+40 MiB, %+48 MiB%) overlaps no freed range of b1", text)
    assert.matches("poolsh names b4's sources without b2, but b4 at %[%+40 MiB, %+48 MiB%) overlaps b2's freed range by 8388608", text)
  end)

  it("catch issue 18's reuse statements: one source for two, wrong bytes", function()
    local rec = two_frees()
    local b3 = step_of(rec, "b3 = p1:alloc(40 MiB, s1)")
    table.remove(b3.sources, 2)
    local text, n = failures(rec)
    assert.equals(1, n)
    assert.matches("poolsh names b3's sources without b2, but b3 at %[%+0 B, %+40 MiB%) overlaps b2's freed range by 25165824", text)
    rec = two_frees()
    step_of(rec, "b3 = p1:alloc(40 MiB, s1)").sources[2].bytes = 40 * H.MiB
    text = failures(rec)
    assert.matches("poolsh says b3 took 41943040 %(40 MiB%) of b2's freed bytes, but b3 at %[%+0 B, %+40 MiB%) overlaps 25165824 %(24 MiB%) of them", text)
  end)

  it("catch fresh memory claimed over a freed range", function()
    local rec = two_frees()
    local b4 = step_of(rec, "b4 = p1:alloc(8 MiB, s1)")
    b4.sources, b4.fresh = nil, true
    b4.why_fresh = "b2's block was reusable, but the pool placed the allocation elsewhere"
    local text, n = failures(rec)
    assert.equals(1, n)
    assert.matches("poolsh says b4 took fresh memory, but b4 at %[%+40 MiB, %+48 MiB%) overlaps b2's freed range by 8388608 %(8 MiB%)", text)
  end)

  it("catch pending bytes the driver's counters leave no room for", function()
    local rec = two_frees()
    local s, i = step_of(rec, "b4:free()")
    s.pools.p1.pending = s.pools.p1.pending + 40 * H.MiB
    local text = failures(rec)
    assert.matches(("step %d %%(b4:free%%(%%)%%): p1: poolsh says 100663296 %%(96 MiB%%) pending, but the driver's used 0 %%(0 B%%) "
      .. "and reserved 67108864 %%(64 MiB%%) leave only 67108864 %%(64 MiB%%)"):format(i), text)
    assert.matches("its pending counter says", text)
  end)

  it("catch extents that overlap or disagree with the recorded offsets", function()
    local rec = two_frees()
    local x = step_of(rec, "b4 = p1:alloc(8 MiB, s1)").extents.p1
    x[3].offset = x[3].offset - H.MiB
    local text = failures(rec)
    assert.matches("p1: extents overlap: b4's %[%+40 MiB, %+48 MiB%) and b2's %[%+47 MiB, %+55 MiB%)", text)
    rec = two_frees()
    x = step_of(rec, "b4 = p1:alloc(8 MiB, s1)").extents.p1
    x[2].offset = x[2].offset + 2 * H.MiB
    text = failures(rec)
    assert.matches("p1: the ledger shows b4 live at %[%+42 MiB, %+50 MiB%), but it was allocated at %[%+40 MiB, %+48 MiB%)", text)
    rec = two_frees()
    table.remove(step_of(rec, "b3 = p1:alloc(40 MiB, s1)").extents.p1, 1)
    text = failures(rec)
    assert.matches("p1: b3 is live at %[%+0 B, %+40 MiB%), but the ledger's extents do not show it", text)
  end)

  it("fail golden check with the step and the two facts, exit 1", function()
    local dir = tmpdir()
    local rec = two_frees()
    local b4 = step_of(rec, "b4 = p1:alloc(8 MiB, s1)")
    b4.sources, b4.fresh = nil, true
    format.write(dir .. "/forged.lua", rec)
    local out, _, code = golden("check", dir)
    assert.equals(1, code)
    assert.matches("statements_two_frees %(.-%): 15/16 steps agree, 1 statements fail", out)
    assert.matches("statement fails at step 9 %(b4 = p1:alloc%(8 MiB, s1%)%): poolsh says b4 took fresh memory, "
      .. "but b4 at %[%+40 MiB, %+48 MiB%) overlaps b2's freed range", out)
    assert.matches("0/1 golden files agree", out)
    os.execute("rm -rf " .. H.quote(dir))
  end)

  it("are not asked of a recording that predates them", function()
    local old = { steps = { { step = "b1 = p1:alloc(1 KiB, s1)", offset = 0 } } }
    local new = { steps = { { step = "b1 = p1:alloc(1 KiB, s1)", offset = 0, fresh = true } } }
    assert.same({ agree = 1, total = 1 }, compare.records(old, new))
    local r = compare.records(new, { steps = { { step = "b1 = p1:alloc(1 KiB, s1)", offset = 0 } } })
    assert.equals(1, r.first)
    assert.same({ { path = "fresh", a = true } }, r.diffs)
  end)

  it("parse the runner's size labels", function()
    for _, n in ipairs { 1, 511, 3000, 4096, 32 * H.MiB + 1, H.GiB + 32 * H.MiB, 40 * H.MiB } do
      assert.equals(n, statements.parse_size(label.size(n)))
    end
    assert.is_nil(statements.parse_size("12 parsecs"))
  end)
end)

describe("golden statements' reuse rules", function()
  local statements = require "poolsh.golden.statements"

  local function rec_with(pool_step, rule, src_stream)
    return { scenario = "x", steps = {
      { step = pool_step },
      { step = "b1 = p1:alloc(16 MiB, s1)", offset = 0, fresh = true },
      { step = "b1:free()" },
      { step = "b2 = p1:alloc(16 MiB, s2)", offset = 0,
        sources = { { buffer = "b1", bytes = 16 * H.MiB, rule = rule, stream = src_stream } } },
    } }
  end

  it("hold a rule to the pool's settings and a stream-order reuse to its stream", function()
    local text = table.concat(statements.report(statements.check(rec_with(
      "p1 = pool{follow_event_dependencies = false, opportunistic = true}", "event dependency", "s1"))), "\n")
    assert.matches("step 4 %(b2 = p1:alloc%(16 MiB, s2%)%): poolsh says b2 reused b1's memory by event dependency, "
      .. "but the pool was made with follow_event_dependencies = false", text)
    text = table.concat(statements.report(statements.check(rec_with(
      "p1 = pool{release_threshold = max}", "stream order", "s1"))), "\n")
    assert.matches("poolsh says b2 %(on s2%) reused b1's memory by stream order, but that free was queued on s1", text)
    assert.same({}, statements.check(rec_with("p1 = pool{follow_event_dependencies = false, opportunistic = true}",
      "opportunistic", "s1")))
    assert.same({}, statements.check(rec_with("p1 = pool{}", "event dependency", "s1")))
  end)
end)
