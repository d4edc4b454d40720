/*
 * test_sim_peer.c: the sim's several devices (docs/sim.md, Several
 * devices): per-device memory and default pools, streams and events on a
 * device, pool access rules as measured on two H200s
 * (docs/calibration/h200x2-2026-11-24-peer.log), peer access, and work
 * from a device without access. Exits non-zero on failure.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "sim/sim_model.h"

static int failures;

#define CHECK(c) do { if (!(c)) { failures++; \
  fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, __func__, #c); } } while (0)
#define OK(x) CHECK((x) == PS_OK)
#define IS(x, code) CHECK((x) == (code))

#define MiB ((uint64_t)1 << 20)

static const ps_backend *B = &ps_backend_sim;

static void *open_devices(int n, int device, uint64_t memory) {
  ps_config cfg = { device, memory, NULL, NULL, n };
  void *c = NULL;
  OK(B->open(&cfg, &c));
  return c;
}

static ps_pool *pool_on(void *c, ps_location loc, int dev) {
  ps_pool_props props = { loc, dev, 0, 0 };
  ps_pool *p = NULL;
  OK(B->pool_create(c, &props, &p));
  return p;
}

static ps_access access_of(void *c, ps_pool *p, int dev) {
  ps_access a = (ps_access)-1;
  OK(B->pool_get_access(c, p, dev, &a));
  return a;
}

/* open: the count, the context's device, bad values. */
static void test_open(void) {
  void *c = NULL;
  ps_config cfg = { 0, 0, NULL, NULL, 17 };
  IS(B->open(&cfg, &c), PS_ERR_INVALID_VALUE);
  cfg.sim_devices = 2, cfg.device = 2;
  IS(B->open(&cfg, &c), PS_ERR_INVALID_DEVICE);
  c = open_devices(0, 0, 0);                    /* 0: one device, as before */
  int n = 0;
  OK(B->device_count(c, &n));
  CHECK(n == 1);
  ps_pool *p = NULL;
  IS(B->pool_default(c, 1, &p), PS_ERR_INVALID_DEVICE);
  ps_stream *s = NULL;
  IS(B->stream_create(c, 1, 0, 1, &s), PS_ERR_INVALID_DEVICE);
  B->close(c);
  c = open_devices(3, 2, 0);                    /* poolsh on device 2 */
  OK(B->device_count(c, &n));
  CHECK(n == 3);
  ps_pool *d2 = NULL;
  OK(B->pool_default(c, 2, &d2));
  CHECK(access_of(c, d2, 2) == PS_ACCESS_RW);
  ps_addr m = 0;
  OK(B->malloc_device(c, 2 * MiB, &m));        /* on the context's device */
  ps_device_info i0, i2;
  OK(B->device_info(c, 0, &i0));
  OK(B->device_info(c, 2, &i2));
  CHECK(i0.free == i0.total);
  CHECK(i2.free == i2.total - 2 * MiB);
  OK(B->free_device(c, m));
  B->close(c);
}

/* Each device has memory of its own; default pools are per device. */
static void test_memory(void) {
  void *c = open_devices(2, 0, 64 * MiB);
  ps_pool *a = pool_on(c, PS_LOCATION_DEVICE, 0), *b = pool_on(c, PS_LOCATION_DEVICE, 1);
  ps_addr x = 0, y = 0, z = 0;
  OK(B->pool_alloc(c, a, 64 * MiB, NULL, &x, NULL));
  OK(B->pool_alloc(c, b, 64 * MiB, NULL, &y, NULL));   /* device 1 has its own 64 MiB */
  IS(B->pool_alloc(c, a, 1, NULL, &z, NULL), PS_ERR_MEMORY_ALLOCATION);
  ps_device_info i1;
  OK(B->device_info(c, 1, &i1));
  CHECK(i1.free == 0);
  ps_pool *d0 = NULL, *d1 = NULL, *again = NULL;
  OK(B->pool_default(c, 0, &d0));
  OK(B->pool_default(c, 1, &d1));
  OK(B->pool_default(c, 1, &again));
  CHECK(d0 != d1 && d1 == again);
  IS(B->device_info(c, 2, &i1), PS_ERR_INVALID_DEVICE);
  ps_pool_props bad = { PS_LOCATION_DEVICE, 2, 0, 0 };
  ps_pool *p = NULL;
  IS(B->pool_create(c, &bad, &p), PS_ERR_INVALID_VALUE);
  OK(B->pool_free(c, x, NULL));
  OK(B->pool_free(c, y, NULL));
  OK(B->device_sync(c));
  B->close(c);
}

/* Access as measured: own device rw for good, read never, others none
 * until granted, out of range invalid device; host pools grant the
 * context's device; capability needed. */
