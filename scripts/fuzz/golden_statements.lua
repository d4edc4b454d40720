-- Input fuzzer: the golden statements checker (poolsh.golden.statements)
-- on mutated golden files: each input is decoded (poolsh.golden.format),
-- checked as a golden file, then its statements are held to its offsets
-- and counters. A mutated file either fails to decode with a clear error
-- or is checked (its problems are data, not errors); each input is bounded
-- in time and memory.
-- Usage: poolsh --backend=sim scripts/fuzz/golden_statements.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local format = require "poolsh.golden.format"
local statements = require "poolsh.golden.statements"

lib.run({
  name = "golden_statements",
  suffix = ".lua",
  corpus = {
    lib.slurp("tests/golden/h200/statements_two_frees.lua"),
    lib.slurp("tests/golden/h200/statements_partial.lua"),
    lib.slurp("tests/golden/h200/statements_cross_stream.lua"),
    lib.slurp("tests/golden/h200/reuse_f1_o0_i1.lua"),
  },
  decode = function(input)
    local t, err = format.decode(input, "input")
    if not t then error(err, 0) end
    t, err = format.check(t, "input")
    if not t then error(err, 0) end
    local problems = statements.check(t)
    assert(type(problems) == "table")
    for _, line in ipairs(statements.report(problems)) do assert(type(line) == "string") end
  end,
}, ...)
