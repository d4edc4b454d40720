-- `poolsh calibrate` on the sim measures the sim's own profile back:
-- every discrete value and fact exactly, timings and bandwidths within 1 %.
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

-- The sim's profile in a fresh process with poolsh options opts.
local function sim_profile(opts)
  local out, err, code = H.poolsh_cmd("--backend=sim -E " .. opts .. " -e " ..
    q("for k, v in pairs(poolsh.sim.profile()) do print(k, v) end"))
  assert.equal(0, code, err)
  local t = {}
  for k, v in out:gmatch("(%S+)\t(%S+)\n") do t[k] = tonumber(v) end
  return t
end

-- Runs calibrate --quick on the sim with opts; returns the profile read
-- back and calibrate's stderr.
local function calibrate(opts)
  local out = os.tmpname()
  local _, err, code = H.poolsh_cmd("--backend=sim -E " .. opts .. " calibrate --quick --out " .. q(out))
  assert.equal(0, code, err)
  local t = profile.read(out)
  os.remove(out)
  return t, err
end

local function exact(name) return profile.unit(name):match("^bytes") or profile.unit(name):match("^flag") end

-- Every option but report_rules (poolsh's own switch) measured back.
local function assert_measures(want, got)
  for k, v in pairs(want) do
    if k ~= "report_rules" then
      local g = got.values[k]
      assert(g, "calibrate did not measure " .. k)
      if exact(k) then
        assert.equal(v, g, k)
      else
        assert(math.abs(g - v) <= 0.01 * v, ("%s: measured %s, the sim's is %s"):format(k, g, v))
      end
    end
  end
end

describe("poolsh calibrate", function()
  it("measures the sim's built-in profile back, every value and fact", function()
    local t, err = calibrate("")
    assert_measures(sim_profile(""), t)
    assert.same(profile.sim_facts, t.facts)
    assert.equal("sim", t.driver)
    assert.matches("^poolsh sim", t.gpu)
    assert.matches("^%d%d%d%d%-%d%d%-%d%d$", t.date)
    assert.equal(20000000, t.extra.spin_20ms_ns)
    for _, k in ipairs { "host_register_ns", "pinned_free_ns", "pageable_alloc_ns", "trim_ns" } do
      assert.is_nil(t.extra[k], k .. " is a value now")
    end
    assert.equal(1, t.values.release_on_destroyed_stream_done)
    assert.not_matches("cannot reproduce", err)
    assert.matches("poolsh calibrate: measured poolsh sim", err)
  end)

  it("measures a changed profile: granularity, release rules, costs, bandwidths", function()
    local f = tmpfile('return { values = { pool_granularity = 2097152, release_on_stream_sync = 0, ' ..
      'release_on_cuda_free = 1, release_on_stream_destroy = 0, pool_alignment = 1024, ' ..
      'malloc_granularity = 65536, memory = 17179869184, pool_alloc_ns = 1000, sync_ns = 5000, ' ..
      'bw_d2d = 1234, bw_pageable_h2d = 3.5, launch_ns = 2500, map_ns_per_gib = 2000000, ' ..
      'release_ns = 20000, trim_ns_per_gib = 3000000, release_on_destroyed_stream_done = 0, ' ..
      'host_pool_map_ns_per_gib = 50000000, host_pool_release_ns = 7000, pinned_free_ns_per_gib = 90000000, ' ..
      'pageable_touch_ns_per_gib = 100000000, malloc_ns_per_gib = 300000, host_pool_alloc_ns = 3000 } }')
    local opts = "--profile=" .. q(f)
    local want = sim_profile(opts)
    assert.equal(2097152, want.pool_granularity)
    assert.equal(0, want.release_on_stream_sync)
    local t = calibrate(opts)
    os.remove(f)
    assert_measures(want, t)
    assert.same(profile.sim_facts, t.facts)
  end)

  it("without a releasing sync it leaves the release costs and rounding unmeasured", function()
    local f = tmpfile('return { values = { release_on_stream_sync = 0, release_on_event_sync = 0, ' ..
      'release_on_device_sync = 0, release_on_stream_destroy = 0 } }')
    local t = calibrate("--profile=" .. q(f))
    os.remove(f)
    for _, k in ipairs { "stream_sync", "event_sync", "device_sync", "stream_destroy", "cuda_free" } do
      assert.equal(0, t.values["release_on_" .. k])
    end
    assert.is_nil(t.values.release_ns)
    assert.is_nil(t.facts.threshold_rounding)
    assert.matches("no sync releases", t.notes.release_ns)
    assert.equal("up", t.facts.trim_rounding)
  end)

  it("writes to stdout by default a profile that loads back", function()
    local out, err, code = H.poolsh_cmd("--backend=sim -E calibrate --quick")
    assert.equal(0, code, err)
    assert.matches("^%-%- poolsh device profile: poolsh sim", out)
    assert.matches("\n    pool_granularity = 33554432,  %-%- bytes\n", out)
    local f = tmpfile(out)
    local o2, e2, c2 = H.poolsh_cmd("--backend=sim -E --profile=" .. q(f) ..
      " -e " .. q("print(poolsh.sim.profile_info().gpu)"))
    os.remove(f)
    assert.equal(0, c2, e2)
    assert.equal("", e2)
    assert.matches("^poolsh sim", o2)
  end)

  it("refuses bad arguments with its usage", function()
    local _, err, code = H.poolsh_cmd("--backend=sim -E calibrate --fast")
    assert.equal(1, code)
    assert.matches("poolsh calibrate: unknown argument '%-%-fast'", err)
    assert.matches("usage: poolsh calibrate %[%-%-out FILE%] %[%-%-quick%]", err)
    _, err, code = H.poolsh_cmd("--backend=sim -E calibrate --out")
    assert.equal(1, code)
    assert.matches("%-%-out needs a file name", err)
    _, err, code = H.poolsh_cmd("--backend=sim -E calibrate --quick --out /nonexistent/dir/p.lua")
    assert.equal(1, code)
    assert.matches("poolsh calibrate: cannot write /nonexistent/dir/p.lua", err)
    local out
    out, _, code = H.poolsh_cmd("--backend=sim -E calibrate --help")
    assert.equal(0, code)
    assert.matches("^usage: poolsh calibrate", out)
  end)
end)
