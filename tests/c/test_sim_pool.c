/*
 * test_sim_pool.c: the sim backend's stream-ordered pools
 * (src/sim/sim_pool.c, docs/calibration.md E1-E9): granularity, placement,
 * coalescing, the reuse rules, release, threshold, trim, max_size,
 * counters, destroy, the last map. Exits non-zero on failure.
 */
#include "sim_check.h"

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

/* Lays out blocks of the given sizes back to back on stream s of a fresh
 * pool (release threshold max); their addresses go to a[]. */
static void *young_layout(const uint64_t *size, int n, ps_addr *a, ps_stream **s,
                          ps_pool **p) {
  ps_stream *s2;
  void *c = pool_env(0, 0, UINT64_MAX, s, &s2, p);
  for (int i = 0; i < n; i++) OK(B->pool_alloc(c, *p, size[i], *s, &a[i], NULL));
  return c;
}

/* Young frees (docs/sim.md, Young frees first), the cases of the H200
 * probe (docs/calibration/h200-2026-11-27-young.log) and of the H200's
 * replays: a search that lands in an old hole leaves a stream's young
 * frees young, whole or carved (Q1a, Q1b); fresh space taken at the top
 * ages them (Q2a); a carved young free's remainder counts as freed at the
 * carve; among equal young runs the one whose newest free is oldest. */
static void test_young_frees(void) {
  ps_stream *s;
  ps_pool *p;
  ps_addr a[6], g, k, S, R;
  /* Q1a and Q1b: h 16, s1 1, o 40, s2 1, y 32, s3 1 (MiB) */
  static const uint64_t q1[] = { 16 * MiB, MiB, 40 * MiB, MiB, 32 * MiB, MiB };
  for (int carved = 0; carved < 2; carved++) {
    void *c = young_layout(q1, 6, a, &s, &p);
    OK(B->pool_free(c, a[0], s));
    OK(B->pool_free(c, a[2], s));
    OK(B->pool_alloc(c, p, 96 * MiB, s, &g, NULL));   /* maps: h and o age */
    OK(B->pool_free(c, a[4], s));
    if (carved) OK(B->pool_alloc(c, p, MiB, s, &k, NULL));
    OK(B->pool_alloc(c, p, 40 * MiB, s, &S, NULL));   /* o: an old hole */
    OK(B->pool_alloc(c, p, 12 * MiB, s, &R, NULL));
    CHECK(S == a[2]);
    CHECK(R == a[4] + (carved ? MiB : 0));            /* y still young, not h */
    B->close(c);
  }
  /* Q2a: h 8, s1 1, y 16, s2 1; S 20 takes the top chunk's fresh space */
  static const uint64_t q2[] = { 8 * MiB, MiB, 16 * MiB, MiB };
  void *c = young_layout(q2, 4, a, &s, &p);
  OK(B->pool_free(c, a[0], s));
  OK(B->pool_alloc(c, p, 40 * MiB, s, &g, NULL));
  OK(B->pool_free(c, a[2], s));
  OK(B->pool_alloc(c, p, 20 * MiB, s, &S, NULL));
  OK(B->pool_alloc(c, p, 6 * MiB, s, &R, NULL));
  CHECK(S > a[3] && R == a[0]);                       /* y aged: best fit h */
  B->close(c);
  /* A remainder is newer than a free made before its carve: y1 2 MiB,
   * s1, y2 1 MiB - 512, s2; y1 freed, y2 freed, 1 MiB + 512 carves y1,
   * whose remainder is y2's size: y2, the older, serves. */
  static const uint64_t q3[] = { 2 * MiB, MiB, MiB - 512, MiB };
  c = young_layout(q3, 4, a, &s, &p);
  OK(B->pool_free(c, a[0], s));
  OK(B->pool_free(c, a[2], s));
  OK(B->pool_alloc(c, p, MiB + 512, s, &k, NULL));
  OK(B->pool_alloc(c, p, MiB - 512, s, &R, NULL));
  CHECK(k == a[0] && R == a[2]);
  B->close(c);
  /* Equal young runs by their newest free: u1 u2 s1 v1 v2 s2 (1 MiB each),
   * freed u1, v1, v2, u2: run u (newest: the 4th free) against run v (the
   * 3rd): 2 MiB takes v although u's first free is older. */
  static const uint64_t q4[] = { MiB, MiB, MiB, MiB, MiB, MiB };
  c = young_layout(q4, 6, a, &s, &p);
  OK(B->pool_free(c, a[0], s));
  OK(B->pool_free(c, a[3], s));
  OK(B->pool_free(c, a[4], s));
  OK(B->pool_free(c, a[1], s));
  OK(B->pool_alloc(c, p, 2 * MiB, s, &R, NULL));
  CHECK(R == a[3]);
  B->close(c);
}

int main(void) {
  test_last_map();
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
  test_young_frees();
  if (failures) fprintf(stderr, "test_sim_pool: %d failure(s)\n", failures);
  else printf("test_sim_pool: all passed\n");
  return failures != 0;
}
