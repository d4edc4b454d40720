-- Stats as people read them: p:stats() and the allocators' stats() print
-- sizes as sizes and counts as counts; their values stay numbers.
local H = require "helpers"
local poolsh = H.poolsh
local stats = require "poolsh.stats"
local repl = require "poolsh.repl"
local MiB = 1024 * 1024

describe("stats tables", function()
  before_each(function() poolsh.live.width = 80 end)
  after_each(function() poolsh.live.width = nil end)

  it("p:stats() prints sizes as sizes on a few lines, and keeps its numbers", function()
    local s = poolsh.stream()
    local p <close> = poolsh.pool { release_threshold = "max" }
    local b = p:alloc("128 MiB", s)
    local st = p:stats()
    assert.equal(128 * MiB, st.reserved_high)        -- numbers, for arithmetic
    assert.equal(128 * MiB + 1, st.reserved + 1)
    assert.equal("integer", math.type(st.pending_count))
    local text = tostring(st)
    assert.matches("reserved_high = 128.00 MiB", text, 1, true)
    assert.matches("used = 128.00 MiB", text, 1, true)
    assert.matches("pending_count = 0", text, 1, true)   -- a count stays a count
    assert.matches("free_estimated = ", text, 1, true)
    assert.is_nil(text:find("134217728", 1, true))
    local n = 0
    for l in text:gmatch("[^\n]+") do
      n = n + 1
      assert.is_true(#l <= 80, l)
    end
    assert.is_true(n >= 2 and n <= 4, text)
    assert.equal(text, repl.repr(st))                -- what the prompt shows
    assert.equal("poolsh.Stats", getmetatable(p:stats { estimates = false }).__name)
    b:free(); s:sync(); s:destroy()
  end)

  it("the allocators' stats() read the same way, from one list of byte counters", function()
    local s = poolsh.stream()
    for _, name in ipairs { "caching", "cupy", "pool", "pytorch" } do
      local A = require("poolsh.allocators." .. name)
      local a = A.new()
      local b = a:alloc(3 * MiB, s)
      local st = a:stats()
      assert.equal(stats.meta, getmetatable(st), name)
      assert.equal("integer", math.type(st.reserved), name)
      local text = tostring(st)
      assert.matches("reserved = %d+%.%d%d [KMG]?i?B", text)
      for k, v in pairs(st) do
        if stats.BYTES[k] then assert.matches(k .. " = " .. poolsh.fmt(v), text, 1, true)
        elseif math.type(v) == "integer" then assert.matches(k .. " = " .. v, text, 1, true) end
      end
      a:free(b, s)
      poolsh.sync()
      if a.empty_cache then a:empty_cache() end
      if a.close then a:close() end
    end
    poolsh.sync()
    s:destroy()
  end)
end)
