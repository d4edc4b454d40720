/*
 * test_backend.c: conformance test of the backend interface (backend.h).
 *
 * Runs against one backend, chosen by POOLSH_BACKEND=cuda|sim; by default
 * cuda when it is compiled in and probe() says PS_OK, else sim. It calls
 * the ops table directly and asserts only what CUDA itself guarantees, so
 * that both backends must pass it. Exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#define MiB (UINT64_C(1) << 20)
#define N_CONTENT (MiB + 123)  /* odd size: head and tail bytes too */

typedef struct T {
  const ps_backend *b;
  void *ctx;
  int checks, failures;
  int stop;  /* interrupted() returns this */
} T;

/* Counts one check; prints where it failed. */
static int check(T *t, int ok, const char *what, int line) {
  t->checks++;
  if (!ok) {
    t->failures++;
    printf("FAIL line %d: %s\n", line, what);
  }
  return ok;
}

/* Checks that a call returned want; prints the status's name if not. */
static int expect(T *t, int got, int want, const char *what, int line) {
  t->checks++;
  if (got == want) return 1;
  t->failures++;
  printf("FAIL line %d: %s returned %d (%s), wanted %d (%s)\n", line, what,
         got, t->b->error_name(got), want, t->b->error_name(want));
  return 0;
}

#define CHECK(t, c) check((t), (c) ? 1 : 0, #c, __LINE__)
#define IS(t, call, want) expect((t), (call), (want), #call, __LINE__)
#define OK(t, call) IS(t, call, PS_OK)
#define NOT_OK(t, call) check((t), (call) != PS_OK, #call " != PS_OK", __LINE__)

static int interrupted(void *ud) { return ((T *)ud)->stop; }

static ps_config config(T *t, int device) {
  ps_config c;
  memset(&c, 0, sizeof c);
  c.device = device;
  c.interrupted = interrupted;
  c.interrupted_ud = t;
  return c;
}

/* The backend named by POOLSH_BACKEND, else cuda if usable, else sim;
 * NULL for a name that is not compiled in. */
static const ps_backend *choose(void) {
  const char *want = getenv("POOLSH_BACKEND");
  if (want && strcmp(want, "sim") == 0) return &ps_backend_sim;
#ifdef POOLSH_HAVE_CUDA
  if (want && strcmp(want, "cuda") == 0) return &ps_backend_cuda;
  if (!want && ps_backend_cuda.probe() == PS_OK) return &ps_backend_cuda;
#endif
  return want ? NULL : &ps_backend_sim;
}

static uint64_t pool_attr(T *t, ps_pool *p, ps_pool_attr a) {
  uint64_t v = UINT64_MAX;
  OK(t, t->b->pool_get(t->ctx, p, a, &v));
  return v;
}

/* ------------------------------------------------------------------ */

static void test_names(T *t) {
  const ps_backend *b = t->b;
  CHECK(t, !strcmp(b->error_name(PS_ERR_MEMORY_ALLOCATION),
                   "cudaErrorMemoryAllocation"));
  CHECK(t, !strcmp(b->error_string(PS_ERR_MEMORY_ALLOCATION), "out of memory"));
  CHECK(t, !strcmp(b->error_name(PS_ERR_INVALID_VALUE), "cudaErrorInvalidValue"));
  CHECK(t, !strcmp(b->error_name(PS_ERR_NOT_READY), "cudaErrorNotReady"));
  CHECK(t, !strcmp(b->error_name(PS_INTERRUPTED), "interrupted"));
  CHECK(t, !strcmp(b->error_string(PS_INTERRUPTED), "interrupted by the user"));
}

static void test_open_bad_device(T *t) {
  ps_config c = config(t, 9999);
  void *ctx = NULL;
  IS(t, t->b->open(&c, &ctx), PS_ERR_INVALID_DEVICE);
  c.device = -1;
  IS(t, t->b->open(&c, &ctx), PS_ERR_INVALID_DEVICE);
}

static void test_devices(T *t) {
  int n = 0;
  ps_device_info d;
  OK(t, t->b->device_count(t->ctx, &n));
  CHECK(t, n >= 1);
  OK(t, t->b->device_info(t->ctx, 0, &d));
  CHECK(t, d.name[0] != '\0');
  CHECK(t, d.total > 0 && d.free <= d.total);
  CHECK(t, d.cc_major >= 1);
  CHECK(t, d.pools_supported == 1);
  printf("device 0: %s, cc %d.%d, %.0f MiB free of %.0f\n", d.name,
         d.cc_major, d.cc_minor, (double)d.free / MiB, (double)d.total / MiB);
  IS(t, t->b->device_info(t->ctx, n, &d), PS_ERR_INVALID_DEVICE);
}

