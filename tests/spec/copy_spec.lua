-- poolsh.copy: every direction, offsets and bytes, bounds.
local poolsh = require "poolsh"
local H = require "helpers"

local s, p
local function make(kind, n)
  if kind == "pool" then return p:alloc(n, s) end
  if kind == "registered" then return poolsh.register(poolsh.pageable(n)) end
  return poolsh[kind](n)
end

describe("poolsh.copy", function()
  setup(function() s, p = poolsh.stream(), poolsh.pool {} end)
  teardown(function() poolsh.sync() end)

  local kinds = { "pool", "malloc", "pinned", "pageable", "registered" }
  for _, dk in ipairs(kinds) do
    for _, sk in ipairs(kinds) do
      it(sk .. " -> " .. dk, function()
        local src, dst = make(sk, 4096), make(dk, 4096)
        local data = ("%s to %s "):format(sk, dk):rep(1000):sub(1, 4096)
        src:write(0, data)
        dst:write(0, ("\0"):rep(4096))
        poolsh.copy(dst, src, { stream = s })
        s:sync()
        local got = dst:read(0, 4096)
        assert.equal(4096, #got)
        assert.is_true(got == data, "contents differ: " .. got:sub(1, 40))
        src:free(); dst:free()
      end)
    end
  end

  it("copies without options on the buffer's stream", function()
    local a, b = make("pinned", 256), make("pool", 256)
    a:write(0, ("z"):rep(256))
    poolsh.copy(b, a)
    assert.equal(("z"):rep(256), b:read())
    a:free(); b:free()
  end)

  it("honours bytes, src_offset and dst_offset", function()
    local src, dst = make("pinned", 16), make("pool", 16)
    src:write(0, "0123456789abcdef")
    dst:write(0, ("."):rep(16))
    poolsh.copy(dst, src, { src_offset = 10, dst_offset = 2, bytes = 4, stream = s })
    s:sync()
    assert.equal("..abcd..........", dst:read())
    poolsh.copy(dst, src, { src_offset = "12", stream = s })   -- the rest: 4 bytes
    s:sync()
    assert.equal("cdefcd..........", dst:read())
    poolsh.copy(dst, src, { dst_offset = 12, bytes = 0, stream = s })
    s:sync()
    assert.equal("cdefcd..........", dst:read())
    src:free(); dst:free()
  end)

  it("a device-to-device copy lands in stream order", function()
    local a, b = make("pool", "1 MiB"), make("pool", "1 MiB")
    poolsh.fill(a, 0x5a, s)
    poolsh.copy(b, a, { stream = s })
    assert.is_true(poolsh.verify(b, 0x5a, s))
    a:free(); b:free()
  end)

  it("refuses out-of-bounds copies", function()
    local big, small = make("pinned", 100), make("pinned", 10)
    assert.matches("out of bounds", H.err(poolsh.copy, small, big))
    assert.matches("out of bounds", H.err(poolsh.copy, big, small, { bytes = 11 }))
    assert.matches("out of bounds", H.err(poolsh.copy, big, small, { src_offset = 5, bytes = 6 }))
    assert.matches("out of bounds", H.err(poolsh.copy, small, big, { dst_offset = 5, bytes = 6 }))
    assert.matches("beyond the end", H.err(poolsh.copy, big, small, { src_offset = 11 }))
    assert.matches("beyond the end", H.err(poolsh.copy, small, big, { dst_offset = 11, bytes = 0 }))
    assert.matches("negative", H.err(poolsh.copy, big, small, { bytes = -1 }))
    -- nothing was copied: small is intact, and copying still works
    small:write(0, "0123456789")
    poolsh.copy(big, small, { bytes = 10 })
    poolsh.sync()
    assert.equal("0123456789", big:read(0, 10))
    big:free(); small:free()
  end)

  it("refuses unknown options and bad arguments", function()
    local a, b = make("pinned", 8), make("pinned", 8)
    assert.matches("unknown option 'size'", H.err(poolsh.copy, a, b, { size = 8 }))
    assert.matches("poolsh.Stream expected", H.err(poolsh.copy, a, b, { stream = p }))
    assert.matches("poolsh.Buffer expected", H.err(poolsh.copy, a, "b"))
    assert.matches("poolsh.Buffer expected", H.err(poolsh.copy, nil, b))
    b:free()
    assert.matches("freed poolsh.Buffer", H.err(poolsh.copy, a, b))
    a:free()
  end)
end)

describe("poolsh.copy within one buffer", function()
  for _, kind in ipairs { "pool", "pinned" } do
    it("refuses overlapping ranges (" .. kind .. ")", function()
      local b = kind == "pool" and poolsh.pool {}:alloc(1000) or poolsh.pinned(1000)
      b:write(0, ("x"):rep(1000))
      local e = H.err(poolsh.copy, b, b, { dst_offset = 1, bytes = 500 })
      assert.equal("poolsh.copy: source and destination overlap (500 bytes from offset 0 of b"
                   .. b.id .. " to offset 1 of b" .. b.id .. "): copy through a second buffer", e)
      assert.matches("overlap", H.err(poolsh.copy, b, b, { src_offset = 499, bytes = 501 }))
      -- ranges that only touch are fine
      b:write(0, ("a"):rep(500))
      poolsh.copy(b, b, { dst_offset = 500, bytes = 500 })
      poolsh.sync()
      assert.equal(("a"):rep(1000), b:read())
      b:free()
    end)
  end
end)

describe("poolsh.copy and a size parser written in Lua", function()
  local units = require "poolsh.units"
  after_each(function() poolsh.set_parsers { size = units.size, duration = units.duration } end)

  it("raises when the parser frees a buffer being copied", function()
    local p = poolsh.pool {}
    local src, dst = p:alloc(100), p:alloc(100)
    poolsh.set_parsers { size = function(v) src:free(); return units.size(v) end,
                         duration = units.duration }
    assert.equal("attempt to use a freed poolsh.Buffer (b" .. src.id .. ")",
                 H.err(poolsh.copy, dst, src, { bytes = "10" }))
    dst:free(); p:destroy()
  end)
end)
