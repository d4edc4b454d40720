/*
 * test_sim_scale.c: the sim's streams, events and vector clocks at scale.
 * Destroyed streams and events are freed, clocks keep only entries that
 * matter, and none of it changes a result: runs with and without 100,000
 * short-lived streams and events observe the same addresses, reuse rules,
 * flags and clock. The young best fit among 100,000 young holes looks at
 * few records more than among 1,000, and so does an allocation on one
 * stream while another holds pending frees it may not use; a sync
 * retires the frees it covers. Checks behaviour, memory and work
 * counted, never time.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "sim/sim_model.h"

static int failures;

#define CHECK(c) do { if (!(c)) { failures++; \
  fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, __func__, #c); } } while (0)
#define OK(x) CHECK((x) == PS_OK)
#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define NLIVE 4

static const ps_backend *B = &ps_backend_sim;

static sim_ctx *open_sim(void) {
  ps_config cfg = { 0, 0, NULL, NULL };
  void *c = NULL;
  OK(B->open(&cfg, &c));
  return c;
}

/* A pool that keeps its memory and reuses by event dependencies. */
static ps_pool *keeping_pool(sim_ctx *c) {
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, 0 };
  ps_pool *p = NULL;
  OK(B->pool_create(c, &props, &p));
  OK(B->pool_set(c, p, PS_ATTR_RELEASE_THRESHOLD, UINT64_MAX));
  OK(B->pool_set(c, p, PS_ATTR_FOLLOW_EVENT_DEPS, 1));
  OK(B->pool_set(c, p, PS_ATTR_OPPORTUNISTIC, 0));
  OK(B->pool_set(c, p, PS_ATTR_INTERNAL_DEPS, 0));
  return p;
}

/* What a run observed, in order. */
#define LOGCAP (1 << 17)
typedef struct log { uint64_t v[LOGCAP]; size_t n; } log;
static log runs[2];

static void see(log *l, uint64_t x) {
  if (l->n < LOGCAP) l->v[l->n++] = x;
}

static void see_now(log *l, sim_ctx *c) {
  double t = B->now(c);
  uint64_t x;
  memcpy(&x, &t, sizeof x);
  see(l, x);
}

static int same_logs(void) {
  if (runs[0].n != runs[1].n) return 0;
  for (size_t i = 0; i < runs[0].n; i++)
    if (runs[0].v[i] != runs[1].v[i]) {
      fprintf(stderr, "logs differ at entry %zu of %zu\n", i, runs[0].n);
      return 0;
    }
  return 1;
}

/* Live streams work (allocations, frees on the next stream, events between
 * them, queries, stream, legacy and device syncs); with churn, a stream
 * and an event are created and destroyed at every step besides. */
static void live_work(log *l, int churn, int steps) {
  sim_ctx *c = open_sim();
  ps_stream *s[NLIVE];
  ps_event *e;
  ps_addr ring[16] = { 0 };
  for (int i = 0; i < NLIVE; i++) OK(B->stream_create(c, 0, 0, i & 1, &s[i]));
  OK(B->event_create(c, 1, &e));
  ps_pool *p = keeping_pool(c);
  for (int i = 0; i < steps; i++) {
    if (churn) {
      ps_stream *t;
      ps_event *f;
      OK(B->stream_create(c, 0, 0, i & 1, &t));
      OK(B->event_create(c, i & 1, &f));
      OK(B->event_destroy(c, f));
      OK(B->stream_destroy(c, t));
    }
    if (i % 10) continue;
    ps_stream *a = s[i % NLIVE], *b = s[(i + 1) % NLIVE];
    ps_addr x;
    ps_alloc_note n;
    int idle;
    OK(B->pool_alloc(c, p, 64 * KiB * (uint64_t)(1 + i % 3), a, &x, &n));
    see(l, x), see(l, (uint64_t)n.rule);
    OK(B->fill(c, x, 4096, i & 0xff, a));
    OK(B->event_record(c, e, a));
    OK(B->stream_wait(c, b, e));
    if (ring[i / 10 % 16]) OK(B->pool_free(c, ring[i / 10 % 16], b));
    ring[i / 10 % 16] = x;
    OK(B->stream_query(c, i % 20 ? b : NULL, &idle));
    see(l, (uint64_t)idle);
    if (i % 640 == 0) OK(B->stream_sync(c, a));
    if (i % 1280 == 0) {
      OK(B->spin(c, NULL, 0.01));
      OK(B->stream_sync(c, NULL));
    }
    if (i % 5000 == 0) OK(B->device_sync(c));
    see_now(l, c);
  }
  if (churn) {
    CHECK(c->stream_ids == NLIVE + steps);   /* ids never reused */
    CHECK(c->nstreams == NLIVE && c->ndestroyed == 0);
    CHECK(c->live.n == NLIVE && c->live.cap <= 16);
    CHECK(c->events.n == 1 && c->events.cap <= 16);
    CHECK(c->host_known.n <= NLIVE + 1);
  }
  B->close(c);
}