/* Ordering and timing: a spin keeps s busy; queries say so; syncs end it. */
static void test_streams_events(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  int least = 0, greatest = 0, idle = -1, done = -1;
  ps_stream *s1 = NULL, *s2 = NULL;
  ps_event *e0 = NULL, *e1 = NULL, *ea = NULL, *eb = NULL, *en = NULL;
  double ms = -1;
  OK(t, b->stream_priority_range(c, &least, &greatest));
  CHECK(t, least >= greatest);
  OK(t, b->stream_create(c, 0, greatest, 0, &s1));
  OK(t, b->stream_create(c, 0, least, 1, &s2));
  OK(t, b->event_create(c, 1, &e0));
  OK(t, b->event_create(c, 1, &e1));
  OK(t, b->event_create(c, 0, &ea));
  OK(t, b->event_create(c, 0, &eb));
  OK(t, b->event_create(c, 0, &en));

  OK(t, b->event_record(c, e0, s1));
  OK(t, b->spin(c, s1, 50));
  OK(t, b->event_record(c, e1, s1));
  IS(t, b->event_elapsed(c, e0, e1, &ms), PS_ERR_NOT_READY);
  OK(t, b->event_query(c, e1, &done));
  CHECK(t, done == 0);
  OK(t, b->stream_query(c, s1, &idle));
  CHECK(t, idle == 0);
  OK(t, b->event_sync(c, e1));
  OK(t, b->event_query(c, e1, &done));
  CHECK(t, done == 1);
  OK(t, b->event_elapsed(c, e0, e1, &ms));
  CHECK(t, ms >= 49.0 && ms < 5000.0);
  OK(t, b->stream_sync(c, s1));
  OK(t, b->stream_query(c, s1, &idle));
  CHECK(t, idle == 1);
  OK(t, b->event_record(c, en, s1));
  OK(t, b->event_sync(c, en));
  IS(t, b->event_elapsed(c, e0, en, &ms), PS_ERR_INVALID_RESOURCE);

  /* s2 waits for s1 through ea. */
  OK(t, b->spin(c, s1, 50));
  OK(t, b->event_record(c, ea, s1));
  OK(t, b->stream_wait(c, s2, ea));
  OK(t, b->event_record(c, eb, s2));
  OK(t, b->event_query(c, eb, &done));
  CHECK(t, done == 0);
  OK(t, b->event_sync(c, eb));
  OK(t, b->event_query(c, ea, &done));
  CHECK(t, done == 1);

  /* device_sync waits for every stream, the legacy one included. */
  OK(t, b->spin(c, s1, 20));
  OK(t, b->spin(c, s2, 20));
  OK(t, b->spin(c, NULL, 20));
  OK(t, b->device_sync(c));
  OK(t, b->stream_query(c, s1, &idle));
  CHECK(t, idle == 1);
  OK(t, b->stream_query(c, s2, &idle));
  CHECK(t, idle == 1);
  OK(t, b->stream_query(c, NULL, &idle));
  CHECK(t, idle == 1);
  OK(t, b->spin(c, NULL, 5));
  OK(t, b->stream_sync(c, NULL));

  NOT_OK(t, b->stream_destroy(c, NULL));
  OK(t, b->event_destroy(c, e0));
  OK(t, b->event_destroy(c, e1));
  OK(t, b->event_destroy(c, ea));
  OK(t, b->event_destroy(c, eb));
  OK(t, b->event_destroy(c, en));
  OK(t, b->stream_destroy(c, s1));
  OK(t, b->stream_destroy(c, s2));
}

/* Waits give up with PS_INTERRUPTED and leave the work queued. */
static void test_interrupts(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  ps_stream *s = NULL;
  ps_event *e = NULL;
  int idle = -1;
  OK(t, b->stream_create(c, 0, 0, 0, &s));
  OK(t, b->event_create(c, 0, &e));
  OK(t, b->spin(c, s, 200));
  OK(t, b->event_record(c, e, s));
  t->stop = 1;
  IS(t, b->stream_sync(c, s), PS_INTERRUPTED);
  IS(t, b->event_sync(c, e), PS_INTERRUPTED);
  IS(t, b->device_sync(c), PS_INTERRUPTED);
  IS(t, b->sleep(c, 1000), PS_INTERRUPTED);
  OK(t, b->stream_query(c, s, &idle));
  CHECK(t, idle == 0);
  t->stop = 0;
  OK(t, b->stream_sync(c, s));
  OK(t, b->stream_query(c, s, &idle));
  CHECK(t, idle == 1);
  OK(t, b->event_destroy(c, e));
  OK(t, b->stream_destroy(c, s));
}

static void test_clock(T *t) {
  double t0 = t->b->now(t->ctx);
  OK(t, t->b->sleep(t->ctx, 10));
  double t1 = t->b->now(t->ctx);
  CHECK(t, t0 >= 0 && t1 - t0 >= 9.99);
}

/* Counters: used and reserved follow an allocation; with threshold 0 a
 * sync gives memory back; highs stay until reset; trim releases. */
