--- poolsh --limit: the undo of a refused pool allocation synchronises
-- the stream (completing its pending frees on the device); the ledger
-- learns that too, though nothing is recorded (src/limit.c, undo).
local H = require "helpers"

describe("poolsh --limit: a refused allocation's undo", function()
  it("leaves the ledger agreeing with the device about the frees its sync completed", function()
    local out, err, code = H.poolsh_cmd("--backend=sim --limit=64MiB -e " .. H.quote([[
      local s = poolsh.stream()
      local p = poolsh.pool { release_threshold = "max" }
      local a = p:alloc(16 * 2^20, s)
      poolsh.spin(s, "50 ms"); a:free()
      assert(not pcall(p.alloc, p, 100 * 2^20, s))       -- refused: undo syncs s
      local truth = 0
      for _, b in ipairs(poolsh.core._sim_truth(p)) do
        if b.state == "pending" then truth = truth + b.size end
      end
      print(p:stats().pending, truth)
      poolsh.sync()
    ]]))
    assert.equal(0, code, err)
    assert.equal("0\t0\n", out)
  end)
end)
