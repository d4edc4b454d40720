-- The scenarios about reusing freed memory: fragmentation,
-- caching_allocator, use_after_free and pool_per_stream (docs/scenarios.md).
-- The caching allocator they build on: caching_allocator_spec.lua.
local H = require "helpers"
local poolsh = H.poolsh
local scenario = require "poolsh.scenario"

-- Runs scenario `name` in this process; its result and narration.
local function run(name)
  local out = {}
  local res = scenario.run(scenario.load(name), function(s) out[#out + 1] = s end)
  return res, table.concat(out)
end

local function has(text, line) assert.truthy(text:find(line, 1, true), "missing: " .. line .. "\n" .. text) end

describe("scenario", function()
  it("fragmentation: a request larger than every hole maps a new chunk; the map shows the holes", function()
    local res, out = run("fragmentation")
    assert.is_true(res.ok, out)
    has(out, " 4. allocate ")
    has(out, "notice: no hole is large enough: the pool maps a new chunk")
    has(out, "free in 8 holes, none of")
    assert.truthy(out:find("%[%.#%.#%.#%.#"), out)   -- the map's bar: free, live, free, live
  end)

  it("caching_allocator: freed tensors stay reserved; the allocation after empty_cache() is slower", function()
    local res, out = run("caching_allocator")
    assert.is_true(res.ok, out)
    has(out, "reserved 54.00 MiB in 4 segment(s), allocated 0 B")
    has(out, "reserved 12.00 MiB in 1 segment(s), allocated 4.00 MiB")
    local miss, hit = out:match("(%d+%.%d+) ms, against (%d+%.%d+) ms for the hit")
    assert.truthy(miss and tonumber(miss) > tonumber(hit), out)
  end)

  it("use_after_free: verify finds the late write, and passes after either fix", function()
    local res, out = run("use_after_free")
    assert.is_true(res.ok, out)
    has(out, "verify: false, first wrong byte at offset 0 holds 0x22")
    local _, passes = out:gsub("verify: true", "")
    assert.equal(2, passes, out)
    has(out, "b took other memory (")
  end)

  it("pool_per_stream: the shared pool reserves at most half of the four pools", function()
    local res, out = run("pool_per_stream")
    assert.is_true(res.ok, out)
    local shared, sum = out:match("shared (%d+%.%d+) MiB against (%d+%.%d+) MiB for 4 pools")
    assert.truthy(shared and 2 * tonumber(shared) <= tonumber(sum), out)
    assert.truthy(tonumber(out:match("; (%d+) of 24 allocations reused")) >= 1, out)
  end)

  it("a scenario that expects verify to pass on the corrupted buffer fails, showing false", function()
    local path = os.tmpname() .. ".lua"
    local f = assert(io.open(path, "w"))
    f:write [[
local poolsh = require "poolsh"
return { name = "uaf_wrong", run = function(ctx)
  local p = poolsh.pool { release_threshold = "max" }
  local s1, s2 = poolsh.stream(), poolsh.stream()
  local a = p:alloc("1 MiB", s1)
  s2:wait(s1:record()); poolsh.spin(s2, "10 ms"); poolsh.fill(a, 0x22, s2)
  a:free()
  local b = p:alloc("1 MiB", s1)
  poolsh.fill(b, 0x11, s1)
  s2:sync()
  local ok = poolsh.verify(b, 0x11, s1)
  b:free(); poolsh.sync()
  ctx.step("claim b holds 0x11")
  ctx.expect.equal(ok, true, "verify")
end }
]]
    f:close()
    local res, out = run(path)
    os.remove(path)
    assert.is_false(res.ok)
    assert.equal("1. claim b holds 0x11", res.step)
    has(out, "verify: expected true, observed false")
  end)
end)