static void test_pool_counters(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  ps_pool_props props = {PS_LOCATION_DEVICE, 0, 0};
  ps_pool *p = NULL, *dp = NULL;
  ps_stream *s = NULL;
  ps_addr a = 0;
  ps_alloc_note note = {PS_RULE_UNKNOWN, 0};
  OK(t, b->stream_create(c, 0, 0, 0, &s));
  if (!OK(t, b->pool_create(c, &props, &p))) return;

  CHECK(t, pool_attr(t, p, PS_ATTR_RELEASE_THRESHOLD) == 0);
  CHECK(t, pool_attr(t, p, PS_ATTR_FOLLOW_EVENT_DEPS) == 1);
  CHECK(t, pool_attr(t, p, PS_ATTR_OPPORTUNISTIC) == 1);
  CHECK(t, pool_attr(t, p, PS_ATTR_INTERNAL_DEPS) == 1);
  CHECK(t, pool_attr(t, p, PS_ATTR_USED_CURRENT) == 0);
  CHECK(t, pool_attr(t, p, PS_ATTR_RESERVED_CURRENT) == 0);

  OK(t, b->pool_alloc(c, p, 8 * MiB, s, &a, &note));
  CHECK(t, a != 0);
  CHECK(t, note.rule >= PS_RULE_NONE && note.rule <= PS_RULE_UNKNOWN);
  uint64_t used = pool_attr(t, p, PS_ATTR_USED_CURRENT);
  uint64_t reserved = pool_attr(t, p, PS_ATTR_RESERVED_CURRENT);
  CHECK(t, used >= 8 * MiB);
  CHECK(t, reserved >= used);
  CHECK(t, pool_attr(t, p, PS_ATTR_USED_HIGH) >= used);
  CHECK(t, pool_attr(t, p, PS_ATTR_RESERVED_HIGH) >= reserved);
  OK(t, b->pool_free(c, a, s));
  OK(t, b->stream_sync(c, s));
  CHECK(t, pool_attr(t, p, PS_ATTR_USED_CURRENT) == 0);
  CHECK(t, pool_attr(t, p, PS_ATTR_RESERVED_CURRENT) == 0);
  CHECK(t, pool_attr(t, p, PS_ATTR_USED_HIGH) >= 8 * MiB);
  CHECK(t, pool_attr(t, p, PS_ATTR_RESERVED_HIGH) >= 8 * MiB);
  OK(t, b->pool_set(c, p, PS_ATTR_USED_HIGH, 0));
  OK(t, b->pool_set(c, p, PS_ATTR_RESERVED_HIGH, 0));
  CHECK(t, pool_attr(t, p, PS_ATTR_USED_HIGH) == 0);
  CHECK(t, pool_attr(t, p, PS_ATTR_RESERVED_HIGH) == 0);
  NOT_OK(t, b->pool_set(c, p, PS_ATTR_USED_CURRENT, 0));
  NOT_OK(t, b->pool_set(c, p, PS_ATTR_USED_HIGH, 5));

  /* A high threshold keeps memory until trimmed. */
  OK(t, b->pool_set(c, p, PS_ATTR_RELEASE_THRESHOLD, UINT64_MAX));
  CHECK(t, pool_attr(t, p, PS_ATTR_RELEASE_THRESHOLD) == UINT64_MAX);
  OK(t, b->pool_alloc(c, p, 8 * MiB, s, &a, NULL));
  OK(t, b->pool_free(c, a, s));
  OK(t, b->stream_sync(c, s));
  CHECK(t, pool_attr(t, p, PS_ATTR_USED_CURRENT) == 0);
  CHECK(t, pool_attr(t, p, PS_ATTR_RESERVED_CURRENT) >= 8 * MiB);
  OK(t, b->pool_trim(c, p, 0));
  CHECK(t, pool_attr(t, p, PS_ATTR_RESERVED_CURRENT) == 0);

  OK(t, b->pool_set(c, p, PS_ATTR_OPPORTUNISTIC, 0));
  CHECK(t, pool_attr(t, p, PS_ATTR_OPPORTUNISTIC) == 0);
  OK(t, b->pool_set(c, p, PS_ATTR_OPPORTUNISTIC, 1));
  CHECK(t, pool_attr(t, p, PS_ATTR_OPPORTUNISTIC) == 1);
  OK(t, b->pool_destroy(c, p));

  OK(t, b->pool_default(c, 0, &dp));
  IS(t, b->pool_destroy(c, dp), PS_ERR_INVALID_VALUE);
  OK(t, b->pool_alloc(c, dp, MiB, s, &a, NULL));
  OK(t, b->pool_free(c, a, s));
  OK(t, b->stream_sync(c, s));
  OK(t, b->stream_destroy(c, s));
}

/* max_size: an allocation past it fails with out-of-memory and the pool
 * keeps working. */
static void test_pool_oom(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  ps_pool_props props = {PS_LOCATION_DEVICE, 0, 64 * MiB};
  ps_pool *p = NULL;
  ps_stream *s = NULL;
  ps_addr a = 0, a2 = 0;
  OK(t, b->stream_create(c, 0, 0, 0, &s));
  if (!OK(t, b->pool_create(c, &props, &p))) return;
  OK(t, b->pool_alloc(c, p, 48 * MiB, s, &a, NULL));
  IS(t, b->pool_alloc(c, p, 32 * MiB, s, &a2, NULL), PS_ERR_MEMORY_ALLOCATION);
  OK(t, b->pool_free(c, a, s));
  OK(t, b->stream_sync(c, s));
  OK(t, b->pool_alloc(c, p, 32 * MiB, s, &a2, NULL));
  OK(t, b->pool_free(c, a2, s));
  OK(t, b->stream_sync(c, s));
  OK(t, b->pool_destroy(c, p));
  OK(t, b->stream_destroy(c, s));
}

/* ------------------------------------------------------------------ */
/* Contents                                                             */

typedef struct buf {
  const char *name;
  ps_kind kind;
  ps_addr a;
  int kernels;      /* the device may run kernels on it */
  int registered;   /* pageable memory registered here */
  ps_pool *pool;    /* for host pools */
} buf;

enum { MAX_BUFS = 8 };

/* Allocates one buffer of each kind the backend offers. */
static int make_bufs(T *t, ps_stream *s, buf *bufs, ps_pool **pools) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  int n = 0;
  ps_pool_props dev = {PS_LOCATION_DEVICE, 0, 0};
  ps_pool_props host = {PS_LOCATION_HOST, 0, 0};
  ps_addr a;
  if (OK(t, b->pool_create(c, &dev, &pools[0])) &&
      OK(t, b->pool_alloc(c, pools[0], N_CONTENT, s, &a, NULL)))
    bufs[n++] = (buf){"pool", PS_KIND_POOL, a, 1, 0, pools[0]};
  if (OK(t, b->pool_default(c, 0, &pools[1])) &&
      OK(t, b->pool_alloc(c, pools[1], N_CONTENT, s, &a, NULL)))
    bufs[n++] = (buf){"default pool", PS_KIND_POOL, a, 1, 0, pools[1]};
  int st = b->pool_create(c, &host, &pools[2]);
  if (st == PS_OK && OK(t, b->pool_alloc(c, pools[2], N_CONTENT, s, &a, NULL)))
    bufs[n++] = (buf){"host pool", PS_KIND_POOL, a, 1, 0, pools[2]};
  else if (st != PS_OK)
    printf("note: host pools not available: %s\n", b->error_name(st));
  if (OK(t, b->malloc_device(c, N_CONTENT, &a)))
    bufs[n++] = (buf){"malloc", PS_KIND_MALLOC, a, 1, 0, NULL};
  if (OK(t, b->alloc_pinned(c, N_CONTENT, 0, &a)))
    bufs[n++] = (buf){"pinned", PS_KIND_PINNED, a, 1, 0, NULL};
  if (OK(t, b->alloc_pinned(c, N_CONTENT, PS_PINNED_PORTABLE | PS_PINNED_MAPPED, &a)))
    bufs[n++] = (buf){"pinned mapped", PS_KIND_PINNED, a, 1, 0, NULL};
  if (OK(t, b->alloc_pageable(c, N_CONTENT, &a)) &&
      OK(t, b->host_register(c, a, N_CONTENT)))
    bufs[n++] = (buf){"registered", PS_KIND_PAGEABLE, a, 1, 1, NULL};
  if (OK(t, b->alloc_pageable(c, N_CONTENT, &a)))
    bufs[n++] = (buf){"pageable", PS_KIND_PAGEABLE, a, 0, 0, NULL};
  return n;
}

