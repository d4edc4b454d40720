--- require "poolsh" (lua/poolsh/init.lua): the C core's table extended in
-- place, its internal views in poolsh.core, and each C function held by
-- one loaded module, so an error names it the same way on every run.
local poolsh = require "poolsh"
local H = require "helpers"

-- The C functions each loaded module holds at its top level (where Lua
-- looks for a function's name when a call site gives none), as
-- {[function] = {"module.key", ...}}.
local function c_holders()
  local holders = {}
  for mod, t in pairs(package.loaded) do
    if type(mod) == "string" and type(t) == "table" and mod ~= "_G" then
      for k, v in next, t do
        if type(k) == "string" and type(v) == "function" and debug.getinfo(v, "S").what == "C" then
          holders[v] = holders[v] or {}
          table.insert(holders[v], mod .. "." .. k)
        end
      end
    end
  end
  return holders
end

describe("require 'poolsh'", function()
  it("returns the core's own table, extended in place, with no metatable", function()
    assert.is_nil(getmetatable(poolsh))
    assert.equal("function", type(rawget(poolsh, "pool")))       -- C, from the core
    assert.equal("function", type(rawget(poolsh, "size")))       -- Lua, added here
    assert.equal(poolsh.core, require "poolsh.core")
    assert.equal(poolsh, package.loaded.poolsh)
  end)

  it("keeps the core's internal views in poolsh.core, not beside the public functions", function()
    local core = poolsh.core
    for _, k in ipairs { "objects", "blocks", "pending", "recent", "counts", "releases",
                         "trace_start", "open_atomic", "shown_max", "_sim_truth" } do
      assert.is_not_nil(rawget(core, k), k)
      assert.is_nil(rawget(poolsh, k), k)
    end
    -- the core's live view and the Lua module poolsh.live do not clash
    assert.equal("function", type(rawget(core, "live")))
    assert.equal("table", type(poolsh.live))
    assert.equal("function", type(poolsh.live.show))
    -- the raw reset and sites views stay there; poolsh's are Lua's
    assert.are_not.equal(rawget(core, "reset"), poolsh.reset)
    assert.are_not.equal(rawget(core, "sites"), poolsh.sites)
    -- poolsh.core reads the public functions through (modules call them there)
    assert.equal(poolsh.backend, poolsh.core.backend)
    assert.is_nil(rawget(core, "backend"))
  end)

  it("has each of poolsh's C functions held by no other loaded module", function()
    local twice = {}
    for _, names in pairs(c_holders()) do
      local in_poolsh = false
      for _, n in ipairs(names) do
        if n:match("^poolsh%.[%w_]+$") then in_poolsh = true end
      end
      if in_poolsh and #names > 1 then
        table.sort(names)
        twice[#twice + 1] = table.concat(names, " = ")
      end
    end
    table.sort(twice)
    assert.are.same({}, twice)
    -- the check sees the core's functions at all
    assert.is_truthy(c_holders()[poolsh.fill])
  end)

  it("finds the views where the roof puts them, under stock Lua too", function()
    -- stock Lua: the C module holds its views in module.core (src/init.c)
    local script = [[
      package.path = "lua/?.lua;lua/?/init.lua"
      package.cpath = (os.getenv("POOLSH_BUILD") or "build") .. "/lib/?.so"
      local views = require "poolsh.core"
      local t = getmetatable(views).__index
      for _, k in ipairs { "objects", "blocks", "live", "pending", "recent", "stream_state",
                           "counts", "releases", "peak_push", "peak_pop", "_sim_truth",
                           "collected", "sites", "statement", "object_name", "object_names",
                           "names", "device_name", "open_atomic", "reset", "shown_max",
                           "trace_start", "trace_stop", "trace_clear", "trace_events",
                           "trace_recording", "trace_count", "trace_save", "trace_streaming" } do
        assert(rawget(views, k) ~= nil and rawget(t, k) == nil, k)
      end
      local poolsh = require "poolsh"
      assert(poolsh == t and poolsh.core == views and require("poolsh.core") == views)
      poolsh.trace.start()
      local s, p = poolsh.stream(), poolsh.pool {}
      local b = p:alloc("1 MiB", s)
      assert(#poolsh.leaks() == 1 and #poolsh.live.show_lines() > 0)
      b:free(); s:sync()
      poolsh.trace.stop()
      assert(#poolsh.trace.events() > 0 and tostring(poolsh.summary()):match("memory"))
      print(select(2, pcall(poolsh.fill, nil)))
    ]]
    local f = os.tmpname()
    local fh = assert(io.open(f, "w"))
    fh:write(script)
    fh:close()
    local out, err, code = H.sh("POOLSH_BACKEND=sim lua5.4 " .. H.quote(f))
    os.remove(f)
    assert.equal(0, code, err)
    assert.equal("bad argument #1 to 'poolsh.fill' (poolsh.Buffer expected, got nil)\n", out)
  end)

  it("names a function the same way on every run", function()
    local seen = {}
    for _ = 1, 6 do
      local out, err, code = H.poolsh_cmd("--backend=sim -e " .. H.quote(
        "print(select(2, pcall(poolsh.fill, nil)), select(2, pcall(poolsh.core.blocks, 1)))"))
      assert.equal(0, code, err)
      seen[out] = true
    end
    local list = {}
    for out in pairs(seen) do list[#list + 1] = out end
    assert.are.same({ "bad argument #1 to 'poolsh.fill' (poolsh.Buffer expected, got nil)\t"
                      .. "bad argument #1 to 'poolsh.core.blocks' (poolsh.Pool expected, got number)\n" },
                    list)
  end)
end)
