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
 *
 * Data structures (each operation O(log n) in blocks and free extents,
 * plus the chunks a block or free spans): records (live blocks and free
 * records) in address order, in pages of a per-pool slab and linked by
 * 32-bit indices; live blocks in a hash by offset; islands (maximal runs
 * of adjacent free records that join) in two treaps, by (size, offset)
 * for best fit and by offset to find the island of a record, each
 * island's first and last record naming each other; frees not retired in
 * one queue per stream, in stream order (completed ones first). Per
 * chunk: whether it is mapped, the bytes of live blocks and frees not
 * retired on it, and a bit tree of the chunks that could go back now.
 * A free record's kind follows the host's clock lazily: completions and
 * retirements are applied from the queues' heads before each placement
 * and release. An allocation that may use every free record takes the
 * best island from the treap; otherwise it walks the records.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_model.h"

#define PAGE_BITS 12
#define PAGE_RECS ((uint32_t)1 << PAGE_BITS)
#define BT_LEVELS 8            /* bit tree: up to 64^8 chunks */

typedef uint32_t ri;   /* a record's index in its pool's slab; 0: none */

/* Free kinds: fresh (never allocated), retired (a host sync covered the
 * free), done (the free completed on the device, not retired), pending
 * (not completed). Fresh, retired and done are settled. */
enum { K_LIVE, K_FRESH, K_RETIRED, K_DONE, K_PENDING };

/* A live block or free record (112 bytes); it ends where the next one
 * starts (the last one at `extent`). Free records remember their
 * cudaFreeAsync (stream, position, completion time); a retired record
 * merged from frees of several streams has stream -1, as fresh space
 * does. */
typedef struct rec {
  uint64_t off;               /* from the arena's base */
  ri prev, next;              /* address order */
  int32_t stream;
  uint8_t kind;
  uint8_t in1;                /* island head in treap 1 */
  uint8_t in4;                /* island head in treap 4, not 0 (a pending free) */
  uint8_t young;              /* a free since the pool last took fresh space */
  union {
    struct { uint64_t req; ri hnext; } l;          /* live: bytes asked for */
    struct {                  /* in the order treap searches read them: a
                                 young-run search seq to ych, an island
                                 search seq to ch */
      uint32_t seq;           /* the pool's count of frees at this one (a
                                 young remainder: at its carve) */
      uint32_t ysize;         /* young run head: its bytes as treap 2 holds
                                 them, YSIZE_BIG from 4 GiB on (read from
                                 the records then) */
      uint32_t ymax;          /* young run head: the newest seq in its run */
      ri ych[2][2];           /* young run head: children in treap 2;
                                 its tail: in treap 3 */
      uint64_t end;           /* island head: where the island ends */
      ri ch[2][2];            /* island head: children in treap 0 (or 4) and 1 */
      ri other;               /* island head: its last record, and back */
      ri yother;              /* young run head: its tail, and back */
      ri qprev, qnext;        /* not retired: its stream's queue */
      int64_t pos, time;
    } f;
  } u;
} rec;

#define YSIZE_BIG UINT32_MAX

/* The frees of one stream not retired, oldest first; from `pend` on they
 * have not completed, from `young` on they are young (rec.young). */
typedef struct pqueue { int stream; uint32_t n; ri head, tail, pend, young; } pqueue;

/* A set of chunk indices with the highest found in O(levels). */
typedef struct bittree { uint64_t *w[BT_LEVELS]; int levels; } bittree;

struct ps_pool {
  ps_location loc;
  int device;                 /* device pools: whose memory; host pools: 0 */
  uint8_t access[SIM_MAX_DEVICES];   /* ps_access of each device (its own: rw) */
  int is_default, destroyed;
  int follow, opportunistic, internal;
  uint64_t max_size, threshold;
  uint64_t reserved, reserved_high, used, used_high;
  size_t live;                /* allocated blocks */
  sim_map *arena;             /* NULL until the pool first maps memory */
  uint64_t extent;            /* bytes records cover: up to the end of the
                                 highest mapped chunk */
  uint64_t gran;              /* chunk size while extent > 0 */
  uint64_t map_off, map_size; /* the last mapping: its first chunk's offset, bytes */
  size_t idx;                 /* in c->pools.v */
  size_t over;                /* in c->pools.over + 1; 0: not there */
  size_t held;                /* in c->pools.held + 1; 0: not there */
  sim_pool_list *list;        /* the context's list of pools */
  int done_due;               /* a destroyed stream that freed here has completed */
  rec **pages;                /* the slab: pages of PAGE_RECS, page 0 grows */
  uint32_t npages, cap0;
  ri nrec, freelist;          /* slots handed out (0 included), free slots */
  ri first, last;             /* address list */
  ri root[5];                 /* island treaps: by (size, tie, offset), by offset;
                                 young runs: heads by (stream, size, seq), tails by
                                 offset; islands headed by a pending free, by
                                 (stream, size, seq) */
  uint32_t frees;             /* cudaFreeAsync calls so far: free records' seq */
  int took_fresh;             /* the allocation being placed took fresh space or mapped */
  int bulk;                   /* retiring every free at once: islands rebuilt after */
  ri *buckets;                /* live blocks by offset, chained by l.hnext */
  uint32_t nb;
  pqueue *pq;
  uint32_t npq, cappq;
  size_t npend;
  uint64_t nchunks;           /* room in the per-chunk arrays */
  uint64_t *busy;             /* per chunk: bytes of live blocks and frees
                                 not retired on it */
  uint64_t *mapped;           /* per chunk: a bit, set when mapped */
  bittree idle;               /* chunks mapped with busy 0: may go back */
  sim_ipc_seg *ipc;           /* an IPC pool's segment (exported or imported) */
  int imported;               /* opened from another process: blocks only imported */
};

#define R(p, i) (&(p)->pages[(i) >> PAGE_BITS][(i) & (PAGE_RECS - 1)])

static uint64_t gran(const sim_ctx *c) { return (uint64_t)c->prof.pool_granularity; }

/* The pool's chunk size: latched while it covers anything, so a change of
 * pool_granularity applies from its next first chunk. */
static uint64_t pgran(const sim_ctx *c, const ps_pool *p) {
  return p->extent ? p->gran : gran(c);
}

static sim_space pool_space(const ps_pool *p) {
  return p->loc == PS_LOCATION_HOST ? SIM_HOST_SPACE : SIM_DEVICE_SPACE;
}

/* ---- the slab ---- */

/* A zeroed record slot; 0 when out of host RAM. Page 0 may move: hold
 * no record pointer across a call. */
static ri rec_new(ps_pool *p) {
  ri i = p->freelist;
  if (i) p->freelist = R(p, i)->u.l.hnext;
  else {
    if (p->nrec == 0) p->nrec = 1;   /* slot 0 means none */
    if (p->nrec < PAGE_RECS && p->nrec >= p->cap0) {   /* page 0 grows: small pools stay small */
      uint32_t cap = p->cap0 ? p->cap0 * 2 : 16;
      rec *pg0 = realloc(p->npages ? p->pages[0] : NULL, cap * sizeof(rec));
      if (!pg0) return 0;
      if (!p->npages && !(p->pages = malloc(sizeof *p->pages))) { free(pg0); return 0; }
      p->pages[0] = pg0, p->npages = 1, p->cap0 = cap;
    } else if ((p->nrec >> PAGE_BITS) >= p->npages) {
      rec **pg = realloc(p->pages, (p->npages + 1) * sizeof *pg);
      if (!pg) return 0;
      p->pages = pg;
      if (!(pg[p->npages] = malloc(PAGE_RECS * sizeof(rec)))) return 0;
      p->npages++;
    }
    i = p->nrec++;
  }
  memset(R(p, i), 0, sizeof(rec));
  return i;
}

static void rec_del(ps_pool *p, ri i) {
  R(p, i)->u.l.hnext = p->freelist;
  p->freelist = i;
}

static int is_free(const ps_pool *p, ri i) { return i && R(p, i)->kind != K_LIVE; }

/* Retired or fresh: no chunk under it must stay. */
static int is_idle(const ps_pool *p, ri i) {
  return R(p, i)->kind == K_FRESH || R(p, i)->kind == K_RETIRED;
}

/* Where record i ends. */
static uint64_t rend(const ps_pool *p, ri i) {
  ri n = R(p, i)->next;
  return n ? R(p, n)->off : p->extent;
}

/* Unlinks i from the address list and frees its slot. */
static void rec_unlink(ps_pool *p, ri i) {
  rec *x = R(p, i);
  if (x->prev) R(p, x->prev)->next = x->next; else p->first = x->next;
  if (x->next) R(p, x->next)->prev = x->prev; else p->last = x->prev;
  rec_del(p, i);
}

/* ---- live blocks by offset ---- */

static uint32_t hslot(const ps_pool *p, uint64_t off) {
  return (uint32_t)(((off >> 9) * 0x9e3779b97f4a7c15ull) >> 32) & (p->nb - 1);
}

/* Adds live record i; grows the table when it would pass one per bucket
 * (keeps the old one when out of RAM: chains get longer). 0 when there is
 * no table at all. */
static int hash_put(ps_pool *p, ri i) {
  if (p->live + 1 > p->nb) {
    uint32_t nb = p->nb ? p->nb * 2 : 64;
    ri *b = calloc(nb, sizeof *b);
    if (b) {
      ri *old = p->buckets;
      uint32_t onb = p->nb;
      p->buckets = b, p->nb = nb;
      for (uint32_t k = 0; k < onb; k++)
        for (ri j = old[k], n; j; j = n) {
          n = R(p, j)->u.l.hnext;
          uint32_t h = hslot(p, R(p, j)->off);
          R(p, j)->u.l.hnext = b[h], b[h] = j;
        }
      free(old);
    } else if (!p->nb) return 0;
  }
  uint32_t h = hslot(p, R(p, i)->off);
  R(p, i)->u.l.hnext = p->buckets[h];
  p->buckets[h] = i;
  return 1;
}

/* The live record at off, 0 when none. */
static ri hash_find(const ps_pool *p, uint64_t off) {
  if (!p->nb) return 0;
  for (ri i = p->buckets[hslot(p, off)]; i; i = R(p, i)->u.l.hnext)
    if (R(p, i)->off == off) return i;
  return 0;
}

/* Removes and returns the live record at off, 0 when none. */
static ri hash_take(ps_pool *p, uint64_t off) {
  if (!p->nb) return 0;
  for (ri *pp = &p->buckets[hslot(p, off)]; *pp; pp = &R(p, *pp)->u.l.hnext)
    if (R(p, *pp)->off == off) {
      ri i = *pp;
      *pp = R(p, i)->u.l.hnext;
      return i;
    }
  return 0;
}

/* ---- chunks ---- */

/* Sets or clears bit k of t (room made by bt_room). */
static void bt_set(bittree *t, uint64_t k, int on) {
  for (int l = 0; l < t->levels; l++, k >>= 6) {
    uint64_t *w = &t->w[l][k >> 6], old = *w, bit = (uint64_t)1 << (k & 63);
    *w = on ? old | bit : old & ~bit;
    if (on ? old != 0 : *w != 0) return;   /* the level above already says so */
  }
}

