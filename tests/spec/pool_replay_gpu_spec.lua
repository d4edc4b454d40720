-- The pool allocator's replays of tests/data/torch peak as on an H200:
-- `poolsh replay --allocator=pool FILE` with the default settings, measured
-- on the GPU on 2026-11-28 (the modes/ recordings) and 2026-11-27 (the older
-- ones, docs/calibration/h200-2026-11-27-placement.md). The sim reaches
-- them through its young-free rule (docs/sim.md, Young frees first); where
-- it does not yet, the case is pending with the sim's figure, and it runs
-- on the cuda backend all the same.
local H = require "helpers"
local replay = require "poolsh.replay"

local GPU = {
  { "modes/resnet18", 771751936 },
  { "modes/resnet18_amp", 469762048 },
  { "modes/transformer", 872415232 },
  { "modes/transformer_2streams", 872415232 },
  { "modes/conv_shapes", 1140850688, sim = 1241513984 },
  { "modes/kv_cache", 201326592 },
  { "convnet", 805306368, sim = 838860800 },
  { "transformer", 872415232 },
  { "transformer_2streams", 872415232 },
}

-- The peak reserved of one recording replayed through the pool allocator.
local function peak(name)
  local rec = replay.read.open("tests/data/torch/" .. name .. ".pickle.gz")
  return replay.run(rec, { allocator = "pool" }).peak_reserved
end

describe("the pool allocator's replay peaks", function()
  for _, case in ipairs(GPU) do
    local name, gpu, sim = case[1], case[2], case.sim
    it(("equal the H200's for %s (%d)"):format(name, gpu), function()
      if sim and H.is_sim() then
        -- Not yet modelled: the sim's own figure is kept, so that a change
        -- to it is seen (docs/sim.md says what is missing).
        assert.equal(sim, peak(name), name)
        pending(("the sim peaks at %d, the H200 at %d (docs/sim.md, Young frees first)"):format(sim, gpu))
        return
      end
      assert.equal(gpu, peak(name), name)
    end)
  end
end)
