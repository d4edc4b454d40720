/*
 * sim_pool.c: stream-ordered memory pools (cudaMallocFromPoolAsync and
 * cudaFreeAsync), calibrated against a real driver (docs/calibration.md):
 *
 *  - each pool is one contiguous virtual arena; physical chunks of
 *    pool_granularity (32 MiB) are mapped under it as blocks need them and
 *    given back one by one, so what is reserved can have holes: a block
 *    that lands on a chunk given back maps it again at the same address;
 *  - blocks are round_up(size, pool_alignment) bytes, packed back to back,
 *    and may straddle chunk boundaries; UsedMemCurrent is the exact sum of
 *    the requests;
 *  - placement is best fit over runs of adjacent free space the allocating
 *    stream may use (a free pending on the device joins only frees of its
 *    own stream), carved from the start of the run; the run at the
 *    arena's top (which goes on past the chunks mapped) is taken only when
 *    no other run fits;
 *  - a host synchronisation that covers a free retires it; chunks that
 *    hold only retired free space go back, highest first, while reserved
 *    is above the release threshold; a chunk that holds a live block or a
 *    free not retired stays, and those below it may still go.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define GIB_D (1024.0 * 1024.0 * 1024.0)

/* A segment of the arena's mapped part: a live block or free space. Free
 * space remembers its cudaFreeAsync (stream, position, completion time);
 * fresh space (never allocated) has used == 0. Segments cover
 * [0, reserved) in address order. */
typedef struct seg {
  uint64_t off, size;         /* from the arena's base */
  uint64_t req;               /* live: the bytes asked for */
  int free, used, known;      /* known: a host sync retired the free */
  int stream;
  int64_t pos, time;
  uint32_t seq;               /* the pool's count of frees at this one (a
                                 young remainder: at its carve) */
  uint32_t ykey;              /* young: its run's newest seq when last formed */
  int young;                  /* freed since the pool last took fresh space */
  struct seg *next;
} seg;

struct ps_pool {
  ps_location loc;
  int is_default, destroyed;
  int follow, opportunistic, internal;
  uint64_t max_size, threshold;
  uint64_t reserved, reserved_high, used, used_high;
  uint32_t frees;             /* cudaFreeAsync calls so far */
  int took_fresh;             /* the allocation being placed took fresh space or mapped */
  size_t live;                /* allocated blocks */
  sim_map *arena;             /* NULL until the pool first maps memory */
  uint64_t extent;            /* bytes from the base that segs cover: up
                                 to the end of the highest mapped chunk */
  uint8_t *mapped;            /* per chunk of the extent: 1 when mapped */
  seg *segs;
};

/* ---- lookups ---- */

/* p when it is a live (not destroyed) pool of c, else NULL. */
static ps_pool *live_pool(sim_ctx *c, ps_pool *p) {
  for (size_t i = 0; p && i < c->pools.n; i++)
    if (c->pools.v[i] == p) return p->destroyed ? NULL : p;
  return NULL;
}

/* Whether g's free is retired: a host sync covered it (fresh: always). */
static int retired(const sim_ctx *c, seg *g) {
  if (!g->used || g->known) return 1;
  g->known = sim_host_knows(c, g->stream, g->pos);
  return g->known;
}

static sim_space pool_space(const ps_pool *p) {
  return p->loc == PS_LOCATION_HOST ? SIM_HOST_SPACE : SIM_DEVICE_SPACE;
}

static uint64_t gran(const sim_ctx *c) { return (uint64_t)c->prof.pool_granularity; }

/* ---- coalescing of free records ---- */

/* Adjacent free records merge only when every stream may reuse them
 * alike: both fresh, or both retired (a merged retired record keeps its
 * stream when both had the same one, for the note). Pending frees stay
 * separate records; placement still sees adjacent free space as one run
 * (see best_run), checking each record's own eligibility. */
static int mergeable(const sim_ctx *c, seg *a, seg *b) {
  if (!a->free || !b->free || a->used != b->used) return 0;
  return !a->used || (retired(c, a) && retired(c, b));
}

