/*
 * test_sim_faults.c: the sim's fault injection. Every op of
 * SIM_FAULT_OPS counts its calls and fails when a fault is due, before it
 * changes anything; count, every, clear and the option keys behave as
 * docs/sim.md says. Exits non-zero on failure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "sim/sim_fault.h"

static int failures;

#define CHECK(c) do { if (!(c)) { failures++; \
  fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, __func__, #c); } } while (0)
#define OK(x) CHECK((x) == PS_OK)

static const ps_backend *B = &ps_backend_sim;

/* Objects every op can be called on, made before the fault is armed. */
typedef struct fixture {
  ps_stream *s;
  ps_event *e, *e2;
  ps_pool *p, *p2;
  ps_addr pool_buf, malloc_buf, pinned_buf, pageable_buf, registered_buf;
  ps_pool *ipc, *imported;       /* an IPC pool, and it imported here */
  ps_event *ipc_e;
  ps_addr ipc_buf;
  int fd;
  uint8_t tok[PS_IPC_BYTES], ev[PS_IPC_BYTES];
} fixture;

static void *open_sim(void) {
  void *c = NULL;
  OK(B->open(NULL, &c));
  return c;
}

static void make(void *c, fixture *f) {
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, 0 };
  memset(f, 0, sizeof *f);
  OK(B->stream_create(c, 0, 0, 1, &f->s));
  OK(B->event_create(c, 1, &f->e));
  OK(B->event_create(c, 1, &f->e2));
  OK(B->event_record(c, f->e, f->s));
  OK(B->event_record(c, f->e2, f->s));
  OK(B->device_sync(c));     /* both complete: elapsed works */
  OK(B->pool_create(c, &props, &f->p));
  OK(B->pool_create(c, &props, &f->p2));
  OK(B->pool_alloc(c, f->p, 4096, f->s, &f->pool_buf, NULL));
  OK(B->malloc_device(c, 4096, &f->malloc_buf));
  OK(B->alloc_pinned(c, 4096, 0, &f->pinned_buf));
  OK(B->alloc_pageable(c, 4096, &f->pageable_buf));
  OK(B->alloc_pageable(c, 4096, &f->registered_buf));
  OK(B->host_register(c, f->registered_buf, 4096));
  ps_pool_props ipc = { PS_LOCATION_DEVICE, 0, 0, 1 };
  OK(B->pool_create(c, &ipc, &f->ipc));
  OK(B->pool_alloc(c, f->ipc, 4096, f->s, &f->ipc_buf, NULL));
  OK(B->ptr_export(c, f->ipc_buf, f->tok));
  OK(B->pool_export(c, f->ipc, &f->fd));
  OK(B->pool_import(c, f->fd, &f->imported));
  OK(B->event_create(c, PS_EVENT_IPC, &f->ipc_e));
  OK(B->event_export(c, f->ipc_e, f->ev));
  OK(B->spin(c, f->s, 1));   /* work still queued, so syncs have to wait */
}

