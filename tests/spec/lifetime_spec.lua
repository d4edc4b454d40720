-- Object lifetimes: errors half-way, pools destroyed under live buffers,
-- <close>, finalizers that never raise.
local poolsh = require "poolsh"
local H = require "helpers"
local MiB = H.MiB

describe("lifetimes", function()
  it("objects made before an error survive it", function()
    H.drops_buffers("the buffer the error dropped is freed by its finalizer")
    local s, p = poolsh.stream(), poolsh.pool {}
    local b = p:alloc("1 MiB", s)
    local ok, err = pcall(function()
      local c = p:alloc("1 MiB", s)
      poolsh.fill(c, 1, s)
      error("half-way")
    end)
    assert.is_false(ok)
    assert.matches(": half%-way$", err)
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
    assert.equal(("\5"):rep(4), a:read(10, 4))     -- the fill queued before destroy
    poolsh.fill(b, 7, s)
    assert.is_true(poolsh.verify(b, 7, s))
    assert.same({ false, 0 }, { poolsh.verify(b, 5, s) })
    a:free()
    b:free(s)
    s:sync()
    assert.is_false(a.live or b.live)
  end)

  it("a pool only its buffer holds lives as long as the buffer, then is collected", function()
    local s = poolsh.stream()
    local b = poolsh.pool {}:alloc("1 MiB", s)
    local weak = setmetatable({ b.pool }, { __mode = "v" })
    local id = b.pool.id
    collectgarbage(); collectgarbage()
    -- the buffer keeps its pool (user value): not collected, not destroyed
    assert.equal(weak[1], b.pool)
    assert.is_true(b.pool.live)
    poolsh.fill(b, 3, s)
    assert.is_true(poolsh.verify(b, 3, s))
    b:free(); s:sync()
    b = nil
    collectgarbage(); collectgarbage()
    assert.is_nil(weak[1])
    for _, q in ipairs((poolsh.core.objects())) do assert.not_equal(id, q.id) end
  end)

  it("a freed buffer still holds its pool and stream; neither outlives the buffers", function()
    local p, s = poolsh.pool {}, poolsh.stream()
    local weak = setmetatable({ p, s }, { __mode = "v" })
    local b = p:alloc(4096, s)
    b:free(); s:sync()
    p, s = nil, nil
    collectgarbage(); collectgarbage()
    -- its metatable (one per pool and stream) holds both: no user values
    assert.equal(weak[1], b.pool)
    assert.equal(weak[2], b.stream)
    assert.is_true(b.pool.live and b.stream.live)
    assert.is_nil(debug.getuservalue(b, 1))
    b = nil
    collectgarbage(); collectgarbage(); collectgarbage()
    assert.is_nil(weak[1])
    assert.is_nil(weak[2])
  end)

  it("a pool does not keep the streams it allocated on alive", function()
    local p = poolsh.pool { release_threshold = "max" }
    local weak = setmetatable({}, { __mode = "v" })
    for i = 1, 3 do
      local s = poolsh.stream()
      weak[i] = s
      p:alloc(4096, s):free()
      s:sync()
    end
    collectgarbage(); collectgarbage(); collectgarbage()
    assert.is_nil(next(weak))
    local s = poolsh.stream()
    local b = p:alloc(4096, s)                     -- the pool still allocates
    assert.equal(p, b.pool)
    assert.equal(s, b.stream)
    b:free(); s:sync()
    p:destroy()
  end)

  it("one pool's alloc called on another gives that pool's buffer", function()
    local p, q, s = poolsh.pool {}, poolsh.pool {}, poolsh.stream()
    local b = p:alloc(64, s)
    local c = p.alloc(q, 64, s)
    assert.equal(p, b.pool)
    assert.equal(q, c.pool)
    b:free(); c:free(); s:sync()
    p:destroy(); q:destroy()
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
    H.drops_buffers("it tests the finalizers")
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
    poolsh.sync()
    -- An error in __gc, or a failed free, is a warning, not an error: run
    -- the same in the poolsh host, which turns warnings on, and read stderr.
    -- The last warn() shows that warnings would be seen.
    local out, err, code = H.poolsh_cmd("--backend=" .. H.backend() .. " -e " .. H.quote([[
      for _ = 1, 20 do
        local s, p = poolsh.stream(), poolsh.pool {}
        local b = p:alloc("1 MiB", s)
        poolsh.fill(b, 1, s)
        p:destroy(); s:destroy()
        local e = poolsh.event():record()
        local _ = { b, e, poolsh.pinned(64), poolsh.pageable(64), poolsh.malloc(64) }
      end
      collectgarbage(); collectgarbage()
      poolsh.sync()
      warn("finalizers done")]]))
    assert.equal(0, code, err)
    assert.equal("", out)
    assert.equal("Lua warning: finalizers done\n", err)
  end)

  it("a buffer whose stream was destroyed is collected without error", function()
    H.drops_buffers("it tests the finalizer")
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

describe("a Buffer's hold on its Pool and Stream", function()
  -- Since issue 20 a pool Buffer's metatable holds its Pool and Stream;
  -- getmetatable gives the shared Buffer metatable instead, so plain Lua
  -- cannot drop the holds (before: the Pool was collected while b lived,
  -- and b:free() read it after it was freed).
  it("is out of plain Lua's reach: getmetatable(b) gives the shared metatable", function()
    local p, s = poolsh.pool {}, poolsh.stream()
    local b = p:alloc(4096, s)
    local shared = getmetatable(b)
    assert.equal("poolsh.Buffer", shared.__name)
    local s2 = poolsh.stream()
    local b2 = p:alloc(64, s2)
    assert.equal(shared, getmetatable(b2))        -- one per pool and stream, not shown
    b2:free(); s2:sync(); s2:destroy()
    local weak = setmetatable({ p }, { __mode = "v" })
    pcall(function() shared[3] = nil end)         -- what held the pool (MT_POOL) before
    pcall(function() if type(shared[1]) == "table" then shared[1][3] = nil end end)
    p = nil
    for _ = 1, 4 do collectgarbage() end
    assert.is_not_nil(weak[1], "the pool was collected while its buffer lived")
    b:free(s); s:sync()
  end)

  it("survives debug.setmetatable(b, nil): a saved free and b.pool raise or work, never crash", function()
    local p, s = poolsh.pool {}, poolsh.stream()
    local b = p:alloc(4096, s)
    local free = b.free
    local index = getmetatable(b).__index
    debug.setmetatable(b, nil)
    assert.is_nil(index(b, "pool"))
    free(b)
    assert.is_false(index(b, "live"))
    s:sync(); p:destroy()
  end)

  it("is kept by a Pool's own alloc kept after the Pool is dropped", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local alloc, weak
    do
      local p = poolsh.pool {}
      alloc, weak = p.alloc, setmetatable({ p }, { __mode = "v" })
    end
    for _ = 1, 4 do collectgarbage() end
    local p = weak[1]
    assert.is_not_nil(p, "p.alloc kept, its pool collected")
    local b = alloc(p, 64, s1)
    local c = alloc(p, 64, s2)
    assert.equal(s1, b.stream); assert.equal(s2, c.stream)
    b:free(); c:free(); s1:sync(); s2:sync()
    alloc, p, b, c = nil, nil, nil, nil   -- freed buffers hold their pool too
    for _ = 1, 4 do collectgarbage() end
    assert.is_nil(weak[1], "the pool outlived its last alloc and buffers")
  end)
end)
