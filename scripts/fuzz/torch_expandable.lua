-- Input fuzzer: PyTorch snapshots recorded with expandable_segments:True
-- (segment_map / segment_unmap entries, is_expandable segments): the torch
-- reader's reconstruction of the pages mapped before the trace, then a
-- replay through the pytorch allocator in expandable mode (its restore maps
-- those pages at their recorded offsets). A build without poolsh.vmm runs
-- the replay on the specs' test double (tests/spec/vmm_double.lua).
-- Usage: poolsh --backend=sim scripts/fuzz/torch_expandable.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local poolsh = require "poolsh"
local writer = require "poolsh.export.pickle"
local torch = require "poolsh.replay.torch"
local replay = require "poolsh.replay"

if poolsh.vmm == nil then dofile("tests/spec/vmm_double.lua").install(poolsh) end

local L, MiB = writer.list, 1024 * 1024
local function ev(action, addr, size, stream, t)
  return { action = action, addr = addr, size = size, stream = stream, time_us = t, frames = L() }
end
local function seg(addr, size, kind, blocks)
  return { device = 0, address = addr, total_size = size, stream = 0, segment_type = kind,
    segment_pool_id = L { 0, 0 }, is_expandable = true, allocated_size = 0, active_size = 0,
    requested_size = 0, blocks = L(blocks) }
end

-- A small run: a large range with pages mapped before the trace around a
-- hole, a small range grown in the trace, one unmap (empty_cache).
local large, small = 0x2a54000000, 0x302000000
local function snapshot()
  return writer.dumps { device_traces = L { L {
    ev("segment_map", large + 40 * MiB, 20 * MiB, 0, 1),
    ev("alloc", large + 40 * MiB, 15 * MiB, 0, 2),
    ev("segment_map", small, 2 * MiB, 0, 3),
    ev("alloc", small, 4096, 0, 4),
    ev("free_requested", large + 3 * MiB, 32 * MiB, 0, 5),
    ev("free_completed", large + 3 * MiB, 32 * MiB, 0, 5),
    ev("segment_unmap", large, 20 * MiB, 0, 6),
    ev("free_requested", small, 4096, 0, 7),
    ev("free_completed", small, 4096, 0, 7),
  } }, segments = L {
    seg(large + 20 * MiB, 40 * MiB, "large", {
      { address = large + 20 * MiB, size = 20 * MiB, requested_size = 0, state = "inactive" },
      { address = large + 40 * MiB, size = 15 * MiB, requested_size = 15 * MiB, state = "active_allocated" },
      { address = large + 55 * MiB, size = 5 * MiB, requested_size = 0, state = "inactive" } }),
    seg(large + 80 * MiB, 40 * MiB, "large", {
      { address = large + 83 * MiB, size = 32 * MiB, requested_size = 32 * MiB, state = "active_allocated" } }),
    seg(small, 2 * MiB, "small", { { address = small, size = 2 * MiB, requested_size = 0, state = "inactive" } }),
  } }
end

lib.run({
  name = "torch_expandable",
  suffix = ".pickle",
  corpus = { snapshot() },
  decode = function(_, path)
    local rec = torch.open(path)
    replay.run(rec, { allocator = "pytorch", max_streams = 8,
      alloc_opts = { conf = "expandable_segments:True", deferred_free = true } })
  end,
}, ...)