/* The highest index in t, or -1. */
static int64_t bt_max(const bittree *t) {
  if (!t->levels || !t->w[t->levels - 1][0]) return -1;
  uint64_t k = 0;
  for (int l = t->levels - 1; l >= 0; l--) {
    uint64_t w = t->w[l][k];
    k = k * 64 + (uint64_t)(63 - __builtin_clzll(w));
  }
  return (int64_t)k;
}

/* Words in level l of a tree of n bits (the top level has one). */
static uint64_t bt_words(uint64_t n, int l) {
  for (int i = 0; i <= l; i++) n = (n + 63) / 64;
  return n ? n : 1;
}

/* Makes room for n chunks (was `had`) in t; new bits are clear. 0 when
 * out of host RAM (t unchanged). */
static int bt_room(bittree *t, uint64_t had, uint64_t n) {
  int levels = 1;
  while (bt_words(n, levels - 1) > 1) levels++;
  if (levels > BT_LEVELS) return 0;
  for (int l = 0; l < levels; l++) {
    uint64_t was = l < t->levels ? bt_words(had, l) : 0, now = bt_words(n, l);
    if (now <= was) continue;
    uint64_t *w = realloc(t->w[l], now * sizeof *w);
    if (!w) return 0;
    memset(w + was, 0, (now - was) * sizeof *w);
    t->w[l] = w;
  }
  for (int l = t->levels ? t->levels : levels; l < levels; l++)   /* new levels: summarise */
    for (uint64_t i = 0; i < bt_words(n, l - 1); i++)
      if (t->w[l - 1][i]) t->w[l][i >> 6] |= (uint64_t)1 << (i & 63);
  if (levels > t->levels) t->levels = levels;
  return 1;
}

static void bt_free(bittree *t) {
  for (int l = 0; l < BT_LEVELS; l++) free(t->w[l]);
  memset(t, 0, sizeof *t);
}

static int is_mapped(const ps_pool *p, uint64_t k) {
  return (int)(p->mapped[k >> 6] >> (k & 63) & 1);
}

/* Keeps chunk k in `idle` exactly when it is mapped and nothing busy is on it. */
static void chunk_sync(ps_pool *p, uint64_t k) {
  bt_set(&p->idle, k, is_mapped(p, k) && !p->busy[k]);
}

static void set_mapped(ps_pool *p, uint64_t k, int on) {
  uint64_t bit = (uint64_t)1 << (k & 63);
  p->mapped[k >> 6] = on ? p->mapped[k >> 6] | bit : p->mapped[k >> 6] & ~bit;
  chunk_sync(p, k);
}

/* Makes room for n chunks; 0 when out of host RAM (arrays may have grown). */
static int chunks_room(ps_pool *p, uint64_t n) {
  if (n <= p->nchunks) return 1;
  uint64_t cap = p->nchunks ? p->nchunks : 16;
  while (cap < n) cap *= 2;
  uint64_t ow = (p->nchunks + 63) / 64, nw = (cap + 63) / 64;
  uint64_t *busy = realloc(p->busy, cap * sizeof *busy);
  if (!busy) return 0;
  p->busy = busy;
  memset(busy + p->nchunks, 0, (cap - p->nchunks) * sizeof *busy);
  uint64_t *m = realloc(p->mapped, nw * sizeof *m);
  if (!m) return 0;
  p->mapped = m;
  memset(m + ow, 0, (nw - ow) * sizeof *m);
  if (!bt_room(&p->idle, p->nchunks, cap)) return 0;
  p->nchunks = cap;
  return 1;
}

/* [a, b) becomes busy (add) or stops being busy: the chunks under it. */
static void busy_range(ps_pool *p, uint64_t a, uint64_t b, int add) {
  uint64_t g = p->gran;
  for (uint64_t k = a / g; a < b; k++) {
    uint64_t e = (k + 1) * g < b ? (k + 1) * g : b, n = e - a;
    int was = p->busy[k] != 0;
    p->busy[k] = add ? p->busy[k] + n : p->busy[k] - n;
    if (was != (p->busy[k] != 0)) chunk_sync(p, k);
    a = e;
  }
}

/* ---- islands: treaps of their first records ---- */

/* A treap priority: murmur3's finalizer of the slot index, per tree. */
static uint32_t prio(ri i, int t) {
  uint32_t x = i + (uint32_t)t * 0x9e3779b9u;
  x ^= x >> 16, x *= 0x85ebca6bu, x ^= x >> 13, x *= 0xc2b2ae35u, x ^= x >> 16;
  return x;
}

/* An island's key in tree t: (size, tie, offset) in tree 0, offset in
 * tree 1. Among islands of one size the GPU takes frees not retired
 * first, the oldest free first, then settled space, lowest address
 * first (measured on an H100: docs/calibration.md, ties): the tie is the
 * head's free count, or past every count for settled space. */
typedef struct ikey { uint64_t size, tie, off; } ikey;

static uint64_t tie_of(const rec *x) {
  return x->kind == K_PENDING || x->kind == K_DONE ? x->u.f.seq : (uint64_t)1 << 32;
}

/* Trees 2 and 3 index young runs (see young_fit): a run's head by
 * (stream, size, newest free count in the run), its tail by offset. Tree 4 holds the
 * islands whose first record is a pending free (instead of tree 0), by
 * (stream, size, free count): an allocation skips a stream's whole
 * subtree when it may use none of that stream's frees (see place). */
static inline __attribute__((always_inline)) ikey key_of(const ps_pool *p, ri h, int t) {
  const rec *x = R(p, h);
  if (t == 1 || t == 3) return (ikey){ 0, 0, x->off };
  if (t == 2)
    return (ikey){ (uint32_t)x->stream,
                   x->u.f.ysize != YSIZE_BIG ? x->u.f.ysize : rend(p, x->u.f.yother) - x->off,
                   x->u.f.ymax };
  if (t == 4) return (ikey){ (uint32_t)x->stream, x->u.f.end - x->off, x->u.f.seq };
  return (ikey){ x->u.f.end - x->off, tie_of(x), x->off };
}

static inline int key_lt(ikey a, ikey b) {
  if (a.size != b.size) return a.size < b.size;
  return a.tie != b.tie ? a.tie < b.tie : a.off < b.off;
}

/* An island head is in tree 0 or tree 4, never both: they share links. */
#define KID(p, i, t, side) \
  (*((t) < 2 ? &R(p, i)->u.f.ch[t][side] : (t) == 4 ? &R(p, i)->u.f.ch[0][side] \
                                                    : &R(p, i)->u.f.ych[(t) - 2][side]))

/* Splits tree-t treap `at` into keys < k (*l) and the rest (*r). */
static inline __attribute__((always_inline)) void split(ps_pool *p, int t, ri at, ikey k,
                                                        ri *l, ri *r) {
  while (at) {
    if (key_lt(key_of(p, at, t), k)) { *l = at; l = &KID(p, at, t, 1); at = *l; }
    else { *r = at; r = &KID(p, at, t, 0); at = *r; }
  }
  *l = *r = 0;
}

static inline __attribute__((always_inline)) ri merge(ps_pool *p, int t, ri a, ri b) {
  ri root, *at = &root;
  while (a && b) {
    if (prio(a, t) > prio(b, t)) { *at = a; at = &KID(p, a, t, 1); a = *at; }
    else { *at = b; at = &KID(p, b, t, 0); b = *at; }
  }
  *at = a ? a : b;
  return root;
}

static inline __attribute__((always_inline)) void t_ins(ps_pool *p, int t, ri x) {
  ikey k = key_of(p, x, t);
  uint32_t px = prio(x, t);
  ri *at = &p->root[t];
  while (*at && prio(*at, t) >= px) at = &KID(p, *at, t, !key_lt(k, key_of(p, *at, t)));
  split(p, t, *at, k, &KID(p, x, t, 0), &KID(p, x, t, 1));
  *at = x;
}

static inline __attribute__((always_inline)) void t_del(ps_pool *p, int t, ri x) {
  ikey k = key_of(p, x, t);
  ri *at = &p->root[t];
  while (*at != x) at = &KID(p, *at, t, !key_lt(k, key_of(p, *at, t)));
  *at = merge(p, t, KID(p, x, t, 0), KID(p, x, t, 1));
}

/* Puts young run head h in treap 2, its size and its newest free count
 * `newest` kept in it (the key it is found by until it leaves). */
static void yr_ins(ps_pool *p, ri h, uint32_t newest) {
  uint64_t n = rend(p, R(p, h)->u.f.yother) - R(p, h)->off;
  R(p, h)->u.f.ysize = n < YSIZE_BIG ? (uint32_t)n : YSIZE_BIG;
  R(p, h)->u.f.ymax = newest;
  t_ins(p, 2, h);
}

/* An island's keys depend on its first record's offset, kind and where
 * it ends: take it out before changing any, put it back after. Treap 1
 * holds only islands of several records (see isl_head); an island whose
 * first record is a pending free is in treap 4, any other in treap 0. */
static void isl_add(ps_pool *p, ri h) {
  rec *x = R(p, h);
  x->u.f.end = rend(p, x->u.f.other);
  x->in1 = x->u.f.other != h;
  x->in4 = x->kind == K_PENDING;
  if (x->in4) t_ins(p, 4, h); else t_ins(p, 0, h);
  if (x->in1) t_ins(p, 1, h);
}
static void isl_del(ps_pool *p, ri h) {
  if (R(p, h)->in4) t_del(p, 4, h); else t_del(p, 0, h);
  if (R(p, h)->in1) t_del(p, 1, h);
}

/* The same for an island whose first record stays first at the same
 * offset while its end or kind changes: its place in treap 1 (by that
 * offset) stays unless it comes to hold one record or several. Nothing
 * may search treap 1 between the two. */
static void isl_del_keep(ps_pool *p, ri h) {
  if (R(p, h)->in4) t_del(p, 4, h); else t_del(p, 0, h);
}
static void isl_add_keep(ps_pool *p, ri h) {
  rec *x = R(p, h);
  int in1 = x->u.f.other != h;
  x->u.f.end = rend(p, x->u.f.other);
  x->in4 = x->kind == K_PENDING;
  if (x->in4) t_ins(p, 4, h); else t_ins(p, 0, h);
  if (in1 != x->in1) {
    if (in1) t_ins(p, 1, h); else t_del(p, 1, h);
    x->in1 = (uint8_t)in1;
  }
}

/* Makes h..t one island (h first, t last). */
static void isl_bind(ps_pool *p, ri h, ri t) {
  R(p, h)->u.f.other = t;
  R(p, t)->u.f.other = h;
}

/* The smallest island of at least r bytes in treap 0 (stream < 0), or in
 * treap 4 among those headed by a pending free of `stream`, other than
 * `skip` (ties: treap 0's key), or 0. Counts the nodes it looks at. */
