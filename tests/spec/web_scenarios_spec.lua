-- run() and scenarios() at the page's prompt (lua/poolsh/web/scenarios.lua,
-- docs/web.md), run here natively as the page runs them: in one poolsh
-- where no second process can start (scenario.second_process = false).
local H = require "helpers"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- What `poolsh -e` prints running lua in such a poolsh, on the sim.
local function page(lua)
  return H.poolsh_cmd("--backend=sim -e " .. q(
    'require("poolsh.scenario").second_process = false\n'
    .. 'local w = require("poolsh.web.scenarios")\n' .. lua))
end

describe("the page's run() and scenarios()", function()
  it("runs a scenario in the session, which goes on", function()
    local out, err, code = page('s = poolsh.stream(); p = poolsh.pool{}; a = p:alloc("4 MiB", s)\n'
      .. 'w.run("same_stream", "--quiet")\nprint("after", a.size, p:stats().used)')
    assert.equal(0, code, err)
    assert.truthy(out:find("PASS same_stream", 1, true), out)
    assert.truthy(out:find("after\t4194304\t4194304", 1, true), out)
  end)

  it("skips the scenarios that need a second process, saying why", function()
    local out, err, code = page('w.run("ipc_share")\nw.run("--all", "--quiet")')
    assert.equal(0, code, err)
    assert.truthy(out:find("SKIP ipc_share: needs a second process: the native poolsh runs it", 1, true), out)
    assert.truthy(out:find("skip  ipc_after_free      needs a second process", 1, true), out)
    local n = #require("poolsh.scenarios") - 2
    assert.truthy(out:find(("%d/%d scenarios pass, 2 skipped"):format(n, n), 1, true), out)
  end)

  it("says before a scenario that restarts the sim that the session's objects go", function()
    local out, err, code = page('p = poolsh.pool{}\nw.run("peer_access", "--quiet")\n'
      .. 'print(pcall(p.stats, p))')
    assert.equal(0, code, err)
    assert.truthy(out:find("peer_access needs 2 devices: the sim restarts with them for it, so the pools,", 1, true), out)
    assert.truthy(out:find("PASS peer_access", 1, true), out)
    assert.truthy(out:find("false\t.-destroyed poolsh.Pool"), out)
    out = page('w.run("same_stream", "--quiet")')
    assert.falsy(out:find("restarts", 1, true), out)
  end)

  it("refuses what a page cannot do, and bad arguments, naming them", function()
    local out = page('print(pcall(w.run, "same_stream", "--step"))\n'
      .. 'print(pcall(w.run, "--all", "--report=all.html"))\nprint(pcall(w.run, 1))\n'
      .. 'print(pcall(w.run, "nosuch"))')
    assert.truthy(out:find("run: --step is not in the browser (the page prints every step at once)", 1, true), out)
    assert.truthy(out:find("run: --report is not in the browser (a page cannot save files", 1, true), out)
    assert.truthy(out:find("run: argument #1 must be a string (a scenario's name or an option), got number", 1, true), out)
    assert.truthy(out:find("poolsh run: unknown scenario 'nosuch'", 1, true), out)
  end)

  it("lists the scenarios, the ones for the native poolsh marked", function()
    local out, err, code = page("w.scenarios()")
    assert.equal(0, code, err)
    assert.truthy(out:find("ipc_share%s+%(native poolsh only%) an IPC pool"), out)
    assert.truthy(out:find("same_stream%s+a block freed"), out)
    assert.falsy(H.poolsh_cmd("--backend=sim scenarios"):find("native poolsh only", 1, true))
  end)
end)
