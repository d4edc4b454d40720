/*
 * test_sim_diff.c: the sim against the reference sim (tests/c/ref_sim, the
 * model as committed before the scalable pool rewrite, its pool part
 * corrected to the GPU: docs/calibration.md E12), driven through the
 * ps_backend table with the same seeded random operations. After every
 * operation both must agree on the return code, addresses (absolute, and
 * as offsets from their mapping's base), reuse notes, every pool counter, free device
 * memory and the clock; and the sim's truth for the ledger's oracle
 * (pool_truth) agrees with its counters, asked after every operation of
 * the sim alone, which must change nothing. Prints the first differing
 * operation.
 *
 *   test_sim_diff [seeds [ops [first_seed]]]     default 200 seeds x 2000 ops
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "sim/sim_model.h"

extern const ps_backend ps_backend_sim_ref;
ps_addr ref_probe_base(void *ctx, ps_addr a);

#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)
#define MAXH 24        /* streams, events, pools */
#define MAXB 400       /* live blocks */
#define MAXM 24        /* cudaMalloc and pinned buffers */

static const ps_backend *A = &ps_backend_sim, *R = &ps_backend_sim_ref;
static long rules[PS_RULE_UNKNOWN + 1], allocs, failed;   /* coverage */
static long holed, remapped;   /* steps ending with holes; allocations mapping one again */

typedef struct pair { void *a, *r; } pair;   /* one handle in each backend */
typedef struct block { ps_addr a, r; int pool, stream; } block;

typedef struct world {
  uint64_t rng;
  pair ctx;
  pair streams[MAXH]; int nstreams;          /* [0] is the legacy stream */
  pair events[MAXH]; int nevents;
  pair pools[MAXH]; int npools;              /* [0] is the default pool */
  block blocks[MAXB]; int nblocks;
  block freed[16]; int nfreed;               /* for double frees */
  block mallocs[MAXM]; int nmallocs;
  char what[200];                            /* the current operation */
} world;

static uint64_t rnd(world *w) {
  w->rng ^= w->rng << 13, w->rng ^= w->rng >> 7, w->rng ^= w->rng << 17;
  return w->rng;
}
static int below(world *w, int n) { return (int)(rnd(w) % (uint64_t)n); }

/* The offset of x from the base of its mapping, in each backend. */
static uint64_t off_a(world *w, ps_addr x) {
  sim_map *m = x ? sim_mem_find(&((sim_ctx *)w->ctx.a)->mem, x) : NULL;
  return m ? x - m->base : x;
}
static uint64_t off_r(world *w, ps_addr x) {
  ps_addr b = x ? ref_probe_base(w->ctx.r, x) : 0;
  return b ? x - b : x;
}

static int fail(world *w, const char *field, uint64_t a, uint64_t r) {
  fprintf(stderr, "DIFF at %s: %s: sim %" PRIu64 " (0x%" PRIx64 "), ref %" PRIu64
          " (0x%" PRIx64 ")\n", w->what, field, a, a, r, r);
  return 1;
}
#define SAME(field, x, y) do { if ((uint64_t)(x) != (uint64_t)(y)) \
  return fail(w, field, (uint64_t)(x), (uint64_t)(y)); } while (0)

static uint64_t pick_size(world *w) {
  switch (below(w, 12)) {
  case 0: return 0;
  case 1: return 1 + (uint64_t)below(w, 64);
  case 2: return 480 + (uint64_t)below(w, 64);
  case 3: case 4: case 5: return 1024 + (uint64_t)below(w, 6 * 1024);
  case 6: return (uint64_t)below(w, 4) * MiB + (uint64_t)below(w, 4096);
  case 7: return 32 * MiB - 512 + (uint64_t)below(w, 1024);
  case 8: return 30 * MiB + (uint64_t)below(w, (int)(4 * MiB));
  case 9: return 64 * MiB + (uint64_t)below(w, (int)(64 * MiB));
  case 10: return below(w, 20) ? 5 * MiB : 300 * MiB + (uint64_t)below(w, (int)(100 * MiB));
  default: return (uint64_t)below(w, 12) * 4096;
  }
}