static ri isl_fit(sim_ctx *c, const ps_pool *p, uint64_t r, ri skip, int stream) {
  int tr = stream < 0 ? 0 : 4;
  ikey k = tr ? (ikey){ (uint32_t)stream, r, 0 } : (ikey){ r, 0, 0 };
  for (int again = 0; again < 2; again++) {
    ri best = 0;
    for (ri t = p->root[tr]; t; c->fit_visits++)
      if (!key_lt(key_of(p, t, tr), k)) best = t, t = KID(p, t, tr, 0);
      else t = KID(p, t, tr, 1);
    if (best && tr && R(p, best)->stream != stream) best = 0;
    if (!best || best != skip) return best;
    k = key_of(p, skip, tr), k.off++;   /* the next one after skip */
  }
  return 0;
}

/* The first record of free record i's island: the nearest head at or
 * below i in treap 1 when its island reaches i, else i itself (an island
 * of one record). */
static ri isl_head(const ps_pool *p, ri i) {
  ri best = 0;
  uint64_t off = R(p, i)->off;
  for (ri t = p->root[1]; t;)
    if (R(p, t)->off <= off) best = t, t = KID(p, t, 1, 1);
    else t = KID(p, t, 1, 0);
  return best && R(p, R(p, best)->u.f.other)->off >= off ? best : i;
}

/* Whether free kinds settle: no ordering left to wait for. */
static int settled(int kind) { return kind == K_FRESH || kind == K_RETIRED || kind == K_DONE; }

/* Whether adjacent records a and b (a first) belong to one island, with
 * b taken as of kind kb (measured: a free still pending on the device
 * joins only other frees of its stream not retired; settled space joins
 * settled space). */
static int joins_as(const ps_pool *p, ri a, ri b, int kb) {
  const rec *x = R(p, a), *y = R(p, b);
  if (x->kind == K_LIVE || kb == K_LIVE) return 0;
  if (settled(x->kind) && settled(kb)) return 1;
  return (x->kind == K_DONE || x->kind == K_PENDING) && (kb == K_DONE || kb == K_PENDING) &&
         x->stream == y->stream;
}
static int joins(const ps_pool *p, ri a, ri b) { return joins_as(p, a, b, R(p, b)->kind); }

/* isl_head when the islands match the records' kinds (not while a
 * kind changes): O(1) when i is its island's first or last record. */
static ri isl_head_now(const ps_pool *p, ri i) {
  ri a = R(p, i)->prev, b = R(p, i)->next;
  if (!is_free(p, a) || !joins(p, a, i)) return i;
  if (!is_free(p, b) || !joins(p, i, b)) return R(p, i)->u.f.other;
  return isl_head(p, i);
}

/* Adjacent free records a and b (a first) start (now) or stop joining:
 * their islands merge or split there. */
static void relink(ps_pool *p, ri a, ri b, int was, int now) {
  if (was == now) return;
  if (now) {
    ri h = R(p, a)->u.f.other, t = R(p, b)->u.f.other;
    isl_del_keep(p, h), isl_del(p, b);
    isl_bind(p, h, t);
    isl_add_keep(p, h);
  } else {
    ri h = isl_head(p, a), t = R(p, h)->u.f.other;
    isl_del_keep(p, h);
    isl_bind(p, h, a), isl_bind(p, b, t);
    isl_add_keep(p, h), isl_add(p, b);
  }
}

/* Free record i becomes of kind k; its islands follow (a head's kind is
 * in its island's key: out of the treaps while it changes). */
static void set_kind(ps_pool *p, ri i, int k) {
  ri a = R(p, i)->prev, b = R(p, i)->next;
  int wa = a && joins(p, a, i), na = a && joins_as(p, a, i, k);
  int wb = b && joins(p, i, b);
  if (!wa) isl_del_keep(p, i);
  R(p, i)->kind = (uint8_t)k;
  if (!wa) isl_add_keep(p, i);
  int nb = b && joins(p, i, b);
  if (a) relink(p, a, i, wa, na);
  if (b) relink(p, i, b, wb, nb);
}

/* ---- young runs: each stream's adjacent young frees, indexed ---- */

/* A young run is a longest chain of address-adjacent young frees of one
 * stream (they always join: pending or done, one stream). Its first
 * record (head) and last (tail) point at each other through yother;
 * heads sit in treap 2 by (stream, size, free count), tails in treap 3
 * by offset. A tail stays put while its run grows or shrinks at the
 * front, as an alloc+free pair on one young run does. */

/* Whether record i (0: none) is a young free of `stream`. */
static int is_young(const ps_pool *p, ri i, int32_t stream) {
  return i && R(p, i)->young && R(p, i)->stream == stream;
}
/* Makes h..t one young run (h first, t last); the treaps are the caller's. */
static void yr_bind(ps_pool *p, ri h, ri t) {
  R(p, h)->u.f.yother = t;
  R(p, t)->u.f.yother = h;
}

/* The tail of young record i's run: runs never overlap, so it is the
 * nearest tail at or above i. O(log runs). */
static ri yr_tail(const ps_pool *p, ri i) {
  ri best = 0;
  uint64_t off = R(p, i)->off;
  for (ri t = p->root[3]; t;)
    if (R(p, t)->off >= off) best = t, t = KID(p, t, 3, 0);
    else t = KID(p, t, 3, 1);
  return best;
}

/* The head of young record i's run, in O(1) when i is one. */
static ri yr_head(const ps_pool *p, ri i) {
  return is_young(p, R(p, i)->prev, R(p, i)->stream) ? R(p, yr_tail(p, i))->u.f.yother : i;
}

/* Young record i stops being young: its run splits around it. A run's
 * head or tail (a retire or an ageing in address order) needs no search. */
static void yr_clear(ps_pool *p, ri i) {
  int32_t st = R(p, i)->stream;
  ri h, t;
  if (!is_young(p, R(p, i)->prev, st)) h = i, t = R(p, i)->u.f.yother;
  else if (!is_young(p, R(p, i)->next, st)) t = i, h = R(p, i)->u.f.yother;
  else t = yr_tail(p, i), h = R(p, t)->u.f.yother;
  uint32_t newest = R(p, h)->u.f.ymax;   /* each part keeps it: an upper bound */
  t_del(p, 2, h);
  if (t == i) t_del(p, 3, t);
  R(p, i)->young = 0;
  if (h != i) {
    ri a = R(p, i)->prev;
    yr_bind(p, h, a);
    yr_ins(p, h, newest), t_ins(p, 3, a);
  }
  if (t != i) {
    ri n = R(p, i)->next;
    yr_bind(p, n, t);
    yr_ins(p, n, newest);
  }
}

/* Nodes of treap t under `at`, or -1 when a node's key breaks its order. */
static long t_count(const ps_pool *p, int t, ri at, const ikey *lo, const ikey *hi) {
  if (!at) return 0;
  ikey k = key_of(p, at, t);
  if ((lo && !key_lt(*lo, k)) || (hi && !key_lt(k, *hi))) return -1;
  long a = t_count(p, t, KID(p, at, t, 0), lo, &k), b = t_count(p, t, KID(p, at, t, 1), &k, hi);
  return a < 0 || b < 0 ? -1 : a + b + 1;
}

/* For tests: 1 when the young-run treaps hold exactly the young runs a
 * walk over the records finds (heads and tails named both ways, every
 * key in order), else 0. O(n). */
int sim_pool_young_check(const ps_pool *p) {
  long runs = 0;
  for (ri i = p->first; i; i = R(p, i)->next) {
    if (!R(p, i)->young || is_young(p, R(p, i)->prev, R(p, i)->stream)) continue;
    ri t = i;
    while (is_young(p, R(p, t)->next, R(p, i)->stream)) t = R(p, t)->next;
    if (R(p, i)->u.f.yother != t || R(p, t)->u.f.yother != i) return 0;
    if (yr_tail(p, i) != t || yr_head(p, t) != i) return 0;
    runs++;
  }
  return t_count(p, 2, p->root[2], NULL, NULL) == runs &&
         t_count(p, 3, p->root[3], NULL, NULL) == runs;
}

/* Whether head h is in treap t (found by its key). */
static int t_has(const ps_pool *p, int t, ri h) {
  ikey k = key_of(p, h, t);
  for (ri at = p->root[t]; at; at = KID(p, at, t, !key_lt(k, key_of(p, at, t))))
    if (at == h) return 1;
  return 0;
}

/* For tests: 1 when the island treaps hold exactly the islands a walk
 * over the records finds (first and last records named both ways, where
 * each ends, which treaps hold it, every key in order), else 0. O(n log n). */
int sim_pool_island_check(const ps_pool *p) {
  long n04 = 0, n1 = 0;
  for (ri i = p->first; i; i = R(p, i)->next) {
    if (!is_free(p, i) || (is_free(p, R(p, i)->prev) && joins(p, R(p, i)->prev, i))) continue;
    ri t = i;
    while (is_free(p, R(p, t)->next) && joins(p, t, R(p, t)->next)) t = R(p, t)->next;
    const rec *x = R(p, i);
    if (x->u.f.other != t || R(p, t)->u.f.other != i || x->u.f.end != rend(p, t)) return 0;
    /* A head whose island merged down to one record (absorb) may stay in
     * treap 1 until it next leaves: isl_head checks where islands reach. */
    if ((t != i && !x->in1) || x->in4 != (x->kind == K_PENDING)) return 0;
    if (!t_has(p, x->in4 ? 4 : 0, i) || (x->in1 && !t_has(p, 1, i))) return 0;
    n04++, n1 += x->in1;
  }
  long a = t_count(p, 0, p->root[0], NULL, NULL), b = t_count(p, 4, p->root[4], NULL, NULL);
  return a >= 0 && b >= 0 && a + b == n04 && t_count(p, 1, p->root[1], NULL, NULL) == n1;
}

/* ---- frees not retired, per stream ---- */

static pqueue *pq_find(ps_pool *p, int stream) {
  for (uint32_t k = 0; k < p->npq; k++)
    if (p->pq[k].stream == stream) return &p->pq[k];
  return NULL;
}

/* Room for a queue of one more stream; 0 when out of host RAM. */
static int pq_room(ps_pool *p) {
  size_t cap = p->cappq;
  if (!sim_reserve_one((void **)&p->pq, &cap, p->npq, sizeof *p->pq, 4)) return 0;
  p->cappq = (uint32_t)cap;
  return 1;
}

/* Room for one more pool in the list of pools holding frees not
 * retired; 0 when out of host RAM. */
static int held_room(ps_pool *p) {
  sim_pool_list *l = p->list;
  return p->held || sim_reserve_one((void **)&l->held, &l->capheld, l->nheld, sizeof *l->held, 8);
}

/* Keeps p in its list's `held` exactly while it holds frees not retired. */
static void held_update(ps_pool *p) {
  sim_pool_list *l = p->list;
  if (p->npend && !p->held) {
    l->held[l->nheld++] = p;
    p->held = l->nheld;
  } else if (!p->npend && p->held) {
    ps_pool *q = l->held[--l->nheld];
    l->held[p->held - 1] = q, q->held = p->held;
    p->held = 0;
  }
}

/* Appends free record i (pending or done) to its stream's queue
 * (pq_room and held_room first). */
