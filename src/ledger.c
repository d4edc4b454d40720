/*
 * ledger.c: what poolsh knows about the pool blocks it allocated. A block
 * is live (allocated), pending (its free is queued, not known complete) or
 * done (known complete; kept so a later allocation at its address can say
 * which buffer it reuses). Streams count the operations poolsh queued on
 * them and how far host synchronisation and queries have seen them
 * complete; events remember the position they were recorded at; a stream
 * that waited on an event knows the recording stream up to there.
 *
 * From that, an allocation that lands where a freed block starts is a
 * reuse, and its rule is the sim's own answer or, on cuda, inferred
 * (docs/explain.md says how).
 */
#include <stdlib.h>
#include <string.h>

#include "poolsh.h"

enum { BLOCK_FREE_SLOT = 0, BLOCK_LIVE, BLOCK_PENDING, BLOCK_DONE };

typedef struct ps_block {
  ps_addr addr;
  uint64_t size, pos;          /* pos: the free's position on its stream */
  int32_t buffer, pool, stream;   /* pool -1: not pool memory */
  int32_t prev, next;          /* pending list, or the free-slot list */
  int32_t src, line;           /* where it was allocated, src -1: unknown */
  uint32_t waits;              /* the context's host waits when it was freed */
  uint8_t state, kind;
} ps_block;

struct ps_ledger {
  ps_block *v;                 /* slots; indices are stable */
  size_t n, cap;
  int32_t free_slot;           /* head of unused slots */
  int32_t pending;             /* head of the pending list */
  int32_t *map;                /* open addressing: addr -> slot, -1 empty */
  size_t mapcap, used;         /* used: occupied map entries */
  size_t ndone;                /* done blocks kept */
};

#define DONE_KEEP 4096         /* done blocks remembered for reused_from */

/* ---- the address map ------------------------------------------------------ */

/* Mixes all of a's bits into the low ones (aligned addresses differ only
 * high up). */
static size_t hash_addr(ps_addr a, size_t cap) {
  a ^= a >> 33;
  a *= 0xff51afd7ed558ccdull;
  a ^= a >> 33;
  return (size_t)a & (cap - 1);
}

/* The map position holding addr, or where it would go. */
static size_t map_find(const ps_ledger *l, ps_addr a) {
  size_t i = hash_addr(a, l->mapcap);
  while (l->map[i] >= 0 && l->v[l->map[i]].addr != a) i = (i + 1) & (l->mapcap - 1);
  return i;
}

static int map_grow(ps_ledger *l) {
  size_t cap = l->mapcap ? l->mapcap * 2 : 256;
  int32_t *m = malloc(cap * sizeof *m);
  if (!m) return 0;
  for (size_t i = 0; i < cap; i++) m[i] = -1;
  int32_t *old = l->map;
  size_t oldcap = l->mapcap;
  l->map = m, l->mapcap = cap;
  for (size_t i = 0; i < oldcap; i++)
    if (old[i] >= 0) l->map[map_find(l, l->v[old[i]].addr)] = old[i];
  free(old);
  return 1;
}

/* Removes addr's entry, shifting later entries of its run back. */
static void map_remove(ps_ledger *l, ps_addr a) {
  size_t i = map_find(l, a), mask = l->mapcap - 1;
  if (l->map[i] < 0) return;
  l->map[i] = -1;
  l->used--;
  for (size_t j = (i + 1) & mask; l->map[j] >= 0; j = (j + 1) & mask) {
    size_t home = hash_addr(l->v[l->map[j]].addr, l->mapcap);
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      l->map[i] = l->map[j];
      l->map[j] = -1;
      i = j;
    }
  }
}

/* ---- slots and the pending list ------------------------------------------- */

static int32_t slot_new(ps_ledger *l) {
  if (l->free_slot >= 0) {
    int32_t s = l->free_slot;
    l->free_slot = l->v[s].next;
    return s;
  }
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 256;
    ps_block *v = realloc(l->v, cap * sizeof *v);
    if (!v) return -1;
    l->v = v, l->cap = cap;
  }
  return (int32_t)l->n++;
}

static void pending_unlink(ps_ledger *l, int32_t s) {
  ps_block *b = &l->v[s];
  if (b->prev >= 0) l->v[b->prev].next = b->next;
  else l->pending = b->next;
  if (b->next >= 0) l->v[b->next].prev = b->prev;
  b->prev = b->next = -1;
}

static void pending_link(ps_ledger *l, int32_t s) {
  ps_block *b = &l->v[s];
  b->prev = -1;
  b->next = l->pending;
  if (l->pending >= 0) l->v[l->pending].prev = s;
  l->pending = s;
}

static void pool_unpend(ps_ctx *c, const struct ps_block *b);

