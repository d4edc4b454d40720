/*
 * test_sim.c: the sim backend's model: virtual clock, streams, events,
 * contents, pool reuse rules, release, errors. Exits non-zero on failure.
 */
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

static const ps_backend *B = &ps_backend_sim;

static void *open_sim(uint64_t memory) {
  ps_config cfg = { 0, memory, NULL, NULL };
  void *c = NULL;
  OK(B->open(&cfg, &c));
  return c;
}

/* A new device pool with threshold and policies as given. */
static ps_pool *new_pool(void *c, uint64_t max, uint64_t threshold) {
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, max };
  ps_pool *p = NULL;
  OK(B->pool_create(c, &props, &p));
  OK(B->pool_set(c, p, PS_ATTR_RELEASE_THRESHOLD, threshold));
  return p;
}

static uint64_t attr(void *c, ps_pool *p, ps_pool_attr a) {
  uint64_t v = 0;
  OK(B->pool_get(c, p, a, &v));
  return v;
}

static double opt(void *c, const char *k) {
  double v = -1;
  OK(B->option_get(c, k, &v));
  return v;
}

/* The pre-calibration timing, so the clock tests keep simple numbers:
 * 2 us per kernel/copy call, free syncs and queries. */
static void classic(void *c) {
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

/* ---- clock, streams, events ---- */

static void test_clock(void) {
  void *c = open_sim(0);
  ps_stream *s;
  ps_event *e1, *e2, *never, *untimed;
  int idle, done;
  double ms;
  classic(c);
  NEAR(B->now(c), 0);
  OK(B->stream_create(c, 0, 0, 1, &s));
  OK(B->spin(c, s, 10));                       /* host 2 us, ends 10.002 ms */
  NEAR(B->now(c), 0.002);
  OK(B->stream_query(c, s, &idle));
  CHECK(!idle);
  OK(B->sleep(c, 5));
  OK(B->stream_query(c, s, &idle));
  CHECK(!idle);
  OK(B->stream_sync(c, s));
  NEAR(B->now(c), 10.002);
  OK(B->stream_query(c, s, &idle));
  CHECK(idle);

  OK(B->event_create(c, 1, &e1));
  OK(B->event_create(c, 1, &e2));
  OK(B->event_record(c, e1, s));               /* host 10.0025 */
  OK(B->spin(c, s, 5));                        /* 10.0045 .. 15.0045 */
  OK(B->event_record(c, e2, s));
  CHECK(B->event_elapsed(c, e1, e2, &ms) == PS_ERR_NOT_READY);
  OK(B->event_query(c, e2, &done));
  CHECK(!done);
  OK(B->event_sync(c, e2));
  NEAR(B->now(c), 15.0045);
  OK(B->event_elapsed(c, e1, e2, &ms));
  NEAR(ms, 5.002);

  OK(B->event_create(c, 1, &never));
  OK(B->event_query(c, never, &done));
  CHECK(done);
  OK(B->event_sync(c, never));
  OK(B->stream_wait(c, s, never));
  CHECK(B->event_elapsed(c, e1, never, &ms) == PS_ERR_INVALID_RESOURCE);
  OK(B->event_create(c, 0, &untimed));
  OK(B->event_record(c, untimed, s));
  OK(B->event_sync(c, untimed));
  CHECK(B->event_elapsed(c, e1, untimed, &ms) == PS_ERR_INVALID_RESOURCE);

  /* stream_wait: s2's next op starts after e2's time. */
  ps_stream *s2;
  OK(B->stream_create(c, 0, 0, 0, &s2));
  OK(B->spin(c, s, 20));
  OK(B->event_record(c, e2, s));
  OK(B->stream_wait(c, s2, e2));
  OK(B->spin(c, s2, 1));
  OK(B->stream_sync(c, s2));
  CHECK(B->now(c) > 15.0045 + 21 - 1e-9);

  OK(B->event_destroy(c, e1));
  CHECK(B->event_destroy(c, e1) == PS_ERR_INVALID_RESOURCE);
  OK(B->stream_destroy(c, s2));
  CHECK(B->stream_sync(c, s2) == PS_ERR_INVALID_RESOURCE);
  CHECK(B->stream_destroy(c, NULL) == PS_ERR_INVALID_RESOURCE);
  int least, greatest;
  OK(B->stream_priority_range(c, &least, &greatest));
  CHECK(least == 0 && greatest == -5);
  B->close(c);
}

/* The legacy stream waits for blocking streams and they wait for it;
 * non-blocking streams are independent. */
static void test_legacy(void) {
  void *c = open_sim(0);
  ps_stream *b, *nb;
  classic(c);
  OK(B->stream_create(c, 0, 0, 1, &b));
  OK(B->stream_create(c, 0, -2, 0, &nb));
  OK(B->spin(c, b, 10));                       /* ends 10.002 */
  OK(B->spin(c, NULL, 1));                     /* after b: ends 11.002 */
  OK(B->spin(c, nb, 1));                       /* host 6 us: ends 1.006 */
  OK(B->stream_sync(c, nb));
  NEAR(B->now(c), 1.006);
  OK(B->spin(c, b, 1));                        /* after legacy: ends 12.002 */
  OK(B->stream_sync(c, NULL));
  NEAR(B->now(c), 12.002);                     /* legacy sync waits for b too */
  OK(B->spin(c, nb, 3));
  OK(B->device_sync(c));
  NEAR(B->now(c), 15.004);
  B->close(c);
}

/* ---- contents ---- */

static void test_contents(void) {
  void *c = open_sim(0);
  sim_ctx *sc = c;
  ps_stream *s;
  ps_pool *p;
  ps_addr a, b, h, big;
  int64_t bad;
  uint8_t buf[64];
  classic(c);
  OK(B->stream_create(c, 0, 0, 1, &s));
  OK(B->pool_default(c, 0, &p));
  OK(B->pool_alloc(c, p, MiB, s, &a, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &b, NULL));
  CHECK(a >= 0x7f0000000000ull && b == a + MiB);   /* one arena, packed */
  OK(B->verify(c, a, MiB, 0, s, &bad));        /* fresh memory reads 0 */
  CHECK(bad == -1);
  OK(B->fill(c, a, MiB, 0xAB, s));
  OK(B->verify(c, a, MiB, 0xAB, s, &bad));
  CHECK(bad == -1);
  CHECK(sim_mem_materialized(&sc->mem) == 0);  /* whole pages stay uniform */
  memset(buf, 0x11, sizeof buf);
  OK(B->write(c, PS_KIND_POOL, a + 100, buf, 10, s));
  CHECK(sim_mem_materialized(&sc->mem) == 1);
  OK(B->verify(c, a, MiB, 0xAB, s, &bad));
  CHECK(bad == 100);
  OK(B->read(c, PS_KIND_POOL, a + 98, buf, 14, s));
  CHECK(buf[0] == 0xAB && buf[1] == 0xAB && buf[2] == 0x11 && buf[11] == 0x11 &&
        buf[12] == 0xAB);
  OK(B->copy(c, b, a, MiB, s));                /* async: lands at its end */
  OK(B->stream_sync(c, s));
  OK(B->verify(c, b, MiB, 0xAB, s, &bad));
  CHECK(bad == 100);
  CHECK(B->read(c, PS_KIND_PINNED, a, buf, 4, s) == PS_ERR_INVALID_VALUE);
  CHECK(B->copy(c, a, b, 32 * MiB, s) == PS_ERR_INVALID_VALUE);  /* past the top */

  /* Pinned memory: host access is direct; copies go through s. */
  OK(B->alloc_pinned(c, 4096, 0, &h));
  CHECK(h < 0x7f0000000000ull && h >= 0x200000000ull);
  memset(buf, 0x5C, sizeof buf);
  OK(B->write(c, PS_KIND_PINNED, h, buf, 64, NULL));
  OK(B->copy(c, a, h, 64, s));
  OK(B->verify(c, a, 64, 0x5C, s, &bad));
  CHECK(bad == -1);
  OK(B->fill(c, b, 64, 0x7E, s));
  OK(B->copy(c, h + 1, b, 8, s));
  memset(buf, 0, sizeof buf);
  OK(B->read(c, PS_KIND_PINNED, h, buf, 10, NULL));
  CHECK(buf[0] == 0x5C && buf[1] == 0x5C);     /* not landed: no wait */
  OK(B->stream_sync(c, s));
  OK(B->read(c, PS_KIND_PINNED, h, buf, 10, NULL));
  CHECK(buf[0] == 0x5C && buf[1] == 0x7E && buf[8] == 0x7E && buf[9] == 0x5C);

  /* A 10 GiB fill costs no host memory and the time of 10 GiB at 3 TB/s. */
  uint64_t before = sim_mem_materialized(&sc->mem);
  OK(B->malloc_device(c, 10 * GiB, &big));
  OK(B->device_sync(c));
  double t0 = B->now(c);
  OK(B->fill(c, big, 10 * GiB, 0x42, s));
  OK(B->stream_sync(c, s));
  NEAR(B->now(c) - t0, (2000 + 3000 + 10.0 * GiB / 3000) / 1e6);
  OK(B->verify(c, big, 10 * GiB, 0x42, s, &bad));
  CHECK(bad == -1);
  OK(B->copy(c, big + 5 * GiB, big, 1, s));    /* one byte: one page */
  OK(B->fill(c, big, 1, 0x43, s));
  OK(B->copy(c, big + 6 * GiB, big, 2 * GiB, s));
  OK(B->verify(c, big + 6 * GiB + 1, GiB, 0x42, s, &bad));
  CHECK(bad == -1);
  OK(B->read(c, PS_KIND_MALLOC, big + 6 * GiB, buf, 2, s));
  CHECK(buf[0] == 0x43 && buf[1] == 0x42);
  CHECK(sim_mem_materialized(&sc->mem) == before + 2);

  /* A D2D copy of 1 GB takes about 0.67 ms. */
  t0 = B->now(c);
  OK(B->copy(c, big + GiB, big + 2 * GiB, 1000000000, s));
  OK(B->stream_sync(c, s));
  NEAR(B->now(c) - t0, (2000 + 1e9 / 1500) / 1e6);

  /* Pageable copies are host-synchronous at 12 GB/s. */
  ps_addr pg;
  OK(B->alloc_pageable(c, 12000000, &pg));
  t0 = B->now(c);
  OK(B->copy(c, big, pg, 12000000, s));
  NEAR(B->now(c) - t0, (700 * 0 + 2000 + 1e6) / 1e6);
  OK(B->host_register(c, pg, 12000000));
  CHECK(B->host_register(c, pg, 4096) == PS_ERR_ALREADY_REGISTERED);
  t0 = B->now(c);
  OK(B->copy(c, big, pg, 12000000, s));          /* pinned now: async */
  NEAR(B->now(c) - t0, 0.002);
  OK(B->host_unregister(c, pg));
  CHECK(B->host_unregister(c, pg) == PS_ERR_NOT_REGISTERED);
  CHECK(B->host_register(c, h, 4096) == PS_ERR_INVALID_VALUE);
  OK(B->free_pageable(c, pg));
  OK(B->free_pinned(c, h));
  CHECK(B->free_pinned(c, h) == PS_ERR_INVALID_VALUE);
  OK(B->free_device(c, big));
  B->close(c);
}

/* A block freed on s1 while s2 still writes it (after a long spin) is
 * reused on s1; the write that ends later wins. */
static void test_clobber(void) {
  void *c = open_sim(0);
  ps_stream *s1, *s2;
  ps_pool *p = NULL;
  ps_addr a, b;
  ps_alloc_note note;
  int64_t bad;
  uint8_t x;
  OK(B->stream_create(c, 0, 0, 0, &s1));
  OK(B->stream_create(c, 0, 0, 0, &s2));
  p = new_pool(c, 0, 0);
  OK(B->pool_alloc(c, p, MiB, s1, &a, NULL));
  OK(B->fill(c, a, MiB, 0x11, s1));
  OK(B->stream_sync(c, s1));
  OK(B->spin(c, s2, 10));
  OK(B->fill(c, a, MiB, 0x22, s2));            /* ends after 10 ms */
  OK(B->pool_free(c, a, s1));
  OK(B->pool_alloc(c, p, MiB, s1, &b, &note));
  CHECK(b == a && note.rule == PS_RULE_STREAM_ORDER && note.reused_block == a);
  OK(B->fill(c, b, MiB, 0x33, s1));            /* ends at once */
  OK(B->read(c, PS_KIND_POOL, b, &x, 1, s1));
  CHECK(x == 0x33);
  OK(B->device_sync(c));
  OK(B->verify(c, b, MiB, 0x22, s1, &bad));
  CHECK(bad == -1);
  B->close(c);
}

/* ---- pools (docs/calibration.md, E1-E9) ---- */

/* Two non-blocking streams and a fresh pool with the given threshold. */
static void *pool_env(uint64_t memory, uint64_t max, uint64_t threshold,
                      ps_stream **s1, ps_stream **s2, ps_pool **p) {
  void *c = open_sim(memory);
  OK(B->stream_create(c, 0, 0, 0, s1));
  OK(B->stream_create(c, 0, 0, 0, s2));
  *p = new_pool(c, max, threshold);
  return c;
}

static void policies(void *c, ps_pool *p, int follow, int opp, int internal) {
  OK(B->pool_set(c, p, PS_ATTR_FOLLOW_EVENT_DEPS, (uint64_t)follow));
  OK(B->pool_set(c, p, PS_ATTR_OPPORTUNISTIC, (uint64_t)opp));
  OK(B->pool_set(c, p, PS_ATTR_INTERNAL_DEPS, (uint64_t)internal));
}

#define RESERVED(c, p) attr(c, p, PS_ATTR_RESERVED_CURRENT)
#define USED(c, p) attr(c, p, PS_ATTR_USED_CURRENT)

/* E1: 32 MiB chunks for every size, used is exact, blocks pack back to
 * back across chunk boundaries; E8: host pools alike. */
static void test_granularity(void) {
  static const uint64_t req[] = { 1, 512, 1000, 4096, MiB, 2 * MiB, 2 * MiB + 1,
    31 * MiB, 32 * MiB, 32 * MiB + 1, 33 * MiB, 64 * MiB + 1, 100 * MiB, GiB + 1 };
  static const uint64_t res[] = { 32, 32, 32, 32, 32, 32, 32, 32, 32, 64, 64, 96, 128,
    1024 + 32 };
  ps_stream *s, *s2;
  ps_pool *p;
  ps_addr a, prev = 0;
  for (int loc = 0; loc < 2; loc++)
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
      void *c = pool_env(0, 0, 0, &s, &s2, &p);
      if (loc) {
        ps_pool_props hp = { PS_LOCATION_HOST, 0, 0 };
        OK(B->pool_create(c, &hp, &p));
      }
      OK(B->pool_alloc(c, p, req[i], s, &a, NULL));
      CHECK(RESERVED(c, p) == res[i] * MiB);
      CHECK(USED(c, p) == req[i]);
      CHECK(a % (2 * MiB) == 0);                 /* arena base: 2 MiB aligned */
      CHECK(loc ? a < 0x7f0000000000ull : a >= 0x7f0000000000ull);
      B->close(c);
    }

  /* series: (count, size) -> allocation numbers where reserved changed */
  static const struct { int n; uint64_t size; int at[7]; } ser[] = {
    { 4096, 1024, { 1 } }, { 8192, 512, { 1 } }, { 40, MiB, { 1, 33 } },
    { 24, 3 * MiB, { 1, 11, 22 } }, { 6, 40 * MiB, { 1, 2, 3, 4, 5, 6 } } };
  static const uint64_t res40[] = { 64, 96, 128, 160, 224, 256 };
  for (size_t k = 0; k < sizeof ser / sizeof ser[0]; k++) {
    void *c = pool_env(0, 0, 0, &s, &s2, &p);
    uint64_t last = 0;
    int changes = 0, good = 1;
    ps_addr first = 0;
    for (int i = 1; i <= ser[k].n; i++) {
      OK(B->pool_alloc(c, p, ser[k].size, s, &a, NULL));
      if (i == 1) first = a;
      good &= a == first + (uint64_t)(i - 1) * ser[k].size;   /* exact stride */
      uint64_t r = RESERVED(c, p);
      if (r != last) {
        good &= changes < 7 && ser[k].at[changes] == i;
        if (ser[k].size == 40 * MiB) good &= r == res40[i - 1] * MiB;
        changes++, last = r;
      }
      good &= r == sim_round_up((uint64_t)i * ser[k].size, 32 * MiB);
    }
    CHECK(good);
    CHECK(USED(c, p) == (uint64_t)ser[k].n * ser[k].size);
    B->close(c);
  }
  (void)prev;
}

