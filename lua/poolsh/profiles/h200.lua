-- poolsh device profile: NVIDIA H200 (driver 580.159.04, runtime 13000, cc 9.0), 2026-11-22.
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
  gpu = "NVIDIA H200",
  notes = {
    alloc_api_ns = "not measured: the sim's default",
    bw_h2h = "not measured: the sim's default",
    copy_ns = "4 KiB async H2D + sync 7.4 us = 3.7 + 3.6 us + transfer (E10)",
    event_api_ns = "not measured: the sim's default",
    facts = "E1-E9",
    host_memory = "not measured: the sim's default",
    launch_ns = "empty kernel 5.5 us event-timed minus 3.7 us launch (E10)",
    map_ns = "first alloc that maps: 54 us for 32 MiB, 84 us for 64 MiB, 969 us for 1 GiB (E10)",
    memory = "cudaMemGetInfo total (E11)",
    release_ns = "sync releasing 64 MiB 225-245 us, 1 GiB+32 MiB 1614 us (E3, E10)",
    source = "docs/calibration.md (scripts/calibrate/run.sh, raw log docs/calibration/h200-2026-11-22.log); to be replaced by `poolsh calibrate` output",
    trim_ns_per_gib = "cudaMemPoolTrimTo 40 us per 32 MiB (E5, E10)",
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
    memory = 150109880320,  -- bytes
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
