-- The PyTorch snapshot read by PyTorch's own memory_viz, where PyTorch is
-- installed (the GPU machines): a recorded run, not synthetic events.
local poolsh = require "poolsh"
local H = require "helpers"

local function have_torch()
  local _, _, code = H.sh("python3 -c 'import torch.cuda._memory_viz'")
  return code == 0
end

describe("the .pickle export", function()
  it("opens in torch.cuda._memory_viz (trace_plot, segment_plot, segsum)", function()
    if not have_torch() then return pending("PyTorch is not installed here") end
    local file = os.tmpname() .. ".pickle"
    poolsh.trace.clear()
    poolsh.trace.start()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local a, b = p:alloc("4 MiB", s), p:alloc("1 MiB", s)
    a:free()
    local c = p:alloc("2 MiB", s)
    poolsh.trace.stop()
    poolsh.trace.save(file)
    poolsh.trace.clear()
    local out, err, code = H.sh("python3 -c " .. H.quote([[
import pickle, sys, torch.cuda._memory_viz as mv
snap = pickle.load(open(sys.argv[1], 'rb'))
assert len(mv.trace_plot(snap)) > 0 and len(mv.segment_plot(snap)) > 0
print(len(snap['segments']), len(snap['device_traces'][0]))
print(mv.segsum(snap).splitlines()[0])
]]) .. " " .. H.quote(file))
    os.remove(file)
    assert.equal(0, code, err)
    local nseg, ntrace = out:match("^(%d+) (%d+)")
    assert.is_true(tonumber(nseg) >= 1)
    assert.is_true(tonumber(ntrace) >= 4)      -- alloc, alloc, free, alloc at least
    b:free(); c:free(); s:sync(); p:destroy()
  end)
end)