/* 100,000 idle streams and events created and destroyed beside live work:
 * every object is freed at once and nothing observed changes. */
static void test_churn_changes_nothing(void) {
  memset(runs, 0, sizeof runs);
  live_work(&runs[0], 0, 100000);
  live_work(&runs[1], 1, 100000);
  CHECK(runs[0].n > 10000);
  CHECK(same_logs());
}

/* 100,000 streams that work and pass an event to a live stream, then are
 * destroyed: the heap in use does not grow with them. */
static void test_churn_memory(void) {
  sim_ctx *c = open_sim();
  ps_stream *live;
  OK(B->stream_create(c, 0, 0, 0, &live));
  size_t heap = 0;
  for (int i = 0; i < 101000; i++) {
    if (i == 1000) heap = mallinfo2().uordblks;   /* tables at their size */
    ps_stream *t;
    ps_event *e;
    OK(B->stream_create(c, 0, 0, i & 1, &t));
    OK(B->event_create(c, 0, &e));
    OK(B->spin(c, t, 0.001));
    OK(B->event_record(c, e, t));
    OK(B->stream_wait(c, live, e));
    OK(B->event_destroy(c, e));
    OK(B->stream_destroy(c, t));
    if (i % 100 == 0) OK(B->stream_sync(c, live));
  }
  OK(B->device_sync(c));
  CHECK(c->nstreams == 1 && c->events.n == 0);
  CHECK(mallinfo2().uordblks < heap + 64 * KiB);
  B->close(c);
}

/* Short-lived streams that work, free and pass events to live streams,
 * with stream destruction not retiring anything: destroyed streams wait
 * as long as the host has not learned them, and legacy and device syncs
 * drop them. A run that never destroys them observes the same. */
static void knowledge_work(log *l, int destroy, int steps) {
  sim_ctx *c = open_sim();
  OK(B->option_set(c, "release_on_stream_destroy", 0));
  OK(B->option_set(c, "release_on_destroyed_stream_done", 0));
  ps_stream *s[NLIVE];
  for (int i = 0; i < NLIVE; i++) OK(B->stream_create(c, 0, 0, i & 1, &s[i]));
  ps_pool *p = keeping_pool(c);
  size_t most = 0;
  for (int i = 0; i < steps; i++) {
    ps_stream *t, *a = s[i % NLIVE];
    ps_event *e;
    ps_addr x;
    ps_alloc_note n;
    OK(B->stream_create(c, 0, 0, i & 1, &t));
    OK(B->event_create(c, 0, &e));
    OK(B->pool_alloc(c, p, MiB, t, &x, &n));
    see(l, x), see(l, (uint64_t)n.rule);
    OK(B->spin(c, t, 0.01));
    OK(B->pool_free(c, x, t));
    OK(B->event_record(c, e, t));
    OK(B->stream_wait(c, a, e));
    OK(B->event_destroy(c, e));
    if (destroy) OK(B->stream_destroy(c, t));
    if (i % 8 == 7) {
      OK(B->pool_alloc(c, p, MiB, a, &x, &n));   /* reuses by the event */
      see(l, x), see(l, (uint64_t)n.rule);
      OK(B->pool_free(c, x, a));
    }
    if (i % 100 == 99) OK(B->stream_sync(c, NULL));
    if (i % 1000 == 999) OK(B->device_sync(c));
    if (c->nstreams > most) most = c->nstreams;
    see_now(l, c);
  }
  if (destroy) {
    /* Only the non-blocking streams destroyed since the last device sync
     * stay, and never more than a sync's worth. */
    CHECK(most <= NLIVE + 1000);
    OK(B->device_sync(c));
    CHECK(c->nstreams == NLIVE && c->ndestroyed == 0);
    for (int i = 0; i < NLIVE; i++) {
      OK(B->spin(c, s[i], 0));
      CHECK(s[i]->clock.n <= 2 * NLIVE + 16);   /* dropped streams pruned */
    }
    CHECK(c->host_known.n <= NLIVE + 1);
  }
  B->close(c);
}

