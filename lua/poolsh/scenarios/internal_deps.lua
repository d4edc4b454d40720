-- Internal dependencies: a pool at its max_size makes one stream wait for
-- another stream's pending free, and the host pays for it at the next sync.
local poolsh = require "poolsh"

return {
  name = "internal_deps",
  summary = "a full pool (max_size) makes s2 wait for a free pending on s1, and what it costs",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local function pool(internal)
      return poolsh.pool { max_size = "32 MiB", release_threshold = "max", internal_dependencies = internal }
    end

    step("fill a 32 MiB pool with 2 x 16 MiB on s1; time a sync of idle s2", "the baseline cost of a sync")
    local p = pool(true)
    local x, y = p:alloc("16 MiB", s1), p:alloc("16 MiB", s1)
    local t = poolsh.now()
    s2:sync()
    local idle = poolsh.now() - t

    step("free one behind 200 ms of work on s1; allocate 16 MiB on s2", "reused at once: s2 now waits for s1")
    poolsh.spin(s1, "200 ms")
    x:free()
    local z = p:alloc("16 MiB", s2)
    expect.reused(z, "internal dependency")
    expect.equal(z.reused_from, x.id, "the buffer whose memory z reused")
    expect.equal(s2:query(), false, "s2 idle")

    step("synchronise s2", "the host waits for s1's work: the hidden cost")
    t = poolsh.now()
    s2:sync()
    local waited = poolsh.now() - t
    ctx.say(("sync of s2: %.3f ms (idle: %.4f ms)"):format(waited, idle))
    expect.faster(idle, waited, 10, "idle sync against the dependent one")
    y:free(); z:free(); poolsh.sync()

    step("the same with internal_dependencies = false", "the allocation fails instead of waiting")
    local q = pool(false)
    x, y = q:alloc("16 MiB", s1), q:alloc("16 MiB", s1)
    poolsh.spin(s1, "200 ms")
    x:free()
    local ok, err = pcall(q.alloc, q, "16 MiB", s2)
    expect.equal(ok, false, "allocation succeeded")
    expect.truthy(tostring(err):find("cudaErrorMemoryAllocation", 1, true), "a cudaErrorMemoryAllocation error")
    y:free(); poolsh.sync()
  end,
}
