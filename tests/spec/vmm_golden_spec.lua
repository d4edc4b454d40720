-- The VMM parts of issue 21 outside the bindings: the golden scenarios
-- vmm_errors, vmm_accounting and vmm_costs recorded on the sim hold the
-- H200 probe's answers (tests/data/vmm/h200-probe.json); poolsh calibrate
-- measures a changed VMM profile back; the runner's error names.
local H = require "helpers"
local format = require "poolsh.golden.format"
local runner = require "poolsh.golden.runner"
local profile = require "poolsh.profile"
local cjson = require "cjson"

local MiB = 1024 * 1024

local function tmpdir()
  local p = io.popen("mktemp -d")
  local d = p:read("l")
  p:close()
  return d
end

-- Records the named fidelity scenarios on the sim (poolsh options opts)
-- into a fresh directory; returns each record by name.
local function record(opts, ...)
  local dir = tmpdir()
  local names = {}
  for _, n in ipairs { ... } do names[#names + 1] = ("%q"):format(n) end
  local code = ("os.exit(require('poolsh.cmd.golden')({'record', '--out', %q, %s}), true)")
    :format(dir, table.concat(names, ", "))
  local out, err, status = H.poolsh_cmd("--backend=sim " .. opts .. " -e " .. H.quote(code))
  assert(status == 0, out .. err)
  local recs = {}
  for _, n in ipairs { ... } do recs[n] = assert(format.read(dir .. "/" .. n .. ".lua")) end
  os.execute("rm -rf " .. H.quote(dir))
  return recs
end

local function step(rec, name)
  for _, s in ipairs(rec.steps) do if s.step == name then return s end end
  error("no step " .. name .. " in " .. rec.scenario)
end

-- The probe's CUresult name as poolsh's observation: nil for success.
local CUDA = { CUDA_SUCCESS = false, CUDA_ERROR_INVALID_VALUE = "cudaErrorInvalidValue",
               CUDA_ERROR_NOT_SUPPORTED = "cudaErrorNotSupported" }

local function probe()
  return cjson.decode(H.slurp("tests/data/vmm/h200-probe.json"))
end

describe("golden VMM scenarios on the sim", function()
  local recs

  setup(function()
    recs = record("--profile=lua/poolsh/profiles/h200.lua", "vmm_errors", "vmm_accounting", "vmm_costs")
  end)

  it("vmm_errors: every misuse gets the H200 probe's answer", function()
    local p = probe()
    local rec = recs.vmm_errors
    assert.is_nil(rec.error)
    -- step of vmm_errors -> the probe's label (its answer's last element
    -- when the probe made several calls)
    local cases = {
      ["r1 = vmm.reserve(2101248 B)"] = "reserve size not a multiple of granularity",
      ["h1 = vmm.create(2101248 B)"] = "create size not a multiple of granularity",
      ["h2 = vmm.create(0 B)"] = "create size 0",
      ["r2:map(+4 KiB, h3)"] = "map at an unaligned address",
      ["r2:map(+0 B, h3, 4 KiB, 2 MiB)"] = "map with an unaligned offset",
      ["r2:map(+0 B, h3, 0 B, 8 MiB)"] = "map past the handle's size",
      ["r2:map(+0 B, h3)"] = "map",
      ["r2:map(+0 B, h4)"] = "map over that mapping",
      ["r2:map(+2 MiB, h4)"] = "map overlapping its second half",
      ["r2:map(+16 MiB, h3)"] = "map the same handle twice (second place)",
      ["r2:set_access(+0 B, 4 MiB)"] = "set access on the mapping",
      ["r2:set_access(+40 MiB, 4 MiB)"] = "set access on an unmapped range",
      ["r2:set_access(+0 B, 2 MiB)"] = "set access on part of a mapping",
      ["v1:fill(7)"] = "memset after set access",
      ["r2:unmap(+0 B, 2 MiB)"] = "unmap half of a mapping",
      ["r2:unmap(+60 MiB, 4 MiB)"] = "unmap a range never mapped",
      ["r2:unmap(+0 B, 8 MiB)"] = "unmap two mappings at once",
      ["h3:release()"] = "release a handle while mapped, then unmap",
      ["r2:unmap(+80 MiB, 4 MiB)"] = "release a handle while mapped, then unmap",
      ["r2:free()"] = "free a reservation with a mapping left",
    }
    local n = 0
    for name, label in pairs(cases) do
      local answer = p.probes[label]
      if type(answer) == "table" then answer = answer[#answer] end
      local want = CUDA[answer]
      assert(want ~= nil, label .. ": " .. tostring(answer))
      -- the first step of that name (h3:release and r2:free come twice)
      assert.equals(want or nil, step(rec, name).error, name .. " (" .. label .. ")")
      n = n + 1
    end
    assert.equals(20, n)
    assert.equals(p.granularity_device.minimum, step(rec, "vmm.granularity()").granularity)
    assert.equals(p.granularity_device.recommended, step(rec, "vmm.granularity({recommended = true})").granularity)
    assert.equals(p.granularity_host, step(rec, "vmm.granularity({location = host})").granularity)
    -- poolsh's own refusals: no GPU fault, no call
    local refused = step(rec, "v2 = r2:buffer(+16 MiB, 4 MiB)").error
    assert.matches('has access "none"', refused)
    assert.not_matches("cuda21", refused)
    assert.equals("ok", step(rec, "v1:verify(7)").verify)
    local last = rec.steps[#rec.steps]
    assert.equals("r2:free()", last.step)
    assert.is_nil(last.error)
    assert.same({ h3 = "released", h4 = "released", r2 = "freed" }, last.vmm)
  end)

  it("vmm_errors: mappings are observed after each step", function()
    local s = step(recs.vmm_errors, "r2:map(+16 MiB, h3)")
    assert.same({ "+0 B 4 MiB h3+0 B none", "+16 MiB 4 MiB h3+0 B none" }, s.vmm.r2)
    s = step(recs.vmm_errors, "r2:set_access(+0 B, 4 MiB)")
    assert.equals("+0 B 4 MiB h3+0 B rw", s.vmm.r2[1])
    assert.equals("live", s.vmm.h4)
  end)

  it("vmm_accounting: created memory counts until released and unmapped", function()
    local rec = recs.vmm_accounting
    local used = {}
    for _, s in ipairs(rec.steps) do used[s.step] = s.device_used end
    assert.equals(64 * MiB, used["h1 = vmm.create(64 MiB)"])
    assert.equals(64 * MiB, used["r1 = vmm.reserve(1 GiB)"])
    assert.equals(96 * MiB, used["r1:map(+64 MiB, h2)"])
    -- the H200 maps only a whole handle from offset 0: h2's second half alone is refused
    local half = step(rec, "r1:map(+128 MiB, h2, 16 MiB, 16 MiB)")
    assert.equals("cudaErrorNotSupported", half.error)
    assert.same({ "+0 B 64 MiB h1+0 B rw", "+64 MiB 32 MiB h2+0 B none" }, half.vmm.r1)
    assert.equals(96 * MiB, used["h1:release()"])
    assert.equals(96 * MiB, used["h2:release()"])
    assert.equals(32 * MiB, used["r1:unmap(+0 B, 64 MiB)"])
    assert.equals(0, used["r1:unmap(+64 MiB, 32 MiB)"])      -- h2's only mapping
    assert.equals(0, used["r1:unmap(+128 MiB, 16 MiB)"])
    assert.equals("cudaErrorMemoryAllocation", step(rec, "h3 = vmm.create(200 GiB)").error)
    assert.equals(0, used["h4 = vmm.create(2 MiB, {location = host})"])
  end)

  it("vmm_costs: the order of the probe's costs", function()
    local c = probe().costs_us["2 MiB"]
    local names = { "map", "create", "unmap", "set_access" }
    table.sort(names, function(a, b) return c[a] < c[b] end)
    local s = recs.vmm_costs.steps[1]
    assert.equals(table.concat(names, " < "), s.cost_order)
    assert.equals(c.release < c.unmap and "release < unmap" or "release >= unmap", s.release)
  end)
end)

describe("golden runner", function()
  it("names a CUDA error only when it is a word of its own", function()
    assert.equals("cudaErrorInvalidValue", runner.error_name("x.lua:3: cudaErrorInvalidValue: invalid argument"))
    assert.equals("attempt to use a released poolsh.Memory (m1)",
      runner.error_name("/src/poolsh-vmmcuda21/lua/x.lua:12: attempt to use a released poolsh.Memory (m1)"))
  end)
end)

describe("poolsh calibrate, VMM", function()
  it("measures a changed VMM profile back", function()
    local f = os.tmpname()
    local fh = assert(io.open(f, "w"))
    fh:write("return { values = { vmm_granularity = 4194304, vmm_create_us = 7.5, vmm_map_us = 1.25, " ..
      "vmm_set_access_us = 90, vmm_unmap_us = 12, vmm_release_us = 20, vmm_release_us_per_mib = 3 } }")
    fh:close()
    local out = os.tmpname()
    local _, err, code = H.poolsh_cmd("--backend=sim -E --profile=" .. H.quote(f) ..
      " calibrate --quick --out " .. H.quote(out))
    os.remove(f)
    assert.equals(0, code, err)
    local t = profile.read(out)
    os.remove(out)
    assert.equals(4194304, t.values.vmm_granularity)
    local want = { vmm_create_us = 7.5, vmm_map_us = 1.25, vmm_set_access_us = 90, vmm_unmap_us = 12,
                   vmm_release_us = 20, vmm_release_us_per_mib = 3 }
    for k, v in pairs(want) do
      assert(math.abs(t.values[k] - v) <= 0.01 * v, ("%s: measured %s, set %s"):format(k, t.values[k], v))
    end
    assert.equals("us", profile.unit("vmm_map_us"))
    assert.equals("us per MiB", profile.unit("vmm_release_us_per_mib"))
  end)

  it("ships the probe's values in the H200 profile", function()
    local t = profile.read("lua/poolsh/profiles/h200.lua")
    local c = probe()
    assert.equals(c.granularity_device.minimum, t.values.vmm_granularity)
    local two, twenty = c.costs_us["2 MiB"], c.costs_us["20 MiB"]
    for _, k in ipairs { "create", "map", "set_access", "unmap" } do
      local mean = (two[k] + twenty[k]) / 2
      assert(math.abs(t.values["vmm_" .. k .. "_us"] - mean) <= 0.02 * mean, k)
    end
    local r2 = t.values.vmm_release_us + 2 * t.values.vmm_release_us_per_mib
    local r20 = t.values.vmm_release_us + 20 * t.values.vmm_release_us_per_mib
    assert(math.abs(r2 - two.release) <= 0.02 * two.release, "release at 2 MiB")
    assert(math.abs(r20 - twenty.release) <= 0.02 * twenty.release, "release at 20 MiB")
  end)
end)
