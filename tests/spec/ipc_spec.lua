-- IPC pools between two poolsh processes (docs/ipc.md): the spec process
-- exports, a child poolsh (tests/data/ipc/child.lua) on the same backend
-- imports. CI runs both on the sim; on a GPU both run on cuda.
local poolsh = require "poolsh"
local H = require "helpers"

local CHILD = "tests/data/ipc/child.lua"
local BACKEND = "--backend=" .. H.backend()

local socket_path = require("poolsh.scenario").socket_path

-- An IPC pool served at a fresh socket, a stream, and the path.
local function shared_pool()
  local path = socket_path()
  local p = poolsh.pool{ ipc = true }
  p:export(path)
  return p, poolsh.stream(), path
end

-- Hands the child its tokens in <path>.tokens, one a line, a file of mode
-- 0600: a token maps memory for any process of this user, and a command
-- line is shown to every user by ps (docs/ipc.md).
local function hand_tokens(path, ...)
  local file = path .. ".tokens"
  os.execute("umask 077; : > " .. H.quote(file))
  local f = assert(io.open(file, "w"))
  for i = 1, select("#", ...) do f:write(tostring((select(i, ...))), "\n") end
  f:close()
end

-- Starts the child in mode with its tokens; returns a reader of its lines,
-- a function that lets it end (creates <path>.go) and closes it, and its pid.
local function start(mode, path, ...)
  hand_tokens(path, ...)
  local args = { mode, path }
  for i, a in ipairs(args) do args[i] = H.quote(a) end
  local cmd = "sh -c " .. H.quote("echo $$; exec " .. H.exe .. " " .. BACKEND .. " " .. CHILD
                                  .. " " .. table.concat(args, " ")) .. " 2>&1"
  local f = assert(io.popen(cmd, "r"))
  local pid = tonumber(f:read("l"))
  local function line() return f:read("l") end
  local function finish()
    local go = assert(io.open(path .. ".go", "w")); go:close()
    local rest = f:read("a")
    f:close()
    os.remove(path .. ".go")
    os.remove(path .. ".tokens")
    return rest
  end
  return line, finish, pid
end

-- Runs the child to its end; returns its output lines.
local function run(mode, path, ...)
  hand_tokens(path, ...)
  local args = { mode, path }
  for i, a in ipairs(args) do args[i] = H.quote(a) end
  local o, e = H.poolsh_cmd(BACKEND .. " " .. CHILD .. " " .. table.concat(args, " "))
  os.remove(path .. ".tokens")
  local lines = {}
  for l in (o .. e):gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines
end

