/*
 * ledger.c: what poolsh knows about the pool memory it allocated, per
 * pool an interval map of the address space as poolsh has seen it. Each
 * extent is live (a buffer), pending (part or all of a buffer's freed
 * bytes, its free queued and not known complete) or done (known
 * complete; kept so a later allocation over it can say whose memory it
 * reuses). Extents never overlap: an allocation takes exactly the bytes
 * it covers (its size rounded up to the pool's alignment) from every
 * freed extent it touches, and what is left of each stays pending or done
 * with its own history. Streams count the operations poolsh queued on
 * them and how far host synchronisation and queries have seen them
 * complete; events remember the position they were recorded at; a stream
 * that waited on an event knows the recording stream up to there.
 *
 * From that, an allocation over freed extents reuses each of their
 * buffers' memory; the first one's rule is the sim's own answer or, on
 * cuda, inferred, the others' are inferred (docs/explain.md says how).
 *
 * Every operation costs O(log n) in the extents kept, or O(log n) per
 * extent whose state changes: live and done extents are listed by age,
 * pending ones per stream in free order; two ordered sets keyed by (pool,
 * address) hold the edges of live and pending extents (for the free-space
 * estimate) and the freed (pending and done) extents themselves (for
 * allocations and releases). A pool's edges are kept
 * only once its free space was asked for: built then from its blocks,
 * O(n log n) once, so scripts that never ask pay nothing for them. Live pools and streams
 * are found by id in O(1); a learn visits only queues holding frees.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "observer.h"

enum { BLOCK_FREE_SLOT = 0, BLOCK_LIVE, BLOCK_PENDING, BLOCK_DONE };

typedef struct ps_list { int32_t head, tail; } ps_list;   /* slots; -1: none */

typedef struct ps_block {
  ps_addr addr;
  uint64_t size, pos;          /* pos: the free's position on its stream */
  int32_t buffer, pool, stream;   /* pool -1: not pool memory */
  int32_t prev, next;          /* in its list: live, its queue, done, or free slots */
  int32_t site;                /* where it was allocated (sites.c), -1: unknown */
  const ps_bufferud *ud;       /* live: its Buffer (poolsh.core.reset ends it), or NULL */
  int32_t q;                   /* pending: its queue */
  uint32_t mi;                 /* live: its place in the address map (when map[mi] is it) */
  uint32_t waits;              /* the context's host waits when it was freed */
  uint8_t state, kind;
  uint8_t edged;               /* its edges are in the coverage set */
} ps_block;

/* A node of an ordered set keyed by (pool, addr): a treap in one array,
 * node 0 the empty tree. In the coverage set, d is how many blocks start
 * at addr minus how many end there (never 0), so between two neighbours
 * the coverage is the sum of d before, and a gap (coverage 0) lies
 * between two nodes exactly. */
typedef struct ps_node {
  ps_addr addr;
  int32_t pool;
  uint32_t prio;
  int32_t l, r;
  int32_t d;                   /* coverage: its change at addr; freed set: 0 */
  int32_t slot;                /* freed set: the extent */
  int32_t sum, min;            /* subtree: sum of d; lowest coverage between its nodes */
  uint64_t zsum, zmax;         /* the extents at that coverage: total, largest */
  ps_addr first, last;         /* the subtree's lowest and highest addr */
} ps_node;

/* A stream's pending frees in free order (positions only grow). */
typedef struct ps_queue {
  int32_t stream;              /* Q_UNUSED, or Q_ORPHAN: complete at the next learn */
  ps_list list;
  int32_t at;                  /* index + 1 in the ledger's act; 0: not there */
} ps_queue;

enum { Q_UNUSED = -2, Q_ORPHAN = -1 };

struct ps_ledger {
  ps_block *v;                 /* slots; indices are stable */
  size_t n, cap;
  int32_t free_slot;           /* head of unused slots */
  ps_list live, done;          /* oldest first */
  size_t nlive, ndone, npending;
  int32_t *map;                /* open addressing: addr -> slot, -1 empty */
  size_t mapcap, used;         /* used: occupied map entries */
  ps_node *t;                  /* the sets' nodes; t[0] is nil */
  size_t tn, tcap;
  int32_t tfree;               /* unused nodes, linked by l */
  int32_t cover, freed;        /* roots: live and pending edges; pending and done extents */
  uint64_t align;              /* blocks occupy their size rounded up to this */
  uint32_t seed;
  ps_queue *q;
  size_t nq, capq;
  int32_t orphan;              /* index + 1 of the queue for frees on no stream */
  int32_t qfree;               /* index + 1 of an unused queue, linked by list.head */
  int32_t *act;                /* queues a learn must visit: with frees, or stream gone */
  size_t nact;                 /* (act has room for every queue: capq) */
  int learning;
  ps_idmap pools;              /* the context's live pools by id (followed.c) */
  int ids_lost;                /* the map ran out of memory: scan the list */
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

/* Puts slot s at map position i, which it remembers. */
static void map_put(ps_ledger *l, size_t i, int32_t s) {
  l->map[i] = s;
  l->v[s].mi = (uint32_t)i;
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
    if (old[i] >= 0) map_put(l, map_find(l, l->v[old[i]].addr), old[i]);
  free(old);
  return 1;
}

/* Removes the entry at map position i, shifting later entries of its
 * run back (each remembers its new position). */
static void map_remove_at(ps_ledger *l, size_t i) {
  size_t mask = l->mapcap - 1;
  if (l->map[i] < 0) return;
  l->map[i] = -1;
  l->used--;
  for (size_t j = (i + 1) & mask; l->map[j] >= 0; j = (j + 1) & mask) {
    size_t home = hash_addr(l->v[l->map[j]].addr, l->mapcap);
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      map_put(l, i, l->map[j]);
      l->map[j] = -1;
      i = j;
    }
  }
}

/* ---- lists of slots ---------------------------------------------------------- */

static void list_append(ps_ledger *l, ps_list *x, int32_t s) {
  ps_block *b = &l->v[s];
  b->prev = x->tail;
  b->next = -1;
  if (x->tail >= 0) l->v[x->tail].next = s;
  else x->head = s;
  x->tail = s;
}

/* Puts slot s into list x right after slot at (in x). */
static void list_insert_after(ps_ledger *l, ps_list *x, int32_t at, int32_t s) {
  ps_block *b = &l->v[s];
  b->prev = at;
  b->next = l->v[at].next;
  if (b->next >= 0) l->v[b->next].prev = s;
  else x->tail = s;
  l->v[at].next = s;
}

static void list_unlink(ps_ledger *l, ps_list *x, int32_t s) {
  ps_block *b = &l->v[s];
  if (b->prev >= 0) l->v[b->prev].next = b->next;
  else x->head = b->next;
  if (b->next >= 0) l->v[b->next].prev = b->prev;
  else x->tail = b->prev;
  b->prev = b->next = -1;
}

/* ---- ordered sets ---------------------------------------------------------- */

/* Whether node n's key is below (pool, a). */
static int below(const ps_node *n, int32_t pool, ps_addr a) {
  return n->pool < pool || (n->pool == pool && n->addr < a);
}

/* Counts extents of coverage c, of total length sum and largest max,
 * toward a subtree's summary. */
static void gaps(ps_node *n, int32_t c, uint64_t sum, uint64_t max) {
  if (c < n->min) {
    n->min = c, n->zsum = sum, n->zmax = max;
  } else if (c == n->min) {
    n->zsum += sum;
    if (max > n->zmax) n->zmax = max;
  }
}

/* Recomputes n's summary from its children's. Lengths between nodes of
 * different pools mean nothing; queries cut one pool's range out first. */