static void coalesce(sim_ctx *c, ps_pool *p) {
  for (seg *g = p->segs; g && g->next;) {
    seg *n = g->next;
    if (!mergeable(c, g, n)) { g = n; continue; }
    if (g->stream != n->stream) g->stream = -1;
    g->size += n->size;
    g->next = n->next;
    free(n);
  }
}

/* ---- eligibility and placement ---- */

/* The rule under which stream s may take free record g, or -1. With
 * internal_ok, a pending free of another stream qualifies as an internal
 * dependency when nothing else does. */
static int seg_rule(const sim_ctx *c, const ps_pool *p, seg *g, const ps_stream *s,
                    int internal_ok) {
  if (!g->free) return -1;
  if (!g->used) return PS_RULE_NONE;
  if (g->stream == s->id) return PS_RULE_STREAM_ORDER;
  if (retired(c, g)) return PS_RULE_HOST_SYNC;
  if (p->follow && sim_vc_get(&s->clock, g->stream) >= g->pos) return PS_RULE_EVENT_DEP;
  if (p->opportunistic && g->time <= c->host_now) return PS_RULE_OPPORTUNISTIC;
  return internal_ok ? PS_RULE_INTERNAL_DEP : -1;
}

/* Whether free record g needs no more ordering: fresh, retired, or its
 * free completed on the device. */
static int settled(const sim_ctx *c, seg *g) {
  return !g->used || retired(c, g) || g->time <= c->host_now;
}

/* Whether adjacent free records a and b form one run (measured: a free
 * still pending on the device joins only other frees of its stream; one
 * that completed, or was retired, also joins fresh and retired space). */
static int joinable(const sim_ctx *c, seg *a, seg *b) {
  if (settled(c, a) && settled(c, b)) return 1;
  return a->used && b->used && a->stream == b->stream && !retired(c, a) && !retired(c, b);
}

/* Whether g is a free not retired. */
static int unretired(const sim_ctx *c, seg *g) { return g->free && g->used && !retired(c, g); }

/* Whether s may use g and, when g is a free not retired, the frees of
 * its stream joined to it after g up to *last (the GPU keeps them as one
 * block, usable as its newest free is: docs/calibration.md). */
static int unit_ok(const sim_ctx *c, const ps_pool *p, seg *g, const ps_stream *s,
                   int internal_ok, seg **last) {
  int ok = seg_rule(c, p, g, s, internal_ok) >= 0;
  *last = g;
  if (!unretired(c, g)) return ok;
  for (seg *n = g->next; n && unretired(c, n) && n->stream == g->stream; n = n->next) {
    ok = ok && seg_rule(c, p, n, s, internal_ok) >= 0;
    *last = n;
  }
  return ok;
}

/* Whether a run of `size` at g beats one of best_size at b: smaller;
 * among equals, frees not retired first (oldest free first), then
 * settled space, lowest address first (measured on an H100). */
static int beats(const sim_ctx *c, seg *g, uint64_t size, seg *b, uint64_t best_size) {
  if (size != best_size) return size < best_size;
  uint64_t tg = unretired(c, g) ? g->seq : (uint64_t)1 << 32;
  uint64_t tb = unretired(c, b) ? b->seq : (uint64_t)1 << 32;
  return tg != tb ? tg < tb : g->off < b->off;
}

/* The first record of the smallest run of adjacent usable free records of
 * at least r bytes (ties: beats()) other than the run at the top, or
 * NULL. *top / *top_size: the run that ends at the top of the extent
 * (NULL / 0 when the last record is not usable). */
static seg *best_run(const sim_ctx *c, const ps_pool *p, uint64_t r, const ps_stream *s,
                     int internal_ok, seg **top, uint64_t *top_size) {
  seg *best = NULL, *start = NULL, *g = p->segs, *last = NULL;
  uint64_t best_size = 0, run = 0;
  int ok = g && unit_ok(c, p, g, s, internal_ok, &last);
  *top = NULL, *top_size = 0;
  while (g) {
    seg *n = last->next, *nlast = NULL;
    int nok = n && unit_ok(c, p, n, s, internal_ok, &nlast);
    if (ok) {
      if (!start) start = g, run = 0;
      for (seg *x = g;; x = x->next) { run += x->size; if (x == last) break; }
      if (!n) { *top = start, *top_size = run; break; }
      if (!nok || !joinable(c, last, n)) {
        if (run >= r && (!best || beats(c, start, run, best, best_size))) best = start, best_size = run;
        start = NULL;
      }
    }
    g = n, last = nlast, ok = nok;
  }
  return best;
}

