/*
 * test_sim_deps.c: the sim's dependency tracking (vector clocks through
 * events and host syncs), coalescing, runs and release as measured on the
 * GPU (docs/calibration.md E12), address reuse and determinism.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"

static int failures;

#define CHECK(c) do { if (!(c)) { failures++; \
  fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, __func__, #c); } } while (0)
#define OK(x) CHECK((x) == PS_OK)
#define MiB ((uint64_t)1 << 20)

static const ps_backend *B = &ps_backend_sim;

static void *open_sim(void) {
  ps_config cfg = { 0, 0, NULL, NULL };
  void *c = NULL;
  OK(B->open(&cfg, &c));
  return c;
}

/* A pool that keeps its memory and reuses only by the rules left on. */
static ps_pool *strict_pool(void *c, int follow) {
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, 0 };
  ps_pool *p = NULL;
  OK(B->pool_create(c, &props, &p));
  OK(B->pool_set(c, p, PS_ATTR_RELEASE_THRESHOLD, UINT64_MAX));
  OK(B->pool_set(c, p, PS_ATTR_FOLLOW_EVENT_DEPS, (uint64_t)follow));
  OK(B->pool_set(c, p, PS_ATTR_OPPORTUNISTIC, 0));
  OK(B->pool_set(c, p, PS_ATTR_INTERNAL_DEPS, 0));
  return p;
}

/* Knowledge passes through a chain of events: s1 -> s2 -> s3. */
static void test_transitive_events(void) {
  void *c = open_sim();
  ps_stream *s[4];
  ps_event *e1, *e2;
  ps_addr a, b;
  ps_alloc_note n;
  for (int i = 0; i < 4; i++) OK(B->stream_create(c, 0, 0, 0, &s[i]));
  OK(B->event_create(c, 0, &e1));
  OK(B->event_create(c, 0, &e2));
  ps_pool *p = strict_pool(c, 1);
  OK(B->pool_alloc(c, p, 2 * MiB, s[0], &a, NULL));
  OK(B->spin(c, s[0], 10));
  OK(B->pool_free(c, a, s[0]));
  OK(B->event_record(c, e1, s[0]));
  OK(B->stream_wait(c, s[1], e1));
  OK(B->event_record(c, e2, s[1]));
  OK(B->stream_wait(c, s[2], e2));
  OK(B->pool_alloc(c, p, 2 * MiB, s[3], &b, &n));   /* s3 knows nothing */
  CHECK(b != a && n.rule == PS_RULE_NONE);
  OK(B->pool_alloc(c, p, 2 * MiB, s[2], &b, &n));
  CHECK(b == a && n.rule == PS_RULE_EVENT_DEP);
  B->close(c);
}

/* An event recorded before the free carries no knowledge of it. */
static void test_event_before_free(void) {
  void *c = open_sim();
  ps_stream *s1, *s2;
  ps_event *e;
  ps_addr a, b;
  ps_alloc_note n;
  OK(B->stream_create(c, 0, 0, 0, &s1));
  OK(B->stream_create(c, 0, 0, 0, &s2));
  OK(B->event_create(c, 0, &e));
  ps_pool *p = strict_pool(c, 1);
  OK(B->pool_alloc(c, p, 2 * MiB, s1, &a, NULL));
  OK(B->spin(c, s1, 10));
  OK(B->event_record(c, e, s1));
  OK(B->pool_free(c, a, s1));
  OK(B->stream_wait(c, s2, e));
  OK(B->pool_alloc(c, p, 2 * MiB, s2, &b, &n));
  CHECK(b != a && n.rule == PS_RULE_NONE);
  /* The host syncing on that event learns nothing of the free either. */
  OK(B->event_sync(c, e));
  OK(B->pool_alloc(c, p, 2 * MiB, s2, &b, &n));
  CHECK(b != a && n.rule == PS_RULE_NONE);
  B->close(c);
}

/* event_sync teaches the host what the event's stream knew. */
static void test_host_learns_through_event(void) {
  void *c = open_sim();
  ps_stream *s1, *s2, *s3;
  ps_event *e1, *e2;
  ps_addr a, b;
  ps_alloc_note n;
  OK(B->stream_create(c, 0, 0, 0, &s1));
  OK(B->stream_create(c, 0, 0, 0, &s2));
  OK(B->stream_create(c, 0, 0, 0, &s3));
  OK(B->event_create(c, 0, &e1));
  OK(B->event_create(c, 0, &e2));
  ps_pool *p = strict_pool(c, 0);
  OK(B->pool_alloc(c, p, 2 * MiB, s1, &a, NULL));
  OK(B->pool_free(c, a, s1));
  OK(B->event_record(c, e1, s1));
  OK(B->stream_wait(c, s2, e1));
  OK(B->event_record(c, e2, s2));
  OK(B->event_sync(c, e2));
  OK(B->pool_alloc(c, p, 2 * MiB, s3, &b, &n));
  CHECK(b == a && n.rule == PS_RULE_HOST_SYNC);
  B->close(c);
}