static void pq_push(ps_pool *p, ri i) {
  rec *x = R(p, i);
  pqueue *q = pq_find(p, x->stream);
  if (!q) {
    q = &p->pq[p->npq++];
    *q = (pqueue){ x->stream, 0, 0, 0, 0, 0 };
  }
  x->u.f.qprev = q->tail, x->u.f.qnext = 0;
  if (q->tail) R(p, q->tail)->u.f.qnext = i; else q->head = i;
  q->tail = i;
  if (!q->pend && x->kind == K_PENDING) q->pend = i;   /* done: none pending before */
  if (!q->young) q->young = i;
  q->n++, p->npend++;
  held_update(p);
}

static void pq_unlink(ps_pool *p, ri i) {
  rec *x = R(p, i);
  pqueue *q = pq_find(p, x->stream);
  if (q->pend == i) q->pend = x->u.f.qnext;
  if (q->young == i) q->young = x->u.f.qnext;
  x->young = 0;
  if (x->u.f.qprev) R(p, x->u.f.qprev)->u.f.qnext = x->u.f.qnext; else q->head = x->u.f.qnext;
  if (x->u.f.qnext) R(p, x->u.f.qnext)->u.f.qprev = x->u.f.qprev; else q->tail = x->u.f.qprev;
  q->n--, p->npend--;
  if (!q->n) *q = p->pq[--p->npq];
  held_update(p);
}

/* ---- completing, retiring and merging free records ---- */

/* Retired record a takes in its retired neighbour b (next): the merged
 * record keeps the stream when both had it, else none. */
static void absorb(ps_pool *p, ri a, ri b) {
  rec *x = R(p, a), *y = R(p, b);
  if (x->stream != y->stream) x->stream = -1;
  ri n = y->next;
  if (!p->bulk && (!n || !joins(p, b, n))) isl_bind(p, y->u.f.other, a);   /* b was the last */
  rec_unlink(p, b);
}

/* Record i's free is retired: every stream may use it alike, its chunks
 * may go back, and it merges with retired neighbours. */
static void retire(ps_pool *p, ri i) {
  if (R(p, i)->young && !p->bulk) yr_clear(p, i);
  pq_unlink(p, i);
  busy_range(p, R(p, i)->off, rend(p, i), 0);
  if (p->bulk) R(p, i)->kind = K_RETIRED;   /* the islands are rebuilt after */
  else set_kind(p, i, K_RETIRED);
  ri prev = R(p, i)->prev, next = R(p, i)->next;
  if (prev && R(p, prev)->kind == K_RETIRED) absorb(p, prev, i), i = prev;
  if (next && R(p, next)->kind == K_RETIRED) absorb(p, i, next);
}

/* Every young free of queue q's stream stops being young at once, when
 * they are the pool's only young frees (a sync that covers the stream's
 * newest free): both young-run treaps empty in O(log n), and each record
 * needs no search. 0 (nothing changed) when another stream has young
 * runs. */
static int yr_drop_all(ps_pool *p, pqueue *q) {
  ri l, mid, r;
  split(p, 2, p->root[2], (ikey){ (uint32_t)q->stream, 0, 0 }, &l, &mid);
  split(p, 2, mid, (ikey){ (uint32_t)q->stream + 1, 0, 0 }, &mid, &r);
  if (l || r) {
    p->root[2] = merge(p, 2, l, merge(p, 2, mid, r));
    return 0;
  }
  p->root[2] = p->root[3] = 0;
  for (ri i = q->young; i; i = R(p, i)->u.f.qnext) R(p, i)->young = 0;
  q->young = 0;
  return 1;
}

/* An island head and its size while the islands are rebuilt. */
typedef struct ihead { uint64_t size; ri h; } ihead;

/* Sorts v[0..n) by size, stably (heads listed in address order come out
 * in treap 0's order), by radix over the bits in which sizes differ;
 * tmp holds n more. */
static void isort(ihead *v, ihead *tmp, size_t n) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t k = 0; k < n; k++)
    lo = v[k].size < lo ? v[k].size : lo, hi = v[k].size > hi ? v[k].size : hi;
  for (int shift = 0; n && shift < 64 && ((hi - lo) >> shift); shift += 11) {
    size_t cnt[2049] = { 0 };
    for (size_t k = 0; k < n; k++) cnt[((v[k].size - lo) >> shift & 2047) + 1]++;
    for (int d = 0; d < 2048; d++) cnt[d + 1] += cnt[d];
    for (size_t k = 0; k < n; k++) tmp[cnt[(v[k].size - lo) >> shift & 2047]++] = v[k];
    memcpy(v, tmp, n * sizeof *v);
  }
}

/* Makes tree t a treap of the n heads v[0..n) (in key order) in O(n): each
 * takes as left child the last node it outranks on the right spine. */
static ri t_build(ps_pool *p, int t, const ihead *v, size_t n, ri *stack) {
  size_t top = 0;
  for (size_t k = 0; k < n; k++) {
    ri x = v[k].h, last = 0;
    uint32_t px = prio(x, t);
    while (top && prio(stack[top - 1], t) < px) last = stack[--top];
    KID(p, x, t, 0) = last, KID(p, x, t, 1) = 0;
    if (top) KID(p, stack[top - 1], t, 1) = x;
    stack[top++] = x;
  }
  return top ? stack[0] : 0;
}

/* Rebuilds the islands from the records once no free is pending or done
 * (every island is settled space: treap 4 empty), in O(n) over arrays
 * instead of O(log n) cache-missing treap updates per free. v, tmp and
 * stack hold room for the pool's live blocks + 1 heads (islands lie
 * between live blocks). */
static void isl_rebuild(ps_pool *p, ihead *v, ihead *tmp, ri *stack) {
  size_t n = 0, n1 = 0;
  for (ri i = p->first; i;) {
    if (!is_free(p, i)) { i = R(p, i)->next; continue; }
    ri t = i;
    while (is_free(p, R(p, t)->next) && joins(p, t, R(p, t)->next)) t = R(p, t)->next;
    rec *x = R(p, i);
    isl_bind(p, i, t);
    x->u.f.end = rend(p, t);
    x->in1 = t != i, x->in4 = 0;
    if (x->in1) v[n1++] = (ihead){ 0, i };   /* address order: treap 1's */
    i = R(p, t)->next;
  }
  p->root[1] = t_build(p, 1, v, n1, stack);
  for (ri i = p->first; i; i = R(p, i)->next)
    if (is_free(p, i) && !(is_free(p, R(p, i)->prev) && joins(p, R(p, i)->prev, i)))
      v[n++] = (ihead){ R(p, i)->u.f.end - R(p, i)->off, i };
  isort(v, tmp, n);   /* settled space: one tie for all, then the offset */
  p->root[0] = t_build(p, 0, v, n, stack);
  p->root[4] = 0;
}

/* Retires every free of p at once when the host knows all of them and
 * they are many against the live blocks: the young-run treaps empty, the
 * frees retire in the order settle would, and the islands are rebuilt.
 * 0 (nothing changed) when that does not apply or host RAM is short. */
static int settle_bulk(sim_ctx *c, ps_pool *p) {
  if (p->npend < 256 || p->npend * 8 < p->live) return 0;
  for (uint32_t k = 0; k < p->npq; k++)
    if (!sim_host_knows(c, p->pq[k].stream, R(p, p->pq[k].tail)->u.f.pos)) return 0;
  ihead *v = malloc((p->live + 1) * sizeof *v), *tmp = malloc((p->live + 1) * sizeof *v);
  ri *stack = malloc((p->live + 1) * sizeof *stack);
  if (!v || !tmp || !stack) { free(v), free(tmp), free(stack); return 0; }
  p->root[2] = p->root[3] = 0;
  p->bulk = 1;
  for (uint32_t k = 0; k < p->npq;) {
    pqueue *q = &p->pq[k];
    int stream = q->stream;
    q->young = 0;
    while (q->n) {
      int last = q->n == 1;
      retire(p, q->head);
      c->retires++;
      if (last) break;
    }
    if (k < p->npq && p->pq[k].stream == stream) k++;
  }
  p->bulk = 0;
  isl_rebuild(p, v, tmp, stack);
  c->isl_rebuilds++;
  free(v), free(tmp), free(stack);
  return 1;
}

/* Brings free records up to the host's clock: frees that completed are
 * done, frees a host synchronisation covered are retired. Each stream's
 * queue is in stream order and completion order, so only its heads are
 * checked. */
static void settle(sim_ctx *c, ps_pool *p) {
  if (p->npend && settle_bulk(c, p)) return;
  for (uint32_t k = 0; k < p->npq; k++) {
    pqueue *q = &p->pq[k];
    while (q->pend && R(p, q->pend)->u.f.time <= c->host_now) {
      ri i = q->pend;
      q->pend = R(p, i)->u.f.qnext;
      set_kind(p, i, K_DONE);
    }
  }
  for (uint32_t k = 0; k < p->npq;) {
    pqueue *q = &p->pq[k];
    int stream = q->stream;
    if (q->young && sim_host_knows(c, stream, R(p, q->tail)->u.f.pos)) yr_drop_all(p, q);
    while (q->n && sim_host_knows(c, stream, R(p, q->head)->u.f.pos)) {
      int last = q->n == 1;
      retire(p, q->head);
      c->retires++;
      if (last) break;   /* the queue is gone: slot k holds another */
    }
    if (k < p->npq && p->pq[k].stream == stream) k++;
  }
}

/* ---- eligibility and placement ---- */

/* The rule under which stream s may take free record i, or -1. With
 * internal_ok, a pending free of another stream qualifies as an internal
 * dependency when nothing else does. */
static int rec_rule(const sim_ctx *c, const ps_pool *p, ri i, const ps_stream *s,
                    int internal_ok) {
  const rec *x = R(p, i);
  if (x->kind == K_LIVE) return -1;
  if (x->kind == K_FRESH) return PS_RULE_NONE;
  if (x->stream == s->id) return PS_RULE_STREAM_ORDER;
  if (x->kind == K_RETIRED) return PS_RULE_HOST_SYNC;
  if (p->follow && sim_vc_get(&s->clock, x->stream) >= x->u.f.pos) return PS_RULE_EVENT_DEP;
  if (p->opportunistic && x->u.f.time <= c->host_now) return PS_RULE_OPPORTUNISTIC;
  return internal_ok ? PS_RULE_INTERNAL_DEP : -1;
}

/* Whether stream s may use every free record of queue q without internal
 * dependencies. A stream's frees not retired are in order of position and
 * of completion time, so the ones s may use are a prefix of the queue:
 * when s may use its newest one it may use them all. */
static int q_usable(const sim_ctx *c, ps_pool *p, const pqueue *q, const ps_stream *s) {
  return q->stream == s->id || rec_rule(c, p, q->tail, s, 0) >= 0;
}

/* How stream s may search the islands (without internal dependencies):
 * 2 when it may use every free record; 1 when each other stream's frees
 * are all usable, or all pending and none usable (so they sit only in
 * islands of their own, headed by a pending free of that stream in treap
 * 4, which s skips); 0 otherwise (the walk). */
