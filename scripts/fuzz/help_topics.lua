-- Input fuzzer: what a learner types at help (poolsh.help.entry: a topic
-- looked up among docs/api.md's entries, with "did you mean" over all of
-- them) and the prose folding every command's output goes through
-- (poolsh.words.wrap, did_you_mean over the scenarios' names). A topic
-- prints an entry or raises a one-line error; bounded in time and memory
-- by lib.run.
-- Usage: poolsh --backend=sim scripts/fuzz/help_topics.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local help = require "poolsh.help"
local words = require "poolsh.words"

local SCENARIOS = require "poolsh.scenarios"

lib.run({
  name = "help_topics",
  suffix = ".txt",
  corpus = { "pool", "Pool:alloc", "p:alloc", "alloc", "poolsh.trace.start", "Pool",
             "Stream fields", "trace.meta", "s:sync()", "poolsh.fmt(bytes)" },
  decode = function(input)
    local ok, e = pcall(help.entry, input)
    if not ok and not tostring(e):match("^help: ") then error(e, 0) end
    words.wrap(input .. " " .. input, 40)
    words.did_you_mean(input:sub(1, 80), SCENARIOS)
    if not ok then error(e, 0) end
  end,
  seconds_per_input = 2,
  memory_per_input = 256 * 1024 * 1024,
}, ...)
