-- The REPL in a real pseudo-terminal (tmux): printing, multi-line input,
-- errors, completion, history, Ctrl-C.
local H = require "helpers"

-- a tmux server of this run's own, so that runs side by side do not meet
local SOCK = ("poolsh-test-%d-%d"):format(os.time(), math.random(1e6))
-- the history file in a directory of this run's own (removed at the end)
local histdir = os.tmpname()
os.remove(histdir)
assert(os.execute("mkdir -m 0700 " .. H.quote(histdir)))
local hist = histdir .. "/history"

local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
local function screen() return (tmux("capture-pane -p -t repl")) end
local KEYS = { Enter = true, Tab = true, Up = true, ["C-c"] = true, ["C-d"] = true }
-- Sends text literally (-l: "end" is not the End key) and key names as keys.
local function send(...)
  for i = 1, select("#", ...) do
    local k = select(i, ...)
    tmux("send-keys -t repl " .. (KEYS[k] and "" or "-l ") .. H.quote(k))
  end
end
local function wait_for(pat, timeout)
  return H.poll(function() return screen():match(pat) end, timeout or 5)
end
local function prompts() local _, n = screen():gsub("[>]", ""); return n end
-- Types a line and waits for the next prompt.
local function line(text)
  local n = prompts()
  send(text, "Enter")
  H.poll(function() return prompts() > n end, 5)
end

local function start(backend, env)
  tmux("kill-server")
  local cmd = ("env POOLSH_HISTORY=%s %s %s --backend=%s"):format(hist, env or "", H.exe,
                                                                  backend or "sim")
  tmux("new-session -d -s repl -x 200 -y 50 " .. H.quote(cmd))
  assert.truthy(wait_for("poolsh>"), "no prompt: " .. screen())
end
local function stop() tmux("kill-server") end

-- Starts poolsh with more arguments, its stderr in run.err; exec'd, so
-- that the pid written to run.pid is poolsh's; else its exit status goes
-- to run.rc.
local function start_run(args, run, exec)
  tmux("kill-server")
  local cmd = ("env POOLSH_HISTORY=%s %s --backend=sim %s 2>%s"):format(hist, H.exe, args, run.err)
  if exec then cmd = ("echo $$ >%s; exec %s"):format(run.pid, cmd)
  else cmd = ("%s; echo $? >%s"):format(cmd, run.rc) end
  tmux("new-session -d -s repl -x 200 -y 50 " .. H.quote(cmd))
  assert.truthy(wait_for("poolsh>"), "no prompt: " .. screen())
end

local function tmp_paths()
  local base = os.tmpname()
  os.remove(base)
  return { err = base .. ".err", pid = base .. ".pid", rc = base .. ".rc", trace = base .. ".json",
           clean = function()
             for _, ext in ipairs { ".err", ".pid", ".rc", ".json" } do os.remove(base .. ext) end
           end }
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- Waits until what poolsh said on stderr tells the trace is saved.
local function saved(run)
  return H.poll(function()
    local err = read_file(run.err) or ""
    return err:match("trace saved to") and err
  end, 5) or read_file(run.err) or ""
end

-- The trace file parses as JSON with events in it.
local function assert_trace(run)
  local text = assert(read_file(run.trace), "no trace file " .. run.trace)
  local doc = require("cjson").decode(text)
  assert.is_table(doc)
  assert.matches('"alloc"', text)
end

