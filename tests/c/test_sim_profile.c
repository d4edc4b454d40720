/*
 * test_sim_profile.c: the sim backend's the calibrated costs of the
 * profile (src/sim/sim_profile.c, docs/calibration.md "Host costs"):
 * timing defaults, host memory costs, host pool costs. Exits non-zero on
 * failure.
 */
#include "sim_check.h"

/* Counts a failure when st is not PS_OK (in expressions). */
static int ok_at(int st, int line) {
  if (st != PS_OK) failures++, fprintf(stderr, "%s:%d: status %d\n", __FILE__, line, st);
  return st;
}

/* ms the call takes on c's host clock (t0 is the caller's double). */
#define TIMED(c, call) (t0 = B->now(c), ok_at((call), __LINE__), B->now(c) - t0)

/* E10 and the H100 probes: the calibrated timing defaults (host costs
 * through poolsh's binding, docs/calibration.md "Host costs"). */
static void test_timing(void) {
  void *c = open_sim(0);
  ps_stream *s;
  ps_event *e1, *e2;
  ps_pool *p;
  ps_addr a, dev, pin, pg;
  double ms, t;
  int idle;
  OK(B->stream_create(c, 0, 0, 0, &s));
  OK(B->event_create(c, 1, &e1));
  OK(B->event_create(c, 1, &e2));
  NEAR(opt(c, "api_ns"), 4850);
  NEAR(opt(c, "pool_granularity"), 32.0 * MiB);

  /* an empty kernel: 4.85 us host, + 1.8 us event-timed; back to back
   * launch-bound */
  t = B->now(c);
  OK(B->event_record(c, e1, s));
  OK(B->touch(c, 0, 0, s));
  OK(B->event_record(c, e2, s));
  OK(B->event_sync(c, e2));
  OK(B->event_elapsed(c, e1, e2, &ms));
  NEAR(ms, 0.00665);
  OK(B->event_record(c, e1, s));
  for (int i = 0; i < 1000; i++) OK(B->touch(c, 0, 0, s));
  OK(B->event_record(c, e2, s));
  OK(B->event_sync(c, e2));
  OK(B->event_elapsed(c, e1, e2, &ms));
  CHECK(fabs(ms / 1000 - 0.00485) < 0.00001);
  /* idle sync 1.35-1.76 us and query 0.63 us */
  t = B->now(c);
  OK(B->stream_sync(c, s));
  NEAR(B->now(c) - t, 0.0015);
  t = B->now(c);
  OK(B->stream_query(c, s, &idle));
  NEAR(B->now(c) - t, 0.000628);

  /* pools: first map (curves) 39.9 us (32 MiB chunk), 71.2 us (64 MiB),
   * 883 us (1 GiB), within 10 %; a warm alloc + free pair 3.35 us */
  static const uint64_t sz[] = { MiB, 64 * MiB, GiB };
  static const double want[] = { 0.0399, 0.0712, 0.8833 };
  for (int i = 0; i < 3; i++) {
    p = new_pool(c, 0, UINT64_MAX);
    t = B->now(c);
    OK(B->pool_alloc(c, p, sz[i], s, &a, NULL));
    double got = B->now(c) - t;
    CHECK(fabs(got - want[i]) / want[i] < 0.1);
    OK(B->pool_free(c, a, s));
    t = B->now(c);
    OK(B->pool_alloc(c, p, sz[i], s, &a, NULL));
    OK(B->pool_free(c, a, s));
    NEAR(B->now(c) - t, 0.00335);
    OK(B->pool_destroy(c, p));
  }
  OK(B->device_sync(c));

  /* cudaMalloc / cudaFree of 1 GiB (idle device): curves 121 / 345 us */
  t = B->now(c);
  OK(B->malloc_device(c, GiB, &dev));
  NEAR(B->now(c) - t, 0.038 + 0.082);
  t = B->now(c);
  OK(B->free_device(c, dev));
  NEAR(B->now(c) - t, 0.031 + 0.310);

  /* bandwidths over 256 MiB (GB/s = 1e9 B/s): 55 pinned, 17.2 / 14.3 pageable
   * H2D / D2H, 2000 D2D (bytes once), 4400 fill; the pageable buffer's
   * pages touched first (a first copy into them also faults them in) */
  uint64_t n = 256 * MiB;
  OK(B->malloc_device(c, 2 * n, &dev));
  OK(B->alloc_pinned(c, n, 0, &pin));
  OK(B->alloc_pageable(c, n, &pg));
  OK(B->copy(c, pg, dev, n, s));
  struct { ps_addr d, s; double gbps; } cp[] = {
    { dev, pin, 55 }, { pin, dev, 55 }, { dev, pg, 17.2 }, { pg, dev, 14.3 },
    { dev + n, dev, 2000 } };
  double lat = opt(c, "copy_ns");
  for (int i = 0; i < 5; i++) {
    OK(B->event_record(c, e1, s));
    OK(B->copy(c, cp[i].d, cp[i].s, n, s));
    OK(B->event_record(c, e2, s));
    OK(B->event_sync(c, e2));
    OK(B->event_elapsed(c, e1, e2, &ms));
    double dev_ns = ms * 1e6 - opt(c, "api_ns") - lat;
    CHECK(fabs((double)n / dev_ns - cp[i].gbps) / cp[i].gbps < 0.001);
  }
  OK(B->event_record(c, e1, s));
  OK(B->fill(c, dev, GiB / 4, 0, s));
  OK(B->event_record(c, e2, s));
  OK(B->event_sync(c, e2));
  OK(B->event_elapsed(c, e1, e2, &ms));
  CHECK(fabs((double)(GiB / 4) / (ms * 1e6 - 4850 - 1800) - 4400) < 5);
  OK(B->free_device(c, dev));
  OK(B->free_pinned(c, pin));
  OK(B->free_pageable(c, pg));
  B->close(c);
}