static int search_mode(const sim_ctx *c, ps_pool *p, const ps_stream *s) {
  int mode = 2;
  for (uint32_t k = 0; k < p->npq; k++) {
    const pqueue *q = &p->pq[k];
    if (q_usable(c, p, q, s)) continue;
    if (q->pend != q->head || rec_rule(c, p, q->head, s, 0) >= 0) return 0;
    mode = 1;
  }
  return mode;
}

/* The best island for r bytes that s may use whole, other than `top`:
 * treap 0's best, then each stream's best in treap 4 when s may use its
 * frees (all of them, or every stream's with `all`). O(k log n), k the
 * streams with frees not retired. */
static ri island_fit(sim_ctx *c, ps_pool *p, uint64_t r, ri top, const ps_stream *s, int all) {
  ri best = isl_fit(c, p, r, top, -1);
  for (uint32_t k = 0; k < p->npq; k++) {
    if (!all && !q_usable(c, p, &p->pq[k], s)) continue;
    ri g = isl_fit(c, p, r, top, p->pq[k].stream);
    if (g && (!best || key_lt(key_of(p, g, 0), key_of(p, best, 0)))) best = g;
  }
  return best;
}

/* Whether s may use free record g and, when g is a free not retired, the
 * frees of its stream joined to it after g up to *last: the GPU keeps
 * adjacent frees of one stream as one block, usable as its newest free
 * is (measured on an H100: docs/calibration.md, joined pending frees).
 * Live records are not usable. */
static int unit_ok(const sim_ctx *c, const ps_pool *p, ri g, const ps_stream *s,
                   int internal_ok, ri *last) {
  int ok = rec_rule(c, p, g, s, internal_ok) >= 0;
  *last = g;
  ((sim_ctx *)c)->fit_visits++;
  if (R(p, g)->kind != K_PENDING && R(p, g)->kind != K_DONE) return ok;
  for (ri n = R(p, g)->next; n && (R(p, n)->kind == K_PENDING || R(p, n)->kind == K_DONE) &&
                             R(p, n)->stream == R(p, g)->stream; n = R(p, n)->next) {
    ok = ok && rec_rule(c, p, n, s, internal_ok) >= 0;
    *last = n;
    ((sim_ctx *)c)->fit_visits++;
  }
  return ok;
}

/* The first record of the smallest run of adjacent usable free records
 * that join, of at least r bytes (ties: the key of the island it would
 * head) other than the run at the top, or 0, by a walk over every
 * record. *top: the first record of the run that reaches the top of the
 * extent, or 0. */
static ri walk_best_run(const sim_ctx *c, const ps_pool *p, uint64_t r, const ps_stream *s,
                        int internal_ok, ri *top) {
  ri best = 0, start = 0, g = p->first, last = 0;
  uint64_t run = 0;
  ikey bk = { 0, 0, 0 };
  int ok = g && unit_ok(c, p, g, s, internal_ok, &last);
  *top = 0;
  while (g) {
    ri n = R(p, last)->next, nlast = 0;
    int nok = n && unit_ok(c, p, n, s, internal_ok, &nlast);
    if (ok) {
      if (!start) start = g, run = 0;
      run += rend(p, last) - R(p, g)->off;
      if (!n) { *top = start; break; }
      if (!nok || !joins(p, last, n)) {
        ikey k = { run, tie_of(R(p, start)), R(p, start)->off };
        if (run >= r && (!best || key_lt(k, bk))) best = start, bk = k;
        start = 0;
      }
    }
    g = n, last = nlast, ok = nok;
  }
  return best;
}

static void over_update(sim_ctx *c, ps_pool *p);

/* Makes the arena's VA hold at least `extent` bytes: reserves it on first
 * use (again when it was all given back and the device grew). 0 when out
 * of VA or host RAM. */
static int arena_for(sim_ctx *c, ps_pool *p, uint64_t extent, double cap) {
  uint64_t va = p->max_size ? p->max_size : sim_round_up((uint64_t)cap, gran(c));
  if (p->ipc) va = sim_ipc_seg_va(p->ipc);   /* fixed by the segment */
  if (p->arena && p->arena->size == 0 && p->arena->va < va) {   /* memory grew */
    sim_mem_unmap(&c->mem, p->arena);
    p->arena = NULL;
  }
  if (!p->arena) {
    p->arena = sim_mem_reserve(&c->mem, pool_space(p), p->device, va, SIM_MAP_ARENA);
    if (!p->arena) return 0;
    p->arena->owner = p;
    if (p->ipc) p->arena->shm = sim_ipc_seg_data(p->ipc);   /* contents shared */
  }
  return extent <= p->arena->va;
}

/* Covers up to `to` (a multiple of chunk size g past the extent) with
 * fresh space, its chunks mapped. 0 when out of host RAM (nothing
 * changed). */
static int extend(sim_ctx *c, ps_pool *p, uint64_t to, uint64_t g) {
  ri last = p->last, f = last;
  int fresh_top = last && R(p, last)->kind == K_FRESH;
  if (!chunks_room(p, to / g) || (!fresh_top && !(f = rec_new(p)))) return 0;
  if (!sim_mem_resize(&c->mem, p->arena, to)) {
    if (!fresh_top) rec_del(p, f);
    return 0;
  }
  uint64_t from = p->extent / g;
  if (!p->extent) p->gran = g;
  ri h = is_free(p, last) ? R(p, last)->u.f.other : 0;   /* the top island */
  if (!fresh_top) {
    rec *x = R(p, f);
    x->off = p->extent, x->kind = K_FRESH, x->stream = -1;
    x->prev = last;
    if (last) R(p, last)->next = f; else p->first = f;
    p->last = f;
    if (!h || !joins(p, last, f)) h = 0;
  }
  if (h) isl_del(p, h);
  p->extent = to;
  isl_bind(p, h ? h : f, f);
  isl_add(p, h ? h : f);
  for (uint64_t k = from; k < to / g; k++) set_mapped(p, k, 1);
  return 1;
}

/* Maps every chunk under [off, end) that is not mapped, covering space
 * past the extent with fresh space. 0 when the device (or host) is full,
 * max_size would be passed, or out of host RAM; nothing changes then (but
 * reserved_high, as measured). */
static int map_range(sim_ctx *c, ps_pool *p, uint64_t off, uint64_t end) {
  uint64_t g = pgran(c, p), have = p->extent / g, last = sim_round_up(end, g) / g, add = 0;
  uint64_t first = UINT64_MAX;
  if (end < off || last * g < end) return 0;
  for (uint64_t k = off / g; k < last && k < have; k++)
    if (!is_mapped(p, k)) add += g, first = first < k ? first : k;
  if (last > have && first == UINT64_MAX) first = off / g > have ? off / g : have;
  if (last > have) add += (last - (off / g > have ? off / g : have)) * g;
  if (add == 0) return 1;
  sim_space sp = pool_space(p);
  double cap = sp == SIM_HOST_SPACE ? c->prof.host_memory : c->prof.memory;
  uint64_t held = sp == SIM_HOST_SPACE ? c->mem.mapped[sp] : c->mem.dev_mapped[p->device];
  if ((double)held + (double)add > cap) return 0;
  if (p->max_size && p->reserved + add > p->max_size) {
    /* The driver maps up to max_size before it fails: measured on the GPU,
     * a failed request leaves reserved_high at max_size. */
    if (p->max_size > p->reserved_high) p->reserved_high = p->max_size;
    return 0;
  }
  if (p->reserved + add < add || !arena_for(c, p, last * g, cap)) return 0;
  if (last > have && !extend(c, p, last * g, g)) return 0;
  for (uint64_t k = off / g; k < have && k < last; k++)
    if (!is_mapped(p, k)) {
      sim_mem_hole(&c->mem, p->arena, k * g, g, 0);
      set_mapped(p, k, 1);
    }
  p->reserved += add;
  p->map_off = first * g, p->map_size = add;
  if (p->reserved > p->reserved_high) p->reserved_high = p->reserved;
  const sim_profile *f = &c->prof;
  if (sp == SIM_HOST_SPACE) sim_cost(c, f->host_pool_map_ns, f->host_pool_map_ns_per_gib, add);
  else sim_cost(c, f->map_ns, f->map_ns_per_gib, add);
  over_update(c, p);
  return 1;
}

/* Allocates r bytes (req asked for) from free record g, the start of a
 * run, in the island headed by h. Each record it covers gives its rule;
 * the note takes the first reused one, and an internal dependency makes s
 * wait for that free. Returns the live record; 0 when out of host RAM
 * (nothing changed). */
static ri carve(sim_ctx *c, ps_pool *p, ri g, ri h, uint64_t r, uint64_t req,
                ps_stream *s, int internal_ok, ps_alloc_note *note) {
  uint64_t at = R(p, g)->off, end = at + r;
  ri b = rend(p, g) > end ? rec_new(p) : g;
  if (!b) return 0;
  /* The young runs the block touches leave the index (a tail past the
   * block stays: its order holds); what is left of them goes back once
   * the block is in place. */
  ri yh = 0, ytail = 0;   /* the head of g's run (g young), the last run's tail */
  uint32_t ynewest = 0;   /* the last run's newest free count */
  for (ri x = g; x && R(p, x)->off < end; x = R(p, x)->next) {
    if (!R(p, x)->young) continue;
    ri yx = x;
    if (x == g) yx = yh = yr_head(p, g);
    else if (is_young(p, R(p, x)->prev, R(p, x)->stream)) continue;   /* its run is out */
    ytail = R(p, yx)->u.f.yother;
    ynewest = R(p, yx)->u.f.ymax;
    t_del(p, 2, yx);
    if (rend(p, ytail) <= end) t_del(p, 3, ytail);
  }
  int ykeep = ytail && rend(p, ytail) > end;
  ri t = R(p, h)->u.f.other;
  if (h != g) isl_del_keep(p, h); else isl_del(p, h);   /* h != g keeps its offset */
  for (ri x = g; x && R(p, x)->off < end; x = R(p, x)->next) {
    if (x != g && !joins(p, R(p, x)->prev, x)) {   /* the next island (the top's growth) */
      t = R(p, x)->u.f.other;
      isl_del(p, x);
    }
    int rule = rec_rule(c, p, x, s, internal_ok);
    if (rule > PS_RULE_NONE && note->rule == PS_RULE_NONE)
      *note = (ps_alloc_note){ (ps_reuse_rule)rule, p->arena->base + R(p, x)->off };
    if (rule == PS_RULE_INTERNAL_DEP) {   /* s now waits for the free */
      s->tail = sim_max64(s->tail, R(p, x)->u.f.time);
      sim_vc_raise(&s->clock, R(p, x)->stream, R(p, x)->u.f.pos);
    }
    if (is_idle(p, x)) {
      uint64_t e = rend(p, x);
      busy_range(p, R(p, x)->off, e < end ? e : end, 1);
    }
    if (R(p, x)->kind == K_FRESH) p->took_fresh = 1;
  }
  uint64_t iend = rend(p, t);
  ri split = 0;                           /* the record the block's end cuts */
  if (b != g) {                           /* g keeps what is left of it */
    rec *x = R(p, b), *y = R(p, g);
    x->off = at, x->prev = y->prev, x->next = g;
    if (y->prev) R(p, y->prev)->next = b; else p->first = b;
    y->prev = b, y->off = end;
    split = g;
  } else {
    if (R(p, g)->kind >= K_DONE) pq_unlink(p, g);
    ri x = R(p, g)->next;
    while (x && rend(p, x) <= end) {
      ri n = R(p, x)->next;
      if (R(p, x)->kind >= K_DONE) pq_unlink(p, x);
      rec_unlink(p, x);
      x = n;
    }
    if (x && R(p, x)->off < end) R(p, x)->off = end, split = x;
  }
  /* What is left of a young free counts as freed now (measured on an
   * H200: a carved free's remainder is taken after frees made before the
   * carve; docs/sim.md, Young frees first). */
  if (split && R(p, split)->young) R(p, split)->u.f.seq = ynewest = ++p->frees;
  rec *x = R(p, b);
  x->kind = K_LIVE, x->stream = -1;
  memset(&x->u, 0, sizeof x->u);
  x->u.l.req = req;
  hash_put(p, b);
  if (h != g) { isl_bind(p, h, x->prev); isl_add_keep(p, h); }
  if (end < iend) { isl_bind(p, x->next, t); isl_add(p, x->next); }
  if (yh && yh != g) {
    ri a = R(p, b)->prev;
    yr_bind(p, yh, a);
    yr_ins(p, yh, R(p, yh)->u.f.ymax), t_ins(p, 3, a);
  }
  if (ykeep) {
    ri n = R(p, b)->next;
    yr_bind(p, n, ytail);
    yr_ins(p, n, ynewest);
  }
  return b;
}

