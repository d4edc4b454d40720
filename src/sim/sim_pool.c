/*
 * sim_pool.c: stream-ordered memory pools (cudaMallocFromPoolAsync and
 * cudaFreeAsync), after the CUDA Programming Guide's "Stream Ordered
 * Memory Allocator": chunks mapped from the device, blocks placed by best
 * fit, freed blocks reused by the guide's rules, release on host sync.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* A block of a chunk. A free block remembers its cudaFreeAsync: the
 * stream, the position on it and when it completes. Fresh space (never
 * allocated) has used == 0. */
typedef struct sim_block {
  ps_addr addr;
  uint64_t size;
  int free, used, known;      /* known: the host learned the free completed */
  int stream;
  int64_t pos, time;
  struct sim_block *next;     /* by address */
} sim_block;

typedef struct sim_chunk {
  sim_map *map;
  ps_pool *pool;
  sim_block *blocks;
  struct sim_chunk *next;
} sim_chunk;

struct ps_pool {
  ps_location loc;
  int is_default, destroyed;
  int follow, opportunistic, internal;
  uint64_t max_size, threshold;
  uint64_t reserved, reserved_high, used, used_high;
  size_t live;                /* allocated blocks */
  sim_chunk *chunks;
};

/* ---- lookups ---- */

/* p when it is a live (not destroyed) pool of c, else NULL. */
static ps_pool *live_pool(sim_ctx *c, ps_pool *p) {
  for (size_t i = 0; p && i < c->pools.n; i++)
    if (c->pools.v[i] == p) return p->destroyed ? NULL : p;
  return NULL;
}

/* Whether the host knows b's free completed (fresh space: always). */
static int block_known(const sim_ctx *c, sim_block *b) {
  if (!b->used || b->known) return 1;
  b->known = sim_host_knows(c, b->stream, b->pos);
  return b->known;
}

static sim_space pool_space(const ps_pool *p) {
  return p->loc == PS_LOCATION_HOST ? SIM_HOST_SPACE : SIM_DEVICE_SPACE;
}

/* ---- coalescing ---- */

/* Whether two adjacent free blocks may become one: both known complete
 * to the host, or both freed on the same stream (the later free then
 * stands for both). */
static int mergeable(const sim_ctx *c, sim_block *a, sim_block *b) {
  if (!a->free || !b->free) return 0;
  if (block_known(c, a) && block_known(c, b)) return 1;
  return a->used && b->used && a->stream == b->stream;
}

/* a absorbs its successor b. */
static void merge(sim_block *a, sim_block *b) {
  if (a->used && b->used && a->stream == b->stream) {
    a->pos = sim_max64(a->pos, b->pos);
    a->time = sim_max64(a->time, b->time);
    a->known = a->known && b->known;
  } else if (a->used || b->used) {
    a->used = 1, a->known = 1, a->stream = -1, a->pos = 0, a->time = 0;
  }
  a->size += b->size;
  a->next = b->next;
  free(b);
}

/* Merges every mergeable run of free blocks in p's chunks. */
static void coalesce(sim_ctx *c, ps_pool *p) {
  for (sim_chunk *k = p->chunks; k; k = k->next)
    for (sim_block *b = k->blocks; b && b->next;)
      if (mergeable(c, b, b->next)) merge(b, b->next); else b = b->next;
}

/* ---- chunks ---- */

/* Maps a chunk of `size` bytes for p: one fresh free block. NULL when the
 * device (or host) is full or max_size would be passed. */
static sim_chunk *chunk_map(sim_ctx *c, ps_pool *p, uint64_t size) {
  sim_space sp = pool_space(p);
  double cap = sp == SIM_HOST_SPACE ? c->prof.host_memory : c->prof.memory;
  if ((double)(c->mem.mapped[sp] + size) > cap) return NULL;
  if (p->max_size && p->reserved + size > p->max_size) return NULL;
  sim_chunk *k = calloc(1, sizeof *k);
  sim_block *b = calloc(1, sizeof *b);
  sim_map *m = k && b ? sim_mem_map(&c->mem, sp, size, SIM_MAP_CHUNK) : NULL;
  if (!m) { free(k), free(b); return NULL; }
  m->owner = k;
  *b = (sim_block){ .addr = m->base, .size = size, .free = 1, .stream = -1 };
  *k = (sim_chunk){ .map = m, .pool = p, .blocks = b, .next = p->chunks };
  p->chunks = k;
  p->reserved += size;
  if (p->reserved > p->reserved_high) p->reserved_high = p->reserved;
  return k;
}

/* Unmaps chunk k of p and frees its blocks. */
static void chunk_unmap(sim_ctx *c, ps_pool *p, sim_chunk *k) {
  sim_chunk **pp = &p->chunks;
  while (*pp != k) pp = &(*pp)->next;
  *pp = k->next;
  p->reserved -= k->map->size;
  sim_mem_unmap(&c->mem, k->map);
  for (sim_block *b = k->blocks, *n; b; b = n) n = b->next, free(b);
  free(k);
}