/* Makes the arena's VA hold at least `extent` bytes: reserves it on first
 * use (again when it was all given back and the device grew). 0 when out
 * of VA or host RAM. */
static int arena_for(sim_ctx *c, ps_pool *p, uint64_t extent, double cap) {
  uint64_t va = p->max_size ? p->max_size : sim_round_up((uint64_t)cap, gran(c));
  if (p->arena && p->arena->size == 0 && p->arena->va < va) {   /* memory grew */
    sim_mem_unmap(&c->mem, p->arena);
    p->arena = NULL;
  }
  if (!p->arena) {
    p->arena = sim_mem_reserve(&c->mem, pool_space(p), va, SIM_MAP_ARENA);
    if (!p->arena) return 0;
    p->arena->owner = p;
  }
  return extent <= p->arena->va;
}

/* Covers up to `to` (a chunk multiple past the extent) with fresh space;
 * its chunks count as mapped by the caller. 0 when out of host RAM. */
static int extend(sim_ctx *c, ps_pool *p, uint64_t to) {
  uint64_t g = gran(c), n = p->extent / g, m = to / g;
  seg *fresh = calloc(1, sizeof *fresh);
  uint8_t *mapped = fresh ? realloc(p->mapped, m) : NULL;
  if (!mapped) { free(fresh); return 0; }
  p->mapped = mapped;
  if (!sim_mem_resize(&c->mem, p->arena, to)) { free(fresh); return 0; }
  memset(mapped + n, 1, m - n);
  *fresh = (seg){ .off = p->extent, .size = to - p->extent, .free = 1, .stream = -1 };
  seg **pp = &p->segs;
  while (*pp) pp = &(*pp)->next;
  *pp = fresh;
  p->extent = to;
  return 1;
}

/* Maps every chunk under [off, end) that is not mapped, covering space
 * past the extent with fresh space. 0 when the device (or host) is full,
 * max_size would be passed, or out of host RAM; nothing changes then. */
static int map_range(sim_ctx *c, ps_pool *p, uint64_t off, uint64_t end) {
  uint64_t g = gran(c), have = p->extent / g, last = sim_round_up(end, g) / g, add = 0;
  if (end < off || last * g < end) return 0;
  for (uint64_t k = off / g; k < last; k++) add += k >= have || !p->mapped[k] ? g : 0;
  if (add == 0) return 1;
  sim_space sp = pool_space(p);
  double cap = sp == SIM_HOST_SPACE ? c->prof.host_memory : c->prof.memory;
  if ((double)c->mem.mapped[sp] + (double)add > cap) return 0;
  if (p->max_size && p->reserved + add > p->max_size) {
    /* The driver maps up to max_size before it fails: measured on the GPU,
     * a failed request leaves reserved_high at max_size. */
    if (p->max_size > p->reserved_high) p->reserved_high = p->max_size;
    return 0;
  }
  if (p->reserved + add < add || !arena_for(c, p, last * g, cap)) return 0;
  if (last > have && !extend(c, p, last * g)) return 0;
  for (uint64_t k = off / g; k < have && k < last; k++)
    if (!p->mapped[k]) {
      sim_mem_hole(&c->mem, p->arena, k * g, g, 0);
      p->mapped[k] = 1;
    }
  p->reserved += add;
  if (p->reserved > p->reserved_high) p->reserved_high = p->reserved;
  sim_host_cost(c, c->prof.map_ns + (double)add / GIB_D * c->prof.map_ns_per_gib);
  return 1;
}

/* Allocates r bytes (req asked for) from the start of the run at g. Each
 * record it covers gives its rule; the note takes the first reused one,
 * and an internal dependency makes s wait for that free. 0 when out of
 * host RAM (nothing changed). */
static int young_of(const sim_ctx *c, seg *g, const ps_stream *s);