static void free_buf(T *t, const buf *x, ps_stream *s) {
  const ps_backend *b = t->b;
  switch (x->kind) {
  case PS_KIND_POOL: OK(t, b->pool_free(t->ctx, x->a, s)); break;
  case PS_KIND_MALLOC: OK(t, b->free_device(t->ctx, x->a)); break;
  case PS_KIND_PINNED: OK(t, b->free_pinned(t->ctx, x->a)); break;
  case PS_KIND_PAGEABLE:
    if (x->registered) OK(t, b->host_unregister(t->ctx, x->a));
    OK(t, b->free_pageable(t->ctx, x->a));
    break;
  case PS_KIND_VMM: break;   /* not made by make_bufs */
  }
}

static int64_t verify(T *t, const buf *x, uint64_t off, uint64_t n, int byte,
                      ps_stream *s) {
  int64_t bad = -2;
  OK(t, t->b->verify(t->ctx, x->a + off, n, byte, s, &bad));
  return bad;
}

/* fill / verify / touch / read / write on one buffer the device reaches. */
static void test_kernels_on(T *t, const buf *x, ps_stream *s, uint8_t *host) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  int before = t->failures;
  uint8_t zero = 0;
  OK(t, b->fill(c, x->a, N_CONTENT, 0x5a, s));
  CHECK(t, verify(t, x, 0, N_CONTENT, 0x5a, s) == -1);
  OK(t, b->write(c, x->kind, x->a + 12345, &zero, 1, s));
  CHECK(t, verify(t, x, 0, N_CONTENT, 0x5a, s) == 12345);
  OK(t, b->write(c, x->kind, x->a + N_CONTENT - 1, &zero, 1, s));
  CHECK(t, verify(t, x, 20000, N_CONTENT - 20000, 0x5a, s) ==
               (int64_t)(N_CONTENT - 20000 - 1));
  /* Unaligned start and end. */
  OK(t, b->fill(c, x->a + 3, N_CONTENT - 3, 0xc3, s));
  CHECK(t, verify(t, x, 3, N_CONTENT - 3, 0xc3, s) == -1);
  CHECK(t, verify(t, x, 0, N_CONTENT, 0xc3, s) == 0);
  CHECK(t, verify(t, x, 1, 5, 0xc3, s) == 0);
  CHECK(t, verify(t, x, 0, 0, 0xc3, s) == -1);
  OK(t, b->touch(c, x->a, N_CONTENT, s));
  CHECK(t, verify(t, x, 3, N_CONTENT - 3, 0xc3, s) == -1);
  memset(host, 0, N_CONTENT);
  OK(t, b->read(c, x->kind, x->a, host, N_CONTENT, s));
  int same = host[0] == 0x5a && host[1] == 0x5a && host[2] == 0x5a;
  for (uint64_t i = 3; i < N_CONTENT; i++) same &= host[i] == 0xc3;
  CHECK(t, same);
  if (t->failures != before) printf("  (kernels on %s)\n", x->name);
}

/* Writes a pattern into src, copies it to dst on s, reads it back. */
static void test_copy(T *t, const buf *src, const buf *dst, ps_stream *s,
                      uint8_t *host, int seed) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  int before = t->failures;
  for (uint64_t i = 0; i < N_CONTENT; i++)
    host[i] = (uint8_t)(i * 31 + (uint64_t)seed * 7);
  OK(t, b->write(c, src->kind, src->a, host, N_CONTENT, s));
  OK(t, b->copy(c, dst->a, src->a, N_CONTENT, s));
  OK(t, b->stream_sync(c, s));
  memset(host, 0, N_CONTENT);
  OK(t, b->read(c, dst->kind, dst->a, host, N_CONTENT, s));
  int same = 1;
  for (uint64_t i = 0; i < N_CONTENT; i++)
    same &= host[i] == (uint8_t)(i * 31 + (uint64_t)seed * 7);
  CHECK(t, same);
  if (t->failures != before) printf("  (copy %s -> %s)\n", src->name, dst->name);
}

static void test_contents(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  buf bufs[MAX_BUFS];
  ps_pool *pools[3] = {NULL, NULL, NULL};
  ps_stream *s = NULL;
  uint8_t *host = malloc(N_CONTENT);
  if (!CHECK(t, host != NULL)) return;
  OK(t, b->stream_create(c, 0, 0, 0, &s));
  int n = make_bufs(t, s, bufs, pools);
  for (int i = 0; i < n; i++)
    if (bufs[i].kernels) test_kernels_on(t, &bufs[i], s, host);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j) test_copy(t, &bufs[i], &bufs[j], s, host, i * MAX_BUFS + j);
  printf("contents: %d kinds of buffer, %d copies\n", n, n * (n - 1));
  for (int i = 0; i < n; i++) free_buf(t, &bufs[i], s);
  OK(t, b->stream_sync(c, s));
  if (pools[0]) OK(t, b->pool_destroy(c, pools[0]));
  if (pools[2]) OK(t, b->pool_destroy(c, pools[2]));
  OK(t, b->stream_destroy(c, s));
  free(host);
}

