/*
 * test_sim_bulk: the sim against the frozen reference sim (tests/c/ref_sim)
 * where test_sim_diff never goes: thousands of frees pending on three
 * streams, then a sync that covers them all, so that the sim retires them
 * in bulk and rebuilds its islands (sim_pool.c, settle_bulk). Every
 * allocation's address, status and reuse rule must be the reference's,
 * and the bulk path must have run. Usage: test_sim_bulk [seeds] (10).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "sim/sim_model.h"

extern const ps_backend ps_backend_sim_ref;
static const ps_backend *A = &ps_backend_sim, *R = &ps_backend_sim_ref;

enum { BLOCKS = 3000, STREAMS = 3, ROUNDS = 6 };

static uint64_t rng;
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

/* Both sims given the same settings on their pool. */
static void both_set(void *ca, ps_pool *pa, void *cr, ps_pool *pr, ps_pool_attr attr, uint64_t v) {
  A->pool_set(ca, pa, attr, v);
  R->pool_set(cr, pr, attr, v);
}

/* One seed: rounds of allocations filling every empty slot, frees of a
 * third of them (a quarter on another stream), then a device or stream
 * sync. Returns the bulk rebuilds, or -1 at the first difference. */
static long run(uint64_t seed) {
  static ps_addr a[BLOCKS], r[BLOCKS];
  static int on[BLOCKS];
  rng = seed * 0x9e3779b97f4a7c15ull + 1;
  ps_config cfg = {0, 0, NULL, NULL};
  void *ca, *cr;
  if (A->open(&cfg, &ca) || R->open(&cfg, &cr)) return -1;
  A->option_set(ca, "release_ns", 0), R->option_set(cr, "release_ns", 0);
  A->option_set(ca, "release_ns_per_gib", 0), R->option_set(cr, "release_ns_per_gib", 0);
  ps_pool *pa, *pr;
  ps_pool_props props = {PS_LOCATION_DEVICE, 0, 0};
  if (A->pool_create(ca, &props, &pa) || R->pool_create(cr, &props, &pr)) return -1;
  both_set(ca, pa, cr, pr, PS_ATTR_RELEASE_THRESHOLD, UINT64_MAX);
  both_set(ca, pa, cr, pr, PS_ATTR_FOLLOW_EVENT_DEPS, rnd() % 2);
  both_set(ca, pa, cr, pr, PS_ATTR_OPPORTUNISTIC, rnd() % 2);
  ps_stream *sa[STREAMS], *sr[STREAMS];
  for (int k = 0; k < STREAMS; k++) A->stream_create(ca, 0, 0, 1, &sa[k]), R->stream_create(cr, 0, 0, 1, &sr[k]);
  int bad = 0;
  for (int round = 0; round < ROUNDS && !bad; round++) {
    for (int i = 0; i < BLOCKS && !bad; i++) {
      if (a[i]) continue;
      uint64_t size = 512 * (1 + rnd() % 40);
      if (rnd() % 10 == 0) size = (1 + rnd() % 8) << 20;
      int s = (int)(rnd() % STREAMS);
      ps_alloc_note na, nr;
      on[i] = s;
      int x = A->pool_alloc(ca, pa, size, sa[s], &a[i], &na);
      int y = R->pool_alloc(cr, pr, size, sr[s], &r[i], &nr);
      if (x != y || a[i] != r[i] || na.rule != nr.rule) {
        printf("seed %" PRIu64 " round %d alloc %d: status %d/%d, address %" PRIx64 "/%" PRIx64
               ", rule %d/%d\n", seed, round, i, x, y, (uint64_t)a[i], (uint64_t)r[i], na.rule, nr.rule);
        bad = 1;
      }
    }
    for (int i = 0; i < BLOCKS && !bad; i++) {
      if (!a[i] || rnd() % 3) continue;
      int s = rnd() % 4 ? on[i] : (int)(rnd() % STREAMS);
      if (A->pool_free(ca, a[i], sa[s]) != R->pool_free(cr, r[i], sr[s])) {
        printf("seed %" PRIu64 " round %d free %d: the statuses differ\n", seed, round, i);
        bad = 1;
      }
      a[i] = r[i] = 0;
    }
    if (rnd() % 2) A->device_sync(ca), R->device_sync(cr);
    else for (int k = 0; k < STREAMS; k++) A->stream_sync(ca, sa[k]), R->stream_sync(cr, sr[k]);
  }
  long rebuilds = (long)((sim_ctx *)ca)->isl_rebuilds;
  A->close(ca), R->close(cr);
  for (int i = 0; i < BLOCKS; i++) a[i] = r[i] = 0;
  return bad ? -1 : rebuilds;
}

int main(int argc, char **argv) {
  int seeds = argc > 1 ? atoi(argv[1]) : 10;
  long rebuilds = 0;
  for (int s = 1; s <= seeds; s++) {
    long n = run((uint64_t)s);
    if (n < 0) return 1;
    rebuilds += n;
  }
  printf("%d seeds agree, %ld bulk rebuilds\n", seeds, rebuilds);
  if (rebuilds == 0) {
    printf("FAIL: no sync retired its frees in bulk: the test no longer reaches settle_bulk\n");
    return 1;
  }
  return 0;
}
