-- poolsh device profile: NVIDIA H100 80GB HBM3 (driver 580.159.04, runtime 13000, cc 9.0), 2026-11-22.
-- Load it with `poolsh --backend=sim --profile=FILE` (docs/sim.md, Device profiles).
return {
  cc = "9.0",
  date = "2026-11-22",
  driver = "580.159.04",
  facts = {
    blocks_straddle_chunks = true,
    carve = "from the start",
    coalescing = true,
    default_pool_defaults = "threshold 0, follow, opportunistic, internal",
    host_pool_granularity = "same as device",
    internal_dependency_at_limit = true,
    internal_dependency_waits = true,
    internal_off_at_limit = "fails",
    max_size_rounding = "up to granularity",
    opportunistic_after_completion = true,
    placement = "best fit",
    pool_defaults = "threshold 0, follow, opportunistic, internal",
    release_on_other_stream_sync = false,
    release_on_query = false,
    release_order = "top down",
    reuse_after_completion_opportunistic_off = false,
    reuse_after_event_dependency = true,
    reuse_after_event_dependency_follow_off = false,
    reuse_after_host_sync_policies_off = true,
    reuse_pending_without_dependency = false,
    threshold_rounding = "down",
    trim_rounding = "up",
    used_accounting = "exact",
  },
  gpu = "NVIDIA H100 80GB HBM3",
  notes = {
    bw_d2d = "provisional: the H200's (HBM3e); an H100's HBM3 is slower",
    bw_fill = "provisional: the H200's (HBM3e); an H100's HBM3 is slower",
    facts = "provisional: measured on an H200 (E1-E9); the pool logic is the driver's, shared across Hopper",
    memory = "typical cudaMemGetInfo total of an H100 80GB HBM3",
    release_on_stream_destroy = "measured on an H100, driver 580.159.04 (docs/calibration.md E3)",
    source = "provisional: every value but memory is copied from h200.lua (measured on an H200, docs/calibration.md); to be replaced by `poolsh calibrate` on an H100",
  },
  runtime = 13000,
  values = {
    alloc_api_ns = 700,  -- ns
    api_ns = 3700,  -- ns
    bw_d2d = 2000,  -- GB/s (1e9 B/s)
    bw_fill = 4400,  -- GB/s (1e9 B/s)
    bw_h2h = 20,  -- GB/s (1e9 B/s)
    bw_pageable_d2h = 14.3,  -- GB/s (1e9 B/s)
    bw_pageable_h2d = 8.2,  -- GB/s (1e9 B/s)
    bw_pinned = 55,  -- GB/s (1e9 B/s)
    copy_ns = 3600,  -- ns
    event_api_ns = 500,  -- ns
    free_ns = 30000,  -- ns
    host_memory = 549755813888,  -- bytes
    launch_ns = 1800,  -- ns
    malloc_granularity = 2097152,  -- bytes
    malloc_ns = 34000,  -- ns
    map_ns = 24300,  -- ns
    map_ns_per_gib = 950000,  -- ns per GiB
    memory = 85520809984,  -- bytes
    pool_alignment = 512,  -- bytes
    pool_alloc_ns = 330,  -- ns
    pool_free_ns = 420,  -- ns
    pool_granularity = 33554432,  -- bytes
    query_ns = 250,  -- ns
    release_ns = 145000,  -- ns
    release_ns_per_gib = 1400000,  -- ns per GiB
    release_on_cuda_free = 0,  -- flag, 0 or 1
    release_on_device_sync = 1,  -- flag, 0 or 1
    release_on_event_sync = 1,  -- flag, 0 or 1
    release_on_stream_destroy = 1,  -- flag, 0 or 1
    release_on_stream_sync = 1,  -- flag, 0 or 1
    sync_ns = 290,  -- ns
    trim_ns_per_gib = 1280000,  -- ns per GiB
  },
}
