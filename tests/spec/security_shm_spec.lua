-- Shared memory that another process can write (docs/ipc.md, "How the sim
-- models it"; docs/sim.md, IPC): the sim's IPC event slots and the tokens
-- that name them. Each case runs its own poolsh on the sim (whatever
-- backend this spec runs on), so a clock moved to its end or a killed
-- process harms nothing here. The segment's own attacks (a rewritten
-- header or table, a truncated arena, an unsealed memfd) are
-- tests/c/test_sim_ipc.c's: a peer there writes the mapping directly.
local poolsh = require "poolsh"
local H = require "helpers"

local q = H.quote
local SIM = "--backend=sim"
local NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups"
-- Becoming nobody needs root (CI runs as root).
local as_root = (H.sh("id -u")):match("^0\n") and it or pending

-- The shm object an event token names: its name without the slash.
local function slot_name(tok)
  local hex = assert(tok:match(":(%x+)$"), "no hex data in " .. tok)
  local bytes = hex:gsub("..", function(h) return string.char(tonumber(h, 16)) end)
  return assert(bytes:sub(10):match("^([^%z]+)"))   -- after magic, version and "/"
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- A fresh directory for one case's scripts; removed by the caller.
local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -m 700 " .. q(d)))
  return d
end

-- Runs Lua source in a poolsh on the sim (as prefix says: e.g. nobody);
-- returns stdout, stderr, exit code.
local function run(src, prefix)
  local d = tmpdir()
  local path = d .. "/case.lua"
  local f = assert(io.open(path, "w"))
  f:write(src)
  f:close()
  assert(os.execute("chmod 755 " .. q(d) .. " && chmod 644 " .. q(path)))
  local o, e, code = H.sh((prefix and prefix .. " " or "") .. H.exe .. " " .. SIM .. " " .. q(path))
  os.remove(path)
  os.remove(d)
  return o, e, code
end

-- Starts a poolsh on the sim (as prefix says) that makes an IPC event,
-- prints its pid and the event's token, and lives until it is killed (30
-- s at most). Returns the pid, the token and a function that SIGKILLs it
-- (so nothing unlinks its slot) and waits for it. While it lives, no
-- other poolsh's sweep may remove its slot.
local function holder(prefix)
  local d = tmpdir()
  local path = d .. "/hold.lua"
  local f = assert(io.open(path, "w"))
  f:write([[
local e = poolsh.event{ ipc = true }
print(e:export())
io.stdout:flush()
local stop = os.time() + 30
while os.time() < stop do os.execute("sleep 0.05") end
]])
  f:close()
  assert(os.execute("chmod 755 " .. q(d) .. " && chmod 644 " .. q(path)))
  local cmd = "echo $$; exec " .. (prefix and prefix .. " " or "") .. H.exe .. " " .. SIM .. " " .. q(path)
  local p = assert(io.popen("sh -c " .. q(cmd) .. " </dev/null 2>&1", "r"))
  local pid = assert(tonumber(p:read("l")), "no pid")
  local tok = assert(p:read("l"), "no token")
  local function kill()
    os.execute("kill -KILL " .. pid)
    p:close()
    os.remove(path)
    os.remove(d)
  end
  return pid, tok, kill
