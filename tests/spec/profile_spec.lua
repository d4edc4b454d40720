-- Device profiles: reading, checking, applying with --profile and
-- POOLSH_PROFILE, the shipped profiles and finding them by GPU name.
local H = require "helpers"
local profile = require "poolsh.profile"
local q = H.quote

local function tmpfile(text)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

-- The sim's built-in profile, read from a fresh poolsh process.
local function sim_defaults()
  local out, err, code = H.poolsh_cmd("--backend=sim -E -e " ..
    q("for k, v in pairs(poolsh.sim.profile()) do print(k, v) end"))
  assert.equal(0, code, err)
  local t = {}
  for k, v in out:gmatch("(%S+)\t(%S+)\n") do t[k] = tonumber(v) end
  return t
end

-- Runs poolsh on the sim with extra options and a statement.
local function sim(opts, stat, env)
  return H.poolsh_cmd("--backend=sim " .. opts .. " -e " .. q(stat), env)
end

describe("poolsh.profile", function()
  local files = {}
  local function file(text)
    files[#files + 1] = tmpfile(text)
    return files[#files]
  end
  after_each(function()
    for _, f in ipairs(files) do os.remove(f) end
    files = {}
  end)

  describe("shipped profiles", function()
    it("live in dir(), beside the module", function()
      assert.matches("poolsh/profiles$", profile.dir())
      local h200 = profile.read(profile.dir() .. "/h200.lua")
      local h100 = profile.read(profile.dir() .. "/h100.lua")
      assert.equal("NVIDIA H200", h200.gpu)
      assert.equal("NVIDIA H100 80GB HBM3", h100.gpu)
      assert.equal(150109880320, h200.values.memory)
      assert.equal(85017493504, h100.values.memory)
      for _, t in ipairs { h100, h200 } do
        assert.equal("580.159.04", t.driver)
        assert.equal(13000, t.runtime)
        assert.matches("^poolsh calibrate", t.notes.method)
      end
    end)

    it("are calibrations of every option, with the facts the sim models", function()
      local def = sim_defaults()
      for _, name in ipairs { "h100.lua", "h200.lua" } do
        local t = profile.read(profile.dir() .. "/" .. name)
        for k in pairs(def) do
          if k ~= "report_rules" then assert.is_number(t.values[k], name .. ": " .. k) end
        end
        for k in pairs(t.values) do assert.is_not_nil(def[k], name .. ": " .. k) end
        assert.same(profile.sim_facts, t.facts)
      end
    end)

    it("for_gpu finds a profile by exact name, then by model token", function()
      local dir = profile.dir()
      assert.equal(dir .. "/h100.lua", profile.for_gpu("NVIDIA H100 80GB HBM3"))
      assert.equal(dir .. "/h200.lua", profile.for_gpu("NVIDIA H200"))
      assert.equal(dir .. "/h100.lua", profile.for_gpu("NVIDIA H100 PCIe"))
      assert.equal(dir .. "/h200.lua", profile.for_gpu("NVIDIA H200 NVL"))
      assert.is_nil(profile.for_gpu("Tesla V100-SXM2-16GB"))
      assert.is_nil(profile.for_gpu("poolsh sim (no model)"))
      assert.is_nil(profile.for_gpu(nil))
    end)
  end)

  describe("read", function()
    it("returns the table of a good file", function()
      local f = file('return { gpu = "X1", runtime = 12040, values = { sync_ns = 400 }, facts = { placement = "best fit" } }')
      local t = profile.read(f)
      assert.equal("X1", t.gpu)
      assert.equal(400, t.values.sync_ns)
    end)

    it("runs the file as data: no globals", function()
      local f = file('return { gpu = os.getenv("HOME") }')
      local e = H.err(profile.read, f)
      assert.matches("poolsh.profile: " .. f:gsub("%p", "%%%0"), e)
      assert.matches("os", e)
    end)

    it("names the file for a missing file, a syntax error, a non-table, a runtime error", function()
      local e = H.err(profile.read, "/nonexistent/dir/p.lua")
      assert.equal("poolsh.profile: cannot open /nonexistent/dir/p.lua: No such file or directory", e)
      local f = file("return { gpu = ")
      e = H.err(profile.read, f)
      assert.matches("^poolsh.profile: " .. f:gsub("%p", "%%%0") .. ":1:", e)
      f = file("return 42")
      assert.equal("poolsh.profile: " .. f .. ": a profile must return a table, got number",
                   H.err(profile.read, f))
      f = file("-- a profile\nreturn { gpu = 'X', values = { memory = 2^30 }, notes = t.a.b }")
      assert.equal("poolsh.profile: " .. f .. ":2: 't' is not a value a data file may hold "
                   .. "(tables, strings, numbers, booleans, math.huge)", H.err(profile.read, f))
      assert.error(function() profile.read(42) end,
                   "poolsh.profile.read: file name expected, got number")
    end)

    it("parses the file as data and never runs it: statements are refused", function()
      local f = file("while true do end")
      assert.equal("poolsh.profile: " .. f .. ":1: a data file starts with 'return' and its value",
                   H.err(profile.read, f))
    end)

    it("reads what a hand-written profile may hold: comments, arithmetic on numbers, escapes", function()
      local f = file("-- my GPU\n--[[ measured\n by hand ]]\nreturn {\n  gpu = 'My \\\"GPU\\\"', runtime = 0x3000;\n"
        .. "  values = { memory = 80 * 2^30, bw_d2d = 1.5e3, api_ns = (4000 - 100) // 3 },\n"
        .. "  faults = { { op = 'sleep', call = 1, error = 'cudaErrorNotReady', count = 1/0 } },\n"
        .. "  notes = { [\"memory\"] = [[by\nhand]], api_ns = \"\\x41\\65\\u{42}\" },\n}\n")
      local t = profile.read(f)
      assert.equal('My "GPU"', t.gpu)
      assert.equal(0x3000, t.runtime)
      assert.equal(80 * 2^30, t.values.memory)
      assert.equal(1500, t.values.bw_d2d)
      assert.equal(1300, t.values.api_ns)
      assert.equal(math.huge, t.faults[1].count)
      assert.same({ memory = "by\nhand", api_ns = "AAB" }, t.notes)
    end)

    it("refuses unknown keys and wrong types, naming file and key", function()
      local cases = {
        { 'return { colour = 1 }', "unknown key 'colour'" },
        { 'return { gpu = 1 }', ": gpu: string expected, got number" },
        { 'return { runtime = 1.5 }', ": runtime: integer expected" },
        { 'return { values = 3 }', ": values: table expected, got number" },
        { 'return { values = { memory = -1 } }', ": values.memory: must not be negative, got %-1" },
        { 'return { values = { sync_ns = "fast" } }', ": values.sync_ns: number expected, got string" },
        { 'return { values = { memory = 1.5 } }', ": values.memory: must be a whole number of bytes" },
        { 'return { values = { release_on_stream_sync = 2 } }', ": values.release_on_stream_sync: must be 0 or 1" },
        { 'return { values = { bw_d2d = 0 } }', ": values.bw_d2d: must be > 0" },
        { 'return { values = { api_ns = 0/0 } }', ": values.api_ns: must be finite" },
        { 'return { facts = { colour = "red" } }', ": facts.colour: unknown fact" },
        { 'return { facts = { placement = true } }', ": facts.placement: string expected, got boolean" },
        { 'return { notes = { memory = 1 } }', ": notes.memory: string expected, got number" },
        { 'return { extra = { x_ns = "1" } }', ": extra.x_ns: number expected, got string" },
      }
      for _, c in ipairs(cases) do
        local f = file(c[1])
        local e = H.err(profile.read, f)
        assert.matches("^poolsh.profile: " .. f:gsub("%p", "%%%0"), e)
        assert.matches(c[2], e)
      end
    end)

    it("refuses a name the sim does not have", function()
      local f = file('return { values = { warp_ns = 1 } }')
      local _, err, code = sim("", "require('poolsh.profile').read(" .. ("%q"):format(f) .. ")")
      assert.equal(1, code)
      assert.matches("poolsh.profile: " .. f:gsub("%p", "%%%0") .. ": values.warp_ns: unknown sim option", err)
    end)

    it("format writes a file that reads back the same", function()
      local t = { gpu = "G 1", driver = "1.2", runtime = 13000, date = "2026-11-23", cc = "9.0",
                  values = { memory = 1024, bw_d2d = 1.5, release_on_cuda_free = 1 },
                  facts = { placement = "first fit", coalescing = false },
                  notes = { memory = 'a "quoted"\nnote' }, extra = { trim_ns = 40 } }
      local text = profile.format(t)
      assert.matches("memory = 1024,  %-%- bytes\n", text)
      assert.matches("bw_d2d = 1.5,  %-%- GB/s", text)
      assert.matches("trim_ns = 40,  %-%- ns\n", text)
      assert.same(t, profile.read(file(text)))
    end)
  end)

  describe("--profile and POOLSH_PROFILE", function()
    local changed = 'return { gpu = "Test GPU", driver = "1.0", runtime = 12000, date = "2026-01-02", ' ..
                    'values = { pool_granularity = 2097152, release_on_stream_sync = 0, memory = 17179869184 } }'
    local show = "local i = poolsh.sim.profile_info(); local o = poolsh.sim.profile(); " ..
                 "local p = poolsh.pool{}; local b = p:alloc(1); " ..
                 "print(('%d\t%d'):format(o.pool_granularity, o.release_on_stream_sync), poolsh.device().total, " ..
                 "p:stats().reserved, i and i.gpu, i and i.path, i and i.runtime)"

    it("applies every value before anything runs, and profile_info names it", function()
      local f = file(changed)
      local out, err, code = sim("--profile=" .. q(f), show)
      assert.equal(0, code, err)
      assert.equal(("2097152\t0\t17179869184\t2097152\tTest GPU\t%s\t12000\n"):format(f), out)
      out, err, code = sim("--profile " .. q(f), show)
      assert.equal(0, code, err)
      assert.matches("^2097152", out)
    end)

    it("the built-in defaults have no profile_info", function()
      local out, _, code = sim("-E", "print(poolsh.sim.profile_info())")
      assert.equal(0, code)
      assert.equal("nil\n", out)
    end)

    it("POOLSH_PROFILE applies; -E ignores it; --profile wins", function()
      local f, g = file(changed), file('return { gpu = "Other", values = { pool_granularity = 4194304 } }')
      local out, err, code = sim("", "print(('%d'):format(poolsh.sim.profile().pool_granularity))", "POOLSH_PROFILE=" .. q(f))
      assert.equal(0, code, err)
      assert.equal("2097152\n", out)
      out = sim("-E", "print(('%d'):format(poolsh.sim.profile().pool_granularity))", "POOLSH_PROFILE=" .. q(f))
      assert.equal("33554432\n", out)
      out = sim("--profile=" .. q(g), "print(('%d'):format(poolsh.sim.profile().pool_granularity))", "POOLSH_PROFILE=" .. q(f))
      assert.equal("4194304\n", out)
    end)

    it("a profile written before the sim had an option feeds it from extra; values win", function()
      local f = file('return { extra = { host_register_ns = 58900, trim_ns = 10900, spin_20ms_ns = 2e7 }, ' ..
                     'values = { trim_ns = 5000 } }')
      local out, err, code = sim("--profile=" .. q(f), "local o = poolsh.sim.profile(); " ..
                                 "print(('%d %d'):format(o.host_register_ns, o.trim_ns))")
      assert.equal(0, code, err)
      assert.equal("58900 5000\n", out)
    end)

    it("a shipped profile loads without warnings", function()
      local _, err, code = sim("--profile=" .. q(profile.dir() .. "/h100.lua"),
                               "assert(poolsh.device().total == 85017493504)")
      assert.equal(0, code, err)
      assert.equal("", err)
    end)

    it("a bad profile stops poolsh with exit 1, naming file and key", function()
      local f = file('return { values = { memory = -5 } }')
      local _, err, code = sim("--profile=" .. q(f), "print('ran')")
      assert.equal(1, code)
      assert.matches("poolsh.profile: " .. f:gsub("%p", "%%%0") .. ": values.memory: must not be negative", err)
      _, err, code = sim("--profile=/nonexistent.lua", "print('ran')")
      assert.equal(1, code)
      assert.matches("cannot open /nonexistent.lua", err)
    end)

    it("a value below the sim's minimum is refused by the sim, and nothing is applied", function()
      local f = file('return { values = { pool_alignment = 1024, pool_granularity = 100 } }')
      local out, err, code = sim("", "local ok, e = pcall(require('poolsh.profile').load, " .. ("%q"):format(f) ..
        "); print(ok, e); print(('%d'):format(poolsh.sim.profile().pool_alignment), poolsh.sim.profile_info())")
      assert.equal(0, code, err)
      assert.matches("false\tpoolsh.profile: " .. f:gsub("%p", "%%%0") ..
                     ": values.pool_granularity: cudaErrorInvalidValue", out)
      assert.matches("\n512\tnil\n$", out)
    end)

    it("memory is refused once memory is mapped", function()
      local f = file('return { values = { memory = 17179869184 } }')
      local out = sim("", "local b = poolsh.pool{}:alloc(1); print(pcall(require('poolsh.profile').load, " ..
        ("%q"):format(f) .. "))")
      assert.matches("values.memory: cudaErrorNotSupported.*before any memory is mapped", out)
    end)

    it("warns for each fact the sim does not reproduce", function()
      local f = file('return { gpu = "Odd", facts = { placement = "first fit", coalescing = true } }')
      local _, err, code = sim("--profile=" .. q(f), "print(1)")
      assert.equal(0, code)
      assert.matches("fact 'placement' is first fit on this GPU but the sim models best fit", err)
      assert.not_matches("coalescing", err)
    end)

    it("apply remembers the identity on the sim, and raises on cuda", function()
      local t = { gpu = "G", driver = "d", runtime = 1, date = "2026-01-01", values = {} }
      if H.is_sim() then
        profile.apply(t, "g.lua")
        assert.same({ gpu = "G", driver = "d", runtime = 1, date = "2026-01-01", path = "g.lua" },
                    H.poolsh.sim.profile_info())
      else
        assert.matches("g.lua: profiles apply to the sim backend %(this is cuda%)", H.err(profile.apply, t, "g.lua"))
      end
    end)
  end)
end)