/* Calls op with arguments it succeeds with on a fresh fixture. */
static int call(void *c, int op, fixture *f) {
  int n, least, greatest, idle;
  ps_device_info info;
  ps_stream *s;
  ps_event *e;
  ps_pool *p;
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, 0 };
  uint64_t v;
  ps_addr a;
  int64_t bad;
  double ms;
  char buf[16] = "0123456789abcdef";
  uint8_t tok[PS_IPC_BYTES];
  switch ((sim_fault_op)op) {
  case SIM_F_device_count: return B->device_count(c, &n);
  case SIM_F_device_info: return B->device_info(c, 0, &info);
  case SIM_F_device_sync: return B->device_sync(c);
  case SIM_F_stream_create: return B->stream_create(c, 0, 0, 1, &s);
  case SIM_F_stream_destroy: return B->stream_destroy(c, f->s);
  case SIM_F_stream_priority_range: return B->stream_priority_range(c, &least, &greatest);
  case SIM_F_stream_sync: return B->stream_sync(c, f->s);
  case SIM_F_stream_query: return B->stream_query(c, f->s, &idle);
  case SIM_F_stream_wait: return B->stream_wait(c, NULL, f->e);
  case SIM_F_event_create: return B->event_create(c, 1, &e);
  case SIM_F_event_destroy: return B->event_destroy(c, f->e);
  case SIM_F_event_record: return B->event_record(c, f->e, NULL);
  case SIM_F_event_sync: return B->event_sync(c, f->e);
  case SIM_F_event_query: return B->event_query(c, f->e, &idle);
  case SIM_F_event_elapsed: return B->event_elapsed(c, f->e, f->e2, &ms);
  case SIM_F_pool_create: return B->pool_create(c, &props, &p);
  case SIM_F_pool_default: return B->pool_default(c, 0, &p);
  case SIM_F_pool_destroy: return B->pool_destroy(c, f->p2);
  case SIM_F_pool_set: return B->pool_set(c, f->p, PS_ATTR_RELEASE_THRESHOLD, 1 << 20);
  case SIM_F_pool_get: return B->pool_get(c, f->p, PS_ATTR_USED_CURRENT, &v);
  case SIM_F_pool_trim: return B->pool_trim(c, f->p, 0);
  case SIM_F_pool_alloc: return B->pool_alloc(c, f->p, 1 << 20, f->s, &a, NULL);
  case SIM_F_pool_free: return B->pool_free(c, f->pool_buf, f->s);
  case SIM_F_malloc_device: return B->malloc_device(c, 1 << 20, &a);
  case SIM_F_free_device: return B->free_device(c, f->malloc_buf);
  case SIM_F_alloc_pinned: return B->alloc_pinned(c, 1 << 20, 0, &a);
  case SIM_F_free_pinned: return B->free_pinned(c, f->pinned_buf);
  case SIM_F_alloc_pageable: return B->alloc_pageable(c, 1 << 20, &a);
  case SIM_F_free_pageable: return B->free_pageable(c, f->pageable_buf);
  case SIM_F_host_register: return B->host_register(c, f->pageable_buf, 4096);
  case SIM_F_host_unregister: return B->host_unregister(c, f->registered_buf);
  case SIM_F_copy: return B->copy(c, f->malloc_buf, f->pool_buf, 4096, f->s);
  case SIM_F_fill: return B->fill(c, f->pool_buf, 4096, 7, f->s);
  case SIM_F_touch: return B->touch(c, f->pool_buf, 4096, f->s);
  case SIM_F_verify: return B->verify(c, f->pool_buf, 4096, 0, f->s, &bad);
  case SIM_F_spin: return B->spin(c, f->s, 2);
  case SIM_F_read: return B->read(c, PS_KIND_POOL, f->pool_buf, buf, 16, f->s);
  case SIM_F_write: return B->write(c, PS_KIND_POOL, f->pool_buf, buf, 16, f->s);
  case SIM_F_sleep: return B->sleep(c, 1);
  case SIM_F_event_export: return B->event_export(c, f->ipc_e, tok);
  case SIM_F_event_import: return B->event_import(c, f->ev, &e);
  case SIM_F_pool_export: {
    int fd = -1, st = B->pool_export(c, f->ipc, &fd);
    if (fd >= 0) close(fd);
    return st;
  }
  case SIM_F_pool_import: return B->pool_import(c, f->fd, &p);
  case SIM_F_ptr_export: return B->ptr_export(c, f->ipc_buf, tok);
  case SIM_F_ptr_import: return B->ptr_import(c, f->imported, f->tok, &a);
  case SIM_F_N: break;
  }
  return -100;
}

/* What a call could change, as numbers. */
typedef struct state {
  int64_t host_now, tail;
  uint64_t maps, mapped_dev, mapped_host, streams, live_streams, events, pools, ops;
  uint64_t used, reserved, threshold;
  int64_t registered;         /* int64: no padding for memcmp */
} state;

static state snap(void *ctx, const fixture *f) {
  sim_ctx *c = ctx;
  state st = { c->host_now, f->s->tail, c->mem.n, c->mem.mapped[0], c->mem.mapped[1],
               c->nstreams, c->live.n, c->events.n, c->pools.n, c->nops, 0, 0, 0, 0 };
  sim_map *m = sim_mem_find(&c->mem, f->registered_buf);
  st.registered = m ? m->registered : -1;
  OK(sim_pool_get(c, f->p, PS_ATTR_USED_CURRENT, &st.used));
  OK(sim_pool_get(c, f->p, PS_ATTR_RESERVED_CURRENT, &st.reserved));
  OK(sim_pool_get(c, f->p, PS_ATTR_RELEASE_THRESHOLD, &st.threshold));
  return st;
}

