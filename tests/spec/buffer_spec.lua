-- poolsh.Buffer: the four kinds, fields, read/write, free, <close>, GC.
local poolsh = require "poolsh"
local H = require "helpers"
local MiB = H.MiB

local function makers()
  local s, p = poolsh.stream(), poolsh.pool {}
  return {
    pool = function(n) return p:alloc(n, s) end,
    malloc = poolsh.malloc,
    pinned = poolsh.pinned,
    pageable = poolsh.pageable,
  }, s, p
end

describe("buffers of every kind", function()
  for _, kind in ipairs { "pool", "malloc", "pinned", "pageable" } do
    describe(kind, function()
      it("has its fields", function()
        local m = makers()
        local b = m[kind]("64 KiB")
        assert.equal(kind, b.kind)
        assert.equal(65536, b.size)
        assert.equal(65536, #b)
        assert.equal("integer", math.type(b.addr))
        assert.is_true(b.addr ~= 0)
        assert.is_true(b.live)
        assert.equal("b" .. b.id, b.name)
        assert.matches("^poolsh.Buffer b%d+ %(64.00 KiB " .. kind .. "%)$", tostring(b))
        if kind ~= "pool" then
          assert.is_nil(b.pool)
          assert.is_nil(b.stream)
        end
        b:free()
      end)

      it("writes and reads back bytes", function()
        local m = makers()
        local b = m[kind]("4 KiB")
        assert.equal(b, b:write(0, "hello"))
        b:write(4090, "\0\1\2\255\254\253")
        assert.equal("hello", b:read(0, 5))
        assert.equal("\0\1\2\255\254\253", b:read(4090, 6))
        assert.equal("\0\1\2\255\254\253", b:read(4090))
        assert.equal(4096, #b:read())
        assert.equal("", b:read(4096))
        assert.equal("", b:read(10, 0))
        b:free()
      end)

      it("refuses reads and writes out of bounds", function()
        local m = makers()
        local b = m[kind](100)
        assert.matches("out of bounds", H.err(b.read, b, 90, 11))
        assert.matches("beyond the end", H.err(b.read, b, 101))
        assert.matches("out of bounds", H.err(b.write, b, 98, "abc"))
        assert.matches("beyond the end", H.err(b.write, b, 101, ""))
        assert.matches("negative", H.err(b.read, b, -1, 1))
        b:write(97, "abc")
        assert.equal("abc", b:read(97, 3))
        b:free()
      end)

      it("free makes it dead; use after free raises", function()
        local m = makers()
        local b = m[kind](1000)
        b:free()
        assert.is_false(b.live)
        assert.matches("freed", tostring(b))
        assert.matches("freed poolsh.Buffer", H.err(b.read, b, 0, 1))
        assert.matches("freed poolsh.Buffer", H.err(b.write, b, 0, "x"))
        assert.matches("freed poolsh.Buffer", H.err(b.free, b))
      end)

      it("is a to-be-closed value", function()
        local m = makers()
        local kept
        do
          local b <close> = m[kind]("1 MiB")
          kept = b
          assert.is_true(b.live)
        end
        assert.is_false(kept.live)
      end)
    end)
  end

  it("non-pool buffers refuse a free stream", function()
    local b = poolsh.malloc(16)
    assert.matches("only pool buffers", H.err(b.free, b, poolsh.stream()))
    assert.is_true(b.live)
    b:free()
  end)

  it("plain allocations refuse size 0", function()
    for _, f in ipairs { poolsh.malloc, poolsh.pinned, poolsh.pageable } do
      assert.matches("at least 1 byte", H.err(f, 0))
    end
  end)
end)

describe("pool buffers", function()
  it("free on the allocating stream by default, used drops at once", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local b = p:alloc("4 MiB", s)
    assert.equal(4 * MiB, p:stats().used)
    b:free()
    assert.equal(0, p:stats().used)
    s:sync()
    p:destroy()
  end)

  it("free on another stream", function()
    local s, t, p = poolsh.stream(), poolsh.stream(), poolsh.pool {}
    local b = p:alloc("4 MiB", s)
    b:free(t)
    assert.is_false(b.live)
    assert.equal(0, p:stats().used)
    t:sync()
    p:destroy()
  end)

  it("free refuses a non-stream", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local b = p:alloc(64, s)
    assert.matches("poolsh.Stream expected", H.err(b.free, b, p))
    assert.is_true(b.live)
    b:free()
    p:destroy()
  end)

  it("after its stream is destroyed, free needs a stream", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local b = p:alloc(64, s)
    s:destroy()
    assert.matches("was destroyed: pass a stream", H.err(b.free, b))
    assert.is_true(b.live)
    local t = poolsh.stream()
    b:free(t)
    t:sync()
    assert.equal(0, p:stats().used)
    p:destroy()
  end)

  it("a <close> pool buffer frees and the pool's used drops", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    do
      local b <close> = p:alloc("2 MiB", s)
      assert.equal(2 * MiB, p:stats().used)
    end
    assert.equal(0, p:stats().used)
    p:destroy()
  end)

  it("a collected buffer is freed: used drops after collectgarbage()", function()
    H.drops_buffers("it tests the finalizer")
    local s, p = poolsh.stream(), poolsh.pool {}
    do
      local b = p:alloc("8 MiB", s)
      assert.equal(8 * MiB, p:stats().used)
    end
    collectgarbage()
    collectgarbage()
    assert.equal(0, p:stats().used)
    s:sync()
    p:destroy()
  end)

  it("collected buffers of every kind give their memory back", function()
    H.drops_buffers("it tests the finalizers")
    collectgarbage(); collectgarbage()
    poolsh.sync()
    local before = poolsh.device().free
    local mid
    do
      local m = makers()
      for _ = 1, 4 do m.malloc("8 MiB") end
      m.pinned("1 MiB"); m.pageable("1 MiB")
      mid = poolsh.device().free
      assert.is_true(mid <= before - 32 * MiB, "malloc takes device memory")
    end
    collectgarbage(); collectgarbage()
    poolsh.sync()
    assert.is_true(poolsh.device().free >= mid + 32 * MiB, "collected malloc buffers are freed")
  end)
end)

describe("poolsh.pinned", function()
  it("takes portable, mapped and write_combined", function()
    local b = poolsh.pinned("4 KiB", { portable = true, mapped = true, write_combined = false })
    assert.equal("pinned", b.kind)
    b:write(0, "x")
    assert.equal("x", b:read(0, 1))
    b:free()
  end)

  it("refuses unknown options", function()
    assert.matches("unknown option 'cached'", H.err(poolsh.pinned, 16, { cached = true }))
    assert.matches("boolean", H.err(poolsh.pinned, 16, { mapped = 1 }))
  end)
end)

describe("poolsh.register", function()
  it("registers and unregisters pageable memory", function()
    local b = poolsh.pageable("64 KiB")
    assert.is_false(b.registered)
    assert.equal(b, poolsh.register(b))
    assert.is_true(b.registered)
    assert.matches("already registered", H.err(poolsh.register, b))
    assert.equal(b, poolsh.unregister(b))
    assert.is_false(b.registered)
    assert.matches("not registered", H.err(poolsh.unregister, b))
    b:free()
  end)

  it("refuses other kinds", function()
    local b = poolsh.pinned(16)
    assert.matches("pageable buffer expected", H.err(poolsh.register, b))
    b:free()
  end)

  it("a registered buffer can be freed directly", function()
    local b = poolsh.register(poolsh.pageable("64 KiB"))
    b:free()
    assert.is_false(b.live)
  end)
end)

describe("buffer fields and a size parser written in Lua", function()
  local units = require "poolsh.units"
  after_each(function() poolsh.set_parsers { size = units.size, duration = units.duration } end)

  it("read nil for keys that are not strings", function()
    local b = poolsh.malloc(16)
    assert.is_nil(b[true])
    assert.is_nil(b[{}])
    b:free()
  end)

  it("read and write raise when the parser frees the buffer", function()
    local p = poolsh.pool {}
    local b
    poolsh.set_parsers { size = function(v) b:free(); return units.size(v) end,
                         duration = units.duration }
    b = p:alloc(100)
    assert.equal("attempt to use a freed poolsh.Buffer (b" .. b.id .. ")", H.err(b.read, b, "0"))
    b = p:alloc(100)
    assert.equal("attempt to use a freed poolsh.Buffer (b" .. b.id .. ")",
                 H.err(b.write, b, "0", "x"))
    p:destroy()
  end)
end)

describe("the ledger's record of each buffer", function()
  -- Each Buffer keeps its ledger slot (and each slot its place in the
  -- address map): frees find their record without a search, so a slot
  -- or map place left stale by another buffer's free would show here.
  local function live_ids()
    local ids = {}
    for _, r in ipairs(poolsh.core.live()) do ids[r.buffer] = true end
    return ids
  end

  it("stays exact when many buffers of every kind are freed in any order", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local makers = {
      function(n) return p:alloc(n, s) end, poolsh.malloc, poolsh.pinned, poolsh.pageable,
    }
    local held, freed_at, seed, reused = {}, {}, 12345, 0
    local function rand(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n + 1 end
    for round = 1, 6 do
      for i = 1, 700 do
        local kind = (i % 7 == 0) and rand(4) or 1
        local b = makers[kind](kind == 1 and 4096 or rand(64) * 512)
        if kind == 1 and freed_at[b.addr] then   -- a pool block freed there: its memory
          assert.equal(freed_at[b.addr], b.reused_from)
          reused = reused + 1
        end
        if kind == 1 then freed_at[b.addr] = nil end
        held[#held + 1] = b
      end
      for _ = 1, 500 + round * 20 do
        local b = table.remove(held, rand(#held))
        if b.kind == "pool" then
          b:free(rand(2) == 1 and s or nil)
          freed_at[b.addr] = b.id
        else
          b:free()
        end
      end
      local ids = live_ids()
      local n = 0
      for _ in pairs(ids) do n = n + 1 end
      assert.equal(#held, n)
      for _, b in ipairs(held) do assert.is_true(ids[b.id], "b" .. b.id .. " not live") end
    end
    assert.is_true(reused > 1000)
    for _, b in ipairs(held) do b:free() end
    s:sync()
    assert.same({}, live_ids())
    assert.equal(0, p:stats().used)
    p:destroy()
  end)
end)