static uint64_t pick_bytes(world *w) {
  static const uint64_t v[] = { 0, 1, 511, 512, 32 * MiB - 1, 32 * MiB, 32 * MiB + 1,
                                40 * MiB, 64 * MiB, 100 * MiB, 1 * GiB, UINT64_MAX };
  return v[below(w, (int)(sizeof v / sizeof v[0]))];
}

/* Bytes of pool arenas given back below their highest mapped chunk (the
 * sim's; the reference must agree through the counters). */
static uint64_t hole_bytes(world *w) {
  const sim_mem *m = &((sim_ctx *)w->ctx.a)->mem;
  uint64_t sizes = 0;
  for (size_t i = 0; i < m->n; i++) sizes += m->maps[i]->size;
  return sizes - m->mapped[SIM_DEVICE_SPACE] - m->mapped[SIM_HOST_SPACE];
}

/* The sim's truth of one pool (pool_truth), summed: extents in address
 * order must not overlap; the live ones' requests are UsedMemCurrent. */
typedef struct truth_acc { ps_addr end; uint64_t used, live, freed, n; int overlap, bad_kind; } truth_acc;

static void truth_each(void *ud, const ps_truth *t) {
  truth_acc *a = ud;
  if (a->n++ && t->addr < a->end) a->overlap = 1;
  a->end = t->addr + t->size;
  if (t->kind == PS_TRUTH_LIVE) a->used += t->req, a->live++;
  else if (t->kind >= PS_TRUTH_PENDING && t->kind <= PS_TRUTH_RETIRED) a->freed += t->size;
  else if (t->kind != PS_TRUTH_FRESH) a->bad_kind = 1;
  if (t->kind == PS_TRUTH_LIVE && t->req > t->size) a->overlap = 1;
}

/* The ledger's oracle (poolsh.core._sim_truth) agrees with the sim's
 * counters, and asking it changes nothing: it is asked of the sim alone
 * after every operation, and the sim must still agree with the reference
 * (clock, counters, addresses) at every later one. */
static int check_truth(world *w) {
  for (int i = 0; i < w->npools; i++) {
    uint64_t used = 0;
    if (A->pool_get(w->ctx.a, w->pools[i].a, PS_ATTR_USED_CURRENT, &used) != PS_OK) continue;
    truth_acc a = { 0 };
    int st = A->pool_truth(w->ctx.a, w->pools[i].a, truth_each, &a);
    SAME("pool_truth status", st, PS_OK);
    SAME("pool_truth: extents overlap", a.overlap, 0);
    SAME("pool_truth: kind", a.bad_kind, 0);
    SAME("pool_truth: live requests vs UsedMemCurrent", a.used, used);
  }
  return 0;
}

/* Compares what both backends show after an operation. */
static int compare_state(world *w) {
  if (check_truth(w)) return 1;
  double ta = A->now(w->ctx.a), tr = R->now(w->ctx.r);
  if (ta != tr) {
    fprintf(stderr, "DIFF at %s: now: sim %.9f ms, ref %.9f ms\n", w->what, ta, tr);
    return 1;
  }
  for (int i = 0; i < w->npools; i++)
    for (int at = PS_ATTR_RELEASE_THRESHOLD; at <= PS_ATTR_USED_HIGH; at++) {
      uint64_t va = 0, vr = 0;
      int sa = A->pool_get(w->ctx.a, w->pools[i].a, (ps_pool_attr)at, &va);
      int sr = R->pool_get(w->ctx.r, w->pools[i].r, (ps_pool_attr)at, &vr);
      if (sa != sr || va != vr) {
        char f[64];
        snprintf(f, sizeof f, "pool %d attr %d (status %d, %d)", i, at, sa, sr);
        return fail(w, f, va, vr);
      }
    }
  ps_device_info da, dr;
  A->device_info(w->ctx.a, 0, &da), R->device_info(w->ctx.r, 0, &dr);
  SAME("device free", da.free, dr.free);
  return 0;
}