static void pull(ps_ledger *l, int32_t i) {
  ps_node *n = &l->t[i];
  const ps_node *a = n->l ? &l->t[n->l] : NULL, *b = n->r ? &l->t[n->r] : NULL;
  n->min = INT32_MAX, n->zsum = n->zmax = 0;
  int32_t c = 0;
  n->first = n->last = n->addr;
  if (a) {
    if (a->min != INT32_MAX) gaps(n, a->min, a->zsum, a->zmax);
    c = a->sum;
    gaps(n, c, n->addr - a->last, n->addr - a->last);
    n->first = a->first;
  }
  c += n->d;
  if (b) {
    gaps(n, c, b->first - n->addr, b->first - n->addr);
    if (b->min != INT32_MAX) gaps(n, c + b->min, b->zsum, b->zmax);
    n->last = b->last;
  }
  n->sum = c + (b ? b->sum : 0);
}

static int32_t node_new(ps_ledger *l, int32_t pool, ps_addr a, int32_t d, int32_t slot) {
  int32_t i = l->tfree;
  if (i) {
    l->tfree = l->t[i].l;
  } else {
    if (l->tn == l->tcap) {
      size_t cap = l->tcap ? l->tcap * 2 : 256;
      ps_node *t = realloc(l->t, cap * sizeof *t);
      if (!t) return 0;
      l->t = t, l->tcap = cap;
    }
    i = (int32_t)l->tn++;
  }
  l->seed ^= l->seed << 13, l->seed ^= l->seed >> 17, l->seed ^= l->seed << 5;
  l->t[i] = (ps_node){ .addr = a, .pool = pool, .prio = l->seed, .d = d, .slot = slot };
  pull(l, i);
  return i;
}

static void node_free(ps_ledger *l, int32_t i) {
  l->t[i].l = l->tfree;
  l->tfree = i;
}

/* Splits t into *a (keys below (pool, x)) and *b (the rest). */
static void split(ps_ledger *l, int32_t t, int32_t pool, ps_addr x, int32_t *a, int32_t *b) {
  if (!t) {
    *a = *b = 0;
    return;
  }
  int32_t sub;
  if (below(&l->t[t], pool, x)) {
    split(l, l->t[t].r, pool, x, &sub, b);
    l->t[t].r = sub;
    *a = t;
  } else {
    split(l, l->t[t].l, pool, x, a, &sub);
    l->t[t].l = sub;
    *b = t;
  }
  pull(l, t);
}

/* Joins a and b, every key of a below every key of b. */
static int32_t merge(ps_ledger *l, int32_t a, int32_t b) {
  if (!a || !b) return a ? a : b;
  if (l->t[a].prio > l->t[b].prio) {
    int32_t r = merge(l, l->t[a].r, b);
    l->t[a].r = r;
    pull(l, a);
    return a;
  }
  int32_t r = merge(l, a, l->t[b].l);
  l->t[b].l = r;
  pull(l, b);
  return b;
}

/* Inserts node n (its key absent from t); returns the new root. */
static int32_t insert(ps_ledger *l, int32_t t, int32_t n) {
  if (!t) return n;
  ps_node *k = &l->t[n];
  if (k->prio > l->t[t].prio) {
    int32_t a, b;
    split(l, t, k->pool, k->addr, &a, &b);
    l->t[n].l = a, l->t[n].r = b;
    pull(l, n);
    return n;
  }
  int32_t sub;
  if (below(k, l->t[t].pool, l->t[t].addr)) sub = insert(l, l->t[t].l, n), l->t[t].l = sub;
  else sub = insert(l, l->t[t].r, n), l->t[t].r = sub;
  pull(l, t);
  return t;
}

/* The node keyed (pool, a) in t, or 0. */
static int32_t find(const ps_ledger *l, int32_t t, int32_t pool, ps_addr a) {
  while (t && (l->t[t].pool != pool || l->t[t].addr != a))
    t = below(&l->t[t], pool, a) ? l->t[t].r : l->t[t].l;
  return t;
}

/* The first node of t at or above (pool, a), or 0. */
static int32_t lower_bound(const ps_ledger *l, int32_t t, int32_t pool, ps_addr a) {
  int32_t best = 0;
  while (t) {
    if (below(&l->t[t], pool, a)) t = l->t[t].r;
    else best = t, t = l->t[t].l;
  }
  return best;
}

/* The last node of t below (pool, a), or 0. */
static int32_t last_below(const ps_ledger *l, int32_t t, int32_t pool, ps_addr a) {
  int32_t best = 0;
  while (t) {
    if (below(&l->t[t], pool, a)) best = t, t = l->t[t].r;
    else t = l->t[t].l;
  }
  return best;
}

/* Adds d to the present node keyed (pool, a); at 0 the node goes. */
static int32_t adjust(ps_ledger *l, int32_t t, int32_t pool, ps_addr a, int32_t d) {
  ps_node *k = &l->t[t];
  int32_t sub;
  if (k->pool == pool && k->addr == a) {
    if ((k->d += d) == 0) {
      sub = merge(l, k->l, k->r);
      node_free(l, t);
      return sub;
    }
  } else if (below(k, pool, a)) {
    sub = adjust(l, k->r, pool, a, d);
    l->t[t].r = sub;
  } else {
    sub = adjust(l, k->l, pool, a, d);
    l->t[t].l = sub;
  }
  pull(l, t);
  return t;
}

/* Removes the present node keyed (pool, a) from t. */
static int32_t erase(ps_ledger *l, int32_t t, int32_t pool, ps_addr a) {
  ps_node *k = &l->t[t];
  int32_t sub;
  if (k->pool == pool && k->addr == a) {
    sub = merge(l, k->l, k->r);
    node_free(l, t);
    return sub;
  }
  if (below(k, pool, a)) sub = erase(l, k->r, pool, a), l->t[t].r = sub;
  else sub = erase(l, k->l, pool, a), l->t[t].l = sub;
  pull(l, t);
  return t;
}

/* Adds d to the coverage at (pool, a). */
static void cover(ps_ledger *l, int32_t pool, ps_addr a, int32_t d) {
  if (find(l, l->cover, pool, a)) {
    l->cover = adjust(l, l->cover, pool, a, d);
    return;
  }
  int32_t n = node_new(l, pool, a, d, -1);
  if (n) l->cover = insert(l, l->cover, n);
}

/* Block b's edges join (sign 1) or leave (-1) the coverage set; only
 * blocks whose edges are there leave it. */
static void occupy(ps_ledger *l, ps_block *b, int32_t sign) {
  if (sign < 0 ? !b->edged : (b->edged || b->pool < 0 || b->size == 0 || b->addr + b->size < b->addr))
    return;
  b->edged = sign > 0;
  int32_t pool = b->pool;
  ps_addr a = b->addr, end = b->addr + b->size;
  cover(l, pool, a, sign);
  cover(l, pool, end, -sign);
}

/* ---- block states ------------------------------------------------------------ */

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

/* The live pool with that id, or NULL. O(1). */
static ps_seen_pool *pool_by_id(ps_ctx *c, int32_t id) {
  const ps_ledger *l = c->obs->ledger;
  if (l && !l->ids_lost) return ps_idmap_get(&l->pools, id);
  for (ps_seen_pool *p = c->obs->pools; p; p = p->next)
    if (p->id == id) return p;
  return NULL;
}

/* Takes live slot s out of the address map (when the map names it): at
 * the place it remembers, without a search. */
static void map_unset(ps_ledger *l, int32_t s) {
  size_t i = l->v[s].mi;
  if (i < l->mapcap && l->map[i] == s) map_remove_at(l, i);
}

/* Takes freed extent s out of the freed set (when the set holds it). */
static void freed_unset(ps_ledger *l, int32_t s) {
  const ps_block *b = &l->v[s];
  int32_t n = b->pool >= 0 ? find(l, l->freed, b->pool, b->addr) : 0;
  if (n && l->t[n].slot == s) l->freed = erase(l, l->freed, b->pool, b->addr);
}