static void test_destroyed_streams_keep_knowledge(void) {
  memset(runs, 0, sizeof runs);
  knowledge_work(&runs[0], 0, 20000);
  knowledge_work(&runs[1], 1, 20000);
  CHECK(runs[0].n > 40000);
  CHECK(same_logs());
}

/* Device syncs with 10,000 live streams and event operations with 10,000
 * live events: each sync retires every stream's free. */
static void test_many_live(void) {
  enum { N = 10000 };
  sim_ctx *c = open_sim();
  ps_stream **s = calloc(N, sizeof *s);
  ps_event **e = calloc(N, sizeof *e);
  ps_addr *x = calloc(N, sizeof *x);
  ps_pool *p = keeping_pool(c);
  OK(B->pool_set(c, p, PS_ATTR_FOLLOW_EVENT_DEPS, 0));
  for (int i = 0; i < N; i++) {
    OK(B->stream_create(c, 0, 0, 0, &s[i]));
    OK(B->event_create(c, 1, &e[i]));
    OK(B->pool_alloc(c, p, 4 * KiB, s[i], &x[i], NULL));
  }
  for (int i = 0; i < N; i++) {
    OK(B->spin(c, s[i], 0.001));
    OK(B->pool_free(c, x[i], s[i]));
    OK(B->event_record(c, e[i], s[i]));
  }
  for (int k = 0; k < 100; k++) OK(B->device_sync(c));
  int done = 1, d;
  for (int k = 0; k < 10; k++)
    for (int i = 0; i < N; i++) {
      OK(B->event_query(c, e[i], &d));
      done &= d;
    }
  CHECK(done);
  ps_addr y;
  ps_alloc_note n;
  OK(B->pool_alloc(c, p, 4 * KiB, NULL, &y, &n));
  CHECK(y == x[0] && n.rule == PS_RULE_HOST_SYNC);
  for (int i = 0; i < N; i++) {
    OK(B->event_destroy(c, e[i]));
    OK(B->stream_destroy(c, s[i]));
  }
  CHECK(c->nstreams == 0 && c->live.n == 0 && c->events.n == 0);
  CHECK(c->live.cap <= 16 && c->events.cap <= 16 && c->host_known.n <= 1);
  free(s), free(e), free(x);
  B->close(c);
}