/* E2: 512 B placement, best fit, splitting, coalescing, one arena. */
static void test_placement(void) {
  ps_stream *s, *s2;
  ps_pool *p;
  ps_addr x[8], y, z, base;
  ps_alloc_note n;
  void *c = pool_env(0, 0, UINT64_MAX, &s, &s2, &p);
  static const uint64_t sz[] = { 1024, 1024, 3000, MiB, 1, 4 * MiB, 1024 };
  static const uint64_t off[] = { 0, 1024, 2048, 5120, 1053696, 1054208, 5248512 };
  for (int i = 0; i < 7; i++) OK(B->pool_alloc(c, p, sz[i], s, &x[i], NULL));
  base = x[0];
  for (int i = 0; i < 7; i++) CHECK(x[i] - base == off[i]);
  CHECK(USED(c, p) == 5248953);
  OK(B->pool_free(c, x[1], s));
  OK(B->pool_alloc(c, p, 512, s, &y, &n));
  CHECK(y == base + 1024 && n.rule == PS_RULE_STREAM_ORDER && n.reused_block == y);
  OK(B->pool_alloc(c, p, 1024, s, &z, &n));
  CHECK(z == base + 5249536 && n.rule == PS_RULE_NONE);
  B->close(c);

  /* fit v1: free A (1 MiB) and C (4 MiB); 1 MiB takes A, then C, not the tail */
  ps_addr A, Bk, C, D;
  c = pool_env(0, 0, UINT64_MAX, &s, &s2, &p);
  OK(B->pool_alloc(c, p, MiB, s, &A, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &Bk, NULL));
  OK(B->pool_alloc(c, p, 4 * MiB, s, &C, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &D, NULL));
  OK(B->pool_free(c, A, s));
  OK(B->pool_free(c, C, s));
  OK(B->pool_alloc(c, p, MiB, s, &y, NULL));
  CHECK(y == A);
  OK(B->pool_alloc(c, p, MiB, s, &y, NULL));
  CHECK(y == C);
  B->close(c);

  /* fit v3: a 4 MiB hole at 0 and a 1 MiB hole at 5 MiB: best fit wins */
  c = pool_env(0, 0, UINT64_MAX, &s, &s2, &p);
  OK(B->pool_alloc(c, p, 4 * MiB, s, &A, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &Bk, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &C, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &D, NULL));
  OK(B->pool_free(c, A, s));
  OK(B->pool_free(c, C, s));
  OK(B->pool_alloc(c, p, MiB, s, &y, NULL));
  CHECK(y == A + 5 * MiB && y == C);
  B->close(c);

  /* split: carve from the start */
  c = pool_env(0, 0, UINT64_MAX, &s, &s2, &p);
  OK(B->pool_alloc(c, p, 4 * MiB, s, &A, NULL));
  OK(B->pool_free(c, A, s));
  OK(B->pool_alloc(c, p, MiB, s, &y, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &z, NULL));
  CHECK(y == A && z == A + MiB);
  B->close(c);

  /* coalesce: two adjacent 1 MiB frees take a 2 MiB request, either order,
   * with a sync between them too */
  for (int order = 0; order < 2; order++) {
    c = pool_env(0, 0, UINT64_MAX, &s, &s2, &p);
    OK(B->pool_alloc(c, p, MiB, s, &A, NULL));
    OK(B->pool_alloc(c, p, MiB, s, &Bk, NULL));
    OK(B->pool_alloc(c, p, MiB, s, &C, NULL));      /* the tail is not A's */
    OK(B->pool_free(c, order ? Bk : A, s));
    if (order) OK(B->stream_sync(c, s));
    OK(B->pool_free(c, order ? A : Bk, s));
    OK(B->pool_alloc(c, p, 2 * MiB, s, &y, &n));
    CHECK(y == A && n.rule == PS_RULE_STREAM_ORDER);
    B->close(c);
  }

  /* mixed sizes share the arena; a 32 MiB block sits at offset 1024 */
  static const uint64_t msz[] = { 1024, 32 * MiB, 1024, 64 * MiB, 1024, 40 * MiB };
  static const uint64_t moff[] = { 0, 1024, 33555456, 33556480, 100665344, 100666368 };
  static const uint64_t mres[] = { 32, 64, 64, 128, 128, 160 };
  c = pool_env(0, 0, UINT64_MAX, &s, &s2, &p);
  for (int i = 0; i < 6; i++) {
    OK(B->pool_alloc(c, p, msz[i], s, &x[i], NULL));
    CHECK(x[i] - x[0] == moff[i]);
    CHECK(RESERVED(c, p) == mres[i] * MiB);
  }
  B->close(c);

  /* 32 MiB freed, 1 KiB lands at its start, the next 32 MiB at +1024 */
  c = pool_env(0, 0, UINT64_MAX, &s, &s2, &p);
  OK(B->pool_alloc(c, p, 32 * MiB, s, &A, NULL));
  OK(B->pool_free(c, A, s));
  OK(B->pool_alloc(c, p, 1024, s, &y, NULL));
  OK(B->pool_alloc(c, p, 32 * MiB, s, &z, NULL));
  CHECK(y == A && z == A + 1024 && RESERVED(c, p) == 64 * MiB);
  /* a block spanning two chunks is usable end to end */
  int64_t bad;
  OK(B->fill(c, z, 32 * MiB, 0x5a, s));
  OK(B->verify(c, z, 32 * MiB, 0x5a, s, &bad));
  CHECK(bad == -1);
  B->close(c);
}