/* Every seg of young free g's run takes g's seq as the run's key. */
static void young_run_key(const sim_ctx *c, ps_pool *p, seg *g) {
  ps_stream st = { .id = g->stream };
  seg *head = NULL, *prev = NULL;
  for (seg *x = p->segs; x; prev = x, x = x->next) {
    if (!young_of(c, x, &st)) { head = NULL; continue; }
    if (!head || !prev || !joinable(c, prev, x)) head = x;
    if (x == g) break;
  }
  for (seg *x = head, *before = NULL; x && young_of(c, x, &st) &&
       (!before || joinable(c, before, x)); before = x, x = x->next)
    x->ykey = g->seq;
}

static seg *carve(sim_ctx *c, ps_pool *p, seg *g, uint64_t r, uint64_t req,
                  ps_stream *s, int internal_ok, ps_alloc_note *note) {
  seg *rest = NULL;
  if (g->size > r && !(rest = malloc(sizeof *rest))) return NULL;
  uint64_t left = r;
  for (seg *x = g; left; x = x->next) {
    int rule = seg_rule(c, p, x, s, internal_ok);
    if (rule > PS_RULE_NONE && note->rule == PS_RULE_NONE)
      *note = (ps_alloc_note){ (ps_reuse_rule)rule, p->arena->base + x->off };
    if (rule == PS_RULE_INTERNAL_DEP) {   /* s now waits for the free */
      s->tail = sim_max64(s->tail, x->time);
      sim_vc_raise(&s->clock, x->stream, x->pos);
    }
    if (x->free && !x->used) p->took_fresh = 1;
    left -= x->size < left ? x->size : left;
  }
  seg *split = NULL;   /* the seg the block's end cuts */
  if (rest) {
    *rest = *g;
    rest->off += r, rest->size -= r;
    g->next = rest;
    split = rest;
  } else {
    left = r - g->size;
    while (left) {
      seg *x = g->next;
      if (x->size <= left) {
        left -= x->size;
        g->next = x->next;
        free(x);
      } else {
        x->off += left, x->size -= left;
        left = 0;
        split = x;
      }
    }
  }
  g->size = r, g->req = req, g->free = 0;
  /* A young free's remainder counts as freed now, and so does its run. */
  if (split && split->young && split->used && split->free) {
    split->seq = ++p->frees;
    young_run_key(c, p, split);
  }
  return g;
}

/* Finds and takes r bytes for stream s: best fit among usable runs below
 * the top one, else the start of the run at the top, mapping the chunks
 * the block lands on that are not mapped (a top run too short grows the
 * pool by ceil(shortfall / granularity) chunks); only when that fails,
 * the same again with pending frees of other streams (internal deps). */
/* Whether g is a young free of stream s (docs/sim.md, Young frees first). */
static int young_of(const sim_ctx *c, seg *g, const ps_stream *s) {
  return g->free && g->used && g->young && g->stream == s->id && !retired(c, g);
}

/* The first seg of the smallest run of s's adjacent young frees of at
 * least r bytes (ties: the lower key, its newest free or carve), or NULL. */
static seg *young_fit(const sim_ctx *c, ps_pool *p, const ps_stream *s, uint64_t r) {
  seg *best = NULL, *prev = NULL;
  uint64_t best_size = 0;
  for (seg *g = p->segs; g; prev = g, g = g->next) {
    if (!young_of(c, g, s) || (prev && young_of(c, prev, s) && joinable(c, prev, g))) continue;
    uint64_t size = 0;
    for (seg *x = g;; x = x->next) {
      size += x->size;
      if (!x->next || !young_of(c, x->next, s) || !joinable(c, x, x->next)) break;
    }
    if (size >= r && (!best || size < best_size || (size == best_size && g->ykey < best->ykey)))
      best = g, best_size = size;
  }
  return best;
}

static seg *place(sim_ctx *c, ps_pool *p, uint64_t r, uint64_t req, ps_stream *s,
                  ps_alloc_note *note) {
  coalesce(c, p);
  seg *y = young_fit(c, p, s, r);
  if (y) return carve(c, p, y, r, req, s, 0, note);
  for (int internal_ok = 0; internal_ok <= p->internal; internal_ok++) {
    seg *top;
    uint64_t top_size;
    seg *g = best_run(c, p, r, s, internal_ok, &top, &top_size);
    uint64_t at = g ? g->off : top ? top->off : p->extent, had = p->reserved;
    if (!map_range(c, p, at, at + r)) continue;
    if (p->reserved != had) p->took_fresh = 1;
    if (!g) g = top;
    if (!g) for (g = p->segs; g->next; g = g->next) {}   /* the new chunk(s) */
    return carve(c, p, g, r, req, s, internal_ok, note);
  }
  return NULL;
}

