-- Sizes, durations and formatting: poolsh.size, poolsh.duration, poolsh.fmt.
local poolsh = require "poolsh"
local H = require "helpers"

describe("poolsh.size", function()
  it("passes integers through", function()
    assert.equal(0, poolsh.size(0))
    assert.equal(4096, poolsh.size(4096))
    assert.equal(4096, poolsh.size(4096.0))
    assert.equal("integer", math.type(poolsh.size(4096.0)))
  end)

  it("parses plain byte strings", function()
    assert.equal(512, poolsh.size("512"))
    assert.equal(512, poolsh.size("512 B"))
    assert.equal(512, poolsh.size("512B"))
    assert.equal(512, poolsh.size("  512  "))
  end)

  it("treats KiB..PiB as powers of 1024", function()
    assert.equal(4096, poolsh.size("4 KiB"))
    assert.equal(3 * 2^20, poolsh.size("3 MiB"))
    assert.equal(2^30 + 2^29, poolsh.size("1.5 GiB"))
    assert.equal(2^40, poolsh.size("1 TiB"))
    assert.equal(2 * 2^50, poolsh.size("2 PiB"))
  end)

  it("treats KB..PB as powers of 1000", function()
    assert.equal(4000, poolsh.size("4 KB"))
    assert.equal(64000000, poolsh.size("64MB"))
    assert.equal(10^9, poolsh.size("1 GB"))
    assert.equal(10^12, poolsh.size("1 TB"))
    assert.equal(10^15, poolsh.size("1 PB"))
  end)

  it("accepts units with or without a space and in any case", function()
    assert.equal(poolsh.size("4 KiB"), poolsh.size("4KiB"))
    assert.equal(poolsh.size("64 MB"), poolsh.size("64MB"))
    assert.equal(4096, poolsh.size("4 kib"))
  end)

  it("returns integers", function()
    assert.equal("integer", math.type(poolsh.size("1.5 GiB")))
    assert.equal("integer", math.type(poolsh.size("0.5 KiB")))
    assert.equal(512, poolsh.size("0.5 KiB"))
  end)

  for _, bad in ipairs { "", "abc", "KiB", "4 XiB", "4 KiB extra", "1.2.3 MiB", "-4 KiB",
                         "0.3 B", "1.1 KiB", "9999 PiB", "4 K iB" } do
    it("rejects the bad string " .. string.format("%q", bad), function()
      local err = H.err(poolsh.size, bad)
      assert.equal(1, err:find("poolsh.size: ", 1, true), err)
      assert.truthy(err:find("'" .. bad .. "'", 1, true), err)   -- names what was given
    end)
  end

  it("rejects negative, fractional, non-finite and non-size values", function()
    assert.matches("negative", select(2, pcall(poolsh.size, -1)))
    assert.matches("integer", select(2, pcall(poolsh.size, 1.5)))
    assert.equal("poolsh.size: size too large", H.err(poolsh.size, math.huge))
    assert.equal("poolsh.size: size must be an integer number of bytes", H.err(poolsh.size, 0 / 0))
    assert.equal("poolsh.size: size too large", H.err(poolsh.size, 2^70))
    assert.matches("table", select(2, pcall(poolsh.size, {})))
    assert.equal("poolsh.size: size expected (integer or string), got boolean",
                 H.err(poolsh.size, true))
    assert.equal("poolsh.size: size expected (integer or string), got nil", H.err(poolsh.size, nil))
  end)
end)

