-- Fuzz target: the IPC tokens (docs/ipc.md), the strings b:export() and
-- e:export() write and ip:import(token) / poolsh.import_event(token) read.
-- This process exports an IPC pool (a socket under a fresh name), imports
-- it back (the sim allows that), exports a buffer and an IPC event; their
-- tokens are the corpus. Each input goes to both readers: it imports, and
-- is freed or destroyed at once, or is refused with a clear message. The
-- hex part reaches the sim's own checks (sim_ipc.c: a slot, an offset and
-- a size that must agree with the exporter's table and lie in the arena;
-- an event slot's name).
-- Usage: poolsh --backend=sim scripts/fuzz/ipc_token.lua [--seed S]
--   [--seconds T | --inputs N] [--tmpdir DIR] [--replay FILE]
local lib = dofile("scripts/fuzz/lib.lua")
local poolsh = require "poolsh"

local sock = os.tmpname()
os.remove(sock)
sock = sock .. ".sock"

local s = poolsh.stream()
local p = poolsh.pool{ ipc = true }
p:export(sock)
local ip = poolsh.import_pool(sock)
local b = p:alloc(65536, s)
local small = p:alloc(512, s)
local ev = poolsh.event{ ipc = true }
ev:record(s)
local corpus = { b:export(), small:export(), ev:export() }

-- Imports input both ways; whatever imports is let go at once. An unclear
-- error from either reader is raised (lib.run fails on it); when both
-- refuse clearly, the buffer reader's message is the input's refusal.
local function decode(input)
  local ok, e = pcall(poolsh.import_event, input)
  if ok then e:destroy() elseif lib.unclear(e) then error(e, 0) end
  local okb, got = pcall(ip.import, ip, input, s)
  if okb then
    got:free()
    s:sync()
  elseif lib.unclear(got) or not ok then
    error(got, 0)
  end
end

lib.run({
  name = "ipc_token",
  corpus = corpus,
  decode = decode,
}, ...)

s:sync()
b:free(s)
small:free(s)
s:sync()
ev:destroy()
ip:destroy()
p:destroy()
os.remove(sock)
