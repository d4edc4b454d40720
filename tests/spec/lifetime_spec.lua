-- Object lifetimes: errors half-way, pools destroyed under live buffers,
-- <close>, finalizers that never raise.
local poolsh = require "poolsh"
local H = require "helpers"
local MiB = H.MiB

describe("lifetimes", function()
  it("objects made before an error survive it", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local b = p:alloc("1 MiB", s)
    local ok = pcall(function()
      local c = p:alloc("1 MiB", s)
      poolsh.fill(c, 1, s)
      error("half-way")
    end)
    assert.is_false(ok)
    assert.is_true(b.live and s.live and p.live)
    poolsh.fill(b, 2, s)
    assert.is_true(poolsh.verify(b, 2, s))
    b:free(); s:sync()
    collectgarbage(); collectgarbage()
    assert.equal(0, p:stats().used)
    p:destroy()
  end)

  it("<close> frees when a block errors", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local kept
    local ok, err = pcall(function()
      local b <close> = p:alloc("2 MiB", s)
      kept = b
      error("boom")
    end)
    assert.is_false(ok)
    assert.matches("boom", err)
    assert.is_false(kept.live)
    assert.equal(0, p:stats().used)
    p:destroy()
  end)

  it("<close> after an explicit free does nothing", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    do
      local b <close> = p:alloc(64, s)
      b:free()
    end
    assert.equal(0, p:stats().used)
    p:destroy()
  end)

  it("streams, events and pools are to-be-closed too", function()
    local ks, ke, kp
    do
      local s <close> = poolsh.stream()
      local e <close> = poolsh.event()
      local p <close> = poolsh.pool {}
      ks, ke, kp = s, e, p
    end
    assert.is_false(ks.live)
    assert.is_false(ke.live)
    assert.is_false(kp.live)
  end)

  it("destroying a pool with live buffers: they stay usable, then free", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local a, b = p:alloc("1 MiB", s), p:alloc("1 MiB", s)
    poolsh.fill(a, 5, s)
    p:destroy()
    assert.is_false(p.live)
    assert.equal(p, a.pool)
    a:write(0, "still here")
    assert.equal("still here", a:read(0, 10))
    assert.is_true(poolsh.verify(b, 0, s) ~= nil)
    a:free()
    b:free(s)
    s:sync()
    assert.is_false(a.live or b.live)
  end)

  it("a collected pool's buffers can still be freed", function()
    local s = poolsh.stream()
    local b = poolsh.pool {}:alloc("1 MiB", s)
    collectgarbage(); collectgarbage()
    -- the buffer keeps its pool alive (user value), so it is not destroyed
    assert.is_true(b.pool.live)
    b:free(); s:sync()
  end)

  it("a buffer keeps its stream alive; a destroyed stream's buffer frees on another", function()
    local p = poolsh.pool {}
    local b = p:alloc("1 MiB", poolsh.stream())
    collectgarbage(); collectgarbage()
    assert.is_true(b.stream.live)
    b.stream:destroy()
    local t = poolsh.stream()
    b:free(t); t:sync()
    assert.equal(0, p:stats().used)
    p:destroy()
  end)

  it("finalizers never raise, whatever order things are collected in", function()
    local warned = {}
    -- warnings go to stderr only when on; an error in __gc would warn too
    local ok = pcall(function()
      for _ = 1, 20 do
        local s, p = poolsh.stream(), poolsh.pool {}
        local b = p:alloc("1 MiB", s)
        poolsh.fill(b, 1, s)
        p:destroy(); s:destroy()
        local e = poolsh.event():record()
        local _ = { b, e, poolsh.pinned(64), poolsh.pageable(64), poolsh.malloc(64) }
      end
      collectgarbage(); collectgarbage()
    end)
    assert.is_true(ok)
    assert.same({}, warned)
    poolsh.sync()
  end)

  it("a buffer whose stream was destroyed is collected without error", function()
    local p = poolsh.pool {}
    do
      local s = poolsh.stream()
      local _ = p:alloc("1 MiB", s)
      s:destroy()
    end
    collectgarbage(); collectgarbage()
    poolsh.sync()
    assert.equal(0, p:stats().used)
    p:destroy()
  end)

  it("the default pool and stream survive collection", function()
    local id = poolsh.default_pool().id
    collectgarbage(); collectgarbage()
    assert.equal(id, poolsh.default_pool().id)
    assert.is_true(poolsh.default_stream().live)
  end)
end)