describe("poolsh.duration", function()
  it("takes numbers as milliseconds", function()
    assert.equal(5, poolsh.duration(5))
    assert.equal(0.25, poolsh.duration(0.25))
    assert.equal(0, poolsh.duration(0))
  end)

  it("parses ns, us, ms, s and min", function()
    assert.near(1e-5, poolsh.duration("10 ns"), 1e-15)
    assert.near(0.2, poolsh.duration("200 us"), 1e-12)
    assert.equal(5, poolsh.duration("5 ms"))
    assert.equal(5, poolsh.duration("5ms"))
    assert.equal(5, poolsh.duration("5"))
    assert.equal(1000, poolsh.duration("1 s"))
    assert.equal(1500, poolsh.duration("1.5 s"))
    assert.equal(60000, poolsh.duration("1 min"))
  end)

  for _, bad in ipairs { "", "fast", "5 parsecs", "-5 ms", "5 ms later" } do
    it("rejects the bad string " .. string.format("%q", bad), function()
      local err = H.err(poolsh.duration, bad)
      assert.equal(1, err:find("poolsh.duration: ", 1, true), err)
      assert.truthy(err:find("'" .. bad .. "'", 1, true), err)   -- names what was given
    end)
  end

  it("rejects negative, infinite, NaN and non-duration values", function()
    for _, bad in ipairs { -1, math.huge, -math.huge, 0 / 0 } do
      assert.equal("poolsh.duration: duration must be >= 0 and finite", H.err(poolsh.duration, bad))
    end
    assert.equal("poolsh.duration: duration expected (ms or string), got table",
                 H.err(poolsh.duration, {}))
  end)
end)

describe("poolsh.fmt", function()
  it("formats bytes in binary units with two decimals", function()
    assert.equal("4.00 MiB", poolsh.fmt(4194304))
    assert.equal("1.00 KiB", poolsh.fmt(1024))
    assert.equal("1.50 GiB", poolsh.fmt(poolsh.size("1.5 GiB")))
    assert.equal("1.00 TiB", poolsh.fmt(2^40))
    assert.equal("1.00 PiB", poolsh.fmt(2^50))
  end)

  it("prints plain bytes below 1 KiB", function()
    assert.equal("0 B", poolsh.fmt(0))
    assert.equal("1 B", poolsh.fmt(1))
    assert.equal("1023 B", poolsh.fmt(1023))
  end)

  it("round-trips with poolsh.size", function()
    for _, s in ipairs { "4.00 MiB", "1.50 GiB", "2.00 KiB" } do
      assert.equal(s, poolsh.fmt(poolsh.size(s)))
    end
  end)

  it("rejects non-numbers", function()
    assert.matches("number expected", select(2, pcall(poolsh.fmt, "4 MiB")))
  end)

  it("takes whole floats and refuses a fraction, inf and nan: bytes are integers", function()
    assert.equal("512 B", poolsh.fmt(1024 / 2))     -- stats arithmetic can give whole floats
    assert.equal("-8.00 EiB", poolsh.fmt(math.mininteger))
    for _, x in ipairs { 1.5, -0.25, math.huge, 0 / 0 } do
      local ok, e = pcall(poolsh.fmt, x)
      assert.is_false(ok, tostring(x))
      assert.equal(("bad argument #1 to 'fmt' (bytes must be a whole number, got %s)"):format(x), e)
    end
  end)
end)

describe("one byte format", function()
  it("tostring of a buffer formats its size as poolsh.fmt does", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    for _, n in ipairs { 1, 1023, 1024, 4 * 1024 * 1024 + 1, 3 * 1024 * 1024 * 1024 // 2 } do
      local b = p:alloc(n, s)
      assert.matches("(" .. poolsh.fmt(n) .. " pool)", tostring(b), 1, true)
      b:free()
    end
    s:sync()
    p:destroy()
  end)
end)

describe("sizes in the C API", function()
  it("accept unit strings wherever a size is taken", function()
    local s, p = poolsh.stream(), poolsh.pool {}
    local b = p:alloc("4 KiB", s)
    assert.equal(4096, b.size)
    local c = p:alloc(4096.0, s)
    assert.equal(4096, c.size)
    b:free(); c:free(); s:sync()
    p:destroy()
  end)
end)

describe("fmt_duration", function()
  it("refuses a non-number with an argument error", function()
    local ok, e = pcall(poolsh.fmt_duration, "x")
    assert.is_false(ok)
    assert.equal("bad argument #1 to 'fmt_duration' (number expected, got string)", e)
  end)
end)
