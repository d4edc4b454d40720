-- poolsh.summary() and poolsh.peak(fn): memory and counts per pool and in
-- all, and peaks within a scope (docs/live.md).
local poolsh = require "poolsh"
local core = require "poolsh.core"
local H = require "helpers"
local live = poolsh.live
local MiB = H.MiB

before_each(function() live.color, live.width = false, 80 end)
after_each(function() live.width = nil end)

describe("poolsh.summary", function()
  it("counts allocations, reuses by rule, growths and releases by cause, with peaks", function()
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = 0 }
    local a = p:alloc("8 MiB", s)                  -- fresh: the first chunk
    local b = p:alloc("40 MiB", s)                 -- grows by a second chunk
    b:free()
    local c = p:alloc("40 MiB", s)                 -- reuses b's memory: stream order
    c:free()
    s:sync()                                       -- releases down to threshold 0
    local t = poolsh.summary()
    a:free(); s:sync()
    local row = t.pools[p.id]
    assert.equal(p.name, row.name)
    assert.equal(3, row.allocs)
    assert.equal(1, row.reuses["stream order"])
    local reused = 0
    for _, n in pairs(row.reuses) do reused = reused + n end
    assert.equal(1, reused)
    assert.equal(2, row.growths)
    assert.equal(1, row.releases.stream_sync)
    assert.equal(0, row.ooms)
    assert.equal(32 * MiB, row.reserved)
    assert.equal(64 * MiB, row.reserved_peak)
    assert.equal(8 * MiB, row.used)
    assert.equal(48 * MiB, row.used_peak)
    assert.equal(0, row.pending)
    assert.is_true(t.total.allocs >= 3)
    assert.is_true(t.total.reserved >= 32 * MiB)
    local report = tostring(t)
    assert.matches("\n  " .. p.name .. "%s+32.00 MiB%s+64.00 MiB%s+8.00 MiB%s+48.00 MiB%s+0 B", report)
    assert.matches("\n  " .. p.name .. "%s+3%s+1%s+2%s+1%s+0%s+0", report)
    assert.matches(p.name .. " reuses: stream order 1", report, 1, true)
    assert.matches(p.name .. " releases: stream_sync 1", report, 1, true)
    assert.matches("\n  total ", report, 1, true)
    for line in report:gmatch("[^\n]+") do assert.is_true(#line <= 80, line) end
    p:destroy()
  end)

  it("prints as its report where the REPL prints a value", function()
    local t = poolsh.summary()
    assert.equal(tostring(t), poolsh.repl.repr(t))
    assert.matches("^memory", tostring(t))
  end)

  it("counts an out-of-memory error and its retry", function()
    local p = poolsh.pool { max_size = "64 MiB" }
    local before = (core.counts().pools[p.id] or {}).ooms or 0
    assert.matches("out of memory", H.err(p.alloc, p, "128 MiB"))
    local row = poolsh.summary().pools[p.id]
    assert.equal(before + 1, row.ooms)
    assert.equal(1, row.retries)
    p:destroy()
  end)
end)

describe("poolsh.peak", function()
  it("gives the peak live bytes per pool and in all while fn ran, then fn's results", function()
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    local outside = p:alloc("1 MiB", s)
    local inner
    local peaks, x, y = poolsh.peak(function(k)
      local a = p:alloc("4 MiB", s)
      local b = p:alloc("8 MiB", s)
      a:free(); b:free()
      inner = poolsh.peak(function() p:alloc("2 MiB", s):free() end)
      return k, "done"
    end, 7)
    outside:free(); s:sync(); p:destroy()
    assert.equal(7, x)
    assert.equal("done", y)
    assert.equal(13 * MiB, peaks.pools[p.id])      -- the 1 MiB live before counts too
    assert.equal(13 * MiB, peaks.total)
    assert.equal(3 * MiB, inner.pools[p.id])
    assert.matches(p.name .. " 13.00 MiB, total 13.00 MiB", tostring(peaks), 1, true)
  end)

  it("raises fn's error after closing its scope, and refuses what is not a function", function()
    local ok, e = pcall(poolsh.peak, function() error("boom", 0) end)
    assert.is_false(ok)
    assert.equal("boom", e)
    assert.is_table(poolsh.peak(function() end))   -- the failed scope was popped
    assert.equal("bad argument #1 to 'peak' (function expected, got number)", H.err(poolsh.peak, 1))
  end)
end)
