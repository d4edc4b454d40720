-- Allocation sites: Lua frames up to a depth, or the REPL's statement,
-- with per-site counts (poolsh.core.sites()).
local poolsh = require "poolsh"
local H = require "helpers"
local core = poolsh.core
local KiB = H.KiB

-- The entry of sites() whose text matches pattern.
local function site(pattern)
  for _, x in ipairs(core.sites()) do
    if x.site:match(pattern) then return x end
  end
end

local here = debug.getinfo(1, "S").short_src

describe("allocation sites", function()
  local s, p
  before_each(function() s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" } end)
  after_each(function()
    core.sources(true, 1)
    core.statement(nil)
    s:sync(); p:destroy(); s:destroy()
  end)

  local function helper(n) return p:alloc(n, s) end

  it("count, live, peak and total bytes per site", function()
    local line = debug.getinfo(1, "l").currentline + 2
    local bs = {}
    for i = 1, 3 do bs[i] = p:alloc(i * KiB, s) end
    local x = site(("^%s:%d$"):format(here:gsub("%p", "%%%0"), line))
    assert.is_table(x)
    assert.equal(3, x.count)
    assert.equal(6 * KiB, x.live_bytes)
    assert.equal(6 * KiB, x.peak_bytes)
    assert.equal(6 * KiB, x.total_bytes)
    bs[1]:free()
    x = site(("^%s:%d$"):format(here:gsub("%p", "%%%0"), line))
    assert.equal(5 * KiB, x.live_bytes)
    assert.equal(6 * KiB, x.peak_bytes)
    bs[2]:free(); bs[3]:free()
  end)

  it("depth 1 names the helper's line; depth 2 tells its callers apart", function()
    assert.same({ true, 2 }, { core.sources(true, 2) })
    local la = debug.getinfo(1, "l").currentline; local a = helper(100)
    local lb = debug.getinfo(1, "l").currentline; local b = helper(200)
    local hl = debug.getinfo(helper, "S").linedefined
    local name = here:gsub("%p", "%%%0")
    local xa = site(("^%s:%d < %s:%d$"):format(name, hl, name, la))
    local xb = site(("^%s:%d < %s:%d$"):format(name, hl, name, lb))
    assert.is_table(xa)
    assert.is_table(xb)
    assert.are_not.equal(xa.site, xb.site)
    core.sources(true, 1)
    local c = helper(300)
    assert.is_table(site(("^%s:%d$"):format(name, hl)))
    a:free(); b:free(); c:free()
  end)

  it("the REPL's statement is the site of what its chunk allocates", function()
    core.statement("x = p:alloc(4096, s)")
    local chunk = assert(load("local p, s = ... return p:alloc(4096, s)", "=stdin"))
    local b = chunk(p, s)
    core.statement(nil)
    local x = site("^x = p:alloc%(4096, s%)$")
    assert.is_table(x)
    assert.equal(4096, x.live_bytes)
    local live = core.live()
    local found
    for _, l in ipairs(live) do if l.buffer == b.id then found = l.src end end
    assert.equal("x = p:alloc(4096, s)", found)
    b:free()
  end)

  -- The site core.live() gives Buffer b.
  local function src_of(b)
    for _, l in ipairs(core.live()) do if l.buffer == b.id then return l.src end end
  end

  -- A chunk that allocates on its line n, with the same name each time.
  local function chunk_at(n)
    return assert(load(("\n"):rep(n - 1) .. "local p, s = ... return p:alloc(1024, s)", "=again"))
  end

  -- Sites are cached by the instruction's address, which a function loaded
  -- after another was collected may take again with other lines.
  local function reloaded(collect)
    for i = 1, 40 do
      local b = chunk_at(i)(p, s)
      local got = src_of(b)
      b:free()
      assert.equal("again:" .. i, got)
      collect()
    end
  end

  it("a function loaded after another was collected has its own lines", function()
    reloaded(function() collectgarbage("collect") end)
  end)

  it("the same in generational mode, with young collections", function()
    local old = collectgarbage("generational")
    local ok, err = pcall(reloaded, function() collectgarbage("step") end)
    collectgarbage(old)
    assert(ok, err)
  end)

  it("the same when the debug library took the cache's table out of the registry", function()
    local reg, taken = debug.getregistry(), {}
    for k, v in pairs(reg) do
      if math.type(k) == "integer" and type(v) == "table" and getmetatable(v)
         and getmetatable(v).__mode == "v" and type(rawget(v, 1)) == "userdata" then taken[k] = v end
    end
    assert.is_not_nil(next(taken), "no cache table in the registry")
    for k in pairs(taken) do reg[k] = {} end   -- the table is then collected
    taken = nil
    reloaded(function() collectgarbage("collect") end)
  end)

  it("a frame without line information is passed over, each time", function()
    local f = load(string.dump(function(pp, ss) return pp:alloc(1024, ss) end, true))
    local name = here:gsub("%p", "%%%0")
    for _ = 1, 3 do
      local line = debug.getinfo(1, "l").currentline; local b = f(p, s)
      assert.matches(("^%s:%d$"):format(name, line), src_of(b))
      b:free()
    end
  end)

  it("refuses a bad depth or statement", function()
    assert.matches("depth must be from 1 to 16", H.err(core.sources, true, 0))
    assert.matches("depth must be from 1 to 16", H.err(core.sources, true, 17))
    assert.matches("boolean expected", H.err(core.sources, 1))
    assert.matches("string expected", H.err(core.statement, {}))
  end)
end)
