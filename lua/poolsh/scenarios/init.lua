--- poolsh.scenarios: the names of the narrated scenarios, in the order
-- `poolsh run --all` runs them; each is the module poolsh.scenarios.<name>
-- (docs/scenarios.md).
return {
  "same_stream_reuse",
  "cross_stream",
  "internal_deps",
  "threshold_cliff",
  "trim_high_water",
  "reserved_vs_used",
  "fragmentation",
  "pinned_vs_pageable",
  "pinned_pool_keeps",
  "caching_allocator",
  "use_after_free",
  "malloc_vs_pool",
  "host_pools",
  "destroy_stream",
  "pool_per_stream",
  "peer_access",
  "ipc_share",
  "ipc_after_free",
  "vmm_growing_batch",
  "vmm_live_pins",
  "vmm_small_large",
}