/* Puts freed extent s into the freed set; out of memory or empty: it
 * stays out (no allocation will be said to reuse it). */
static void freed_set(ps_ledger *l, int32_t s) {
  const ps_block *b = &l->v[s];
  if (b->pool < 0 || b->size == 0 || find(l, l->freed, b->pool, b->addr)) return;
  int32_t n = node_new(l, b->pool, b->addr, 0, s);
  if (n) l->freed = insert(l, l->freed, n);
}

/* Takes slot s out of its list and sets, and its pool's counters; p, when
 * not NULL, is the pool it may belong to (spares a look-up). */
static void detach(ps_ctx *c, ps_ledger *l, int32_t s, ps_seen_pool *p) {
  ps_block *b = &l->v[s];
  switch (b->state) {
  case BLOCK_LIVE:
    list_unlink(l, &l->live, s);
    l->nlive--;
    occupy(l, b, -1);
    map_unset(l, s);
    break;
  case BLOCK_PENDING: {
    list_unlink(l, &l->q[b->q].list, s);
    l->npending--;
    if (!p || p->id != b->pool) p = pool_by_id(c, b->pool);
    if (p) p->pending_bytes -= b->size, p->pending_count--;
    occupy(l, b, -1);
    freed_unset(l, s);
    break;
  }
  case BLOCK_DONE:
    list_unlink(l, &l->done, s);
    l->ndone--;
    if (!p || p->id != b->pool) p = b->pool >= 0 ? pool_by_id(c, b->pool) : NULL;
    if (p) p->done_bytes -= b->size;
    freed_unset(l, s);
    break;
  }
  b->state = BLOCK_FREE_SLOT;
}

/* Forgets the slot s entirely. */
static void slot_drop(ps_ctx *c, ps_ledger *l, int32_t s) {
  detach(c, l, s, NULL);
  l->v[s].next = l->free_slot;
  l->free_slot = s;
}

/* Slot s becomes a live block, the newest; edges: its pool keeps them. */
static void make_live(ps_ledger *l, int32_t s, int edges) {
  l->v[s].state = BLOCK_LIVE;
  list_append(l, &l->live, s);
  l->nlive++;
  if (edges) occupy(l, &l->v[s], 1);
}

/* The pool alignment: the backend's (the sim's profile), else 512 B as
 * measured on an H100 and an H200 (docs/calibration.md E2). */
static uint64_t align_of(ps_ctx *c) {
  double v = 0;
  if (c->be && c->b && c->be->option_get && c->be->option_get(c->b, "pool_alignment", &v) == PS_OK && v >= 1 &&
      v <= (double)(1u << 30))
    return (uint64_t)v;
  return 512;
}

/* Makes the context's ledger; NULL when out of memory. */
static ps_ledger *ledger_new(ps_ctx *c) {
  ps_ledger *l = calloc(1, sizeof *l);
  if (!l) return NULL;
  l->free_slot = -1;
  l->live = l->done = (ps_list){ -1, -1 };
  l->t = malloc(256 * sizeof *l->t);
  if (!l->t) {
    free(l);
    return NULL;
  }
  l->t[0] = (ps_node){ .min = INT32_MAX };
  l->tn = 1, l->tcap = 256;
  l->seed = 0x9e3779b9u;
  for (ps_seen_pool *p = c->obs->pools; p; p = p->next)
    if (!ps_idmap_put(&l->pools, p->id, p)) l->ids_lost = 1;
  return c->obs->ledger = l;
}

static inline ps_ledger *ledger_of(ps_ctx *c) {
  return c->obs->ledger ? c->obs->ledger : ledger_new(c);
}

void ps_ledger_free_all(ps_ledger *l) {
  if (!l) return;
  free(l->v);
  free(l->map);
  free(l->t);
  free(l->q);
  free(l->act);
  free(l->pools.v);
  free(l);
}

/* ---- pending queues ----------------------------------------------------------- */

/* The queue of frees on s (NULL: on no stream), made when missing; -1
 * when out of memory. A Stream keeps its queue's index + 1 in pendq. */
static int32_t queue_of(ps_ledger *l, ps_seen_stream *s) {
  int32_t *at = s ? &s->pendq : &l->orphan;
  int32_t want = s ? s->id : Q_ORPHAN;
  if (*at > 0 && (size_t)*at <= l->nq && l->q[*at - 1].stream == want) return *at - 1;
  size_t i;
  if (l->qfree) {
    i = (size_t)l->qfree - 1;
    l->qfree = l->q[i].list.head;
  } else {
    if (l->nq == l->capq) {
      size_t cap = l->capq ? l->capq * 2 : 8;
      int32_t *act = realloc(l->act, cap * sizeof *act);
      if (!act) return -1;
      l->act = act;
      ps_queue *q = realloc(l->q, cap * sizeof *q);
      if (!q) return -1;
      l->q = q, l->capq = cap;
    }
    i = l->nq++;
  }
  l->q[i] = (ps_queue){ want, { -1, -1 }, 0 };
  *at = (int32_t)i + 1;
  return (int32_t)i;
}

/* The next learn visits queue i (act has room for every queue). */
static void queue_activate(ps_ledger *l, int32_t i) {
  if (l->q[i].at) return;
  l->act[l->nact++] = i;
  l->q[i].at = (int32_t)l->nact;
}

/* Queue i goes unused (it is empty, out of act). */
static void queue_drop(ps_ledger *l, int32_t i) {
  l->q[i].stream = Q_UNUSED;
  l->q[i].list.head = l->qfree;
  l->qfree = i + 1;
  if (l->orphan == i + 1) l->orphan = 0;
}

