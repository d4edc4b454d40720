-- Input fuzzer: PYTORCH_CUDA_ALLOC_CONF texts (poolsh.allocators.pytorch_conf)
-- and the pytorch allocator they configure: each mutated setting parses or
-- is refused with a clear message, and a setting that parses replays a
-- small snapshot (memory fraction, garbage collection, roundup lists,
-- expandable segments and cudaMallocAsync among the corpus) to the end,
-- its refused allocations counted, never raised. Each input is bounded in
-- time and memory by lib.run.
-- Usage: poolsh --backend=sim scripts/fuzz/alloc_conf.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local conf = require "poolsh.allocators.pytorch_conf"
local torch = require "poolsh.replay.torch"
local replay = require "poolsh.replay"

local rec = torch.open("tests/data/fuzz/convnet_subset.pickle")

lib.run({
  name = "alloc_conf",
  suffix = ".txt",
  corpus = {
    "",
    "per_process_memory_fraction:0.0001",
    "per_process_memory_fraction:0.0002,garbage_collection_threshold:0.5",
    "max_split_size_mb:20,max_non_split_rounding_mb:40,per_process_memory_fraction:0.001,garbage_collection_threshold:0.1",
    "roundup_power2_divisions:[>:4,64:2,256:1]",
    "roundup_power2_divisions:[1:2,2:4,>:8],expandable_segments:True,per_process_memory_fraction:0.0003",
    "backend:cudaMallocAsync,per_process_memory_fraction:0.5,release_lock_on_cudamalloc:True",
    "expandable_segments:True,large_segment_size_mb:40,garbage_collection_threshold:0.9",
  },
  decode = function(input)
    conf.parse(input)
    local r = replay.run(rec, { allocator = "pytorch", alloc_opts = { conf = input }, max_streams = 8 })
    if not (r.failed >= 0 and r.failed <= r.events) then
      error(("%d failed allocations in %d events"):format(r.failed, r.events), 0)
    end
  end,
}, ...)
