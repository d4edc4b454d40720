-- Input fuzzer: gzip data as the readers inflate it (poolsh.replay.gzip),
-- then read as a PyTorch snapshot: mutated single and multi-member gzip
-- files. Each input is bounded in time and memory by lib.run; the inflate
-- bound (docs/replay.md, "Limits") holds it.
-- Usage: poolsh --backend=sim scripts/fuzz/gzip.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local gzip = require "poolsh.replay.gzip"
local torch = require "poolsh.replay.torch"
local zlib = require "zlib"

local function gz(s, level) return (zlib.deflate(level or 6, 31)(s, "finish")) end

local snapshot = lib.slurp("tests/data/fuzz/trace.pickle")
local half = #snapshot // 2
lib.run({
  name = "gzip",
  suffix = ".pickle.gz",
  corpus = {
    lib.slurp("tests/data/torch/convnet.pickle.gz"),
    gz(snapshot, 9),
    gz(snapshot:sub(1, half), 1) .. gz("", 6) .. gz(snapshot:sub(half + 1), 9),   -- three members
    gz("\128\4" .. ("\0"):rep(64 * 1024), 9),   -- a pickle's start, then zeros
  },
  decode = function(input, path)
    gzip.inflate(input, "input", { max = 4 << 20 })
    torch.open(path, { max_inflate = 4 << 20 })
  end,
}, ...)
