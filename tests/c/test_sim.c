/*
 * test_sim.c: the sim backend's model: virtual clock, streams, events,
 * contents, pool reuse rules, release, errors. Exits non-zero on failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "sim/sim_internal.h"

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

/* ---- clock, streams, events ---- */

static void test_clock(void) {
  void *c = open_sim(0);
  ps_stream *s;
  ps_event *e1, *e2, *never, *untimed;
  int idle, done;
  double ms;
  NEAR(B->now(c), 0);
  OK(B->stream_create(c, 0, 1, &s));
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
  OK(B->stream_create(c, 0, 0, &s2));
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
  OK(B->stream_create(c, 0, 1, &b));
  OK(B->stream_create(c, -2, 0, &nb));
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
  OK(B->stream_create(c, 0, 1, &s));
  OK(B->pool_default(c, 0, &p));
  OK(B->pool_alloc(c, p, MiB, s, &a, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &b, NULL));
  CHECK(a >= 0x7f0000000000ull && b != a);
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
  CHECK(B->copy(c, a, b, 2 * MiB, s) == PS_ERR_INVALID_VALUE);

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
  OK(B->stream_create(c, 0, 0, &s1));
  OK(B->stream_create(c, 0, 0, &s2));
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

/* ---- pools: reuse rules ---- */

static void test_rules(void) {
  void *c = open_sim(0);
  ps_stream *s1, *s2;
  ps_event *e;
  ps_addr a, b;
  ps_alloc_note n;
  OK(B->stream_create(c, 0, 0, &s1));
  OK(B->stream_create(c, 0, 0, &s2));
  OK(B->event_create(c, 0, &e));
  ps_pool *p = new_pool(c, 0, UINT64_MAX);

  /* (1) stream order */
  OK(B->pool_alloc(c, p, 2 * MiB, s1, &a, &n));
  CHECK(n.rule == PS_RULE_NONE);
  OK(B->pool_free(c, a, s1));
  OK(B->pool_alloc(c, p, 2 * MiB, s1, &b, &n));
  CHECK(b == a && n.rule == PS_RULE_STREAM_ORDER && n.reused_block == a);

  /* (2) host synchronisation, whatever the policies */
  OK(B->pool_set(c, p, PS_ATTR_FOLLOW_EVENT_DEPS, 0));
  OK(B->pool_set(c, p, PS_ATTR_OPPORTUNISTIC, 0));
  OK(B->pool_set(c, p, PS_ATTR_INTERNAL_DEPS, 0));
  OK(B->spin(c, s1, 1));
  OK(B->pool_free(c, b, s1));
  OK(B->pool_alloc(c, p, 2 * MiB, s2, &a, &n));
  CHECK(a != b && n.rule == PS_RULE_NONE);     /* pending on s1: not seen */
  OK(B->stream_sync(c, s1));
  OK(B->pool_alloc(c, p, 2 * MiB, s2, &a, &n));
  CHECK(a == b && n.rule == PS_RULE_HOST_SYNC && n.reused_block == b);
  OK(B->device_sync(c));

  /* (3) event dependencies, and none when the policy is off */
  for (int follow = 1; follow >= 0; follow--) {
    OK(B->pool_set(c, p, PS_ATTR_FOLLOW_EVENT_DEPS, (uint64_t)follow));
    OK(B->pool_alloc(c, p, 2 * MiB, s1, &a, NULL));
    OK(B->spin(c, s1, 10));
    OK(B->pool_free(c, a, s1));
    OK(B->event_record(c, e, s1));
    OK(B->stream_wait(c, s2, e));
    OK(B->pool_alloc(c, p, 2 * MiB, s2, &b, &n));
    if (follow) CHECK(b == a && n.rule == PS_RULE_EVENT_DEP && n.reused_block == a);
    else CHECK(b != a && n.rule == PS_RULE_NONE);
    OK(B->device_sync(c));
  }

  /* (4) opportunistic: the free completed before the allocation */
  ps_pool *q = new_pool(c, 0, UINT64_MAX);
  OK(B->pool_set(c, q, PS_ATTR_FOLLOW_EVENT_DEPS, 0));
  for (int opp = 1; opp >= 0; opp--) {
    OK(B->pool_set(c, q, PS_ATTR_OPPORTUNISTIC, (uint64_t)opp));
    OK(B->pool_alloc(c, q, 2 * MiB, s1, &a, NULL));
    OK(B->pool_free(c, a, s1));
    OK(B->sleep(c, 1));
    OK(B->pool_alloc(c, q, 2 * MiB, s2, &b, &n));
    if (opp) CHECK(b == a && n.rule == PS_RULE_OPPORTUNISTIC && n.reused_block == a);
    else CHECK(b != a && n.rule == PS_RULE_NONE);
  }
  OK(B->device_sync(c));

  /* (5) internal dependencies: only when the pool cannot grow */
  ps_pool *r = new_pool(c, 2 * MiB, UINT64_MAX);
  OK(B->pool_set(c, r, PS_ATTR_OPPORTUNISTIC, 0));
  OK(B->pool_set(c, r, PS_ATTR_INTERNAL_DEPS, 0));
  OK(B->pool_alloc(c, r, 2 * MiB, s1, &a, NULL));
  OK(B->spin(c, s1, 10));
  OK(B->pool_free(c, a, s1));
  CHECK(B->pool_alloc(c, r, 2 * MiB, s2, &b, &n) == PS_ERR_MEMORY_ALLOCATION);
  CHECK(attr(c, r, PS_ATTR_USED_CURRENT) == 0);
  OK(B->pool_set(c, r, PS_ATTR_INTERNAL_DEPS, 1));
  double t = B->now(c);
  OK(B->pool_alloc(c, r, 2 * MiB, s2, &b, &n));
  CHECK(b == a && n.rule == PS_RULE_INTERNAL_DEP && n.reused_block == a);
  OK(B->spin(c, s2, 1));
  OK(B->stream_sync(c, s2));
  CHECK(B->now(c) >= t + 10);                  /* s2 waited for the free */
  CHECK(B->pool_alloc(c, p, 0, s1, &a, &n) == PS_OK && a == 0);
  B->close(c);
}

/* Best fit: the smallest eligible block, split; the rest stays free. */
static void test_best_fit(void) {
  void *c = open_sim(0);
  ps_stream *s;
  ps_addr a, b, d, x;
  ps_alloc_note n;
  OK(B->stream_create(c, 0, 0, &s));
  ps_pool *p = new_pool(c, 0, UINT64_MAX);
  OK(B->pool_alloc(c, p, 1000, s, &a, NULL));  /* 1024 placed */
  OK(B->pool_alloc(c, p, 512, s, &b, NULL));
  OK(B->pool_alloc(c, p, 4096, s, &d, NULL));
  CHECK(b == a + 1024 && d == b + 512);
  CHECK(attr(c, p, PS_ATTR_USED_CURRENT) == 1024 + 512 + 4096);
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 2 * MiB);
  OK(B->pool_free(c, d, s));
  OK(B->pool_free(c, a, s));
  OK(B->pool_alloc(c, p, 500, s, &x, &n));     /* 1024 block fits best */
  CHECK(x == a && n.rule == PS_RULE_STREAM_ORDER);
  OK(B->pool_alloc(c, p, 100, s, &x, &n));     /* the rest of it */
  CHECK(x == a + 512 && n.rule == PS_RULE_STREAM_ORDER);
  CHECK(B->pool_free(c, a + 1, s) == PS_ERR_INVALID_VALUE);
  OK(B->pool_free(c, b, s));
  CHECK(B->pool_free(c, b, s) == PS_ERR_INVALID_VALUE);
  CHECK(B->pool_free(c, 0x1234, s) == PS_ERR_INVALID_VALUE);
  OK(B->pool_free(c, 0, s));
  B->close(c);
}