/* A run of free space is only as reusable as each of its records: a
 * pending free next to a completed one is not taken by another stream;
 * and a free still pending on the device joins only frees of its own
 * stream (measured on an H100: scripts/calibrate/probe_free_merge.lua), so even once s3
 * may use it, it does not join its neighbour into a 2 MiB run. */
static void test_coalesce_eligibility(void) {
  ps_stream *s1, *s2, *s3;
  ps_pool *p;
  ps_event *e;
  ps_addr a, b, d, y;
  ps_alloc_note n;
  void *c = pool_env(0, 0, UINT64_MAX, &s1, &s2, &p);
  OK(B->stream_create(c, 0, 0, 0, &s3));
  OK(B->event_create(c, 0, &e));
  OK(B->pool_alloc(c, p, MiB, s1, &a, NULL));
  OK(B->pool_alloc(c, p, MiB, s2, &b, NULL));
  OK(B->pool_alloc(c, p, 30 * MiB, s2, &d, NULL));   /* fills the chunk */
  OK(B->spin(c, s1, 10));
  OK(B->pool_free(c, a, s1));                        /* pending 10 ms */
  OK(B->pool_free(c, b, s2));                        /* done at once */
  OK(B->pool_alloc(c, p, 2 * MiB, s3, &y, &n));
  CHECK(y != a && RESERVED(c, p) == 64 * MiB);       /* grew instead */
  OK(B->pool_free(c, y, s3));
  OK(B->event_record(c, e, s1));
  OK(B->stream_wait(c, s3, e));                      /* now s3 may take a too */
  OK(B->pool_alloc(c, p, 2 * MiB, s3, &y, &n));
  CHECK(y != a && y != b);
  OK(B->pool_alloc(c, p, MiB, s3, &y, &n));         /* a alone fits 1 MiB */
  CHECK(y == a && n.rule == PS_RULE_EVENT_DEP && n.reused_block == a);
  B->close(c);
}