/* Forgets the slot s entirely. */
static void slot_drop(ps_ctx *c, ps_ledger *l, int32_t s) {
  ps_block *b = &l->v[s];
  if (b->state == BLOCK_PENDING) {
    pending_unlink(l, s);
    pool_unpend(c, b);
  }
  if (b->state == BLOCK_DONE) l->ndone--;
  map_remove(l, b->addr);
  b->state = BLOCK_FREE_SLOT;
  b->next = l->free_slot;
  l->free_slot = s;
}

static ps_ledger *ledger_of(ps_ctx *c) {
  if (!c->ledger) {
    c->ledger = calloc(1, sizeof *c->ledger);
    if (c->ledger) c->ledger->free_slot = c->ledger->pending = -1;
  }
  return c->ledger;
}

void ps_ledger_free_all(ps_ledger *l) {
  if (!l) return;
  free(l->v);
  free(l->map);
  free(l);
}

/* ---- streams and pools by id ------------------------------------------------ */

ps_streamud *ps_stream_by_id(ps_ctx *c, int32_t id) {
  for (ps_streamud *s = c->streams; s; s = s->next)
    if (s->id == id) return s;
  return NULL;
}

static ps_poolud *pool_by_id(ps_ctx *c, int32_t id) {
  for (ps_poolud *p = c->pools; p; p = p->next)
    if (p->id == id) return p;
  return NULL;
}

/* Whether stream `waiter` waited on an event recorded on `on` at or after pos. */
static int knows(const ps_streamud *waiter, int32_t on, uint64_t pos) {
  for (int i = 0; i < PS_KNOWS; i++)
    if (waiter->knows[i].stream == on && waiter->knows[i].pos >= pos && waiter->knows[i].pos) return 1;
  return 0;
}

/* The rule by which an allocation on s reused block b, from what poolsh
 * saw (the cuda backend cannot say): same stream; a host sync past the
 * free; an event wait past it; else the freeing stream is idle now
 * (opportunistic) or still busy (the pool made s wait). */
static ps_reuse_rule infer(ps_ctx *c, const ps_block *b, const ps_streamud *s) {
  if (b->stream == s->id) return PS_RULE_STREAM_ORDER;
  ps_streamud *f = ps_stream_by_id(c, b->stream);
  if (!f || f->synced >= b->pos) return PS_RULE_HOST_SYNC;
  if (knows(s, b->stream, b->pos)) return PS_RULE_EVENT_DEP;
  if (b->state == BLOCK_DONE || f->done >= b->pos) return PS_RULE_OPPORTUNISTIC;
  int idle = 0;
  if (f->live && c->be->stream_query(c->b, f->h, &idle) == PS_OK && idle) {
    f->done = f->ops;
    return PS_RULE_OPPORTUNISTIC;
  }
  return PS_RULE_INTERNAL_DEP;
}

/* Pool p's pending counters lose block b. */
static void pool_unpend(ps_ctx *c, const struct ps_block *b) {
  ps_poolud *p = pool_by_id(c, b->pool);
  if (p) p->pending_bytes -= b->size, p->pending_count--;
}

/* ---- what the bindings call ---------------------------------------------- */

/* Buffer b was allocated from pool p on stream s; said is the backend's
 * word on reuse (PS_RULE_UNKNOWN on cuda). Fills b->reuse_rule and
 * b->reused_from. Returns 1 when b lies inside a block freed since the
 * last host wait, memory the pool still held: the pool did not grow. */
int ps_ledger_alloc(lua_State *L, ps_ctx *c, ps_poolud *p, ps_streamud *s, ps_bufferud *b,
                    ps_reuse_rule said) {
  ps_ledger *l = ledger_of(c);
  int fits = 0;
  s->ops++;
  b->reused_from = -1;
  b->reuse_rule = said == PS_RULE_UNKNOWN ? PS_RULE_NONE : said;
  int fresh = said == PS_RULE_NONE;   /* the sim says so */
  p->live_bytes += b->size;
  if (b->addr < p->lo || p->lo == 0) p->lo = b->addr;
  if (!l || ((l->used + 1) * 4 > l->mapcap * 3 && !map_grow(l))) return 0;
  size_t i = map_find(l, b->addr);
  int32_t slot = l->map[i];
  if (slot >= 0) {
    ps_block *old = &l->v[slot];
    if (old->state != BLOCK_LIVE) {
      fits = !fresh && old->pool == p->id && old->size >= b->size && old->waits == c->waits;
      if (old->pool == p->id && !fresh) {   /* another pool's address space: not a reuse */
        b->reused_from = old->buffer;
        if (said == PS_RULE_UNKNOWN) b->reuse_rule = infer(c, old, s);
      }
      if (old->state == BLOCK_PENDING) {
        pending_unlink(l, slot);
        pool_unpend(c, old);
      } else {
        l->ndone--;
      }
    }
  } else {
    if ((slot = slot_new(l)) < 0) return 0;
    l->map[i] = slot;
    l->used++;
  }
  ps_block *nb = &l->v[slot];
  *nb = (ps_block){ b->addr, b->size, 0, b->id, p->id, s->id, -1, -1, -1, 0, 0, BLOCK_LIVE,
                    PS_KIND_POOL };
  if (c->sources || c->tracing) {
    ps_where(L, c, &nb->src, &nb->line);
    b->src = nb->src, b->line = nb->line;
  }
  return fits;
}

