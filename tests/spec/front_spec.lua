-- The front door (issue 22): poolsh help and help(), --version, the usage's
-- commands, "did you mean", the fallback notice said once, setup.sh's
-- install, and what poolsh run prints for presenting (live lines, --quiet,
-- --step, colour, --report with --all, 80 columns).
local H = require "helpers"
local q = H.quote
local help = require "poolsh.help"

local function sim(args, env, stdin) return H.poolsh_cmd("--backend=sim " .. args, env, stdin) end
-- Messages are folded at the terminal's width: compared as one line.
local function flat(s) return (s:gsub("%s+", " ")) end

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -m 0700 " .. q(d)))
  return d
end
local function rmdir(d) os.execute("rm -rf " .. q(d)) end

-- The commands: the modules in lua/poolsh/cmd/.
local function command_names()
  local list = {}
  local p = io.popen("ls lua/poolsh/cmd")
  for f in p:lines() do list[#list + 1] = f:match("^([%w_]+)%.lua$") end
  p:close()
  return list
end

-- What docs/api.md documents, as docs_spec reads it: every backticked
-- poolsh.x or r:method in a ### heading.
local RECEIVER = { s = "Stream", e = "Event", p = "Pool", b = "Buffer", proc = "Process",
                   r = "Range", m = "Memory" }
local function documented()
  local names, seen = {}, {}
  for line in io.lines("docs/api.md") do
    local h = line:match("^### (.*)")
    for span in (h or ""):gmatch("`([^`]+)`") do
      local r, m = span:match("^(%a+):([%w_]+)")
      local name = r and RECEIVER[r] and (RECEIVER[r] .. ":" .. m) or span:match("^(poolsh[%w_%.]*)")
      if name and not seen[name] then seen[name], names[#names + 1] = true, { name, h } end
    end
  end
  return names
end

local function widest(text)
  local w = 0
  for l in text:gmatch("[^\n]*") do w = math.max(w, utf8.len((l:gsub("\27%[[%d;]*m", ""))) or #l) end
  return w
end

describe("poolsh help", function()
  it("maps what poolsh can do: every command, lessons, scenarios, views, tracebacks, the device", function()
    local out, err, code = sim("help")
    assert.equal(0, code, err)
    for _, c in ipairs(command_names()) do
      assert.truthy(out:find("\n  " .. c .. " +%a"), c .. " missing from:\n" .. out)
    end
    for _, s in ipairs { "poolsh learn", "poolsh scenarios", "poolsh run NAME", "poolsh.show()",
                         "poolsh.map(p)", "poolsh.repl.traceback()", "POOLSH_TRACEBACK=1",
                         "device: sim backend" } do
      assert.truthy(out:find(s, 1, true), s .. " missing from:\n" .. out)
    end
    assert.truthy(widest(out) <= 80, out)
  end)

  it("has an entry for every function docs/api.md documents, its heading and paragraph", function()
    local n = 0
    for _, d in ipairs(documented()) do
      local ok, text = pcall(help.entry, d[1])
      assert.truthy(ok, d[1] .. ": " .. tostring(text))
      assert.truthy(flat(text):find(flat((d[2]:gsub("`", ""))), 1, true), d[1] .. " printed:\n" .. text)
      n = n + 1
    end
    assert.truthy(n > 100, n)
  end)

  it("prints the right paragraph for a name, a method, a function value and from the shell", function()
    assert.truthy(help.entry("pool"):find("^poolsh%.pool%(%[options%]%)\n=+\nCreates a pool"), help.entry("pool"))
    assert.truthy(help.entry("Pool:alloc"):find("^p:alloc%(size %[, stream%]%)\n"))
    assert.truthy(help.entry("p:trim"):find("cudaMemPoolTrimTo", 1, true))
    local poolsh = H.poolsh
    assert.equal(help.entry("poolsh.pool"), help.entry(poolsh.pool))
    assert.equal(help.entry("poolsh.trace.start"), help.entry(poolsh.trace.start))
    local p = poolsh.pool {}
    assert.equal(help.entry("Pool:trim"), help.entry(p.trim))
    assert.truthy(help.entry(p):find("^Pool\n"))
    p:destroy()
    local out, err, code = sim("help pool")
    assert.equal(0, code, err)
    assert.equal(help.entry("pool"), out)
  end)

  it("fits every entry in 80 columns, tables as columns and code whole", function()
    local wide = H.sh("COLUMNS=80 " .. H.exe .. [[ --backend=sim -e '
      local h = require("poolsh.help")
      for _, e in ipairs(h.entries()) do
        if e.names[1] then
          for l in h.entry(e.names[1]):gmatch("[^\n]+") do
            if utf8.len(l) > 80 and not l:match("^    ") then print(e.names[1] .. ": " .. l) end
          end
        end
      end']])
    assert.equal("", wide)
    local stats = H.sh("COLUMNS=80 " .. H.exe .. " --backend=sim help Pool:stats")
    assert.truthy(stats:find("\n  field +type +meaning\n"), stats)   -- the table as columns
  end)

  it("says an unknown topic in one line with the closest names", function()
    local ok, e = pcall(help.entry, "alocc")
    assert.falsy(ok)
    assert.equal("help: no entry for 'alocc' (did you mean 'alloc'?) (help() lists what there is)", e)
    local _, err, code = sim("help alocc")
    assert.equal(1, code)
    assert.truthy(err:find("poolsh help: no entry for 'alocc' (did you mean", 1, true), err)
  end)

  it("reads docs/api.md from an installed tree too (cmake --install)", function()
    local d = tmpdir()
    local _, err, code = H.sh("cmake --install " .. q(H.build) .. " --prefix " .. q(d))
    assert.equal(0, code, err)
    local out
    out, err, code = H.sh("cd / && " .. q(d .. "/bin/poolsh") .. " --backend=sim help p:trim")
    rmdir(d)
    assert.equal(0, code, err)
    assert.truthy(out:find("^p:trim%(%[keep%]%)\n"), out)
  end)
end)

describe("poolsh's version, usage and mistyped names", function()
  it("-v and --version name poolsh; --version the device and why", function()
    local out, _, code = sim("-v")
    assert.equal(0, code)
    assert.truthy(out:find("^poolsh 0%.1%.0 %(Lua 5%.4"), out)
    out, _, code = sim("--version")
    assert.equal(0, code)
    assert.truthy(out:find("^poolsh 0%.1%.0 %(Lua 5%.4[^\n]*\ndevice: sim backend, "), out)
  end)

  it("--help names every command in lua/poolsh/cmd/", function()
    local out, _, code = H.poolsh_cmd("--help")
    assert.equal(0, code)
    local cmds = out:match("Commands:(.-)\n  %(")
    assert.truthy(cmds, out)
    for _, c in ipairs(command_names()) do
      assert.truthy(cmds:find("%f[%w_]" .. c .. "%f[^%w_]"), c .. " missing: " .. cmds)
    end
    assert.truthy(widest(out) <= 80, out)
  end)

  it("a mistyped command, scenario or lesson gets 'did you mean'", function()
    local _, err, code = sim("lern")
    err = flat(err)
    assert.equal(1, code)
    assert.truthy(err:find("cannot open lern: no such file, nor a command (did you mean 'learn'?)", 1, true), err)
    _, err, code = sim("run same_strem")
    err = flat(err)
    assert.equal(1, code)
    assert.truthy(err:find("unknown scenario 'same_strem' (did you mean 'same_stream'?)", 1, true), err)
    _, err, code = sim("learn trm")
    err = flat(err)
    assert.equal(1, code)
    assert.truthy(err:find("unknown lesson 'trm' (did you mean 'trim'?)", 1, true), err)
  end)

  it("a missing file that looks like one keeps lua.c's message", function()
    local _, err, code = sim("/no/such/x.lua")
    assert.equal(1, code)
    assert.truthy(err:find("cannot open /no/such/x.lua", 1, true), err)
    assert.falsy(err:find("nor a command", 1, true), err)
  end)
end)

describe("the simulated device's notice", function()
  it("is said once per user, in a learner's words, and not when the sim was chosen", function()
    local home = tmpdir()
    local env = "env -u POOLSH_BACKEND -u XDG_STATE_HOME HOME=" .. q(home)
    local _, err1 = H.sh(env .. " " .. H.exe .. " -e 'print(1)'")
    local _, err2 = H.sh(env .. " " .. H.exe .. " -e 'print(2)'")
    local _, err3 = H.sh(env .. " HOME=" .. q(home .. "/other") .. " " .. H.exe .. " --backend=sim -e 'print(3)'")
    local ver = flat(H.sh(env .. " " .. H.exe .. " --version"))
    rmdir(home)
    local backend = H.sh(env .. " " .. H.exe .. " -e 'io.write(poolsh.backend())'")
    if backend ~= "sim" then pending("a usable GPU here: no fallback to say") return end
    assert.truthy(err1:find("poolsh runs on its simulated GPU", 1, true), err1)
    assert.falsy(err1:find("cudaError", 1, true), err1)              -- the CUDA error is for help
    assert.truthy(err1:match("^[^\n]+simulated GPU %(poolsh help says why%)\n$"), err1)   -- one line off a terminal
    assert.equal("", err2)                                            -- once
    assert.equal("", err3)                                            -- the sim was chosen
    assert.truthy(ver:find("device: sim backend, .*simulated GPU"), ver)   -- always in --version
  end)
end)

describe("scripts/setup.sh", function()
  it("installs poolsh under the prefix, says where, and warns when it is not on PATH", function()
    local build = H.build:sub(1, 1) == "/" and H.build or (os.getenv("PWD") .. "/" .. H.build)
    local cache = H.slurp_or(build .. "/CMakeCache.txt") or ""
    local src = cache:match("CMAKE_HOME_DIRECTORY:INTERNAL=([^\n]*)")
    local here = H.sh("pwd -P"):gsub("\n$", "")
    if src ~= here then   -- setup.sh configures the build directory: only this tree's own
      pending("POOLSH_BUILD is not this source tree's build directory")
      return
    end
    local cmake = H.sh("command -v cmake"):gsub("\n$", "")
    if cache:match("CMAKE_COMMAND:INTERNAL=([^\n]*)") ~= cmake then   -- a build brought from elsewhere
      pending("the build was configured by another cmake than " .. cmake)
      return
    end
    local d = tmpdir()
    local cuda = cache:match("POOLSH_CUDA:STRING=(%w+)") or "AUTO"   -- as configured: nothing rebuilds
    -- no packages: the test checks the install, on machines without Debian's archive too;
    -- PATH: the system's and cmake's directory, not the prefix's bin
    local cmake_dir = cmake:gsub("/[^/]*$", "")
    local out, err, code = H.sh(("env HOME=%s POOLSH_PREFIX=%s POOLSH_CUDA=%s POOLSH_PACKAGES=no PATH=/usr/bin:/bin:%s bash scripts/setup.sh %s")
      :format(q(d), q(d .. "/p"), cuda, q(cmake_dir), q(build)))
    local installed = io.open(d .. "/p/bin/poolsh") ~= nil
    local help_out = H.sh(q(d .. "/p/bin/poolsh") .. " --backend=sim help pool")
    rmdir(d)
    assert.equal(0, code, out .. err)
    assert.truthy(installed)
    assert.truthy(out:find("poolsh installed: " .. d .. "/p/bin/poolsh", 1, true), out)
    assert.truthy(out:find("warning: " .. d .. "/p/bin is not on your PATH", 1, true), out)
    assert.falsy(out:find("log in again", 1, true), out)   -- that is for ~/.local only
    assert.truthy(out:find("poolsh ready on the", 1, true), out)
    assert.truthy(help_out:find("^poolsh%.pool"), help_out)
  end)
end)

describe("poolsh run for presenting", function()
  it("shows each step's live lines, objects named as the scenario's variables; --quiet hides them", function()
    local out, err, code = sim("run same_stream")
    assert.equal(0, code, err)
    assert.truthy(out:find(" 1%. [^\n]*\n    notice: [^\n]*\np  reserved 32%.00 MiB %(%+32%.00 MiB%)[^\n]*\n"
      .. "[^\n]*\n  a 4%.00 MiB from p on s: fresh memory\n 2%. "), out)
    assert.truthy(out:find("b 4.00 MiB from p on s: reused a's memory (stream order)\n 3. ", 1, true), out)
    out, err, code = sim("run same_stream --quiet")
    assert.equal(0, code, err)
    assert.falsy(out:find("reserved 32", 1, true), out)
    assert.truthy(out:find("PASS same_stream", 1, true), out)
  end)

  it("a CUDA error in a scenario is its message, without a traceback unless POOLSH_TRACEBACK=1", function()
    local out, err, code = sim("--limit 32MiB run release_threshold --quiet")
    assert.equal(1, code, err)
    assert.truthy(out:find("out of memory under poolsh --limit 32.00 MiB", 1, true), out)
    assert.falsy(out:find("stack traceback", 1, true), out)
    out = sim("--limit 32MiB run release_threshold --quiet", "POOLSH_TRACEBACK=1")
    assert.truthy(out:find("stack traceback", 1, true), out)
  end)

  it("a former name runs the scenario after one line with its new name", function()
    for old, new in pairs(require("poolsh.scenario").renamed) do
      local out, err, code = sim("run " .. old .. " --quiet")
      assert.equal(0, code, err)
      assert.truthy(out:find("^poolsh run: " .. old .. " is now called " .. new .. ", as its lesson\n== " .. new .. ":"), out)
    end
    local scenarios = {}
    for _, n in ipairs(require "poolsh.scenarios") do scenarios[n] = true end
    for _, lesson in ipairs(require "poolsh.lessons") do   -- every lesson has its scenario
      assert.truthy(scenarios[lesson], lesson)
    end
  end)

  it("--step without a terminal does not pause and says so once", function()
    local out, err, code = sim("run same_stream --step --quiet")
    assert.equal(0, code, err)
    local _, n = out:gsub("standard input is not a terminal", "")
    assert.equal(1, n, out)
  end)

  it("--report with --all hands every scenario's run to save_scenarios", function()
    local d = tmpdir()
    local stub = ([[package.loaded["poolsh.export.html"] = { save_scenarios = function(path, runs)
      local list = {}
      for i, r in ipairs(runs) do
        local n1 = r.meta.notes[1] or { notices = {}, said = {} }
        list[i] = { title = r.meta.title, summary = r.meta.summary, ok = r.meta.verdict.ok,
          events = #r.events, backend = r.meta.backend, notes = #r.meta.notes,
          notice = n1.notices[1] or false, said = #n1.said }
      end
      local f = assert(io.open(%q, "w")); f:write(require("cjson").encode(list)); f:close()
      local h = assert(io.open(path, "w")); h:write("<html></html>"); h:close()
    end }]]):format(d .. "/runs.json")
    local out, err, code = sim("run --all --quiet --report " .. q(d .. "/all.html"), "LUA_INIT=" .. q(stub))
    local runs = require("cjson").decode(H.slurp(d .. "/runs.json"))
    local page = io.open(d .. "/all.html") ~= nil
    rmdir(d)
    assert.equal(0, code, out .. err)
    assert.truthy(page)
    assert.truthy(out:find("report: " .. d .. "/all.html", 1, true), out)
    local names = require "poolsh.scenarios"
    assert.equal(#names, #runs)
    for i, r in ipairs(runs) do
      assert.equal(names[i], r.title)
      assert.is_true(r.ok, r.title)
      assert.truthy(r.events > 0 and r.notes > 0 and r.summary and r.backend, r.title)
    end
    assert.equal("the free waits behind the work on the GPU", runs[1].notice)
  end)

  it("each step's note carries its notice and say lines", function()
    local scenario = require "poolsh.scenario"
    local res = scenario.run({ name = "t", run = function(ctx)
      ctx.step("one", "watch this"); ctx.say("measured 1"); ctx.say("measured 2"); ctx.step("two")
    end }, function() end)
    assert.same({ "watch this" }, res.notes[1].notices)
    assert.same({ "measured 1", "measured 2" }, res.notes[1].said)
    assert.same({}, res.notes[2].notices)
    assert.equal("2. two", res.notes[2].text)
  end)

  it("fits everything scenarios and run --all print in 80 columns, or in COLUMNS", function()
    for _, width in ipairs { 80, 100 } do
      local env = width == 80 and "env -u COLUMNS" or "COLUMNS=100"
      for _, args in ipairs { "scenarios", "run --all", "run --help", "run same_stream", "help" } do
        local out, err = sim(args, env)
        assert.truthy(widest(out) <= width, args .. " at " .. width .. ":\n" .. out)
        assert.truthy(widest(err) <= width, args .. " at " .. width .. ":\n" .. err)
      end
    end
    local out = sim("scenarios", "COLUMNS=100")
    assert.truthy(widest(out) > 80, out)          -- the width is used, not only 80
  end)

  it("folds a long failure under itself in the table", function()
    local d = tmpdir()
    local f = assert(io.open(d .. "/long.lua", "w"))
    f:write([[return { name = "long", summary = "fails with a long message", run = function(ctx)
      ctx.step("check something with a rather long description that goes on and on past the edge")
      ctx.expect.equal(1, 2, "a value whose name is long enough to need folding at the terminal's width")
    end }]])
    f:close()
    local out, err, code = sim("run " .. q(d .. "/long.lua"))
    rmdir(d)
    assert.equal(1, code, err)
    assert.truthy(out:find("FAILED at step 1. check something", 1, true), out)
    assert.truthy(widest(out) <= 80, out)
  end)
end)

describe("in a terminal (tmux)", function()
  local SOCK = ("poolsh-front-%d-%d"):format(os.time(), math.random(1e6))
  local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
  local function screen(opts) return (tmux("capture-pane -p " .. (opts or "") .. " -t t")) end
  local function send(text) tmux("send-keys -t t -l " .. q(text)); tmux("send-keys -t t Enter") end
  local function wait_for(pat) return H.poll(function() return screen():find(pat) end, 10) end
  local home
  local function start(cmd)
    tmux("kill-server")
    home = tmpdir()
    tmux("new-session -d -s t -x 80 -y 50 " .. q(("env HOME=%s POOLSH_HISTORY=%s/h %s %s")
      :format(q(home), q(home), H.exe, cmd)))
  end
  after_each(function() tmux("kill-server"); if home then rmdir(home) end end)

  it("the REPL's banner names poolsh and help(); help() and help \"Pool:alloc\" answer", function()
    start("--backend=sim")
    assert.truthy(wait_for("poolsh>"), screen())
    local s = screen()
    assert.truthy(s:find("poolsh 0.1.0 (Lua 5.4", 1, true), s)
    assert.truthy(s:find("help() shows what poolsh can do", 1, true), s)
    send("help()")
    assert.truthy(wait_for("device: sim backend"), screen())
    assert.truthy(screen():find("Commands (poolsh COMMAND --help for each):", 1, true), screen())
    tmux("send-keys -t t C-l")
    send('help "Pool:alloc"')
    assert.truthy(wait_for("Allocates `size` bytes"), screen())
    send("help(poolsh.trace.start)")
    assert.truthy(wait_for("poolsh.trace.start%(%[options%]%)"), screen())
    send('help "nope"')
    assert.truthy(wait_for("help: no entry for 'nope'"), screen())
  end)

  it("a command's one-line error is folded at the terminal's width", function()
    start("--backend=sim run nope_nope_nope_nope_nope_nope_nope_nope; sleep 30")
    assert.truthy(wait_for("lists them%)"), screen())
    local s = screen("-J")   -- lines tmux wrapped joined again: only poolsh's folds remain
    assert.truthy(s:find("unknown scenario\n?%s*'nope_nope_nope_nope_nope_nope_nope_nope'"), s)
    for l in s:gmatch("[^\n]+") do assert.truthy(utf8.len(l) <= 80, l) end
    assert.truthy(s:find("\n[^\n]*lists them%)"), s)   -- on a line of its own
  end)

  it("run colours PASS and pauses before each step with --step", function()
    start("--backend=sim run same_stream --step; sleep 30")
    assert.truthy(wait_for("press Enter for step 1"), screen())
    assert.falsy(screen():find(" 1. allocate", 1, true), screen())
    tmux("send-keys -t t Enter")
    assert.truthy(wait_for("press Enter for step 2"), screen())
    assert.truthy(screen():find(" 1. allocate 4 MiB", 1, true), screen())
    tmux("send-keys -t t Enter"); H.poll(function() return screen():find("step 3") end, 5)
    tmux("send-keys -t t Enter")
    assert.truthy(wait_for("PASS same_stream"), screen())
    assert.truthy(screen("-e"):find("32mPASS\27%[0m[^\n]* same_stream"), screen("-e"))   -- green
  end)
end)

describe("README", function()
  it("names files that exist in its compare example", function()
    local readme = H.slurp("README.md")
    local file = readme:match("poolsh compare (%S+%.pickle%.gz)")
    assert.truthy(file, "no compare example")
    assert.truthy(io.open(file) ~= nil, file .. " does not exist")
  end)
end)
