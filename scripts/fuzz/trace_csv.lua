-- Input fuzzer: poolsh's own .csv traces (RMM logs, docs/export.md) as
-- poolsh replay reads them, read and replayed, on mutated traces. Each
-- input is bounded in time and memory by lib.run.
-- Usage: poolsh --backend=sim scripts/fuzz/trace_csv.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local read = require "poolsh.replay.read"
local replay = require "poolsh.replay"

lib.run({
  name = "trace_csv",
  suffix = ".csv",
  corpus = { lib.slurp("tests/data/fuzz/trace.csv") },
  decode = function(_, path)
    local rec = read.open(path)
    local _ = #rec.streams
    replay.run(rec, { max_streams = 8 })
  end,
}, ...)