static double get(void *c, const char *k) {
  double v = -1;
  OK(B->option_get(c, k, &v));
  return v;
}

static int arm(void *c, const char *op, const char *err, double call) {
  char k[96];
  snprintf(k, sizeof k, "fault.%s.%s", op, err);
  return B->option_set(c, k, call);
}

static double calls(void *c, const char *op) {
  char k[64];
  snprintf(k, sizeof k, "fault.%s", op);
  return get(c, k);
}

/* Each op, on a fresh context: the armed call fails with the armed error
 * and changes nothing; the next call of it succeeds. */
static void test_every_op_fails_first(void) {
  for (int op = 0; op < SIM_F_N; op++) {
    void *c = open_sim();
    fixture f;
    make(c, &f);
    const char *name = sim_fault_names[op];
    double before = calls(c, name);
    OK(arm(c, name, "cudaErrorIllegalAddress", before + 1));
    state a = snap(c, &f);
    int st = call(c, op, &f);
    if (st != PS_ERR_ILLEGAL_ADDRESS) fprintf(stderr, "op %s returned %d\n", name, st);
    CHECK(st == PS_ERR_ILLEGAL_ADDRESS);
    state b = snap(c, &f);
    if (memcmp(&a, &b, sizeof a) != 0) fprintf(stderr, "op %s changed the sim\n", name);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    CHECK(calls(c, name) == before + 1);
    CHECK(get(c, "fault.clear") == 0);          /* spent: dropped */
    st = call(c, op, &f);
    if (st != PS_OK) fprintf(stderr, "op %s again returned %d\n", name, st);
    OK(st);
    B->close(c);
    close(f.fd);
  }
}

/* count and every: calls 3, 5, 7 fail, then no more. */
static void test_count_every(void) {
  void *c = open_sim();
  OK(B->option_set(c, "fault.count", 3));
  OK(B->option_set(c, "fault.every", 2));
  OK(arm(c, "sleep", "cudaErrorNotReady", 3));
  CHECK(get(c, "fault.count") == 1 && get(c, "fault.every") == 1);   /* back to 1 */
  CHECK(get(c, "fault.sleep.cudaErrorNotReady") == 3);
  for (int i = 1; i <= 9; i++) {
    int st = B->sleep(c, 1);
    CHECK(st == ((i == 3 || i == 5 || i == 7) ? PS_ERR_NOT_READY : PS_OK));
  }
  CHECK(get(c, "fault.sleep.cudaErrorNotReady") == 0);
  CHECK(fabs(B->now(c) - 6) < 1e-9);             /* failed sleeps took no time */
  B->close(c);
}

/* count INFINITY fails every call from then on, until cleared. */
static void test_forever_and_clear(void) {
  void *c = open_sim();
  OK(B->option_set(c, "fault.count", INFINITY));
  OK(arm(c, "device_sync", "cudaErrorIllegalAddress", 2));
  OK(B->device_sync(c));
  for (int i = 0; i < 5; i++) CHECK(B->device_sync(c) == PS_ERR_ILLEGAL_ADDRESS);
  CHECK(isinf(get(c, "fault.device_sync.cudaErrorIllegalAddress")));
  CHECK(get(c, "fault.clear") == 1);
  OK(B->option_set(c, "fault.clear", 0));
  CHECK(get(c, "fault.clear") == 0);
  OK(B->device_sync(c));
  CHECK(calls(c, "device_sync") == 7);
  B->close(c);
}