static int int32_cmp(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorts act by queue index: the order queues are completed and shown in. */
static void act_sort(ps_ledger *l) {
  if (l->nact > 1) qsort(l->act, l->nact, sizeof *l->act, int32_cmp);
  for (size_t i = 0; i < l->nact; i++) l->q[l->act[i]].at = (int32_t)i + 1;
}

/* ---- pools and streams followed, and reuse rules --------------------------------------------- */

/* Pool p is followed (a live pool) or no longer. */
void ps_ledger_pool_followed(ps_ctx *c, ps_seen_pool *p, int followed) {
  ps_ledger *l = followed ? ledger_of(c) : c->obs->ledger;
  if (!l) return;
  if (!followed) ps_idmap_del(&l->pools, p->id);
  else if (!ps_idmap_put(&l->pools, p->id, p)) l->ids_lost = 1;
}

/* Stream s is followed (a live stream) or no longer; a queue it leaves
 * behind is completed and recycled by the next learn. */
void ps_ledger_stream_followed(ps_ctx *c, ps_seen_stream *s, int followed) {
  ps_ledger *l = c->obs->ledger;
  if (followed || !l) return;
  int32_t q = s->pendq - 1;
  if (q >= 0 && (size_t)q < l->nq && l->q[q].stream == s->id) queue_activate(l, q);
}

/* Whether stream `waiter` waited on an event recorded on `on` at or after pos. */
static int knows(const ps_seen_stream *waiter, int32_t on, uint64_t pos) {
  for (int i = 0; i < PS_KNOWS; i++)
    if (waiter->knows[i].stream == on && waiter->knows[i].pos >= pos && waiter->knows[i].pos) return 1;
  return 0;
}

/* A pool setting (follow, opportunistic), 1 when it cannot be read. */
static int setting_on(ps_ctx *c, const ps_seen_pool *p, ps_pool_attr a) {
  uint64_t v = 1;
  if (p->h && c->be->pool_get(c->b, p->h, a, &v) != PS_OK) v = 1;
  return v != 0;
}

/* The rule by which an allocation on s, from pool p, reused block b,
 * from what poolsh saw (the cuda backend cannot say): same stream; a host
 * sync past the free; an event wait past it, when p follows event
 * dependencies; else, when p reuses opportunistically, the freeing stream
 * is idle now; else the pool made s wait. A rule p has turned off is never
 * the answer. "Idle now" is the backend's stream_peek, which costs no
 * time and changes nothing, so it teaches poolsh nothing else either. */
static ps_reuse_rule infer(ps_ctx *c, const ps_block *b, const ps_seen_pool *p,
                           const ps_seen_stream *s) {
  if (b->stream == s->id) return PS_RULE_STREAM_ORDER;
  ps_seen_stream *f = ps_stream_by_id(c, b->stream);
  if (!f || f->synced >= b->pos) return PS_RULE_HOST_SYNC;
  if (knows(s, b->stream, b->pos) && setting_on(c, p, PS_ATTR_FOLLOW_EVENT_DEPS))
    return PS_RULE_EVENT_DEP;
  int idle = 0;
  int complete = b->state == BLOCK_DONE || f->done >= b->pos ||
                 (f->followed && c->be->stream_peek &&
                  c->be->stream_peek(c->b, f->h, &idle) == PS_OK && idle);
  if (complete && setting_on(c, p, PS_ATTR_OPPORTUNISTIC)) return PS_RULE_OPPORTUNISTIC;
  return PS_RULE_INTERNAL_DEP;
}

/* ---- why an allocation took fresh memory ---------------------------------------- */

#define WHY_SCAN 64            /* freed blocks looked at, newest first */

/* Why the freed block k (of the allocating pool p, at least as large as
 * the request) was not handed to an allocation on s: the first rule that
 * would have allowed it and why it did not apply. PS_WHY_PLACED (and the
 * rule in *rule) when one did apply. */
static ps_why_code why_block(ps_ctx *c, const ps_block *k, const ps_seen_pool *p,
                             const ps_seen_stream *s, uint8_t *rule) {
  if (k->stream == s->id) return *rule = PS_RULE_STREAM_ORDER, PS_WHY_PLACED;
  ps_seen_stream *f = ps_stream_by_id(c, k->stream);
  if (!f || f->synced >= k->pos) return *rule = PS_RULE_HOST_SYNC, PS_WHY_PLACED;
  int waited = 0;
  for (int i = 0; i < PS_KNOWS; i++)
    if (s->knows[i].pos && s->knows[i].stream == k->stream) waited = s->knows[i].pos >= k->pos ? 2 : 1;
  if (waited == 2) {
    if (setting_on(c, p, PS_ATTR_FOLLOW_EVENT_DEPS)) return *rule = PS_RULE_EVENT_DEP, PS_WHY_PLACED;
    return PS_WHY_NOT_FOLLOWED;
  }
  int idle = 0;
  int complete = k->state == BLOCK_DONE || f->done >= k->pos ||
                 (f->followed && c->be->stream_peek &&
                  c->be->stream_peek(c->b, f->h, &idle) == PS_OK && idle);
  if (complete) {
    if (setting_on(c, p, PS_ATTR_OPPORTUNISTIC)) return *rule = PS_RULE_OPPORTUNISTIC, PS_WHY_PLACED;
    return PS_WHY_OPPORTUNISTIC_OFF;
  }
  return waited ? PS_WHY_EVENT_BEFORE : PS_WHY_OTHER_STREAM;
}

/* The reason why_fresh found so far: its code and details. */
typedef struct why_acc { ps_why_code code; ps_why w; uint64_t largest; } why_acc;

/* Looks at block k for why_fresh: keeps the first reason a rule explains
 * (PLACED only when no other is found) and the largest block seen. */
static void why_look(ps_ctx *c, const ps_block *k, const ps_seen_pool *p, const ps_seen_stream *s,
                     uint64_t size, why_acc *a) {
  if (k->pool != p->id) return;
  if (k->size > a->largest) a->largest = k->size;
  if (k->size < size || (a->code && a->code != PS_WHY_PLACED)) return;
  uint8_t rule = 0;
  ps_why_code code = why_block(c, k, p, s, &rule);
  if (a->code == PS_WHY_PLACED && code == PS_WHY_PLACED) return;
  a->code = code;
  a->w = (ps_why){ 0, k->buffer, k->stream, rule };
}

/* An allocation of size on s from p took fresh memory while p had at
 * least size bytes freed: says why in sb, its details in the ring of
 * whys (docs/explain.md). Looks at the newest WHY_SCAN freed blocks,
 * pending ones first. */
static void why_fresh(ps_ctx *c, ps_ledger *l, const ps_seen_pool *p, const ps_seen_stream *s,
                      ps_seen_buffer *sb, int32_t id, uint64_t size) {
  ps_obs *o = c->obs;
  why_acc a = { 0 };
  int seen = 0;
  for (size_t i = 0; i < l->nact && seen < WHY_SCAN; i++)
    for (int32_t k = l->q[l->act[i]].list.tail; k >= 0 && seen < WHY_SCAN; k = l->v[k].prev, seen++)
      why_look(c, &l->v[k], p, s, size, &a);
  for (int32_t k = l->done.tail; k >= 0 && seen < WHY_SCAN; k = l->v[k].prev, seen++)
    why_look(c, &l->v[k], p, s, size, &a);
  if (!a.code && seen < WHY_SCAN) a.code = PS_WHY_FRAGMENTED, a.w = (ps_why){ 0, -1, -1, a.largest };
  if (!a.code || (!o->whys && (o->whys = malloc(PS_WHYS * sizeof *o->whys)) == NULL)) return;
  size_t slot = o->nwhys++ % PS_WHYS;
  a.w.owner = id;
  o->whys[slot] = a.w;
  sb->why_code = (uint8_t)a.code;
  sb->why_slot = (uint16_t)slot;
}

/* The why codes' names, as b.why_fresh's renderer knows them
 * (lua/poolsh/render/why_fresh.lua). */
static const char *const why_names[PS_WHY_COUNT] = {
  NULL, "other_stream", "event_before", "not_followed", "opportunistic_off", "fragmented",
  "placed",
};

static void set_id(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

/* Pushes a why of code as codes and ids, for a renderer: {reason, pool,
 * stream} (the allocation's) and, while owner still holds slot in the ring
 * of whys, its details: freed and freed_on (the freed block's buffer and
 * the stream of its free), largest (fragmented: bytes), rule (placed: the
 * rule's name); without them the words name nothing. Pushes nil for no
 * why. Reads the ring before it allocates (a finalizer may run then). */
void ps_push_why(lua_State *L, ps_ctx *c, int code, int slot, int32_t owner, int32_t pool,
                 int32_t stream) {
  if (code <= 0 || code >= PS_WHY_COUNT) {
    lua_pushnil(L);
    return;
  }
  const ps_why *w = c->obs->whys ? &c->obs->whys[slot % PS_WHYS] : NULL;
  ps_why d = w && w->owner == owner ? *w : (ps_why){ -1, -1, -1, 0 };
  lua_createtable(L, 0, 6);
  lua_pushstring(L, why_names[code]);
  lua_setfield(L, -2, "reason");
  set_id(L, "pool", pool);
  set_id(L, "stream", stream);
  if (d.owner != owner) return;        /* the ring no longer holds its details */
  if (code == PS_WHY_FRAGMENTED) {
    set_id(L, "largest", (lua_Integer)d.bytes);
    return;
  }
  set_id(L, "freed", d.buffer);
  set_id(L, "freed_on", d.stream);
  if (code == PS_WHY_PLACED) {
    lua_pushstring(L, d.bytes < PS_RULE_UNKNOWN && ps_rule_names[d.bytes] ? ps_rule_names[d.bytes]
                                                                          : "?");
    lua_setfield(L, -2, "rule");
  }
}

/* Calls each(ud, stream, bytes, done) for every freed block of pool p:
 * pending ones (stream: where the free was queued) and done ones. For
 * out-of-memory messages: O(freed blocks). */
void ps_ledger_pending_by_stream(ps_ctx *c, const ps_seen_pool *p,
                                 void (*each)(void *ud, int32_t stream, uint64_t bytes, int done),
                                 void *ud) {
  ps_ledger *l = c->obs->ledger;
  if (!l) return;
  for (size_t i = 0; i < l->nact; i++)
    for (int32_t k = l->q[l->act[i]].list.head; k >= 0; k = l->v[k].next)
      if (l->v[k].pool == p->id) each(ud, l->v[k].stream, l->v[k].size, 0);
  for (int32_t k = l->done.head; k >= 0; k = l->v[k].next)
    if (l->v[k].pool == p->id) each(ud, l->v[k].stream, l->v[k].size, 1);
}

/* ---- what the bindings call ---------------------------------------------- */

/* What an allocation took from freed extents: its sources (lowest
 * address first), the bytes taken in all, and those that were freed
 * since the last host wait within [a, a + size). */
typedef struct take_acc {
  ps_srcs src;
  int named;                   /* sources are named (not fresh memory to the sim) */
  ps_reuse_rule said;
  ps_seen_stream *s;           /* the allocating stream; NULL: a free's cleanup */
  const ps_seen_pool *p;       /* the allocating pool */
  uint64_t took, fit;
  ps_addr fit_end;
} take_acc;

/* Stream s is ordered after stream `on` up to pos (the pool made it wait
 * for a free there): the latest position per stream, the oldest entry
 * making room, as observe.c's event waits. */
static void knows_add(ps_seen_stream *s, int32_t on, uint64_t pos) {
  int slot = 0;
  if (on == s->id) return;
  for (int i = 0; i < PS_KNOWS; i++) {
    if (s->knows[i].pos && s->knows[i].stream == on) {
      if (pos > s->knows[i].pos) s->knows[i].pos = pos;
      return;
    }
    if (s->knows[i].pos < s->knows[slot].pos) slot = i;
  }
  s->knows[slot] = (ps_knows){ on, pos };
}

/* Counts n bytes of freed extent e, taken by the allocation, as a source. */
static void take_note(ps_ctx *c, const ps_block *e, take_acc *a, uint64_t n, ps_addr from) {
  a->took += n;
  if (e->waits == c->obs->waits && from < a->fit_end) {
    uint64_t end = from + n < a->fit_end ? from + n : a->fit_end;
    a->fit += end - from;
  }
  if (!a->named || !a->s) return;
  for (uint32_t i = 0; i < a->src.n; i++)       /* fragments of one free: one source */
    if (a->src.v[i].buffer == e->buffer) {
      a->src.v[i].bytes += n;
      return;
    }
  if (a->src.n == PS_SOURCES) {
    a->src.more++, a->src.more_bytes += n;
    return;
  }
  uint8_t rule = (uint8_t)(a->src.n == 0 && a->said != PS_RULE_UNKNOWN ? a->said
                                                                         : infer(c, e, a->p, a->s));
  /* s's later work runs after that free: the pool made s wait for it, or
   * it had completed already; a sync of s shows it complete */
  if (rule == PS_RULE_INTERNAL_DEP || rule == PS_RULE_OPPORTUNISTIC) knows_add(a->s, e->stream, e->pos);
  a->src.v[a->src.n++] = (ps_source){ e->buffer, e->stream, rule, n };
}

/* Freed extent k loses the bytes [lo, hi) it has (an allocation took
 * them): what is left of it below lo and above hi stays, with its own
 * history. O(log n). */
static void take_from(ps_ctx *c, ps_ledger *l, int32_t k, ps_addr lo, ps_addr hi, take_acc *a) {
  ps_block *e = &l->v[k];
  ps_addr ea = e->addr, ee = ea + e->size;
  ps_addr ca = ea > lo ? ea : lo, ce = ee < hi ? ee : hi;
  if (ce <= ca) return;
  take_note(c, e, a, ce - ca, ca);
  if (ca == ea && ce == ee) {                  /* all of it */
    slot_drop(c, l, k);
    return;
  }
  ps_seen_pool *p = pool_by_id(c, e->pool);
  int pending = e->state == BLOCK_PENDING, edged = e->edged;
  if (p && pending) p->pending_bytes -= ce - ca;
  else if (p) p->done_bytes -= ce - ca;
  if (edged) occupy(l, e, -1);
  if (ca > ea && ce < ee) {                    /* both ends stay: a new extent above */
    int32_t f = slot_new(l);
    e = &l->v[k];
    e->size = ca - ea;
    if (f >= 0) {
      l->v[f] = *e;
      l->v[f].addr = ce, l->v[f].size = ee - ce, l->v[f].edged = 0;
      list_insert_after(l, pending ? &l->q[e->q].list : &l->done, k, f);
      if (pending) l->npending++;
      else l->ndone++;
      if (p && pending) p->pending_count++;
      freed_set(l, f);
      if (edged) occupy(l, &l->v[f], 1);
    } else if (p && pending) {                 /* out of memory: the part above is forgotten */
      p->pending_bytes -= ee - ce;
    } else if (p) {
      p->done_bytes -= ee - ce;
    }
  } else if (ca > ea) {                        /* the part below stays */
    e->size = ca - ea;
  } else {                                     /* the part above stays: it moves */
    freed_unset(l, k);
    e->addr = ce, e->size = ee - ce;
    freed_set(l, k);
  }
  if (edged) occupy(l, &l->v[k], 1);
}

/* Takes [lo, hi) of pool p out of every freed extent that has some of
 * it: O(log n) per extent touched. */
static void take(ps_ctx *c, ps_ledger *l, int32_t pool, ps_addr lo, ps_addr hi, take_acc *a) {
  if (hi <= lo) return;
  int32_t n = last_below(l, l->freed, pool, lo);
  if (n && l->t[n].pool == pool) {
    const ps_block *e = &l->v[l->t[n].slot];
    if (e->addr + e->size > lo) take_from(c, l, l->t[n].slot, lo, hi, a);
  }
  while ((n = lower_bound(l, l->freed, pool, lo)) && l->t[n].pool == pool && l->t[n].addr < hi)
    take_from(c, l, l->t[n].slot, lo, hi, a);
}

/* Keeps an allocation's sources in the layer's ring; its slot, or -1. */
static int keep_sources(ps_ctx *c, const ps_srcs *src, int32_t owner) {
  ps_obs *o = c->obs;
  if (!o->srcs && (o->srcs = malloc(PS_SRCS * sizeof *o->srcs)) == NULL) return -1;
  size_t slot = o->nsrcs++ % PS_SRCS;
  o->srcs[slot] = *src;
  o->srcs[slot].owner = owner;
  return (int)slot;
}

/* Pushes an array of the buffers whose freed bytes allocation `owner`
 * took, lowest address first: {buffer, rule, bytes, stream}, and {more,
 * bytes} for those beyond PS_SOURCES. When the ring no longer holds them,
 * the first alone ({buffer, rule}); an empty array when it reused
 * nothing (first 0). */
void ps_push_sources(lua_State *L, ps_ctx *c, int32_t owner, int slot, int32_t first, int rule) {
  const ps_srcs *r = c->obs->srcs ? &c->obs->srcs[slot % PS_SRCS] : NULL;
  if (first <= 0) {
    lua_newtable(L);
    return;
  }
  if (!r || r->owner != owner || r->n == 0 || r->v[0].buffer != first) {
    lua_createtable(L, 1, 0);
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, first);
    lua_setfield(L, -2, "buffer");
    lua_pushstring(L, rule > 0 && rule < PS_RULE_UNKNOWN ? ps_rule_names[rule] : "?");
    lua_setfield(L, -2, "rule");
    lua_rawseti(L, -2, 1);
    return;
  }
  ps_srcs d = *r;                      /* pushing may run finalizers */
  lua_createtable(L, (int)d.n + (d.more ? 1 : 0), 0);
  for (uint32_t i = 0; i < d.n; i++) {
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, d.v[i].buffer);
    lua_setfield(L, -2, "buffer");
    lua_pushstring(L, d.v[i].rule > 0 && d.v[i].rule < PS_RULE_UNKNOWN ? ps_rule_names[d.v[i].rule]
                                                                      : "?");
    lua_setfield(L, -2, "rule");
    lua_pushinteger(L, (lua_Integer)d.v[i].bytes);
    lua_setfield(L, -2, "bytes");
    lua_pushinteger(L, d.v[i].stream);
    lua_setfield(L, -2, "stream");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  if (d.more) {
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, (lua_Integer)d.more);
    lua_setfield(L, -2, "more");
    lua_pushinteger(L, (lua_Integer)d.more_bytes);
    lua_setfield(L, -2, "bytes");
    lua_rawseti(L, -2, (lua_Integer)d.n + 1);
  }
}

