--- poolsh.spawn, poolsh.connect, poolsh --serve and poolsh.Process
-- (docs/processes.md, docs/api.md "Processes").
local H = require "helpers"
local poolsh = H.poolsh

-- A script file with text, removed by the returned function.
local function script(text)
  local path = os.tmpname() .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

-- Whether path exists (a socket too, which io.open cannot open).
local function exists(path) return os.rename(path, path) ~= nil end

-- Whether a process with this pid still exists (a zombie counts).
local function present(pid) return exists("/proc/" .. pid .. "/stat") end

local function my_pid()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("n")
  f:close()
  return pid
end

local function clock() return os.time() + os.clock() end

describe("poolsh.spawn() and p:eval", function()
  it("runs chunks in a second poolsh on the same device", function()
    local p <close> = poolsh.spawn()
    assert.are.equal("number", math.type(p.pid) and "number")
    assert.is_true(p.serving)
    assert.is_true(p.open)
    assert.is_nil(p.status)
    assert.truthy(tostring(p):find("process " .. p.pid, 1, true))
    local d = poolsh.device()
    local name, total, backend = p:eval("local d = poolsh.device() return d.name, d.total, poolsh.backend()")
    assert.are.equal(d.name, name)
    assert.are.equal(d.total, total)
    assert.are.equal(poolsh.backend(), backend)
    assert.are.same({ p.pid }, poolsh.children())
  end)

  it("passes arguments and results: nil holes, integers, floats, nested tables", function()
    local p <close> = poolsh.spawn()
    local t = { 1, 2.5, "a\0b", true, false, { deep = { x = -7 } }, [10] = "ten", [2.5] = "key" }
    assert.are.equal(5, select("#", p:eval("return ...", nil, 2, nil, t, nil)))
    local a, b, c, back = p:eval("return ...", nil, 2, nil, t, nil)
    assert.is_nil(a)
    assert.are.equal(2, b)
    assert.are.equal("integer", math.type(b))
    assert.is_nil(c)
    assert.are.same(t, back)
    assert.are.equal("float", math.type(back[2]))
    local big = ("x"):rep(1024 * 1024)
    assert.are.equal(#big, p:eval("return #...", big))
    assert.are.equal(0, select("#", p:eval("x = 1")))
  end)

  it("keeps the child's globals from one eval to the next", function()
    local p <close> = poolsh.spawn()
    p:eval("pool = poolsh.pool{} b = pool:alloc(4096)")
    assert.are.equal(4096, p:eval("return b.size"))
    assert.are.equal(4096, p:eval("return pool:stats().used"))
    p:eval("b:free() pool:destroy()")
  end)

  it("raises the child's error, prefixed with its pid", function()
    local p <close> = poolsh.spawn()
    local e = H.err(p.eval, p, "error('boom')")
    assert.are.equal("process " .. p.pid .. ": eval:1: boom", e)
    e = H.err(p.eval, p, "return +")
    assert.truthy(e:find("^process " .. p.pid .. ": eval:1: "), e)
    e = H.err(p.eval, p, "error({})")
    assert.are.equal("process " .. p.pid .. ": (error object is a table value)", e)
    e = H.err(p.eval, p, "return print")
    assert.are.equal("process " .. p.pid .. ": eval: result 1 is a function, which cannot be sent back", e)
    assert.are.equal(3, p:eval("return 3"))      -- the child serves on
  end)

  it("raises, and serves on, when a result cannot be encoded (nested, too large)", function()
    local p <close> = poolsh.spawn()
    local e = H.err(p.eval, p, "return 1, {print}")
    assert.are.equal("process " .. p.pid .. ": cannot send a function inside a table (result 2 "
      .. "of eval): only strings, numbers, booleans, nil and tables of them travel", e)
    e = H.err(p.eval, p, "return ('x'):rep(64 << 20)")
    assert.are.equal("process " .. p.pid .. ": message too large (more than 64 MiB)", e)
    e = H.err(p.eval, p, "error(('x'):rep(64 << 20), 0)")   -- an error too large to send back
    assert.are.equal("process " .. p.pid .. ": message too large (more than 64 MiB)", e)
    assert.are.equal(3, p:eval("return 3"))
    assert.is_nil(p.status)
  end)

  it("refuses what cannot be sent, and says what it was", function()
    local p <close> = poolsh.spawn()
    local e = H.err(p.send, p, print)
    assert.truthy(e:find("cannot send a function (the message): only strings, numbers, booleans, nil and tables of them travel", 1, true), e)
    e = H.err(p.send, p, { ok = 1, bad = io.stdout })
    assert.truthy(e:find("cannot send a userdata inside a table (the message)", 1, true), e)
    e = H.err(function() return p:eval("return ...", 1, coroutine.create(print)) end)
    assert.truthy(e:find("cannot send a thread (argument 3 of eval)", 1, true), e)
    local cyc = {}
    cyc.self = cyc
    e = H.err(p.send, p, cyc)
    assert.truthy(e:find("tables nested deeper than 100 levels", 1, true), e)
    e = H.err(function() return p:send(1, 2) end)
    assert.truthy(e:find("bad argument #2 to 'send' (send takes one value", 1, true), e)
    e = H.err(function() return p:eval({}) end)
    assert.truthy(e:find("bad argument #1 to 'eval' (the table holds no code: {code, timeout_s = seconds})", 1, true), e)
    e = H.err(function() return p:eval(true) end)
    assert.truthy(e:find("bad argument #1 to 'eval' (string expected, got boolean)", 1, true), e)
    assert.are.equal(1, p:eval("return 1"))       -- nothing was sent: the channel is whole
  end)

  it("refuses a message over 64 MiB before sending it; the largest that fits arrives", function()
    local p <close> = poolsh.spawn()
    local e = H.err(p.send, p, ("x"):rep((64 << 20) - 4))   -- its frame is 10 bytes over
    assert.truthy(e:find("message too large (more than 64 MiB)", 1, true), e)
    assert.is_true(p.open)
    local fits = (64 << 20) - 14              -- 64 MiB less kind, sequence, count, tag, length
    p:send(("y"):rep(fits))
    assert.are.equal(fits, p:eval("return #poolsh.parent:recv(10)"))
  end)

  it("carries messages both ways, and keeps those that come during an eval", function()
    local p <close> = poolsh.spawn()
    p:send({ hello = "child" })
    assert.are.same({ hello = "child" }, p:eval("return poolsh.parent:recv(5)"))
    p:eval("poolsh.parent:send('first') poolsh.parent:send(nil) poolsh.parent:send(3)")
    assert.are.equal("first", p:recv(5))
    assert.is_nil(p:recv(5))
    assert.are.equal(3, p:recv(5))
    assert.are.equal(my_pid(), p:eval("return poolsh.parent.pid"))
    assert.is_false(p:eval("return poolsh.parent.serving"))
  end)

  it("times out a recv cleanly", function()
    local p <close> = poolsh.spawn()
    local t0 = clock()
    local e = H.err(p.recv, p, 0.2)
    assert.are.equal("timed out after 0.2 s waiting for a message from process " .. p.pid, e)
    assert.is_true(clock() - t0 < 3)
    e = H.err(p.recv, p, 0)                          -- an integer reads as one
    assert.are.equal("timed out after 0 s waiting for a message from process " .. p.pid, e)
    e = H.err(function() return p:recv(-1) end)
    assert.truthy(e:find("bad argument #1 to 'recv' (timeout must be >= 0 and finite (seconds))", 1, true), e)
    e = H.err(p.wait, p, 0.1)
    assert.are.equal("timed out after 0.1 s waiting for process " .. p.pid .. " to exit", e)
    p:send("late")                                   -- the channel is whole
    assert.are.equal("late", p:eval("return poolsh.parent:recv(5)"))
  end)
end)

describe("a script child", function()
  it("gets its arguments and talks back through poolsh.parent", function()
    local path = script([[
      local a, b = ...
      poolsh.parent:send({ a = a, b = b, arg0 = arg[0], backend = poolsh.backend() })
      local n = poolsh.parent:recv(10)
      poolsh.parent:send(n * 2)
    ]])
    finally(function() os.remove(path) end)
    local p <close> = poolsh.spawn(path, "x", 7)
    assert.is_false(p.serving)
    assert.are.same({ a = "x", b = "7", arg0 = path, backend = poolsh.backend() }, p:recv(10))
    p:send(21)
    assert.are.equal(42, p:recv(10))
    assert.are.equal(0, p:wait(10))
    assert.are.equal(0, p.status)
    local e = H.err(p.recv, p, 1)
    assert.are.equal("process " .. p.pid .. " exited with status 0", e)
  end)

  it("does not serve eval", function()
    local path = script("poolsh.parent:recv()")
    finally(function() os.remove(path) end)
    local p <close> = poolsh.spawn(path)
    local e = H.err(p.eval, p, "return 1")
    assert.are.equal("process " .. p.pid .. " does not serve eval (it runs a script: talk to it with send and recv)", e)
  end)

  it("that exits or crashes: every call says so with its status", function()
    local path = script("os.exit(3)")
    finally(function() os.remove(path) end)
    local p <close> = poolsh.spawn(path)
    local msg = "process " .. p.pid .. " exited with status 3"
    assert.are.equal(msg, H.err(p.recv, p, 10))
    assert.are.equal(msg, H.err(p.send, p, 1))
    assert.are.equal(msg, H.err(p.kill, p))
    assert.are.equal(3, p:wait())
    assert.is_false(p.open)
    local q <close> = poolsh.spawn()
    local pid = q.pid
    assert.are.equal("process " .. pid .. " was killed by signal 11 (SIGSEGV)",
                     H.err(q.eval, q, "os.execute('kill -SEGV $PPID') poolsh.sleep(1) return 1"))
    local code, sig = q:wait()
    assert.are.same({ 139, "SIGSEGV" }, { code, sig })
    assert.are.equal("poolsh.Process (process " .. pid .. " was killed by signal 11 (SIGSEGV))", tostring(q))
  end)

  it("p:kill sends a signal", function()
    local p <close> = poolsh.spawn()
    p:kill("KILL")
    assert.are.same({ 137, "SIGKILL" }, { p:wait(10) })
    assert.are.equal(137, p.status)
    local q <close> = poolsh.spawn()
    q:kill()
    assert.are.same({ 143, "SIGTERM" }, { q:wait(10) })
    local r <close> = poolsh.spawn()
    local e = H.err(r.kill, r, "BOGUS")
    assert.truthy(e:find("unknown signal 'BOGUS'", 1, true), e)
  end)
end)

describe("closing", function()
  it("closes twice, and then refuses use", function()
    local p = poolsh.spawn()
    local pid = p.pid
    assert.are.equal(0, p:close())
    assert.is_false(present(pid))
    assert.are.same({}, poolsh.children())
    assert.are.equal(0, select("#", p:close()))
    assert.is_false(p.open)
    local e = H.err(p.eval, p, "return 1")
    assert.are.equal("attempt to use a closed poolsh.Process (process " .. pid .. ")", e)
    assert.are.equal("poolsh.Process (process " .. pid .. " exited with status 0)", tostring(p))
  end)

  it("ends a child that does not listen: SIGTERM after the grace time", function()
    local path = script("poolsh.parent:send('running') while true do end")
    finally(function() os.remove(path) end)
    local p = poolsh.spawn(path)
    assert.are.equal("running", p:recv(10))
    local t0 = clock()
    assert.are.same({ 143, "SIGTERM" }, { p:close() })
    assert.is_true(clock() - t0 < 6)
  end)

  it("reaps the child of a collected Process", function()
    local pid
    do
      local p = poolsh.spawn()
      pid = p.pid
      assert.are.equal(1, p:eval("return 1"))
    end
    collectgarbage()
    collectgarbage()
    assert.are.same({}, poolsh.children())
    assert.is_false(present(pid))
  end)

  it("the child ends when the parent goes", function()
    local out, err, code = H.poolsh_cmd("--backend=sim -e " .. H.quote(
      "local p = poolsh.spawn() print(p.pid) io.stdout:flush() os.exit(0)"))
    assert.are.equal(0, code, err)
    local pid = tonumber(out:match("%d+"))
    assert.truthy(H.poll(function() return not present(pid) end, 5))
  end)
end)

describe("the child's options", function()
  it("are the parent's: backend, sim memory, limits", function()
    local out, err, code = H.poolsh_cmd("--backend=sim --sim-memory=3GiB --limit=64MiB -e " .. H.quote(
      "local p <close> = poolsh.spawn() print(p:eval('local d = poolsh.device() " ..
      "return poolsh.backend(), d.total, d.limit'))"))
    assert.are.equal(0, code, err)
    assert.are.equal("sim\t3221225472\t67108864\n", out)
  end)

  it("spawn's bad arguments and a missing program", function()
    local e = H.err(function() return poolsh.spawn({}) end)
    assert.truthy(e:find("bad argument #1 to '[%w.]*spawn' %(string expected, got table%)"), e)
    e = H.err(function() return poolsh.spawn(nil, "x") end)
    assert.truthy(e:find("script expected when arguments follow", 1, true), e)
    e = H.err(function() return poolsh.spawn("x.lua", {}) end)
    assert.truthy(e:find("bad argument #2 to '[%w.]*spawn' %(string expected, got table%)"), e)
    assert.are.equal("poolsh.spawn: cannot read script /nonexistent/x.lua: No such file or directory",
                     H.err(poolsh.spawn, "/nonexistent/x.lua"))
    local o, e = H.sh("env POOLSH_BIN=/nonexistent/poolsh lua5.4 -e " .. H.quote(
      "package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path " ..
      "package.cpath = '" .. H.build .. "/lib/?.so;' .. package.cpath " ..
      "local poolsh = require 'poolsh' print(select(2, pcall(poolsh.spawn)))"))
    assert.truthy((o .. e):find("poolsh.spawn: POOLSH_BIN=/nonexistent/poolsh is not an executable file", 1, true), o .. e)
  end)

  it("poolsh.parent is nil in a process that was not spawned", function()
    assert.is_nil(poolsh.parent)
    assert.truthy(H.err(poolsh.serve):find("poolsh.serve: this process was not spawned: give a socket path", 1, true))
  end)
end)

describe("poolsh --serve and poolsh.connect", function()
  local base, sock, errf
  before_each(function()
    base = os.tmpname()
    os.remove(base)
    sock, errf = base .. ".sock", base .. ".err"
  end)
  local servers = {}
  after_each(function()
    for _, pid in ipairs(servers) do os.execute("kill -KILL " .. pid .. " 2>/dev/null") end
    servers = {}
    os.remove(sock) os.remove(errf)
  end)

  -- Starts a server; returns its pid.
  local function serve()
    local f = assert(io.popen(("%s --backend=sim --serve %s 2>%s </dev/null & echo $!")
      :format(H.exe, sock, errf)))
    local pid = tonumber(f:read("l"))
    f:close()
    servers[#servers + 1] = pid                      -- ended after the test, whatever happens
    assert.truthy(H.poll(function()
      local f = io.open(errf)
      local said = f and f:read("a") or ""
      if f then f:close() end
      return said:find("serving on", 1, true)
    end, 5), "not serving")
    return pid
  end

  it("serves one client at a time, the same state for each", function()
    local pid = serve()
    local c = poolsh.connect(sock)
    assert.are.equal(pid, c.pid)
    assert.is_true(c.serving)
    assert.are.equal(1, c:eval("n = (n or 0) + 1 return n"))
    c:send("kept")
    c:close()
    local d <close> = poolsh.connect(sock)
    assert.are.equal(2, d:eval("return n + 1"))
    assert.are.equal("process " .. pid .. ": no", H.err(d.eval, d, "error('no', 0)"))
    local e = H.err(d.eval, d, "return {f = print}")   -- the session goes on
    assert.truthy(e:find("^process " .. pid .. ": cannot send a function inside a table"), e)
    assert.are.equal(2, d:eval("return n + 1"))
    assert.truthy(H.err(d.wait, d):find("the server at " .. sock .. " was not spawned by this process", 1, true))
    d:close()
    local o, e, code = H.poolsh_cmd("--backend=sim --serve " .. sock)
    assert.are.equal(1, code)
    assert.truthy((o .. e):find("poolsh.serve: " .. sock .. ": a poolsh already serves there", 1, true), o .. e)
    os.execute("kill -TERM " .. pid)
    assert.truthy(H.poll(function() return not exists(sock) end, 5), "the socket stays")
    assert.truthy(H.slurp(errf):find("poolsh: serving on " .. sock, 1, true))
  end)

  it("sends a reply larger than the socket's buffer (it waits for the client to read)", function()
    serve()
    local c <close> = poolsh.connect(sock, 5)
    assert.are.equal(32 << 20, #c:eval("return ('x'):rep(32 << 20)"))
    assert.are.equal(1, c:eval("return 1"))
  end)

  -- A socket at sock whose backlog is full and that nobody accepts on
  -- (python listens with a backlog of 0 and takes it up); its pid.
  local function full_backlog()
    local py = "import socket,sys,os,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); "
      .. "s.listen(0); c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); "
      .. "print(os.getpid(), flush=True); time.sleep(20)"
    local f = assert(io.popen("python3 -c " .. H.quote(py) .. " " .. sock .. " &"))
    local pid = tonumber(f:read("l"))
    f:close()
    assert.truthy(pid, "python did not start")
    servers[#servers + 1] = pid
    return pid
  end

  it("does not hang on a server that does not accept: a timeout, Ctrl-C", function()
    full_backlog()
    local t0 = clock()
    assert.are.equal(("poolsh.connect: timed out after 0.3 s: the server at %s does not accept "
      .. "(busy with other clients, or stopped)"):format(sock), H.err(poolsh.connect, sock, 0.3))
    assert.is_true(clock() - t0 < 3)
    local e = H.err(function() return poolsh.connect(sock, -1) end)
    assert.truthy(e:find("bad argument #2 to '[%w.]*connect' %(timeout must be >= 0"), e)
    local o, err, code = H.poolsh_cmd("--backend=sim -e " .. H.quote(
      "pcall(function() local f = io.popen('kill -INT $PPID'); f:close() end); "
      .. "print(select(2, pcall(poolsh.connect, '"
      .. sock .. "')))"))
    assert.are.equal(0, code, err)
    assert.are.equal("interrupted connecting to the server at " .. sock .. "\n", o)
    o, err, code = H.poolsh_cmd("--backend=sim --serve " .. sock)   -- busy counts as live
    assert.are.equal(1, code)
    assert.truthy((o .. err):find("poolsh.serve: " .. sock .. ": a poolsh already serves there", 1, true), o .. err)
  end)

  it("says when nobody serves, or the path is wrong", function()
    assert.are.equal(("poolsh.connect: no socket at %s (start poolsh --serve %s)"):format(sock, sock),
                     H.err(poolsh.connect, sock))
    local pid = serve()
    os.execute("kill -KILL " .. pid)                 -- leaves the socket file behind
    H.poll(function() return not present(pid) end, 5)
    assert.are.equal(("poolsh.connect: nobody serves on %s (connection refused)"):format(sock),
                     H.err(poolsh.connect, sock))
    os.remove(errf)
    local pid2 = serve()                             -- a stale socket is replaced
    local c <close> = poolsh.connect(sock)
    assert.are.equal(pid2, c.pid)
    c:close()
    os.execute("kill -TERM " .. pid2)
    H.poll(function() return not exists(sock) end, 5)
    local dir = os.tmpname()                         -- a long name in a directory of this run's own
    os.remove(dir)
    assert(os.execute("mkdir -m 0700 " .. H.quote(dir)))
    local long = dir .. "/" .. ("x"):rep(120)
    assert.truthy(H.err(poolsh.connect, long):find(
      ("poolsh.connect: socket path too long (%d bytes, at most 107)"):format(#long), 1, true))
    os.execute("rm -rf " .. H.quote(dir))
    local o, e, code = H.poolsh_cmd("--backend=sim --serve /etc/passwd")
    assert.are.equal(1, code)
    assert.truthy((o .. e):find("poolsh.serve: /etc/passwd already exists and is not a socket", 1, true))
    o, e, code = H.poolsh_cmd("--backend=sim --serve /nonexistent/dir/s.sock")
    assert.are.equal(1, code)
    assert.truthy((o .. e):find("poolsh.serve: cannot listen on /nonexistent/dir/s.sock: No such file or directory", 1, true))
    o, e, code = H.poolsh_cmd("--backend=sim --serve " .. sock .. " script.lua")
    assert.are.equal(1, code)
    assert.truthy((o .. e):find("--serve runs what clients send: it takes no script and no -i", 1, true))
  end)
end)

describe("in the REPL", function()
  -- a tmux server of this run's own, as repl_spec.lua drives it
  local SOCK = ("poolsh-proc-%d-%d"):format(os.time(), math.random(1e6))
  local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
  local function screen() return (tmux("capture-pane -p -t repl")) end
  local function send(text, key)
    tmux("send-keys -t repl -l " .. H.quote(text))
    if key then tmux("send-keys -t repl " .. key) end
  end
  local function wait_for(pat, timeout)
    return H.poll(function() return screen():match(pat) end, timeout or 5)
  end
  after_each(function() tmux("kill-server") end)

  it("Ctrl-C interrupts a p:recv() that waits; the child and the channel stay", function()
    local hist = os.tmpname()
    finally(function() os.remove(hist) end)
    local cmd = ("env POOLSH_HISTORY=%s %s --backend=sim"):format(hist, H.exe)
    tmux("new-session -d -s repl -x 200 -y 50 " .. H.quote(cmd))
    assert.truthy(wait_for("poolsh>"), screen())
    send("p = poolsh.spawn(); print('pid', p.pid)", "Enter")
    local pid = tonumber(wait_for("pid%s+(%d+)"))
    assert.truthy(pid, screen())
    send("p:recv()", "Enter")
    H.rsleep(0.5)
    tmux("send-keys -t repl C-c")
    assert.truthy(wait_for("interrupted waiting for a message from process " .. pid), screen())
    send("print('answer', p:eval('return 6 * 7'))", "Enter")
    assert.truthy(wait_for("answer%s+42"), screen())
    send("print('closed', p:close())", "Enter")
    assert.truthy(wait_for("closed%s+0"), screen())
    assert.truthy(H.poll(function() return not present(pid) end, 5))
  end)
end)

describe("a malformed message", function()
  it("closes that client's channel; the server serves the next client", function()
    local base = os.tmpname()
    os.remove(base)
    local sock, errf = base .. ".sock", base .. ".err"
    finally(function() os.remove(sock) os.remove(errf) end)
    local f = assert(io.popen(("%s --backend=sim --serve %s 2>%s </dev/null & echo $!")
      :format(H.exe, sock, errf)))
    local pid = tonumber(f:read("l"))
    f:close()
    finally(function() os.execute("kill -KILL " .. pid .. " 2>/dev/null") end)
    assert.truthy(H.poll(function() return H.slurp_or(errf):find("serving on", 1, true) end, 5))
    -- a frame of 12 bytes: kind 'M', sequence 0, one value of an unknown tag
    local py = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
      .. "s.sendall(bytes([0,0,0,10]) + b'M' + bytes(8) + b'?'); s.close()"
    local _, e, code = H.sh("python3 -c " .. H.quote(py) .. " " .. sock)
    assert.are.equal(0, code, e)
    local c <close> = poolsh.connect(sock)
    assert.are.equal(7, c:eval("return 7"))
    c:close()
    os.execute("kill -TERM " .. pid)
    assert.truthy(H.poll(function() return not os.rename(sock, sock) end, 5))
    local said = H.slurp_or(errf)
    assert.truthy(said:find("poolsh: client %d+: a malformed message came from the client: the channel is closed"), said)
  end)
end)
