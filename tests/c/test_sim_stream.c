/*
 * test_sim_stream.c: the sim backend's the virtual clock, streams and
 * events (src/sim/sim_stream.c): the clock, the legacy stream, each op's
 * span, a stream destroyed busy, interrupted waits. Exits non-zero on
 * failure.
 */
#include "sim_check.h"

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

int main(void) {
  test_clock();
  test_last_span();
  test_legacy();
  test_destroy_busy();
  test_interrupts();
  if (failures) fprintf(stderr, "test_sim_stream: %d failure(s)\n", failures);
  else printf("test_sim_stream: all passed\n");
  return failures != 0;
}