/* A buffer of another kind (malloc, pinned, pageable) was allocated. */
void ps_ledger_track(lua_State *L, ps_ctx *c, ps_bufferud *b) {
  ps_ledger *l = ledger_of(c);
  if (!l || ((l->used + 1) * 4 > l->mapcap * 3 && !map_grow(l))) return;
  size_t i = map_find(l, b->addr);
  int32_t slot = l->map[i];
  if (slot >= 0) slot_drop(c, l, slot), i = map_find(l, b->addr);   /* an old record there */
  if ((slot = slot_new(l)) < 0) return;
  l->map[i] = slot;
  l->used++;
  l->v[slot] = (ps_block){ b->addr, b->size, 0, b->id, -1, -1, -1, -1, -1, 0, 0, BLOCK_LIVE,
                           (uint8_t)b->kind };
  if (c->sources || c->tracing) ps_where(L, c, &l->v[slot].src, &l->v[slot].line);
  b->src = l->v[slot].src, b->line = l->v[slot].line;
}

/* A buffer of another kind was freed (synchronously: nothing pends). */
void ps_ledger_untrack(ps_ctx *c, const ps_bufferud *b) {
  ps_ledger *l = c->ledger;
  if (!l || !l->mapcap) return;
  int32_t slot = l->map[map_find(l, b->addr)];
  if (slot >= 0 && l->v[slot].buffer == b->id) slot_drop(c, l, slot);
}

/* Pushes the live buffers poolsh allocated, oldest id first: an array of
 * {buffer, kind, size, addr, pool, stream, src} (the leak report). */
void ps_ledger_push_live(lua_State *L, ps_ctx *c) {
  static const char *const kinds[] = {"pool", "malloc", "pinned", "pageable"};
  ps_ledger *l = c->ledger;
  lua_newtable(L);
  if (!l) return;
  int k = 0;
  for (size_t s = 0; s < l->n; s++) {
    const ps_block *b = &l->v[s];
    if (b->state != BLOCK_LIVE) continue;
    lua_createtable(L, 0, 7);
    lua_pushinteger(L, b->buffer);
    lua_setfield(L, -2, "buffer");
    lua_pushstring(L, kinds[b->kind & 3]);
    lua_setfield(L, -2, "kind");
    lua_pushinteger(L, (lua_Integer)b->size);
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, (lua_Integer)b->addr);
    lua_setfield(L, -2, "addr");
    if (b->pool >= 0) {
      lua_pushinteger(L, b->pool);
      lua_setfield(L, -2, "pool");
      lua_pushinteger(L, b->stream);
      lua_setfield(L, -2, "stream");
    }
    if (b->src >= 0) {
      lua_pushfstring(L, "%s:%d", ps_source_name(c, b->src), (int)b->line);
      lua_setfield(L, -2, "src");
    }
    lua_rawseti(L, -2, ++k);
  }
}

/* Buffer b's free was queued on stream s (NULL: the legacy stream). */
void ps_ledger_free(ps_ctx *c, ps_poolud *p, ps_streamud *s, const ps_bufferud *b) {
  ps_ledger *l = c->ledger;
  if (p) p->live_bytes -= b->size;
  if (s) s->ops++;
  if (!l || !l->mapcap) return;
  int32_t slot = l->map[map_find(l, b->addr)];
  if (slot < 0 || l->v[slot].state != BLOCK_LIVE || l->v[slot].buffer != b->id) return;
  ps_block *k = &l->v[slot];
  k->stream = s ? s->id : 0;
  k->pos = s ? s->ops : 0;
  k->waits = c->waits;
  k->state = BLOCK_PENDING;
  pending_link(l, slot);
  if (p) p->pending_bytes += k->size, p->pending_count++;
}

/* After a synchronisation or query taught poolsh how far streams got:
 * pending frees now known complete become done (and free_completed
 * events while recording). Old done blocks beyond DONE_KEEP are dropped. */
