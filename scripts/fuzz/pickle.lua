-- Input fuzzer: the pickle reader and the PyTorch snapshot reader
-- (poolsh.replay.pickle, poolsh.replay.torch), then a replay of what they
-- read, on mutated snapshots. Each input is bounded in time and memory by
-- lib.run; the reader's own bounds (docs/replay.md, "Limits") hold them.
-- Usage: poolsh --backend=sim scripts/fuzz/pickle.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local pickle = require "poolsh.replay.pickle"
local torch = require "poolsh.replay.torch"
local replay = require "poolsh.replay"

lib.run({
  name = "pickle",
  suffix = ".pickle",
  corpus = {
    lib.slurp("tests/data/fuzz/convnet_subset.pickle"),   -- Python's protocol 4: frames, memo
    lib.slurp("tests/data/fuzz/trace.pickle"),            -- poolsh's writer: protocol 2
    lib.slurp("tests/data/bad/two_devices.pickle"),
    lib.slurp("tests/data/bad/double_free.pickle"),
  },
  decode = function(input, path)
    pickle.loads(input, "input")
    local rec = torch.open(path)
    replay.run(rec, { max_streams = 8 })
  end,
}, ...)