/* An internal dependency makes a blocking stream wait for another
 * stream's free, and so the legacy stream, which waits for every blocking
 * stream, waits for it too (the sim keeps that wait as a running maximum). */
static void test_internal_dep_delays_legacy(void) {
  void *c = open_sim();
  ps_stream *nb, *bl;
  ps_addr a, b;
  ps_alloc_note n;
  int idle;
  OK(B->stream_create(c, 0, 0, 0, &nb));
  OK(B->stream_create(c, 0, 0, 1, &bl));
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, 32 * MiB };
  ps_pool *p = NULL;
  OK(B->pool_create(c, &props, &p));
  OK(B->pool_set(c, p, PS_ATTR_RELEASE_THRESHOLD, UINT64_MAX));
  OK(B->pool_set(c, p, PS_ATTR_FOLLOW_EVENT_DEPS, 0));
  OK(B->pool_set(c, p, PS_ATTR_OPPORTUNISTIC, 0));
  OK(B->pool_set(c, p, PS_ATTR_INTERNAL_DEPS, 1));
  OK(B->pool_alloc(c, p, 32 * MiB, nb, &a, NULL));
  OK(B->spin(c, nb, 10));
  OK(B->pool_free(c, a, nb));
  OK(B->pool_alloc(c, p, 32 * MiB, bl, &b, &n));
  CHECK(b == a && n.rule == PS_RULE_INTERNAL_DEP);
  CHECK(B->now(c) < 1);
  OK(B->stream_query(c, NULL, &idle));
  CHECK(!idle);
  OK(B->stream_sync(c, NULL));
  CHECK(B->now(c) >= 10);
  B->close(c);
}

/* Adjacent blocks freed on one stream coalesce; reuse needs no new chunk. */
static void test_same_stream_coalesce(void) {
  void *c = open_sim();
  ps_stream *s;
  ps_addr a, b, x;
  ps_alloc_note n;
  uint64_t r;
  OK(B->stream_create(c, 0, 0, 0, &s));
  ps_pool *p = strict_pool(c, 0);
  OK(B->pool_alloc(c, p, MiB, s, &a, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &b, NULL));
  OK(B->spin(c, s, 5));
  OK(B->pool_free(c, a, s));
  OK(B->pool_free(c, b, s));
  OK(B->pool_alloc(c, p, 2 * MiB, s, &x, &n));
  CHECK(x == a && n.rule == PS_RULE_STREAM_ORDER && n.reused_block == a);
  OK(B->pool_get(c, p, PS_ATTR_RESERVED_CURRENT, &r));
  CHECK(r == 32 * MiB);                        /* one 32 MiB chunk */
  B->close(c);
}

/* A pool at threshold `th` on the default profile (32 MiB chunks). */
static ps_pool *pool_th(void *c, uint64_t th) {
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, 0 };
  ps_pool *p = NULL;
  OK(B->pool_create(c, &props, &p));
  OK(B->pool_set(c, p, PS_ATTR_RELEASE_THRESHOLD, th));
  return p;
}

static uint64_t reserved(void *c, ps_pool *p) {
  uint64_t v = 0;
  OK(B->pool_get(c, p, PS_ATTR_RESERVED_CURRENT, &v));
  return v;
}

/* A release gives back the chunks around a live block, highest first,
 * leaving a hole; a block placed over the hole maps its chunk again at the
 * same address, contents zero. */
static void test_release_past_live(void) {
  void *c = open_sim();
  ps_stream *s;
  ps_addr a, b, d, x;
  ps_alloc_note n;
  int64_t bad = 0;
  OK(B->stream_create(c, 0, 0, 0, &s));
  ps_pool *p = pool_th(c, 0);
  OK(B->pool_alloc(c, p, 32 * MiB, s, &a, NULL));
  OK(B->pool_alloc(c, p, 32 * MiB, s, &b, NULL));
  OK(B->pool_alloc(c, p, 32 * MiB, s, &d, NULL));
  OK(B->fill(c, a, 32 * MiB, 7, s));
  OK(B->pool_free(c, a, s));
  OK(B->pool_free(c, d, s));
  OK(B->stream_sync(c, s));
  CHECK(reserved(c, p) == 32 * MiB);           /* b's chunk stays, below and above go */
  OK(B->pool_alloc(c, p, 32 * MiB, s, &x, &n));
  CHECK(x == a && n.rule == PS_RULE_STREAM_ORDER && n.reused_block == a);
  CHECK(reserved(c, p) == 64 * MiB);
  OK(B->verify(c, x, 32 * MiB, 0, s, &bad));
  CHECK(bad == -1);
  B->close(c);
}