/* A destroyed (and freed) handle is refused, never used. */
static void test_stale_handles(void) {
  sim_ctx *c = open_sim();
  ps_stream *s, *keep;
  ps_event *e;
  int idle;
  OK(B->stream_create(c, 0, 0, 0, &keep));
  OK(B->stream_create(c, 0, 0, 0, &s));
  OK(B->event_create(c, 0, &e));
  OK(B->spin(c, s, 1));
  OK(B->stream_destroy(c, s));                 /* busy: kept until learned */
  CHECK(c->nstreams == 2 && c->ndestroyed == 1);
  CHECK(B->stream_query(c, s, &idle) == PS_ERR_INVALID_RESOURCE);
  CHECK(B->event_record(c, e, s) == PS_ERR_INVALID_RESOURCE);
  CHECK(B->stream_destroy(c, s) == PS_ERR_INVALID_RESOURCE);
  OK(B->device_sync(c));                       /* learned: dropped */
  CHECK(c->nstreams == 1 && c->ndestroyed == 0);
  OK(B->event_destroy(c, e));
  CHECK(B->event_query(c, e, &idle) == PS_ERR_INVALID_RESOURCE);
  CHECK(B->stream_wait(c, keep, e) == PS_ERR_INVALID_RESOURCE);
  CHECK(B->event_destroy(c, e) == PS_ERR_INVALID_RESOURCE);
  OK(B->stream_destroy(c, keep));
  CHECK(c->nstreams == 0);
  B->close(c);
}

/* The table behind clocks and handle sets: puts, finds and removals in
 * any order agree with a plain array. */
static void test_table(void) {
  enum { N = 5000 };
  sim_table t = { NULL, 0, 0 };
  static int64_t want[N + 1];
  uint64_t r = 88172645463325252ull;
  for (int k = 0; k < 200000; k++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    uint64_t key = 1 + r % N;
    if ((r >> 32) % 3) {
      sim_slot *x = sim_table_put(&t, key, (int64_t)k + 1);
      CHECK(x && x->key == key);
      if (!want[key]) want[key] = k + 1;
    } else {
      CHECK(sim_table_remove(&t, key) == (want[key] != 0));
      want[key] = 0;
    }
  }
  size_t n = 0;
  for (uint64_t key = 1; key <= N; key++) {
    sim_slot *x = sim_table_find(&t, key);
    CHECK(want[key] ? x && x->val == want[key] : !x);
    n += want[key] != 0;
  }
  CHECK(t.n == n && 2 * t.n <= t.cap);
  for (uint64_t key = 1; key <= N; key++) sim_table_remove(&t, key);
  CHECK(t.n == 0 && t.cap <= 16);
  sim_table_free(&t);
}

/* 50,000 streams destroyed while busy, their work ending in a shuffled
 * order: each is learned and dropped at the first call once the clock
 * passed its end, the others wait (a heap: O(log n) each), and nothing is
 * left after. */
static void test_destroyed_busy_many(void) {
  enum { N = 50000 };
  sim_ctx *c = open_sim();
  ps_pool *p = keeping_pool(c);
  for (int i = 0; i < N; i++) {
    ps_stream *t;
    ps_addr x = 0;
    OK(B->stream_create(c, 0, 0, 0, &t));
    if (i % 1000 == 0) OK(B->pool_alloc(c, p, KiB, t, &x, NULL));
    OK(B->spin(c, t, 1000 + (double)((i * 7919) % N)));   /* 1 to 51 s */
    if (i % 1000 == 0) OK(B->pool_free(c, x, t));
    OK(B->stream_destroy(c, t));
  }
  CHECK(c->ndue == N && c->nstreams == N);
  size_t left = N;
  for (int s = 0; s < 60; s += 5) {
    OK(B->sleep(c, 5000));
    uint64_t r;
    OK(B->pool_get(c, p, PS_ATTR_RESERVED_CURRENT, &r));   /* lands what is due */
    for (size_t i = 0; i < c->ndue; i++) CHECK(c->due[i]->tail > c->host_now);
    CHECK(c->ndue <= left && c->nstreams == c->ndue);
    left = c->ndue;
  }
  CHECK(c->ndue == 0 && !c->due && c->nstreams == 0 && c->ndestroyed == 0);
  CHECK(c->host_known.n <= 1);
  OK(B->pool_destroy(c, p));
  B->close(c);
}

/* n live blocks of 1-7 KiB with n young holes between them (frees of one
 * stream with no search since, as a running workload has), then 1,000
 * alloc+free pairs of 4 KiB on that stream: each takes a young hole.
 * Returns the young-run records the best fits looked at. */