static void test_access_rules(void) {
  void *c = open_devices(2, 0, 0);
  ps_pool *p = pool_on(c, PS_LOCATION_DEVICE, 0), *d0 = NULL;
  OK(B->pool_default(c, 0, &d0));
  CHECK(access_of(c, p, 0) == PS_ACCESS_RW);
  CHECK(access_of(c, p, 1) == PS_ACCESS_NONE);
  CHECK(access_of(c, d0, 1) == PS_ACCESS_NONE);
  IS(B->pool_set_access(c, p, 0, PS_ACCESS_NONE), PS_ERR_INVALID_DEVICE);
  IS(B->pool_set_access(c, p, 0, PS_ACCESS_READ), PS_ERR_NOT_SUPPORTED);
  OK(B->pool_set_access(c, p, 0, PS_ACCESS_RW));
  IS(B->pool_set_access(c, p, 1, PS_ACCESS_READ), PS_ERR_NOT_SUPPORTED);
  CHECK(access_of(c, p, 1) == PS_ACCESS_NONE);
  IS(B->pool_set_access(c, p, 7, PS_ACCESS_RW), PS_ERR_INVALID_DEVICE);
  IS(B->pool_set_access(c, p, -1, PS_ACCESS_RW), PS_ERR_INVALID_DEVICE);
  IS(B->pool_set_access(c, p, 1, (ps_access)2), PS_ERR_INVALID_VALUE);
  ps_access a;
  IS(B->pool_get_access(c, p, 7, &a), PS_ERR_INVALID_VALUE);   /* measured: not InvalidDevice */
  OK(B->pool_set_access(c, p, 1, PS_ACCESS_RW));
  CHECK(access_of(c, p, 1) == PS_ACCESS_RW);
  OK(B->pool_set_access(c, p, 1, PS_ACCESS_NONE));
  CHECK(access_of(c, p, 1) == PS_ACCESS_NONE);
  ps_pool *h = pool_on(c, PS_LOCATION_HOST, 0);
  CHECK(access_of(c, h, 0) == PS_ACCESS_RW);
  CHECK(access_of(c, h, 1) == PS_ACCESS_NONE);
  OK(B->option_set(c, "peer_capable", 0));
  IS(B->pool_set_access(c, p, 1, PS_ACCESS_RW), PS_ERR_INVALID_DEVICE);
  OK(B->pool_set_access(c, h, 1, PS_ACCESS_RW));     /* host memory needs no peer */
  OK(B->pool_destroy(c, p));
  IS(B->pool_get_access(c, p, 0, &a), PS_ERR_INVALID_VALUE);
  IS(B->pool_set_access(c, p, 1, PS_ACCESS_RW), PS_ERR_INVALID_VALUE);
  B->close(c);
}

/* Kernels on a stream of device 1: refused without access
 * (cudaErrorIllegalAddress), for blocks allocated before and after a
 * grant, again after a revoke; copies need no access (measured). */
static void test_work_across(void) {
  void *c = open_devices(2, 0, 0);
  ps_pool *p = pool_on(c, PS_LOCATION_DEVICE, 0);
  ps_stream *s1 = NULL;
  OK(B->stream_create(c, 1, 0, 1, &s1));
  ps_addr old = 0, fresh = 0, pin = 0;
  OK(B->pool_alloc(c, p, MiB, s1, &old, NULL));      /* allowed from another device */
  OK(B->alloc_pinned(c, MiB, 0, &pin));
  int64_t bad = 0;
  IS(B->fill(c, old, MiB, 1, s1), PS_ERR_ILLEGAL_ADDRESS);
  IS(B->touch(c, old, MiB, s1), PS_ERR_ILLEGAL_ADDRESS);
  IS(B->verify(c, old, MiB, 0, s1, &bad), PS_ERR_ILLEGAL_ADDRESS);
  IS(B->copy(c, pin, old, MiB, s1), PS_ERR_INVALID_VALUE);   /* two H200s: with device 1 */
  IS(B->copy(c, old, pin, MiB, s1), PS_ERR_INVALID_VALUE);   /* current, copies are refused */
  char buf[4];
  IS(B->read(c, PS_KIND_POOL, old, buf, 4, s1), PS_ERR_INVALID_VALUE);
  OK(B->fill(c, pin, MiB, 1, s1));                    /* host memory: reached */
  OK(B->fill(c, old, MiB, 6, NULL));                  /* its own device: reached */
  OK(B->pool_set_access(c, p, 1, PS_ACCESS_RW));
  OK(B->pool_alloc(c, p, MiB, NULL, &fresh, NULL));
  OK(B->verify(c, old, MiB, 6, s1, &bad));
  CHECK(bad == -1);
  OK(B->fill(c, fresh, MiB, 8, s1));
  OK(B->copy(c, pin, fresh, MiB, s1));
  OK(B->stream_sync(c, s1));
  OK(B->read(c, PS_KIND_PINNED, pin, buf, 4, NULL));
  CHECK(buf[0] == 8 && buf[3] == 8);
  OK(B->pool_set_access(c, p, 1, PS_ACCESS_NONE));
  IS(B->touch(c, old, MiB, s1), PS_ERR_ILLEGAL_ADDRESS);
  IS(B->touch(c, fresh, MiB, s1), PS_ERR_ILLEGAL_ADDRESS);
  /* Events: made on the context's device, recorded only on its streams,
   * waited on from any. */
  ps_event *e = NULL;
  OK(B->event_create(c, 0, &e));
  IS(B->event_record(c, e, s1), PS_ERR_INVALID_RESOURCE);
  OK(B->event_record(c, e, NULL));
  OK(B->stream_wait(c, s1, e));
  OK(B->event_destroy(c, e));
  OK(B->pool_free(c, old, NULL));
  OK(B->pool_free(c, fresh, NULL));
  OK(B->free_pinned(c, pin));
  OK(B->stream_destroy(c, s1));
  B->close(c);
}

