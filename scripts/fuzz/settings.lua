-- Input fuzzer: the data-file parser (poolsh.datafile) on mutated device
-- profiles, golden files and --pool settings, then the checks their
-- readers make (poolsh.profile.check, poolsh.golden.format.check,
-- poolsh.replay.settings). Each input is bounded in time and memory by
-- lib.run; the parser runs nothing, so its cost follows the text.
-- Usage: poolsh --backend=sim scripts/fuzz/settings.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local datafile = require "poolsh.datafile"
local profile = require "poolsh.profile"
local format = require "poolsh.golden.format"
local replay = require "poolsh.replay"

local POOL = 'release_threshold = "max", opportunistic = false; max_size = 64 * 2^20'
lib.run({
  name = "settings",
  suffix = ".lua",
  corpus = {
    lib.slurp("lua/poolsh/profiles/h200.lua"),
    lib.slurp("tests/data/golden-sim/suballoc_alignment.lua"),
    "-- hand-written\nreturn { gpu = 'X', values = { memory = 80 * 2^30, api_ns = 1/0 },\n"
      .. "  notes = { a = [==[long]==], b = \"\\x41\\65\\u{42}\\z   c\" } }\n",
    "return {" .. POOL .. "\n}",
  },
  decode = function(input)
    local ok, t = datafile.decode(input, "input")
    if not ok then error(t, 0) end
    if type(t) == "table" and t.scenario ~= nil then
      local _, err = format.check(t, "input")
      if err then error(err, 0) end
    elseif type(t) == "table" then
      profile.check(t, "input")
    end
    local body = input:match("^return {(.*)\n}$")
    if body then replay.settings(body) end
  end,
}, ...)
