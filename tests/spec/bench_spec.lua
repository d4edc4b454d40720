-- The benchmark baselines: poolsh.bench_c and poolsh.bench_floor.
local poolsh = require "poolsh"
local H = require "helpers"

describe("benchmark baselines", function()
  it("bench_c times n alloc+free pairs and leaves the pool as it was", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local w0 = poolsh.wallclock()
    local t = poolsh.bench_c(p, s, "1 MiB", 100)
    local w = poolsh.wallclock() - w0
    assert.equal("float", math.type(t))
    -- host seconds spent inside the call: more than none, less than the call
    assert.is_true(t > 0 and t <= w, ("%g s timed in a call of %g s"):format(t, w))
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
  it("bench_fill leaves n blocks and n holes that release frees once", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local release = poolsh.bench_fill(p, s, 100)
    local used = p:stats().used
    assert.is_true(used >= 100 * 1024 and used <= 100 * 7 * 1024)
    assert.equal(0, p:stats().live)               -- poolsh tracks none of them
    release()
    assert.equal(0, p:stats().used)
    release()
    assert.equal(0, p:stats().used)
    assert.matches("count must be in 1..2%^28", H.err(poolsh.bench_fill, p, s, 0))
    assert.matches("poolsh.Pool expected", H.err(poolsh.bench_fill, s, s, 1))
    s:sync(); p:destroy()
  end)

  it("bench_fill frees what it took when the pool runs out, and raises", function()
    local s, p = poolsh.stream(), poolsh.pool { max_size = "32 MiB" }
    local e = H.err(poolsh.bench_fill, p, s, 10000)
    assert.matches("cudaErrorMemoryAllocation", e)
    assert.equal(0, p:stats().used)
    s:sync(); p:destroy()
  end)

  it("bench_heap reads the C heap in use, or nil", function()
    local h = poolsh.bench_heap()
    assert.is_true(h == nil or math.type(h) == "integer" and h > 0)
  end)

  it("the scale benchmark runs and prints every column", function()
    local out, err, code = H.poolsh_cmd("--backend=sim scripts/bench_scale.lua 1000 100")
    assert.equal(0, code, err)
    assert.matches("C pair +Lua pair +C after sync +s:sync%(%) +p:stats%(%) +fill s +B/live block +backend B", out)
    assert.matches("\n +1000 +[%d.]+us", out)
    assert.matches("ratio 1000 / 1000 live blocks: C pair [%d.]+, Lua pair [%d.]+", out)
  end)
end)