/* Peer access for cudaMalloc'd memory; it grants nothing to pools. */
static void test_peers(void) {
  void *c = open_devices(2, 0, 0);
  int can = -1, on = -1;
  OK(B->device_can_access_peer(c, 0, 1, &can));
  CHECK(can == 1);
  OK(B->device_can_access_peer(c, 1, 1, &can));
  CHECK(can == 0);
  IS(B->device_can_access_peer(c, 0, 2, &can), PS_ERR_INVALID_DEVICE);
  IS(B->device_enable_peer(c, 0, 0), PS_ERR_PEER_UNSUPPORTED);   /* measured */
  IS(B->device_enable_peer(c, 0, 2), PS_ERR_INVALID_DEVICE);
  IS(B->device_enable_peer(c, -1, 0), PS_ERR_INVALID_DEVICE);
  OK(B->device_peer_enabled(c, 1, 0, &on));
  CHECK(on == 0);
  OK(B->device_peer_enabled(c, 1, 1, &on));
  CHECK(on == 1);
  ps_stream *s1 = NULL;
  OK(B->stream_create(c, 1, 0, 1, &s1));
  ps_addr m = 0, b = 0;
  OK(B->malloc_device(c, MiB, &m));
  ps_pool *p = pool_on(c, PS_LOCATION_DEVICE, 0);
  OK(B->pool_alloc(c, p, MiB, NULL, &b, NULL));
  IS(B->fill(c, m, MiB, 1, s1), PS_ERR_ILLEGAL_ADDRESS);
  OK(B->device_enable_peer(c, 1, 0));
  IS(B->device_enable_peer(c, 1, 0), PS_ERR_PEER_ALREADY_ENABLED);
  OK(B->device_peer_enabled(c, 1, 0, &on));
  CHECK(on == 1);
  OK(B->fill(c, m, MiB, 1, s1));
  CHECK(access_of(c, p, 1) == PS_ACCESS_NONE);      /* pools are not affected */
  IS(B->fill(c, b, MiB, 1, s1), PS_ERR_ILLEGAL_ADDRESS);
  OK(B->option_set(c, "peer_capable", 0));
  OK(B->device_can_access_peer(c, 0, 1, &can));
  CHECK(can == 0);
  IS(B->device_enable_peer(c, 0, 1), PS_ERR_PEER_UNSUPPORTED);
  CHECK(strcmp(B->error_name(PS_ERR_PEER_UNSUPPORTED), "cudaErrorPeerAccessUnsupported") == 0);
  CHECK(strcmp(B->error_name(PS_ERR_PEER_ALREADY_ENABLED), "cudaErrorPeerAccessAlreadyEnabled") == 0);
  OK(B->pool_free(c, b, NULL));
  OK(B->stream_sync(c, s1));
  OK(B->free_device(c, m));
  OK(B->stream_destroy(c, s1));
  B->close(c);
}

/* The devices option: only while nothing but default pools exists. */
static void test_devices_option(void) {
  void *c = open_devices(1, 0, 0);
  double v = 0;
  OK(B->option_get(c, "devices", &v));
  CHECK(v == 1);
  OK(B->option_set(c, "devices", 4));
  int n = 0;
  OK(B->device_count(c, &n));
  CHECK(n == 4);
  ps_pool *d3 = NULL;
  OK(B->pool_default(c, 3, &d3));                     /* default pools do not count */
  OK(B->option_set(c, "devices", 2));
  ps_stream *s = NULL;
  OK(B->stream_create(c, 1, 0, 1, &s));
  IS(B->option_set(c, "devices", 3), PS_ERR_NOT_SUPPORTED);
  OK(B->stream_destroy(c, s));
  IS(B->option_set(c, "devices", 0), PS_ERR_INVALID_VALUE);
  IS(B->option_set(c, "devices", 17), PS_ERR_INVALID_VALUE);
  IS(B->option_set(c, "peer_capable", 0.5), PS_ERR_INVALID_VALUE);
  const char *names[128];
  int k = B->option_names(c, names, 128);
  for (int i = 0; i < k && i < 128; i++)
    CHECK(strcmp(names[i], "devices") != 0 && strcmp(names[i], "peer_capable") != 0);
  B->close(c);
}

int main(void) {
  test_open();
  test_memory();
  test_access_rules();
  test_work_across();
  test_peers();
  test_devices_option();
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures != 0;
}