/* ---- young frees: the GPU's first choice ---- */

/* A free made on s since the pool last took fresh space (or not
 * complete then) is young. An allocation on s first takes the best fit
 * among runs of s's adjacent young frees; only when none fits does it
 * search the pool's space; once a block covers fresh space or maps a
 * chunk, the frees complete by now are no longer young (measured on an
 * H100 and an H200: docs/calibration.md E13, ties4,
 * h200-2026-11-27-young.log, and replays of tests/data/torch). Returns
 * the run's first record, or 0: the smallest run of at least r bytes,
 * among equal ones the run whose newest free (or carve) is oldest, found
 * in treap 2 in O(log runs). */
static ri young_fit(sim_ctx *c, const ps_pool *p, const ps_stream *s, uint64_t r) {
  ikey k = { (uint32_t)s->id, r, 0 };
  ri best = 0;
  for (ri t = p->root[2]; t; c->young_visits++)
    if (!key_lt(key_of(p, t, 2), k)) best = t, t = KID(p, t, 2, 0);
    else t = KID(p, t, 2, 1);
  return best && R(p, best)->stream == s->id ? best : 0;
}

/* The pool took fresh space: frees complete by now stop being young.
 * Each stream's queue is in completion order. */
static void age_frees(sim_ctx *c, ps_pool *p) {
  for (uint32_t k = 0; k < p->npq; k++)
    for (pqueue *q = &p->pq[k]; q->young && R(p, q->young)->u.f.time <= c->host_now;) {
      ri i = q->young;
      q->young = R(p, i)->u.f.qnext;
      yr_clear(p, i);
    }
}

/* Finds and takes r bytes for stream s: best fit among usable runs below
 * the top one, else the start of the run at the top, mapping the chunks
 * the block lands on that are not mapped (a top run too short grows the
 * pool by ceil(shortfall / granularity) chunks); only when that fails,
 * the same again with pending frees of other streams (internal deps).
 * When s may use every free record, runs are islands and the treap
 * answers. */
static ri place(sim_ctx *c, ps_pool *p, uint64_t r, uint64_t req, ps_stream *s,
                ps_alloc_note *note) {
  settle(c, p);
  ri y = young_fit(c, p, s, r);
  if (y) return carve(c, p, y, isl_head_now(p, y), r, req, s, 0, note);
  for (int internal_ok = 0; internal_ok <= p->internal; internal_ok++) {
    int mode = internal_ok ? 2 : search_mode(c, p, s), fast = mode > 0;
    ri g, top;
    if (fast) {
      top = is_free(p, p->last) ? R(p, p->last)->u.f.other : 0;
      if (mode == 1 && top && R(p, top)->in4) {
        pqueue *q = pq_find(p, R(p, top)->stream);
        if (!q_usable(c, p, q, s)) top = 0;   /* s may use none of it */
      }
      g = island_fit(c, p, r, top, s, mode == 2);
    } else g = walk_best_run(c, p, r, s, internal_ok, &top);
    uint64_t at = g ? R(p, g)->off : top ? R(p, top)->off : p->extent, had = p->reserved;
    if (!map_range(c, p, at, at + r)) continue;
    if (p->reserved != had) p->took_fresh = 1;
    if (!g) g = top ? top : p->last;   /* else the fresh chunk(s) */
    return carve(c, p, g, fast ? g : isl_head_now(p, g), r, req, s, internal_ok, note);
  }
  return 0;
}

/* ---- the pool list: handles, release candidates ---- */

static size_t pset_slot(const sim_pool_list *l, const ps_pool *p) {
  return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 20) & (l->livecap - 1);
}

/* p when it is a live (not destroyed) pool of c, else NULL. */
static ps_pool *live_pool(sim_ctx *c, ps_pool *p) {
  sim_pool_list *l = &c->pools;
  if (!p || !l->livecap) return NULL;
  for (size_t i = pset_slot(l, p); l->live[i]; i = (i + 1) & (l->livecap - 1))
    if (l->live[i] == p) return p;
  return NULL;
}

/* Adds p to the live set (kept at most half full); 0 when out of RAM. */
static int pset_add(sim_pool_list *l, ps_pool *p) {
  if (2 * (l->nlive + 1) > l->livecap) {
    size_t cap = l->livecap ? l->livecap * 2 : 16;
    ps_pool **v = calloc(cap, sizeof *v), **old = l->live;
    if (!v) return 0;
    size_t ocap = l->livecap;
    l->live = v, l->livecap = cap, l->nlive = 0;
    for (size_t i = 0; i < ocap; i++) if (old[i]) pset_add(l, old[i]);
    free(old);
  }
  size_t i = pset_slot(l, p);
  while (l->live[i]) i = (i + 1) & (l->livecap - 1);
  l->live[i] = p;
  l->nlive++;
  return 1;
}

/* Removes p from the live set (backward-shift deletion). */
static void pset_remove(sim_pool_list *l, ps_pool *p) {
  size_t m = l->livecap - 1, i = pset_slot(l, p);
  while (l->live[i] != p) i = (i + 1) & m;
  for (size_t j = (i + 1) & m; l->live[j]; j = (j + 1) & m) {
    size_t k = pset_slot(l, l->live[j]);
    if (((j - k) & m) >= ((j - i) & m)) l->live[i] = l->live[j], i = j;
  }
  l->live[i] = NULL;
  l->nlive--;
}

/* The threshold a host sync releases down to: a destroyed pool with no
 * block left keeps nothing. */
static uint64_t threshold_now(const ps_pool *p) {
  return p->destroyed && !p->live ? 0 : p->threshold;
}

/* Keeps c->pools.over = the pools with reserved above threshold_now. */
static void over_update(sim_ctx *c, ps_pool *p) {
  sim_pool_list *l = &c->pools;
  int want = p->reserved > threshold_now(p);
  if (want && !p->over) {
    if (!sim_reserve_one((void **)&l->over, &l->capover, l->nover, sizeof *l->over, 8)) return;
    l->over[l->nover++] = p;
    p->over = l->nover;
  } else if (!want && p->over) {
    ps_pool *q = l->over[--l->nover];
    l->over[p->over - 1] = q;
    q->over = p->over;
    p->over = 0;
  }
}

static void pool_free_mem(ps_pool *p) {
  sim_ipc_seg_close(p->ipc);
  for (uint32_t i = 0; i < p->npages; i++) free(p->pages[i]);
  free(p->pages), free(p->buckets), free(p->pq);
  free(p->busy), free(p->mapped), bt_free(&p->idle);
  free(p);
}

/* Frees a destroyed pool once it holds nothing. */
static void maybe_free(sim_ctx *c, ps_pool *p) {
  if (!p->destroyed || p->live || p->reserved || p->arena) return;
  if (p->over) over_update(c, p);
  sim_pool_list *l = &c->pools;
  p->npend = 0, held_update(p);
  ps_pool *q = l->v[--l->n];
  l->v[p->idx] = q, q->idx = p->idx;
  pool_free_mem(p);
}

/* ---- allocation and free ---- */

/* cudaMallocFromPoolAsync. Size 0 gives address 0 and reserves nothing.
 * On PS_ERR_MEMORY_ALLOCATION the pool is unchanged. */
int sim_pool_alloc(void *ctx, ps_pool *p, uint64_t size, ps_stream *s,
                   ps_addr *out, ps_alloc_note *note) {
  sim_ctx *c = ctx;
  ps_stream *st = sim_stream_resolve(c, s);
  if (!live_pool(c, p) || !out || p->imported) return PS_ERR_INVALID_VALUE;
  if (!st) return PS_ERR_INVALID_RESOURCE;
  sim_host_cost(c, p->loc == PS_LOCATION_HOST ? c->prof.host_pool_alloc_ns : c->prof.pool_alloc_ns);
  ps_alloc_note dummy;
  if (!note) note = &dummy;
  *note = (ps_alloc_note){ PS_RULE_NONE, 0 };
  *out = 0;
  if (size == 0) return PS_OK;
  uint64_t r = sim_round_up(size, (uint64_t)c->prof.pool_alignment);
  if (r < size) return PS_ERR_MEMORY_ALLOCATION;
  ri g = place(c, p, r, size, st, note);
  if (p->took_fresh) p->took_fresh = 0, age_frees(c, p);
  if (!g) {
    *note = (ps_alloc_note){ PS_RULE_NONE, 0 };
    return PS_ERR_MEMORY_ALLOCATION;
  }
  p->used += size, p->live++;
  if (p->used > p->used_high) p->used_high = p->used;
  *out = p->arena->base + R(p, g)->off;
  if (!c->prof.report_rules) *note = (ps_alloc_note){ PS_RULE_UNKNOWN, 0 };   /* as cuda */
  return PS_OK;
}

static void maybe_free(sim_ctx *c, ps_pool *p);

/* The importer's cudaFreeAsync of an imported block: the import goes (its
 * mapping here), not the exporter's block, once the free is reached on s:
 * work queued before it still lands in the shared bytes, as on a GPU. */
static int free_import(sim_ctx *c, ps_stream *st, sim_map *m, ps_addr a) {
  if (a != m->base || m->dropping) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.pool_free_ns);
  sim_op op = { .kind = SIM_OP_UNMAP, .dst = a };
  op.end = sim_enqueue(c, st, 0);
  if (!sim_push_op(c, &op)) return PS_ERR_MEMORY_ALLOCATION;
  m->dropping = 1;
  sim_host_advance(c, c->host_now);   /* lands it now when s is idle */
  return PS_OK;
}