static void drop_block(world *w, ps_addr a) {
  for (int i = 0; i < w->nblocks; i++)
    if (w->blocks[i].a == a) { w->blocks[i] = w->blocks[--w->nblocks]; return; }
}

/* One random operation on both backends; non-zero on a difference. */
static int step(world *w) {
  void *ca = w->ctx.a, *cr = w->ctx.r;
  int sa = 0, sr = 0, k = below(w, 100);
  uint64_t holes = hole_bytes(w);
  int si = below(w, w->nstreams);
  pair s = w->streams[si];
  if (k < 4) {                                  /* pool create */
    if (w->npools == MAXH) return 0;
    ps_pool_props pr = { below(w, 8) ? PS_LOCATION_DEVICE : PS_LOCATION_HOST, 0, 0 };
    if (below(w, 3) == 0) pr.max_size = pick_bytes(w) & (4 * GiB - 1);
    pair p = { 0, 0 };
    snprintf(w->what, sizeof w->what, "pool_create(loc %d, max %" PRIu64 ")", pr.location, pr.max_size);
    sa = A->pool_create(ca, &pr, (ps_pool **)&p.a), sr = R->pool_create(cr, &pr, (ps_pool **)&p.r);
    SAME("status", sa, sr);
    if (sa) return 0;
    w->pools[w->npools++] = p;
    uint64_t th = pick_bytes(w);
    int f = below(w, 2), o = below(w, 2), in = below(w, 2);
    SAME("set", A->pool_set(ca, p.a, PS_ATTR_RELEASE_THRESHOLD, th), R->pool_set(cr, p.r, PS_ATTR_RELEASE_THRESHOLD, th));
    SAME("set", A->pool_set(ca, p.a, PS_ATTR_FOLLOW_EVENT_DEPS, f), R->pool_set(cr, p.r, PS_ATTR_FOLLOW_EVENT_DEPS, f));
    SAME("set", A->pool_set(ca, p.a, PS_ATTR_OPPORTUNISTIC, o), R->pool_set(cr, p.r, PS_ATTR_OPPORTUNISTIC, o));
    SAME("set", A->pool_set(ca, p.a, PS_ATTR_INTERNAL_DEPS, in), R->pool_set(cr, p.r, PS_ATTR_INTERNAL_DEPS, in));
  } else if (k < 6) {                           /* pool destroy (the default refuses) */
    int i = below(w, w->npools);
    snprintf(w->what, sizeof w->what, "pool_destroy(pool %d)", i);
    sa = A->pool_destroy(ca, w->pools[i].a), sr = R->pool_destroy(cr, w->pools[i].r);
    SAME("status", sa, sr);
    if (!sa) w->pools[i] = w->pools[--w->npools];   /* its blocks stay live */
  } else if (k < 9) {                           /* pool set */
    int i = below(w, w->npools), at = below(w, 8);
    uint64_t v = at == PS_ATTR_RELEASE_THRESHOLD ? pick_bytes(w) : (uint64_t)(below(w, 3) == 0);
    snprintf(w->what, sizeof w->what, "pool_set(pool %d, attr %d, %" PRIu64 ")", i, at, v);
    sa = A->pool_set(ca, w->pools[i].a, (ps_pool_attr)at, v);
    sr = R->pool_set(cr, w->pools[i].r, (ps_pool_attr)at, v);
    SAME("status", sa, sr);
  } else if (k < 40) {                          /* alloc */
    if (w->nblocks == MAXB) return 0;
    int i = below(w, w->npools);
    uint64_t size = pick_size(w);
    ps_addr a = 0, r = 0;
    ps_alloc_note na, nr;
    snprintf(w->what, sizeof w->what, "pool_alloc(pool %d, %" PRIu64 " B, stream %d)", i, size, si);
    sa = A->pool_alloc(ca, w->pools[i].a, size, s.a, &a, &na);
    sr = R->pool_alloc(cr, w->pools[i].r, size, s.r, &r, &nr);
    SAME("status", sa, sr);
    SAME("address offset", off_a(w, a), off_r(w, r));
    SAME("address is 0", a == 0, r == 0);
    SAME("address", a, r);   /* the same layout while the reference's VA suffices */
    SAME("note rule", na.rule, nr.rule);
    SAME("note block offset", off_a(w, na.reused_block), off_r(w, nr.reused_block));
    if (sa == PS_OK && a) w->blocks[w->nblocks++] = (block){ a, r, i, si };
    if (sa == PS_OK && a) allocs++, rules[na.rule]++;
    if (sa == PS_OK && hole_bytes(w) < holes) remapped++;
    if (sa != PS_OK) failed++;
  } else if (k < 62) {                          /* free */
    if (!w->nblocks) return 0;
    int i = below(w, w->nblocks);
    block b = w->blocks[i];
    int on = below(w, 3) ? b.stream : si;
    if (on >= w->nstreams) on = 0;
    snprintf(w->what, sizeof w->what, "pool_free(block %d, stream %d)", i, on);
    sa = A->pool_free(ca, b.a, w->streams[on].a), sr = R->pool_free(cr, b.r, w->streams[on].r);
    SAME("status", sa, sr);
    w->blocks[i] = w->blocks[--w->nblocks];
    w->freed[w->nfreed++ % 16] = b;
    if (w->nfreed > 16) w->nfreed = 16;
  } else if (k < 63) {                          /* free again (usually invalid) */
    if (!w->nfreed) return 0;
    block b = w->freed[below(w, w->nfreed)];
    snprintf(w->what, sizeof w->what, "pool_free(freed block, stream %d)", si);
    sa = A->pool_free(ca, b.a, s.a), sr = R->pool_free(cr, b.r, s.r);
    SAME("status", sa, sr);
    if (!sa) drop_block(w, b.a);   /* its address had been reused */
  } else if (k < 68) {
    snprintf(w->what, sizeof w->what, "stream_sync(stream %d)", si);
    sa = A->stream_sync(ca, s.a), sr = R->stream_sync(cr, s.r);
  } else if (k < 72) {
    if (!w->nevents) return 0;
    int e = below(w, w->nevents);
    snprintf(w->what, sizeof w->what, "event_record(event %d, stream %d)", e, si);
    sa = A->event_record(ca, w->events[e].a, s.a), sr = R->event_record(cr, w->events[e].r, s.r);
    if (!sa && !sr && below(w, 2)) {             /* and another stream waits on it */
      SAME("status", sa, sr);
      int o = below(w, w->nstreams);
      snprintf(w->what, sizeof w->what, "event_record(event %d, stream %d); stream_wait(stream %d)", e, si, o);
      sa = A->stream_wait(ca, w->streams[o].a, w->events[e].a);
      sr = R->stream_wait(cr, w->streams[o].r, w->events[e].r);
    }
  } else if (k < 75) {
    if (!w->nevents) return 0;
    int e = below(w, w->nevents);
    snprintf(w->what, sizeof w->what, "stream_wait(stream %d, event %d)", si, e);
    sa = A->stream_wait(ca, s.a, w->events[e].a), sr = R->stream_wait(cr, s.r, w->events[e].r);
  } else if (k < 77) {
    if (!w->nevents) return 0;
    int e = below(w, w->nevents);
    snprintf(w->what, sizeof w->what, "event_sync(event %d)", e);
    sa = A->event_sync(ca, w->events[e].a), sr = R->event_sync(cr, w->events[e].r);
  } else if (k < 78) {
    snprintf(w->what, sizeof w->what, "device_sync()");
    sa = A->device_sync(ca), sr = R->device_sync(cr);
  } else if (k < 80) {
    int ia = 0, ir = 0;
    snprintf(w->what, sizeof w->what, "stream_query(stream %d)", si);
    sa = A->stream_query(ca, s.a, &ia), sr = R->stream_query(cr, s.r, &ir);
    SAME("idle", ia, ir);
  } else if (k < 81) {
    if (!w->nevents) return 0;
    int e = below(w, w->nevents), ia = 0, ir = 0;
    snprintf(w->what, sizeof w->what, "event_query(event %d)", e);
    sa = A->event_query(ca, w->events[e].a, &ia), sr = R->event_query(cr, w->events[e].r, &ir);
    SAME("done", ia, ir);
  } else if (k < 86) {
    double ms = below(w, 4) ? below(w, 100) / 1000.0 : below(w, 3);
    snprintf(w->what, sizeof w->what, "spin(stream %d, %g ms)", si, ms);
    sa = A->spin(ca, s.a, ms), sr = R->spin(cr, s.r, ms);
  } else if (k < 88) {
    double ms = below(w, 50) / 100.0;
    snprintf(w->what, sizeof w->what, "sleep(%g ms)", ms);
    sa = A->sleep(ca, ms), sr = R->sleep(cr, ms);
  } else if (k < 91) {
    int i = below(w, w->npools);
    uint64_t keep = pick_bytes(w);
    snprintf(w->what, sizeof w->what, "pool_trim(pool %d, %" PRIu64 ")", i, keep);
    sa = A->pool_trim(ca, w->pools[i].a, keep), sr = R->pool_trim(cr, w->pools[i].r, keep);
  } else if (k < 94) {                          /* cudaMalloc, pinned and their frees */
    if (w->nmallocs && (w->nmallocs == MAXM || below(w, 2))) {
      int i = below(w, w->nmallocs);
      int pinned = w->mallocs[i].pool;
      snprintf(w->what, sizeof w->what, "%s(malloc %d)", pinned ? "free_pinned" : "free_device", i);
      if (pinned) sa = A->free_pinned(ca, w->mallocs[i].a), sr = R->free_pinned(cr, w->mallocs[i].r);
      else sa = A->free_device(ca, w->mallocs[i].a), sr = R->free_device(cr, w->mallocs[i].r);
      w->mallocs[i] = w->mallocs[--w->nmallocs];
    } else {
      uint64_t size = below(w, 2) ? pick_size(w) : 100 * MiB;
      ps_addr a = 0, r = 0;
      int pinned = below(w, 3) == 0;
      snprintf(w->what, sizeof w->what, "%s(%" PRIu64 ")", pinned ? "alloc_pinned" : "malloc_device", size);
      if (pinned) sa = A->alloc_pinned(ca, size, 0, &a), sr = R->alloc_pinned(cr, size, 0, &r);
      else sa = A->malloc_device(ca, size, &a), sr = R->malloc_device(cr, size, &r);
      SAME("address", a, r);
      if (!sa && a) w->mallocs[w->nmallocs++] = (block){ a, r, pinned, 0 };
    }
  } else if (k < 96) {                          /* stream create / destroy */
    if (w->nstreams < MAXH && (w->nstreams < 3 || below(w, 2))) {
      pair n = { 0, 0 };
      int blocking = below(w, 2);
      snprintf(w->what, sizeof w->what, "stream_create(blocking %d)", blocking);
      sa = A->stream_create(ca, 0, 0, blocking, (ps_stream **)&n.a);
      sr = R->stream_create(cr, 0, 0, blocking, (ps_stream **)&n.r);
      if (!sa) w->streams[w->nstreams++] = n;
    } else if (si > 0) {
      snprintf(w->what, sizeof w->what, "stream_destroy(stream %d)", si);
      sa = A->stream_destroy(ca, s.a), sr = R->stream_destroy(cr, s.r);
      w->streams[si] = w->streams[--w->nstreams];
      for (int i = 0; i < w->nblocks; i++)
        if (w->blocks[i].stream == si) w->blocks[i].stream = 0;
        else if (w->blocks[i].stream == w->nstreams) w->blocks[i].stream = si;
    } else return 0;
  } else if (k < 98) {                          /* event create / destroy */
    if (w->nevents < MAXH && (w->nevents < 2 || below(w, 2))) {
      pair n = { 0, 0 };
      snprintf(w->what, sizeof w->what, "event_create()");
      sa = A->event_create(ca, 0, (ps_event **)&n.a), sr = R->event_create(cr, 0, (ps_event **)&n.r);
      if (!sa) w->events[w->nevents++] = n;
    } else if (w->nevents) {
      int e = below(w, w->nevents);
      snprintf(w->what, sizeof w->what, "event_destroy(event %d)", e);
      sa = A->event_destroy(ca, w->events[e].a), sr = R->event_destroy(cr, w->events[e].r);
      w->events[e] = w->events[--w->nevents];
    } else return 0;
  } else {                                      /* work on a live block */
    if (!w->nblocks) return 0;
    block b = w->blocks[below(w, w->nblocks)];
    snprintf(w->what, sizeof w->what, "fill(block, 4 KiB, stream %d)", si);
    sa = A->fill(ca, b.a, 1, 7, s.a), sr = R->fill(cr, b.r, 1, 7, s.r);
  }
  SAME("status", sa, sr);
  holed += hole_bytes(w) != 0;
  return compare_state(w);
}

