-- The replays' results stay what they were before issue 20's speed work:
-- every allocator on every recording gives the same peaks, final reserved
-- size, driver calls and failures, and the same reserved and used figures
-- at samples along the way (their sums and maxima: the fragmentation over
-- time). The expected values were captured before the allocators and the
-- readers changed (tests/data/replay/results.lua); on the sim only.
-- Regenerate (only when a change of results is meant, and say so):
--   POOLSH_REPLAY_RESULTS_WRITE=1 busted ... tests/spec/replay_results_spec.lua
local H = require "helpers"
local replay = require "poolsh.replay"
local datafile = require "poolsh.datafile"

local EXPECTED = "tests/data/replay/results.lua"

-- The recordings: files of tests/data and synthetic ones.
local files = {
  "tests/data/rmm/small.csv", "tests/data/rmm/crlf.csv", "tests/data/fuzz/trace.csv",
  "tests/data/fuzz/trace.json", "tests/data/torch/convnet.pickle.gz",
  "tests/data/torch/transformer.pickle.gz", "tests/data/torch/transformer_2streams.pickle.gz",
}
local synthetic = {
  { name = "synthetic 30000", events = 30000, live = 500 },
  { name = "synthetic 20000 seed 7, 3 streams", events = 20000, live = 2000, streams = 3, seed = 7 },
  { name = "synthetic 20000 seed 99, 1 stream", events = 20000, live = 100, streams = 1, seed = 99 },
}
local runs = {
  { "pool" }, { "pytorch" }, { "cupy" },
  { "pytorch deferred", "pytorch", { deferred_free = true } },
  { "pytorch max_split 40 MiB", "pytorch", { max_split_size = 40 * H.MiB, roundup_power2_divisions = 4 } },
}

local keys = { "events", "peak_reserved", "peak_used", "final_reserved", "segments_allocated",
               "driver_frees", "failed" }

-- The summary of one replay: the result's figures and its samples'.
local function summary(rec, allocator, alloc_opts)
  local n, sum_r, sum_u, max_gap = 0, 0, 0, 0
  local r = replay.run(rec, { allocator = allocator, alloc_opts = alloc_opts, sample_every = 97,
    on_sample = function(_, st)
      n, sum_r, sum_u = n + 1, sum_r + st.reserved, sum_u + st.used
      if st.reserved - st.used > max_gap then max_gap = st.reserved - st.used end
    end })
  local out = { samples = n, sum_reserved = sum_r, sum_used = sum_u, max_unused = max_gap }
  for _, k in ipairs(keys) do out[k] = r[k] end
  return out
end

-- Every recording's name and a function that opens it.
local function recordings()
  local list = {}
  for _, f in ipairs(files) do
    list[#list + 1] = { f, function() return replay.read.open(f) end }
  end
  for _, s in ipairs(synthetic) do
    list[#list + 1] = { s.name, function() return replay.synthetic(s) end }
  end
  return list
end

local function all()
  local out = {}
  for _, rec in ipairs(recordings()) do
    for _, run in ipairs(runs) do
      out[rec[1] .. " | " .. run[1]] = summary(rec[2](), run[2] or run[1], run[3])
    end
  end
  return out
end

-- A Lua table constructor of t (keys sorted), for the expected file.
local function dump(t)
  local names = {}
  for k in pairs(t) do names[#names + 1] = k end
  table.sort(names)
  local lines = { "-- Replay results before issue 20 (tests/spec/replay_results_spec.lua).", "return {" }
  for _, k in ipairs(names) do
    local fields = {}
    local fk = {}
    for f in pairs(t[k]) do fk[#fk + 1] = f end
    table.sort(fk)
    for _, f in ipairs(fk) do fields[#fields + 1] = ("%s = %d"):format(f, t[k][f]) end
    lines[#lines + 1] = ("  [%q] = { %s },"):format(k, table.concat(fields, ", "))
  end
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n") .. "\n"
end

describe("replay results", function()
  it("are the same for every allocator on every recording as before the speed work", function()
    if not H.is_sim() then pending("the expected figures are the sim's") return end
    local got = all()
    if os.getenv("POOLSH_REPLAY_RESULTS_WRITE") then
      local f = assert(io.open(EXPECTED, "w"))
      f:write(dump(got))
      f:close()
    end
    local ok, expected = datafile.decode(H.slurp(EXPECTED), EXPECTED)
    assert(ok, expected)
    local n = 0
    for k, v in pairs(expected) do
      n = n + 1
      assert.same(v, got[k], k)
    end
    for k in pairs(got) do assert(expected[k], "no expected figures for " .. k) end
    assert.equal((#files + #synthetic) * #runs, n)
  end)
end)
