-- Input fuzzer: PyTorch snapshots replayed through backend:cudaMallocAsync
-- (poolsh.allocators.pytorch_async), whose replay is paced by the
-- recorded times (docs/replay.md, "backend:cudaMallocAsync"): mutated
-- snapshots, mutated times among them (huge, negative, not finite). Each
-- input is bounded in time and memory by lib.run; the pacing's cut of long
-- waits and the reader's own bounds (docs/replay.md, "Limits") hold them.
-- Usage: poolsh --backend=sim scripts/fuzz/replay_async.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local torch = require "poolsh.replay.torch"
local replay = require "poolsh.replay"
local poolsh = require "poolsh"

lib.run({
  name = "replay_async",
  suffix = ".pickle",
  corpus = {
    lib.slurp("tests/data/fuzz/convnet_subset.pickle"),   -- Python's protocol 4: frames, memo
    lib.slurp("tests/data/fuzz/trace.pickle"),            -- poolsh's writer: protocol 2
  },
  decode = function(_, path)
    local rec = torch.open(path)
    local t0 = poolsh.now()
    replay.run(rec, { allocator = "pytorch", alloc_opts = { conf = "backend:cudaMallocAsync" },
                      max_streams = 8 })
    -- every wait between two events is cut to device_lag + pace_slack
    local most = (rec.count + 1) * (0.3 + replay.pace_slack) + 1000
    if poolsh.now() - t0 > most then
      error(("paced for %.0f ms of virtual time, more than %.0f"):format(poolsh.now() - t0, most), 0)
    end
  end,
}, ...)
