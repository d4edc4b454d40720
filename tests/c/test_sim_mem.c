/*
 * test_sim_mem.c: the sim backend's contents (src/sim/sim_mem.c): what
 * copies, fills and kernels write, and which write wins when a freed block
 * is reused. Exits non-zero on failure.
 */
#include "sim_check.h"

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

int main(void) {
  test_contents();
  test_clobber();
  if (failures) fprintf(stderr, "test_sim_mem: %d failure(s)\n", failures);
  else printf("test_sim_mem: all passed\n");
  return failures != 0;
}