/* E6: which frees another stream reuses. */
static void test_rules(void) {
  ps_stream *s1, *s2;
  ps_pool *p;
  ps_event *e;
  ps_addr a, b;
  ps_alloc_note n;
  int idle;

  /* stream order, and 0 bytes */
  void *c = pool_env(0, 0, UINT64_MAX, &s1, &s2, &p);
  OK(B->pool_alloc(c, p, 16 * MiB, s1, &a, &n));
  CHECK(n.rule == PS_RULE_NONE && n.reused_block == 0);
  OK(B->spin(c, s1, 10));
  OK(B->pool_free(c, a, s1));
  OK(B->pool_alloc(c, p, 16 * MiB, s1, &b, &n));
  CHECK(b == a && n.rule == PS_RULE_STREAM_ORDER && n.reused_block == a);
  CHECK(B->pool_alloc(c, p, 0, s1, &a, &n) == PS_OK && a == 0);
  B->close(c);

  /* a) free pending: a new block next to it; s2 is not made to wait */
  c = pool_env(0, 0, 0, &s1, &s2, &p);
  OK(B->pool_alloc(c, p, 16 * MiB, s1, &a, NULL));
  OK(B->spin(c, s1, 50));
  OK(B->pool_free(c, a, s1));
  OK(B->pool_alloc(c, p, 16 * MiB, s2, &b, &n));
  CHECK(b == a + 16 * MiB && n.rule == PS_RULE_NONE && RESERVED(c, p) == 32 * MiB);
  OK(B->stream_query(c, s2, &idle));
  CHECK(idle);
  B->close(c);

  /* b) c) opportunistic: s1 idle, with and without the policy; g) only once
   * the free has run on the device */
  for (int opp = 1; opp >= 0; opp--) {
    c = pool_env(0, 0, 0, &s1, &s2, &p);
    policies(c, p, 1, opp, opp);
    OK(B->pool_alloc(c, p, 16 * MiB, s1, &a, NULL));
    OK(B->pool_free(c, a, s1));
    OK(B->pool_alloc(c, p, 16 * MiB, s2, &b, &n));   /* b2: no sleep at all */
    if (opp) CHECK(b == a && n.rule == PS_RULE_OPPORTUNISTIC && n.reused_block == a);
    else CHECK(b != a && n.rule == PS_RULE_NONE);
    B->close(c);
  }
  c = pool_env(0, 0, 0, &s1, &s2, &p);
  OK(B->pool_alloc(c, p, 16 * MiB, s1, &a, NULL));
  OK(B->spin(c, s1, 20));
  OK(B->pool_free(c, a, s1));
  OK(B->sleep(c, 18));
  OK(B->pool_alloc(c, p, 16 * MiB, s2, &b, &n));
  CHECK(b != a);
  OK(B->sleep(c, 2.2));
  OK(B->pool_alloc(c, p, 16 * MiB, s2, &b, &n));
  CHECK(b == a && n.rule == PS_RULE_OPPORTUNISTIC);
  B->close(c);

  /* d) d2) d4) event dependency, even while the free is pending */
  for (int k = 0; k < 3; k++) {
    int follow = k != 1;
    c = pool_env(0, 0, 0, &s1, &s2, &p);
    OK(B->event_create(c, 0, &e));
    policies(c, p, follow, k == 0, k == 0);
    OK(B->pool_alloc(c, p, 16 * MiB, s1, &a, NULL));
    OK(B->spin(c, s1, 50));
    OK(B->pool_free(c, a, s1));
    OK(B->event_record(c, e, s1));
    OK(B->stream_wait(c, s2, e));
    OK(B->pool_alloc(c, p, 16 * MiB, s2, &b, &n));
    if (follow) CHECK(b == a && n.rule == PS_RULE_EVENT_DEP && n.reused_block == a);
    else CHECK(b != a && n.rule == PS_RULE_NONE);
    OK(B->stream_query(c, s2, &idle));
    CHECK(!idle);                                    /* waits for e anyway */
    B->close(c);
  }

  /* e) all policies 0: a host sync makes the free reusable; e2) a sleep not */
  for (int sync = 1; sync >= 0; sync--) {
    c = pool_env(0, 0, UINT64_MAX, &s1, &s2, &p);
    policies(c, p, 0, 0, 0);
    OK(B->pool_alloc(c, p, 16 * MiB, s1, &a, NULL));
    OK(B->spin(c, s1, 50));
    OK(B->pool_free(c, a, s1));
    if (sync) OK(B->stream_sync(c, s1));
    else OK(B->sleep(c, 100));
    OK(B->pool_alloc(c, p, 16 * MiB, s2, &b, &n));
    if (sync) CHECK(b == a && n.rule == PS_RULE_HOST_SYNC && n.reused_block == a);
    else CHECK(b != a && n.rule == PS_RULE_NONE);
    B->close(c);
  }

  /* f) internal dependencies, only when the pool cannot grow (max_size) */
  for (int internal = 0; internal < 2; internal++) {
    ps_addr x;
    c = pool_env(0, 32 * MiB, 0, &s1, &s2, &p);
    policies(c, p, 1, 1, internal);
    OK(B->pool_alloc(c, p, 16 * MiB, s1, &a, NULL));
    OK(B->pool_alloc(c, p, 16 * MiB, s1, &x, NULL));
    OK(B->spin(c, s1, 200));
    OK(B->pool_free(c, a, s1));
    double t = B->now(c);
    int st = B->pool_alloc(c, p, 16 * MiB, s2, &b, &n);
    CHECK(B->now(c) - t < 0.006);                    /* returns at once */
    OK(B->stream_query(c, s2, &idle));
    if (internal) {
      CHECK(st == PS_OK && b == a && n.rule == PS_RULE_INTERNAL_DEP && n.reused_block == a);
      CHECK(!idle);
      OK(B->stream_sync(c, s2));
      CHECK(B->now(c) >= t + 200 - 0.01);            /* s2 waited for s1 */
    } else {
      CHECK(st == PS_ERR_MEMORY_ALLOCATION && idle);
      CHECK(USED(c, p) == 16 * MiB && RESERVED(c, p) == 32 * MiB);
    }
    B->close(c);
  }

  /* f') the device full: the same */
  c = pool_env(64 * MiB, 0, 0, &s1, &s2, &p);
  OK(B->pool_alloc(c, p, 64 * MiB, s1, &a, NULL));
  OK(B->spin(c, s1, 10));
  OK(B->pool_free(c, a, s1));
  OK(B->pool_alloc(c, p, MiB, s2, &b, &n));
  CHECK(b == a && n.rule == PS_RULE_INTERNAL_DEP);
  B->close(c);
}