/* A buffer larger than one grid's worth: the first of two bad bytes. */
static void test_large(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  const uint64_t n = 64 * MiB + 5;
  ps_addr a = 0;
  int64_t bad = -2;
  uint8_t zero = 0;
  if (!OK(t, b->malloc_device(c, n, &a))) return;
  OK(t, b->fill(c, a + 1, n - 1, 0x11, NULL));
  OK(t, b->verify(c, a + 1, n - 1, 0x11, NULL, &bad));
  CHECK(t, bad == -1);
  OK(t, b->write(c, PS_KIND_MALLOC, a + n - 7, &zero, 1, NULL));
  OK(t, b->verify(c, a + 1, n - 1, 0x11, NULL, &bad));
  CHECK(t, bad == (int64_t)(n - 8));
  OK(t, b->write(c, PS_KIND_MALLOC, a + 5, &zero, 1, NULL));
  OK(t, b->verify(c, a + 1, n - 1, 0x11, NULL, &bad));
  CHECK(t, bad == 4);
  OK(t, b->free_device(c, a));
}

/* ------------------------------------------------------------------ */
/* Bad input                                                            */

static void test_bad_input(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  ps_addr a = 0;
  ps_pool *p = NULL;
  double v = 0;
  ps_pool_props far = {PS_LOCATION_DEVICE, 9999, 0};
  NOT_OK(t, b->pool_free(c, (ps_addr)0x10000, NULL));
  NOT_OK(t, b->free_device(c, (ps_addr)0x10000));
  NOT_OK(t, b->pool_create(c, &far, &p));
  NOT_OK(t, b->pool_default(c, 9999, &p));
  NOT_OK(t, b->option_get(c, "no-such-option", &v));
  NOT_OK(t, b->option_set(c, "no-such-option", 1));
  if (!OK(t, b->alloc_pageable(c, 3 * 4096, &a))) return;
  CHECK(t, a % 4096 == 0);
  OK(t, b->host_register(c, a, 3 * 4096));
  IS(t, b->host_register(c, a, 3 * 4096), PS_ERR_ALREADY_REGISTERED);
  OK(t, b->host_unregister(c, a));
  IS(t, b->host_unregister(c, a), PS_ERR_NOT_REGISTERED);
  OK(t, b->free_pageable(c, a));
  /* The context still works after the errors. */
  OK(t, b->malloc_device(c, MiB, &a));
  OK(t, b->free_device(c, a));
}

/* ------------------------------------------------------------------ */
/* Virtual memory management (cuMem*)                                   */

static uint64_t device_free(T *t) {
  ps_device_info d;
  memset(&d, 0, sizeof d);
  OK(t, t->b->device_info(t->ctx, 0, &d));
  return d.free;
}

/* Both granularities of device memory; the minimum one for the rest
 * (0, a failure, when the backend lacks a VMM op: both must offer them). */
static uint64_t vmm_page(T *t) {
  const ps_backend *b = t->b;
  if (!CHECK(t, b->vmm_granularity && b->vmm_reserve && b->vmm_free && b->vmm_create &&
                    b->vmm_release && b->vmm_map && b->vmm_unmap && b->vmm_set_access))
    return 0;
  uint64_t g = 0, rec = 0;
  OK(t, t->b->vmm_granularity(t->ctx, PS_LOCATION_DEVICE, 0, 0, &g));
  OK(t, t->b->vmm_granularity(t->ctx, PS_LOCATION_DEVICE, 0, 1, &rec));
  CHECK(t, g >= 4096 && (g & (g - 1)) == 0);
  CHECK(t, rec >= g && rec % g == 0);
  return g;
}

static void test_vmm_granularity(T *t) {
  uint64_t g = vmm_page(t), host = 0;
  if (!g) return;
  int st = t->b->vmm_granularity(t->ctx, PS_LOCATION_HOST, 0, 0, &host);
  if (st == PS_OK) CHECK(t, host >= 4096 && (host & (host - 1)) == 0);
  else printf("note: host VMM granularity not available: %s\n", t->b->error_name(st));
  printf("vmm granularity: device %.0f KiB, host %.0f KiB\n", (double)g / 1024, (double)host / 1024);
  /* No check of a device that does not exist: the H200's driver (580)
   * answers cuMemGetAllocationGranularity for device 9999 with success;
   * the binding refuses such a device before asking the backend. */
}

/* Reserve, create, map, set access; the kernels, copies, reads and
 * writes on mapped bytes; a handle mapped twice shows the same bytes;
 * unmap, release, free. */
