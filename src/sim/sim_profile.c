/*
 * sim_profile.c: the sim's device profile, every knob by name.
 * docs/sim.md lists the same table with units and meanings.
 */
#include <stddef.h>
#include <string.h>

#include "sim_model.h"

#define GiB (1024.0 * 1024.0 * 1024.0)
#define MiB (1024.0 * 1024.0)

typedef struct opt {
  const char *name;
  size_t off;
  double def;
  double min;       /* smallest accepted value */
} opt;

#define O(f, d, m) { #f, offsetof(sim_profile, f), d, m }
/* Defaults (docs/calibration.md says where each comes from): pool logic,
 * device work and bandwidths measured on an NVIDIA H200, driver
 * 580.159.04, CUDA 13.0, 2026-11-22; host costs on H100 80GB HBM3 hosts
 * with that driver, 2026-11-23, through poolsh's Lua API (binding
 * included, as poolsh.now() sees them): "curves" is
 * docs/calibration/h100-2026-11-23-curves.log, "probe" the -probe.log,
 * "h100.lua" the shipped profile. memory stays the H100 80GB's. */
static const opt OPTS[] = {
  O(memory, 80 * GiB, 1),
  O(host_memory, 512 * GiB, 1),
  O(api_ns, 4850, 0),              /* kernel launch via the binding: h100.lua */
  O(event_api_ns, 1550, 0),        /* event record: h100.lua */
  O(pool_alloc_ns, 2500, 0),       /* probe 3.0 us, h100.lua 0.92 (C) */
  O(pool_free_ns, 850, 0),         /* probe 0.86 us, h100.lua 0.75 */
  O(host_pool_alloc_ns, 8000, 0),  /* curves 7.8 us, probe 25 us */
  O(malloc_ns, 38000, 0),          /* curves: 38 us + 82 us/GiB */
  O(malloc_ns_per_gib, 82000, 0),
  O(free_ns, 31000, 0),            /* curves: 31 us + 0.31 ms/GiB */
  O(free_ns_per_gib, 310000, 0),
  O(alloc_api_ns, 300000, 0),      /* cudaHostAlloc: curves 0.29 ms, probe 0.57 */
  O(pinned_alloc_ns_per_gib, 410000000, 0),   /* 0.33-0.48 ms/MiB */
  O(pinned_free_ns, 200000, 0),    /* cudaFreeHost: 0.13-0.19 ms */
  O(pinned_free_ns_per_gib, 133000000, 0),    /* 0.09-0.17 ms/MiB */
  O(pageable_alloc_ns, 10000, 0),  /* 4-16 us at 1 MiB */
  O(pageable_alloc_ns_per_gib, 220000, 0),    /* 42-79 us at 256 MiB */
  O(pageable_free_ns, 10000, 0),   /* untouched: 0.3-21 us */
  O(pageable_free_ns_per_gib, 43000000, 0),   /* touched: 28-59 us/MiB */
  O(pageable_touch_ns_per_gib, 300000000, 0), /* fresh register - warm */
  O(host_register_ns, 90000, 0),   /* warm 1 MiB: curves 89 us */
  O(host_register_ns_per_gib, 47800000, 0),   /* warm: h100.lua */
  O(host_unregister_ns, 45000, 0), /* curves: 45 us + 17 us/MiB */
  O(host_unregister_ns_per_gib, 17900000, 0),
  O(sync_ns, 1500, 0),             /* idle 1.35-1.37 us, after a free 1.76 */
  O(query_ns, 628, 0),             /* h100.lua */
  O(launch_ns, 1800, 0),           /* empty kernel 5.5 us event-timed */
  O(copy_ns, 3600, 0),             /* 4 KiB async H2D + sync 7.4 us */
  O(bw_fill, 4400, 1e-9),
  O(bw_d2d, 2000, 1e-9),
  O(bw_pinned, 55, 1e-9),
  O(bw_pageable_h2d, 17.2, 1e-9),  /* H100s: 20.9, 17.9, 16.5, 15.4 (the H200: 8.2) */
  O(bw_pageable_d2h, 14.3, 1e-9),
  O(bw_h2h, 7.55, 1e-9),           /* H100 calibrate runs: 7.58, 7.52 */
  O(pool_granularity, 32 * MiB, 512),
  O(pool_alignment, 512, 1),
  O(malloc_granularity, 2 * MiB, 1),
  O(map_ns, 10000, 0),             /* curves: 40 us for 32 MiB, 883 for 1 GiB */
  O(map_ns_per_gib, 860000, 0),
  O(release_ns, 10000, 0),         /* curves: 44 us for 32 MiB, 1082 for 1 GiB */
  O(release_ns_per_gib, 1070000, 0),
  O(trim_ns, 0, 0),                /* curves: 39 us for 32 MiB, 1306 for 1 GiB */
  O(trim_ns_per_gib, 1280000, 0),
  O(host_pool_map_ns, 10000, 0),   /* curves: 4.8-5.8 ms a chunk, 50 ms for 8 */
  O(host_pool_map_ns_per_gib, 190000000, 0),
  O(host_pool_release_ns, 10000, 0),          /* curves: 1.11-1.13 ms a chunk */
  O(host_pool_release_ns_per_gib, 36000000, 0),
  O(host_pool_trim_ns, 0, 0),      /* curves: 1.10-1.19 ms a chunk */
  O(host_pool_trim_ns_per_gib, 36000000, 0),
  O(release_on_stream_sync, 1, 0),
  O(release_on_event_sync, 1, 0),
  O(release_on_device_sync, 1, 0),
  O(release_on_cuda_free, 0, 0),
  O(release_on_stream_destroy, 1, 0),
  O(release_on_destroyed_stream_done, 1, 0),
  O(report_rules, 1, 0),
  /* VMM (cuMem*): tests/data/vmm/h200-probe.json, H200, driver 13000:
   * release 15.9 us for 2 MiB, 34.7 for 20 MiB. */
  O(vmm_granularity, 2 * MiB, 65536),
  O(vmm_create_us, 16, 0),
  O(vmm_map_us, 2.7, 0),
  O(vmm_set_access_us, 51, 0),
  O(vmm_unmap_us, 30, 0),
  O(vmm_release_us, 13.8, 0),
  O(vmm_release_us_per_mib, 1.04, 0),
};
#undef O
#define NOPTS ((int)(sizeof OPTS / sizeof OPTS[0]))