/* One scenario of E3: 64 MiB allocated and freed on s, then a trigger. */
static void *e3(ps_stream **s, ps_stream **other, ps_pool **p, ps_event **e,
                double spin) {
  ps_addr a, b;
  void *c = pool_env(0, 0, 0, s, other, p);
  OK(B->event_create(c, 0, e));
  OK(B->pool_alloc(c, *p, 32 * MiB, *s, &a, NULL));
  OK(B->pool_alloc(c, *p, 32 * MiB, *s, &b, NULL));
  if (spin > 0) OK(B->spin(c, *s, spin));
  OK(B->pool_free(c, a, *s));
  OK(B->pool_free(c, b, *s));
  OK(B->event_record(c, *e, *s));
  if (spin <= 0) OK(B->sleep(c, 10));
  CHECK(RESERVED(c, *p) == 64 * MiB);
  return c;
}

/* E3: only a host sync that covers the free releases. */
static void test_release_triggers(void) {
  ps_stream *s, *o;
  ps_pool *p;
  ps_event *e;
  ps_addr m, x, pg;
  int idle;
  for (int trig = 0; trig < 10; trig++) {
    void *c = e3(&s, &o, &p, &e, 0);
    switch (trig) {
    case 0: OK(B->sleep(c, 20)); break;
    case 1: OK(B->stream_query(c, s, &idle)); CHECK(idle); break;
    case 2: OK(B->event_query(c, e, &idle)); CHECK(idle); break;
    case 3: OK(B->stream_sync(c, o)); break;
    case 4: OK(B->stream_query(c, o, &idle)); break;
    case 5: OK(B->malloc_device(c, MiB, &m)); OK(B->free_device(c, m)); break;
    case 6: OK(B->alloc_pageable(c, 16, &pg)); OK(B->malloc_device(c, MiB, &m));
            OK(B->copy(c, m, pg, 16, NULL)); break;   /* synchronous copy */
    case 7: OK(B->spin(c, s, 0)); break;              /* a kernel on s */
    case 8: OK(B->spin(c, o, 0)); OK(B->stream_sync(c, o)); break;
    case 9: policies(c, p, 0, 0, 0);                  /* another pool alloc */
            OK(B->pool_alloc(c, p, MiB, o, &x, NULL));
            CHECK(RESERVED(c, p) == 96 * MiB); break;
    }
    CHECK(trig == 9 || RESERVED(c, p) == 64 * MiB);
    B->close(c);
  }
  for (int trig = 0; trig < 3; trig++)
    for (int pending = 0; pending < 2; pending++) {
      void *c = e3(&s, &o, &p, &e, pending ? 50 : 0);
      double t = B->now(c);
      if (pending) {
        OK(B->stream_sync(c, o));                     /* another stream */
        OK(B->sleep(c, 80));
        OK(B->stream_query(c, s, &idle));
        CHECK(idle && RESERVED(c, p) == 64 * MiB);
        t = B->now(c) - 80 - 50;
      }
      if (trig == 0) OK(B->stream_sync(c, s));
      else if (trig == 1) OK(B->event_sync(c, e));
      else OK(B->device_sync(c));
      CHECK(RESERVED(c, p) == 0 && USED(c, p) == 0);
      /* sync cost plus release: 10 us + 1.07 ms/GiB (curves: 80.9 us) */
      if (!pending) NEAR(B->now(c) - t, (1500 + 10000 + 1.07e6 / 16) / 1e6);
      B->close(c);
    }
}

/* E4: the release threshold keeps the largest multiple of 32 MiB <= it;
 * the lowest chunks stay; live blocks pin their chunks. */
static void test_threshold(void) {
  static const uint64_t th[] = { 40 * MiB, 33 * MiB, 32 * MiB, 17 * MiB, 16 * MiB, 1 };
  ps_stream *s, *s2;
  ps_pool *p;
  ps_addr a[8], y;
  for (size_t k = 0; k < 6; k++) {
    void *c = pool_env(0, 0, th[k], &s, &s2, &p);
    for (int i = 0; i < 8; i++) OK(B->pool_alloc(c, p, 16 * MiB, s, &a[i], NULL));
    for (int i = 0; i < 8; i++) OK(B->pool_free(c, a[i], s));
    CHECK(RESERVED(c, p) == 128 * MiB);
    OK(B->stream_sync(c, s));
    CHECK(RESERVED(c, p) == (th[k] >= 32 * MiB ? 32 * MiB : 0));
    for (int i = 0; i < 3; i++) {   /* re-allocations: #0, #1, then #2's */
      OK(B->pool_alloc(c, p, 16 * MiB, s, &y, NULL));
      CHECK(y == a[i]);
    }
    B->close(c);
  }
  void *c = pool_env(0, 0, 50 * MiB, &s, &s2, &p);
  OK(B->pool_alloc(c, p, 16 * MiB, s, &a[0], NULL));
  OK(B->pool_alloc(c, p, 32 * MiB, s, &a[1], NULL));
  OK(B->pool_alloc(c, p, 48 * MiB, s, &a[2], NULL));
  CHECK(RESERVED(c, p) == 96 * MiB);
  for (int i = 0; i < 3; i++) OK(B->pool_free(c, a[i], s));
  OK(B->stream_sync(c, s));
  CHECK(RESERVED(c, p) == 32 * MiB);
  B->close(c);

  /* a live 1 KiB block keeps chunk 0 */
  c = pool_env(0, 0, 0, &s, &s2, &p);
  OK(B->pool_alloc(c, p, 1024, s, &a[0], NULL));
  OK(B->pool_alloc(c, p, MiB, s, &a[1], NULL));
  for (int i = 2; i < 6; i++) OK(B->pool_alloc(c, p, 16 * MiB, s, &a[i], NULL));
  CHECK(RESERVED(c, p) == 96 * MiB);
  for (int i = 1; i < 6; i++) OK(B->pool_free(c, a[i], s));
  OK(B->stream_sync(c, s));
  CHECK(RESERVED(c, p) == 32 * MiB && USED(c, p) == 1024);
  OK(B->pool_free(c, a[0], s));
  OK(B->stream_sync(c, s));
  CHECK(RESERVED(c, p) == 0);
  /* a live 1 KiB block inside a freed 32 MiB block keeps its chunk */
  OK(B->pool_alloc(c, p, 32 * MiB, s, &a[0], NULL));
  OK(B->pool_free(c, a[0], s));
  OK(B->pool_alloc(c, p, 1024, s, &a[1], NULL));
  OK(B->stream_sync(c, s));
  CHECK(RESERVED(c, p) == 32 * MiB);
  /* which syncs release is a profile flag */
  OK(B->pool_free(c, a[1], s));
  OK(B->option_set(c, "release_on_stream_sync", 0));
  OK(B->stream_sync(c, s));
  CHECK(RESERVED(c, p) == 32 * MiB);
  OK(B->option_set(c, "release_on_device_sync", 0));
  OK(B->device_sync(c));
  CHECK(RESERVED(c, p) == 32 * MiB);
  ps_event *e;
  OK(B->event_create(c, 0, &e));
  OK(B->event_record(c, e, s));
  OK(B->event_sync(c, e));
  CHECK(RESERVED(c, p) == 0);
  B->close(c);
}