static void test_vmm_cycle(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  uint64_t g = vmm_page(t);
  if (!g) return;
  ps_addr r = 0, m = 0;
  ps_vmm_handle *h = NULL;
  ps_stream *s = NULL;
  int64_t bad = -2;
  uint8_t zero = 0, *host = malloc(2 * g);
  if (!CHECK(t, host != NULL)) return;
  OK(t, b->stream_create(c, 0, 0, 0, &s));
  if (!OK(t, b->vmm_reserve(c, 8 * g, 0, &r))) return;
  CHECK(t, r != 0 && r % g == 0);
  OK(t, b->vmm_create(c, PS_LOCATION_DEVICE, 0, 2 * g, &h));
  OK(t, b->vmm_map(c, r, 2 * g, 0, h));
  OK(t, b->vmm_set_access(c, r, 2 * g, 0, PS_ACCESS_RW));
  OK(t, b->fill(c, r, 2 * g, 0x6b, s));
  OK(t, b->verify(c, r, 2 * g, 0x6b, s, &bad));
  CHECK(t, bad == -1);
  OK(t, b->write(c, PS_KIND_VMM, r + g + 17, &zero, 1, s));
  OK(t, b->verify(c, r + 1, 2 * g - 1, 0x6b, s, &bad));
  CHECK(t, bad == (int64_t)(g + 16));

  /* The same handle at a second place: the same bytes. */
  OK(t, b->vmm_map(c, r + 4 * g, 2 * g, 0, h));
  OK(t, b->vmm_set_access(c, r + 4 * g, 2 * g, 0, PS_ACCESS_RW));
  OK(t, b->verify(c, r + 4 * g, g, 0x6b, s, &bad));
  CHECK(t, bad == -1);
  OK(t, b->fill(c, r + 4 * g, 1, 0x01, s));
  OK(t, b->read(c, PS_KIND_VMM, r, host, 2 * g, s));
  CHECK(t, host[0] == 0x01 && host[1] == 0x6b && host[g + 17] == 0 && host[2 * g - 1] == 0x6b);

  /* Copies to and from cudaMalloc memory. */
  if (OK(t, b->malloc_device(c, 2 * g, &m))) {
    OK(t, b->fill(c, m, 2 * g, 0x22, s));
    OK(t, b->copy(c, r + 3, m, g, s));
    OK(t, b->verify(c, r, 2 * g, 0x22, s, &bad));
    CHECK(t, bad == 0);
    OK(t, b->verify(c, r + 3, g, 0x22, s, &bad));
    CHECK(t, bad == -1);
    OK(t, b->copy(c, m, r + 4 * g, 2 * g, s));
    OK(t, b->stream_sync(c, s));
    memset(host, 0xee, 2 * g);
    OK(t, b->read(c, PS_KIND_MALLOC, m, host, 2 * g, s));
    CHECK(t, host[0] == 0x01 && host[3] == 0x22 && host[g + 2] == 0x22 && host[g + 3] == 0x6b);
    OK(t, b->free_device(c, m));
  }
  OK(t, b->stream_sync(c, s));
  OK(t, b->vmm_unmap(c, r, 2 * g));
  OK(t, b->vmm_unmap(c, r + 4 * g, 2 * g));
  OK(t, b->vmm_release(c, h));
  OK(t, b->vmm_free(c, r, 8 * g));
  OK(t, b->stream_destroy(c, s));
  free(host);
}

/* Adjacent mappings of different handles are one stretch of addresses:
 * one set_access covers both (PyTorch's expandable segments make one call
 * per growth) and kernels, copies and reads cross the boundary, as a
 * tensor spanning two pages does. */
static void test_vmm_adjacent(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  uint64_t g = vmm_page(t);
  if (!g) return;
  ps_addr r = 0, m = 0;
  ps_vmm_handle *h1 = NULL, *h2 = NULL;
  int64_t bad = -2;
  uint8_t x[4] = {0}, one = 1;
  if (!OK(t, b->vmm_reserve(c, 4 * g, 0, &r))) return;
  OK(t, b->vmm_create(c, PS_LOCATION_DEVICE, 0, g, &h1));
  OK(t, b->vmm_create(c, PS_LOCATION_DEVICE, 0, g, &h2));
  OK(t, b->vmm_map(c, r, g, 0, h1));
  OK(t, b->vmm_map(c, r + g, g, 0, h2));
  OK(t, b->vmm_set_access(c, r, 2 * g, 0, PS_ACCESS_RW));
  OK(t, b->fill(c, r, 2 * g, 0x44, NULL));
  OK(t, b->write(c, PS_KIND_VMM, r + g, &one, 1, NULL));
  OK(t, b->verify(c, r + 1, 2 * g - 1, 0x44, NULL, &bad));
  CHECK(t, bad == (int64_t)(g - 1));
  OK(t, b->read(c, PS_KIND_VMM, r + g - 2, x, 4, NULL));
  CHECK(t, x[0] == 0x44 && x[1] == 0x44 && x[2] == 1 && x[3] == 0x44);
  if (OK(t, b->malloc_device(c, 2 * g, &m))) {
    OK(t, b->copy(c, m, r, 2 * g, NULL));
    OK(t, b->verify(c, m, g, 0x44, NULL, &bad));
    CHECK(t, bad == -1);
    OK(t, b->copy(c, r + g / 2, m, g, NULL));   /* across the boundary */
    OK(t, b->verify(c, r, 2 * g, 0x44, NULL, &bad));
    CHECK(t, bad == -1);
    OK(t, b->free_device(c, m));
  }
  OK(t, b->stream_sync(c, NULL));
  OK(t, b->vmm_unmap(c, r, 2 * g));                /* both at once */
  OK(t, b->vmm_release(c, h1));
  OK(t, b->vmm_release(c, h2));
  OK(t, b->vmm_free(c, r, 4 * g));
}

