-- Input fuzzer: RMM logging CSVs (poolsh.replay.rmm) read and replayed,
-- on mutated logs. Each input is bounded in time and memory by lib.run.
-- Usage: poolsh --backend=sim scripts/fuzz/rmm_csv.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local read = require "poolsh.replay.read"
local replay = require "poolsh.replay"

lib.run({
  name = "rmm_csv",
  suffix = ".csv",
  corpus = {
    lib.slurp("tests/data/rmm/small.csv"),
    lib.slurp("tests/data/rmm/crlf.csv"),
    lib.slurp("tests/data/rmm/huge_size.csv"),
    lib.slurp("tests/data/rmm/unknown_free.csv"),
  },
  decode = function(_, path)
    local rec = read.open(path)
    local _ = #rec.streams
    replay.run(rec, { max_streams = 8 })
  end,
}, ...)