/* E5: trim keeps ceil(keep / 32 MiB) chunks; only retired frees. */
static void test_trim(void) {
  static const uint64_t keep[] = { 0, 10 * MiB, 33 * MiB, 48 * MiB };
  static const uint64_t left[] = { 0, 32 * MiB, 64 * MiB, 64 * MiB };
  ps_stream *s, *s2;
  ps_pool *p;
  ps_addr a[8];
  for (int k = -1; k < 4; k++) {
    void *c = pool_env(0, 0, UINT64_MAX, &s, &s2, &p);
    for (int i = 0; i < 8; i++) OK(B->pool_alloc(c, p, 16 * MiB, s, &a[i], NULL));
    for (int i = 0; i < 8; i++) OK(B->pool_free(c, a[i], s));
    OK(B->stream_sync(c, s));
    CHECK(RESERVED(c, p) == 128 * MiB);
    if (k < 0) {                   /* 100 -> 33 -> 10 -> 0 MiB */
      static const uint64_t kk[] = { 100 * MiB, 33 * MiB, 10 * MiB, 0 };
      static const uint64_t ll[] = { 128 * MiB, 64 * MiB, 32 * MiB, 0 };
      for (int i = 0; i < 4; i++) {
        OK(B->pool_trim(c, p, kk[i]));
        CHECK(RESERVED(c, p) == ll[i]);
      }
    } else {
      double t = B->now(c);
      OK(B->pool_trim(c, p, keep[k]));
      CHECK(RESERVED(c, p) == left[k]);
      NEAR(B->now(c) - t, (128 * MiB - left[k]) / (32.0 * MiB) * 0.04);  /* 40 us / 32 MiB */
    }
    CHECK(attr(c, p, PS_ATTR_RESERVED_HIGH) == 128 * MiB);
    B->close(c);
  }
  /* a live block's chunk stays; a free done on the GPU but not synced too */
  void *c = pool_env(0, 0, UINT64_MAX, &s, &s2, &p);
  OK(B->pool_alloc(c, p, 16 * MiB, s, &a[0], NULL));
  OK(B->pool_alloc(c, p, 64 * MiB, s, &a[1], NULL));
  OK(B->pool_free(c, a[1], s));
  OK(B->sleep(c, 10));
  OK(B->pool_trim(c, p, 0));
  CHECK(RESERVED(c, p) == 96 * MiB);
  OK(B->stream_sync(c, s));
  OK(B->pool_trim(c, p, 0));
  CHECK(RESERVED(c, p) == 32 * MiB);
  B->close(c);
}

/* E7: max_size rounds up to 32 MiB; exceeding it is a non-sticky OOM. */
static void test_max_size(void) {
  static const uint64_t max[] = { MiB, 3 * MiB, 33 * MiB, 64 * MiB, 64 * MiB + 1 };
  static const int fit[] = { 32, 32, 64, 64, 96 };
  ps_stream *s, *s2;
  ps_pool *p;
  ps_addr a, first = 0;
  for (int k = 0; k < 5; k++) {
    void *c = pool_env(0, max[k], 0, &s, &s2, &p);
    int n = 0;
    while (n < 200 && B->pool_alloc(c, p, MiB, s, &a, NULL) == PS_OK) {
      if (n == 0) first = a;
      n++;
    }
    CHECK(n == fit[k]);
    CHECK(USED(c, p) == (uint64_t)fit[k] * MiB && RESERVED(c, p) == USED(c, p));
    CHECK(B->pool_alloc(c, p, 1, s, &a, NULL) == PS_ERR_MEMORY_ALLOCATION);
    OK(B->pool_free(c, first, s));                   /* not sticky */
    OK(B->pool_alloc(c, p, MiB, s, &a, NULL));
    CHECK(a == first);
    B->close(c);
  }
  void *c = pool_env(0, 64 * MiB, 0, &s, &s2, &p);
  OK(B->pool_alloc(c, p, 64 * MiB, s, &a, NULL));
  CHECK(B->pool_alloc(c, p, 1, s, &first, NULL) == PS_ERR_MEMORY_ALLOCATION);
  OK(B->pool_free(c, a, s));
  OK(B->stream_sync(c, s));
  CHECK(B->pool_alloc(c, p, 64 * MiB + 1, s, &a, NULL) == PS_ERR_MEMORY_ALLOCATION);
  B->close(c);
}

static void test_counters_and_device(void) {
  void *c = open_sim(128 * MiB);
  ps_stream *s;
  ps_addr a, b, d, m;
  ps_device_info info;
  OK(B->stream_create(c, 0, 0, 0, &s));
  ps_pool *p = new_pool(c, 0, 0);
  OK(B->pool_alloc(c, p, 20 * MiB, s, &a, NULL));
  OK(B->pool_alloc(c, p, 20 * MiB, s, &b, NULL));
  OK(B->pool_free(c, a, s));
  CHECK(USED(c, p) == 20 * MiB);                     /* at free time */
  OK(B->pool_free(c, b, s));
  OK(B->device_sync(c));
  CHECK(RESERVED(c, p) == 0);
  CHECK(attr(c, p, PS_ATTR_RESERVED_HIGH) == 64 * MiB);
  CHECK(attr(c, p, PS_ATTR_USED_HIGH) == 40 * MiB);
  OK(B->pool_set(c, p, PS_ATTR_RESERVED_HIGH, 0));
  OK(B->pool_set(c, p, PS_ATTR_USED_HIGH, 0));
  CHECK(attr(c, p, PS_ATTR_RESERVED_HIGH) == 0 && attr(c, p, PS_ATTR_USED_HIGH) == 0);
  CHECK(B->pool_set(c, p, PS_ATTR_USED_HIGH, 5) == PS_ERR_INVALID_VALUE);
  CHECK(B->pool_set(c, p, PS_ATTR_USED_CURRENT, 0) == PS_ERR_INVALID_VALUE);
  OK(B->pool_alloc(c, p, 1, s, &a, NULL));
  CHECK(USED(c, p) == 1);

  /* The device: 128 MiB total; pool chunks and cudaMalloc count */
  OK(B->device_info(c, 0, &info));
  CHECK(info.total == 128 * MiB && info.free == 96 * MiB);
  CHECK(info.cc_major == 9 && info.pools_supported == 1);
  CHECK(strcmp(info.name, "poolsh sim (built-in profile)") == 0);
  OK(B->malloc_device(c, 94 * MiB, &m));
  CHECK(B->malloc_device(c, 4 * MiB, &d) == PS_ERR_MEMORY_ALLOCATION);
  ps_pool *dp;
  OK(B->pool_default(c, 0, &dp));
  CHECK(B->pool_alloc(c, dp, MiB, s, &d, NULL) == PS_ERR_MEMORY_ALLOCATION);
  OK(B->free_device(c, m));
  OK(B->pool_alloc(c, dp, MiB, s, &d, NULL));
  OK(B->device_info(c, 0, &info));
  CHECK(info.free == 64 * MiB);
  CHECK(B->option_set(c, "memory", 1e9) == PS_ERR_NOT_SUPPORTED);
  B->close(c);
}