/* Every misuse of tests/data/vmm/h200-probe.json, with the H200's answer. */
static void test_vmm_misuse(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  uint64_t g = vmm_page(t);
  if (!g) return;
  ps_addr va = 0, r2 = 0;
  ps_vmm_handle *h1 = NULL, *h2 = NULL, *h = NULL;
  int before = t->failures;
  IS(t, b->vmm_reserve(c, g + 4096, 0, &r2), PS_ERR_INVALID_VALUE);
  IS(t, b->vmm_create(c, PS_LOCATION_DEVICE, 0, g + 4096, &h), PS_ERR_INVALID_VALUE);
  IS(t, b->vmm_create(c, PS_LOCATION_DEVICE, 0, 0, &h), PS_ERR_INVALID_VALUE);
  NOT_OK(t, b->vmm_create(c, PS_LOCATION_DEVICE, 9999, g, &h));
  if (!OK(t, b->vmm_reserve(c, 64 * g, 0, &va))) return;
  OK(t, b->vmm_create(c, PS_LOCATION_DEVICE, 0, 2 * g, &h1));
  OK(t, b->vmm_create(c, PS_LOCATION_DEVICE, 0, 2 * g, &h2));
  if (t->failures != before) return;
  IS(t, b->vmm_map(c, va + 4096, 2 * g, 0, h1), PS_ERR_INVALID_VALUE);
  IS(t, b->vmm_map(c, va, g, 4096, h1), PS_ERR_NOT_SUPPORTED);
  IS(t, b->vmm_map(c, va, 4 * g, 0, h1), PS_ERR_NOT_SUPPORTED);
  /* Only the whole handle from offset 0 maps (as on the H200): an aligned
   * offset, or a smaller size, is not supported either, and that answer
   * comes before the address's. */
  IS(t, b->vmm_map(c, va, g, g, h1), PS_ERR_NOT_SUPPORTED);
  IS(t, b->vmm_map(c, va, g, 0, h1), PS_ERR_NOT_SUPPORTED);
  IS(t, b->vmm_map(c, va + 4096, g, 0, h1), PS_ERR_NOT_SUPPORTED);
  IS(t, b->vmm_map(c, va + 64 * g, 2 * g, 0, h1), PS_ERR_INVALID_VALUE);  /* past the reservation */
  IS(t, b->vmm_map(c, va + 63 * g, 2 * g, 0, h1), PS_ERR_INVALID_VALUE);  /* across its end */
  OK(t, b->vmm_map(c, va, 2 * g, 0, h1));
  IS(t, b->vmm_map(c, va, 2 * g, 0, h2), PS_ERR_INVALID_VALUE);
  IS(t, b->vmm_map(c, va + g, 2 * g, 0, h2), PS_ERR_INVALID_VALUE);
  OK(t, b->vmm_map(c, va + 8 * g, 2 * g, 0, h1));
  OK(t, b->vmm_set_access(c, va, 2 * g, 0, PS_ACCESS_RW));
  IS(t, b->vmm_set_access(c, va + 20 * g, 2 * g, 0, PS_ACCESS_RW), PS_ERR_INVALID_VALUE);
  IS(t, b->vmm_set_access(c, va, g, 0, PS_ACCESS_RW), PS_ERR_INVALID_VALUE);
  IS(t, b->vmm_set_access(c, va, 4 * g, 0, PS_ACCESS_RW), PS_ERR_INVALID_VALUE);  /* half unmapped */
  OK(t, b->fill(c, va, 2 * g, 1, NULL));
  OK(t, b->stream_sync(c, NULL));
  IS(t, b->vmm_unmap(c, va, g), PS_ERR_INVALID_VALUE);
  IS(t, b->vmm_unmap(c, va + g, 2 * g), PS_ERR_INVALID_VALUE);
  OK(t, b->vmm_unmap(c, va + 30 * g, 2 * g));                 /* never mapped */
  /* Two mappings unmapped by one call. */
  OK(t, b->vmm_map(c, va + 2 * g, 2 * g, 0, h2));
  OK(t, b->vmm_unmap(c, va, 4 * g));
  /* Releasing a mapped handle, then unmapping it. */
  OK(t, b->vmm_map(c, va + 40 * g, 2 * g, 0, h1));
  OK(t, b->vmm_release(c, h1));
  OK(t, b->vmm_unmap(c, va + 40 * g, 2 * g));
  /* The other place h1 was mapped still holds it. */
  OK(t, b->vmm_unmap(c, va + 8 * g, 2 * g));
  /* A reservation with a mapping left is not freed; afterwards it is. */
  OK(t, b->vmm_map(c, va + 50 * g, 2 * g, 0, h2));
  IS(t, b->vmm_free(c, va, 64 * g), PS_ERR_INVALID_VALUE);
  OK(t, b->vmm_unmap(c, va + 50 * g, 2 * g));
  OK(t, b->vmm_release(c, h2));
  OK(t, b->vmm_free(c, va, 64 * g));
  /* The context still works. */
  OK(t, b->vmm_reserve(c, 2 * g, 0, &r2));
  OK(t, b->vmm_free(c, r2, 2 * g));
}

/* Created device memory counts against the device from cuMemCreate until
 * the last of release and unmap; a create beyond the device fails with
 * out of memory and the context keeps working. */
static void test_vmm_accounting(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  uint64_t g = vmm_page(t), n = 32 * g;
  if (!g) return;
  ps_device_info d;
  ps_addr r = 0;
  ps_vmm_handle *h = NULL, *big = NULL;
  uint64_t before = device_free(t);
  if (!OK(t, b->vmm_create(c, PS_LOCATION_DEVICE, 0, n, &h))) return;
  uint64_t created = device_free(t);
  CHECK(t, before >= created + n);
  OK(t, b->vmm_reserve(c, n, 0, &r));
  OK(t, b->vmm_map(c, r, n, 0, h));
  OK(t, b->vmm_release(c, h));
  uint64_t released = device_free(t);
  CHECK(t, released + n <= before);                /* still mapped: still used */
  OK(t, b->vmm_unmap(c, r, n));
  uint64_t unmapped = device_free(t);
  CHECK(t, unmapped >= released + n);               /* gone with the last mapping */
  OK(t, b->vmm_free(c, r, n));
  OK(t, b->device_info(c, 0, &d));
  uint64_t too_much = (d.total / g + 1) * g;
  IS(t, b->vmm_create(c, PS_LOCATION_DEVICE, 0, too_much, &big), PS_ERR_MEMORY_ALLOCATION);
  OK(t, b->vmm_create(c, PS_LOCATION_DEVICE, 0, g, &h));
  OK(t, b->vmm_release(c, h));
  printf("vmm accounting: %.0f MiB created, free %+.0f MiB, after unmap %+.0f MiB\n",
         (double)n / MiB, ((double)created - (double)before) / MiB,
         ((double)unmapped - (double)before) / MiB);
}

