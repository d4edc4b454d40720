-- Input fuzzer: poolsh's own .json traces as poolsh replay reads them
-- (poolsh.replay.poolsh_trace), read and replayed, on mutated traces.
-- Each input is bounded in time and memory by lib.run.
-- Usage: poolsh --backend=sim scripts/fuzz/trace_json.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local read = require "poolsh.replay.read"
local replay = require "poolsh.replay"

lib.run({
  name = "trace_json",
  suffix = ".json",
  corpus = { lib.slurp("tests/data/fuzz/trace.json") },
  decode = function(_, path)
    replay.run(read.open(path), { max_streams = 8 })
  end,
}, ...)