/* The option named key, or NULL. */
static const opt *find(const char *key) {
  for (int i = 0; key && i < NOPTS; i++)
    if (strcmp(OPTS[i].name, key) == 0) return &OPTS[i];
  return NULL;
}

static double *field(sim_profile *p, const opt *o) {
  return (double *)((char *)p + o->off);
}

/* Every option takes its default. */
void sim_profile_defaults(sim_profile *p) {
  for (int i = 0; i < NOPTS; i++) *field(p, &OPTS[i]) = OPTS[i].def;
}

/* PS_OK and *v, or PS_ERR_INVALID_VALUE for an unknown key. */
int sim_profile_get(const sim_profile *p, const char *key, double *v) {
  const opt *o = find(key);
  if (!o || !v) return PS_ERR_INVALID_VALUE;
  *v = *field((sim_profile *)p, o);
  return PS_OK;
}

/* Whether key's value stays as given (not rounded): bandwidths (bw_*)
 * and the VMM costs in microseconds (vmm_*_us*). */
static int fractional(const char *key) {
  return strncmp(key, "bw_", 3) == 0 ||
         (strncmp(key, "vmm_", 4) == 0 && strstr(key, "_us") != NULL);
}

/* Sets a known key to a value >= its minimum and <= 1e18 (NaN refused).
 * The release_on_* flags become 0 or 1; bandwidths and VMM costs stay as
 * given; vmm_granularity must be a power of two; every other option,
 * report_rules included, is rounded to a whole number. */
int sim_profile_set(sim_profile *p, const char *key, double v) {
  const opt *o = find(key);
  if (!o || !(v >= o->min) || v > 1e18) return PS_ERR_INVALID_VALUE;
  if (strcmp(key, "vmm_granularity") == 0) {
    uint64_t g = (uint64_t)v;
    if ((double)g != v || g > ((uint64_t)1 << 40) || (g & (g - 1))) return PS_ERR_INVALID_VALUE;
  }
  if (strncmp(key, "release_on_", 11) == 0) v = v != 0;
  else if (!fractional(key)) v = (double)(uint64_t)(v + 0.5);
  *field(p, o) = v;
  return PS_OK;
}

/* Fills up to max names; returns how many exist. */
int sim_profile_names(const char **names, int max) {
  for (int i = 0; names && i < max && i < NOPTS; i++) names[i] = OPTS[i].name;
  return NOPTS;
}