/* ---- pools: release, trim, max_size, counters, destroy ---- */

static void test_release(void) {
  void *c = open_sim(0);
  ps_stream *s;
  ps_addr a, b, x, y;
  OK(B->stream_create(c, 0, 0, &s));
  ps_pool *p = new_pool(c, 0, 0);
  OK(B->pool_alloc(c, p, 2 * MiB, s, &a, NULL));
  OK(B->pool_alloc(c, p, 2 * MiB, s, &b, NULL));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 4 * MiB);
  OK(B->pool_free(c, a, s));
  OK(B->stream_sync(c, s));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 2 * MiB);
  OK(B->pool_set(c, p, PS_ATTR_RELEASE_THRESHOLD, 2 * MiB));
  OK(B->pool_alloc(c, p, 2 * MiB, s, &a, NULL));
  OK(B->pool_free(c, a, s));
  OK(B->pool_free(c, b, s));
  OK(B->stream_sync(c, s));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 2 * MiB);
  OK(B->pool_set(c, p, PS_ATTR_RELEASE_THRESHOLD, 0));
  OK(B->device_sync(c));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 0);

  /* Only whole chunks go back. */
  OK(B->pool_alloc(c, p, MiB, s, &x, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &y, NULL));
  CHECK(y == x + MiB);
  OK(B->pool_free(c, x, s));
  OK(B->stream_sync(c, s));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 2 * MiB);
  OK(B->pool_free(c, y, s));

  /* Which syncs release is a profile flag. */
  OK(B->option_set(c, "release_on_stream_sync", 0));
  OK(B->stream_sync(c, s));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 2 * MiB);
  ps_event *e;
  OK(B->event_create(c, 0, &e));
  OK(B->event_record(c, e, s));
  OK(B->event_sync(c, e));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 0);

  /* A pending free keeps its chunk. */
  OK(B->pool_alloc(c, p, MiB, s, &x, NULL));
  OK(B->spin(c, s, 5));
  OK(B->pool_free(c, x, s));
  OK(B->pool_trim(c, p, 0));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 2 * MiB);
  OK(B->sleep(c, 10));                         /* done, but host not told */
  OK(B->pool_trim(c, p, 0));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 2 * MiB);
  OK(B->option_set(c, "release_on_device_sync", 0));
  OK(B->device_sync(c));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 2 * MiB);
  OK(B->pool_trim(c, p, 0));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 0);
  B->close(c);
}