/* Host memory costs grow with size (H100 probes, docs/calibration.md):
 * cudaHostAlloc, cudaFreeHost, malloc, free, register, unregister; a
 * pageable buffer's first touch is paid once, where it happens, and
 * freeing it costs by the pages touched. */
static void test_host_costs(void) {
  void *c = open_sim(0);
  ps_addr pin, pg, pg2, dev;
  ps_stream *s;
  double t0, a[2], f[2], r[2], u[2], pa[2], pf[2];
  OK(B->stream_create(c, 0, 0, 0, &s));
  static const uint64_t sz[] = { MiB, 256 * MiB };
  for (int i = 0; i < 2; i++) {
    a[i] = TIMED(c, B->alloc_pinned(c, sz[i], 0, &pin));
    f[i] = TIMED(c, B->free_pinned(c, pin));
    pa[i] = TIMED(c, B->alloc_pageable(c, sz[i], &pg));
    r[i] = TIMED(c, B->host_register(c, pg, sz[i]));
    u[i] = TIMED(c, B->host_unregister(c, pg));
    pf[i] = TIMED(c, B->free_pageable(c, pg));
  }
  /* 256 MiB against the curves / probe hosts' spread */
  CHECK(a[1] > 84 && a[1] < 125);           /* 84.5-124.4 ms */
  CHECK(f[1] > 23 && f[1] < 45);            /* 23.6-44.6 ms */
  CHECK(r[1] > 68 && r[1] < 106);           /* 68.0-105.9 ms, fresh pages */
  CHECK(u[1] > 4.3 && u[1] < 4.95);         /* 4.34-4.92 ms */
  CHECK(pa[1] > 0.040 && pa[1] < 0.080);    /* 42-79 us */
  CHECK(pf[1] > 7.6 && pf[1] < 14.8);       /* touched: 7.7-14.7 ms */
  /* and each grows with size */
  CHECK(a[1] > 100 * a[0] && f[1] > 50 * f[0] && r[1] > 100 * r[0]);
  CHECK(u[1] > 50 * u[0] && pa[1] > 5 * pa[0] && pf[1] > 100 * pf[0]);
  /* untouched pageable memory frees at the fixed cost, whatever its size */
  OK(B->alloc_pageable(c, 256 * MiB, &pg));
  NEAR(TIMED(c, B->free_pageable(c, pg)), opt(c, "pageable_free_ns") / 1e6);
  /* register of touched pages costs far less than of fresh ones */
  OK(B->alloc_pageable(c, 256 * MiB, &pg));
  OK(B->alloc_pageable(c, 256 * MiB, &pg2));
  OK(B->malloc_device(c, 256 * MiB, &dev));
  double cold = TIMED(c, B->copy(c, pg, dev, 256 * MiB, s));   /* faults pg in */
  double warm = TIMED(c, B->copy(c, pg, dev, 256 * MiB, s));
  CHECK(cold - warm > 70 && cold - warm < 80);   /* 0.29 ms/MiB */
  double wreg = TIMED(c, B->host_register(c, pg, 256 * MiB));
  double freg = TIMED(c, B->host_register(c, pg2, 256 * MiB));
  NEAR(wreg, (90000 + 47.8e6 / 4) / 1e6);
  CHECK(freg > 5 * wreg);
  /* a write touches only the pages it covers */
  OK(B->host_unregister(c, pg2));
  OK(B->free_pageable(c, pg2));
  OK(B->alloc_pageable(c, 256 * MiB, &pg2));
  static const uint8_t bytes[4] = { 1, 2, 3, 4 };
  double w1 = TIMED(c, B->write(c, PS_KIND_PAGEABLE, pg2, bytes, 4, NULL));
  double w2 = TIMED(c, B->write(c, PS_KIND_PAGEABLE, pg2, bytes, 4, NULL));
  NEAR(w1, 65536 / (double)GiB * 300e6 / 1e6);   /* one 64 KiB page */
  NEAR(w2, 0);
  NEAR(TIMED(c, B->free_pageable(c, pg2)), (10000 + 65536 / (double)GiB * 43e6) / 1e6);
  /* cudaMalloc / cudaFree grow with size */
  double m1 = TIMED(c, B->free_device(c, dev));
  OK(B->malloc_device(c, 2 * MiB, &dev));
  double m0 = TIMED(c, B->free_device(c, dev));
  CHECK(m1 > 2 * m0);
  OK(B->host_unregister(c, pg));
  OK(B->free_pageable(c, pg));
  B->close(c);
}