/* Host-located memory, where the backend offers it: mapped, made
 * accessible to the device, filled and read back. */
static void test_vmm_host(T *t) {
  const ps_backend *b = t->b;
  void *c = t->ctx;
  uint64_t g = 0;
  ps_addr r = 0;
  ps_vmm_handle *h = NULL;
  int64_t bad = -2;
  uint8_t x[4] = {0};
  if (!vmm_page(t)) return;
  int st = b->vmm_granularity(c, PS_LOCATION_HOST, 0, 0, &g);
  if (st == PS_OK) st = b->vmm_create(c, PS_LOCATION_HOST, 0, g, &h);
  if (st != PS_OK) {
    printf("note: host VMM memory not available: %s\n", b->error_name(st));
    return;
  }
  OK(t, b->vmm_reserve(c, g, 0, &r));
  OK(t, b->vmm_map(c, r, g, 0, h));
  OK(t, b->vmm_set_access(c, r, g, 0, PS_ACCESS_RW));
  OK(t, b->fill(c, r, g, 0x3c, NULL));
  OK(t, b->verify(c, r, g, 0x3c, NULL, &bad));
  CHECK(t, bad == -1);
  OK(t, b->read(c, PS_KIND_VMM, r + g - 4, x, 4, NULL));
  CHECK(t, x[0] == 0x3c && x[3] == 0x3c);
  OK(t, b->vmm_unmap(c, r, g));
  OK(t, b->vmm_release(c, h));
  OK(t, b->vmm_free(c, r, g));
}

/* A context closed with a range mapped, accessible and in use by queued
 * work gives its memory back without a fault. */
static void test_vmm_close(T *t) {
  const ps_backend *b = t->b;
  ps_config cfg = config(t, 0);
  void *c2 = NULL;
  uint64_t g = vmm_page(t);
  if (!g) return;
  ps_addr r = 0;
  ps_vmm_handle *h = NULL;
  uint64_t before = device_free(t);
  if (!OK(t, b->open(&cfg, &c2))) return;
  OK(t, b->vmm_reserve(c2, 16 * g, 0, &r));
  OK(t, b->vmm_create(c2, PS_LOCATION_DEVICE, 0, 16 * g, &h));
  OK(t, b->vmm_map(c2, r, 16 * g, 0, h));
  OK(t, b->vmm_set_access(c2, r, 16 * g, 0, PS_ACCESS_RW));
  OK(t, b->spin(c2, NULL, 20));
  OK(t, b->fill(c2, r, 16 * g, 9, NULL));
  b->close(c2);
  CHECK(t, device_free(t) + g >= before);   /* the 16 pages are back (a page of slack) */
  /* This context is unharmed. */
  ps_addr a = 0;
  OK(t, b->malloc_device(t->ctx, MiB, &a));
  OK(t, b->fill(t->ctx, a, MiB, 1, NULL));
  OK(t, b->stream_sync(t->ctx, NULL));
  OK(t, b->free_device(t->ctx, a));
}

/* A second context lives beside the first; closing it with work still
 * queued does not wait for that work. */
static void test_second_context(T *t) {
  const ps_backend *b = t->b;
  ps_config cfg = config(t, 0);
  void *c2 = NULL;
  ps_stream *s = NULL;
  ps_addr a = 0;
  int64_t bad = -2;
  if (!OK(t, b->open(&cfg, &c2))) return;
  OK(t, b->stream_create(c2, 0, 0, 0, &s));
  OK(t, b->malloc_device(c2, MiB, &a));
  OK(t, b->fill(c2, a, MiB, 7, s));
  OK(t, b->verify(c2, a, MiB, 7, s, &bad));
  CHECK(t, bad == -1);
  OK(t, b->free_device(c2, a));
  OK(t, b->spin(c2, s, 1000));
  double t0 = b->now(t->ctx);
  b->close(c2);
  CHECK(t, b->now(t->ctx) - t0 < 500);
}

int main(void) {
  T t;
  memset(&t, 0, sizeof t);
  t.b = choose();
  if (!t.b) {
    printf("test_backend: backend '%s' is not compiled in\n",
           getenv("POOLSH_BACKEND"));
    return 2;
  }
  printf("test_backend: backend %s\n", t.b->name);
  ps_config cfg = config(&t, 0);
  test_names(&t);
  test_open_bad_device(&t);
  int st = t.b->open(&cfg, &t.ctx);
  if (st != PS_OK) {
    printf("FAIL: open: %s: %s\n", t.b->error_name(st), t.b->error_string(st));
    return 1;
  }
  static const struct {
    const char *name;
    void (*run)(T *);
  } tests[] = {{"devices", test_devices},
               {"streams and events", test_streams_events},
               {"interrupts", test_interrupts},
               {"clock", test_clock},
               {"pool counters", test_pool_counters},
               {"pool max_size", test_pool_oom},
               {"contents", test_contents},
               {"large buffer", test_large},
               {"bad input", test_bad_input},
               {"second context", test_second_context},
               {"vmm granularity", test_vmm_granularity},
               {"vmm cycle", test_vmm_cycle},
               {"vmm adjacent mappings", test_vmm_adjacent},
               {"vmm misuse", test_vmm_misuse},
               {"vmm accounting", test_vmm_accounting},
               {"vmm host memory", test_vmm_host},
               {"vmm close", test_vmm_close}};
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    int before = t.failures;
    tests[i].run(&t);
    printf("%s %s\n", t.failures == before ? "ok  " : "FAIL", tests[i].name);
  }
  t.b->close(t.ctx);
  printf("test_backend: %s: %d checks, %d failures\n", t.b->name, t.checks,
         t.failures);
  return t.failures != 0;
}
