-- The scenarios about what memory costs and when a pool gives it back:
-- pinned_vs_pageable, host_memory, malloc_vs_pool, host_pools and
-- destroy_stream (docs/scenarios.md), run in this process: each passes
-- and narrates its key lines; on the sim, each fails with expected against
-- observed when the sim is changed so that the behaviour it shows is gone.
local H = require "helpers"
local scenario = require "poolsh.scenario"
local poolsh = H.poolsh

-- Runs scenario `name` with the sim options in `opts` set, restoring them
-- after; returns the result and the narration. A scenario that fails
-- leaves its live buffers to the collector: the leak check is told.
local function run(name, opts)
  local saved = {}
  for k, v in pairs(opts or {}) do
    saved[k] = poolsh.sim.profile()[k]
    poolsh.sim.set(k, v)
  end
  local out = {}
  local ok, res = pcall(scenario.run, scenario.load(name), function(s)
    out[#out + 1] = s
    if s:find("^FAILED at step") and #poolsh.core.live() > 0 then
      H.drops_buffers("a failed scenario stops where it failed and leaves its buffers to the collector")
    end
  end)
  for k, v in pairs(saved) do poolsh.sim.set(k, v) end
  assert(ok, res)
  return res, table.concat(out)
end

-- Asserts that res passed and that the narration holds each of `lines`
-- (plain text) and each of `patterns` (Lua patterns).
local function passes(res, text, lines, patterns)
  assert.is_true(res.ok, text)
  for _, l in ipairs(lines) do assert.truthy(text:find(l, 1, true), l .. "\n" .. text) end
  for _, p in ipairs(patterns or {}) do assert.truthy(text:find(p), p .. "\n" .. text) end
end

-- Runs `name` with `opts` on the sim and asserts that it fails at the step
-- starting with `step` with a message holding `msg`.
local function fails(name, opts, step, msg)
  if not H.is_sim() then return pending("sim only: it changes the sim's profile") end
  local res, text = run(name, opts)
  assert.is_false(res.ok, text)
  assert.truthy(res.step:find(step, 1, true), res.step .. "\n" .. text)
  assert.truthy(res.err:find(msg, 1, true), res.err)
  assert.truthy(text:find("FAILED at step " .. step, 1, true), text)
end

describe("scenario pinned_vs_pageable", function()
  it("passes and narrates bandwidths, pinning costs and the refused kernel", function()
    local res, text = run("pinned_vs_pageable")
    passes(res, text, {
      "1. allocate 128 MiB of pinned (cudaHostAlloc) and of pageable (malloc) host memory, timed",
      "notice: the driver stages them through its own pinned buffers",
      "poolsh.fill: b", "is pageable memory, which kernels cannot reach: poolsh.register it first",
      "notice: pinned speed: registered memory is pinned memory",
    }, { "H2D [%d.]+ GB/s, D2H [%d.]+ GB/s", "cudaHostRegister [%d.]+ %a+ against cudaHostAlloc" })
  end)

  it("fails when pageable copies run at pinned speed", function()
    fails("pinned_vs_pageable", { bw_pageable_h2d = 55 }, "3. the same copies: pageable",
      "pinned H2D against pageable H2D: expected")
  end)
end)

describe("scenario host_memory", function()
  it("passes: reserved stays through frees and syncs until trim(0); the cache until free_all_blocks()", function()
    local res, text = run("host_memory")
    passes(res, text, {
      "notice: used drops to 0; reserved stays",
      "4. trim(0)",
      "7. free_all_blocks()",
    }, { "reserved [%d.]+ MiB, used 48%.00 MiB", "held 32%.00 MiB; a hit took" })
  end)

  it("fails when a sync at threshold 0 gives nothing back", function()
    fails("host_memory", { release_on_stream_sync = 0 }, "5. the same pool at threshold 0",
      "reserved: expected 0, observed 33554432 (32.00 MiB)")
  end)

  it("fails when a reused allocation costs as much as a mapping", function()
    fails("host_memory", { host_pool_alloc_ns = 1e8 }, "3. allocate 16 MiB again, timed",
      "the reused allocation against the first: expected")
  end)
end)

describe("scenario malloc_vs_pool", function()
  it("passes and narrates the medians and the waits", function()
    local res, text = run("malloc_vs_pool")
    passes(res, text, {
      "notice: cudaFree waits until the whole device is idle, s2's work included",
      "notice: a pool free is queued on its stream and returns at once",
    }, { "median cudaMalloc [%d.]+ %a+, cudaFree [%d.]+ %a+", "cudaFree took [%d.]+ ms; the spin had [%d.]+ ms left" })
  end)

  it("fails when cudaMalloc costs what a pool allocation costs", function()
    fails("malloc_vs_pool", { malloc_ns = 330 }, "2. the same from a pool",
      "pool alloc against cudaMalloc (medians): expected")
  end)

  it("fails when a pool free costs what cudaFree costs", function()
    fails("malloc_vs_pool", { pool_free_ns = 1e6 }, "2. the same from a pool",
      "pool free against cudaFree (medians): expected")
  end)
end)

describe("scenario host_pools", function()
  it("passes: same chunk, no device memory, kernels and copies reach it, mapping costs more", function()
    local res, text = run("host_pools")
    passes(res, text, {
      "notice: kernels and copies reach host-pool memory like device memory",
    }, { "host pool: chunk [%d.]+ MiB, device free memory down [%d.]+ %a+", "median map: device [%d.]+ %a+, host [%d.]+ %a+", "host pool [%d.]+ GB/s, pinned [%d.]+ GB/s" })
  end)

  it("fails when a device chunk costs as much to map as a host chunk", function()
    fails("host_pools", { map_ns = 1e9 }, "2. allocate 3 chunk-sized blocks from each",
      "mapping a device chunk against a host chunk: expected")
  end)
end)

describe("scenario destroy_stream", function()
  it("passes: released at the idle stream's destroy, not at max or under a live block, later for a busy one", function()
    local res, text = run("destroy_stream")
    passes(res, text, {
      "2. destroy the stream",
      "notice: the memory goes back when the destroyed stream's work ends, with no sync",
    }, { "reserved [%d.]+ MiB %-> [%d.]+ MiB", "still reserved at [%d.]+ ms after the spin began; released by [%d.]+ ms" })
  end)

  it("fails when destroying a stream releases nothing", function()
    fails("destroy_stream", { release_on_stream_destroy = 0 }, "2. destroy the stream",
      "reserved: expected 0, observed 67108864 (64.00 MiB)")
  end)

  it("fails when a destroyed busy stream's memory waits for a sync", function()
    fails("destroy_stream", { release_on_destroyed_stream_done = 0 }, "6. poll reserved",
      "reserved 300.00 ms after the spin was queued, no sync: expected 0, observed 67108864 (64.00 MiB)")
  end)
end)

describe("poolsh run", function()
  it("runs each of these scenarios by name, before init.lua lists it", function()
    for _, name in ipairs { "pinned_vs_pageable", "host_memory", "malloc_vs_pool", "host_pools", "destroy_stream" } do
      local out, err, code = H.poolsh_cmd("--backend=sim run " .. name)
      assert.equal(0, code, out .. err)
      assert.truthy(out:find("== " .. name .. ": ", 1, true), out)
      assert.truthy(out:find("\nPASS " .. name, 1, true), out)
    end
  end)
end)
