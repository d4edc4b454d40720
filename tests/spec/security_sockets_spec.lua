--- The local sockets against another user (docs/security.md, issue 17
-- section 1): poolsh --serve, poolsh.connect, p:export, poolsh.import_pool
-- and poolsh.spawn's channel. The other user is nobody, through setpriv
-- (the specs run as root, CI too); nothing here uses a fixed /tmp path.
local H = require "helpers"
local poolsh = H.poolsh

local NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups "
local PY = "/usr/bin/python3"   -- one nobody can run

local function is_root()
  local o = H.sh("id -u")
  return o:match("^0\n") ~= nil
end

-- What to undo after each test (busted keeps one finally per test).
local cleanup = {}
local function later(fn) cleanup[#cleanup + 1] = fn end
local function undo()
  for i = #cleanup, 1, -1 do pcall(cleanup[i]) end
  cleanup = {}
end

-- A fresh directory (mktemp -d) of the given mode; removed after the test.
local function tmpdir(mode)
  local o = H.sh("mktemp -d")
  local d = o:match("^(%S+)")
  assert(d, "mktemp -d failed")
  if mode then os.execute("chmod " .. mode .. " " .. d) end
  later(function() os.execute("rm -rf " .. H.quote(d)) end)
  return d
end

local function exists(path) return os.rename(path, path) ~= nil end

local function mode_of(path) return (H.sh("stat -c %a " .. H.quote(path))):match("%d+") end

-- Starts cmd in the background (through sh); returns its pid, killed
-- after the test.
local function background(cmd)
  local f = assert(io.popen(cmd .. " & echo $!"))
  local pid = tonumber(f:read("l"))
  f:close()
  assert(pid, "did not start: " .. cmd)
  later(function() os.execute("kill -KILL " .. pid .. " 2>/dev/null") end)
  return pid
end

-- Starts `poolsh --serve sock` (prefix: env, umask, setpriv); its pid once
-- it says it serves. Its stderr goes to errf.
local function serve(sock, errf, prefix)
  local pid = background(("%s %s --backend=sim --serve %s 2>%s </dev/null")
    :format(prefix or "", H.exe, sock, errf))
  assert(H.poll(function() return H.slurp_or(errf):find("serving on", 1, true) end, 5),
         "not serving: " .. H.slurp_or(errf))
  return pid
end

local function my_pid()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("n")
  f:close()
  return pid
end

after_each(undo)

describe("another user", function()
  before_each(function()
    if not is_root() then pending("needs root, to be nobody through setpriv") end
  end)

  it("cannot eval on a --serve of root's, even under umask 000; the socket is 0600", function()
    local d = tmpdir("0777")
    local sock, errf = d .. "/s.sock", d .. "/err"
    serve(sock, errf, "umask 000;")
    assert.are.equal("600", mode_of(sock))
    local attempt = NOBODY .. H.exe .. " --backend=sim -e " .. H.quote(
      "print(pcall(function() local c = poolsh.connect('" .. sock .. "', 5) " ..
      "return c:eval({'return io.popen(\"id -u\"):read(\"a\")', timeout_s = 5}) end))")
    local o, e, code = H.sh(attempt)
    assert.are.equal(0, code, e)
    assert.truthy(o:match("^false\t") and o:find("poolsh.connect: cannot connect to " .. sock .. ": Permission denied", 1, true), o)
    -- the file's mode is the first wall; the server's peer check the second
    os.execute("chmod 0777 " .. sock)
    o, e, code = H.sh(attempt)
    assert.are.equal(0, code, e)
    assert.truthy(o:match("^false\t"), o)
    assert.falsy(o:find("\t0\n", 1, true), o)
    assert.truthy(H.poll(function()
      return H.slurp_or(errf):find("poolsh: refused a connection to " .. sock .. " from uid 65534", 1, true)
    end, 5), H.slurp_or(errf))
    local c <close> = poolsh.connect(sock, 5)           -- root still may
    assert.are.equal(42, c:eval("return 6 * 7"))
  end)

  it("cannot import a pool of root's, even under umask 000", function()
    local d = tmpdir("0777")
    local sock, errf, out = d .. "/pool.sock", d .. "/err", d .. "/out"
    background(("umask 000; %s --backend=sim -e %s >%s 2>%s </dev/null"):format(H.exe, H.quote(
      "local p = poolsh.pool{ipc = true} p:export('" .. sock .. "') print('ready') " ..
      "io.stdout:flush() os.execute('sleep 30')"), out, errf))
    assert.truthy(H.poll(function() return H.slurp_or(out):find("ready", 1, true) end, 5))
    assert.are.equal("600", mode_of(sock))
    local attempt = NOBODY .. H.exe .. " --backend=sim -e " .. H.quote(
      "print(pcall(poolsh.import_pool, '" .. sock .. "', 3000))")
    local o, e, code = H.sh(attempt)
    assert.are.equal(0, code, e)
    assert.truthy(o:match("^false\t") and o:find("poolsh.import_pool: cannot connect to " .. sock .. ": Permission denied", 1, true), o)
    os.execute("chmod 0777 " .. sock)
    o, e, code = H.sh(attempt)
    assert.are.equal(0, code, e)
    assert.truthy(o:match("^false\t"), o)
    assert.truthy(H.poll(function()
      return H.slurp_or(errf):find("poolsh: refused a connection to " .. sock .. " from uid 65534", 1, true)
    end, 5), H.slurp_or(errf))
  end)

  -- nobody listens at sock (python) and writes to out how many bytes came
  -- on the first connection before it closed (or 2 s passed).
  local function squat(d, sock, out)
    local py = "import socket,sys,os\n" ..
      "s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(4)\n" ..
      "s.settimeout(20); c,_=s.accept(); c.settimeout(2); n=0\n" ..
      "try:\n  while True:\n    b=c.recv(65536)\n    if not b: break\n    n+=len(b)\n" ..
      "except socket.timeout: pass\n" ..
      "open(sys.argv[2],'w').write(str(n))\n"
    background(NOBODY .. PY .. " -c " .. H.quote(py) .. " " .. sock .. " " .. out)
    assert.truthy(H.poll(function() return exists(sock) end, 5), "python did not listen")
  end

  it("squatting a socket path: root's client refuses it before sending anything", function()
    local d = tmpdir("0777")
    local sock, out = d .. "/squat.sock", d .. "/got"
    squat(d, sock, out)
    local ok, e = pcall(function()
      local c = poolsh.connect(sock, 2)
      c:send("a secret")                       -- would reach nobody
      c:close()
    end)
    assert.is_false(ok)
    assert.truthy(tostring(e):find("poolsh.connect: " .. sock .. " is served by uid 65534, not by this user (uid 0) or root: refused before anything was sent", 1, true), e)
    assert.truthy(H.poll(function() return H.slurp_or(out) ~= "" end, 5))
    assert.are.equal("0", H.slurp_or(out))
    -- the same for import_pool
    local sock2, out2 = d .. "/squat2.sock", d .. "/got2"
    squat(d, sock2, out2)
    e = H.err(poolsh.import_pool, sock2, 2000)
    assert.truthy(e:find("poolsh.import_pool: " .. sock2 .. " is served by uid 65534", 1, true), e)
  end)

  it("cannot delete a live socket it may not connect to (EACCES is not stale)", function()
    local d = tmpdir("0777")
    local sock, errf = d .. "/live.sock", d .. "/err"
    serve(sock, errf)
    local o, e, code = H.sh("timeout 10 " .. NOBODY .. H.exe .. " --backend=sim --serve " .. sock)
    assert.are.equal(1, code, o .. e)
    local said = o .. e
    assert.truthy(said:find("poolsh.serve: " .. sock .. ": a poolsh already serves there", 1, true), said)
    assert.is_true(exists(sock))
    local c <close> = poolsh.connect(sock, 5)
    assert.are.equal(1, c:eval("return 1"))
    -- p:export's socket likewise
    local psock = d .. "/pool.sock"
    local p = poolsh.pool{ipc = true}
    later(function() p:destroy() end)
    p:export(psock)
    o, e, code = H.sh(NOBODY .. H.exe .. " --backend=sim -e " .. H.quote(
      "local p = poolsh.pool{ipc = true} print(pcall(p.export, p, '" .. psock .. "'))"))
    assert.are.equal(0, code, e)
    assert.truthy(o:find(psock .. " already exists: remove it or choose another path", 1, true), o)
    assert.is_true(exists(psock))
  end)
end)

describe("socket files", function()
  it("are removed at exit only while they are still the socket bound", function()
    local d = tmpdir()
    local sock, errf = d .. "/s.sock", d .. "/err"
    local pid = serve(sock, errf)
    os.remove(sock)
    local f = assert(io.open(sock, "w"))          -- another file now has the path
    f:write("keep") f:close()
    os.execute("kill -TERM " .. pid)
    assert.truthy(H.poll(function() return not exists("/proc/" .. pid .. "/stat") end, 5))
    assert.are.equal("keep", H.slurp_or(sock))
    -- p:export's
    local psock = d .. "/pool.sock"
    local p = poolsh.pool{ipc = true}
    p:export(psock)
    assert.are.equal("600", mode_of(psock))
    os.remove(psock)
    f = assert(io.open(psock, "w"))
    f:write("keep") f:close()
    p:destroy()
    assert.are.equal("keep", H.slurp_or(psock))
  end)

  it("are never followed after binding: a symlink swapped in after the check is not chmod-ed", function()
    -- The other user wins the race between poolsh's lstat of the socket it
    -- just bound and what it does next with the path (in a directory both
    -- may write): an LD_PRELOAD shim moves the socket aside right after
    -- that lstat and leaves a symlink to a victim file in its place.
    local d = tmpdir()
    local shim = d .. "/swap.so"
    local src = assert(io.open(d .. "/swap.c", "w"))
    src:write([[
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static int swap(const char *path, int r, mode_t mode) {
  static int done;
  const char *p = getenv("SWAP_PATH"), *t = getenv("SWAP_TARGET");
  if (!done && r == 0 && S_ISSOCK(mode) && p && t && strcmp(path, p) == 0) {
    char aside[4096];
    done = 1;
    snprintf(aside, sizeof aside, "%s.aside", p);
    if (rename(p, aside) == 0 && symlink(t, p) != 0) rename(aside, p);
  }
  return r;
}
int lstat(const char *path, struct stat *st) {
  int (*real)(const char *, struct stat *) = (int (*)(const char *, struct stat *))dlsym(RTLD_NEXT, "lstat");
  int r = real(path, st);
  return swap(path, r, st->st_mode);
}
int lstat64(const char *path, struct stat64 *st) {
  int (*real)(const char *, struct stat64 *) = (int (*)(const char *, struct stat64 *))dlsym(RTLD_NEXT, "lstat64");
  int r = real(path, st);
  return swap(path, r, st->st_mode);
}
]])
    src:close()
    local _, e, code = H.sh("cc -shared -fPIC -o " .. H.quote(shim) .. " " .. H.quote(d .. "/swap.c") .. " -ldl")
    assert.are.equal(0, code, e)
    local victim = d .. "/victim"
    local f = assert(io.open(victim, "w"))
    f:write("a file of root's that others read") f:close()
    os.execute("chmod 0644 " .. victim)
    local sock, errf = d .. "/s.sock", d .. "/err"
    serve(sock, errf, ("env LD_PRELOAD=%s SWAP_PATH=%s SWAP_TARGET=%s"):format(H.quote(shim), H.quote(sock),
      H.quote(victim)))
    assert.truthy(exists(sock .. ".aside"), "the shim did not swap the socket: " .. H.slurp_or(errf))
    assert.are.equal("644", mode_of(victim))
    assert.are.equal("700", mode_of(d))
  end)

  it("are named by the whole string: a NUL byte in a name is refused, not cut there", function()
    local d = tmpdir()
    local env = "timeout 10 env XDG_RUNTIME_DIR=" .. d   -- serve cut at the NUL served forever
    local o, e, code = H.poolsh_cmd("--backend=sim -e " .. H.quote(
      "local p = poolsh.pool{ipc = true} " ..
      "print(pcall(function() return p:export('pool\\0x') end)) " ..
      "print(pcall(function() return p:export('" .. d .. "/s\\0x') end)) " ..
      "print(pcall(poolsh.import_pool, 'pool\\0x', 0.1)) " ..
      "print(pcall(poolsh.connect, 'peer\\0x', 0.1)) " ..
      "print(pcall(poolsh.serve, 'peer\\0x'))"), env)
    assert.are.equal(0, code, e)
    assert.are.equal(
      "false\t(command line):1: bad argument #1 to 'export' (the socket path holds a NUL byte)\n" ..
      "false\t(command line):1: bad argument #1 to 'export' (the socket path holds a NUL byte)\n" ..
      "false\tbad argument #1 to 'poolsh.import_pool' (the socket path holds a NUL byte)\n" ..
      "false\tbad argument #1 to 'poolsh.connect' (the socket path holds a NUL byte)\n" ..
      "false\tbad argument #1 to 'poolsh.serve' (the socket path holds a NUL byte)\n", o)
    assert.falsy(exists(d .. "/poolsh/pool"))
    assert.falsy(exists(d .. "/s"))
  end)

  it("given a bare name, live in a private 0700 directory", function()
    local d = tmpdir()
    local env = "env XDG_RUNTIME_DIR=" .. d
    local errf = d .. "/err"
    serve("peer", errf, env)
    assert.are.equal("700", mode_of(d .. "/poolsh"))
    assert.are.equal("600", mode_of(d .. "/poolsh/peer"))
    assert.truthy(H.slurp_or(errf):find("serving on " .. d .. "/poolsh/peer", 1, true))
    local o, e, code = H.poolsh_cmd("--backend=sim -e " .. H.quote(
      "local c <close> = poolsh.connect('peer', 5) print(c:eval('return 6 * 7')) " ..
      "local p = poolsh.pool{ipc = true} p:export('pool') " ..
      "local q <close> = poolsh.spawn() print(q:eval('return poolsh.import_pool(\"pool\").imported')) " ..
      "print(pcall(poolsh.connect, 'nothing'))"), env)
    assert.are.equal(0, code, e)
    assert.truthy(o:find("^42\ntrue\nfalse\tpoolsh.connect: no socket at " .. d .. "/poolsh/nothing"), o)
  end)

  it("refuse a private directory that others may enter, or a symlink", function()
    local d = tmpdir()
    local env = "env XDG_RUNTIME_DIR=" .. d
    os.execute("mkdir -m 0755 " .. d .. "/poolsh")
    local o, e, code = H.poolsh_cmd("--backend=sim --serve peer", "timeout 10 " .. env)
    assert.are.equal(1, code)
    assert.truthy((o .. e):find("poolsh.serve: the private socket directory " .. d ..
      "/poolsh is not safe: others may enter it (it must be a directory of uid 0 with mode 0700): remove it", 1, true), o .. e)
    os.execute("rmdir " .. d .. "/poolsh; mkdir -m 0700 " .. d .. "/other; ln -s other " .. d .. "/poolsh")
    o, e, code = H.poolsh_cmd("--backend=sim -e " .. H.quote("print(pcall(poolsh.connect, 'peer'))"), env)
    assert.are.equal(0, code, e)
    assert.truthy(o:find("/poolsh is not safe: it is not a directory", 1, true), o)
  end)
end)

describe("the export ledger", function()
  it("cannot be truncated by an importer: the exporter does not die of SIGBUS", function()
    local d = tmpdir()
    local sock = d .. "/pool.sock"
    local ex <close> = poolsh.spawn()
    ex:eval("p = poolsh.pool{ipc = true} p:export(...) b = p:alloc(4096) b:export()", sock)
    local ip = poolsh.import_pool(sock)
    later(function() ip:destroy() end)
    -- this process's copy of the ledger's fd, opened again with O_TRUNC
    local listing = H.sh("ls -l /proc/" .. my_pid() .. "/fd")
    local fd = listing:match(" (%d+) %-> /memfd:poolsh%-export%-ledger")
    assert.truthy(fd, listing)
    local f, err = io.open("/proc/self/fd/" .. fd, "w")
    if f then f:close() end
    assert.are.equal("ok", ex:eval("b:export() poolsh.fill(b, 1) b:free() return 'ok'"))
    assert.is_nil(f)
    assert.truthy(tostring(err):find("Operation not permitted", 1, true), err)
  end)
end)

describe("bounds", function()
  it("a peer flooding messages during an eval closes the channel instead of growing us", function()
    local p <close> = poolsh.spawn()
    local e = H.err(p.eval, p, "for i = 1, 5000 do poolsh.parent:send(i) end return 'done'")
    assert.are.equal("process " .. p.pid .. " sent more than 4096 messages or 128 MiB that "
      .. "were not read: the channel is closed", e)
    assert.is_false(p.open)
  end)

  it("an eval request sent to a client is malformed", function()
    local d = tmpdir()
    local sock = d .. "/e.sock"
    local py = "import socket,sys,time\n" ..
      "s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); c,_=s.accept()\n" ..
      "code=b'return 1'; body=b'E'+(1).to_bytes(4,'big')+(1).to_bytes(4,'big')+b's'+len(code).to_bytes(4,'big')+code\n" ..
      "c.sendall(len(body).to_bytes(4,'big')+body); time.sleep(10)\n"
    background(PY .. " -c " .. H.quote(py) .. " " .. sock)
    assert.truthy(H.poll(function() return exists(sock) end, 5))
    local c <close> = poolsh.connect(sock, 5)
    local e = H.err(c.recv, c, 3)
    assert.are.equal("a malformed message came from the server at " .. sock .. ": the channel "
      .. "is closed (an eval request: only this process sends those to it)", e)
  end)

  it("--serve: a client that stops half-way through a message holds no other client", function()
    local d = tmpdir()
    local sock, errf = d .. "/s.sock", d .. "/err"
    local pid = serve(sock, errf)
    -- announces 64 MiB, sends 10 bytes, and waits
    local py = "import socket,sys,time\n" ..
      "s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n" ..
      "s.sendall((64<<20).to_bytes(4,'big')+b'M'+bytes(9)); print('sent', flush=True); time.sleep(30)\n"
    local started = os.time()
    local slow = d .. "/slow"
    background(PY .. " -c " .. H.quote(py) .. " " .. sock .. " >" .. slow)
    assert.truthy(H.poll(function() return H.slurp_or(slow):find("sent", 1, true) end, 5))
    local idle <close> = poolsh.connect(sock, 5)          -- connected, says nothing
    local o, e, code = H.sh("timeout 8 " .. H.exe .. " --backend=sim -e " .. H.quote(
      "local c = poolsh.connect('" .. sock .. "', 5) print(c:eval('return 6 * 7'))"))
    assert.are.equal(0, code, e)
    assert.are.equal("42\n", o)
    local rss = tonumber(H.slurp("/proc/" .. pid .. "/status"):match("VmRSS:%s*(%d+)"))
    assert.is_true(rss < 48 * 1024, "the server grew to " .. rss .. " kB")
    assert.truthy(H.poll(function()
      return H.slurp_or(errf):find("sent part of a message and not the rest within 10 s: the channel is closed", 1, true)
    end, 15), H.slurp_or(errf))
    assert.is_true(os.time() - started >= 9)
    assert.are.equal(1, idle:eval("return 1"))               -- the idle one is still served
  end)

  it("eval's timeout_s: raises in time, and the late reply is dropped", function()
    local p <close> = poolsh.spawn()
    local e = H.err(p.eval, p, {"os.execute('sleep 1') return 'late'", timeout_s = 0.2})
    assert.are.equal("timed out after 0.2 s waiting for eval's results from process " .. p.pid, e)
    assert.are.equal(5, p:eval({"return ...", timeout_s = 5}, 5))
    e = H.err(function() return p:eval({"return 1", timeout_s = -1}) end)
    assert.truthy(e:find("timeout_s must be >= 0 and finite (seconds)", 1, true), e)
  end)
end)

describe("poolsh.spawn's child", function()
  it("inherits no file the parent has open, only the channel", function()
    local path = os.tmpname()
    later(function() os.remove(path) end)
    -- the parent poolsh holds fd 7 on path (from its shell), not close-on-exec
    local o, e, code = H.sh("exec 7<" .. path .. "; " .. H.exe .. " --backend=sim -e " .. H.quote([=[
      local p <close> = poolsh.spawn()
      print(p:eval([[
        local s = io.open('/proc/self/stat') local pid = s:read('n') s:close()
        local h = io.popen('ls -l /proc/' .. pid .. '/fd') local t = h:read('a') h:close()
        return t]]))]=]))
    assert.are.equal(0, code, e)
    assert.truthy(o:find(" 3 %-> socket:"), o)
    assert.falsy(o:find(path, 1, true), o)
  end)

  it("of a poolsh started with -E ignores LUA_INIT too", function()
    local mark = os.tmpname()
    os.remove(mark)
    later(function() os.remove(mark) end)
    local o, e, code = H.poolsh_cmd("-E --backend=sim -e " .. H.quote(
      "local p <close> = poolsh.spawn() print(p:eval('return 1'))"),
      "env LUA_INIT=" .. H.quote("io.open('" .. mark .. "', 'w'):close()"))
    assert.are.equal(0, code, e)
    assert.are.equal("1\n", o)
    assert.is_false(exists(mark))
  end)
end)
