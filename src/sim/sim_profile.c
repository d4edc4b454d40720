/*
 * sim_profile.c: the sim's device profile, every knob by name.
 * docs/sim.md lists the same table with units and meanings.
 */
#include <stddef.h>
#include <string.h>

#include "sim_internal.h"

#define GiB (1024.0 * 1024.0 * 1024.0)
#define MiB (1024.0 * 1024.0)

typedef struct opt {
  const char *name;
  size_t off;
  double def;
  double min;       /* smallest accepted value */
} opt;

#define O(f, d, m) { #f, offsetof(sim_profile, f), d, m }
/* Defaults: measured on an NVIDIA H200, driver 580.159.04, CUDA 13.0,
 * 2026-11-22 (docs/calibration.md); memory stays the H100 80GB's. */
static const opt OPTS[] = {
  O(memory, 80 * GiB, 1),
  O(host_memory, 512 * GiB, 1),
  O(api_ns, 3700, 0),              /* kernel launch, host side */
  O(event_api_ns, 500, 0),         /* not measured */
  O(alloc_api_ns, 700, 0),         /* pinned/pageable alloc: not measured */
  O(pool_alloc_ns, 330, 0),
  O(pool_free_ns, 420, 0),
  O(malloc_ns, 34000, 0),
  O(free_ns, 30000, 0),
  O(sync_ns, 290, 0),
  O(query_ns, 250, 0),
  O(launch_ns, 1800, 0),           /* empty kernel 5.5 us event-timed */
  O(copy_ns, 3600, 0),             /* 4 KiB async H2D + sync 7.4 us */
  O(bw_fill, 4400, 1e-9),
  O(bw_d2d, 2000, 1e-9),
  O(bw_pinned, 55, 1e-9),
  O(bw_pageable_h2d, 8.2, 1e-9),
  O(bw_pageable_d2h, 14.3, 1e-9),
  O(bw_h2h, 20, 1e-9),             /* not measured */
  O(pool_granularity, 32 * MiB, 512),
  O(pool_alignment, 512, 1),
  O(malloc_granularity, 2 * MiB, 1),
  O(map_ns, 24300, 0),             /* 54 us for 32 MiB, 84 us for 64 MiB */
  O(map_ns_per_gib, 950000, 0),    /* 969 us for 1 GiB */
  O(release_ns, 145000, 0),        /* 64 MiB: 225-245 us; 1 GiB+32 MiB: */
  O(release_ns_per_gib, 1400000, 0), /* 1614 us */
  O(trim_ns_per_gib, 1280000, 0),  /* 40 us per 32 MiB */
  O(release_on_stream_sync, 1, 0),
  O(release_on_event_sync, 1, 0),
  O(release_on_device_sync, 1, 0),
  O(release_on_cuda_free, 0, 0),
  O(release_on_stream_destroy, 1, 0),
  O(report_rules, 1, 0),
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

/* Sets a known key to a value >= its minimum and <= 1e18 (NaN refused).
 * The release_on_* flags become 0 or 1; bandwidths (bw_*) stay as given;
 * every other option, report_rules included, is rounded to a whole number. */
int sim_profile_set(sim_profile *p, const char *key, double v) {
  const opt *o = find(key);
  if (!o || !(v >= o->min) || v > 1e18) return PS_ERR_INVALID_VALUE;
  if (strncmp(key, "release_on_", 11) == 0) v = v != 0;
  else if (strncmp(key, "bw_", 3) != 0) v = (double)(uint64_t)(v + 0.5);
  *field(p, o) = v;
  return PS_OK;
}

/* Fills up to max names; returns how many exist. */
int sim_profile_names(const char **names, int max) {
  for (int i = 0; names && i < max && i < NOPTS; i++) names[i] = OPTS[i].name;
  return NOPTS;
}