/* Buffer b was allocated from pool p on stream s, at s's position now;
 * said is the backend's word on reuse (PS_RULE_UNKNOWN on cuda). Takes
 * the bytes b occupies out of the freed extents under them and fills b's
 * record: the buffers whose memory it reuses (the first in reused_from,
 * all in the ring of sources) or, when it took no freed byte, why not;
 * and where it was allocated. Returns 1 when every byte of b lies in
 * extents freed since the last host wait, memory the pool still held:
 * the pool did not grow. */
int ps_ledger_alloc(lua_State *L, ps_ctx *c, ps_seen_pool *p, ps_seen_stream *s,
                    const ps_bufferud *b, ps_reuse_rule said) {
  ps_ledger *l = ledger_of(c);
  ps_seen_buffer *sb = ps_seen_buffer_of(b);
  ps_obs *o = c->obs;
  sb->reused_from = 0;
  sb->reuse_rule = (uint8_t)(said == PS_RULE_UNKNOWN ? PS_RULE_NONE : said);
  if ((p->live_bytes += b->size) > p->scope_peak) p->scope_peak = p->live_bytes;
  if ((o->live_total += b->size) > o->scope_total_peak) o->scope_total_peak = o->live_total;
  if (b->addr < p->lo || p->lo == 0) p->lo = b->addr;
  if (!l || ((l->used + 1) * 4 > l->mapcap * 3 && !map_grow(l))) return 0;
  size_t i = map_find(l, b->addr);
  int32_t slot = l->map[i];
  if (slot >= 0) slot_drop(c, l, slot), i = map_find(l, b->addr);   /* an old live record there */
  if (!l->align) l->align = align_of(c);
  take_acc a = { .named = said != PS_RULE_NONE, .said = said, .s = s, .p = p };
  uint64_t r = b->size + (l->align - b->size % l->align) % l->align;
  ps_addr hi = b->addr + r < b->addr ? UINT64_MAX : b->addr + r;
  a.fit_end = b->addr + b->size < b->addr ? UINT64_MAX : b->addr + b->size;
  take(c, l, p->id, b->addr, hi, &a);     /* freed extents only: the map keeps i free */
  if ((slot = slot_new(l)) < 0) return 0;
  l->v[slot] = (ps_block){ .addr = b->addr, .size = b->size, .buffer = b->id, .pool = p->id,
                           .stream = s->id, .prev = -1, .next = -1, .site = -1, .q = -1,
                           .ud = b, .state = BLOCK_FREE_SLOT, .kind = PS_KIND_POOL };
  map_put(l, i, slot);
  l->used++;
  sb->slot = slot + 1;
  make_live(l, slot, p->edges);
  if (a.src.n) {
    sb->reused_from = a.src.v[0].buffer;
    sb->reuse_rule = a.src.v[0].rule;
    int k = keep_sources(c, &a.src, b->id);
    if (k >= 0) sb->why_slot = (uint16_t)k;
  } else if (said != PS_RULE_UNKNOWN && said != PS_RULE_NONE) {
    sb->reuse_rule = PS_RULE_NONE;      /* memory poolsh never saw freed: fresh to it */
  }
  if (o->sources || o->tracing) {
    ps_where(L, c, &sb->src, &sb->line);
    l->v[slot].site = ps_site_alloc(L, c, b->size, sb->src, sb->line);
  }
  if (!a.took && p->pending_bytes + p->done_bytes >= b->size) why_fresh(c, l, p, s, sb, b->id, b->size);
  return a.named && b->size && a.fit >= b->size;
}

