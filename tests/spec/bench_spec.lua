-- The benchmark baselines: poolsh.bench_c and poolsh.bench_floor.
local poolsh = require "poolsh"
local H = require "helpers"

describe("benchmark baselines", function()
  it("bench_c times n alloc+free pairs and leaves the pool as it was", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local t = poolsh.bench_c(p, s, "1 MiB", 100)
    assert.is_true(type(t) == "number" and t > 0)
    assert.equal(0, p:stats().used)
    assert.is_true(p:stats().used_high >= H.MiB)
    assert.matches("poolsh.Pool expected", H.err(poolsh.bench_c, s, s, 1, 1))
    s:sync(); p:destroy()
  end)

  it("bench_floor's alloc and free do the two calls and refuse misuse", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local alloc, free = poolsh.bench_floor(p, s, "4 KiB")
    local b = alloc()
    assert.equal(4096, p:stats().used)
    free(b)
    assert.equal(0, p:stats().used)
    assert.matches("live bench_floor block expected", H.err(free, b))
    assert.matches("live bench_floor block expected", H.err(free, p))
    assert.matches("at least 1 byte", H.err(poolsh.bench_floor, p, s, 0))
    s:sync(); p:destroy()
    assert.matches("pool or stream is gone", H.err(alloc))
  end)

  it("the benchmark script runs and prints every figure", function()
    local out, err, code = H.poolsh_cmd("--backend=sim scripts/bench_alloc.lua 50 '64 KiB' 3")
    assert.equal(0, code, err)
    for _, line in ipairs { "C pair", "Lua pair", "methods hoisted", "floor %(bench_floor%)",
                            "recording on %(poolsh.trace%) +[%d.]+ ns %(median%), [%d.]+ x",
                            "A/A %(the Lua pair against itself%) +[%d.]+ x %(no change reads 1%)",
                            "ratio Lua/C = [%d.]+" } do
      assert.matches(line, out)
    end
  end)
end)