void sim_pool_drop_import(sim_ctx *c, sim_map *m) {
  ps_pool *p = m->owner;
  sim_mem_unmap(&c->mem, m);
  p->live--;
  maybe_free(c, p);
}

/* cudaFreeAsync: the block becomes free at s's current position; used
 * drops now. Freeing 0 is a no-op; an unknown address or a double free is
 * PS_ERR_INVALID_VALUE. */
int sim_pool_free(void *ctx, ps_addr a, ps_stream *s) {
  sim_ctx *c = ctx;
  ps_stream *st = sim_stream_resolve(c, s);
  if (!st) return PS_ERR_INVALID_RESOURCE;
  if (a == 0) return PS_OK;
  sim_map *m = sim_mem_find(&c->mem, a);
  if (!m || m->kind != SIM_MAP_ARENA) return PS_ERR_INVALID_VALUE;
  ps_pool *p = m->owner;
  if (p->imported) return free_import(c, st, m, a);
  if (!pq_room(p) || !held_room(p)) return PS_ERR_MEMORY_ALLOCATION;
  ri i = hash_take(p, a - m->base);
  if (!i) return PS_ERR_INVALID_VALUE;
  if (p->ipc) sim_ipc_seg_freed(p->ipc, a - m->base);   /* imports refused from now */
  sim_host_cost(c, c->prof.pool_free_ns);
  rec *x = R(p, i);
  uint64_t req = x->u.l.req;
  memset(&x->u, 0, sizeof x->u);
  x->u.f.time = sim_enqueue(c, st, 0);
  x->u.f.pos = st->seq;
  x->u.f.seq = ++p->frees;
  x->young = 1;
  x->stream = st->id;
  x->kind = x->u.f.time <= c->host_now ? K_DONE : K_PENDING;   /* as settle would */
  pq_push(p, i);
  ri prev = x->prev, next = x->next;
  ri yh = i, yt = i;   /* its young run takes in its stream's young neighbours */
  if (is_young(p, prev, st->id)) {
    yh = R(p, prev)->u.f.yother;
    t_del(p, 2, yh), t_del(p, 3, prev);
  }
  if (is_young(p, next, st->id)) yt = R(p, next)->u.f.yother, t_del(p, 2, next);
  yr_bind(p, yh, yt);
  yr_ins(p, yh, x->u.f.seq);
  if (yt == i) t_ins(p, 3, i);
  int jp = is_free(p, prev) && joins(p, prev, i), jn = is_free(p, next) && joins(p, i, next);
  ri h = jp ? R(p, prev)->u.f.other : i;
  ri t = jn ? R(p, next)->u.f.other : i;
  if (jp) isl_del_keep(p, h);
  if (jn) isl_del(p, next);
  isl_bind(p, h, t);
  if (jp) isl_add_keep(p, h); else isl_add(p, h);   /* i is new: no flags yet */
  p->used -= req, p->live--;
  over_update(c, p);
  return PS_OK;
}

/* ---- release ---- */

/* Drops the chunks given back at the top of the extent, and the free
 * space over them (all retired or fresh: one island's end). */
static void drop_top(sim_ctx *c, ps_pool *p) {
  if (!p->extent) return;
  uint64_t g = p->gran, n = p->extent / g;
  while (n && !is_mapped(p, n - 1)) n--;
  uint64_t to = n * g;
  if (to == p->extent) return;
  sim_mem_hole(&c->mem, p->arena, to, p->extent - to, 0);   /* resize unmaps it */
  if (!sim_mem_resize(&c->mem, p->arena, to)) {
    sim_mem_hole(&c->mem, p->arena, to, p->extent - to, 1);
    return;
  }
  ri h = R(p, p->last)->u.f.other;
  int keep = R(p, h)->off < to;
  isl_del(p, h);
  while (p->last && R(p, p->last)->off >= to) rec_unlink(p, p->last);
  p->extent = to;
  if (keep) { isl_bind(p, h, p->last); isl_add(p, h); }
}

/* Gives back mapped chunks that hold only retired free space, highest
 * first, while reserved is above `floor`; chunks that must stay are
 * passed over. Returns the bytes given back. A destroyed pool with
 * nothing left also gives back its address space. */
static uint64_t shrink(sim_ctx *c, ps_pool *p, uint64_t floor) {
  settle(c, p);
  uint64_t gone = 0;
  for (int64_t k; p->reserved > floor && (k = bt_max(&p->idle)) >= 0;) {
    sim_mem_hole(&c->mem, p->arena, (uint64_t)k * p->gran, p->gran, 1);
    set_mapped(p, (uint64_t)k, 0);
    p->reserved -= p->gran, gone += p->gran;
  }
  drop_top(c, p);
  if (p->destroyed && !p->live && !p->reserved && p->arena) {
    sim_mem_unmap(&c->mem, p->arena);
    p->arena = NULL;
  }
  over_update(c, p);
  return gone;
}

/* Every pool gives back chunks while reserved > threshold (destroyed
 * pools with no block left: 0), so it keeps the largest multiple of the
 * granularity <= threshold. Only pools above their threshold are
 * visited. Adds the bytes given back per space to gone. */
static void give_back(sim_ctx *c, uint64_t gone[2], int marked_only) {
  for (size_t i = c->pools.nover; i-- > 0;) {
    if (i >= c->pools.nover) continue;
    ps_pool *p = c->pools.over[i];
    if (marked_only && !p->done_due) continue;
    p->done_due = 0;
    uint64_t th = threshold_now(p);
    if (p->reserved > th) gone[pool_space(p)] += shrink(c, p, th / pgran(c, p) * pgran(c, p));
    maybe_free(c, p);
  }
}

/* After a host synchronisation: pools give back what their thresholds
 * ask for. The host pays for each space that gave back: release_ns plus
 * release_ns_per_gib for device pools, host_pool_release_* for host
 * pools (measured: docs/calibration.md). */
void sim_pools_release(sim_ctx *c) {
  uint64_t gone[2] = { 0, 0 };
  const sim_profile *f = &c->prof;
  give_back(c, gone, 0);
  if (gone[SIM_DEVICE_SPACE])
    sim_cost(c, f->release_ns, f->release_ns_per_gib, gone[SIM_DEVICE_SPACE]);
  if (gone[SIM_HOST_SPACE])
    sim_cost(c, f->host_pool_release_ns, f->host_pool_release_ns_per_gib, gone[SIM_HOST_SPACE]);
}

/* After the host learned of work done: every pool holding frees not
 * retired brings them up to its clock, so the frees a sync covers are
 * retired (and merged) at the sync, in O(frees retired + pools holding
 * frees x their streams), and the next allocation does not pay for them. */
void sim_pools_settle(sim_ctx *c) {
  for (size_t i = c->pools.nheld; i-- > 0;)
    if (i < c->pools.nheld) settle(c, c->pools.held[i]);
}

/* Destroyed stream `stream` completed its work: each pool above its
 * threshold that holds a free of it not retired releases at the next
 * sim_pools_release_done (an H100 released that pool and no other:
 * docs/calibration.md, Host costs). */
void sim_pools_mark_done(sim_ctx *c, int stream) {
  for (size_t i = 0; i < c->pools.nover; i++)
    if (pq_find(c->pools.over[i], stream)) c->pools.over[i]->done_due = 1;
}

/* The marked pools give back what their thresholds ask for, at no host
 * cost (the driver does it when the stream's work ends). */
void sim_pools_release_done(sim_ctx *c) {
  uint64_t gone[2] = { 0, 0 };
  give_back(c, gone, 1);
}

/* ---- pool objects ---- */

static int pool_new(sim_ctx *c, const ps_pool_props *props, ps_pool **out) {
  sim_pool_list *l = &c->pools;
  if (!sim_reserve_one((void **)&l->v, &l->cap, l->n, sizeof *l->v, 8))
    return PS_ERR_MEMORY_ALLOCATION;
  ps_pool *p = calloc(1, sizeof *p);
  if (!p) return PS_ERR_MEMORY_ALLOCATION;
  if (!pset_add(l, p)) { free(p); return PS_ERR_MEMORY_ALLOCATION; }
  p->loc = props->location;
  p->device = p->loc == PS_LOCATION_DEVICE ? props->device : 0;
  /* Its own device reaches a device pool; a host pool is granted the
   * context's device at creation, as the cuda backend does. Other
   * devices: none (measured on the GPU, default pools too). */
  if (p->loc == PS_LOCATION_DEVICE) p->access[p->device] = PS_ACCESS_RW;
  else p->access[c->dev] = PS_ACCESS_RW;
  p->follow = p->opportunistic = p->internal = 1;
  p->max_size = sim_round_up(props->max_size, gran(c));
  if (p->max_size < props->max_size) p->max_size = 0;   /* overflow: no limit */
  p->idx = l->n;
  p->list = l;
  l->v[l->n++] = p;
  *out = p;
  return PS_OK;
}

/* The default pool of device dev, made on first use. */
static int default_pool(sim_ctx *c, int dev, ps_pool **out) {
  if (!c->default_pool[dev]) {
    ps_pool_props props = { PS_LOCATION_DEVICE, dev, 0, 0 };
    int st = pool_new(c, &props, &c->default_pool[dev]);
    if (st != PS_OK) return st;
    c->default_pool[dev]->is_default = 1;
  }
  *out = c->default_pool[dev];
  return PS_OK;
}

/* Creates the context's device's default pool. */
int sim_pools_init(sim_ctx *c) {
  ps_pool *p;
  return default_pool(c, c->dev, &p);
}

/* Frees every pool and its records (the arenas go with sim_mem). */
void sim_pools_free(sim_ctx *c) {
  for (size_t i = 0; i < c->pools.n; i++) pool_free_mem(c->pools.v[i]);
  free(c->pools.v), free(c->pools.live), free(c->pools.over), free(c->pools.held);
  memset(&c->pools, 0, sizeof c->pools);
}

/* An IPC pool (props->ipc, device pools only in the sim) gets its shared
 * segment now, its arena's size fixed: max_size, else the device. */
int sim_pool_create(void *ctx, const ps_pool_props *props, ps_pool **out) {
  sim_ctx *c = ctx;
  if (!props || !out) return PS_ERR_INVALID_VALUE;
  if (props->location != PS_LOCATION_DEVICE && props->location != PS_LOCATION_HOST)
    return PS_ERR_INVALID_VALUE;
  if (props->location == PS_LOCATION_DEVICE && !sim_valid_dev(c, props->device))
    return PS_ERR_INVALID_VALUE;
  if (props->location == PS_LOCATION_HOST && props->device != 0) return PS_ERR_INVALID_VALUE;
  /* A host-location IPC pool: cudaErrorInvalidValue, measured on an H200
   * (docs/calibration/h200x2-2026-11-27-issue12.log). */
  if (props->ipc && props->location == PS_LOCATION_HOST) return PS_ERR_INVALID_VALUE;
  sim_ipc_seg *g = NULL;
  if (props->ipc) {
    uint64_t va = props->max_size ? sim_round_up(props->max_size, gran(c))
                                  : sim_round_up((uint64_t)c->prof.memory, gran(c));
    if (!(g = sim_ipc_seg_create(va, props->device))) return PS_ERR_MEMORY_ALLOCATION;
  }
  int st = pool_new(c, props, out);
  if (st != PS_OK) sim_ipc_seg_close(g);
  else (*out)->ipc = g;
  return st;
}

