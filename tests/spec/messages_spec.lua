--- The message spec: every error or warning message quoted in docs/*.md
-- is produced by a trigger here, and every trigger's message is quoted.
--
-- What counts as a quoted message (docs/errors.md, "How these docs quote
-- messages"): an inline code span (it may wrap lines), or a line of a
-- fenced block that is not ```lua or ```sh and is neither indented nor a
-- `$ ` command, whose text has one of the SHAPES below.
--
-- A quote becomes a Lua pattern: `<cudaErrorName>` stands for a CUDA
-- error's name, any other `<anything>` and `...` for any text, an object
-- name (s1, e2, p3, b4) for any object of that kind, `./build/poolsh` for
-- the program as run; the rest is literal. A trigger passes when its
-- message contains a match of that pattern, and, as errors.md says, a
-- CUDA failure carries no position and a Lua trigger's misuse message
-- none or the trigger's own. POOLSH_SHOW_MESSAGES=1 prints each message.
local H = require "helpers"
local poolsh = H.poolsh

local SHAPES = {
  "cudaError%a*>?%)?: ", "^%.%.%. %(",                          -- CUDA failures
  "^bad argument #", "^attempt to ", "^interrupted[ !]",
  "^poolsh[%w_.]*: ", "^<progname>: ", "^%a:[%w_]+: ",          -- prefixed messages
  " expected", "must ", "cannot ", " beyond ", "out of bounds", " not registered",
  "already ", " was destroyed", " was created", "unknown ", "invalid ", " failed",
  "too large", " outside ", " is gone", "out of memory", "not a whole number",
  " overlap", "no settable", "without CUDA", " out of range", "unsupported ",
  "needs a value", "still live at exit",
}

local function is_message(s)
  for _, shape in ipairs(SHAPES) do
    if s:find(shape) then return true end
  end
  return false
end

--- The quoted messages of one file: {text, where}.
local function extract(text, file)
  local found, prose, n, fence = {}, {}, 0, nil
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local tag = line:match("^%s*```(%S*)")
    if tag then
      fence = (fence == nil) and tag or nil
      prose[n] = ""
    elseif fence then
      prose[n] = ""
      if fence ~= "lua" and fence ~= "sh" and not line:match("^[%s$]") and is_message(line) then
        found[#found + 1] = { text = line, where = file .. ":" .. n }
      end
    else
      prose[n] = line
    end
  end
  local all, pos = table.concat(prose, "\n"), 1
  while true do
    local a, b, span = all:find("`([^`]+)`", pos)
    if not a then break end
    span = span:gsub("%s*\n%s*", " ")
    if is_message(span) then
      local line = select(2, all:sub(1, a):gsub("\n", "")) + 1
      found[#found + 1] = { text = span, where = file .. ":" .. line }
    end
    pos = b + 1
  end
  return found
end

--- The pattern a quote stands for.
local function pattern(quote)
  local p = quote:gsub("^%./build/poolsh: ", "poolsh: ")
  p = p:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")
  p = p:gsub("<cudaErrorName>", "cudaError%%a+")    -- a CUDA error's name
  p = p:gsub("%%%.%%%.%%%.", "\0")                 -- ... (elided)
  p = p:gsub("<[^<>]+>", "\0")                     -- <placeholder>
  p = p:gsub("%f[%w]([sepb])%d+%f[^%w]", "%1%%d+") -- an object's name
  return (p:gsub("%z", ".-"))
end

local slurp = H.slurp

--- Every quote in docs/*.md: {[text] = {where...}}.
local function quotes()
  local all = {}
  local ls = assert(io.popen("ls docs/*.md"))
  for file in ls:lines() do
    for _, q in ipairs(extract(slurp(file), file:match("[^/]+$"))) do
      all[q.text] = all[q.text] or {}
      table.insert(all[q.text], q.where)
    end
  end
  ls:close()
  return all
end

---------------------------------------------------------------------------
-- Triggers, one per quote (keyed by its text). A function raises the
-- message (it gets a fresh stream s and pool p); cli() runs build/poolsh,
-- lua() stock lua5.4 with poolsh on its paths, profile() poolsh with a
-- profile file, all three matching stdout and stderr together. on(),
-- with_cuda() and without_cuda() limit a trigger to a backend or a build;
-- fault() arms the sim's fault injection first. pend() says why nothing
-- can trigger a message here, finding() why the code is at fault: both
-- read pending, and busted lists every pending case by name at the end.

local function cli(args, env) return { cli = args, env = env } end
local function lua(code, env, bare) return { lua = code, env = env, bare = bare } end
local function on(backend, t)
  if type(t) == "function" then t = { fn = t } end
  t.backend = backend
  return t
end
local function pend(why) return { pending = why } end
-- The message differs from docs/errors.md's rule: the code is at fault.
-- The trigger runs; the case reads pending while the finding stands.
local function finding(what, t) return { finding = what, trigger = t } end

-- A failing backend call, from the sim's fault injection (docs/sim.md,
-- "Fault injection"): the next call of op fails with err while fn runs.
-- With op nil, fn runs as is on a sim that has fault injection.
local function fault(op, fn, err)
  return { fault = op and { op, err or "cudaErrorInvalidValue" }, needs_faults = true, fn = fn,
           backend = "sim" }
end
-- The same in a child poolsh (warnings on), for what only a finalizer says.
local function fault_cli(op, code)
  local arm = op and ("local pf = require 'poolsh.profile'; "
    .. "pf.arm{op = '%s', call = pf.calls('%s') + 1, error = 'cudaErrorInvalidValue'}; "):format(op, op) or ""
  local t = cli("--backend=sim -e " .. H.quote(arm .. code))
  t.backend, t.needs_faults = "sim", true
  return t
end
-- Whether this build has the cuda backend (asked of a fresh process).
local cuda_built
local function built_with_cuda()
  if cuda_built == nil then
    local o, e = H.sh("env -u POOLSH_BACKEND " .. H.exe .. " --backend=auto --version")
    cuda_built = not (o .. e):gsub("%s+", " "):find("built without CUDA")
  end
  return cuda_built
end
local function without_cuda(t)
  if type(t) == "function" then t = { fn = t } end
  t.without_cuda = true
  return t
end
-- A build with the cuda backend, its GPUs hidden (CUDA_VISIBLE_DEVICES=).
local function with_cuda(t)
  t.with_cuda = true
  return t
end
-- Whether this machine has a CUDA driver (a build with the cuda backend
-- says cudaErrorInsufficientDriver where it has none).
local driver_found
local function have_driver()
  if driver_found == nil then
    local o, e = H.sh("env -u POOLSH_BACKEND " .. H.exe .. " --backend=auto --version")
    driver_found = not (o .. e):gsub("%s+", " "):find("InsufficientDriver")
  end
  return driver_found
end
-- A trigger that needs the cuda backend and a driver (the quote names the
-- error a machine with a driver but no visible device gives).
local function with_driver(t)
  t.with_cuda, t.with_driver = true, true
  return t
end
-- A profile file (text, named fname, default my.lua) given to a child
-- poolsh on the sim with --profile, which then runs code.
local function profile(text, fname, code)
  return { profile = text, file = fname or "my.lua", code = code or "" }
end
local function fault_profile(text, fname, code)
  local t = profile(text, fname, code)
  t.needs_faults = true
  return t
end
local function have_faults()
  local ok, pf = pcall(require, "poolsh.profile")
  return ok and pf.arm and pf.calls and pf.disarm and pf
end

-- Why a fault() trigger reads pending in a tree without fault injection.
local NO_FAULTS = "a failing backend call: needs the sim's fault injection (poolsh.profile.arm), which this tree lacks"

-- Raise Lua's interrupt in the poolsh host (the flag stays set), then wait.
local function interrupt_then(code)
  return cli("-e " .. H.quote("local s = poolsh.stream(); poolsh.spin(s, 500); "
    .. "pcall(function() local f = io.popen('kill -INT $PPID'); f:close() end); " .. code))
end

local function dead_stream() local s = poolsh.stream(); s:destroy(); s:sync() end
local function dead_event() local e = poolsh.event(); e:destroy(); e:sync() end
local function dead_pool() local q = poolsh.pool{}; q:destroy(); q:trim(0) end
local function freed_buffer(_, p) local b = p:alloc(16); b:free(); b:free() end
local function oom_pool(s)
  local q <close> = poolsh.pool{ max_size = "64 MiB" }
  local b <close> = q:alloc("8 MiB", s)
  q:alloc("60 MiB")
end
local function oom_malloc() poolsh.malloc("1 TiB") end
local function pool_no_device() poolsh.pool{ device = poolsh.device_count() } end
local function pool_no_device_max() poolsh.pool{ device = poolsh.device_count(), max_size = "64 MiB" } end
local function bad_event_pair()
  local a <close> = poolsh.event()
  local b <close> = poolsh.event()
  a:elapsed(b)
end
local function no_timing(s)
  local a <close> = poolsh.event{ timing = false }
  local b <close> = poolsh.event()
  a:record(s); b:record(s); s:sync()
  a:elapsed(b)
end
local function offset_200(s, p) local b <close> = p:alloc(100, s); b:read(200) end
local function range_95(s, p) local b <close> = p:alloc(100, s); b:read(95, 8) end
local function copy_off(s, p)
  local a <close> = p:alloc(100, s)
  local b <close> = p:alloc(100, s)
  poolsh.copy(a, b, { src_offset = 200 })
end
local function copy_oob(s, p)
  local a <close> = p:alloc(100, s)
  local b <close> = p:alloc(100, s)
  poolsh.copy(a, b, { bytes = 20, dst_offset = 90 })
end
local function copy_overlap(s, p)
  local b <close> = p:alloc(100, s)
  poolsh.copy(b, b, { bytes = 20, dst_offset = 10 })
end
local function copy_bytes(s, p) local b <close> = p:alloc(100, s); poolsh.copy(b, b, { bytes = -1 }) end
local function registered_twice()
  local b <close> = poolsh.pageable(100)
  poolsh.register(b); poolsh.register(b)
end
local function not_registered() local b <close> = poolsh.pageable(100); poolsh.unregister(b) end
local function register_pool(s, p) local b <close> = p:alloc(100, s); poolsh.register(b) end
local function fill_pageable(s) local b <close> = poolsh.pageable(100); poolsh.fill(b, 1, s) end
local function stream_gone(s, p)
  local s2 = poolsh.stream()
  local b = p:alloc(16, s2)
  s2:destroy()
  local ok, e = pcall(function() b:free() end)
  b:free(s)
  error(e, 0)
end
local function free_on_stream(s)
  local b = poolsh.malloc(16)
  local ok, e = pcall(function() b:free(s) end)
  b:free()
  error(e, 0)
end
local function wrong_size() poolsh.malloc(1.5) end
-- The sim's clock run to its end, in a child: the specs share one clock.
local clock_end_spin = on("sim", cli("--backend=sim -e "
  .. H.quote("local s = poolsh.stream(); for _ = 1, 5e6 do poolsh.spin(s, 1e12) end")))
local clock_end_sleep = on("sim", cli("--backend=sim -e " .. H.quote("for _ = 1, 5e6 do poolsh.sleep(1e12) end")))
local function unknown_backend() return lua("poolsh.backend()", "POOLSH_BACKEND=gpu") end
-- A child poolsh on the sim under a limit (cli.md, "One GPU for a room").
local function limited(flags, code) return cli("--backend=sim " .. flags .. " -e " .. H.quote(code)) end
local OVER_LIMIT = limited("--limit=128MiB", "local s = poolsh.stream(); "
  .. "local p1, p2 = poolsh.pool{release_threshold = 'max'}, poolsh.pool{}; "
  .. "local a <close> = p1:alloc('40 MiB', s); p2:alloc('65 MiB', s)")
local OVER_PINNED = limited("--pinned-limit=1MiB", "poolsh.pinned('2 MiB')")
local LEAK = cli("-e " .. H.quote("keep = poolsh.pool{}:alloc('4 MiB')"))
local LEAK2 = cli("-e " .. H.quote("keep = {poolsh.malloc(8), poolsh.malloc(8)}"))

-- Two simulated devices in a child poolsh (docs/multi-gpu.md).
local function two(code, flags)
  return on("sim", cli("--backend=sim --sim-devices=2 " .. (flags or "") .. " -e " .. H.quote(code)))
end
local NO_ACCESS = "local p = poolsh.pool{device = 0}; local s1 = poolsh.stream{device = 1}; "
  .. "local b = p:alloc(4096); "

local function lua_cmd(code, env, bare)
  local paths = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH=" .. H.quote(H.build .. "/lib/?.so;;")
  return H.sh((env or "") .. " " .. paths .. " lua5.4 -e "
    .. H.quote((bare and "" or "poolsh = require 'poolsh'; ") .. code))
end

-- Processes (docs/processes.md): a `poolsh --serve` in the background on
-- a fresh socket path; calls fn(path) while it serves, ends it, returns
-- what fn raised, else what the server said on stderr.
-- Runs fn(path) with a socket at path whose backlog is full and that
-- nobody accepts on (python listens with a backlog of 0 and takes it up).
local function with_full_backlog(fn)
  return function()
    local base = os.tmpname()
    os.remove(base)
    local path = base .. ".sock"
    local py = "import socket,sys,os,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); "
      .. "s.listen(0); c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); "
      .. "print(os.getpid(), flush=True); time.sleep(20)"
    local f = assert(io.popen("python3 -c " .. H.quote(py) .. " " .. path .. " &"))
    local pid = f:read("l")
    f:close()
    local ok, e = pcall(fn, path)
    if pid then os.execute("kill -KILL " .. pid) end
    os.remove(path)
    if not ok then error(e, 0) end
    return e
  end
end

local function with_server(fn)
  return function()
    local base = os.tmpname()
    os.remove(base)
    local path, errf = base .. ".sock", base .. ".err"
    local f = assert(io.popen(("%s --backend=sim --serve %s 2>%s </dev/null & echo $!")
      :format(H.exe, path, errf)))
    local pid = f:read("l")
    f:close()
    local said = H.poll(function() return H.slurp_or(errf):find("serving on", 1, true) end, 10)
    local ok, e = false, "the server did not start"
    if said then ok, e = pcall(fn, path, pid) end   -- else poolsh.serve(path) would serve here
    os.execute("kill -TERM " .. pid)
    H.poll(function() return os.rename(path, path) == nil end, 5)
    local text = H.slurp_or(errf)
    os.remove(errf)
    os.remove(path)
    assert(said, "the server did not start: " .. text)
    error(ok and text or e, 0)
  end
end
-- The same with a file that is not poolsh as POOLSH_BIN.
local function with_bin(text, mode)
  return function()
    local bin = os.tmpname()
    local f = assert(io.open(bin, "w")); f:write(text); f:close()
    if mode then os.execute("chmod " .. mode .. " " .. bin) end
    local o, e = lua_cmd("print(select(2, pcall(poolsh.spawn)))", "POOLSH_BIN=" .. bin)
    os.remove(bin)
    error(o .. e, 0)
  end
end
-- poolsh.core copied where no poolsh program is beside it.
local function module_alone()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir .. "/a/b/c/lib/poolsh && cp " .. H.build .. "/lib/poolsh/core.so "
    .. dir .. "/a/b/c/lib/poolsh/")
  local o, e = H.sh("env -u POOLSH_BIN LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH="
    .. H.quote(dir .. "/a/b/c/lib/?.so;;") .. " lua5.4 -e "
    .. H.quote("local poolsh = require 'poolsh' print(select(2, pcall(poolsh.spawn)))"))
  os.execute("rm -rf " .. dir)
  error(o .. e, 0)
end
-- IPC (docs/ipc.md): a socket path, and a pool exported and imported in
-- this same process (the sim allows it; the GPU's answer is not measured).
local sock = require("poolsh.scenario").socket_path
-- Runs fn(...), then cleanup(), then raises fn's error.
local function then_clean(cleanup, fn, ...)
  local ok, e = pcall(fn, ...)
  cleanup()
  if not ok then error(e, 0) end
end
local function ipc_pair(fn)
  return function(s)
    local path = sock()
    local xp <close> = poolsh.pool{ ipc = true }
    xp:export(path)
    local ip <close> = poolsh.import_pool(path)
    return fn(s, xp, ip)
  end
end
local ipc_still_imported = on("sim", ipc_pair(function(s, xp, ip)
  local b = xp:alloc(64, s)
  local ib = ip:import(b:export(), s)
  then_clean(function() ib:free(); b:free() end, b.free, b)
end))
local ipc_freed = on("sim", ipc_pair(function(s, xp, ip)
  local b = xp:alloc(64, s)
  local tok = b:export()
  b:free()
  ip:import(tok)
end))
local ipc_twice = on("sim", ipc_pair(function(s, xp, ip)
  local b = xp:alloc(64, s)
  local tok = b:export()
  local ib = ip:import(tok, s)
  then_clean(function() ib:free(); b:free() end, ip.import, ip, tok, s)
end))
local ipc_import_fault = fault("ptr_import", ipc_pair(function(s, xp, ip)
  local b = xp:alloc(64, s)
  then_clean(function() b:free() end, ip.import, ip, b:export())
end))
local function ipc_export_fault()
  local p <close> = poolsh.pool{ ipc = true }
  local b = p:alloc(64)
  then_clean(function() b:free() end, b.export, b)
end
local function ipc_again()
  local p <close> = poolsh.pool{ ipc = true }
  local path = sock()
  p:export(path)
  p:export(path)
end
local function ipc_taken()
  local p <close> = poolsh.pool{ ipc = true }
  local taken = os.tmpname()
  then_clean(function() os.remove(taken) end, p.export, p, taken)
end
-- A server that stopped (SIGSTOP) answers nothing: the import times out.
local function ipc_timeout()
  local path = sock()
  local code = ("local p = poolsh.pool{ipc = true}; p:export(%q); print('serving'); "
    .. "io.stdout:flush(); for _ = 1, 600 do os.execute('sleep 0.05') end"):format(path)   -- 30 s at most
  local f = io.popen("sh -c " .. H.quote("echo $$; exec " .. H.exe .. " --backend=sim -e "
                                         .. H.quote(code)))
  local pid = f:read("l")
  f:read("l")
  os.execute("kill -STOP " .. pid)
  H.poll(function()                               -- stopped for sure before we ask it
    local st = io.open("/proc/" .. pid .. "/stat")
    local text = st and st:read("a") or ""
    if st then st:close() end
    return text:match("^%d+ %b() (%a)") == "T"
  end, 5)
  then_clean(function()
    os.execute("kill -KILL " .. pid)
    f:close()
    os.remove(path)
  end, poolsh.import_pool, path, 100)
end
-- A server killed outright leaves its socket file: nobody serves it.
local function ipc_nobody()
  local path = sock()
  H.poolsh_cmd("--backend=sim -e " .. H.quote(("poolsh.pool{ipc = true}:export(%q); "
    .. "os.execute('kill -KILL $PPID')"):format(path)))
  then_clean(function() os.remove(path) end, poolsh.import_pool, path)
end

local TRIGGERS = {
  -- virtual memory management (docs/api.md, docs/vmm.md)
  ["<cudaErrorName>: <description> (mapping ...)"] =
    function() poolsh.vmm.reserve(2 * H.MiB):map(0, poolsh.vmm.create(2 * H.MiB), 4096, 2 * H.MiB) end,
  ["cudaErrorNotSupported: operation not supported (mapping <size> of m<n> from offset <o> at r<n> + <o>)"] =
    function() poolsh.vmm.reserve(2 * H.MiB):map(0, poolsh.vmm.create(2 * H.MiB), 4096, 2 * H.MiB) end,
  ["cudaErrorMemoryAllocation: out of memory (creating <size> of device memory on device <d>)"] =
    function()   -- a multiple of the granularity (else cudaErrorInvalidValue) beyond what is free
      local g = poolsh.vmm.granularity()
      poolsh.vmm.create((poolsh.device().free // g + 1) * g)
    end,
  ["poolsh.vmm.granularity: device <d> does not exist (poolsh.device_count() is <n>)"] =
    function() poolsh.vmm.granularity { device = 1000 } end,
  ["poolsh.vmm.create: location must be \"device\" or \"host\", got <value>"] =
    function() poolsh.vmm.create(2 * H.MiB, { location = "disk" }) end,
  ["cudaErrorInvalidValue: invalid argument (unmapping r<n> + <o>, <size>)"] = function()
    local r = poolsh.vmm.reserve(4 * H.MiB)
    r:map(0, poolsh.vmm.create(4 * H.MiB))
    r:unmap(0, 2 * H.MiB)
  end,
  ["r:set_access: access must be \"rw\", \"read\" or \"none\", got <value>"] =
    function() poolsh.vmm.reserve(2 * H.MiB):set_access(0, 2 * H.MiB, { access = "all" }) end,
  ["cudaErrorInvalidValue: invalid argument (freeing r<n>: 1 mapping remains at offset <offset> (m<n>): r:unmap them first, or r:close() unmaps and frees)"] = function()
    local r = poolsh.vmm.reserve(4 * H.MiB)
    r:map(2 * H.MiB, poolsh.vmm.create(2 * H.MiB))
    r:free()
  end,
  ["attempt to use a freed poolsh.Range (r<n>)"] =
    function() local r = poolsh.vmm.reserve(2 * H.MiB); r:free(); r:free() end,
  ["attempt to use a released poolsh.Memory (m<n>)"] =
    function() local m = poolsh.vmm.create(2 * H.MiB); m:release(); m:release() end,
  -- several devices and peer access (docs/multi-gpu.md)
  ["poolsh.configure: sim_devices: must be an integer from 1 to 16, got '<value>'"] =
    lua("poolsh.configure{sim_devices = 0}"),
  ["poolsh: --sim-devices: must be an integer from 1 to 16, got 'x'"] =
    cli("--backend=sim --sim-devices=x -e ''"),
  ["poolsh.stream: device must be a device index (an integer from 0), got <value>"] =
    function() poolsh.stream{ device = -1 } end,
  ["cudaErrorInvalidDevice: invalid device ordinal (creating stream s<n> on device <d>)"] =
    function() poolsh.stream{ device = 9 } end,
  ["cudaErrorInvalidResourceHandle: invalid resource handle (recording event e<n> on stream <name> of device <d>: events are created on device <d> and record only on its streams)"] =
    two("poolsh.event():record(poolsh.stream{device = 1})"),
  ["bad argument #1 to 'access' (number expected, got <type>)"] = function(_, p) p:access("x") end,
  ["cudaErrorInvalidValue: invalid argument (reading the access of device <d> to pool p<n>)"] =
    function(_, p) p:access(9) end,
  ["cudaErrorInvalidDevice: invalid device ordinal (setting the access of device <d> to pool p<n> to \"none\": a pool's own device always has rw access)"] =
    function(_, p) p:set_access(p.device, "none") end,
  ["cudaErrorNotSupported: operation not supported (setting the access of device <d> to pool p<n> to \"read\": CUDA supports only \"rw\" and \"none\" for pools)"] =
    function(_, p) p:set_access(p.device, "read") end,
  ["cudaErrorInvalidDevice: invalid device ordinal (setting the access of device <d> to pool p<n> to \"rw\")"] =
    function(_, p) p:set_access(9, "rw") end,
  ["bad argument #2 to 'set_access' (invalid option '<mode>')"] = function(_, p) p:set_access(0, "write") end,
  ["cudaErrorIllegalAddress: an illegal memory access was encountered (poolsh.<f> of b<n> on stream <name>: device <d> has no access to b<n>'s pool p<n> (on device <d>); on the GPU the kernel would fault and the process's CUDA context would be lost, so poolsh refused to launch it: p<n>:set_access(<d>, \"rw\") grants it)"] =
    two(NO_ACCESS .. "poolsh.fill(b, 1, s1)"),
  ["cudaErrorIllegalAddress: an illegal memory access was encountered (poolsh.fill of b1 on stream s1: device 1 has no access to b1's pool p1 (on device 0); on the GPU the kernel would fault and the process's CUDA context would be lost, so poolsh refused to launch it: p1:set_access(1, \"rw\") grants it)"] =
    two(NO_ACCESS .. "poolsh.fill(b, 1, s1)"),
  ["cudaErrorIllegalAddress: ... device <d> has no peer access to b<n> (cudaMalloc'd on device <d>); ... poolsh.enable_peer_access(<peer>, <d>) grants it)"] =
    two("poolsh.touch(poolsh.malloc(4096), poolsh.stream{device = 1})"),
  ["bad argument #1 to 'can_access_peer' (number expected, got <type>)"] =
    function() poolsh.can_access_peer("x", 0) end,
  ["cudaErrorInvalidDevice: invalid device ordinal (asking whether device <d> can access device <peer>)"] =
    function() poolsh.can_access_peer(0, 9) end,
  ["cudaErrorInvalidDevice: invalid device ordinal (enabling peer access from device <d> to device <peer>)"] =
    function() poolsh.enable_peer_access(9) end,
  ["cudaErrorPeerAccessUnsupported: peer access is not supported between these two devices (enabling peer access from device <d> to device <peer>)"] =
    two("poolsh.sim.set('peer_capable', 0); poolsh.enable_peer_access(1)"),
  ["cudaErrorPeerAccessAlreadyEnabled: peer access is already enabled (enabling peer access from device <d> to device <peer>)"] =
    two("poolsh.enable_peer_access(1); poolsh.enable_peer_access(1)"),
  ["cudaErrorNotSupported: operation not supported (setting the sim option 'devices')"] =
    on("sim", function() poolsh.sim.set("devices", 2) end),
  -- forms (any message of the form)
  ["bad argument #<n> to '<f>' (...)"] = function(_, p) p:alloc(0) end,
  ["bad argument #<n> to '<f>' (<message>)"] = function(_, p) p:alloc(0) end,
  ["<cudaErrorName>: <CUDA's description> (<what was being done>)"] = pool_no_device,
  ["<progname>: <message>"] = cli("--backend=gpu"),
  ["interrupted <what was being done>: queued work goes on"] = interrupt_then("s:sync()"),
  ["interrupted <what>: queued work goes on"] = interrupt_then("s:sync()"),
  ["cudaErrorUnknown: unknown error"] = pend("a code outside the sim's error table, "
    .. "and fault injection arms only codes of that table"),
  ["poolsh.size: <what is wrong>"] = function() poolsh.size(-1) end,
  ["poolsh.duration: <what>"] = function() poolsh.duration(-1) end,

  -- configure and opening the context (stock lua5.4: the host has opened it)
  ["bad argument #1 to 'configure' (table expected, got <type>)"] = lua("poolsh.configure()"),
  ["poolsh.configure: unknown option '<key>'"] = lua("poolsh.configure{bogus = 1}"),
  ["poolsh.configure: the <name> backend is already open"] = function() poolsh.configure{} end,
  ["poolsh.configure: the sim backend is already open"] = on("sim", function() poolsh.configure{} end),
  ["poolsh.configure: unknown backend '<name>' (auto, cuda or sim)"] = lua("poolsh.configure{backend = 'gpu'}"),
  ["poolsh.configure: device must be a device index (an integer from 0), got <value>"] =
    lua("poolsh.configure{device = 1024}"),
  ["poolsh.configure: sim_memory: <size error>"] = lua("poolsh.configure{sim_memory = -1}"),
  ["poolsh: POOLSH_LIMIT: invalid size 'junk' (...)"] = cli("--backend=sim -e ''", "POOLSH_LIMIT=junk"),
  ["poolsh.bench_c: not under --limit or --pinned-limit (...)"] =
    limited("--limit=64MiB", "poolsh.bench_c(poolsh.pool{}, nil, 1, 1)"),
  ["poolsh.configure: limit: <size error>"] = lua("poolsh.configure{limit = -1}"),
  ["poolsh.configure: pinned_limit: <size error>"] = lua("poolsh.configure{pinned_limit = 'lots'}"),
  ["cudaErrorMemoryAllocation: out of memory under poolsh --limit 128.00 MiB: p2:alloc(65.00 MiB) would bring the device memory this process holds to 160.00 MiB (pools 64.00 MiB reserved, poolsh.malloc 0 B)"] =
    OVER_LIMIT,
  ["cudaErrorMemoryAllocation: out of memory under poolsh --limit <limit>: <call> would bring the device memory this process holds to <total> (pools <bytes> reserved, poolsh.malloc <bytes>)"] =
    OVER_LIMIT,
  ["cudaErrorMemoryAllocation: out of memory under poolsh --limit <limit>: p<n>:alloc(<size>) would bring the device memory this process holds to <total> (pools <reserved> reserved, poolsh.malloc <bytes>)"] =
    OVER_LIMIT,
  ["cudaErrorMemoryAllocation: out of memory under poolsh --limit <limit>: poolsh.malloc(<size>) would bring ..."] =
    limited("--limit=1MiB", "poolsh.malloc(2)"),
  ["cudaErrorMemoryAllocation: out of memory under poolsh --pinned-limit <limit>: <call> would bring the pinned host memory this process holds to <total> (host pools <bytes> reserved, poolsh.pinned <bytes>, registered <bytes>)"] =
    OVER_PINNED,
  ["cudaErrorMemoryAllocation: out of memory under poolsh --pinned-limit <limit>: poolsh.pinned(<size>) would bring ..."] =
    OVER_PINNED,
  ["cudaErrorMemoryAllocation: out of memory under poolsh --pinned-limit <limit>: poolsh.register(b<n>, <size>) would bring ..."] =
    limited("--pinned-limit=1MiB", "poolsh.register(poolsh.pageable('2 MiB'))"),
  ["unknown backend '<name>' (POOLSH_BACKEND or --backend: auto, cuda or sim)"] = unknown_backend(),
  ["unknown backend 'gpu' (POOLSH_BACKEND or --backend: auto, cuda or sim)"] = unknown_backend(),
  ["POOLSH_DEVICE must be a device index"] = lua("poolsh.backend()", "POOLSH_DEVICE=x"),
  ["<cudaErrorName>: <description> (the cuda backend was asked for)"] =
    with_cuda(lua("poolsh.backend()", "CUDA_VISIBLE_DEVICES= POOLSH_BACKEND=cuda")),
  ["poolsh: cudaErrorNoDevice: no CUDA-capable device is detected (the cuda backend was asked for)"] =
    with_driver(cli("--backend=cuda -e ''", "CUDA_VISIBLE_DEVICES=")),
  ["no usable CUDA device (<cudaErrorName>): using the simulated device"] =
    with_cuda(cli("--backend=auto -e 'print(poolsh.backend_reason())'", "CUDA_VISIBLE_DEVICES=")),
  ["poolsh was built without CUDA: only the sim backend exists"] =
    without_cuda(lua("poolsh.backend()", "POOLSH_BACKEND=cuda")),
  ["built without CUDA: using the simulated device"] =
    without_cuda(cli("--backend=auto -e 'print(poolsh.backend_reason())'")),
  ["poolsh was built without CUDA: ..."] =   -- the start-up notice; said each time without a state dir
    without_cuda(cli("--backend=auto -e ''", "XDG_STATE_HOME=/dev/null/none")),
  ["cannot open /no/such/x.lua"] = cli("--backend=sim /no/such/x.lua"),
  ["poolsh: cannot open lern: no such file, nor a command (did you mean 'learn'?)"] = cli("--backend=sim lern"),
  ["unknown scenario 'same_strem' (did you mean 'same_stream'?)"] = cli("--backend=sim run same_strem"),
  ["<cudaErrorName>: <description> (opening the <name> backend on device <n>)"] =
    lua("poolsh.configure{device = 7}; poolsh.backend()"),
  ["poolsh: the device context is closed"] = lua("keep = setmetatable({}, {__gc = function() "   -- runs after the context's
    .. "local ok, e = pcall(poolsh.stream); io.stderr:write(e) end}); poolsh = require 'poolsh'; poolsh.backend()",
    nil, true),
  ["poolsh: poolsh.configure: unknown backend 'gpu' (auto, cuda or sim)"] = cli("--backend=gpu"),
  ["poolsh: poolsh.configure: device must be a device index (an integer from 0), got x"] = cli("--device=x -e ''"),

  -- lifetime
  ["attempt to use a destroyed poolsh.Stream (s1)"] = dead_stream,
  ["attempt to use a destroyed poolsh.Stream (s<n>)"] = dead_stream,
  ["attempt to use a destroyed poolsh.Event (e1)"] = dead_event,
  ["attempt to use a destroyed poolsh.Pool (p1)"] = dead_pool,
  ["attempt to use a destroyed poolsh.Pool (p<n>)"] = dead_pool,
  ["attempt to use a freed poolsh.Buffer (b1)"] = freed_buffer,
  ["attempt to use a freed poolsh.Buffer (b<n>)"] = freed_buffer,
  ["bad argument #2 to 'sources' (depth must be from 1 to 16)"] =
    function() poolsh.core.sources(true, 17) end,
  ["poolsh.core.peak_pop: no peak scope (peak_push first)"] = function() poolsh.core.peak_pop() end,
  ["cudaErrorMemoryAllocation: out of memory allocating 32.00 MiB from pool p1 on stream s2"] =
    function(s)
      local s2 <close> = poolsh.stream()
      local q <close> = poolsh.pool{ max_size = "20 MiB", internal_dependencies = false }
      local a = q:alloc("32 MiB", s)
      poolsh.spin(s, "10 ms"); a:free()
      q:alloc("32 MiB", s2)
    end,
  ["poolsh.Buffer expected, got ..."] = function(s, p)
    local b <close> = p:alloc(16, s)
    getmetatable(b).__close(1)
  end,
  ["poolsh: freeing buffer b3: <cudaErrorName>: <description>"] =
    fault_cli("pool_free", "local b = poolsh.pool{}:alloc(16); b = nil; collectgarbage()"),
  ["poolsh: destroying stream s2 failed"] = fault_cli("stream_destroy", "local s = poolsh.stream(); s = nil; collectgarbage()"),
  ["poolsh: destroying an event failed"] = fault_cli("event_destroy", "local e = poolsh.event(); e = nil; collectgarbage()"),
  ["poolsh: destroying a pool failed"] = fault_cli("pool_destroy", "local p = poolsh.pool{}; p = nil; collectgarbage()"),
  ["<cudaErrorName>: <description> (destroying stream s1)"] = fault("stream_destroy", function() poolsh.stream():destroy() end),
  ["<cudaErrorName>: <description> (destroying stream s2)"] = fault("stream_destroy", function() poolsh.stream():destroy() end),

  -- bench
  ["<cudaErrorName>: <description> (bench alloc)"] = function(s)
    local q <close> = poolsh.pool{ max_size = "32 MiB" }
    poolsh.bench_c(q, s, "64 MiB", 1)
  end,
  ["... (bench free: <size> left allocated in pool p<n>)"] =
    fault("pool_free", function(s, p) poolsh.bench_c(p, s, 16, 1) end),
  ["bad argument #4 to 'bench_c' (count must be >= 0)"] = function() poolsh.bench_c(poolsh.pool{}, nil, 16, -1) end,
  ["... (bench alloc)"] = function(s)
    local q <close> = poolsh.pool{ max_size = "32 MiB" }
    local alloc = poolsh.bench_floor(q, s, "64 MiB")
    alloc()
  end,
  ["bad argument #3 to 'bench_fill' (count must be in 1..2^28)"] = function(s, p) poolsh.bench_fill(p, s, 0) end,
  ["bench_floor: its pool or stream is gone"] = function(s)
    local q = poolsh.pool{}
    local alloc = poolsh.bench_floor(q, s, 16)
    q:destroy()
    alloc()
  end,
  ["bad argument #1 to 'free' (live bench_floor block expected)"] = function(s, p)
    local _, free = poolsh.bench_floor(p, s, 16)
    free(1)
  end,

  -- Stream
  ["poolsh.stream: unknown option '<key>'"] = function() poolsh.stream{ bogus = 1 } end,
  ["poolsh.stream: priority must be an integer"] = function() poolsh.stream{ priority = 1.5 } end,
  ["poolsh.stream: priority <p> outside [<greatest>, <least>] (lower is higher priority)"] =
    function() poolsh.stream{ priority = 3 } end,
  ["poolsh.stream: priority 3 outside [-5, 0] (lower is higher priority)"] =
    function() poolsh.stream{ priority = 3 } end,
  ["option 'blocking' must be a boolean, got <type>"] = function() poolsh.stream{ blocking = 1 } end,
  ["option 'blocking' must be a boolean, got number"] = function() poolsh.stream{ blocking = 1 } end,
  ["<cudaErrorName>: <description> (querying stream priorities)"] = fault("stream_priority_range", function() poolsh.stream() end),
  ["<cudaErrorName>: <description> (creating stream s<n>)"] = fault("stream_create", function() poolsh.stream() end),
  ["<cudaErrorName>: <description> (synchronizing stream <name>)"] = fault("stream_sync", function(s) s:sync() end),
  ["interrupted synchronizing stream <name>: queued work goes on"] = interrupt_then("s:sync()"),
  ["interrupted synchronizing stream s1: queued work goes on"] = interrupt_then("s:sync()"),
  ["... (querying stream <name>)"] = fault("stream_query", function(s) s:query() end),
  ["... (recording event e<n> on stream <name>)"] = fault("event_record", function(s)
    local e <close> = poolsh.event()
    e:record(s)
  end),
  ["... (stream <name> waiting on event e<n>)"] = fault("stream_wait", function(s)
    local e <close> = poolsh.event()
    e:record(s); s:wait(e)
  end),
  ["the default stream cannot be destroyed"] = function() poolsh.default_stream():destroy() end,
  ["poolsh.Stream has no settable field '<key>'"] = function(s) s.bogus = 1 end,
  ["poolsh: a name must be a string, got <type>"] = function() poolsh.stream{name = 5} end,
  ["poolsh: a name must have 1 to 64 bytes, got <n> ('<name>')"] = function(s) s.name = "" end,
  ["poolsh: a name must not hold control characters ('<name>')"] = function(_, p) p.name = "a\nb" end,

  -- Event
  ["poolsh.event: unknown option '<key>'"] = function() poolsh.event{ bogus = 1 } end,
  ["option 'timing' must be a boolean, got <type>"] = function() poolsh.event{ timing = 1 } end,
  ["<cudaErrorName>: <description> (creating event e<n>)"] = fault("event_create", function() poolsh.event() end),
  ["... (synchronizing event e<n>)"] = fault("event_sync", function(s)
    local e <close> = poolsh.event()
    e:record(s); e:sync()
  end),
  ["interrupted synchronizing event e<n>: queued work goes on"] =
    interrupt_then("local e = poolsh.event(); e:record(s); e:sync()"),
  ["... (querying event e<n>)"] = fault("event_query", function()
    local e <close> = poolsh.event()
    e:query()
  end),
  ["event e<n> was created with timing=false"] = no_timing,
  ["event e1 was created with timing=false"] = no_timing,
  ["cudaErrorInvalidResourceHandle: invalid resource handle (elapsed time from event e<a> to e<b>)"] = bad_event_pair,
  ["cudaErrorInvalidResourceHandle: invalid resource handle (elapsed time from event e2 to e3)"] = bad_event_pair,
  ["cudaErrorNotReady: device not ready (...)"] = function(s)
    local a <close> = poolsh.event()
  local b <close> = poolsh.event()
    a:record(s); poolsh.spin(s, 1000); b:record(s)
    local ok, e = pcall(a.elapsed, a, b)
    s:sync()
    error(e, 0)
  end,

  -- Pool
  ["poolsh.pool: unknown option '<key>'"] = function() poolsh.pool{ bogus = 1 } end,
  ["poolsh.pool: unknown option 'bogus'"] = function() poolsh.pool{ bogus = 1 } end,
  ["poolsh.pool: location must be \"device\" or \"host\", got '<location>'"] =
    function() poolsh.pool{ location = "moon" } end,
  ["poolsh.pool: device must be a device index (an integer from 0), got <value>"] =
    function() poolsh.pool{ device = -1 } end,
  ["poolsh.pool: max_size: <size error>"] = function() poolsh.pool{ max_size = -1 } end,
  ["<cudaErrorName>: <description> (creating pool p<n> on <location> <d>)"] = pool_no_device,
  ["<cudaErrorName>: <description> (creating pool p<n> on <location> <d>, max_size <size>)"] = pool_no_device_max,
  ["poolsh.default_pool: device must be a device index (an integer from 0), got <value>"] =
    function() poolsh.default_pool(-1) end,
  ["cudaErrorInvalidDevice: invalid device ordinal (getting the default pool of device <d>)"] =
    function() poolsh.default_pool(poolsh.device_count()) end,
  ["bad argument #1 to 'alloc' (size must be at least 1 byte)"] = function(_, p) p:alloc(0) end,
  ["bad argument #1 to 'alloc' (size expected (integer or string), got table)"] = function(_, p) p:alloc({}) end,
  ["bad argument #1 to 'wait' (poolsh.Event expected, got nil)"] = function(s) s:wait(nil) end,
  ["<cudaErrorName>: <description> allocating <size> from pool p<n> on stream <name>"] = oom_pool,
  ["cudaErrorMemoryAllocation: out of memory allocating 8.00 MiB from pool p1 on stream default"] = function()
    local q <close> = poolsh.pool{ max_size = "64 MiB" }
    local b <close> = q:alloc("60 MiB")
    q:alloc("8 MiB")
  end,
  ["p:stats: unknown option '<key>'"] = function(_, p) p:stats{ bogus = 1 } end,
  ["... (reading pool p<n>)"] = fault("pool_get", function(_, p) return p.release_threshold end),
  ["... (resetting pool p<n>)"] = fault("pool_set", function(_, p) p:reset_high() end),
  ["... (trimming pool p<n>)"] = fault("pool_trim", function(_, p) p:trim(0) end),
  ["<cudaErrorName>: <description> (setting <setting> of pool p<n>)"] = fault("pool_set", function(_, p) p.release_threshold = 0 end),
  ["the default pool cannot be destroyed"] = function() poolsh.default_pool():destroy() end,
  ["poolsh.Pool: release_threshold: <size error>"] = function(_, p) p.release_threshold = -1 end,
  ["poolsh.Pool: <setting> must be a boolean, got <type>"] = function(_, p) p.opportunistic = 1 end,
  ["poolsh.Pool: opportunistic must be a boolean, got number"] = function(_, p) p.opportunistic = 1 end,
  ["poolsh.Pool: release_threshold: <size error>"] = function(_, p) p.release_threshold = -1 end,
  ["poolsh.Pool has no settable field '<key>'"] = function(_, p) p.foo = 1 end,
  ["poolsh.Pool has no settable field 'foo'"] = function(_, p) p.foo = 1 end,

  -- Buffer
  ["b<n>'s stream s<m> was destroyed: pass a stream to free it on"] = stream_gone,
  ["b7's stream s3 was destroyed: pass a stream to free it on"] = stream_gone,
  ["bad argument #1 to 'free' (only pool buffers are freed on a stream)"] = free_on_stream,
  ["<cudaErrorName>: <description> (freeing buffer b<n> on stream <name>)"] = fault("pool_free", function(s, p)
    local b <close> = p:alloc(16, s)
    b:free(s)
  end),
  ["<cudaErrorName>: <description> (freeing buffer b<n>)"] = fault("free_pinned", function()
    local b = poolsh.pinned(16)
    local ok, e = pcall(b.free, b)
    b:free()
    error(e, 0)
  end),
  ["offset <o> beyond the end of b<n> (<size> bytes)"] = offset_200,
  ["offset 200 beyond the end of b3 (100 bytes)"] = offset_200,
  ["range [<o>, <end>) out of bounds of b<n> (<size> bytes)"] = range_95,
  ["range [95, 103) out of bounds of b3 (100 bytes)"] = range_95,
  ["<cudaErrorName>: <description> (reading <n> bytes of b<id>)"] = fault("read", function(s, p)
    local b <close> = p:alloc(16, s)
    b:read(0, 8)
  end),
  ["interrupted reading <n> bytes of b<id>: queued work goes on"] =
    interrupt_then("local b = poolsh.pool{}:alloc(8, s); b:read(0, 8)"),
  ["... (writing <n> bytes to b<id>)"] = fault("write", function(s, p)
    local b <close> = p:alloc(16, s)
    b:write(0, "12345678")
  end),

  -- Other memory
  ["<cudaErrorName>: <description> allocating <size> of <kind> memory"] = oom_malloc,
  ["cudaErrorMemoryAllocation: out of memory allocating 1.00 TiB of malloc memory"] = oom_malloc,
  ["bad argument #1 to '<f>' (size must be at least 1 byte)"] = function() poolsh.pinned(0) end,
  ["bad argument #1 to 'malloc' (size must be at least 1 byte)"] = function() poolsh.malloc(0) end,
  ["bad argument #1 to 'malloc' (size must be an integer number of bytes)"] = wrong_size,
  ["poolsh.pinned: unknown option '<key>'"] = function() poolsh.pinned(16, { bogus = 1 }) end,
  ["option '<key>' must be a boolean, got <type>"] = function() poolsh.pinned(16, { portable = 1 }) end,
  ["bad argument #1 to 'register' (pageable buffer expected, b<n> is <kind>)"] = register_pool,
  ["bad argument #1 to 'register' (pageable buffer expected, b3 is pool)"] = register_pool,
  ["b<n> is already registered"] = registered_twice,
  ["b4 is already registered"] = registered_twice,
  ["... (registering b<n>)"] = fault("host_register", function()
    local b <close> = poolsh.pageable(16)
    poolsh.register(b)
  end),
  ["b<n> is not registered"] = not_registered,
  ["b4 is not registered"] = not_registered,
  ["... (unregistering b<n>)"] = fault("host_unregister", function()
    local b <close> = poolsh.pageable(16)
    poolsh.register(b); poolsh.unregister(b)
  end),

  -- Copy and kernels
  ["poolsh.<fill|verify|touch>: b<n> is pageable memory, which kernels cannot reach: poolsh.register it first"] =
    fill_pageable,
  ["poolsh.fill: b4 is pageable memory, which kernels cannot reach: poolsh.register it first"] = fill_pageable,
  ["bad argument #2 to '<f>' (byte must be in 0..255)"] = function(s, p)
    local b <close> = p:alloc(16, s)
    poolsh.fill(b, 256, s)
  end,
  ["poolsh.copy: unknown option '<key>'"] = function(s, p)
    local b <close> = p:alloc(16, s)
    poolsh.copy(b, b, { bogus = 1 })
  end,
  ["poolsh.copy: <key>: <size error>"] = copy_bytes,
  ["poolsh.copy: bytes: <size error>"] = copy_bytes,
  ["poolsh.copy: offset beyond the end of b<n>"] = copy_off,
  ["poolsh.copy: offset beyond the end of b4"] = copy_off,
  ["poolsh.copy: <n> bytes out of bounds (b<src>: <size> bytes from offset <o>, b<dst>: <size> bytes from offset <o>)"] =
    copy_oob,
  ["poolsh.copy: 20 bytes out of bounds (...)"] = copy_oob,
  ["poolsh.copy: source and destination overlap (<n> bytes from offset <o> of b<src> to offset <o> of b<dst>): copy through a second buffer"] =
    copy_overlap,
  ["poolsh.copy: source and destination overlap (...)"] = copy_overlap,
  ["bad argument #4 to 'copy' (poolsh.Stream expected, got <type>)"] = function(s, p)
    local a <close> = p:alloc(16, s)
  local b <close> = p:alloc(16, s)
    poolsh.copy(a, b, { stream = 5 })
  end,
  ["... (copying <n> bytes from b<src> to b<dst> on stream <name>)"] = fault("copy", function(s, p)
    local a <close> = p:alloc(16, s)
    local b <close> = p:alloc(16, s)
    poolsh.copy(a, b)
  end),
  ["... (filling b<n> on stream <name>)"] = fault("fill", function(s, p)
    local b <close> = p:alloc(16, s)
    poolsh.fill(b, 0, s)
  end),
  ["... (verifying b<n> on stream <name>)"] = fault("verify", function(s, p)
    local b <close> = p:alloc(16, s)
    poolsh.verify(b, 0, s)
  end),
  ["interrupted verifying b<n> on stream <name>: queued work goes on"] =
    interrupt_then("local b = poolsh.pool{}:alloc(8, s); poolsh.verify(b, 0, s)"),
  ["... (touching b<n> on stream <name>)"] = fault("touch", function(s, p)
    local b <close> = p:alloc(16, s)
    poolsh.touch(b, s)
  end),
  ["bad argument #2 to 'spin' (duration must be >= 0 and finite)"] = function(s) poolsh.spin(s, -1) end,
  ["bad argument #2 to 'spin' (duration above the limit of 1e12 ms per call)"] = function(s) poolsh.spin(s, 2e12) end,
  ["... (spinning stream <name>)"] = clock_end_spin,
  ["cudaErrorInvalidValue: invalid argument (spinning stream <name>; the virtual clock ends at 2^62 ns, about 146 years)"] =
    clock_end_spin,

  -- Device and clock
  ["... (counting devices)"] = fault("device_count", function() poolsh.device_count() end),
  ["bad argument #1 to 'device' (device index out of range)"] = function() poolsh.device(-1) end,
  ["cudaErrorInvalidDevice: invalid device ordinal (reading device <i>)"] =
    function() poolsh.device(poolsh.device_count()) end,
  ["cudaErrorInvalidDevice: invalid device ordinal (reading device 1)"] = on("sim", function() poolsh.device(1) end),
  ["... (synchronizing the device)"] = fault("device_sync", function() poolsh.sync() end),
  ["interrupted synchronizing the device: queued work goes on"] = interrupt_then("poolsh.sync()"),
  ["bad argument #1 to 'sleep' (duration must be >= 0 and finite)"] = function() poolsh.sleep(-1) end,
  ["bad argument #1 to 'sleep' (duration above the limit of 1e12 ms per call)"] = function() poolsh.sleep(2e12) end,
  ["interrupted sleeping <ms> ms: queued work goes on"] = interrupt_then("poolsh.sleep(500)"),
  ["cudaErrorInvalidValue: invalid argument (sleeping <ms> ms; the virtual clock ends at 2^62 ns, about 146 years)"] =
    clock_end_sleep,

  -- Units
  ["size must not be negative"] = function() poolsh.size(-1) end,
  ["size must be an integer number of bytes"] = function() poolsh.size(1.5) end,
  ["size too large"] = function() poolsh.size(2^70) end,
  ["size expected (integer or string), got <type>"] = function() poolsh.size({}) end,
  ["invalid size '<s>' (use e.g. 4096, \"4 KiB\", \"1.5 GiB\", \"64MB\")"] = function() poolsh.size("foo") end,
  ["size '<s>' is not a whole number of bytes"] = function() poolsh.size("1.5 B") end,
  ["size '<s>' too large"] = function() poolsh.size("100000 PiB") end,
  ["duration must be >= 0 and finite"] = function() poolsh.duration(-1) end,
  ["duration expected (ms or string), got <type>"] = function() poolsh.duration({}) end,
  ["duration must not be negative: '<d>'"] = function() poolsh.duration("-5 ms") end,
  ["invalid duration '<d>' (use e.g. 5, \"200 us\", \"5 ms\", \"1 s\")"] = function() poolsh.duration("x") end,
  ["bad argument #1 to 'fmt' (number expected, got <type>)"] = function() poolsh.fmt("x") end,
  ["bad argument #1 to 'fmt_duration' (number expected, got <type>)"] = function() poolsh.fmt_duration("x") end,

  -- Sim profile and options
  ["cudaErrorInvalidValue: invalid argument (setting the sim option '<name>')"] =
    on("sim", function() poolsh.sim.set("bogus", 1) end),
  ["cudaErrorNotSupported: operation not supported (setting the sim option 'memory')"] = on("sim", function(s, p)
    local b <close> = p:alloc(16, s)
    poolsh.sim.set("memory", "16 GiB")
  end),
  ["cudaErrorNotSupported: operation not supported (setting the cuda option '<name>')"] =
    on("cuda", function() poolsh.sim.set("memory", 1) end),
  ["... (reading the <backend> option '<name>')"] = function() poolsh.option("bogus") end,
  ["poolsh: profile FILE: fact 'placement' is first fit on this GPU but the sim models best fit: the sim cannot reproduce that GPU there"] =
    profile("return { gpu = 'X', facts = { placement = 'first fit' } }", "FILE"),
  ["poolsh.profile: my.lua: values.memory: must not be negative, got -1"] = profile("return { gpu = 'X', values = { memory = -1 } }"),
  ["... values.sync_ns: number expected, got string"] = profile("return { gpu = 'X', values = { sync_ns = 'x' } }"),
  ["... unknown key 'colour' (known: ...)"] = profile("return { gpu = 'X', colour = 1 }"),
  ["... values.warp_ns: unknown sim option"] = profile("return { gpu = 'X', values = { warp_ns = 1 } }"),
  ["... values.pool_granularity: cudaErrorInvalidValue: invalid argument (setting the sim option 'pool_granularity')"] =
    profile("return { gpu = 'X', values = { pool_granularity = 0 } }"),

  -- Fault injection (sim.md)
  ["false	cudaErrorMemoryAllocation: out of memory (creating stream s2)"] = fault_profile(
    "return { faults = { { op = 'stream_create', call = 2, error = 'cudaErrorMemoryAllocation' } } }",
    "faulty.lua", "print(poolsh.stream().name); print(pcall(poolsh.stream))"),
  ["poolsh.profile: faulty.lua: faults[1].op: unknown sim operation 'stream_make'"] = fault_profile(
    "return { faults = { { op = 'stream_make', call = 2, error = 'cudaErrorMemoryAllocation' } } }", "faulty.lua"),
  ["... faults[2].error: unknown CUDA error 'cudaErrorOutOfMemory'"] = fault_profile("return { faults = { "
    .. "{ op = 'stream_create', call = 2, error = 'cudaErrorMemoryAllocation' }, "
    .. "{ op = 'pool_alloc', call = 5, error = 'cudaErrorOutOfMemory' } } }", "faulty.lua"),
  ["... faults[1].call: a whole number >= 1 expected, got 1.5"] = fault_profile(
    "return { faults = { { op = 'stream_create', call = 1.5, error = 'cudaErrorMemoryAllocation' } } }", "faulty.lua"),
  ["... faults[1]: unknown key 'colour' (known: call, count, error, every, op)"] = fault_profile(
    "return { faults = { { op = 'stream_create', call = 2, error = 'cudaErrorMemoryAllocation', colour = 1 } } }",
    "faulty.lua"),
  ["... faults[1].call: call 1 of stream_create was made already (1 so far)"] = fault_cli(nil,
    "poolsh.stream(); require('poolsh.profile').arm{op = 'stream_create', call = 1, error = 'cudaErrorInvalidValue'}"),
  ["poolsh.profile.arm: faults[1].op: unknown sim operation 'x'"] = fault(nil, function()
    require("poolsh.profile").arm{ op = "x", call = 1, error = "cudaErrorInvalidValue" }
  end),
  ["poolsh.profile.arm: faults are the sim's (this is cuda)"] = on("cuda", function()
    require("poolsh.profile").arm{ op = "stream_create", call = 1, error = "cudaErrorInvalidValue" }
  end),

  -- Traces, live view
  ["poolsh.trace: out of memory"] = pend("the trace's own allocation failing: needs malloc to fail"),
  ["poolsh.trace.save: path expected (a string ending in .json, .csv, .pickle or .html)"] =
    function() poolsh.trace.save() end,
  ["poolsh.trace.start: max_events must be a non-negative integer, got -1"] =
    function() poolsh.trace.start { max_events = -1 } end,
  ["poolsh.trace.start: max_events must be a non-negative integer, got <v>"] =
    function() poolsh.trace.start { max_events = 0.5 } end,
  ["poolsh.trace.start: options table expected ({max_events = N}), got <type>"] =
    function() poolsh.trace.start(3) end,
  ["poolsh.trace.start: stream_to must name a line format (.csv), got '<path>'"] =
    function() poolsh.trace.start { stream_to = "x.json" } end,
  ["poolsh.trace.start: stream_to must be a path (a string), got <type>"] =
    function() poolsh.trace.start { stream_to = 1 } end,
  ["poolsh.trace.start: batch must be a positive integer, got <v>"] =
    function() poolsh.trace.start { stream_to = "x.csv", batch = 0 } end,
  ["poolsh.trace.start: batch is the size of stream_to's writes: give stream_to too"] =
    function() poolsh.trace.start { batch = 10 } end,
  ["poolsh.trace.start: stream_to cannot be combined with max_events"] =
    function() poolsh.trace.start { stream_to = "x.csv", max_events = 1 } end,
  ["poolsh.trace.start: already streaming to '<path>'"] =
    cli("-e " .. H.quote("local d = os.tmpname() os.remove(d) poolsh.trace.start{stream_to = d .. '.csv'} "
      .. "os.remove(d .. '.csv') poolsh.trace.start{stream_to = d .. 'b.csv'}")),
  ["poolsh.trace: cannot open '<path>' for writing: <reason>"] =
    function() poolsh.trace.start { stream_to = "/no/such/dir/x.csv" } end,
  ["poolsh.trace: cannot write '<path>': <reason>"] = pend("needs a full disk: /dev/full "
    .. "under a .csv name, as tests/spec/stream_trace_spec.lua does"),
  ["poolsh.trace: writing '<path>' failed after <n> events: <reason>; the <n> events not "
    .. "written are kept (poolsh.trace.save them to another file)"] =
    pend("needs a write to fail mid-run: tests/spec/stream_trace_spec.lua limits the file size"),
  ["poolsh.watch: boolean expected, got <type>"] = function() poolsh.watch(1) end,
  ["poolsh.live.register: allocator (a table) expected, got <type>"] = function() poolsh.live.register(1) end,
  ["poolsh.live.register: name (a non-empty string) expected, got <type>"] = function() poolsh.live.register({}) end,
  ["poolsh.live.register: stats (a function returning reserved, used) expected, got <type>"] =
    function() poolsh.live.register({}, "x") end,
  ["bad argument #1 to 'map' (poolsh.Pool expected, got <type>)"] = function() poolsh.map(1) end,

  -- saved files (src/atomic_file.c, docs/export.md "How files are written")
  ["cannot open '<path>' for writing: <reason>"] = function() poolsh.core.open_atomic("/no/such/dir/x") end,
  ["cannot open '<path>' for writing: not a regular file"] = function() poolsh.core.open_atomic("/dev/null") end,
  ["attempt to use a closed poolsh.AtomicFile"] = function()
    local p = os.tmpname()
    local f = poolsh.core.open_atomic(p)
    f:abort()
    os.remove(p)
    f:write("x")
  end,
  ["cannot write '<path>': <reason> (nothing was replaced)"] = function()
    local d = os.tmpname()
    os.remove(d)
    assert(os.execute("mkdir " .. H.quote(d)))
    local f <close> = poolsh.core.open_atomic(d .. "/x")
    os.execute("rm -rf " .. H.quote(d))             -- the rename has nowhere to go
    f:commit()
  end,
  ["poolsh.export.save: cannot write '<path>': <reason> (nothing was replaced)"] =
    pend("needs a write to fail: tests/spec/security_files_spec.lua limits the file size"),
  ["cannot be written: not a regular file"] = cli("--trace /dev/null.json -e ''"),
  ["<progname>: cannot write to standard output: No space left on device"] =
    pend("needs standard output on /dev/full: tests/spec/security_files_spec.lua runs it"),

  -- the poolsh host
  ["<progname>: '--trace' needs a value"] = cli("--trace"),
  ["poolsh: --trace run.txt: unsupported extension '.txt' (supported: .json, .csv, .pickle, .html)"] =
    cli("--trace run.txt -e ''"),
  ["poolsh: --trace /no/dir/run.json: no directory /no/dir"] = cli("--trace /no/dir/run.json -e ''"),
  ["poolsh: trace saved to leak.json (<n> events)"] = function()
    -- as cli.md runs it, in a directory of this run's own (removed after)
    local d = os.tmpname()
    os.remove(d)
    assert(os.execute("mkdir -m 0700 " .. H.quote(d)))
    local exe = H.exe:find("^/") and H.exe or assert(io.popen("pwd")):read("l") .. "/" .. H.exe
    local o, e = H.sh("cd " .. H.quote(d) .. " && " .. H.quote(exe) .. " --backend=sim --trace leak.json -e "
      .. H.quote("local b <close> = poolsh.pool{}:alloc(64)"))
    local saved = io.open(d .. "/leak.json") ~= nil
    os.execute("rm -rf " .. H.quote(d))
    assert(saved, "no leak.json written: " .. o .. e)
    error(o .. e, 0)
  end,
  ["poolsh: 1 buffer still live at exit (freed now):"] = LEAK,
  ["poolsh: 2 buffers still live at exit (freed now):"] = LEAK2,
  ["poolsh: 100001 buffers still live at exit (freed now):"] = cli("-e " .. H.quote(
    "local p = poolsh.pool{} keep = {} for i = 1, 100001 do keep[i] = p:alloc(16) end")),
  ["bad argument #1 to 'fmt' (bytes must be a whole number, got 1.5)"] = function() poolsh.fmt(1.5) end,
  ["bad argument #1 to 'peak' (function expected, got <type>)"] = function() poolsh.peak(1) end,
  ["poolsh.live.width must be nil or an integer >= 40, got <v>"] = function()
    poolsh.live.width = 20
    local _, e = pcall(poolsh.live.columns)
    poolsh.live.width = nil
    error(e, 0)
  end,
  ["poolsh golden: unknown scenario 'x' (poolsh golden list shows them)"] = cli("golden run x"),
  ["poolsh run: unknown scenario 'x' (poolsh scenarios lists them)"] = cli("run x"),
  ["interrupted!"] = cli("-e " .. H.quote("local f = io.popen('kill -INT $PPID'); f:close()")),
  -- processes (api.md "Processes", processes.md, cli.md --serve)
  ["attempt to use a closed poolsh.Process (process <pid>)"] = function()
    local q = poolsh.spawn(); q:close(); q:recv()
  end,
  ["bad argument #1 to 'recv' (timeout must be >= 0 and finite (seconds))"] = function()
    local q <close> = poolsh.spawn(); q:recv(-1)
  end,
  ["bad argument #2 to 'send' (send takes one value (a table carries more))"] = function()
    local q <close> = poolsh.spawn(); q:send(1, 2)
  end,
  ["cannot send a function (the message): only strings, numbers, booleans, nil and tables of them travel"] = function()
    local q <close> = poolsh.spawn(); q:send(print)
  end,
  ["message too large (more than 64 MiB)"] = function()
    local q <close> = poolsh.spawn(); q:send(("x"):rep((64 << 20) - 4))
  end,
  ["interrupted waiting for a message from process <pid>"] =
    interrupt_then("local q <close> = poolsh.spawn(); q:recv()"),
  ["process <pid>: eval: result 1 is a function, which cannot be sent back"] = function()
    local q <close> = poolsh.spawn(); q:eval("return print")
  end,
  ["process <pid>: cannot send a function inside a table (result 1 of eval): ..."] = function()
    local q <close> = poolsh.spawn(); q:eval("return {print}")
  end,
  ["poolsh.connect: no socket at <path> (start poolsh --serve <path>)"] = function()
    poolsh.connect("/nonexistent/poolsh.sock")
  end,
  ["poolsh.connect: nobody serves on <path> (connection refused)"] = with_server(function(path, pid)
    os.execute("kill -KILL " .. pid)               -- the socket file stays
    H.poll(function() return not io.open("/proc/" .. pid .. "/stat") end, 5)
    poolsh.connect(path)
  end),
  ["poolsh.connect: timed out after <timeout_s> s: the server at <path> does not accept (busy with other clients, or stopped)"] =
    with_full_backlog(function(path) poolsh.connect(path, 0.1) end),
  ["interrupted connecting to the server at <path>"] = with_full_backlog(function(path)
    local o, e = H.poolsh_cmd("--backend=sim -e " .. H.quote(
      "pcall(function() local f = io.popen('kill -INT $PPID'); f:close() end); "
      .. "poolsh.connect('" .. path .. "')"))
    error(o .. e, 0)
  end),
  ["bad argument #1 to 'eval' (the table holds no code: {code, timeout_s = seconds})"] = function()
    local q <close> = poolsh.spawn(); q:eval({timeout_s = 1})
  end,
  -- nobody (setpriv, as root) connects to a server's socket made reachable
  ["poolsh: refused a connection to <path> from uid <uid> (pid <pid>)"] = with_server(function(path)
    os.execute("chmod 0777 " .. path)
    H.sh("setpriv --reuid=65534 --regid=65534 --clear-groups " .. H.exe .. " --backend=sim -e "
      .. H.quote("pcall(poolsh.connect, '" .. path .. "', 2)"))
    H.rsleep(0.2)
  end),
  ["poolsh.connect: socket path too long (<n> bytes, at most 107)"] = function()
    local d = os.tmpname()                          -- never made: the name is refused first
    os.remove(d)
    poolsh.connect(d .. "/" .. ("x"):rep(120))
  end,
  ["poolsh.serve: <path> already exists and is not a socket"] = function() poolsh.serve("/etc/passwd") end,
  ["poolsh.serve: <path>: a poolsh already serves there"] = with_server(function(path) poolsh.serve(path) end),
  ["poolsh.serve: cannot listen on <path>: <reason>"] = function() poolsh.serve("/nonexistent/s.sock") end,
  ["poolsh.serve: this process was not spawned: give a socket path"] = function() poolsh.serve() end,
  ["poolsh: serving on <path> (pid <n>)"] = with_server(function() end),
  ["poolsh: client <pid>: <what>"] = with_server(function(path)
    local py = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
      .. "s.sendall(bytes([0,0,0,10]) + b'M' + bytes(8) + b'?'); s.close()"
    H.sh("python3 -c " .. H.quote(py) .. " " .. path)
    local c <close> = poolsh.connect(path)          -- served after the bad client
    c:eval("return 1")
  end),
  ["poolsh.spawn: POOLSH_BIN=<path> is not an executable file"] = with_bin("", nil),
  ["poolsh.spawn: cannot run <path>: <reason>"] = with_bin("\1\2\3 not a program", "+x"),
  ["poolsh.spawn: cannot find the poolsh program (not beside the module poolsh.core): set POOLSH_BIN to its path"] = module_alone,
  ["poolsh.spawn: cannot read script <path>: <reason>"] = function() poolsh.spawn("/nonexistent/x.lua") end,
  -- poolsh.view (api.md, view.md)
  ["poolsh.view: expects a table of options ({port = N}) or false, got <type>"] = function() poolsh.view(5) end,
  ["poolsh.view: unknown option '<name>' (did you mean 'port'?)"] = function() poolsh.view { prot = 1 } end,
  ["poolsh.view: port must be an integer from 0 to 65535 (0: any free one), got <value>"] =
    function() poolsh.view { port = -1 } end,
  ["poolsh.view: already serving on port <n>; poolsh.view(false) stops it"] = cli("--backend=sim -e "
    .. H.quote("local n = tonumber(poolsh.view():match(':(%d+)/')) poolsh.view{port = n % 60000 + 1024}")),
  ["poolsh.view: port <n> of 127.0.0.1 is in use"] = cli("--backend=sim -e " .. H.quote(
    "local n = poolsh.view():match(':(%d+)/') "
    .. "os.execute(poolsh.program .. ' --backend=sim -e \"poolsh.view{port = ' .. n .. '}\"')")),
  ["poolsh.view: already serving"] = function()
    local core = require "poolsh.core"
    core.view_start(0, "", "", "")
    local _, e = pcall(core.view_start, 0, "", "", "")
    core.view_stop()
    error(e, 0)
  end,
  ["poolsh: --view=PORT: the port must be a number from 0 to 65535, got '<text>'"] =
    cli("--backend=sim --view=8x -e 'print(1)'"),
  -- IPC (api.md, ipc.md)
  ["<cudaErrorName>: <description> (exporting b<n>)"] = fault("ptr_export", ipc_export_fault),
  ["<cudaErrorName>: <description> (exporting event e<n>)"] = fault("event_export", function()
    local e <close> = poolsh.event{ ipc = true }
    e:export()
  end),
  ["<cudaErrorName>: <description> (exporting pool p<n>)"] = fault("pool_export", function()
    local p <close> = poolsh.pool{ ipc = true }
    p:export(sock())
  end),
  ["<cudaErrorName>: <description> (importing event <pid>:e<n> as e<m>)"] = fault("event_import", function()
    local e <close> = poolsh.event{ ipc = true }
    poolsh.import_event(e:export())
  end),
  ["<cudaErrorName>: <description> (importing pid <pid>'s b<n> into p<m>)"] = ipc_import_fault,
  ["<cudaErrorName>: <description> (importing pid <pid>'s pool p<n> from <path> as p<m>)"] =
    fault("pool_import", function()
      local p <close> = poolsh.pool{ ipc = true }
      local path = sock()
      p:export(path)
      poolsh.import_pool(path)
    end),
  ["b<n> is still imported by <k> process: every importer must free it first"] = ipc_still_imported,
  ["b1 is still imported by 1 process: every importer must free it first"] = ipc_still_imported,
  ["p<n> is already exported at <path>"] = ipc_again,
  ["p<n>:export: <path> already exists: remove it or choose another path"] = ipc_taken,
  ["p<n>:import: pid <pid>'s b<n> was already freed by its exporter"] = ipc_freed,
  ["p<n>:import: pid <pid>'s b<n> is already imported in this process: free that Buffer first"] = ipc_twice,
  ["... (reading pool p<n>: an imported pool's settings are its exporter's)"] =
    on("sim", ipc_pair(function(s, xp, ip) return ip.release_threshold end)),
  ["... p<n> is imported, and an imported pool cannot allocate: only its exporter does"] =
    on("sim", ipc_pair(function(s, xp, ip) ip:alloc(4096, s) end)),
  ["poolsh.event: an IPC event cannot have timing: pass timing = false (CUDA needs cudaEventDisableTiming with cudaEventInterprocess)"] =
    function() poolsh.event{ ipc = true, timing = true } end,
  ["poolsh.import_event: malformed token: <what is wrong>"] = function() poolsh.import_event("x") end,
  ["poolsh.import_pool: interrupted waiting for <path>"] = on("sim", cli("--backend=sim -e " .. H.quote(
    "local p = poolsh.pool{ipc = true}; local t = os.tmpname(); os.remove(t); local path = t .. '.sock'; p:export(path); "
    .. "local ok, e = pcall(function() local f = io.popen('kill -INT $PPID'); f:close() end); "
    .. "print(select(2, pcall(poolsh.import_pool, path)))"))),
  ["poolsh.import_pool: no socket at <path>: export the pool there first"] =
    function() poolsh.import_pool(sock()) end,
  ["poolsh.import_pool: nobody is serving <path> (its exporter ended or destroyed the pool)"] = ipc_nobody,
  ["poolsh.import_pool: timed out after <ms> ms waiting for the pool at <path>"] = ipc_timeout,
  ["poolsh: b<n> is still imported by <k> process: not freed"] = on("sim", cli("--backend=sim -e " .. H.quote(
    "local xp = poolsh.pool{ipc = true}; local t = os.tmpname(); os.remove(t); local path = t .. '.sock'; xp:export(path); "
    .. "local ip = poolsh.import_pool(path); local b = xp:alloc(64); keep = ip:import(b:export()); "
    .. "b = nil; collectgarbage(); collectgarbage(); keep:free()"))),
}

---------------------------------------------------------------------------


--- Runs trigger t; returns the message (or output) it produced.
local function produce(name, t)
  if type(t) == "function" then t = { fn = t } end
  if t.profile then
    local text, fname = t.profile, t.file
    local dir = os.tmpname(); os.remove(dir)
    assert(os.execute("mkdir -p " .. H.quote(dir)))
    local path = dir .. "/" .. fname
    local f = assert(io.open(path, "wb")); f:write(text); f:close()
    local exe = H.exe:match("^/") and H.exe or os.getenv("PWD") .. "/" .. H.exe
    local o, e = H.sh("cd " .. H.quote(dir) .. " && " .. H.quote(exe)
      .. " --backend=sim --profile=" .. fname .. " -e " .. H.quote(t.code))
    os.execute("rm -rf " .. H.quote(dir))
    return o .. e
  elseif t.cli then
    local o, e = H.poolsh_cmd(t.cli, t.env)
    return o .. e
  elseif t.lua then
    local o, e = lua_cmd(t.lua, t.env, t.bare)
    return o .. e
  end
  local fn = t.fn
  local s, p = poolsh.stream(), poolsh.pool{}
  if t.fault then
    local pf, op, err = have_faults(), t.fault[1], t.fault[2]
    fn = function(...)
      pf.arm{ op = op, call = pf.calls(op) + 1, error = err }
      local ok, e = pcall(t.fn, ...)
      pf.disarm()
      if not ok then error(e, 0) end
    end
  end
  local ok, e = pcall(fn, s, p)
  s:sync(); s:destroy(); p:destroy()
  assert(not ok, name .. ": the trigger raised nothing")
  e = tostring(e)
  local where = e:match("^([^\n]-):%d+: ")
  assert(where == nil or where:match("messages_spec%.lua$"),
    "the message carries another position than its caller's: " .. e)
  return e
end

--- Runs trigger t and checks its message against quote q.
local function check(q, t)
  local msg = produce(q, t)
  if os.getenv("POOLSH_SHOW_MESSAGES") then io.stderr:write("\n## ", q, "\n=> ", msg, "\n") end
  local at = msg:find(pattern(q))
  assert(at, ("%q\ndoes not match what the trigger produced:\n%s"):format(q, msg))
  -- errors.md: a CUDA failure starts with the error's name, no position
  if q:match("^<?cudaError") or q:match("^%.%.%. %(") then
    local name = msg:find("cudaError%a+: ", at)
    assert(name and not msg:sub(1, name - 1):match(":%d+: $"), "a CUDA failure raised with a position: " .. msg)
  end
end

describe("messages quoted in docs/", function()
  local all = quotes()

  it("finds quotes of every kind", function()
    for _, q in ipairs{ "attempt to use a freed poolsh.Buffer (b1)", "<progname>: '--trace' needs a value",
                        "poolsh: 1 buffer still live at exit (freed now):", "bad argument #1 to 'device' (device index out of range)" } do
      assert.is_truthy(all[q], q)
    end
    assert.are.equal("bad argument #.- to '.-' %(.-%)", pattern("bad argument #<n> to '<f>' (...)"))
    assert.are.equal("offset 200 beyond the end of b%d+", pattern("offset 200 beyond the end of b3"))
  end)

  it("has a trigger for every quote", function()
    local missing = {}
    for q, where in pairs(all) do
      if TRIGGERS[q] == nil then missing[#missing + 1] = q .. "  (" .. table.concat(where, ", ") .. ")" end
    end
    table.sort(missing)
    assert.are.same({}, missing)
  end)

  it("has no trigger for a message no longer quoted", function()
    local stale = {}
    for q in pairs(TRIGGERS) do
      if not all[q] then stale[#stale + 1] = q end
    end
    table.sort(stale)
    assert.are.same({}, stale)
  end)

  local names = {}
  for q in pairs(TRIGGERS) do names[#names + 1] = q end
  table.sort(names)
  for _, q in ipairs(names) do
    local t = TRIGGERS[q]
    it("produces: " .. q, function()
      if type(t) == "table" and t.pending then return pending(t.pending) end
      if type(t) == "table" and t.backend and t.backend ~= H.backend() then
        return pending(t.backend .. " only")
      end
      if type(t) == "table" and t.without_cuda and built_with_cuda() then
        return pending("a build without the cuda backend only")
      end
      if type(t) == "table" and t.with_cuda and not built_with_cuda() then
        return pending("a build with the cuda backend only (this one has none)")
      end
      if type(t) == "table" and t.with_driver and not have_driver() then
        return pending("a machine with a CUDA driver only (this one has none)")
      end
      if type(t) == "table" and (t.fault or t.needs_faults) and not have_faults() then
        return pending(NO_FAULTS)
      end
      if type(t) == "table" and t.finding then
        local ok = pcall(check, q, t.trigger)
        assert.is_false(ok, "the finding is fixed: drop finding() from this trigger")
        return pending("finding: " .. t.finding)
      end
      check(q, t)
    end)
  end
end)

-- errors.md: "Values quoted back ... are cut to 64 bytes, then `...`."
describe("values quoted back in messages", function()
  local LONG = ("k"):rep(300)
  local function cut(msg)
    return msg:find(("k"):rep(64) .. "...", 1, true) ~= nil and not msg:find(("k"):rep(65), 1, true)
  end
  local CASES = {
    ["an unknown option key"] = function() poolsh.pool{ [LONG] = 1 } end,
    ["an unknown stream option key"] = function() poolsh.stream{ [LONG] = 1 } end,
    ["an unknown p:stats option key"] = function(p) p:stats{ [LONG] = 1 } end,
    ["a field that cannot be set"] = function(p) p[LONG] = 1 end,
    ["a pool location"] = function() poolsh.pool{ location = LONG } end,
    ["a device"] = function() poolsh.pool{ device = LONG } end,
    ["a sim option name"] = function() poolsh.option(LONG) end,
    ["a backend given to configure"] = lua("poolsh.configure{backend = ('k'):rep(300)}"),
    ["a size string"] = function() assert(poolsh.size(LONG)) end,
    ["a duration string"] = function() assert(poolsh.duration(LONG)) end,
    ["POOLSH_BACKEND"] = lua("poolsh.backend()", "POOLSH_BACKEND=" .. LONG),
  }
  local FINDINGS = {}
  local function message(t)
    if type(t) == "table" then
      local o, e = lua_cmd(t.lua, t.env)
      return o .. e
    end
    local p <close> = poolsh.pool{}
    return H.err(t, p)
  end
  for what, t in pairs(CASES) do
    it(what .. " is cut", function()
      local msg = message(t)
      assert(cut(msg), msg)
    end)
  end
  for what, f in pairs(FINDINGS) do
    it(what .. " is cut", function()
      local msg = message(f[2])
      assert.is_false(cut(msg), "the finding is fixed: move this case to CASES")
      pending("finding: " .. f[1])
    end)
  end
end)