/* Host-location pools map, release and trim at far higher costs than
 * device pools (H100 curves: 4.8-8 ms per 32 MiB chunk mapped, 1.1 ms
 * released, 1.1 ms trimmed; a warm allocation 7.8 us). */
static void test_host_pool_costs(void) {
  void *c = open_sim(0);
  ps_stream *s;
  ps_addr a, b;
  double t0, cost[2][4];
  OK(B->stream_create(c, 0, 0, 0, &s));
  for (int host = 0; host < 2; host++) {
    ps_pool_props props = { host ? PS_LOCATION_HOST : PS_LOCATION_DEVICE, 0, 0 };
    ps_pool *p, *pm;
    OK(B->pool_create(c, &props, &p));                  /* threshold 0 */
    cost[host][0] = TIMED(c, B->pool_alloc(c, p, 64 * MiB, s, &a, NULL));
    cost[host][1] = TIMED(c, B->pool_alloc(c, p, 512, s, &b, NULL));   /* a third chunk */
    OK(B->pool_free(c, a, s));
    OK(B->pool_free(c, b, s));
    cost[host][2] = TIMED(c, B->stream_sync(c, s));
    CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 0);
    OK(B->pool_create(c, &props, &pm));
    OK(B->pool_set(c, pm, PS_ATTR_RELEASE_THRESHOLD, UINT64_MAX));
    OK(B->pool_alloc(c, pm, 64 * MiB, s, &a, NULL));
    OK(B->pool_free(c, a, s));
    OK(B->stream_sync(c, s));
    cost[host][3] = TIMED(c, B->pool_trim(c, pm, 0));
    CHECK(attr(c, pm, PS_ATTR_RESERVED_CURRENT) == 0);
    OK(B->pool_destroy(c, p));
    OK(B->pool_destroy(c, pm));
  }
  CHECK(cost[1][0] > 10.0 && cost[1][0] < 16.0);   /* 64 MiB: curves 11.9 ms */
  CHECK(cost[1][2] > 3.0 && cost[1][2] < 5.1);     /* 3 chunks: 3.39 ms (probe 1.67 a chunk) */
  CHECK(cost[1][3] > 2.2 && cost[1][3] < 3.5);     /* 2 chunks: 2.38 ms (probe 3.48) */
  for (int k = 0; k < 4; k++) CHECK(cost[1][k] > 10 * cost[0][k]);
  /* a warm host-pool allocation: 8 us against 2.5 */
  ps_pool_props hp = { PS_LOCATION_HOST, 0, 0 };
  ps_pool *p;
  OK(B->pool_create(c, &hp, &p));
  OK(B->pool_alloc(c, p, MiB, s, &a, NULL));
  NEAR(TIMED(c, B->pool_alloc(c, p, MiB, s, &b, NULL)), 0.008);
  OK(B->pool_free(c, a, s));
  OK(B->pool_free(c, b, s));
  OK(B->stream_sync(c, s));
  B->close(c);
}

int main(void) {
  test_timing();
  test_host_costs();
  test_host_pool_costs();
  if (failures) fprintf(stderr, "test_sim_profile: %d failure(s)\n", failures);
  else printf("test_sim_profile: all passed\n");
  return failures != 0;
}
