/*
 * test_sim.c: the sim backend's the backend's face (src/sim/sim.c,
 * src/sim/sim_error.c): errors and options, close with everything still
 * alive. Exits non-zero on failure.
 */
#include "sim_check.h"

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

int main(void) {
  test_errors();
  test_close_live();
  if (failures) fprintf(stderr, "test_sim: %d failure(s)\n", failures);
  else printf("test_sim: all passed\n");
  return failures != 0;
}