describe("the REPL", function()
  after_each(stop)
  teardown(function() os.execute("rm -rf " .. H.quote(histdir)) end)

  it("prints expression values, tables readably", function()
    start()
    send("1 + 2", "Enter")
    assert.truthy(wait_for("\n3\n"))
    send("{1, 2, x = 'y', t = {true}}", "Enter")
    assert.truthy(wait_for('{1, 2, t = {true}, x = "y"}'), screen())
    send("poolsh.size('4 MiB'), 'str'", "Enter")
    assert.truthy(wait_for('4194304%s+"str"'), screen())
  end)

  it("prints what changed after each statement: counters, deltas, reuse and why", function()
    start()
    line("s = poolsh.stream(); p = poolsh.pool{release_threshold = 'max'}")
    send("b = p:alloc('4 MiB', s)", "Enter")
    assert.truthy(wait_for("used 4%.00 MiB \27%[32m%+4%.00 MiB") or
                  wait_for("used 4%.00 MiB %(.-%+4%.00 MiB"), screen())
    assert.truthy(wait_for("\n  b 4%.00 MiB from p on s: fresh memory"), screen())
    line("b:free()")
    send("c = p:alloc('4 MiB', s)", "Enter")
    assert.truthy(wait_for("\n  c 4%.00 MiB from p on s: reused b's memory %(.-stream order"), screen())
    line("poolsh.watch(false)")
    send("d = p:alloc('1 MiB', s)", "Enter")
    send("print('after' .. 'd')", "Enter")
    assert.truthy(wait_for("afterd"), screen())
    assert.is_nil(screen():match("d 1%.00 MiB"))
  end)

  it("announces buffers the collector freed under the statement that freed them", function()
    start()
    line("s = poolsh.stream(); p = poolsh.pool{release_threshold = 'max'}")
    line("x = p:alloc('4 MiB', s); y = p:alloc('12 MiB', s)")
    line("x, y = nil, nil")
    assert.is_nil(screen():find("collected:", 1, true))        -- nothing freed yet
    send("collectgarbage(); collectgarbage()", "Enter")
    assert.truthy(wait_for("used 0 B %(%-16%.00 MiB%)") or wait_for("used 0 B %(.-%-16%.00 MiB"),
      screen())
    assert.truthy(wait_for("collected: x, y %(16%.00 MiB%) \u{2014} no variable held them"), screen())
  end)

  it("names objects after the global they are first assigned to, in every line", function()
    start()
    line("s = poolsh.stream(); p = poolsh.pool{release_threshold = 0}")
    send("b7 = p:alloc('4 MiB', s)", "Enter")             -- b7 printed as b1 before
    assert.truthy(wait_for("\n  b7 4%.00 MiB from p on s: fresh memory"), screen())
    line("b7:free()")
    send("a = p:alloc('4 MiB', s)", "Enter")
    assert.truthy(wait_for("\n  a 4%.00 MiB from p on s: reused b7's memory"), screen())
    line("keep = a")                                     -- a keeps its first name
    send("a = p:alloc('1 MiB', s)", "Enter")             -- another buffer under a taken name
    assert.truthy(wait_for("\n  a#2 1%.00 MiB from p on s: fresh memory"), screen())
    send("print(keep.name .. ',' .. a.name)", "Enter")
    assert.truthy(wait_for("\na,a#2\n"), screen())
    send("local z = p:alloc('2 MiB', s); z:free()", "Enter")   -- a local dies with its line
    assert.truthy(wait_for("\n  b%d+ 2%.00 MiB from p on s: "), screen())
    send("keep:free(); a:free(); s:sync()", "Enter")
    assert.truthy(wait_for("p  reserved [^\n]*s:sync%(%) released"), screen())
    line("p.release_threshold = 'max'; a = p:alloc('4 MiB', s); a:free(); s:sync()")
    send("p:trim(0)", "Enter")
    assert.truthy(wait_for("p:trim%(%) released"), screen())
    send("big = p:alloc('1 TiB', s)", "Enter")
    assert.truthy(wait_for("allocating 1%.00 TiB from pool p on stream s"), screen())
    for _, old in ipairs { "p1:trim", "s1:sync", "from p1", "on s1", "b1" } do
      assert.is_nil(screen():find(old, 1, true), screen())
    end
  end)

  it("runs multi-line input", function()
    start()
    send("for i = 1, 3 do", "Enter")
    assert.truthy(wait_for("%.%.%.>"), screen())
    line("print('line' .. i * 10)")
    line("end")
    assert.truthy(wait_for("line30"), screen())
    assert.matches("line10\nline20\nline30", screen())
  end)

  it("does not lose pasted lines typed ahead of the prompt", function()
    start()
    send("for i = 1, 2 do", "Enter", "print('pasted' .. i)", "Enter", "end", "Enter")
    assert.truthy(wait_for("pasted2"), screen())
  end)

  it("prints an error and carries on", function()
    start()
    line("x = 5")
    line("error('kaboom')")
    assert.truthy(wait_for("kaboom"))
    line("poolsh.pool{bogus = 1}")
    assert.truthy(wait_for("unknown option 'bogus'"))
    send("print('x is', x)", "Enter")
    assert.truthy(wait_for("x is%s+5"), screen())
  end)

  it("completes poolsh.de to default_pool, default_stream, device...", function()
    start()
    send("poolsh.de", "Tab", "Tab")
    assert.truthy(wait_for("default_stream"), screen())
    local sc = screen()
    assert.matches("default_pool", sc)
    assert.matches("device_count", sc)
  end)

  it("completes p:al to p:alloc", function()
    start()
    line("p = poolsh.pool{}")
    send("p:al", "Tab")
    assert.truthy(wait_for("p:alloc"), screen())
    send("('1 KiB').size", "Enter")
    assert.truthy(wait_for("\n1024\n"), screen())
  end)

  it("keeps history across sessions", function()
    start()
    send("print('remember ' .. 6 * 7)", "Enter")
    assert.truthy(wait_for("remember 42"))
    send("C-d")
    H.poll(function() return not screen():match("poolsh>") or screen() == "" end, 3)
    stop()
    start()
    send("Up")
    assert.truthy(wait_for("poolsh> print%('remember ' %.%. 6 %* 7%)"), screen())
    send("Enter")
    assert.truthy(wait_for("remember 42"))
  end)

  it("Ctrl-C interrupts a running loop and keeps the state", function()
    start()
    line("keep = 'kept'; s = poolsh.stream()")
    send("while true do end", "Enter")
    H.rsleep(0.5)
    send("C-c")
    assert.truthy(wait_for("interrupted"), screen())
    send("print(keep, s.live)", "Enter")
    assert.truthy(wait_for("kept%s+true"), screen())
    send("poolsh.spin(s, '10 ms'); s:sync(); print('after spin')", "Enter")
    assert.truthy(wait_for("after spin"), screen())
  end)

  it("Ctrl-C at the prompt drops the line typed so far, and the state survives", function()
    start()
    line("keep = 'kept'")
    send("C-c")                                   -- on an empty line
    assert.truthy(wait_for("poolsh> %^C\npoolsh> $") or wait_for("%^C\npoolsh>"), screen())
    send("print('half")                           -- on a half-typed line
    send("C-c")
    assert.truthy(wait_for("print%('half%^C\npoolsh>"), screen())
    send("for i = 1, 2 do", "Enter")              -- on a continuation line
    assert.truthy(wait_for("%.%.%.>"), screen())
    send("C-c")
    assert.truthy(wait_for("%.%.%.> %^C\npoolsh>"), screen())
    send("print('still ' .. keep)", "Enter")
    assert.truthy(wait_for("\nstill kept\n"), screen())
    assert.is_nil(screen():match("half\n"))       -- the dropped line never ran
  end)

  it("Ctrl-D on an empty line exits and saves --trace, saying where", function()
    local run = tmp_paths()
    start_run("--trace " .. run.trace, run)
    line("b = poolsh.pool{}:alloc(64)")
    send("C-d")
    local err = saved(run)
    assert.truthy(H.poll(function() return read_file(run.rc) end, 5), "poolsh did not end")
    assert.equal("0\n", read_file(run.rc))
    assert.matches("poolsh: trace saved to " .. run.trace:gsub("%p", "%%%0") .. " %(%d+ events%)", err)
    assert.matches("1 buffer still live at exit", err)
    assert_trace(run)
    run.clean()
  end)

  for _, how in ipairs { "SIGTERM", "SIGHUP" } do
    it(how .. " at the prompt saves --trace and prints the leak report", function()
      local run = tmp_paths()
      start_run("--trace " .. run.trace, run, true)
      line("b = poolsh.pool{}:alloc(64)")
      local pid = assert(read_file(run.pid)):match("%d+")
      H.sh("kill -" .. how:sub(4) .. " " .. pid)
      local err = saved(run)
      assert.matches("1 buffer still live at exit", err)
      assert.matches("trace saved to", err)
      assert_trace(run)
      run.clean()
    end)
  end

  it("SIGHUP of a closed terminal (tmux kill-session) saves --trace", function()
    local run = tmp_paths()
    start_run("--trace " .. run.trace, run)
    line("b = poolsh.pool{}:alloc(64)")
    tmux("kill-session -t repl")
    local err = saved(run)
    assert.matches("1 buffer still live at exit", err)
    assert_trace(run)
    run.clean()
  end)

  it("SIGTERM while a statement runs (even under pcall) saves --trace", function()
    local run = tmp_paths()
    start_run("--trace " .. run.trace, run, true)
    send("b = poolsh.pool{}:alloc(64); while true do pcall(function() while true do end end) end",
         "Enter")
    H.rsleep(0.5)
    H.sh("kill -TERM " .. assert(read_file(run.pid)):match("%d+"))
    local err = saved(run)
    assert.matches("terminated", err)
    assert.matches("1 buffer still live at exit", err)
    assert_trace(run)
    run.clean()
  end)

  it("os.exit(3) at the prompt saves --trace and exits 3", function()
    local run = tmp_paths()
    start_run("--trace " .. run.trace, run)
    send("b = poolsh.pool{}:alloc(64); os.exit(3)", "Enter")
    local err = saved(run)
    assert.truthy(H.poll(function() return read_file(run.rc) end, 5), "poolsh did not end")
    assert.equal("3\n", read_file(run.rc))
    assert.matches("1 buffer still live at exit", err)
    assert_trace(run)
    run.clean()
  end)

  it("an error at the prompt is its message; poolsh.repl.traceback() has the rest", function()
    start()
    line("poolsh.size('12 parsecs')")
    assert.truthy(wait_for("invalid size '12 parsecs'"), screen())
    local sc = screen()
    assert.is_nil(sc:find("stack traceback", 1, true), sc)
    assert.is_nil(sc:find("poolsh/", 1, true), sc)
    send("poolsh.repl.traceback()", "Enter")
    assert.truthy(wait_for("stack traceback:"), screen())
    assert.matches("poolsh/init%.lua:%d+: in function 'poolsh%.size'", screen())
  end)

  it("POOLSH_TRACEBACK=1 prints the traceback with the error", function()
    start("sim", "POOLSH_TRACEBACK=1")
    line("poolsh.size('12 parsecs')")
    assert.truthy(wait_for("stack traceback:"), screen())
    assert.matches("poolsh/init%.lua:%d+: in function 'poolsh%.size'", screen())
  end)

  it("does not complete poolsh's internals after poolsh.", function()
    start()
    send("poolsh.", "Tab", "Tab")
    assert.truthy(wait_for("poolsh%.default_stream"), screen())
    local sc = screen()
    for _, name in ipairs { "bench_c", "bench_floor", "bench_fill", "bench_heap", "set_parsers",
                            "configure", "core" } do
      assert.is_nil(sc:match("poolsh%." .. name .. "%f[^%w_]"), name .. " offered:\n" .. sc)
    end
  end)

  it("Ctrl-C interrupts a long device wait #cuda_only", function()
    if H.backend() ~= "cuda" then pending("cuda only") return end
    start("cuda")
    send("s = poolsh.stream(); poolsh.spin(s, '60 s'); s:sync()", "Enter")
    H.rsleep(1)
    send("C-c")
    assert.truthy(wait_for("interrupted", 5), screen())
    send("print('alive')", "Enter")
    assert.truthy(wait_for("alive", 5), screen())
  end)
end)

