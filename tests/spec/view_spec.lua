--- `poolsh --view` and poolsh.view() (docs/view.md, docs/security.md
-- "The view server"): the server's answers and limits, in this process
-- with files of the spec's own; poolsh.view's arguments and messages in
-- runs of build/poolsh; the token kept private; and the page itself in
-- headless Chromium (tests/web/view.js) while the REPL it shows runs in
-- tmux, busy or not. Nothing here uses a fixed /tmp path.
local H = require "helpers"
local cjson = require "cjson"
local core = require "poolsh.core"

local PY = "/usr/bin/python3"
local NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups "
local q = H.quote

local PAGE = "<!doctype html><title>spec page</title><script src=picture.js></script>"
local JS = "/* spec js */"
local CSS = "/* spec css */"

-- This run's own directory (mktemp -d), mode 0755 so that nobody can
-- run the helper in it; removed at the end.
local dir = (H.sh("mktemp -d")):match("^(%S+)")
assert(dir, "mktemp -d failed")
os.execute("chmod 755 " .. q(dir))

-- A raw HTTP client: sends stdin's bytes to 127.0.0.1:PORT, prints what
-- came back; with a third argument, first holds a stalled connection
-- (a request it never finishes) and reports when each was answered.
local RAW = dir .. "/raw.py"
do
  local f = assert(io.open(RAW, "w"))
  f:write([[
import socket, sys, time
port = int(sys.argv[1])
data = sys.stdin.buffer.read()
def talk(payload):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(payload)
    out = b""
    while True:
        try:
            b = s.recv(65536)
        except OSError:
            break
        if not b:
            break
        out += b
    s.close()
    return out
if len(sys.argv) > 2:
    n = int(sys.argv[2])
    t0 = time.monotonic()
    stalled = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(n)]
    for s in stalled:
        s.sendall(b"GET /")
    served = talk(data)
    t_served = time.monotonic() - t0
    for s in stalled:
        s.settimeout(6)
        try:
            b = s.recv(100)
        except OSError:
            b = b"timeout"
    print("served %.2f after %s dropped %.2f got %r" % (t_served, served.split(b"\r\n")[0].decode(),
          time.monotonic() - t0, b))
else:
    sys.stdout.buffer.write(talk(data))
]])
  f:close()
end

-- Sends request (the bytes as they are) to port: status code, headers
-- (lower-cased names), body.
local function raw(port, request, prefix)
  local out = H.sh(("%s%s %s %d"):format(prefix or "", PY, q(RAW), port), request)
  local head, body = out:match("^(.-)\r\n\r\n(.*)$")
  head = head or out
  local code = tonumber(head:match("^HTTP/1%.%d (%d+)"))
  local headers = {}
  for name, value in head:gmatch("\r\n([^:\r\n]+): ([^\r\n]*)") do headers[name:lower()] = value end
  return code, headers, body or ""
end