/* Two faults on one call: the first armed gives the error, both count it. */
static void test_same_call(void) {
  void *c = open_sim();
  ps_stream *s;
  OK(arm(c, "stream_create", "cudaErrorMemoryAllocation", 1));
  OK(B->option_set(c, "fault.every", 1));
  OK(B->option_set(c, "fault.count", 2));
  OK(arm(c, "stream_create", "cudaErrorInvalidValue", 1));
  CHECK(B->stream_create(c, 0, 0, 1, &s) == PS_ERR_MEMORY_ALLOCATION);
  CHECK(B->stream_create(c, 0, 0, 1, &s) == PS_ERR_INVALID_VALUE);
  OK(B->stream_create(c, 0, 0, 1, &s));
  CHECK(get(c, "fault.clear") == 0);
  B->close(c);
}

/* An error by number: any code, those the sim lacks named cudaErrorUnknown. */
static void test_error_numbers(void) {
  void *c = open_sim();
  OK(arm(c, "sleep", "999", 1));
  OK(arm(c, "sleep", "700", 2));
  CHECK(get(c, "fault.sleep.999") == 1);
  int st = B->sleep(c, 1);
  CHECK(st == 999);
  CHECK(strcmp(B->error_name(st), "cudaErrorUnknown") == 0);
  CHECK(B->sleep(c, 1) == PS_ERR_ILLEGAL_ADDRESS);
  CHECK(arm(c, "sleep", "0", 5) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleep", "0700", 5) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleep", "100000", 5) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleep", "-1", 5) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleep", "7x", 5) == PS_ERR_INVALID_VALUE);
  CHECK(get(c, "fault.clear") == 0);
  B->close(c);
}

/* What the option keys refuse; none of it arms anything. */
static void test_refusals(void) {
  void *c = open_sim();
  double v;
  OK(B->sleep(c, 1));
  CHECK(arm(c, "sleep", "cudaErrorNotReady", 1) == PS_ERR_INVALID_VALUE);   /* made already */
  CHECK(arm(c, "sleep", "cudaErrorNotReady", 2.5) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleep", "cudaErrorNotReady", 0) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleep", "cudaErrorNotReady", NAN) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleep", "cudaErrorNotReady", 2e18) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleep", "cudaSuccess", 5) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleep", "interrupted", 5) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleep", "cudaErrorBogus", 5) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "sleepy", "cudaErrorNotReady", 5) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "stream_peek", "cudaErrorNotReady", 5) == PS_ERR_INVALID_VALUE);
  CHECK(arm(c, "option_set", "cudaErrorNotReady", 5) == PS_ERR_INVALID_VALUE);
  CHECK(B->option_set(c, "fault.sleep", 5) == PS_ERR_INVALID_VALUE);        /* read-only */
  CHECK(B->option_set(c, "fault.count", 0) == PS_ERR_INVALID_VALUE);
  CHECK(B->option_set(c, "fault.count", 1.5) == PS_ERR_INVALID_VALUE);
  CHECK(B->option_set(c, "fault.every", INFINITY) == PS_ERR_INVALID_VALUE);
  CHECK(B->option_get(c, "fault.sleepy", &v) == PS_ERR_INVALID_VALUE);
  CHECK(B->option_get(c, "fault.", &v) == PS_ERR_INVALID_VALUE);
  CHECK(B->option_get(c, "fault.sleep.", &v) == PS_ERR_INVALID_VALUE);
  CHECK(get(c, "fault.clear") == 0);
  /* fault keys are not profile options */
  const char *names[128];
  int n = B->option_names(c, names, 128);
  for (int i = 0; i < n && i < 128; i++) CHECK(strncmp(names[i], "fault", 5) != 0);
  OK(B->sleep(c, 1));
  B->close(c);
}

/* The op names are the ops table's member names: a name list entry for
 * each, none twice. */
static void test_names(void) {
  for (int i = 0; i < SIM_F_N; i++)
    for (int j = i + 1; j < SIM_F_N; j++) CHECK(strcmp(sim_fault_names[i], sim_fault_names[j]) != 0);
  CHECK(SIM_F_N == 45);   /* 39, and the six IPC operations */
  CHECK(strcmp(sim_fault_names[SIM_F_pool_alloc], "pool_alloc") == 0);
}

int main(void) {
  test_every_op_fails_first();
  test_count_every();
  test_forever_and_clear();
  test_same_call();
  test_error_numbers();
  test_refusals();
  test_names();
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("test_sim_faults: ok\n");
  return failures != 0;
}