end
describe("IPC event slots", function()
  it("clamp a peer's huge delay to the clock's end instead of overflowing", function()
    local o, e, code = run([[
local s = poolsh.stream()
local ev = poolsh.event{ ipc = true }
ev:record(s)
local tok = ev:export()
local hex = tok:match(":(%x+)$")
local bytes = hex:gsub("..", function(h) return string.char(tonumber(h, 16)) end)
local f = assert(io.open("/dev/shm" .. bytes:sub(9):match("^([^%z]+)"), "r+b"))
f:seek("set", 8)
local gen = string.unpack("<I8", f:read(8))
f:seek("set", 8)
f:write(string.pack("<I8i8", gen + 1, math.maxinteger))   -- the peer's record
f:close()
local ie = poolsh.import_event(tok)
print("done", ie:query())
ie:sync()
print("now", poolsh.now())
print("done", ie:query())
]])
    assert.equal(0, code, e)
    local lines = {}
    for l in o:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal("done\tfalse", lines[1])   -- a wrapped sum read as long done
    local now = tonumber(lines[2]:match("^now\t(%S+)"))
    assert.is_true(now >= 2 ^ 62 / 1e6 * 0.999, "the clock did not reach its end: " .. o)
    assert.equal("done\ttrue", lines[3])
  end)

  as_root("refuse an object that is another user's, both ways", function()
    -- nobody's slot, its creator alive: root opens it, and refuses it
    local _, tok, kill = holder(NOBODY)
    local path = "/dev/shm/" .. slot_name(tok)
    finally(function() kill() os.remove(path) end)
    assert.is_true(exists(path))
    assert.equal("65534", (H.sh("stat -c %u " .. q(path))):match("%d+"))
    local o2, e2, code2 = run("poolsh.import_event(" .. string.format("%q", tok) .. ")")
    assert.not_equal(0, code2, o2)
    assert.matches("cudaErrorInvalidValue: invalid argument: the IPC event's shared%-memory "
                   .. "object belongs to another user %(importing event", e2)
    -- killed, it leaves its slot; this user's next poolsh leaves it alone
    kill()
    kill = function() end
    run("print(poolsh.backend())")
    assert.is_true(exists(path))

    -- root's slot, its creator alive: nobody cannot open it
    local _, rtok, rkill = holder()
    finally(rkill)
    o2, e2 = run("print(select(2, pcall(poolsh.import_event, " .. string.format("%q", rtok)
                 .. ")))", NOBODY)
    assert.matches("belongs to another user", o2 .. e2)
  end)

  it("refuse this user's own slot when it is not mode 0600", function()
    local o2, e2 = run([[
local e = poolsh.event{ ipc = true }
local tok = e:export()
local hex = tok:match(":(%x+)$")
local bytes = hex:gsub("..", function(h) return string.char(tonumber(h, 16)) end)
assert(os.execute("chmod 644 /dev/shm" .. bytes:sub(9):match("^([^%z]+)")))
print(select(2, pcall(poolsh.import_event, tok)))
]])
    assert.matches("cudaErrorInvalidValue: invalid argument: the IPC event's shared%-memory "
                   .. "object is not mode 0600 or not an event", o2 .. e2)
  end)

  it("left by a poolsh killed by SIGKILL are removed by the next poolsh", function()
    local pid, tok, kill = holder()
    local path = "/dev/shm/" .. slot_name(tok)
    finally(function() os.remove(path) end)
    assert.is_true(exists(path), "the poolsh made no slot: " .. path)
    run("print(poolsh.backend())")        -- its creator lives: kept
    assert.is_true(exists(path))
    kill()
    assert.is_false(exists("/proc/" .. pid .. "/stat"))
    local _, e2, code2 = run("print(poolsh.backend())")
    assert.equal(0, code2, e2)
    assert.is_false(exists(path))
  end)
end)

describe("IPC tokens", function()
  it("are read whole: signs, leading zeros, NULs and trailing bytes are malformed", function()
    local ev <close> = poolsh.event{ ipc = true }
    local tok = ev:export()
    local pid = tok:match("^poolsh%-event1:(%d+):")
    local bad = {
      tok .. "\0x", tok .. "0", tok:sub(1, -2),
      tok:gsub(":" .. pid .. ":", ":+" .. pid .. ":", 1),
      tok:gsub(":" .. pid .. ":", ": " .. pid .. ":", 1),
      tok:gsub(":" .. pid .. ":", ":0" .. pid .. ":", 1),
      tok:gsub(":e(%d+):", ":e99999999999999999999:", 1),
      (tok:gsub("%x%x$", "AB")),
    }
    for _, t in ipairs(bad) do
      assert.matches("^poolsh.import_event: malformed token: ", H.err(poolsh.import_event, t))
    end

    if not H.is_sim() then return end   -- importing into the exporter: the sim's answer
    local path = require("poolsh.scenario").socket_path()
    local p <close> = poolsh.pool{ ipc = true }
    p:export(path)
    local ip <close> = poolsh.import_pool(path)
    local b <close> = p:alloc(4096, poolsh.stream())
    local btok = b:export()
    local bbad = {
      btok .. "\0x", btok .. "0", btok:gsub(":4096:", ":+4096:", 1),
      btok:gsub(":4096:", ":-1:", 1), btok:gsub(":4096:", ":04096:", 1),
      btok:gsub(":4096:", ":99999999999999999999999:", 1), btok:gsub(":b(%d+):", ":b+%1:", 1),
      (btok:gsub("^poolsh%-ipc1:", "poolsh-ipc1: ", 1)),
    }
    for _, t in ipairs(bbad) do
      assert.matches("^p%d+:import: malformed token: ", H.err(ip.import, ip, t))
    end
  end)
end)