static void test_destroy(void) {
  void *c = open_sim(0);
  ps_stream *s;
  ps_addr a;
  ps_device_info info;
  uint64_t v;
  OK(B->stream_create(c, 0, 0, 0, &s));
  ps_pool *p = new_pool(c, 0, UINT64_MAX), *dp;
  OK(B->pool_alloc(c, p, 4 * MiB, s, &a, NULL));
  OK(B->pool_destroy(c, p));
  CHECK(B->pool_get(c, p, PS_ATTR_USED_CURRENT, &v) == PS_ERR_INVALID_VALUE);
  CHECK(B->pool_alloc(c, p, 1, s, &a, NULL) == PS_ERR_INVALID_VALUE);
  CHECK(B->pool_destroy(c, p) == PS_ERR_INVALID_VALUE);
  OK(B->fill(c, a, 4 * MiB, 1, s));            /* still valid */
  OK(B->pool_free(c, a, s));
  OK(B->device_info(c, 0, &info));
  CHECK(info.free == info.total - 32 * MiB);   /* free still pending */
  OK(B->stream_sync(c, s));
  OK(B->device_info(c, 0, &info));
  CHECK(info.free == info.total);
  OK(B->pool_default(c, 0, &dp));
  CHECK(B->pool_destroy(c, dp) == PS_ERR_INVALID_VALUE);
  B->close(c);
}

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

/* Counts a failure when st is not PS_OK (in expressions). */
static int ok_at(int st, int line) {
  if (st != PS_OK) failures++, fprintf(stderr, "test_sim.c:%d: status %d\n", line, st);
  return st;
}

/* ms the call takes on c's host clock (t0 is the caller's double). */
#define TIMED(c, call) (t0 = B->now(c), ok_at((call), __LINE__), B->now(c) - t0)

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

/* A stream destroyed while its work runs: at threshold 0 its pools give
 * back the memory it freed when that work completes (H100: between 26 and
 * 31 ms after destroying a stream behind a 30 ms spin, the host only
 * sleeping and reading stats), not before, at no host cost; with
 * release_on_destroyed_stream_done 0, only at a sync; at threshold max
 * never. */
static void test_destroy_busy(void) {
  for (int mode = 0; mode < 3; mode++) {   /* 0: default, 1: flag off, 2: threshold max */
    void *c = open_sim(0);
    ps_stream *s, *o;
    ps_pool *p = new_pool(c, 0, mode == 2 ? UINT64_MAX : 0);
    ps_addr a;
    if (mode == 1) OK(B->option_set(c, "release_on_destroyed_stream_done", 0));
    OK(B->stream_create(c, 0, 0, 0, &s));
    OK(B->stream_create(c, 0, 0, 0, &o));
    OK(B->pool_alloc(c, p, 64 * MiB, s, &a, NULL));
    OK(B->spin(c, s, 30));
    OK(B->pool_free(c, a, s));
    double t0 = B->now(c), end = t0 + 30 - opt(c, "pool_free_ns") / 1e6;
    OK(B->stream_destroy(c, s));
    CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 64 * MiB);
    OK(B->sleep(c, end - B->now(c) - 0.001));          /* just before */
    CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 64 * MiB);
    OK(B->sleep(c, 0.002));                            /* just after */
    double before = B->now(c);
    uint64_t r = attr(c, p, PS_ATTR_RESERVED_CURRENT);
    NEAR(B->now(c), before);                           /* nothing charged */
    CHECK(r == (mode == 0 ? 0 : 64 * MiB));
    OK(B->stream_sync(c, o));                          /* another stream: no */
    CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == r);
    OK(B->device_sync(c));
    CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == (mode == 2 ? 64 * MiB : 0));
    B->close(c);
  }
  /* reused by another stream once released: the host knows the free */
  void *c = open_sim(0);
  ps_stream *s, *o;
  ps_pool *p = new_pool(c, 0, UINT64_MAX);
  ps_addr a, b;
  ps_alloc_note note;
  OK(B->stream_create(c, 0, 0, 0, &s));
  OK(B->stream_create(c, 0, 0, 0, &o));
  policies(c, p, 0, 0, 0);
  OK(B->pool_alloc(c, p, MiB, s, &a, NULL));
  OK(B->spin(c, s, 10));
  OK(B->pool_free(c, a, s));
  OK(B->stream_destroy(c, s));
  OK(B->pool_alloc(c, p, MiB, o, &b, &note));
  CHECK(b != a);                                       /* still pending */
  OK(B->sleep(c, 11));
  ps_addr x;
  OK(B->pool_alloc(c, p, MiB, o, &x, &note));
  CHECK(x == a && note.rule == PS_RULE_HOST_SYNC);
  B->close(c);
}

/* Interrupted waits return PS_INTERRUPTED, move no clock, keep work. */
static int stop_flag;
static int stop_now(void *ud) { (void)ud; return stop_flag; }

static void test_interrupts(void) {
  ps_config cfg = { 0, 0, stop_now, NULL };
  void *c = NULL;
  ps_stream *s;
  ps_event *e;
  ps_pool *p;
  ps_addr a;
  int64_t bad;
  uint8_t x;
  int idle;
  OK(B->open(&cfg, &c));
  OK(B->stream_create(c, 0, 0, 0, &s));
  OK(B->event_create(c, 0, &e));
  p = new_pool(c, 0, 0);
  OK(B->pool_alloc(c, p, MiB, s, &a, NULL));
  stop_flag = 1;
  OK(B->stream_sync(c, s));                    /* nothing to wait for */
  OK(B->sleep(c, 0));
  OK(B->spin(c, s, 200));
  OK(B->event_record(c, e, s));
  OK(B->pool_free(c, a, s));
  double t = B->now(c);
  CHECK(B->stream_sync(c, s) == PS_INTERRUPTED);
  CHECK(B->event_sync(c, e) == PS_INTERRUPTED);
  CHECK(B->device_sync(c) == PS_INTERRUPTED);
  CHECK(B->sleep(c, 1000) == PS_INTERRUPTED);
  CHECK(B->now(c) == t);
  CHECK(B->verify(c, a, 0, 0, s, &bad) == PS_INTERRUPTED);
  CHECK(B->read(c, PS_KIND_POOL, a, &x, 1, s) == PS_INTERRUPTED);
  OK(B->stream_query(c, s, &idle));
  CHECK(!idle && RESERVED(c, p) == 32 * MiB);  /* nothing retired */
  stop_flag = 0;
  OK(B->stream_sync(c, s));
  CHECK(B->now(c) >= 200 && RESERVED(c, p) == 0);
  CHECK(strcmp(B->error_string(PS_INTERRUPTED), "interrupted by the user") == 0);
  B->close(c);
}

/* ---- errors, options ---- */