describe("completion's names", function()
  local poolsh = H.poolsh
  local complete = require("poolsh.repl").complete

  it("offer every field the C side lists (mt.fields), and every method", function()
    local s, p = poolsh.stream(), poolsh.pool{}
    local b <close> = p:alloc(64, s)
    local env = { s = s, p = p, b = b, e = poolsh.event() }
    for name, v in pairs(env) do
      local mt = getmetatable(v)
      local got = {}
      for _, w in ipairs(complete(name .. ".", env)) do got[w] = true end
      assert.is_true(#mt.fields >= 4, mt.__name)
      for _, f in ipairs(mt.fields) do
        assert.is_true(got[name .. "." .. f], mt.__name .. " completion misses " .. f)
      end
      for m in pairs(mt.methods) do
        assert.same({ name .. ":" .. m }, (function()
          local only = {}
          for _, w in ipairs(complete(name .. ":" .. m, env)) do
            if w == name .. ":" .. m then only[#only + 1] = w end
          end
          return only
        end)())
      end
    end
    assert.same({ "b.reuse_rule", "b.reused", "b.reused_from" }, complete("b.reuse", env))
    env.e:destroy(); p:destroy(); s:destroy()
  end)

  it("leave out poolsh's internals, which stay callable", function()
    local env = { poolsh = poolsh }
    local got = {}
    for _, w in ipairs(complete("poolsh.", env)) do got[w] = true end
    assert.is_true(got["poolsh.pool"] and got["poolsh.stream"] and got["poolsh.trace"])
    for _, name in ipairs { "bench_c", "bench_floor", "bench_fill", "bench_heap", "set_parsers",
                            "configure", "core" } do
      assert.is_nil(got["poolsh." .. name], name)
      assert.is_not_nil(poolsh[name], name)
    end
    assert.same({}, complete("poolsh.bench", env))
    -- other tables keep such names
    assert.same({ "t.core" }, complete("t.co", { t = { core = 1 } }))
  end)
end)
