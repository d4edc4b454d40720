-- poolsh scenarios and poolsh run: the narrated scenarios, their
-- expectations and the HTML report (docs/scenarios.md).
local H = require "helpers"
local scenario = require "poolsh.scenario"

local function sim(args) return H.poolsh_cmd("--backend=sim " .. args) end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local FAILING = [[
local poolsh = require "poolsh"
return { name = "tiny", summary = "fails on purpose", run = function(ctx)
  local p = poolsh.pool { release_threshold = "max" }
  ctx.step("allocate 1 MiB", "watch reserved")
  local b = p:alloc("1 MiB")
  ctx.step("claim nothing is reserved")
  ctx.expect.stats(p, { reserved = 0 })
  ctx.step("never reached")
end }
]]

describe("poolsh scenarios", function()
  it("lists every scenario with its summary", function()
    local out, err, code = sim("scenarios")
    assert.equal(0, code, err)
    for _, name in ipairs(require "poolsh.scenarios") do
      local line = out:match("\n?(" .. name .. " [^\n]+)")
      assert.truthy(line, name)
      assert.truthy(#line > #name + 10, line)
    end
  end)

  it("takes no arguments", function()
    local _, err, code = sim("scenarios extra")
    assert.equal(1, code)
    assert.truthy(err:find("poolsh scenarios: unexpected argument 'extra'", 1, true), err)
  end)
end)

describe("poolsh run", function()
  it("--all passes on the sim and prints the table with backend, device and driver", function()
    local out, err, code = sim("run --all")
    assert.equal(0, code, out .. err)
    local dev = out:match("backend sim, device ([^\n]+), driver sim\n")
    assert.truthy(dev, out)
    local names = require "poolsh.scenarios"
    for _, name in ipairs(names) do assert.truthy(out:find("\npass%s+" .. name .. "\n"), name) end
    assert.truthy(out:find(("%d/%d scenarios pass"):format(#names, #names), 1, true))
  end)

  it("narrates each step with what to notice", function()
    local out, _, code = sim("run cross_stream")
    assert.equal(0, code)
    assert.truthy(out:find(" 3. record an event on s1 AFTER the free", 1, true), out)
    assert.truthy(out:find("notice: reused: s2's work is ordered after the free", 1, true), out)
    assert.truthy(out:find("PASS cross_stream", 1, true))
  end)

  it("peer_access asks the sim for two devices and goes back to one after", function()
    local out, err, code = sim("run peer_access")
    assert.equal(0, code, out .. err)
    assert.truthy(out:find("notice: refused: on the GPU the kernel would fault", 1, true), out)
    assert.truthy(out:find("PASS peer_access", 1, true), out)
    local res = scenario.run(scenario.load("peer_access"), function() end)
    assert.is_true(res.ok, res.err)
    if H.is_sim() then assert.equal(1, require("poolsh").device_count()) end   -- reset to --sim-devices
  end)

  it("skips a scenario that needs more devices than the machine has, with the reason", function()
    local path = os.tmpname() .. ".lua"
    write(path, 'return { name = "many", summary = "17 devices", devices = 17, run = function() error("ran") end }')
    local out, err, code = sim("run " .. H.quote(path))
    os.remove(path)
    assert.equal(0, code, out .. err)
    assert.truthy(out:find("SKIP many: needs 17 devices, more than the sim models", 1, true), out)
    assert.falsy(out:find("ran", 1, true), out)
    local res = scenario.run({ name = "many", devices = 17, run = function() error("ran") end }, function() end)
    assert.is_true(res.ok)
    if H.is_sim() then
      assert.equal("needs 17 devices, more than the sim models", res.skipped)
    else                                                       -- this process's backend
      assert.equal(("needs 17 devices, this machine has %d"):format(require("poolsh").device_count()),
                   res.skipped)
    end
  end)

  it("shows the threshold cliff's ratio", function()
    local out, _, code = sim("run release_threshold")
    assert.equal(0, code)
    local r = tonumber(out:match("ratio ([%d.]+)x"))
    assert.truthy(r and r >= 2, out)
  end)

  it("reports a failed expectation with expected against observed, and its step", function()
    local path = os.tmpname() .. ".lua"
    write(path, FAILING)
    local out, err, code = sim(H.quote(path))
    assert.equal(0, code, err)   -- a file path without `run` is a script: it returns a table
    out, err, code = sim("run " .. H.quote(path))
    os.remove(path)
    assert.equal(1, code, out .. err)
    assert.truthy(out:find("FAILED at step 2. claim nothing is reserved", 1, true), out)
    assert.truthy(out:find("reserved: expected 0, observed 33554432 (32.00 MiB)", 1, true), out)
    assert.falsy(out:find("never reached", 1, true))
    assert.truthy(out:find("FAIL tiny", 1, true))
  end)

  it("--report writes the HTML timeline with the narration", function()
    local path = os.tmpname() .. ".html"
    local out, err, code = sim("run same_stream --report " .. H.quote(path))
    assert.equal(0, code, err)
    assert.truthy(out:find("report: " .. path, 1, true))
    local html = H.slurp(path)
    os.remove(path)
    assert.truthy(html:find('<ol id="notes">', 1, true))
    assert.truthy(html:find("2. allocate 4 MiB on s again, nothing synchronised", 1, true))
    assert.truthy(html:find('"notes":%[{[^}]*"t":0,'))
    assert.truthy(html:find('"op"', 1, true) or html:find('"alloc"', 1, true))
  end)

  it("--help says how to run them", function()
    local out, _, code = sim("run --help")
    assert.equal(0, code)
    assert.truthy(out:find("usage: poolsh [--backend=cuda|sim] run NAME|FILE.lua [options]", 1, true), out)
    for _, o in ipairs { "--quiet", "--step", "--report FILE.html" } do assert.truthy(out:find(o, 1, true), o) end
    out, _, code = sim("scenarios --help")
    assert.equal(0, code)
    assert.truthy(out:find("usage: poolsh scenarios", 1, true), out)
  end)

  it("a scenario that raises a Lua error fails at its step with the error", function()
    local path = os.tmpname() .. ".lua"
    write(path, 'return { name = "boom", run = function(ctx) ctx.step("divide"); error("no way") end }')
    local out, err, code = sim("run " .. H.quote(path))
    os.remove(path)
    assert.equal(1, code, err)
    assert.truthy(out:find("FAILED at step 1. divide\n    [^\n]*no way"), out)
  end)

  it("says what is wrong with names and options in one line", function()
    for args, msg in pairs {
      ["run nope"] = "poolsh run: unknown scenario 'nope' (poolsh scenarios lists them)",
      ["run ../x"] = "poolsh run: unknown scenario '../x'",
      ["run"] = "poolsh run: which scenario?",
      ["run --bogus"] = "poolsh run: unknown option '--bogus'",
      ["run a b"] = "poolsh run: one scenario at a time",
      ["run --all same_stream"] = "poolsh run: give a NAME or --all, not both",
      ["run same_stream --report"] = "poolsh run: --report needs a file name",
      ["run same_stream --report x.txt"] = "poolsh run: --report must name a .html file, got 'x.txt'",
      ["run /no/such/file.lua"] = "poolsh run: cannot load scenario '/no/such/file.lua'",
    } do
      local out, err, code = sim(args)
      assert.equal(1, code, args)
      assert.equal("", out, args)
      assert.truthy(err:find(msg, 1, true), args .. ": " .. err)
      local lines = select(2, err:gsub("\n", ""))
      assert.truthy(lines <= 2, err)   -- the sim's start-up line and the error
    end
  end)
end)

describe("the HTML exporter's meta.notes", function()
  local html = require "poolsh.export.html"

  it("lists the notes, escaped, above the timeline and passes them to the page", function()
    local page = html.encode({}, { notes = { { t = 1.5, text = "1. a <b> & c" } } })
    assert.truthy(page:find('<li><a href="#t=1.5,1.501">1.500 ms</a> 1. a &lt;b&gt; &amp; c</li>', 1, true), page)
    assert.truthy(page:find('"notes":[{"t":1.5,"text":"1. a \\u003cb> & c"}]', 1, true))   -- every < escaped (docs/export.md)
    assert.falsy(html.encode({}, {}):find('id="notes"', 1, true))
  end)

  it("rejects a malformed note", function()
    local ok, e = pcall(html.encode, {}, { notes = { { t = "x", text = "a" } } })
    assert.falsy(ok)
    assert.truthy(tostring(e):find("meta.notes[1] must be {t = ms, text = string}", 1, true), e)
  end)
end)

describe("poolsh.scenario expectations", function()
  local function msg(f, ...)
    local ok, e = pcall(f, ...)
    assert.falsy(ok)
    assert.truthy(scenario.is_failure(e))
    return tostring(e)
  end
  local E = scenario.expect

  it("compare values and show both sides", function()
    assert.equal("n: expected 3, observed 4", msg(E.equal, 4, 3, "n"))
    assert.equal("n: expected at least 5, observed 4", msg(E.at_least, 4, 5, "n"))
    assert.equal("n: expected at most 3, observed 4", msg(E.at_most, 4, 3, "n"))
    assert.truthy(msg(E.faster, 10, 15, 2):find("ratio 1.5", 1, true))
    E.equal(1, 1); E.at_least(2, 1); E.at_most(1, 2); E.faster(1, 10, 5)
  end)

  it("check reuse from the buffer's own fields", function()
    local fresh = { name = "b2", reused = false, why_fresh = "b1's free is pending on s1" }
    assert.equal("b2 reused: expected reused by event dependency, observed fresh memory (b1's free is pending on s1)",
      msg(E.reused, fresh, "event dependency"))
    local reused = { name = "b3", reused = true, reused_from = 1, reuse_rule = "opportunistic" }
    assert.equal("b3 reuse rule: expected event dependency, observed opportunistic (from b1)",
      msg(E.reused, reused, "event dependency"))
    assert.equal("b3 fresh: expected fresh memory, observed reused b1 by opportunistic", msg(E.fresh, reused))
    E.reused(reused, "opportunistic"); E.fresh(fresh)
  end)
end)