/* Whether every block of k is free and known complete to the host. */
static int releasable(const sim_ctx *c, sim_chunk *k) {
  for (sim_block *b = k->blocks; b; b = b->next)
    if (!b->free || !block_known(c, b)) return 0;
  return 1;
}

/* Unmaps releasable chunks, highest address first, until p->reserved <=
 * target or none is left. */
static void release_to(sim_ctx *c, ps_pool *p, uint64_t target) {
  coalesce(c, p);
  while (p->reserved > target) {
    sim_chunk *best = NULL;
    for (sim_chunk *k = p->chunks; k; k = k->next)
      if (releasable(c, k) && (!best || k->map->base > best->map->base)) best = k;
    if (!best) return;
    chunk_unmap(c, p, best);
  }
}

/* After host synchronisation: pools above their threshold shrink toward
 * it; destroyed pools give back all they can. */
void sim_pools_release(sim_ctx *c) {
  for (size_t i = 0; i < c->pools.n; i++) {
    ps_pool *p = c->pools.v[i];
    uint64_t target = p->destroyed ? 0 : p->threshold;
    if (p->reserved > target) release_to(c, p, target);
  }
}

/* ---- placement ---- */

/* The rules a free block can be taken under by stream s. */
static int eligible(const sim_ctx *c, ps_pool *p, sim_block *b, ps_stream *s,
                    ps_reuse_rule rule) {
  if (!b->used) return rule == PS_RULE_NONE;
  switch (rule) {
  case PS_RULE_STREAM_ORDER: return b->stream == s->id;
  case PS_RULE_HOST_SYNC: return block_known(c, b);
  case PS_RULE_EVENT_DEP: return p->follow && sim_vc_get(&s->clock, b->stream) >= b->pos;
  case PS_RULE_OPPORTUNISTIC: return p->opportunistic && b->time <= c->host_now;
  case PS_RULE_INTERNAL_DEP: return p->internal;
  default: return 0;
  }
}

/* The smallest free block of p (ties: lowest address) of at least r bytes
 * that rule allows, or NULL. */
static sim_block *best_fit(sim_ctx *c, ps_pool *p, uint64_t r, ps_stream *s,
                           ps_reuse_rule rule) {
  sim_block *best = NULL;
  for (sim_chunk *k = p->chunks; k; k = k->next)
    for (sim_block *b = k->blocks; b; b = b->next) {
      if (!b->free || b->size < r || !eligible(c, p, b, s, rule)) continue;
      if (!best || b->size < best->size ||
          (b->size == best->size && b->addr < best->addr)) best = b;
    }
  return best;
}

/* Allocates the first r bytes of b; the rest stays a free block with b's
 * history. 0 when out of host memory (b unchanged). */
static int take(sim_block *b, uint64_t r) {
  if (b->size > r) {
    sim_block *t = malloc(sizeof *t);
    if (!t) return 0;
    *t = *b;
    t->addr = b->addr + r, t->size = b->size - r;
    b->next = t, b->size = r;
  }
  b->free = 0;
  return 1;
}

/* Size of a new chunk for r bytes: the minimum chunk unless that would
 * not fit under max_size, then just r; both rounded to the granularity. */
static sim_chunk *grow(sim_ctx *c, ps_pool *p, uint64_t r) {
  uint64_t g = (uint64_t)c->prof.pool_granularity;
  uint64_t want = r > (uint64_t)c->prof.pool_min_chunk ? r : (uint64_t)c->prof.pool_min_chunk;
  sim_chunk *k = chunk_map(c, p, sim_round_up(want, g));
  return k ? k : chunk_map(c, p, sim_round_up(r, g));
}

/* Finds the block for r bytes on s by the guide's rules in order; *rule
 * says which. NULL when the pool cannot grow and nothing qualifies. */
static sim_block *place(sim_ctx *c, ps_pool *p, uint64_t r, ps_stream *s,
                        ps_reuse_rule *rule) {
  static const ps_reuse_rule order[] = { PS_RULE_STREAM_ORDER, PS_RULE_HOST_SYNC,
    PS_RULE_EVENT_DEP, PS_RULE_OPPORTUNISTIC, PS_RULE_NONE };
  coalesce(c, p);
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    sim_block *b = best_fit(c, p, r, s, order[i]);
    if (b) { *rule = order[i]; return b; }
  }
  sim_chunk *k = grow(c, p, r);
  if (k) { *rule = PS_RULE_NONE; return k->blocks; }
  *rule = PS_RULE_INTERNAL_DEP;
  return best_fit(c, p, r, s, PS_RULE_INTERNAL_DEP);
}