static uint64_t young_pair_visits(int n) {
  sim_ctx *c = open_sim();
  ps_pool *p = keeping_pool(c);
  ps_stream *s;
  OK(B->stream_create(c, 0, 0, 1, &s));
  ps_addr *a = calloc(2 * (size_t)n, sizeof *a);
  uint64_t seed = 12345;
  for (int i = 0; i < 2 * n; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648u;
    OK(B->pool_alloc(c, p, 1024 + seed % (6 * 1024 + 1), s, &a[i], NULL));
  }
  for (int i = 0; i < 2 * n; i += 2) OK(B->pool_free(c, a[i], s));
  c->young_visits = 0;
  uint64_t reserved = 0, after = 0;
  OK(B->pool_get(c, p, PS_ATTR_RESERVED_CURRENT, &reserved));
  for (int k = 0; k < 1000; k++) {
    ps_addr b = 0;
    ps_alloc_note note;
    OK(B->pool_alloc(c, p, 4096, s, &b, &note));
    CHECK(note.rule == PS_RULE_STREAM_ORDER);   /* a young hole, not the top */
    OK(B->pool_free(c, b, s));
  }
  OK(B->pool_get(c, p, PS_ATTR_RESERVED_CURRENT, &after));
  CHECK(after == reserved);
  uint64_t visits = c->young_visits;
  CHECK(visits >= 1000);
  for (int i = 1; i < 2 * n; i += 2) OK(B->pool_free(c, a[i], s));
  free(a);
  OK(B->stream_sync(c, s));
  OK(B->stream_destroy(c, s));
  OK(B->pool_destroy(c, p));
  B->close(c);
  return visits;
}

/* The young best fit is a search, not a walk over the stream's young
 * frees (issue 20): with 100,000 young holes a pair looks at no more than
 * 4x what it looks at with 1,000 (a walk: 100x). */
static void test_young_fit_scales(void) {
  uint64_t small = young_pair_visits(1000), large = young_pair_visits(100000);
  CHECK(large <= 4 * small);
  if (large > 4 * small)
    fprintf(stderr, "young fit: %llu records looked at with 1,000 holes, %llu with 100,000\n",
            (unsigned long long)small, (unsigned long long)large);
}

/* A pool of n live blocks and n retired holes (3n blocks of 1-7 KiB on
 * stream a, every third freed and synced), then n more frees on a pending
 * behind a spin, which stream b may not use (no event, not complete);
 * then 1,000 allocations of 4 KiB on b, each a search of the pool's space
 * (b has no young frees). Returns the island nodes and records those
 * searches looked at. */
static uint64_t cross_stream_visits(int n) {
  sim_ctx *c = open_sim();
  ps_pool *p = keeping_pool(c);
  ps_stream *a, *b;
  OK(B->stream_create(c, 0, 0, 1, &a));
  OK(B->stream_create(c, 0, 0, 1, &b));
  ps_addr *blk = calloc(3 * (size_t)n, sizeof *blk), got[1000];
  uint64_t seed = 12345;
  for (int i = 0; i < 3 * n; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648u;
    OK(B->pool_alloc(c, p, 1024 + seed % (6 * 1024 + 1), a, &blk[i], NULL));
  }
  for (int i = 0; i < 3 * n; i += 3) OK(B->pool_free(c, blk[i], a));
  OK(B->stream_sync(c, a));
  OK(B->spin(c, a, 1000.0));
  for (int i = 1; i < 3 * n; i += 3) OK(B->pool_free(c, blk[i], a));
  c->fit_visits = 0;
  for (int k = 0; k < 1000; k++) {
    ps_alloc_note note;
    OK(B->pool_alloc(c, p, 4096, b, &got[k], &note));
    CHECK(note.rule == PS_RULE_HOST_SYNC || note.rule == PS_RULE_NONE);   /* never a's pending */
  }
  uint64_t visits = c->fit_visits;
  CHECK(visits >= 1000);
  for (int k = 0; k < 1000; k++) OK(B->pool_free(c, got[k], b));
  for (int i = 2; i < 3 * n; i += 3) OK(B->pool_free(c, blk[i], a));
  free(blk);
  OK(B->device_sync(c));
  OK(B->stream_destroy(c, a));
  OK(B->stream_destroy(c, b));
  OK(B->pool_destroy(c, p));
  B->close(c);
  return visits;
}