static void test_trim(void) {
  void *c = open_sim(0);
  ps_stream *s;
  ps_addr a[3];
  OK(B->stream_create(c, 0, 0, &s));
  ps_pool *p = new_pool(c, 0, UINT64_MAX);
  for (int i = 0; i < 3; i++) OK(B->pool_alloc(c, p, 2 * MiB, s, &a[i], NULL));
  for (int i = 0; i < 3; i++) OK(B->pool_free(c, a[i], s));
  OK(B->stream_sync(c, s));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 6 * MiB);
  OK(B->pool_trim(c, p, 3 * MiB));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 2 * MiB);
  ps_addr x;
  OK(B->pool_alloc(c, p, 2 * MiB, s, &x, NULL));
  CHECK(x == a[0]);                            /* highest chunks went first */
  OK(B->pool_free(c, x, s));
  OK(B->stream_sync(c, s));
  OK(B->pool_trim(c, p, 0));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 0);
  CHECK(attr(c, p, PS_ATTR_RESERVED_HIGH) == 6 * MiB);
  B->close(c);
}

static void test_max_size_and_counters(void) {
  void *c = open_sim(64 * MiB);
  ps_stream *s;
  ps_addr a, b, d, m;
  ps_device_info info;
  OK(B->stream_create(c, 0, 0, &s));
  ps_pool *p = new_pool(c, 3 * MiB, 0);        /* rounds up to 4 MiB */
  OK(B->pool_set(c, p, PS_ATTR_INTERNAL_DEPS, 0));
  OK(B->pool_alloc(c, p, 2 * MiB, s, &a, NULL));
  OK(B->pool_alloc(c, p, 2 * MiB, s, &b, NULL));
  CHECK(B->pool_alloc(c, p, 2 * MiB, s, &d, NULL) == PS_ERR_MEMORY_ALLOCATION);
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 4 * MiB);
  CHECK(attr(c, p, PS_ATTR_USED_CURRENT) == 4 * MiB);
  OK(B->pool_free(c, a, s));
  CHECK(attr(c, p, PS_ATTR_USED_CURRENT) == 2 * MiB);   /* at free time */
  OK(B->stream_sync(c, s));
  OK(B->pool_alloc(c, p, 2 * MiB, s, &d, NULL));        /* recovered */
  OK(B->pool_free(c, b, s));
  OK(B->pool_free(c, d, s));
  OK(B->device_sync(c));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 0);
  CHECK(attr(c, p, PS_ATTR_RESERVED_HIGH) == 4 * MiB);
  CHECK(attr(c, p, PS_ATTR_USED_HIGH) == 4 * MiB);
  OK(B->pool_set(c, p, PS_ATTR_RESERVED_HIGH, 0));
  OK(B->pool_set(c, p, PS_ATTR_USED_HIGH, 0));
  CHECK(attr(c, p, PS_ATTR_RESERVED_HIGH) == 0);
  CHECK(attr(c, p, PS_ATTR_USED_HIGH) == 0);
  CHECK(B->pool_set(c, p, PS_ATTR_USED_HIGH, 5) == PS_ERR_INVALID_VALUE);
  CHECK(B->pool_set(c, p, PS_ATTR_USED_CURRENT, 0) == PS_ERR_INVALID_VALUE);
  OK(B->pool_alloc(c, p, 1, s, &a, NULL));
  CHECK(attr(c, p, PS_ATTR_USED_CURRENT) == 512);

  /* The device: 64 MiB total. */
  OK(B->device_info(c, 0, &info));
  CHECK(info.total == 64 * MiB && info.free == 62 * MiB);
  CHECK(info.cc_major == 9 && info.pools_supported == 1);
  CHECK(strcmp(info.name, "poolsh sim (H100 80GB HBM3 profile)") == 0);
  OK(B->malloc_device(c, 62 * MiB, &m));
  CHECK(B->malloc_device(c, 4 * MiB, &d) == PS_ERR_MEMORY_ALLOCATION);
  ps_pool *dp;
  OK(B->pool_default(c, 0, &dp));
  CHECK(B->pool_alloc(c, dp, MiB, s, &d, NULL) == PS_ERR_MEMORY_ALLOCATION);
  OK(B->free_device(c, m));
  OK(B->pool_alloc(c, dp, MiB, s, &d, NULL));
  OK(B->device_info(c, 0, &info));
  CHECK(info.free == 60 * MiB);
  CHECK(B->option_set(c, "memory", 1e9) == PS_ERR_NOT_SUPPORTED);
  B->close(c);
}