/* cudaMallocFromPoolAsync. Size 0 gives address 0 and reserves nothing.
 * On PS_ERR_MEMORY_ALLOCATION the pool is unchanged. */
int sim_pool_alloc(void *ctx, ps_pool *p, uint64_t size, ps_stream *s,
                   ps_addr *out, ps_alloc_note *note) {
  sim_ctx *c = ctx;
  ps_stream *st = sim_stream_resolve(c, s);
  if (!live_pool(c, p) || !out) return PS_ERR_INVALID_VALUE;
  if (!st) return PS_ERR_INVALID_RESOURCE;
  sim_host_cost(c, c->prof.alloc_api_ns);
  ps_alloc_note dummy;
  if (!note) note = &dummy;
  *note = (ps_alloc_note){ PS_RULE_NONE, 0 };
  *out = 0;
  if (size == 0) return PS_OK;
  uint64_t r = sim_round_up(size, (uint64_t)c->prof.pool_alignment);
  if (r < size) return PS_ERR_MEMORY_ALLOCATION;
  ps_reuse_rule rule;
  sim_block *b = place(c, p, r, st, &rule);
  if (!b) return PS_ERR_MEMORY_ALLOCATION;
  int was_used = b->used, fs = b->stream;
  int64_t fpos = b->pos, ftime = b->time;
  if (!take(b, r)) return PS_ERR_MEMORY_ALLOCATION;
  if (rule == PS_RULE_INTERNAL_DEP) {   /* s now waits for the free */
    st->tail = sim_max64(st->tail, ftime);
    sim_vc_raise(&st->clock, fs, fpos);
  }
  p->used += r, p->live++;
  if (p->used > p->used_high) p->used_high = p->used;
  *out = b->addr;
  if (was_used) *note = (ps_alloc_note){ rule, b->addr };
  return PS_OK;
}

/* The allocated block that starts at a, with its chunk; NULL if none. */
static sim_block *find_alloc(sim_ctx *c, ps_addr a, sim_chunk **kout) {
  sim_map *m = sim_mem_find(&c->mem, a);
  if (!m || m->kind != SIM_MAP_CHUNK) return NULL;
  sim_chunk *k = m->owner;
  for (sim_block *b = k->blocks; b && b->addr <= a; b = b->next)
    if (b->addr == a && !b->free) { *kout = k; return b; }
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
  sim_chunk *k;
  sim_block *b = find_alloc(c, a, &k);
  if (!b) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.alloc_api_ns);
  b->time = sim_enqueue(c, st, 0);
  b->pos = st->seq, b->stream = st->id;
  b->free = 1, b->used = 1, b->known = 0;
  ps_pool *p = k->pool;
  p->used -= b->size, p->live--;
  if (p->destroyed) release_to(c, p, 0);
  return PS_OK;
}

/* ---- pool objects ---- */

static int pool_new(sim_ctx *c, const ps_pool_props *props, ps_pool **out) {
  if (c->pools.n == c->pools.cap) {
    size_t cap = c->pools.cap ? c->pools.cap * 2 : 8;
    ps_pool **v = realloc(c->pools.v, cap * sizeof *v);
    if (!v) return PS_ERR_MEMORY_ALLOCATION;
    c->pools.v = v, c->pools.cap = cap;
  }
  ps_pool *p = calloc(1, sizeof *p);
  if (!p) return PS_ERR_MEMORY_ALLOCATION;
  p->loc = props->location;
  p->follow = p->opportunistic = p->internal = 1;
  p->max_size = sim_round_up(props->max_size, (uint64_t)c->prof.pool_granularity);
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

/* Frees every pool, chunk and block (the mappings go with sim_mem). */
void sim_pools_free(sim_ctx *c) {
  for (size_t i = 0; i < c->pools.n; i++) {
    ps_pool *p = c->pools.v[i];
    while (p->chunks) chunk_unmap(c, p, p->chunks);
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

/* Marks p destroyed: its handle is invalid; live blocks stay valid and
 * the memory goes back as their frees become known. */
int sim_pool_destroy(void *ctx, ps_pool *p) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p) || p->is_default) return PS_ERR_INVALID_VALUE;
  p->destroyed = 1;
  release_to(c, p, 0);
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

/* cudaMemPoolTrimTo: unmaps completely free, known-complete chunks until
 * reserved <= keep, regardless of the threshold. */
int sim_pool_trim(void *ctx, ps_pool *p, uint64_t keep) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p)) return PS_ERR_INVALID_VALUE;
  release_to(c, p, keep);
  return PS_OK;
}

/* Bytes the device has mapped (pool chunks and cudaMalloc). */
uint64_t sim_device_reserved(const sim_ctx *c) {
  return c->mem.mapped[SIM_DEVICE_SPACE];
}

uint64_t sim_device_total(const sim_ctx *c) { return (uint64_t)c->prof.memory; }