/* The reference has one set of pool costs and none by size: each sim
 * option it has takes its value, the sim's newer ones the value of the
 * reference's option they refine (host pools cost as device pools) or 0.
 * Releases cost nothing in both (the sim pays once per space, the
 * reference once a sync), and a destroyed busy stream releases only at a
 * sync, as in the reference. Non-zero when a value is refused. */
static int align_costs(world *w) {
  static const struct { const char *key, *as; } refines[] = {
    { "host_pool_alloc_ns", "pool_alloc_ns" }, { "host_pool_map_ns", "map_ns" },
    { "host_pool_map_ns_per_gib", "map_ns_per_gib" },
    { "host_pool_trim_ns_per_gib", "trim_ns_per_gib" }, { "pageable_alloc_ns", "alloc_api_ns" },
  };
  const char *names[256];
  int n = A->option_names(w->ctx.a, names, 256), bad = 0;
  for (int i = 0; i < n && i < 256; i++) {
    const char *as = names[i];
    if (strncmp(names[i], "vmm_", 4) == 0) continue;   /* VMM: pools never use it, no reference */
    for (size_t j = 0; j < sizeof refines / sizeof refines[0]; j++)
      if (strcmp(refines[j].key, names[i]) == 0) as = refines[j].as;
    double v = 0;
    if (R->option_get(w->ctx.r, as, &v) != PS_OK) v = 0;
    bad |= A->option_set(w->ctx.a, names[i], v) != PS_OK;
  }
  bad |= A->option_set(w->ctx.a, "release_ns", 0) || R->option_set(w->ctx.r, "release_ns", 0);
  bad |= A->option_set(w->ctx.a, "release_ns_per_gib", 0) ||
         R->option_set(w->ctx.r, "release_ns_per_gib", 0);
  return bad;
}