/* An allocation on one stream while another holds frees it may not use
 * is a search of the islands, not a walk over every record (issue 20):
 * with 100,000 live blocks and as many pending frees of the other stream
 * it looks at no more than 4x what it looks at with 1,000 (the walk:
 * 100x). */
static void test_cross_stream_fit_scales(void) {
  uint64_t small = cross_stream_visits(1000), large = cross_stream_visits(100000);
  CHECK(large <= 4 * small);
  if (large > 4 * small)
    fprintf(stderr, "cross-stream fit: %llu looked at with 1,000 blocks, %llu with 100,000\n",
            (unsigned long long)small, (unsigned long long)large);
}

/* A sync retires the frees it covers itself (issue 20): with 100,000
 * young holes, the stream's sync retires all of them and the first
 * allocation after it retires none (it paid for them all before). */
static void test_sync_retires(void) {
  enum { N = 100000 };
  sim_ctx *c = open_sim();
  ps_pool *p = keeping_pool(c);
  ps_stream *s;
  OK(B->stream_create(c, 0, 0, 1, &s));
  ps_addr *a = calloc(2 * (size_t)N, sizeof *a), b = 0;
  for (int i = 0; i < 2 * N; i++) OK(B->pool_alloc(c, p, 4096, s, &a[i], NULL));
  for (int i = 0; i < 2 * N; i += 2) OK(B->pool_free(c, a[i], s));
  uint64_t before = c->retires;
  OK(B->stream_sync(c, s));
  uint64_t at_sync = c->retires - before;
  ps_alloc_note note;
  OK(B->pool_alloc(c, p, 4096, s, &b, &note));
  CHECK(note.rule == PS_RULE_STREAM_ORDER);   /* a retired hole of its own stream */
  CHECK(at_sync == N);
  CHECK(c->retires - before == N);            /* the allocation retired nothing */
  OK(B->pool_free(c, b, s));
  for (int i = 1; i < 2 * N; i += 2) OK(B->pool_free(c, a[i], s));
  free(a);
  OK(B->stream_sync(c, s));
  OK(B->stream_destroy(c, s));
  OK(B->pool_destroy(c, p));
  B->close(c);
}

/* A sync that retires every free of a pool holding many rebuilds its
 * islands at once instead of updating them free by free: 50,000 young
 * holes on each of two streams retire with one rebuild, after which the
 * island treaps hold what a walk finds and the holes are reused. A sync
 * covering one stream's frees while the other's stay pending retires
 * them one by one. */
