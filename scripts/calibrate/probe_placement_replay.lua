-- Probe for docs/calibration/h100-2026-11-24-placement.log.
-- Usage: poolsh --backend=cuda scripts/calibrate/probe_placement_replay.lua RECORDING OUT [stream]
-- Replays a recording through one pool on one stream, printing each allocation's
-- offset from the first one's address and the pool's reserved bytes.
local read = require "poolsh.replay.read"
local rec = read.open(arg[1])
local out = io.open(arg[2], "w")
local p = poolsh.pool {}
local s = (arg[3] == "stream") and poolsh.stream() or poolsh.default_stream()
local live, base, n = {}, nil, 0
local function alloc(addr, size)
  local b = p:alloc(size, s)
  base = base or b.addr
  live[addr] = b
  n = n + 1
  out:write(("%d a %d %d %d\n"):format(n, size, b.addr - base, p:stats { estimates = false }.reserved // 1048576))
end
for _, blk in ipairs(rec.initial) do alloc(blk.addr, blk.size) end
for op, addr, size in rec:events() do
  if op == "alloc" then alloc(addr, size)
  elseif op == "free" then local b = live[addr]; out:write(("f %d %d\n"):format(size, b.addr - base)); b:free(); live[addr] = nil end
end
out:close()
for _, b in pairs(live) do b:free() end
poolsh.sync()