/* One seeded run of n operations; non-zero on a difference. */
static int run(uint64_t seed, int n) {
  world *w = calloc(1, sizeof *w);
  w->rng = seed * 0x9e3779b97f4a7c15ull + 1;
  static const uint64_t mem[] = { 0, 0, 1 * GiB, 256 * MiB };
  ps_config cfg = { 0, mem[seed % 4], NULL, NULL };
  int bad = 0;
  if (A->open(&cfg, &w->ctx.a) || R->open(&cfg, &w->ctx.r)) { free(w); return 1; }
  static const struct { const char *key; double v[3]; } opts[] = {   /* a profile per seed */
    { "pool_granularity", { 32 * MiB, 2 * MiB, 4 * MiB } },
    { "pool_alignment", { 512, 512, 4096 } },
    { "release_on_stream_sync", { 1, 1, 0 } },
    { "release_on_event_sync", { 1, 0, 1 } },
    { "release_on_cuda_free", { 0, 1, 0 } },
    { "release_on_stream_destroy", { 1, 0, 1 } },
  };
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
    double v = opts[i].v[(seed / 4 + i) % 3];
    if (A->option_set(w->ctx.a, opts[i].key, v) || R->option_set(w->ctx.r, opts[i].key, v)) bad = 1;
  }
  bad |= align_costs(w);
  w->nstreams = 1;   /* the legacy stream: NULL in both */
  A->pool_default(w->ctx.a, 0, (ps_pool **)&w->pools[0].a);
  R->pool_default(w->ctx.r, 0, (ps_pool **)&w->pools[0].r);
  w->npools = 1;
  for (int i = 0; i < n && !bad; i++) {
    bad = step(w);
    if (bad) fprintf(stderr, "  seed %" PRIu64 ", operation %d of %d\n", seed, i, n);
  }
  A->close(w->ctx.a), R->close(w->ctx.r);
  free(w);
  return bad;
}