static void test_destroy(void) {
  void *c = open_sim(0);
  ps_stream *s;
  ps_addr a;
  ps_device_info info;
  uint64_t v;
  OK(B->stream_create(c, 0, 0, &s));
  ps_pool *p = new_pool(c, 0, UINT64_MAX), *dp;
  OK(B->pool_alloc(c, p, 4 * MiB, s, &a, NULL));
  OK(B->pool_destroy(c, p));
  CHECK(B->pool_get(c, p, PS_ATTR_USED_CURRENT, &v) == PS_ERR_INVALID_VALUE);
  CHECK(B->pool_alloc(c, p, 1, s, &a, NULL) == PS_ERR_INVALID_VALUE);
  CHECK(B->pool_destroy(c, p) == PS_ERR_INVALID_VALUE);
  OK(B->fill(c, a, 4 * MiB, 1, s));            /* still valid */
  OK(B->pool_free(c, a, s));
  OK(B->device_info(c, 0, &info));
  CHECK(info.free == info.total - 4 * MiB);    /* free still pending */
  OK(B->stream_sync(c, s));
  OK(B->device_info(c, 0, &info));
  CHECK(info.free == info.total);
  OK(B->pool_default(c, 0, &dp));
  CHECK(B->pool_destroy(c, dp) == PS_ERR_INVALID_VALUE);
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
  CHECK(strcmp(B->error_string(PS_INTERRUPTED), "interrupted") == 0);
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
  CHECK(v == 2.0 * MiB);
  CHECK(B->option_get(c, "nope", &v) == PS_ERR_INVALID_VALUE);
  CHECK(B->option_set(c, "nope", 1) == PS_ERR_INVALID_VALUE);
  CHECK(B->option_set(c, "bw_d2d", 0) == PS_ERR_INVALID_VALUE);
  OK(B->option_set(c, "memory", 16.0 * GiB));   /* nothing mapped yet */
  OK(B->device_info(c, 0, &info));
  CHECK(info.total == 16 * GiB);
  OK(B->option_set(c, "pool_granularity", 4.0 * MiB));
  OK(B->option_set(c, "pool_min_chunk", 32.0 * MiB));
  ps_addr a;
  OK(B->pool_default(c, 0, &p));
  OK(B->pool_alloc(c, p, 1, NULL, &a, NULL));
  CHECK(attr(c, p, PS_ATTR_RESERVED_CURRENT) == 32 * MiB);
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
  OK(B->stream_create(c, 0, 0, &s));
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

int main(void) {
  test_clock();
  test_legacy();
  test_contents();
  test_clobber();
  test_rules();
  test_best_fit();
  test_release();
  test_trim();
  test_max_size_and_counters();
  test_destroy();
  test_errors();
  test_close_live();
  if (failures) fprintf(stderr, "test_sim: %d failure(s)\n", failures);
  else printf("test_sim: all passed\n");
  return failures != 0;
}
