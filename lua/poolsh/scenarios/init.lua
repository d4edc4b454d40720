--- poolsh.scenarios: the names of the narrated scenarios, in the order
-- `poolsh run --all` runs them; each is the module poolsh.scenarios.<name>
-- (docs/scenarios.md). A scenario that teaches what a lesson teaches has
-- the lesson's name (lua/poolsh/lessons/init.lua).
return {
  "same_stream",
  "cross_stream",
  "internal_deps",
  "release_threshold",
  "trim",
  "reserved_vs_used",
  "fragmentation",
  "pinned_vs_pageable",
  "host_memory",
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