/* ---- the pool model's limits (not against the reference) ---- */

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", \
  __FILE__, __LINE__, #x); bad++; } } while (0)

static void *open_mem(uint64_t memory) {
  ps_config cfg = { 0, memory, NULL, NULL };
  void *c = NULL;
  return A->open(&cfg, &c) == PS_OK ? c : NULL;
}

/* 10,000 pools each holding memory; destroyed and emptied, they are
 * freed; a 1 PiB device; max_size 200 TiB. */
static int limits(void) {
  int bad = 0;
  enum { NP = 10000 };
  void *c = open_mem(1024 * GiB);
  static ps_pool *p[NP];
  static ps_addr a[NP];
  ps_pool_props pr = { PS_LOCATION_DEVICE, 0, 0 };
  int made = 0, got = 0;
  for (int i = 0; i < NP; i++) {
    made += A->pool_create(c, &pr, &p[i]) == PS_OK;
    got += A->pool_alloc(c, p[i], 1, NULL, &a[i], NULL) == PS_OK && a[i];
  }
  CHECK(made == NP && got == NP);
  CHECK(((sim_ctx *)c)->pools.n == NP + 1);
  for (int i = 0; i < NP; i++) {
    CHECK(A->pool_destroy(c, p[i]) == PS_OK);
    CHECK(A->pool_free(c, a[i], NULL) == PS_OK);
  }
  CHECK(A->device_sync(c) == PS_OK);
  CHECK(((sim_ctx *)c)->pools.n == 1 && ((sim_ctx *)c)->pools.nlive == 1);
  CHECK(((sim_ctx *)c)->mem.n == 0);
  ps_device_info d;
  CHECK(A->device_info(c, 0, &d) == PS_OK && d.free == d.total);
  A->close(c);

  c = open_mem((uint64_t)1 << 50);                 /* 1 PiB */
  ps_pool *dp, *q;
  ps_addr x = 0, y = 0;
  CHECK(A->pool_default(c, 0, &dp) == PS_OK);
  CHECK(A->pool_alloc(c, dp, 1, NULL, &x, NULL) == PS_OK && x);
  CHECK(A->pool_create(c, &pr, &q) == PS_OK);
  CHECK(A->pool_alloc(c, q, 512 * GiB, NULL, &y, NULL) == PS_OK && y);
  A->close(c);

  c = open_mem(0);
  pr.max_size = 200ull << 40;                       /* 200 TiB */
  CHECK(A->pool_create(c, &pr, &q) == PS_OK);
  CHECK(A->pool_alloc(c, q, 1, NULL, &x, NULL) == PS_OK && x);
  A->close(c);
  if (!bad) printf("test_sim_diff: 10,000 pools, a 1 PiB device, max_size 200 TiB work\n");
  return bad;
}

int main(int argc, char **argv) {
  int seeds = argc > 1 ? atoi(argv[1]) : 200, ops = argc > 2 ? atoi(argv[2]) : 2000;
  uint64_t first = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
  int failures = 0;
  for (int i = 0; i < seeds && failures < 3; i++) failures += run(first + (uint64_t)i, ops);
  failures += limits();
  if (failures) return 1;
  printf("test_sim_diff: %d seeds x %d operations agree (%ld allocations: fresh %ld, "
         "stream order %ld, event %ld, host sync %ld, opportunistic %ld, internal %ld; "
         "%ld failed; %ld mapped a hole again; %ld steps with holes)\n", seeds, ops, allocs,
         rules[PS_RULE_NONE], rules[PS_RULE_STREAM_ORDER], rules[PS_RULE_EVENT_DEP],
         rules[PS_RULE_HOST_SYNC], rules[PS_RULE_OPPORTUNISTIC], rules[PS_RULE_INTERNAL_DEP],
         failed, remapped, holed);
  return 0;
}