/* The free run at the top is taken last: a 20 MiB hole below is used for
 * 4 MiB though the 11 MiB left at the top would fit better. */
static void test_top_run_last(void) {
  void *c = open_sim();
  ps_stream *s;
  ps_addr a, b, x;
  OK(B->stream_create(c, 0, 0, 0, &s));
  ps_pool *p = pool_th(c, UINT64_MAX);
  OK(B->pool_alloc(c, p, 20 * MiB, s, &a, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &b, NULL));
  OK(B->pool_free(c, a, s));
  OK(B->stream_sync(c, s));
  OK(B->pool_alloc(c, p, 4 * MiB, s, &x, NULL));
  CHECK(x == a);
  OK(B->pool_alloc(c, p, 17 * MiB, s, &x, NULL));   /* 16 MiB left below: the top */
  CHECK(x == b + MiB);
  B->close(c);
}

/* A free still pending on the device joins frees of its own stream but
 * not fresh space; once it completed, it joins fresh space too. */
static void test_pending_runs(void) {
  void *c = open_sim();
  ps_stream *s;
  ps_addr a, b, g, x, y;
  ps_alloc_note n;
  OK(B->stream_create(c, 0, 0, 0, &s));
  ps_pool *p = pool_th(c, UINT64_MAX);
  OK(B->pool_alloc(c, p, MiB, s, &a, NULL));
  OK(B->spin(c, s, 10));
  OK(B->pool_free(c, a, s));                     /* pending until 10 ms */
  OK(B->pool_alloc(c, p, 3 * MiB / 2, s, &x, NULL));
  CHECK(x == a + MiB);                           /* a alone is too small */
  OK(B->sleep(c, 20));
  OK(B->pool_free(c, x, s));                     /* completes at once */
  OK(B->pool_alloc(c, p, 2 * MiB, s, &y, &n));
  CHECK(y == a && n.rule == PS_RULE_STREAM_ORDER);   /* a, x and fresh space: one run */

  OK(B->pool_alloc(c, p, MiB, s, &a, NULL));       /* two pending frees of s join */
  OK(B->pool_alloc(c, p, MiB, s, &b, NULL));
  OK(B->pool_alloc(c, p, MiB, s, &g, NULL));
  OK(B->spin(c, s, 10));
  OK(B->pool_free(c, a, s));
  OK(B->pool_free(c, b, s));
  OK(B->pool_alloc(c, p, 2 * MiB, s, &x, &n));
  CHECK(x == a && n.rule == PS_RULE_STREAM_ORDER && n.reused_block == a);
  B->close(c);
}

/* Freed address ranges are handed out again, lowest first. */
static void test_address_reuse(void) {
  void *c = open_sim();
  ps_addr a, b, a2;
  OK(B->malloc_device(c, 3 * MiB, &a));
  OK(B->malloc_device(c, MiB, &b));
  CHECK(b == a + 4 * MiB);
  OK(B->free_device(c, a));
  OK(B->malloc_device(c, MiB, &a2));
  CHECK(a2 == a);
  B->close(c);
}

/* One scenario, run twice: the same addresses, rules and clock. */
static double scenario(ps_addr *out, int *rules) {
  void *c = open_sim();
  ps_stream *s1, *s2;
  ps_pool *p;
  ps_alloc_note n;
  OK(B->stream_create(c, 0, 0, 0, &s1));
  OK(B->stream_create(c, 0, 0, 1, &s2));
  OK(B->pool_default(c, 0, &p));
  for (int i = 0; i < 8; i++) {
    ps_stream *s = i & 1 ? s2 : s1;
    OK(B->pool_alloc(c, p, (uint64_t)(i + 1) * 300000, s, &out[i], &n));
    rules[i] = (int)n.rule;
    OK(B->fill(c, out[i], 1000, i, s));
    OK(B->spin(c, s, 0.5 * i));
    if (i >= 2) OK(B->pool_free(c, out[i - 2], s));
    if (i == 5) OK(B->stream_sync(c, s1));
  }
  OK(B->device_sync(c));
  double t = B->now(c);
  B->close(c);
  return t;
}

static void test_determinism(void) {
  ps_addr a[8], b[8];
  int ra[8], rb[8];
  double ta = scenario(a, ra), tb = scenario(b, rb);
  CHECK(ta == tb);
  CHECK(memcmp(a, b, sizeof a) == 0);
  CHECK(memcmp(ra, rb, sizeof ra) == 0);
}

int main(void) {
  test_transitive_events();
  test_event_before_free();
  test_host_learns_through_event();
  test_internal_dep_delays_legacy();
  test_same_stream_coalesce();
  test_release_past_live();
  test_top_run_last();
  test_pending_runs();
  test_address_reuse();
  test_determinism();
  if (failures) fprintf(stderr, "test_sim_deps: %d failure(s)\n", failures);
  else printf("test_sim_deps: all passed\n");
  return failures != 0;
}