-- What only the sim answers as written (the GPU's answer is not measured).
local it_sim = H.is_sim() and it or pending

describe("IPC pools", function()
  it("poolsh.pool{ipc = true} is an IPC pool; others are not", function()
    local p <close> = poolsh.pool{ ipc = true }
    assert.is_true(p.ipc)
    assert.is_false(p.imported)
    assert.is_nil(p.exporter)
    assert.matches("ipc, device", tostring(p))
    local q <close> = poolsh.pool{}
    assert.is_false(q.ipc)
    assert.matches("option 'ipc' must be a boolean", H.err(poolsh.pool, { ipc = 1 }))
  end)

  it("shares data both ways, ordered by IPC events; the importer frees first", function()
    local path = socket_path()
    local s = poolsh.stream()
    local p <close> = poolsh.pool{ ipc = true, release_threshold = 0 }
    assert.equal(p, p:export(path))
    local b = p:alloc("1 MiB", s)
    poolsh.fill(b, 0xAB, s)
    local ready = poolsh.event{ ipc = true }
    assert.is_false(ready.timing)
    ready:record(s)
    local tok = b:export()
    assert.matches("^poolsh%-ipc1:%d+:b" .. b.id .. ":1048576:" .. ("%x"):rep(128) .. "$", tok)
    assert.is_true(b.exported)
    assert.matches("exported", tostring(b))
    local line, finish = start("read", path, tok, ready:export())
    assert.same({ "pool", "true" }, { line():match("^(%S+)\t(%S+)") })
    local buf = line()
    assert.matches("^buffer\ttrue\tpid %d+'s b" .. b.id .. "\t", buf)
    assert.matches("imported from pid %d+'s b" .. b.id, buf)
    -- the importer's live line names where the buffer comes from
    assert.matches("^live\t  b%d+ 1%.00 MiB imported from pid %d+'s b" .. b.id .. "$", line())
    -- and its trace marks the imported pool and buffer
    assert.equal("trace\tpool_create ipc=true imported=true, alloc ipc=nil imported=true", line())
    assert.equal("event\ttrue\ttrue\tfalse", line())
    assert.equal("read\tab\t171", line())          -- the exporter's bytes, after the wait
    local fin = line():match("^finished\t(%S+)$")
    assert.truthy(fin)
    -- the exporter waits on the importer's finished event before its own free
    local done <close> = poolsh.import_event(fin)
    assert.is_true(done.imported)
    s:wait(done)
    assert.equal(string.rep("\xcd", 4), b:read(0, 4))
    finish()
    b:free()
    s:sync()
    assert.equal(0, p:stats().reserved)           -- threshold 0 acts on the exporter's pool
    ready:destroy()
    os.remove(path)
  end)

  it("refuses the exporter's free of a block still imported, and keeps it", function()
    local p <close>, s, path = shared_pool()
    local b = p:alloc(4096, s)
    local line, finish = start("hold", path, b:export())
    assert.equal("held\t4096", line())
    assert.equal("b" .. b.id .. " is still imported by 1 process: every importer must free it first",
                 H.err(b.free, b):gsub("^.-:%d+: ", ""))
    assert.is_true(b.live)                        -- nothing was freed
    assert.matches("freed", finish())
    b:free()                                      -- the importer freed first: now it may
    assert.is_false(b.live)
  end)

  it_sim("refuses a second import of one block in one process, and allows it after the free", function()
    local p <close>, s, path = shared_pool()
    local ip <close> = poolsh.import_pool(path)
    local b = p:alloc(4096, s)
    local tok = b:export()
    local ib = ip:import(tok, s)
    assert.matches("is already imported in this process: free that Buffer first", H.err(ip.import, ip, tok, s))
    ib:free()
    local again = ip:import(tok, s)               -- freed: it may come again
    assert.is_true(again.live)
    again:free()
    b:free()
    s:sync()
  end)

  it("an importer that ended without freeing no longer counts", function()
    local p <close>, s, path = shared_pool()
    local b = p:alloc(4096, s)
    local line, finish, pid = start("hold", path, b:export())
    assert.equal("held\t4096", line())
    assert.matches("still imported by 1 process", H.err(b.free, b))
    os.execute("kill -KILL " .. pid)
    finish()
    b:free()
    assert.is_false(b.live)
  end)

  -- Reads /proc/<pid>/stat: the state letter and the parent pid.
  local function proc_stat(pid)
    local f = io.open("/proc/" .. pid .. "/stat")
    if not f then return nil end
    local t = f:read("a"); f:close()
    local state, ppid = t:match("%) (%S) (%d+)")
    return state, tonumber(ppid)
  end

  it("an importer that ended but was not reaped (a zombie) no longer counts", function()
    local p <close>, s, path = shared_pool()
    local b = p:alloc(4096, s)
    local line, finish, pid = start("hold", path, b:export())
    assert.equal("held\t4096", line())
    -- its parent (a shell, or this process) must not reap it: stop the shell
    local _, ppid = proc_stat(pid)
    local self = assert(io.open("/proc/self/stat"))
    local me = tonumber(self:read("a"):match("^(%d+)")); self:close()
    local stopped = ppid and ppid ~= me
    if stopped then os.execute("kill -STOP " .. ppid) end
    os.execute("kill -KILL " .. pid)
    local deadline = os.time() + 5
    while proc_stat(pid) ~= "Z" and os.time() < deadline do os.execute("sleep 0.02") end
    local zombie = proc_stat(pid) == "Z"
    local ok, err = pcall(b.free, b)
    if stopped then os.execute("kill -CONT " .. ppid) end
    finish()
    assert.is_true(zombie)
    assert.is_true(ok, err)
    assert.is_false(b.live)
  end)

  it("a pool exports any number of buffers over its life (freed entries are reused)", function()
    local s = poolsh.stream()
    local p <close> = poolsh.pool{ ipc = true }
    p:export(socket_path())   -- shared first, 4 KiB buffers: an H200 refused 64 B ones of an unshared pool
    for _ = 1, 1100 do
      local b = p:alloc(4096, s)
      b:export()
      b:free()
    end
    -- with 1024 buffers exported and live, the ledger is full
    local live = {}
    for i = 1, 1024 do live[i] = p:alloc(4096, s); live[i]:export() end
    local extra = p:alloc(4096, s)
    assert.matches("b" .. extra.id .. ": p" .. p.id .. "'s export ledger is full", H.err(extra.export, extra))
    live[1]:free()
    assert.matches("^poolsh%-ipc1:", extra:export())   -- the freed one's entry
    extra:free()
    for i = 2, 1024 do live[i]:free() end
    s:sync()
  end)

  it("an imported pool cannot allocate, trim or set its threshold; its counters read 0", function()
    local p <close>, s, path = shared_pool()
    local b = p:alloc(4096, s)
    local tok = b:export()
    b:free()                                      -- now the token names a freed block
    local out = run("rules", path, tok)
    assert.equal("stats\t0\t0\t0\t0", out[1])
    assert.matches("^error\tcudaErrorInvalidValue: invalid argument allocating 4%.00 KiB from pool p1", out[2])
    assert.matches("p1 is imported, and an imported pool cannot allocate: only its exporter does", out[2], 1, true)
    assert.equal("error\tcudaErrorInvalidValue: invalid argument (trimming pool p1: an imported pool's memory "
                 .. "is its exporter's)", out[3])
    assert.equal("error\tcudaErrorInvalidValue: invalid argument (setting release_threshold of pool p1: an "
                 .. "imported pool's memory is its exporter's)", out[4])
    assert.matches("p1 is imported: only its exporter can export it", out[5])
    assert.matches("p1:import: pid %d+'s b" .. b.id .. " was already freed by its exporter", out[6])
    os.remove(path)
  end)

  it("refuses malformed and foreign tokens, naming what is wrong", function()
    local path = socket_path()
    local p <close> = poolsh.pool{ ipc = true }
    p:export(path)
    local hex = ("0"):rep(128)
    local cases = {
      { "hello", "malformed token: not a buffer token" },
      { "poolsh-ipc9:1:b1:1:" .. hex, "malformed token: a token of another poolsh version" },
      { "poolsh-ipc1:x:b1:1:" .. hex, "malformed token: no exporter pid" },
      { "poolsh-ipc1:12:1:1:" .. hex, "malformed token: no buffer id" },
      { "poolsh-ipc1:12:b4294967297:1:" .. hex, "malformed token: no buffer id" },   -- > INT_MAX
      { "poolsh-ipc1:4294967297:b1:1:" .. hex, "malformed token: no exporter pid" },
      { "poolsh-ipc1:12:b1:0:" .. hex, "malformed token: no size" },
      { "poolsh-ipc1:12:b1:1:abc", "malformed token: its data is not 128 hex digits" },
      { "poolsh-ipc1:1:b1:1:" .. hex, "the token is from pid 1's pool, not from p1's exporter" },
    }
    for _, c in ipairs(cases) do
      local out = run("rules", path, c[1])
      assert.matches(c[2], out[6], 1, true)
    end
    -- a token of this process's pool that was never exported from it
    local b = p:alloc(64)
    local tok = b:export()
    local pid = tok:match("^poolsh%-ipc1:(%d+):")
    local out = run("rules", path, ("poolsh-ipc1:%s:b999999:64:%s"):format(pid, hex))
    assert.matches("pid " .. pid .. "'s b999999 was never exported from this pool", out[6], 1, true)
    b:free()
    os.remove(path)
  end)

  it("export: only IPC pools, at a path that is free and short enough", function()
    local q <close> = poolsh.pool{}
    assert.matches("p" .. q.id .. " was not created with ipc = true: only an IPC pool can be exported",
                   H.err(q.export, q, socket_path()))
    local p <close> = poolsh.pool{ ipc = true }
    local dir = os.tmpname()                         -- a long name in a directory of this run's own
    os.remove(dir)
    assert(os.execute("mkdir -m 0700 " .. H.quote(dir)))
    local long = dir .. "/" .. ("x"):rep(200)
    assert.matches(("socket path too long (%d bytes, at most 107)"):format(#long),
                   H.err(p.export, p, long), 1, true)
    assert.is_nil(io.open(long))                     -- and nothing was made there
    os.execute("rm -rf " .. H.quote(dir))
    local taken = os.tmpname()
    assert.matches(taken .. " already exists: remove it or choose another path",
                   H.err(p.export, p, taken), 1, true)
    os.remove(taken)
    local path = socket_path()
    p:export(path)
    assert.is_true(os.execute("test -S " .. H.quote(path)))
    assert.matches("is already exported at " .. path, H.err(p.export, p, path), 1, true)
    p:destroy()                                   -- the socket file goes with the pool
    assert.is_nil(os.execute("test -S " .. H.quote(path)))
  end)

  it("import_pool: no socket, nobody serving, a timeout", function()
    local path = socket_path()
    assert.matches("poolsh.import_pool: no socket at " .. path .. ": export the pool there first",
                   H.err(poolsh.import_pool, path), 1, true)
    -- a server stopped with SIGSTOP accepts nothing: the import times out
    local line, finish, pid = start("serve", path)
    assert.equal("serving", line())
    os.execute("kill -STOP " .. pid)
    -- kill returns before every thread has stopped: wait until it has
    for _ = 1, 500 do
      local st = H.slurp_or("/proc/" .. pid .. "/stat")
      if st:match("^%d+ %b() (%a)") == "T" then break end
      os.execute("sleep 0.01")
    end
    local t0 = os.time()
    local ok, e = pcall(H.err, poolsh.import_pool, path, 200)
    os.execute("kill -CONT " .. pid)   -- before any assertion, so finish() cannot hang
    if not ok then os.execute("kill -KILL " .. pid); finish(); error(e, 0) end
    assert.matches("poolsh.import_pool: timed out after 200 ms waiting for the pool at " .. path, e, 1, true)
    assert.is_true(os.time() - t0 < 5)
    -- a server killed outright leaves its socket file, and nobody serves it
    os.execute("kill -KILL " .. pid)
    finish()
    assert.matches("poolsh.import_pool: nobody is serving " .. path, H.err(poolsh.import_pool, path), 1, true)
    -- p:export replaces that dead socket file (a live one stays an error)
    local p <close> = poolsh.pool{ ipc = true }
    p:export(path)
    local q <close> = poolsh.pool{ ipc = true }
    assert.matches(path .. " already exists: remove it or choose another path",
                   H.err(q.export, q, path), 1, true)
    local ip <close> = poolsh.import_pool(path)
    assert.is_true(ip.imported)
    p:destroy()
    os.remove(path)
    assert.matches("duration must be >= 0", H.err(poolsh.import_pool, path, -1))
  end)

  it("the socket file goes when the exporting poolsh ends", function()
    local path = socket_path()
    local line, finish = start("serve", path)
    assert.equal("serving", line())
    local exists = function() return os.execute("test -S " .. H.quote(path)) == true end
    local was = exists()
    finish()
    assert.is_true(was)
    assert.is_false(exists())
    assert.matches("no socket at", H.err(poolsh.import_pool, path))
  end)

  it("buffers: export needs an IPC pool's own buffer", function()
    local s = poolsh.stream()
    local q <close> = poolsh.pool{}
    local b <close> = q:alloc(64, s)
    assert.matches("b" .. b.id .. " is not in an IPC pool: allocate it from poolsh.pool{ipc = true}",
                   H.err(b.export, b), 1, true)
    local m <close> = poolsh.malloc(64)
    assert.matches("is not in an IPC pool", H.err(m.export, m))
    local p <close> = poolsh.pool{ ipc = true }
    assert.matches("p" .. p.id .. " is not an imported pool", H.err(p.import, p, "x"))
    assert.is_false(b.exported)
    assert.is_false(b.imported)
    assert.is_nil(b.source)
  end)

  it("IPC events: no timing, export only IPC events, malformed tokens", function()
    assert.matches("poolsh.event: an IPC event cannot have timing: pass timing = false",
                   H.err(poolsh.event, { ipc = true, timing = true }))
    local e <close> = poolsh.event()
    assert.is_false(e.ipc)
    assert.matches("e" .. e.id .. " is not an IPC event: create it with poolsh.event{ipc = true}",
                   H.err(e.export, e), 1, true)
    local ie <close> = poolsh.event{ ipc = true }
    assert.is_true(ie.ipc)
    assert.is_false(ie.imported)
    assert.matches("^poolsh%-event1:%d+:e" .. ie.id .. ":" .. ("%x"):rep(128) .. "$", ie:export())
    assert.matches("malformed token: not an event token", H.err(poolsh.import_event, "x"))
    assert.matches("malformed token: no event id",
                   H.err(poolsh.import_event, "poolsh-event1:12:x1:" .. ("0"):rep(128)))
    assert.matches("malformed token: its data is not 128 hex digits",
                   H.err(poolsh.import_event, "poolsh-event1:12:e1:zz"))
  end)

  it_sim("an event token whose event is gone is cudaErrorInvalidValue", function()
    local ie = poolsh.event{ ipc = true }
    local tok = ie:export()
    ie:destroy()
    assert.matches("^cudaErrorInvalidValue: invalid argument %(importing event",
                   H.err(poolsh.import_event, tok))
  end)
end)