/* cudaMemPoolExportToShareableHandle: a new fd of the pool's segment. A
 * pool made without ipc, or an imported one: cudaErrorInvalidValue
 * (CUDA's documented answer for a pool without handle types; assumed). */
int sim_pool_export(void *ctx, ps_pool *p, int *fd) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p) || !fd || !p->ipc || p->imported) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.api_ns);
  *fd = sim_ipc_seg_fd(p->ipc);
  return *fd < 0 ? PS_ERR_MEMORY_ALLOCATION : PS_OK;
}

/* cudaMemPoolImportFromShareableHandle: a pool over another process's
 * segment; its counters read 0 (measured on an H200). */
int sim_pool_import(void *ctx, int fd, ps_pool **out) {
  sim_ctx *c = ctx;
  if (!out) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.api_ns);
  sim_ipc_seg *g = NULL;
  int st = sim_ipc_seg_open(fd, &g);
  if (st != PS_OK) return st;
  if (!sim_valid_dev(c, sim_ipc_seg_device(g))) { sim_ipc_seg_close(g); return PS_ERR_INVALID_DEVICE; }
  ps_pool_props props = { PS_LOCATION_DEVICE, sim_ipc_seg_device(g), 0, 1 };
  st = pool_new(c, &props, out);
  if (st != PS_OK) { sim_ipc_seg_close(g); return st; }
  (*out)->ipc = g, (*out)->imported = 1;
  return PS_OK;
}

/* cudaMemPoolExportPointer: a live block's token of an exported pool's
 * own block (an IPC pool, not imported). */
int sim_ptr_export(void *ctx, ps_addr a, uint8_t out[PS_IPC_BYTES]) {
  sim_ctx *c = ctx;
  sim_map *m = sim_mem_find(&c->mem, a);
  if (!out || !m || m->kind != SIM_MAP_ARENA) return PS_ERR_INVALID_VALUE;
  ps_pool *p = m->owner;
  if (!p->ipc || p->imported) return PS_ERR_INVALID_VALUE;
  ri i = hash_find(p, a - m->base);
  if (!i) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.api_ns);
  return sim_ipc_seg_export(p->ipc, a - m->base, R(p, i)->u.l.req, out);
}

/* cudaMemPoolImportPointer: maps the exporter's block here. A token of
 * another pool or of a block the exporter freed: cudaErrorInvalidValue. */
int sim_ptr_import(void *ctx, ps_pool *p, const uint8_t data[PS_IPC_BYTES], ps_addr *out) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p) || !data || !out || !p->imported) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.api_ns);
  uint64_t off, size;
  int st = sim_ipc_seg_check(p->ipc, data, &off, &size);
  if (st != PS_OK) return st;
  sim_map *m = sim_mem_attach(&c->mem, SIM_DEVICE_SPACE, size,
                              sim_ipc_seg_data(p->ipc) + off, SIM_MAP_ARENA);
  if (!m) return PS_ERR_MEMORY_ALLOCATION;
  m->owner = p;
  m->dev = p->device;
  p->live++;
  *out = m->base;
  return PS_OK;
}

int sim_pool_default(void *ctx, int dev, ps_pool **out) {
  sim_ctx *c = ctx;
  if (!sim_valid_dev(c, dev)) return PS_ERR_INVALID_DEVICE;
  if (!out) return PS_ERR_INVALID_VALUE;
  return default_pool(c, dev, out);
}

/* cudaMemPoolGetAccess: a device pool's own device reads rw. A device out
 * of range: cudaErrorInvalidValue (measured with 9,
 * docs/calibration/h200x2-2026-11-27-issue12.log; -1 assumed alike),
 * unlike pool_set_access. */
int sim_pool_get_access(void *ctx, ps_pool *p, int dev, ps_access *out) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p)) return PS_ERR_INVALID_VALUE;
  if (!sim_valid_dev(c, dev)) return PS_ERR_INVALID_VALUE;
  if (!out) return PS_ERR_INVALID_VALUE;
  *out = (ps_access)p->access[dev];
  return PS_OK;
}

/* Whether dev has rw access to p's memory (p may be destroyed with blocks
 * still allocated: its access stays). */
int sim_pool_reaches(const ps_pool *p, int dev) {
  return dev >= 0 && dev < SIM_MAX_DEVICES && p->access[dev] == PS_ACCESS_RW;
}

/* cudaMemPoolSetAccess, as measured on two H200s
 * (docs/calibration/h200x2-2026-11-24-peer.log): read-only is never
 * supported (cudaErrorNotSupported); a device pool's own device stays rw
 * (none: cudaErrorInvalidDevice); another device needs peer capability
 * (cudaErrorInvalidDevice without it, CUDA's docs); out of range:
 * cudaErrorInvalidDevice. The access covers every block, past and future,
 * and can be revoked. Not measured: which error comes first when several
 * apply (the sim checks range, then read-only, then the own device, then
 * capability). */
int sim_pool_set_access(void *ctx, ps_pool *p, int dev, ps_access a) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p)) return PS_ERR_INVALID_VALUE;
  if (!sim_valid_dev(c, dev)) return PS_ERR_INVALID_DEVICE;
  if (a != PS_ACCESS_NONE && a != PS_ACCESS_READ && a != PS_ACCESS_RW) return PS_ERR_INVALID_VALUE;
  if (a == PS_ACCESS_READ) return PS_ERR_NOT_SUPPORTED;
  int own = p->loc == PS_LOCATION_DEVICE && dev == p->device;
  if (own) return a == PS_ACCESS_RW ? PS_OK : PS_ERR_INVALID_DEVICE;
  if (p->loc == PS_LOCATION_DEVICE && a == PS_ACCESS_RW && !c->peer_capable)
    return PS_ERR_INVALID_DEVICE;
  sim_host_cost(c, c->prof.api_ns);
  p->access[dev] = (uint8_t)a;
  return PS_OK;
}

/* Marks p destroyed: its handle is invalid; live blocks stay valid. As
 * the cuda backend does (it destroys a pool only once its last block is
 * freed), the pool keeps its release threshold while blocks are live;
 * after that its memory goes back at host syncs as frees are retired, and
 * the pool is freed once it holds nothing. */
int sim_pool_destroy(void *ctx, ps_pool *p) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p) || p->is_default) return PS_ERR_INVALID_VALUE;
  p->destroyed = 1;
  pset_remove(&c->pools, p);
  if (!p->live) shrink(c, p, 0);
  over_update(c, p);
  maybe_free(c, p);
  return PS_OK;
}

/* Sets an attribute; *_HIGH accept only 0 (reset to current). */
int sim_pool_set(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t v) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p)) return PS_ERR_INVALID_VALUE;
  switch (a) {
  case PS_ATTR_RELEASE_THRESHOLD:
    if (p->imported) return PS_ERR_INVALID_VALUE;   /* as the GPU (measured) */
    p->threshold = v; over_update(c, p); return PS_OK;
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
  /* An imported pool's attributes cannot be read (measured on an H200,
   * 2026-11-27: cudaErrorInvalidValue). */
  if (p->imported) return PS_ERR_INVALID_VALUE;
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

/* The pool's last mapping: the address of its first newly mapped chunk
 * and the bytes mapped; PS_ERR_NOT_READY before any. Changes nothing. */
int sim_pool_last_map(void *ctx, ps_pool *p, ps_addr *addr, uint64_t *size) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p) || !addr || !size) return PS_ERR_INVALID_VALUE;
  if (!p->arena || !p->map_size) return PS_ERR_NOT_READY;
  *addr = p->arena->base + p->map_off;
  *size = p->map_size;
  return PS_OK;
}

/* cudaMemPoolTrimTo: gives back retired free chunks from the top while
 * reserved - granularity >= keep, i.e. keeps ceil(keep / granularity)
 * chunks (at most what is reserved), whatever the threshold. Frees that
 * completed on the device but were not retired by a host sync are kept
 * (not measured; the conservative choice). */
int sim_pool_trim(void *ctx, ps_pool *p, uint64_t keep) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p) || p->imported) return PS_ERR_INVALID_VALUE;   /* imported: measured */
  uint64_t floor = sim_round_up(keep, pgran(c, p));
  if (floor < keep) return PS_OK;   /* overflow: keep everything */
  uint64_t gone = shrink(c, p, floor);
  const sim_profile *f = &c->prof;
  if (gone && p->loc == PS_LOCATION_HOST)
    sim_cost(c, f->host_pool_trim_ns, f->host_pool_trim_ns_per_gib, gone);
  else if (gone)
    sim_cost(c, f->trim_ns, f->trim_ns_per_gib, gone);
  return PS_OK;
}

/* Bytes the device has mapped (pool chunks and cudaMalloc). */
uint64_t sim_device_reserved(const sim_ctx *c) {
  return c->mem.dev_mapped[c->dev];
}

uint64_t sim_device_total(const sim_ctx *c) { return (uint64_t)c->prof.memory; }

/* ---- the oracle ---- */

int sim_pool_truth(void *ctx, ps_pool *p, void (*each)(void *, const ps_truth *), void *ud);

/* Pool p's records in address order, each as a ps_truth: the ledger's
 * oracle (tests only). A record's kind follows the host's clock lazily
 * (settle): it is given as settle would make it now, and nothing changes. */
int sim_pool_truth(void *ctx, ps_pool *p, void (*each)(void *, const ps_truth *), void *ud) {
  sim_ctx *c = ctx;
  if (!live_pool(c, p) || !each) return PS_ERR_INVALID_VALUE;
  if (!p->arena) return PS_OK;
  for (ri i = p->first; i; i = R(p, i)->next) {
    const rec *x = R(p, i);
    ps_truth t = { .addr = p->arena->base + x->off, .size = rend(p, i) - x->off,
                   .stream = x->stream };
    switch (x->kind) {
    case K_LIVE: t.kind = PS_TRUTH_LIVE, t.req = x->u.l.req, t.stream = -1; break;
    case K_FRESH: t.kind = PS_TRUTH_FRESH, t.stream = -1; break;
    case K_RETIRED: t.kind = PS_TRUTH_RETIRED, t.seq = x->u.f.seq; break;
    default:
      t.seq = x->u.f.seq;
      t.kind = x->kind == K_PENDING && x->u.f.time > c->host_now ? PS_TRUTH_PENDING : PS_TRUTH_DONE;
      if (sim_host_knows(c, x->stream, x->u.f.pos)) t.kind = PS_TRUTH_RETIRED;
      break;
    }
    each(ud, &t);
  }
  return PS_OK;
}
