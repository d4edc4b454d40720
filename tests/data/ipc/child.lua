-- The other process of tests/spec/ipc_spec.lua: a poolsh on the sim that
-- imports (or serves) what the spec process exports. arg[1] is the mode,
-- arg[2] the socket;
-- it prints one line per result and flushes, and waits for the file
-- <path>.go before it ends where the spec needs it alive.
local poolsh = require "poolsh"
local mode, path = arg[1], arg[2]

-- The tokens come in <path>.tokens (mode 0600), one a line, as arg[3],
-- arg[4]: never on the command line, where ps shows them (docs/ipc.md).
do
  local f = io.open(path .. ".tokens")
  if f then
    local i = 3
    for l in f:lines() do arg[i] = l; i = i + 1 end
    f:close()
  end
end

local function say(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  io.write(table.concat(t, "\t"), "\n")
  io.stdout:flush()
end

-- Waits for <path>.go, at most 30 s: a spec that failed before creating
-- it must not leave this process (and the spec's pclose) waiting forever.
local function wait_go()
  local deadline = os.time() + 30
  while os.time() < deadline do
    local f = io.open(path .. ".go")
    if f then f:close() return end
    os.execute("sleep 0.02")
  end
end

local function try(f, ...)
  local ok, err = pcall(f, ...)
  say(ok and "ok" or "error", err)
end

if mode == "read" then
  -- import the pool, the buffer and the ready event; wait, read, write
  -- 0xCD, record our finished event, free our import first, hand back
  -- the finished event's token and stay alive until told.
  poolsh.trace.start()
  local ip = poolsh.import_pool(path)
  say("pool", ip.imported, ip.exporter, tostring(ip))
  local s = poolsh.stream()
  poolsh.live.lines()               -- what came before
  local b = ip:import(arg[3], s)
  say("buffer", b.imported, b.source, tostring(b))
  local live = poolsh.live.lines()
  say("live", live[#live])
  local marks = {}
  for _, ev in ipairs(poolsh.trace.events()) do
    if ev.op == "pool_create" or ev.op == "alloc" then
      marks[#marks + 1] = ("%s ipc=%s imported=%s"):format(ev.op, ev.ipc, ev.imported)
    end
  end
  poolsh.trace.stop()
  say("trace", table.concat(marks, ", "))
  local ready = poolsh.import_event(arg[4])
  say("event", ready.ipc, ready.imported, ready.timing)
  s:wait(ready)
  say("read", string.format("%02x", b:read(0, 1):byte()), b:read(#b - 1, 1):byte())
  poolsh.fill(b, 0xCD, s)
  local fin = poolsh.event{ ipc = true }
  fin:record(s)
  b:free()
  s:sync()
  say("finished", fin:export())
  wait_go()
elseif mode == "rules" then
  local ip = poolsh.import_pool(path)
  local st = ip:stats()
  say("stats", st.reserved, st.used, st.reserved_high, st.used_high)
  try(ip.alloc, ip, 4096)
  try(ip.trim, ip)
  try(function() ip.release_threshold = 0 end)
  try(poolsh.pool{}.export, ip, path .. ".again")
  try(ip.import, ip, arg[3])        -- a token of a freed block, or a bad one
elseif mode == "hold" then
  local ip = poolsh.import_pool(path)
  local b = ip:import(arg[3])
  say("held", b.size)
  wait_go()
  b:free()
  say("freed")
elseif mode == "serve" then
  local p = poolsh.pool{ ipc = true }
  p:export(path)
  say("serving")
  wait_go()
end