/* cudaMallocFromPoolAsync. Size 0 gives address 0 and reserves nothing.
 * On PS_ERR_MEMORY_ALLOCATION the pool is unchanged. */
int sim_pool_alloc(void *ctx, ps_pool *p, uint64_t size, ps_stream *s,
                   ps_addr *out, ps_alloc_note *note) {
  sim_ctx *c = ctx;
  ps_stream *st = sim_stream_resolve(c, s);
  if (!live_pool(c, p) || !out) return PS_ERR_INVALID_VALUE;
  if (!st) return PS_ERR_INVALID_RESOURCE;
  sim_host_cost(c, c->prof.pool_alloc_ns);
  ps_alloc_note dummy;
  if (!note) note = &dummy;
  *note = (ps_alloc_note){ PS_RULE_NONE, 0 };
  *out = 0;
  if (size == 0) return PS_OK;
  uint64_t r = sim_round_up(size, (uint64_t)c->prof.pool_alignment);
  if (r < size) return PS_ERR_MEMORY_ALLOCATION;
  seg *g = place(c, p, r, size, st, note);
  if (p->took_fresh) {           /* young frees complete by now age */
    p->took_fresh = 0;
    for (seg *x = p->segs; x; x = x->next)
      if (x->free && x->used && x->young && x->time <= c->host_now) x->young = 0;
  }
  if (!g) {
    *note = (ps_alloc_note){ PS_RULE_NONE, 0 };
    return PS_ERR_MEMORY_ALLOCATION;
  }
  p->used += size, p->live++;
  if (p->used > p->used_high) p->used_high = p->used;
  *out = p->arena->base + g->off;
  if (!c->prof.report_rules) *note = (ps_alloc_note){ PS_RULE_UNKNOWN, 0 };   /* as cuda */
  return PS_OK;
}

/* The live block that starts at a, with its pool; NULL if none. */
static seg *find_alloc(sim_ctx *c, ps_addr a, ps_pool **pout) {
  sim_map *m = sim_mem_find(&c->mem, a);
  if (!m || m->kind != SIM_MAP_ARENA) return NULL;
  ps_pool *p = m->owner;
  uint64_t off = a - m->base;
  for (seg *g = p->segs; g && g->off <= off; g = g->next)
    if (g->off == off && !g->free) { *pout = p; return g; }
  return NULL;
}

/* cudaFreeAsync: the block becomes free at s's current position; used
 * drops now. Freeing 0 is a no-op; an unknown address or a double free is
 * PS_ERR_INVALID_VALUE. */
int sim_pool_free(void *ctx, ps_addr a, ps_stream *s) {
  sim_ctx *c = ctx;
  ps_stream *st = sim_stream_resolve(c, s);
  if (!st) return PS_ERR_INVALID_RESOURCE;
  if (a == 0) return PS_OK;
  ps_pool *p;
  seg *g = find_alloc(c, a, &p);
  if (!g) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.pool_free_ns);
  g->time = sim_enqueue(c, st, 0);
  g->pos = st->seq, g->stream = st->id, g->seq = ++p->frees, g->young = 1;
  g->free = 1, g->used = 1, g->known = 0;
  young_run_key(c, p, g);
  p->used -= g->req, p->live--;
  return PS_OK;
}

/* ---- release ---- */

/* Drops the chunks given back at the top of the extent, and the free
 * space over them: what lies past the extent is fresh. */