static void test_errors(void) {
  void *c = open_sim(0);
  ps_pool *p;
  ps_device_info info;
  int n;
  double v;
  ps_pool_props bad = { PS_LOCATION_DEVICE, 3, 0 };
  CHECK(B->probe() == PS_OK);
  CHECK(strcmp(B->name, "sim") == 0);
  OK(B->device_count(c, &n));
  CHECK(n == 1);
  CHECK(B->device_info(c, 1, &info) == PS_ERR_INVALID_DEVICE);
  CHECK(B->pool_default(c, 1, &p) == PS_ERR_INVALID_DEVICE);
  CHECK(B->pool_create(c, &bad, &p) == PS_ERR_INVALID_VALUE);
  CHECK(B->pool_alloc(c, (ps_pool *)&v, 1, NULL, &(ps_addr){0}, NULL) == PS_ERR_INVALID_VALUE);
  CHECK(B->spin(c, (ps_stream *)&v, 1) == PS_ERR_INVALID_RESOURCE);
  CHECK(strcmp(B->error_name(2), "cudaErrorMemoryAllocation") == 0);
  CHECK(strcmp(B->error_string(2), "out of memory") == 0);
  CHECK(strcmp(B->error_name(1), "cudaErrorInvalidValue") == 0);
  CHECK(strcmp(B->error_string(1), "invalid argument") == 0);
  CHECK(strcmp(B->error_name(400), "cudaErrorInvalidResourceHandle") == 0);
  CHECK(strcmp(B->error_name(600), "cudaErrorNotReady") == 0);
  CHECK(strcmp(B->error_string(PS_INTERRUPTED), "interrupted by the user") == 0);
  CHECK(B->free_device(c, 0x7f0000001000ull) == PS_ERR_INVALID_VALUE);
  CHECK(B->sleep(c, -1) == PS_ERR_INVALID_VALUE);

  /* options */
  const char *names[64];
  int k = B->option_names(c, names, 64);
  CHECK(k >= 20 && k <= 64);
  for (int i = 0; i < k && i < 64; i++) OK(B->option_get(c, names[i], &v));
  OK(B->option_get(c, "memory", &v));
  CHECK(v == 80.0 * GiB);
  OK(B->option_get(c, "pool_granularity", &v));
  CHECK(v == 32.0 * MiB);
  CHECK(B->option_get(c, "nope", &v) == PS_ERR_INVALID_VALUE);
  CHECK(B->option_set(c, "nope", 1) == PS_ERR_INVALID_VALUE);
  CHECK(B->option_set(c, "bw_d2d", 0) == PS_ERR_INVALID_VALUE);
  OK(B->option_set(c, "memory", 16.0 * GiB));   /* nothing mapped yet */
  OK(B->device_info(c, 0, &info));
  CHECK(info.total == 16 * GiB);
  OK(B->option_set(c, "pool_granularity", 2.0 * MiB));   /* still an option */
  CHECK(B->option_get(c, "pool_min_chunk", &v) == PS_ERR_INVALID_VALUE);
  ps_addr a;
  OK(B->pool_default(c, 0, &p));
  OK(B->pool_alloc(c, p, 1, NULL, &a, NULL));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 2 * MiB);
  B->close(c);
}

/* close() with everything still alive, work queued, frees nothing twice
 * and leaks nothing (run under valgrind). */
static void test_close_live(void) {
  void *c = open_sim(0);
  ps_stream *s;
  ps_event *e;
  ps_pool *p;
  ps_addr a, h, m, g;
  uint8_t buf[100] = { 1 };
  OK(B->stream_create(c, 0, 0, 0, &s));
  OK(B->event_create(c, 1, &e));
  ps_pool_props hp = { PS_LOCATION_HOST, 0, 0 };
  OK(B->pool_create(c, &hp, &p));
  OK(B->pool_alloc(c, p, 5 * MiB, s, &a, NULL));
  CHECK(a < 0x7f0000000000ull);                /* host pool: host VA */
  OK(B->alloc_pinned(c, 100, PS_PINNED_MAPPED, &h));
  OK(B->alloc_pageable(c, 100, &g));
  OK(B->malloc_device(c, 100, &m));
  OK(B->write(c, PS_KIND_PINNED, h, buf, 100, NULL));
  OK(B->spin(c, s, 100));
  OK(B->copy(c, a, h, 100, s));                /* queued, not landed */
  OK(B->copy(c, m, a, 100, s));
  OK(B->event_record(c, e, s));
  OK(B->pool_free(c, a, s));
  B->close(c);
}

/* stream_last_span: the last op's queue time, start and end, asked
 * without moving the clock; an event wait delays the start. */
static void test_last_span(void) {
  void *c = open_sim(0);
  classic(c);
  ps_stream *s1 = NULL, *s2 = NULL;
  ps_event *e = NULL;
  OK(B->stream_create(c, 0, 0, 0, &s1));
  OK(B->stream_create(c, 0, 0, 0, &s2));
  OK(B->event_create(c, 0, &e));
  double q = -1, a = -1, b = -1;
  CHECK(B->stream_last_span(c, s1, &q, &a, &b) == PS_ERR_NOT_READY);
  CHECK(B->stream_last_span(c, NULL, &q, &a, &b) == PS_ERR_NOT_READY);
  CHECK(B->stream_last_span(c, s1, NULL, &a, &b) == PS_ERR_INVALID_VALUE);
  OK(B->spin(c, s1, 5));
  double now = B->now(c);
  OK(B->stream_last_span(c, s1, &q, &a, &b));
  NEAR(B->now(c), now);                        /* the query moves no clock */
  NEAR(q, 0.002);                              /* queued after the call's 2 us */
  NEAR(a, 0.002);
  NEAR(b, 5.002);
  OK(B->event_record(c, e, s1));
  OK(B->stream_wait(c, s2, e));
  ps_addr d = 0;
  OK(B->malloc_device(c, 3000, &d));
  OK(B->fill(c, d, 3000, 1, s2));              /* 3 us launch + 1 ns */
  OK(B->stream_last_span(c, s2, &q, &a, &b));
  CHECK(q < a);                                /* queued while s1 spun */
  NEAR(a, 5.002);                              /* after the spin it waited for */
  NEAR(b, 5.002 + 0.003001);
  NEAR(B->now(c), q);
  OK(B->free_device(c, d));
  OK(B->event_destroy(c, e));
  OK(B->stream_destroy(c, s1));
  OK(B->stream_destroy(c, s2));
  B->close(c);
}

/* pool_last_map: where the last growth mapped, and how much. */
static void test_last_map(void) {
  void *c = open_sim(0);
  ps_pool *p = new_pool(c, 0, 0);
  ps_addr at = 0, a = 0, b = 0;
  uint64_t n = 0;
  CHECK(B->pool_last_map(c, p, &at, &n) == PS_ERR_NOT_READY);
  OK(B->pool_alloc(c, p, 40 * MiB, NULL, &a, NULL));
  uint64_t first = attr(c, p, PS_ATTR_RESERVED_CURRENT);
  OK(B->pool_last_map(c, p, &at, &n));
  CHECK(at == a && n == first);
  OK(B->pool_alloc(c, p, 40 * MiB, NULL, &b, NULL));
  OK(B->pool_last_map(c, p, &at, &n));
  CHECK(n == attr(c, p, PS_ATTR_RESERVED_CURRENT) - first);
  CHECK(at == a + first && b < at && b + 40 * MiB > at);   /* b spans both mappings */
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == first + n);   /* asking changed nothing */
  OK(B->pool_free(c, a, NULL));
  OK(B->pool_free(c, b, NULL));
  OK(B->stream_sync(c, NULL));
  OK(B->pool_destroy(c, p));
  B->close(c);
}

int main(void) {
  test_clock();
  test_last_map();
  test_last_span();
  test_legacy();
  test_contents();
  test_clobber();
  test_granularity();
  test_placement();
  test_coalesce_eligibility();
  test_rules();
  test_release_triggers();
  test_threshold();
  test_trim();
  test_max_size();
  test_counters_and_device();
  test_destroy();
  test_timing();
  test_host_costs();
  test_host_pool_costs();
  test_destroy_busy();
  test_interrupts();
  test_errors();
  test_close_live();
  if (failures) fprintf(stderr, "test_sim: %d failure(s)\n", failures);
  else printf("test_sim: all passed\n");
  return failures != 0;
}