-- A GET of path with the given Host (default: this server's).
local function get(port, path, host, prefix)
  host = host or ("127.0.0.1:" .. port)
  return raw(port, ("GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: spec\r\n\r\n"):format(path, host),
             prefix)
end

local function split(url)
  local port, token = url:match("^http://127%.0%.0%.1:(%d+)/(%x+)/$")
  return tonumber(port), token
end

-- This process's threads (/proc/self read here, not by a child).
-- The sockets listening on TCP port, from /proc/net/tcp and tcp6 (ss is
-- not on every machine): {addr = "127.0.0.1" (IPv4) or the IPv6 hex,
-- inode = n}.
local function listeners(port)
  local out = {}
  for _, file in ipairs { "/proc/net/tcp", "/proc/net/tcp6" } do
    local f = io.open(file)
    for line in f and f:lines() or function() end do
      local addr, p, st, inode = line:match("^%s*%d+: (%x+):(%x+) %x+:%x+ (%x+) %S+ %S+ %S+%s+%d+%s+%d+%s+(%d+)")
      if addr and tonumber(p, 16) == port and st == "0A" then
        if #addr == 8 then   -- little-endian IPv4
          addr = ("%d.%d.%d.%d"):format(tonumber(addr:sub(7, 8), 16), tonumber(addr:sub(5, 6), 16),
            tonumber(addr:sub(3, 4), 16), tonumber(addr:sub(1, 2), 16))
        end
        out[#out + 1] = { addr = addr, inode = tonumber(inode) }
      end
    end
    if f then f:close() end
  end
  return out
end

-- The pids that hold the socket of that inode open.
local function holders_of(inode)
  local pids = {}
  for pid in io.popen("ls /proc"):lines() do
    if pid:match("^%d+$") then
      local fds = io.popen("ls -l /proc/" .. pid .. "/fd 2>/dev/null")
      local text = fds:read("a")
      fds:close()
      if text:find("socket:[" .. inode .. "]", 1, true) then pids[#pids + 1] = tonumber(pid) end
    end
  end
  return pids
end

local function threads()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("a"):match("^(%d+)")
  f:close()
  local n = 0
  for _ in io.popen("ls /proc/" .. pid .. "/task"):lines() do n = n + 1 end
  return n
end

describe("the view server", function()
  local url, port, token
  before_each(function()
    url = core.view_start(0, PAGE, JS, CSS)
    port, token = split(url)
  end)
  after_each(function() core.view_stop() end)

  it("listens on 127.0.0.1 at a kernel-chosen port, under a 128-bit token", function()
    assert.truthy(port, url)
    assert.equal(32, #token)
    assert.equal(url, core.view_url())
    assert.has_error(function() core.view_start(0, PAGE, JS, CSS) end, "poolsh.view: already serving")
  end)

  it("serves the page, picture.js and picture.css from memory, with the security headers", function()
    for path, want in pairs { [""] = { PAGE, "text/html" }, ["picture.js"] = { JS, "text/javascript" },
                              ["picture.css"] = { CSS, "text/css" } } do
      local code, h, body = get(port, "/" .. token .. "/" .. path)
      assert.equal(200, code, path)
      assert.equal(want[1], body)
      assert.truthy(h["content-type"]:find(want[2], 1, true), h["content-type"])
      assert.equal("no-store", h["cache-control"])
      assert.equal("nosniff", h["x-content-type-options"])
      assert.equal("no-referrer", h["referrer-policy"])
      assert.equal("close", h["connection"])
      local csp = h["content-security-policy"]
      assert.truthy(csp:find("default-src 'none'", 1, true), csp)
      assert.truthy(csp:find("script-src 'self';", 1, true), csp)
      assert.truthy(csp:find("connect-src 'self'", 1, true), csp)
      for name in pairs(h) do assert.falsy(name:find("^access%-control"), name) end
    end
  end)

  it("serves the snapshot published, and 204 when ?v= is its version", function()
    local code, _, body = get(port, "/" .. token .. "/state.json")
    assert.equal(200, code)
    assert.equal(0, cjson.decode(body).version)
    core.view_publish('{"version":7,"x":1}', 7)
    code, _, body = get(port, "/" .. token .. "/state.json?v=6")
    assert.equal(200, code)
    assert.equal('{"version":7,"x":1}', body)
    code, _, body = get(port, "/" .. token .. "/state.json?v=7")
    assert.equal(204, code)
    assert.equal("", body)
    core.view_publish('{"version":8}', 8)
    assert.equal(200, (get(port, "/" .. token .. "/state.json?v=7")))
  end)

  it("answers 404 with no hint to a wrong token, an unknown path or a path that climbs", function()
    local other = ("0"):rep(32)
    if other == token then other = ("1"):rep(32) end
    for _, path in ipairs { "/" .. other .. "/", "/" .. other .. "/state.json", "/",
                            "/" .. token, "/" .. token .. "/nope", "/" .. token .. "/../",
                            "/" .. token .. "/%2e%2e/", "/" .. token .. "/%2E%2E/state.json",
                            "/" .. token .. "/./state.json", "/" .. token .. "//state.json",
                            "/" .. token .. "/?v=1", "/" .. token:upper() .. "/",
                            "/" .. token .. "x/", "http://127.0.0.1:" .. port .. "/" .. token .. "/" } do
      local code, _, body = get(port, path)
      assert.equal(404, code, path)
      assert.equal("not found\n", body)
    end
  end)

  it("answers 404 to another user without the token", function()
    local code = get(port, "/" .. ("0"):rep(32) .. "/state.json", nil, NOBODY)
    assert.equal(404, code)
  end)

  it("answers 403 unless Host is 127.0.0.1:<port> or localhost:<port> (DNS rebinding)", function()
    local path = "/" .. token .. "/state.json"
    assert.equal(200, (get(port, path, "localhost:" .. port)))
    assert.equal(200, (get(port, path, "LOCALHOST:" .. port)))
    for _, host in ipairs { "evil.example:" .. port, "evil.example", "127.0.0.1", "localhost",
                            "127.0.0.1:" .. (port + 1), "127.0.0.1:" .. port .. ".evil.example",
                            "0.0.0.0:" .. port, "[::1]:" .. port } do
      assert.equal(403, (get(port, path, host)), host)
    end
    assert.equal(403, (raw(port, "GET " .. path .. " HTTP/1.0\r\n\r\n")), "no Host")
    assert.equal(403, (raw(port, ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nHost: evil:1\r\n\r\n")
      :format(path, port))), "two Hosts")
  end)

  it("answers 405 to anything but GET, 400 to what is not HTTP", function()
    for _, m in ipairs { "POST", "PUT", "HEAD", "DELETE", "OPTIONS" } do
      local code = raw(port, ("%s /%s/state.json HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
        .. "Content-Length: 0\r\n\r\n"):format(m, token, port))
      assert.equal(405, code, m)
    end
    assert.equal(400, (raw(port, "hello\r\n\r\n")))
    assert.equal(400, (raw(port, ("GET /%s/ HTTP/2\r\nHost: 127.0.0.1:%d\r\n\r\n"):format(token, port))))
  end)

  it("answers 431 to a header over 8 KiB", function()
    local code = raw(port, ("GET /%s/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Big: %s\r\n\r\n")
      :format(token, port, ("a"):rep(9000)))
    assert.equal(431, code)
  end)

  it("drops a client that does not finish its request in 2 s while it serves another", function()
    local request = ("GET /%s/state.json HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"):format(token, port)
    local out = H.sh(("%s %s %d 1"):format(PY, q(RAW), port), request)
    local served, status, dropped, got = out:match("served (%S+) after (.-) dropped (%S+) got (.*)")
    assert.truthy(served, out)
    assert.equal("HTTP/1.0 200 OK", status)
    assert.is_true(tonumber(served) < 1.5, out)
    assert.is_true(tonumber(dropped) >= 1.8 and tonumber(dropped) < 5, out)
    assert.equal("b''", got:match("^%S+"), out)    -- closed unanswered
  end)

  it("serves a request while 20 stalled clients are held (16 at once, the oldest dropped for a new one)", function()
    local request = ("GET /%s/state.json HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"):format(token, port)
    local out = H.sh(("%s %s %d 20"):format(PY, q(RAW), port), request)
    local served, status = out:match("served (%S+) after (.-) dropped")
    assert.truthy(served, out)
    assert.equal("HTTP/1.0 200 OK", status)
    assert.is_true(tonumber(served) < 6, out)
  end)

  it("answers a real request at once while 40 idle connections are held, its fds bounded", function()
    local f = assert(io.open("/proc/self/stat"))
    local pid = f:read("a"):match("^(%d+)")
    f:close()
    local function fds()
      local n = 0
      for _ in io.popen("ls /proc/" .. pid .. "/fd"):lines() do n = n + 1 end
      return n
    end
    local before = fds()
    -- 40 connections, half silent and half with a header begun, held
    -- while a real GET is timed and this process's fds are counted
    local idle = dir .. "/idle.py"
    local w = assert(io.open(idle, "w"))
    w:write(([[
import os, socket, sys, time
port = %d
held = []
for i in range(40):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    if i %% 2:
        s.sendall(b"GET /")
    held.append(s)
time.sleep(0.3)
t0 = time.monotonic()
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"GET /%s/state.json HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n")
out = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    out += b
print("served %%.3f %%s" %% (time.monotonic() - t0, out.split(b"\r\n")[0].decode()))
print("fds %%d" %% len(os.listdir("/proc/%s/fd")))
sys.stdout.flush()
]]):format(port, token, port, pid))
    w:close()
    local out = H.sh(("%s %s"):format(PY, q(idle)))
    local served, status = out:match("served (%S+) ([^\n]*)")
    assert.truthy(served, out)
    assert.equal("HTTP/1.0 200 OK", status)
    assert.is_true(tonumber(served) < 0.5, out)
    local held = tonumber(out:match("fds (%d+)"))
    assert.is_true(held <= before + 16, ("%d fds with 40 idle clients, %d before"):format(held, before))
  end)

  it("does not spin when it runs out of file descriptors", function()
    local outf = dir .. "/emfile.out"
    local code = "local u = poolsh.view() io.stdout:write(u:match(':(%d+)/'), '\\n') io.stdout:flush() "
      .. "for _ = 1, 40 do os.execute('sleep 0.2') end"
    local f = assert(io.popen(("ulimit -n 14; %s --backend=sim -e %s >%s 2>/dev/null & echo $!")
      :format(H.exe, q(code), q(outf))))
    local pid = f:read("l")
    f:close()
    finally(function() os.execute("kill " .. pid .. " 2>/dev/null") end)
    local p = tonumber(H.poll(function() return H.slurp_or(outf):match("^(%d+)\n") end, 5))
    assert.truthy(p, "no port")
    os.execute(("%s -c 'import socket,time\nss=[socket.create_connection((\"127.0.0.1\",%d)) "
      .. "for _ in range(30)]\ntime.sleep(4)' & sleep 1"):format(PY, p))
    -- the CPU time of the server's thread (every thread but the main one), in ticks
    local function ticks()
      local n = 0
      for task in io.popen("ls /proc/" .. pid .. "/task"):lines() do
        if task ~= pid then
          local u, sy = H.slurp_or("/proc/" .. pid .. "/task/" .. task .. "/stat")
            :match("^%d+ %b() %S+" .. (" %S+"):rep(10) .. " (%d+) (%d+)")
          n = n + (tonumber(u) or 0) + (tonumber(sy) or 0)
        end
      end
      return n
    end
    local t0 = ticks()
    H.rsleep(2)
    assert.is_true(ticks() - t0 < 40, "the server's thread took " .. (ticks() - t0) .. " ticks in 2 s")
  end)

  it("listens on no address but 127.0.0.1", function()
    local here = {}
    for _, l in ipairs(listeners(port)) do here[#here + 1] = l.addr end
    assert.same({ "127.0.0.1" }, here)
  end)

  it("stops: the thread joined, the port closed", function()
    local before = threads()
    assert.is_true(core.view_stop())
    assert.equal(before - 1, threads())
    assert.is_false(core.view_stop())
    assert.is_nil(core.view_url())
    local _, _, code = H.sh(("%s -c 'import socket; socket.create_connection((\"127.0.0.1\", %d), 2)'")
      :format(PY, port))
    assert.are_not.equal(0, code)
  end)
end)

describe("poolsh.view", function()
  it("refuses bad arguments with a clear error", function()
    local view = H.poolsh.view
    assert.has_error(function() view(5) end,
      "poolsh.view: expects a table of options ({port = N}) or false, got number")
    assert.has_error(function() view { prot = 1 } end,
      "poolsh.view: unknown option 'prot' (did you mean 'port'?)")
    assert.has_error(function() view { port = 70000 } end,
      "poolsh.view: port must be an integer from 0 to 65535 (0: any free one), got 70000")
    assert.has_error(function() view { port = "80x" } end,
      "poolsh.view: port must be an integer from 0 to 65535 (0: any free one), got '80x'")
    assert.has_error(function() view { port = 1.5 } end,
      "poolsh.view: port must be an integer from 0 to 65535 (0: any free one), got 1.5")
    assert.has_error(function() core.view_publish(("x"):rep(33 * 2 ^ 20), 1) end,
      "poolsh.view: the snapshot is 33 MiB, over the 32 MiB the view serves")
  end)

  it("says the URL once on stderr, returns the same URL again, stops with false", function()
    local out, err, code = H.poolsh_cmd("--backend=sim -e " .. q(
      "print(poolsh.view()) print(poolsh.view()) print(poolsh.view{port = 0}) "
      .. "print(poolsh.view(false)) print(poolsh.view(false))"))
    assert.equal(0, code, err)
    local u1, u2, u3, stopped, again = out:match("^(%S+)\n(%S+)\n(%S+)\n(%S+)\n(%S+)\n$")
    assert.truthy(u1, out)
    assert.truthy(split(u1), u1)
    assert.equal(u1, u2)
    assert.equal(u1, u3)
    assert.equal("true", stopped)
    assert.equal("false", again)
    assert.equal("view: " .. u1 .. "\n", err)
  end)

  it("refuses a port in use and a second port, naming it", function()
    local out, err, code = H.poolsh_cmd("--backend=sim -e " .. q([[
      local u = poolsh.view()
      local port = tonumber(u:match(":(%d+)/"))
      local ok, e = pcall(poolsh.view, {port = port + (port < 65535 and 1 or -1)})
      print(e)
      local f = io.popen(poolsh.program .. " --backend=sim -e 'poolsh.view{port = " .. port .. "}' 2>&1")
      print(f:read("a"))
      f:close()
      print(port)]]))
    assert.equal(0, code, err)
    local port = out:match("(%d+)\n*$")
    assert.truthy(out:find("poolsh.view: already serving on port " .. port .. "; poolsh.view(false) stops it",
                           1, true), out)
    assert.truthy(out:find("poolsh.view: port " .. port .. " of 127.0.0.1 is in use", 1, true), out)
  end)

  it("--view=PORT takes a port number; --help lists --view", function()
    local _, err, code = H.poolsh_cmd("--backend=sim --view=8x0 -e 'print(1)'")
    assert.equal(1, code)
    assert.equal("poolsh: --view=PORT: the port must be a number from 0 to 65535, got '8x0'\n", err)
    _, err, code = H.poolsh_cmd("--backend=sim --view=99999 -e 'print(1)'")
    assert.equal(1, code)
    assert.truthy(err:find("got '99999'", 1, true), err)
    local out = H.poolsh_cmd("--help")
    assert.truthy(out:find("--view[=PORT]", 1, true), out)
  end)

  it("poolsh --view SCRIPT publishes as the script runs, then serves until Enter", function()
    local script, errf = dir .. "/busy.lua", dir .. "/busy.err"
    local f = assert(io.open(script, "w"))
    f:write([[
      s = poolsh.stream(); p = poolsh.pool{}
      a = p:alloc("4 MiB", s)
      local t = poolsh.wallclock() + 2
      while poolsh.wallclock() < t do end
      a:free(); s:sync()
    ]])
    f:close()
    local rcf, enter = dir .. "/busy.rc", dir .. "/enter"   -- Enter, when the test has seen the end
    assert(os.execute("mkfifo " .. q(enter)))
    os.execute(("(cat %s | %s --backend=sim --view %s 2>%s; echo $? >%s) &")
      :format(q(enter), H.exe, q(script), q(errf), q(rcf)))
    local u = H.poll(function() return H.slurp_or(errf):match("view: (%S+)") end, 5)
    assert.truthy(u, H.slurp_or(errf))
    local port, token = split(u)
    local function used()
      local code, _, body = get(port, "/" .. token .. "/state.json")
      if code ~= 200 then return nil end
      local snap = cjson.decode(body)
      return snap.pools and snap.pools[1] and snap.pools[1].used
    end
    assert.equal(4 * 2 ^ 20, H.poll(function() return used() == 4 * 2 ^ 20 and used() end, 5))
    assert.equal(0, H.poll(function() return used() == 0 and 0 end, 20))   -- the end, still served
    assert.truthy(H.poll(function()
      return H.slurp_or(errf):find("Press Enter (or Ctrl-C) to stop serving", 1, true) end, 5))
    assert.equal(0, used(), "still served after the run")
    local w = assert(io.open(enter, "w"))
    w:write("\n")
    w:close()
    assert.truthy(H.poll(function() return H.slurp_or(rcf):match("%d") end, 10), "did not end at Enter")
    assert.equal("0", H.slurp_or(rcf):match("%d+"))
  end)
end)

-- tmux, a server of this run's own
local SOCK = ("poolsh-view-%d-%d"):format(os.time(), math.random(1e6))
local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
local function screen() return (tmux("capture-pane -p -J -S -100 -t repl")) end
local function send(text) tmux("send-keys -t repl -l " .. q(text)); tmux("send-keys -t repl Enter") end

-- Starts `poolsh --view` in tmux (HOME and the current directory this
-- run's own), its stderr the terminal's; returns the URL it said.
local function start_repl(home)
  tmux("kill-server")
  local cmd = ("cd %s && env HOME=%s XDG_STATE_HOME=%s/state XDG_RUNTIME_DIR= %s --backend=sim --view")
    :format(q(home), q(home), q(home), H.exe:sub(1, 1) == "/" and H.exe or (H.sh("pwd"):gsub("%s+$", "") .. "/" .. H.exe))
  tmux("new-session -d -s repl -x 200 -y 50 " .. q(cmd))
  local u = H.poll(function() return screen():match("view: (http://%S+)") end, 5)
  assert.truthy(u, "no URL: " .. screen())
  assert.truthy(H.poll(function() return screen():find("poolsh>", 1, true) end, 5), screen())
  return u
end

describe("the token", function()
  after_each(function() tmux("kill-server") end)

  it("is in no child's command line or environment, in no file, and no child holds the socket", function()
    local home = (H.sh("mktemp -d")):match("^(%S+)")
    local u = start_repl(home)
    local port, token = split(u)
    send("c = poolsh.spawn(); print('child ' .. c.pid); os.execute('sleep 30 & echo other $!')")
    local child = tonumber(H.poll(function() return screen():match("child (%d+)") end, 10))
    assert.truthy(child, screen())
    local other = tonumber(H.poll(function() return screen():match("other (%d+)") end, 5))
    assert.truthy(other, screen())
    finally(function() os.execute("kill " .. other .. " 2>/dev/null") end)
    local socks = listeners(port)
    assert.equal(1, #socks)
    local holders = holders_of(socks[1].inode)
    assert.equal(1, #holders, table.concat(holders, " "))
    assert.are_not.equal(child, holders[1])
    assert.are_not.equal(other, holders[1])
    for _, pid in ipairs { child, other, holders[1] } do
      for _, what in ipairs { "cmdline", "environ" } do
        local text = H.slurp_or("/proc/" .. pid .. "/" .. what)
        assert.truthy(#text > 0, what)
        assert.falsy(text:find(token, 1, true), what .. " of " .. pid)
      end
    end
    send("c:close()")
    local found = H.sh("grep -rl " .. token .. " " .. q(home) .. " 2>/dev/null")
    assert.equal("", found)
    os.execute("rm -rf " .. q(home))
  end)
end)

describe("poolsh --view run SCENARIO --step", function()
  after_each(function() tmux("kill-server") end)

  it("publishes the end of each step before it pauses", function()
    tmux("kill-server")
    local errf = dir .. "/step.err"
    tmux("new-session -d -s repl -x 200 -y 50 " .. q(("%s --backend=sim --view run same_stream --step 2>%s")
      :format(H.exe, q(errf))))
    local u = H.poll(function() return H.slurp_or(errf):match("view: (%S+)") end, 5)
    assert.truthy(u, H.slurp_or(errf))
    local port, token = split(u)
    assert.truthy(H.poll(function() return screen():find("press Enter for step 1", 1, true) end, 5), screen())
    tmux("send-keys -t repl Enter")
    assert.truthy(H.poll(function() return screen():find("press Enter for step 2", 1, true) end, 5), screen())
    local code, _, body = get(port, "/" .. token .. "/state.json")
    assert.equal(200, code)
    local pool = cjson.decode(body).pools[1]
    assert.truthy(pool, body)
    assert.equal(4 * 2 ^ 20, pool.pending, body)    -- step 1 freed a behind 100 ms of work
  end)
end)

describe("poolsh --view when the run fails", function()
  after_each(function() tmux("kill-server") end)

  local ALLOC = 's = poolsh.stream(); p = poolsh.pool{}; a = p:alloc("4 MiB", s); '

  -- Waits for the URL and the error on errf, then checks that the page
  -- still serves the last picture (4 MiB used in pool 1); returns the
  -- URL's port and token.
  local function serves_after(errf, err)
    local u = H.poll(function() return H.slurp_or(errf):match("view: (%S+)") end, 5)
    assert.truthy(u, H.slurp_or(errf))
    assert.truthy(H.poll(function() return H.slurp_or(errf):find(err, 1, true) end, 5), H.slurp_or(errf))
    local port, token = split(u)
    local code, _, body = get(port, "/" .. token .. "/state.json")
    assert.equal(200, code, H.slurp_or(errf))
    return cjson.decode(body), port, token
  end

  -- Runs `poolsh --view ARGS` with its stdin open for `secs` seconds;
  -- returns the files of its stderr and exit status.
  local function run_failing(name, args, secs)
    local errf, rcf = dir .. "/" .. name .. ".err", dir .. "/" .. name .. ".rc"
    os.execute(("(sleep %d | (%s --backend=sim --view %s 2>%s; echo $? >%s)) &")
      :format(secs, H.exe, args, q(errf), q(rcf)))
    return errf, rcf
  end

  local function ends_at_stdin_end(rcf, errf)
    assert.truthy(H.slurp_or(errf):find("Press Enter (or Ctrl-C) to stop serving", 1, true), H.slurp_or(errf))
    assert.equal("", H.slurp_or(rcf))                          -- still serving
    assert.truthy(H.poll(function() return H.slurp_or(rcf):match("%d") end, 8), "did not end with stdin")
    assert.equal("1", H.slurp_or(rcf):match("%d+"))
  end

  it("-e: serves the last picture after the error, until standard input ends", function()
    local errf, rcf = run_failing("fail_e", "-e " .. q(ALLOC .. 'error("boom")'), 4)
    local snap = serves_after(errf, "boom")
    assert.equal(4 * 2 ^ 20, snap.pools[1].used)
    ends_at_stdin_end(rcf, errf)
  end)

  it("a command that fails, even before doing anything: serves until standard input ends", function()
    local errf, rcf = run_failing("fail_cmd", "run nosuch", 4)
    serves_after(errf, "unknown scenario 'nosuch'")
    ends_at_stdin_end(rcf, errf)
  end)

  it("a script on standard input: serves after the error until Enter on the terminal", function()
    local errf, rcf = dir .. "/fail_stdin.err", dir .. "/fail_stdin.rc"
    local cmd = ("echo %s | %s --backend=sim --view - 2>%s; echo $? >%s; sleep 30")
      :format(q(ALLOC .. 'error("boom")'), H.exe, q(errf), q(rcf))
    tmux("kill-server")
    tmux("new-session -d -s repl -x 200 -y 50 " .. q(cmd))
    local snap = serves_after(errf, "boom")
    assert.equal(4 * 2 ^ 20, snap.pools[1].used)
    assert.truthy(H.poll(function() return H.slurp_or(errf):find("Press Enter", 1, true) end, 5))
    H.rsleep(0.5)
    assert.equal("", H.slurp_or(rcf))                          -- still serving
    tmux("send-keys -t repl Enter")
    assert.truthy(H.poll(function() return H.slurp_or(rcf):match("%d") end, 5), "did not end at Enter")
    assert.equal("1", H.slurp_or(rcf):match("%d+"))
  end)

  it("a script on standard input in a background job: ends at once, not stopped for the terminal", function()
    local errf = dir .. "/bg.err"
    tmux("kill-server")
    tmux("new-session -d -s repl -x 200 -y 50 bash --norc -i")
    send(("echo %s | %s --backend=sim --view - 2>%s & wait $!; echo bg-done-$?")
      :format(q('print("bg ran")'), H.exe, q(errf)))
    local done = H.poll(function() return screen():match("bg%-done%-(%d+)") end, 10)
    assert.truthy(done, screen())
    assert.equal("0", done)
    assert.falsy(screen():find("Stopped", 1, true), screen())
    assert.truthy(H.slurp_or(errf):find("view: http://127.0.0.1:", 1, true), H.slurp_or(errf))
  end)
end)

-- Why the page cannot be driven here, or nil.
local web_src = os.getenv("POOLSH_WEB_NODE_MODULES") and os.getenv("POOLSH_WEB_NODE_MODULES"):gsub("/node_modules/?$", "")
  or (H.build .. "/web-src")
local function missing()
  if select(3, H.sh("command -v node")) ~= 0 then return "node is not installed" end
  if select(3, H.sh("command -v chromium")) ~= 0 then return "chromium is not installed" end
  if not H.slurp_or(web_src .. "/node_modules/puppeteer-core/package.json"):find("version") then
    return "puppeteer-core is not in " .. web_src .. "/node_modules (the web build's; "
      .. "POOLSH_WEB_NODE_MODULES names another)"
  end
end

describe("the page in Chromium", function()
  local why = missing()
  if why then
    if os.getenv("POOLSH_WEB") == "1" then
      it("can be driven (POOLSH_WEB=1)", function() error(why) end)
    else
      pending(why .. ": the page's test is skipped")
    end
    return
  end
  after_each(function() tmux("kill-server") end)

  it("draws the map, follows the REPL, and stays up while the REPL is busy", function()
    local home = (H.sh("mktemp -d")):match("^(%S+)")
    local u = start_repl(home)
    send('s = poolsh.stream(); p = poolsh.pool{release_threshold = "64 MiB"}')
    local out, err, code = H.sh(("NODE_PATH=%s timeout 120 node tests/web/view.js %s %s repl")
      :format(q(web_src .. "/node_modules"), q(u), SOCK))
    os.execute("rm -rf " .. q(home))
    assert.equal(0, code, err)
    local r = cjson.decode(out)
    assert.is_true(r.alloc.ok, out)
    assert.truthy(r.alloc.pools[1]:find("used 4", 1, true), out)
    assert.is_true(r.alloc.rects > r.start.rects, out)
    assert.is_true(r.free.ok, out)
    assert.truthy(r.free.pools[1]:find("used 0", 1, true), out)
    -- busy: answered at once, the same picture, nothing said wrong
    assert.equal(200, r.busy.poll.status, out)
    assert.is_true(r.busy.poll.ms < 1000, out)
    assert.same(r.free.pools, r.busy.pools)
    assert.same(r.free.pools, r.busy_later.pools)
    assert.equal("", r.busy.wait)
    assert.equal("", r.busy_later.wait)
    -- after Ctrl-C it goes on
    assert.is_true(r.after.ok, out)
    assert.truthy(r.after.pools[1]:find("used 8", 1, true), out)
    -- nothing refused by the CSP, no error but the browser's own favicon
    for _, line in ipairs(r.console) do
      assert.truthy(line:find("404") and not line:find("Refused"), line)
    end
    for _, req in ipairs(r.requests) do
      assert.truthy(req:find("^<page>/") or req:find("/favicon%.ico$"), req)
    end
  end)
end)

teardown(function() os.execute("rm -rf " .. q(dir)) end)
