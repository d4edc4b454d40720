/*
 * bench_sim_pair.c: the sim backend alone, as scripts/bench_scale.lua
 * fills a pool (2N blocks of 1-7 KiB on one stream, every other one freed:
 * N live blocks and N young holes), then m alloc+free pairs of 4 KiB
 * (pairs()), one stream sync retiring the N holes (dosync()) and m pairs
 * again. No Lua, no ledger: for callgrind, whose counts are steady on a
 * shared machine (docs/performance.md, The simulated device at scale):
 *
 *   cc -O2 -g -Isrc -I/usr/include/lua5.4 scripts/bench_sim_pair.c src/sim/[a-z]*.c \
 *      -llua5.4 -lm -lpthread -o bench_sim_pair
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=pairs \
 *      --toggle-collect=dosync ./bench_sim_pair 1000000 20000 1
 *
 * Usage: bench_sim_pair N [m (20000)] [0: pairs, sync, pairs; 1: pairs,
 * sync; 2: sync, pairs]. Prints the times too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "backend.h"
#include "sim/sim_model.h"

static const ps_backend *B = &ps_backend_sim;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void need(int st, const char *what) {
  if (st != PS_OK) { fprintf(stderr, "bench_sim_pair: %s failed (%d)\n", what, st); exit(1); }
}

/* m alloc+free pairs of 4 KiB on s. */
__attribute__((noinline)) void pairs(sim_ctx *c, ps_pool *p, ps_stream *s, long m) {
  for (long i = 0; i < m; i++) {
    ps_addr a;
    need(B->pool_alloc(c, p, 4096, s, &a, NULL), "alloc");
    need(B->pool_free(c, a, s), "free");
  }
}

__attribute__((noinline)) void dosync(sim_ctx *c, ps_stream *s) { need(B->stream_sync(c, s), "sync"); }

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 0, m = argc > 2 ? atol(argv[2]) : 20000;
  int what = argc > 3 ? atoi(argv[3]) : 0;
  if (n < 1 || m < 0) { fprintf(stderr, "usage: bench_sim_pair N [m] [0|1|2]\n"); return 2; }
  ps_config cfg = { 0 };
  void *cv = NULL;
  need(B->open(&cfg, &cv), "open");
  sim_ctx *c = cv;
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, 0 };
  ps_pool *p;
  ps_stream *s;
  need(B->pool_create(c, &props, &p), "pool_create");
  need(B->pool_set(c, p, PS_ATTR_RELEASE_THRESHOLD, UINT64_MAX), "pool_set");
  need(B->stream_create(c, 0, 0, 0, &s), "stream_create");
  ps_addr *v = malloc(sizeof *v * 2 * (size_t)n);
  if (!v) return 1;
  unsigned long seed = 12345;
  for (long i = 0; i < 2 * n; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648u;
    need(B->pool_alloc(c, p, 1024 + seed % (6 * 1024 + 1), s, &v[i], NULL), "fill");
  }
  for (long i = 0; i < 2 * n; i += 2) need(B->pool_free(c, v[i], s), "fill free");
  double t0 = now();
  if (what != 2) pairs(c, p, s, m);
  double t1 = now();
  dosync(c, s);
  double t2 = now();
  if (what != 1) pairs(c, p, s, m);
  double t3 = now();
  printf("N=%ld: pair %.3f us, sync %.3f ms, pair after sync %.3f us\n", n,
         (t1 - t0) / (double)(m ? m : 1) * 1e6, (t2 - t1) * 1e3, (t3 - t2) / (double)(m ? m : 1) * 1e6);
  free(v);
  B->close(c);
  return 0;
}