static void drop_top(sim_ctx *c, ps_pool *p) {
  uint64_t g = gran(c), n = p->extent / g;
  while (n && !p->mapped[n - 1]) n--;
  uint64_t to = n * g;
  if (to == p->extent) return;
  sim_mem_hole(&c->mem, p->arena, to, p->extent - to, 0);   /* resize unmaps it */
  if (!sim_mem_resize(&c->mem, p->arena, to)) {
    sim_mem_hole(&c->mem, p->arena, to, p->extent - to, 1);
    return;
  }
  seg **pp = &p->segs;
  while (*pp && (*pp)->off < to) {
    seg *x = *pp;
    if (x->off + x->size > to) x->size = to - x->off;
    pp = &x->next;
  }
  for (seg *x = *pp, *nx; x; x = nx) nx = x->next, free(x);
  *pp = NULL;
  p->extent = to;
}

/* Gives back mapped chunks that hold only retired free space, highest
 * first, while reserved is above `floor`; chunks that must stay are
 * passed over. Returns the bytes given back. A destroyed pool with
 * nothing left also gives back its address space. */
static uint64_t shrink(sim_ctx *c, ps_pool *p, uint64_t floor) {
  coalesce(c, p);
  uint64_t g = gran(c), n = p->extent / g, gone = 0;
  uint8_t *busy = n ? calloc(n, 1) : NULL;   /* chunks that must stay */
  if (n && !busy) return 0;
  for (seg *x = p->segs; x; x = x->next)
    if (!x->free || !retired(c, x))
      memset(busy + x->off / g, 1, sim_round_up(x->off + x->size, g) / g - x->off / g);
  for (uint64_t k = n; k-- > 0 && p->reserved > floor;)
    if (p->mapped[k] && !busy[k]) {
      sim_mem_hole(&c->mem, p->arena, k * g, g, 1);
      p->mapped[k] = 0;
      p->reserved -= g, gone += g;
    }
  free(busy);
  drop_top(c, p);
  if (p->destroyed && !p->live && !p->reserved && p->arena) {
    sim_mem_unmap(&c->mem, p->arena);
    p->arena = NULL;
  }
  return gone;
}

/* After a host synchronisation: every pool gives back chunks while
 * reserved > threshold (destroyed pools with no block left: 0), so it keeps the
 * largest multiple of the granularity <= threshold. Giving back costs
 * host time: release_ns plus release_ns_per_gib. */
void sim_pools_release(sim_ctx *c) {
  uint64_t gone = 0;
  for (size_t i = 0; i < c->pools.n; i++) {
    ps_pool *p = c->pools.v[i];
    uint64_t th = p->destroyed && !p->live ? 0 : p->threshold;
    if (p->reserved > th) gone += shrink(c, p, th / gran(c) * gran(c));
  }
  if (gone)
    sim_host_cost(c, c->prof.release_ns + (double)gone / GIB_D * c->prof.release_ns_per_gib);
}

/* ---- pool objects ---- */

static int pool_new(sim_ctx *c, const ps_pool_props *props, ps_pool **out) {
  if (!sim_reserve_one((void **)&c->pools.v, &c->pools.cap, c->pools.n, sizeof *c->pools.v, 8))
    return PS_ERR_MEMORY_ALLOCATION;
  ps_pool *p = calloc(1, sizeof *p);
  if (!p) return PS_ERR_MEMORY_ALLOCATION;
  p->loc = props->location;
  p->follow = p->opportunistic = p->internal = 1;
  p->max_size = sim_round_up(props->max_size, gran(c));
  if (p->max_size < props->max_size) p->max_size = 0;   /* overflow: no limit */
  c->pools.v[c->pools.n++] = p;
  *out = p;
  return PS_OK;
}

/* Creates the device's default pool. */
int sim_pools_init(sim_ctx *c) {
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, 0 };
  int st = pool_new(c, &props, &c->default_pool);
  if (st == PS_OK) c->default_pool->is_default = 1;
  return st;
}

/* Frees every pool and segment (the arenas go with sim_mem). */
void sim_pools_free(sim_ctx *c) {
  for (size_t i = 0; i < c->pools.n; i++) {
    ps_pool *p = c->pools.v[i];
    for (seg *g = p->segs, *n; g; g = n) n = g->next, free(g);
    free(p->mapped);
    free(p);
  }
  free(c->pools.v);
  memset(&c->pools, 0, sizeof c->pools);
}

