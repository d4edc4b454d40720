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
static const opt OPTS[] = {
  O(memory, 80 * GiB, 1),
  O(host_memory, 512 * GiB, 1),
  O(api_ns, 2000, 0),
  O(alloc_api_ns, 700, 0),
  O(event_api_ns, 500, 0),
  O(launch_ns, 3000, 0),
  O(copy_ns, 0, 0),
  O(bw_fill, 3000, 1e-9),
  O(bw_d2d, 1500, 1e-9),
  O(bw_pinned, 55, 1e-9),
  O(bw_pageable, 12, 1e-9),
  O(bw_h2h, 20, 1e-9),
  O(pool_granularity, 2 * MiB, 1),
  O(pool_min_chunk, 2 * MiB, 0),
  O(pool_alignment, 512, 1),
  O(malloc_granularity, 2 * MiB, 1),
  O(release_on_stream_sync, 1, 0),
  O(release_on_event_sync, 1, 0),
  O(release_on_device_sync, 1, 0),
  O(release_on_cuda_free, 0, 0),
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

/* Sets a known key to a value >= its minimum (NaN refused); sizes and
 * times are whole numbers, so they are rounded. Flags become 0 or 1. */
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
