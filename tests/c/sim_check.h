/*
 * sim_check.h: what the sim's C tests (tests/c/test_sim*.c) share: CHECK,
 * OK and NEAR count failures in `failures`; a sim context, a pool, its
 * attributes and options in one call each. Header-only: each test is one
 * executable.
 */
#ifndef POOLSH_SIM_CHECK_H
#define POOLSH_SIM_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "sim/sim_model.h"

static int failures;

#define CHECK(c) do { if (!(c)) { failures++; \
  fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, __func__, #c); } } while (0)
#define OK(x) CHECK((x) == PS_OK)
#define NEAR(a, b) CHECK(fabs((a) - (b)) < 1e-6)   /* ms: 1 ns */

#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

static const ps_backend *const B = &ps_backend_sim;

static inline void *open_sim(uint64_t memory) {
  ps_config cfg = { 0, memory, NULL, NULL };
  void *c = NULL;
  OK(B->open(&cfg, &c));
  return c;
}

/* A new device pool with threshold and policies as given. */
static inline ps_pool *new_pool(void *c, uint64_t max, uint64_t threshold) {
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, max };
  ps_pool *p = NULL;
  OK(B->pool_create(c, &props, &p));
  OK(B->pool_set(c, p, PS_ATTR_RELEASE_THRESHOLD, threshold));
  return p;
}

static inline uint64_t attr(void *c, ps_pool *p, ps_pool_attr a) {
  uint64_t v = 0;
  OK(B->pool_get(c, p, a, &v));
  return v;
}

static inline double opt(void *c, const char *k) {
  double v = -1;
  OK(B->option_get(c, k, &v));
  return v;
}

/* The pre-calibration timing, so the clock tests keep simple numbers:
 * 2 us per kernel/copy call, free syncs and queries. */
static inline void classic(void *c) {
  OK(B->option_set(c, "api_ns", 2000));
  OK(B->option_set(c, "event_api_ns", 500));
  OK(B->option_set(c, "sync_ns", 0));
  OK(B->option_set(c, "query_ns", 0));
  OK(B->option_set(c, "launch_ns", 3000));
  OK(B->option_set(c, "copy_ns", 0));
  OK(B->option_set(c, "bw_fill", 3000));
  OK(B->option_set(c, "bw_d2d", 1500));
  OK(B->option_set(c, "bw_pageable_h2d", 12));
}

/* Two non-blocking streams and a fresh pool with the given threshold. */
static inline void *pool_env(uint64_t memory, uint64_t max, uint64_t threshold,
                             ps_stream **s1, ps_stream **s2, ps_pool **p) {
  void *c = open_sim(memory);
  OK(B->stream_create(c, 0, 0, 0, s1));
  OK(B->stream_create(c, 0, 0, 0, s2));
  *p = new_pool(c, max, threshold);
  return c;
}

static inline void policies(void *c, ps_pool *p, int follow, int opp, int internal) {
  OK(B->pool_set(c, p, PS_ATTR_FOLLOW_EVENT_DEPS, (uint64_t)follow));
  OK(B->pool_set(c, p, PS_ATTR_OPPORTUNISTIC, (uint64_t)opp));
  OK(B->pool_set(c, p, PS_ATTR_INTERNAL_DEPS, (uint64_t)internal));
}

#define RESERVED(c, p) attr(c, p, PS_ATTR_RESERVED_CURRENT)
#define USED(c, p) attr(c, p, PS_ATTR_USED_CURRENT)

#endif