int sim_pool_create(void *ctx, const ps_pool_props *props, ps_pool **out) {
  sim_ctx *c = ctx;
  if (!props || !out) return PS_ERR_INVALID_VALUE;
  if (props->location != PS_LOCATION_DEVICE && props->location != PS_LOCATION_HOST)
    return PS_ERR_INVALID_VALUE;
  if (props->device != 0) return PS_ERR_INVALID_VALUE;
  return pool_new(c, props, out);
}

int sim_pool_default(void *ctx, int dev, ps_pool **out) {
  sim_ctx *c = ctx;
  if (dev != 0) return PS_ERR_INVALID_DEVICE;
  if (!out) return PS_ERR_INVALID_VALUE;
  *out = c->default_pool;
  return PS_OK;
}

/* Marks p destroyed: its handle is invalid; live blocks stay valid. As
 * the cuda backend does (it destroys a pool only once its last block is
 * freed), the pool keeps its release threshold while blocks are live;
 * after that its memory goes back at host syncs as frees are retired. */
int sim_pool_destroy(void *ctx, ps_pool *p) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p) || p->is_default) return PS_ERR_INVALID_VALUE;
  p->destroyed = 1;
  if (!p->live) shrink(c, p, 0);
  return PS_OK;
}

/* Sets an attribute; *_HIGH accept only 0 (reset to current). */
int sim_pool_set(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t v) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p)) return PS_ERR_INVALID_VALUE;
  switch (a) {
  case PS_ATTR_RELEASE_THRESHOLD: p->threshold = v; return PS_OK;
  case PS_ATTR_FOLLOW_EVENT_DEPS: p->follow = v != 0; return PS_OK;
  case PS_ATTR_OPPORTUNISTIC: p->opportunistic = v != 0; return PS_OK;
  case PS_ATTR_INTERNAL_DEPS: p->internal = v != 0; return PS_OK;
  case PS_ATTR_RESERVED_HIGH:
    if (v) return PS_ERR_INVALID_VALUE;
    p->reserved_high = p->reserved;
    return PS_OK;
  case PS_ATTR_USED_HIGH:
    if (v) return PS_ERR_INVALID_VALUE;
    p->used_high = p->used;
    return PS_OK;
  default: return PS_ERR_INVALID_VALUE;
  }
}

int sim_pool_get(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t *v) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p) || !v) return PS_ERR_INVALID_VALUE;
  switch (a) {
  case PS_ATTR_RELEASE_THRESHOLD: *v = p->threshold; return PS_OK;
  case PS_ATTR_FOLLOW_EVENT_DEPS: *v = (uint64_t)p->follow; return PS_OK;
  case PS_ATTR_OPPORTUNISTIC: *v = (uint64_t)p->opportunistic; return PS_OK;
  case PS_ATTR_INTERNAL_DEPS: *v = (uint64_t)p->internal; return PS_OK;
  case PS_ATTR_RESERVED_CURRENT: *v = p->reserved; return PS_OK;
  case PS_ATTR_RESERVED_HIGH: *v = p->reserved_high; return PS_OK;
  case PS_ATTR_USED_CURRENT: *v = p->used; return PS_OK;
  case PS_ATTR_USED_HIGH: *v = p->used_high; return PS_OK;
  default: return PS_ERR_INVALID_VALUE;
  }
}

/* cudaMemPoolTrimTo: gives back retired free chunks from the top while
 * reserved - granularity >= keep, i.e. keeps ceil(keep / granularity)
 * chunks (at most what is reserved), whatever the threshold. Frees that
 * completed on the device but were not retired by a host sync are kept
 * (not measured; the conservative choice). */
int sim_pool_trim(void *ctx, ps_pool *p, uint64_t keep) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p)) return PS_ERR_INVALID_VALUE;
  uint64_t floor = sim_round_up(keep, gran(c));
  if (floor < keep) return PS_OK;   /* overflow: keep everything */
  uint64_t gone = shrink(c, p, floor);
  if (gone) sim_host_cost(c, (double)gone / GIB_D * c->prof.trim_ns_per_gib);
  return PS_OK;
}

/* Bytes the device has mapped (pool chunks and cudaMalloc). */
uint64_t sim_device_reserved(const sim_ctx *c) {
  return c->mem.mapped[SIM_DEVICE_SPACE];
}

uint64_t sim_device_total(const sim_ctx *c) { return (uint64_t)c->prof.memory; }