/* Live Buffer b's block: the slot its record keeps when that is still
 * b's live block (no search), else -1. A slot another record took since,
 * or one a reset emptied, is not b's. */
static int32_t live_slot(const ps_ledger *l, const ps_bufferud *b) {
  int32_t s = ps_seen_buffer_of(b)->slot - 1;
  if (!l || s < 0 || (size_t)s >= l->n) return -1;
  const ps_block *k = &l->v[s];
  return k->ud == b && k->state == BLOCK_LIVE && k->buffer == b->id ? s : -1;
}

/* A buffer of another kind (malloc, pinned, pageable) was allocated. */
void ps_ledger_track(lua_State *L, ps_ctx *c, const ps_bufferud *b) {
  ps_ledger *l = ledger_of(c);
  if (!l || ((l->used + 1) * 4 > l->mapcap * 3 && !map_grow(l))) return;
  size_t i = map_find(l, b->addr);
  int32_t slot = l->map[i];
  if (slot >= 0) slot_drop(c, l, slot), i = map_find(l, b->addr);   /* an old record there */
  if ((slot = slot_new(l)) < 0) return;
  l->v[slot] = (ps_block){ .addr = b->addr, .size = b->size, .buffer = b->id, .pool = -1,
                           .stream = -1, .prev = -1, .next = -1, .site = -1, .q = -1,
                           .ud = b, .state = BLOCK_FREE_SLOT, .kind = (uint8_t)b->kind };
  map_put(l, i, slot);
  l->used++;
  ps_seen_buffer *sb = ps_seen_buffer_of(b);
  sb->slot = slot + 1;
  make_live(l, slot, 0);
  if (c->obs->sources || c->obs->tracing) {
    ps_where(L, c, &sb->src, &sb->line);
    l->v[slot].site = ps_site_alloc(L, c, b->size, sb->src, sb->line);
  }
}

/* A buffer of another kind was freed (synchronously: nothing pends). */
void ps_ledger_untrack(ps_ctx *c, const ps_bufferud *b) {
  ps_ledger *l = c->obs->ledger;
  int32_t slot = live_slot(l, b);
  if (slot < 0) return;
  ps_site_free(c, l->v[slot].site, l->v[slot].size);
  slot_drop(c, l, slot);
}

/* A block as push_live and push_pending show it. */
typedef struct ps_row {
  ps_addr addr;
  uint64_t size;
  int32_t buffer, pool, stream, site;
  uint8_t kind;
} ps_row;

/* Pushes a scratch userdata with room for the rows `need` counts, once
 * allocating it (which can run finalizers that change the ledger) leaves
 * no more to count: copying rows into it runs no Lua, so a finalizer
 * cannot cut short or redirect the walk of a list. */
static ps_row *rows_room(lua_State *L, ps_ledger *l, lua_Integer max, int pending) {
  for (;;) {
    size_t all = l ? (pending ? l->npending : l->nlive) : 0;
    size_t want = max >= 0 && (size_t)max < all ? (size_t)max : all;
    ps_row *v = lua_newuserdatauv(L, want * sizeof *v + 1, 0);
    all = l ? (pending ? l->npending : l->nlive) : 0;
    if ((max >= 0 && (size_t)max < all ? (size_t)max : all) <= want) return v;
    lua_pop(L, 1);
  }
}