static void test_sync_rebuilds(void) {
  enum { N = 50000 };
  sim_ctx *c = open_sim();
  ps_pool *p = keeping_pool(c);
  ps_stream *s[2];
  for (int k = 0; k < 2; k++) OK(B->stream_create(c, 0, 0, 1, &s[k]));
  ps_addr *a = calloc(4 * (size_t)N, sizeof *a), b = 0;
  uint64_t seed = 99;
  for (int i = 0; i < 4 * N; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    OK(B->pool_alloc(c, p, 512 * (1 + (seed >> 40) % 14), s[i % 2], &a[i], NULL));
  }
  for (int i = 0; i < 4 * N; i += 4) {   /* holes of both streams, some adjacent */
    OK(B->pool_free(c, a[i], s[0]));
    OK(B->pool_free(c, a[i + 1], s[1]));
    a[i] = a[i + 1] = 0;
  }
  CHECK(sim_pool_island_check(p));
  uint64_t before = c->retires, rebuilds = c->isl_rebuilds;
  OK(B->device_sync(c));
  CHECK(c->retires - before == 2 * N);
  CHECK(c->isl_rebuilds == rebuilds + 1);
  CHECK(sim_pool_island_check(p));
  ps_alloc_note note;
  OK(B->pool_alloc(c, p, 4096, s[1], &b, &note));
  CHECK(note.rule == PS_RULE_HOST_SYNC || note.rule == PS_RULE_STREAM_ORDER);
  CHECK(sim_pool_island_check(p));
  OK(B->pool_free(c, b, s[1]));
  /* s[1]'s frees pend behind a spin; a sync of s[0] retires only s[0]'s. */
  OK(B->spin(c, s[1], 1000.0));
  for (int i = 2; i < 4 * N; i += 4) {
    OK(B->pool_free(c, a[i], s[0]));
    OK(B->pool_free(c, a[i + 1], s[1]));
    a[i] = a[i + 1] = 0;
  }
  rebuilds = c->isl_rebuilds;
  OK(B->stream_sync(c, s[0]));
  CHECK(c->isl_rebuilds == rebuilds);
  CHECK(sim_pool_island_check(p));
  for (int i = 0; i < 4 * N; i++) if (a[i]) OK(B->pool_free(c, a[i], s[0]));
  free(a);
  OK(B->device_sync(c));
  CHECK(sim_pool_island_check(p));
  for (int k = 0; k < 2; k++) OK(B->stream_destroy(c, s[k]));
  OK(B->pool_destroy(c, p));
  B->close(c);
}

/* Random allocations and frees on three streams, with spins, event waits,
 * syncs and sleeps between: after every step the young-run index holds
 * exactly the runs a walk over the records finds. */
static void test_young_index_random(void) {
  sim_ctx *c = open_sim();
  ps_pool *p = keeping_pool(c);
  ps_stream *s[3];
  for (int i = 0; i < 3; i++) OK(B->stream_create(c, 0, 0, 1, &s[i]));
  ps_event *e;
  OK(B->event_create(c, 0, &e));
  ps_addr live[256] = { 0 };
  uint64_t seed = 7;
  int steps = 0;
  for (; steps < 20000; steps++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    unsigned r = (unsigned)(seed >> 33), k = r % 256, arg = (r >> 16) % 16;
    ps_stream *st = s[(r >> 8) % 3];
    switch ((r >> 12) % 8) {
    case 4: OK(B->spin(c, st, 0.001 * (arg % 4))); break;
    case 5: OK(B->event_record(c, e, st)); OK(B->stream_wait(c, s[arg % 3], e)); break;
    case 6: if (arg == 0) OK(B->stream_sync(c, st)); break;
    case 7: OK(B->sleep(c, 0.001)); break;
    default:
      if (live[k]) {
        OK(B->pool_free(c, live[k], st));
        live[k] = 0;
      } else OK(B->pool_alloc(c, p, 512 * (1 + arg), st, &live[k], NULL));
    }
    if (!sim_pool_young_check(p) || !sim_pool_island_check(p)) break;
  }
  CHECK(steps == 20000);
  for (int k = 0; k < 256; k++) if (live[k]) OK(B->pool_free(c, live[k], s[0]));
  OK(B->device_sync(c));
  OK(B->event_destroy(c, e));
  for (int i = 0; i < 3; i++) OK(B->stream_destroy(c, s[i]));
  OK(B->pool_destroy(c, p));
  B->close(c);
}

int main(void) {
  test_young_fit_scales();
  test_cross_stream_fit_scales();
  test_sync_retires();
  test_sync_rebuilds();
  test_young_index_random();
  test_table();
  test_stale_handles();
  test_churn_changes_nothing();
  test_churn_memory();
  test_destroyed_streams_keep_knowledge();
  test_many_live();
  test_destroyed_busy_many();
  if (failures) fprintf(stderr, "test_sim_scale: %d failure(s)\n", failures);
  else printf("test_sim_scale: all passed\n");
  return failures != 0;
}