void ps_ledger_learn(lua_State *L, ps_ctx *c) {
  ps_ledger *l = c->ledger;
  if (!l) return;
  for (int32_t s = l->pending, next; s >= 0; s = next) {
    ps_block *b = &l->v[s];
    next = b->next;
    ps_streamud *st = ps_stream_by_id(c, b->stream);
    if (st && st->done < b->pos) continue;
    pending_unlink(l, s);
    pool_unpend(c, b);
    b->state = BLOCK_DONE;
    l->ndone++;
    if (c->tracing) {
      ps_rec *r = ps_trace_rec(L, c, PS_OP_FREE_COMPLETED, PS_REC_NOSRC);
      if (r) r->stream = b->stream, r->pool = b->pool, r->buffer = b->buffer,
             r->addr = b->addr, r->size = b->size;
    }
  }
  if (l->ndone > DONE_KEEP)
    for (size_t s = 0; s < l->n && l->ndone > DONE_KEEP / 2; s++)
      if (l->v[s].state == BLOCK_DONE) slot_drop(c, l, (int32_t)s);
}

/* Host synchronisation of stream s (NULL: every stream) up to its last
 * operation; marks both synced and done. */
void ps_ledger_synced(ps_ctx *c, ps_streamud *s, uint64_t upto) {
  for (ps_streamud *t = s ? s : c->streams; t; t = s ? NULL : t->next) {
    uint64_t pos = s ? upto : t->ops;
    if (pos > t->synced) t->synced = pos;
    if (pos > t->done) t->done = pos;
  }
}

static int span_cmp(const void *a, const void *b) {
  ps_addr x = ((const ps_span *)a)->addr, y = ((const ps_span *)b)->addr;
  return x < y ? -1 : x > y;
}

/* Pool p's blocks that occupy memory (live or pending), sorted by address,
 * into a malloc'd array (*n of them); NULL when there are none. */
ps_span *ps_ledger_spans(ps_ctx *c, const ps_poolud *p, size_t *n) {
  ps_ledger *l = c->ledger;
  *n = 0;
  if (!l) return NULL;
  size_t k = 0;
  for (size_t s = 0; s < l->n; s++)
    if (l->v[s].pool == p->id && (l->v[s].state == BLOCK_LIVE || l->v[s].state == BLOCK_PENDING)) k++;
  if (!k) return NULL;
  ps_span *v = malloc(k * sizeof *v);
  if (!v) return NULL;
  for (size_t s = 0; s < l->n; s++) {
    const ps_block *b = &l->v[s];
    if (b->pool == p->id && (b->state == BLOCK_LIVE || b->state == BLOCK_PENDING))
      v[(*n)++] = (ps_span){ b->addr, b->size, b->buffer, b->stream, b->state == BLOCK_PENDING };
  }
  qsort(v, *n, sizeof *v, span_cmp);
  return v;
}

/* After a call at which a pool can give memory back: a host
 * synchronisation, a trim, destroying a stream, a cudaFree
 * (docs/calibration.md E3). A pool does so from the top of its
 * arena, so blocks that lay above what it still reserves were unmapped;
 * memory at those addresses later is fresh, not a reuse. */
void ps_ledger_released(ps_ctx *c) {
  ps_ledger *l = c->ledger;
  c->waits++;
  if (!l) return;
  for (ps_poolud *p = c->pools; p; p = p->next) {
    uint64_t reserved = 0;
    if (!p->h || !p->lo || c->be->pool_get(c->b, p->h, PS_ATTR_RESERVED_CURRENT, &reserved) != PS_OK)
      continue;
    for (size_t s = 0; s < l->n; s++)
      if (l->v[s].state == BLOCK_DONE && l->v[s].pool == p->id && l->v[s].addr >= p->lo + reserved)
        slot_drop(c, l, (int32_t)s);
  }
}

/* After a host synchronisation of stream s up to upto (s NULL: the whole
 * device): marks it, forgets blocks the pools unmapped, completes frees. */
void ps_after_sync(lua_State *L, ps_ctx *c, ps_streamud *s, uint64_t upto) {
  ps_ledger_synced(c, s, upto);
  ps_ledger_learn(L, c);
  ps_ledger_released(c);
}

/* After a query found s idle (known complete, not a synchronisation). */
void ps_after_idle(lua_State *L, ps_ctx *c, ps_streamud *s, uint64_t upto) {
  if (upto > s->done) s->done = upto;
  ps_ledger_learn(L, c);
}

/* s waited on an event recorded on stream `on` at pos: s knows `on` up
 * to there (the latest position per stream; the oldest entry makes room). */
void ps_stream_learns(ps_streamud *s, int32_t on, uint64_t pos) {
  int slot = 0;
  for (int i = 0; i < PS_KNOWS; i++) {
    if (s->knows[i].pos && s->knows[i].stream == on) {
      if (pos > s->knows[i].pos) s->knows[i].pos = pos;
      return;
    }
    if (s->knows[i].pos < s->knows[slot].pos) slot = i;
  }
  s->knows[slot].stream = on;
  s->knows[slot].pos = pos;
}