static size_t row_of(ps_row *v, size_t k, const ps_block *b) {
  v[k] = (ps_row){ b->addr, b->size, b->buffer, b->pool, b->stream, b->site, b->kind };
  return k + 1;
}

/* Pushes the oldest live buffers poolsh allocated, at most max of them
 * (max < 0: all), oldest (lowest id) first: an array of {buffer, kind,
 * size, addr, pool, stream, src}; returns how many are live in all. */
lua_Integer ps_ledger_push_live(lua_State *L, ps_ctx *c, lua_Integer max) {
  ps_ledger *l = c->obs->ledger;
  ps_row *v = rows_room(L, l, max, 0);
  size_t n = 0;
  for (int32_t s = l ? l->live.head : -1; s >= 0 && (max < 0 || (lua_Integer)n < max); s = l->v[s].next)
    n = row_of(v, n, &l->v[s]);
  lua_Integer all = l ? (lua_Integer)l->nlive : 0;
  lua_createtable(L, (int)n, 0);                       /* [rows, t] */
  for (size_t k = 0; k < n; k++) {
    const ps_row *b = &v[k];
    lua_createtable(L, 0, 7);
    lua_pushinteger(L, b->buffer);
    lua_setfield(L, -2, "buffer");
    lua_pushstring(L, ps_kind_names[b->kind & 3]);
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
    if (b->site >= 0) {
      ps_push_site(L, c, b->site);
      lua_setfield(L, -2, "src");
    }
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_remove(L, -2);                                   /* [t] */
  return all;
}

/* Pushes at most max pending frees (max < 0: all), stream by stream in
 * free order: an array of {buffer, size, addr, pool, stream}; returns how
 * many are pending in all. Visits only queues that hold frees. */
lua_Integer ps_ledger_push_pending(lua_State *L, ps_ctx *c, lua_Integer max) {
  ps_ledger *l = c->obs->ledger;
  ps_row *v = rows_room(L, l, max, 1);
  size_t n = 0;
  if (l) act_sort(l);
  for (size_t i = 0; l && i < l->nact; i++)
    for (int32_t s = l->q[l->act[i]].list.head; s >= 0 && (max < 0 || (lua_Integer)n < max);
         s = l->v[s].next)
      n = row_of(v, n, &l->v[s]);
  lua_Integer all = l ? (lua_Integer)l->npending : 0;
  lua_createtable(L, (int)n, 0);                       /* [rows, t] */
  for (size_t k = 0; k < n; k++) {
    const ps_row *b = &v[k];
    lua_createtable(L, 0, 5);
    lua_pushinteger(L, b->buffer);
    lua_setfield(L, -2, "buffer");
    lua_pushinteger(L, (lua_Integer)b->size);
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, (lua_Integer)b->addr);
    lua_setfield(L, -2, "addr");
    lua_pushinteger(L, b->pool);
    lua_setfield(L, -2, "pool");
    lua_pushinteger(L, b->stream);
    lua_setfield(L, -2, "stream");
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_remove(L, -2);                                   /* [t] */
  return all;
}

/* Calls each(ud) for the struct of every live Buffer the ledger holds. */
void ps_ledger_each_live(ps_ctx *c, void (*each)(ps_ctx *c, const ps_bufferud *b)) {
  ps_ledger *l = c->obs->ledger;
  for (int32_t s = l ? l->live.head : -1; s >= 0; s = l->v[s].next)
    if (l->v[s].ud) each(c, l->v[s].ud);
}

/* Live Buffer b is going away without a free (its finalizer's failed):
 * its struct is forgotten. */
void ps_ledger_lost(ps_ctx *c, const ps_bufferud *b) {
  ps_ledger *l = c->obs->ledger;
  int32_t slot = live_slot(l, b);
  if (slot >= 0) l->v[slot].ud = NULL;
}

/* Buffer b's free was queued on stream s (NULL: on no stream), at s's
 * position now. */
void ps_ledger_free(ps_ctx *c, ps_seen_pool *p, ps_seen_stream *s, const ps_bufferud *b) {
  ps_ledger *l = c->obs->ledger;
  p->live_bytes -= b->size;
  c->obs->live_total -= b->size;
  int32_t slot = live_slot(l, b);
  if (slot < 0) return;
  ps_site_free(c, l->v[slot].site, b->size);
  int32_t q = queue_of(l, s);
  if (q < 0) return;                   /* out of memory: it stays live to poolsh */
  list_unlink(l, &l->live, slot);
  l->nlive--;
  map_unset(l, slot);
  ps_block *k = &l->v[slot];
  if (p && k->size && k->addr + k->size > k->addr) {   /* nothing else is freed there */
    take_acc a = { 0 };
    take(c, l, p->id, k->addr, k->addr + k->size, &a);
    k = &l->v[slot];
  }
  k->stream = s ? s->id : 0;
  k->pos = s ? s->ops : 0;
  k->waits = c->obs->waits;
  k->state = BLOCK_PENDING;
  k->q = q;
  list_append(l, &l->q[q].list, slot);
  queue_activate(l, q);
  l->npending++;
  if (p) p->pending_bytes += k->size, p->pending_count++;
  freed_set(l, slot);
}

/* Pending block s becomes done (its free is known complete). */
static void complete(lua_State *L, ps_ctx *c, ps_ledger *l, int32_t s) {
  ps_block *b = &l->v[s];
  list_unlink(l, &l->q[b->q].list, s);
  l->npending--;
  occupy(l, b, -1);
  b->state = BLOCK_DONE;
  list_append(l, &l->done, s);
  l->ndone++;
  if (b->pool >= 0) {                  /* it stays in the freed set */
    ps_seen_pool *p = pool_by_id(c, b->pool);
    if (p) p->pending_bytes -= b->size, p->pending_count--, p->done_bytes += b->size;
  }
  if (c->obs->tracing) {
    ps_block k = *b;          /* recording may run finalizers that touch the ledger */
    ps_rec *r = ps_trace_rec(L, c, PS_OP_FREE_COMPLETED, PS_REC_NOSRC);
    if (r) r->stream = k.stream, r->pool = k.pool, r->buffer = k.buffer,
           r->addr = k.addr, r->size = k.size;
  }
}

/* After a synchronisation or query taught poolsh how far streams got:
 * pending frees now known complete become done (and free_completed
 * events while recording); so do those of streams that are gone. Visits
 * the queues in act, in index order: O(a log a) for a queues with frees
 * (or left by a stream since), plus O(1) per block completed. Queues it
 * empties leave act; those of gone streams are recycled. The oldest done
 * blocks beyond DONE_KEEP are forgotten, down to half of it. */
void ps_ledger_learn(lua_State *L, ps_ctx *c) {
  ps_ledger *l = c->obs->ledger;
  if (!l || l->learning) return;
  l->learning = 1;
  act_sort(l);
  size_t w = 0;                        /* act[0..w) stays; finalizers may append */
  for (size_t r = 0; r < l->nact; r++) {
    int32_t q = l->act[r];
    ps_seen_stream *st = l->q[q].stream == Q_ORPHAN ? NULL : ps_stream_by_id(c, l->q[q].stream);
    int all = !st || st->pendq != q + 1;   /* its stream is gone, or no stream */
    uint64_t upto = st ? st->done : 0;
    int32_t s;
    while ((s = l->q[q].list.head) >= 0 && (all || l->v[s].pos <= upto))
      complete(L, c, l, s);
    if (l->q[q].list.head >= 0) {
      l->act[w++] = q;
      l->q[q].at = (int32_t)w;
    } else {
      l->q[q].at = 0;
      if (all) queue_drop(l, q);
    }
  }
  l->nact = w;
  l->learning = 0;
  if (l->ndone > DONE_KEEP)
    while (l->ndone > DONE_KEEP / 2) slot_drop(c, l, l->done.head);
}

static int span_cmp(const void *a, const void *b) {
  ps_addr x = ((const ps_span *)a)->addr, y = ((const ps_span *)b)->addr;
  return x < y ? -1 : x > y;
}

/* Appends the blocks of pool p in list x to v (the caller sized it). */
static size_t spans_of(const ps_ledger *l, const ps_seen_pool *p, int32_t from, ps_span *v, size_t n) {
  for (int32_t s = from; s >= 0; s = l->v[s].next) {
    const ps_block *b = &l->v[s];
    if (b->pool != p->id) continue;
    if (v) v[n] = (ps_span){ b->addr, b->size, b->buffer, b->stream,
                             b->state == BLOCK_PENDING ? 1 : b->state == BLOCK_DONE ? 2 : 0 };
    n++;
  }
  return n;
}

/* Pool p's extents that occupy memory (live or pending; with done, the
 * done ones too), sorted by address, into a malloc'd array (*n of them);
 * NULL when there are none. Reads every extent: for poolsh.map and
 * tests, not for hot paths. */
ps_span *ps_ledger_spans(ps_ctx *c, const ps_seen_pool *p, size_t *n, int done) {
  ps_ledger *l = c->obs->ledger;
  *n = 0;
  if (!l) return NULL;
  size_t k = spans_of(l, p, l->live.head, NULL, 0);
  for (size_t i = 0; i < l->nact; i++) k = spans_of(l, p, l->q[l->act[i]].list.head, NULL, k);
  if (done) k = spans_of(l, p, l->done.head, NULL, k);
  if (!k) return NULL;
  ps_span *v = malloc(k * sizeof *v);
  if (!v) return NULL;
  k = spans_of(l, p, l->live.head, v, 0);
  for (size_t i = 0; i < l->nact; i++) k = spans_of(l, p, l->q[l->act[i]].list.head, v, k);
  if (done) k = spans_of(l, p, l->done.head, v, k);
  *n = k;
  qsort(v, k, sizeof *v, span_cmp);
  return v;
}

/* Puts the edges of pool p's blocks in list `from` into the coverage set. */
static void edges_of(ps_ledger *l, const ps_seen_pool *p, int32_t from) {
  for (int32_t s = from; s >= 0; s = l->v[s].next)
    if (l->v[s].pool == p->id) occupy(l, &l->v[s], 1);
}

/* The free space inside pool p's reserved memory as far as poolsh can
 * know it (docs/explain.md): its arena taken to start at the lowest block
 * address seen and to extend `reserved` bytes, *free what live and pending
 * blocks leave of it, *largest its largest extent. O(log n): the pool's
 * edges in that range are cut out of the coverage set and put back. The
 * first call builds p's edges from its live and pending blocks, O(n log n);
 * alloc and free keep them from then on. */
void ps_ledger_free_space(ps_ctx *c, ps_seen_pool *p, uint64_t reserved, uint64_t *nfree,
                          uint64_t *largest) {
  ps_ledger *l = c->obs->ledger;
  if (!p->edges && l) {
    edges_of(l, p, l->live.head);
    for (size_t i = 0; i < l->nact; i++) edges_of(l, p, l->q[l->act[i]].list.head);
  }
  p->edges = 1;
  ps_addr lo = p->lo, end = lo + reserved;
  *nfree = *largest = reserved;
  if (!lo || !l) return;                     /* no block seen: all of it */
  if (end < lo) end = UINT64_MAX;
  int32_t a, bc, b, rest;
  split(l, l->cover, p->id, lo, &a, &bc);
  split(l, bc, p->id, end, &b, &rest);
  *nfree = *largest = end - lo;
  if (b) {
    const ps_node *k = &l->t[b];
    uint64_t head = k->first - lo, tail = k->sum == 0 ? end - k->last : 0;
    *nfree = head + tail;
    *largest = head > tail ? head : tail;
    if (k->min == 0) {
      *nfree += k->zsum;
      if (k->zmax > *largest) *largest = k->zmax;
    }
  }
  l->cover = merge(l, a, merge(l, b, rest));
}

/* Keeps every pool's live and pending bytes within what it reserves:
 * pending memory is reserved memory no buffer uses. When they exceed it,
 * the pool gave back memory under frees poolsh still holds pending
 * (their completion reached the host by a way poolsh did not see): the
 * oldest pending extents of that pool, stream by stream, become done
 * until they fit (a stream completes its work in order). Reads each pool
 * with pending bytes; walks the pending extents only when one exceeds. */
static void pending_within(lua_State *L, ps_ctx *c, ps_ledger *l) {
  if (l->learning) return;
  for (ps_seen_pool *p = c->obs->pools; p; p = p->next) {
    uint64_t reserved = 0;
    if (!p->pending_bytes || !p->h ||
        c->be->pool_get(c->b, p->h, PS_ATTR_RESERVED_CURRENT, &reserved) != PS_OK ||
        p->live_bytes + p->pending_bytes <= reserved)
      continue;
    l->learning = 1;
    act_sort(l);
    for (size_t i = 0; i < l->nact && p->live_bytes + p->pending_bytes > reserved; i++) {
      ps_queue *q = &l->q[l->act[i]];
      int32_t kept = -1;                 /* the last extent of another pool passed */
      for (int32_t s = q->list.head; s >= 0 && p->live_bytes + p->pending_bytes > reserved;) {
        if (l->v[s].pool != p->id) {
          kept = s, s = l->v[s].next;
          continue;
        }
        complete(L, c, l, s);            /* recording may run finalizers: look again */
        q = &l->q[l->act[i]];
        s = kept >= 0 && l->v[kept].state == BLOCK_PENDING ? l->v[kept].next : q->list.head;
      }
    }
    l->learning = 0;
  }
}

/* After a call at which a pool can give memory back: a host
 * synchronisation, a trim, destroying a stream, a cudaFree
 * (docs/calibration.md E3). Forgets each pool's freed extents (pending or
 * done) at or above lo + reserved (lo: the lowest address it handed out),
 * cutting one across it, so memory there later is fresh, not a reuse;
 * all of a destroyed pool's; none of a pool whose reserved size cannot be
 * read. That assumes reserved memory is one run from lo: with holes (E12)
 * it forgets extents near the top that are still mapped and keeps those
 * in holes below. Asks the backend only about pools with freed extents:
 * O(log n) per such pool and per extent forgotten. */
void ps_ledger_released(lua_State *L, ps_ctx *c) {
  ps_ledger *l = c->obs->ledger;
  c->obs->waits++;
  if (!l) return;
  l->align = align_of(c);
  int32_t n = lower_bound(l, l->freed, INT32_MIN, 0);   /* a pool's first freed extent */
  while (n) {
    int32_t id = l->t[n].pool;
    ps_seen_pool *p = pool_by_id(c, id);
    uint64_t reserved = 0;
    ps_addr top = 0;                                   /* a destroyed pool: all of them */
    if (p && (!p->h || !p->lo ||
              c->be->pool_get(c->b, p->h, PS_ATTR_RESERVED_CURRENT, &reserved) != PS_OK ||
              (top = p->lo + reserved) < p->lo)) {
      n = id == INT32_MAX ? 0 : lower_bound(l, l->freed, id + 1, 0);   /* keep them */
      continue;
    }
    /* Memory above the top went back to the driver, which never gives
     * back memory under a free not complete: whatever poolsh has freed
     * there, pending or done, is gone (a pending one completed unseen). */
    int32_t m = last_below(l, l->freed, id, top);      /* an extent across the top */
    if (m && l->t[m].pool == id) {
      take_acc a = { 0 };
      take_from(c, l, l->t[m].slot, top, UINT64_MAX, &a);
    }
    while ((n = lower_bound(l, l->freed, id, top)) && l->t[n].pool == id) slot_drop(c, l, l->t[n].slot);
  }
  pending_within(L, c, l);
}
