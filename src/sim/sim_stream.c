/*
 * sim_stream.c: the virtual clock, streams, events, vector clocks and the
 * queue of device work whose memory effects land at their end times.
 *
 * Costs: handle checks are O(1) (hash tables of live handles); a vector
 * clock costs its entries, never the highest id; a device sync is
 * O(streams kept). A destroyed stream is freed ("dropped") once the host
 * has learned its last position and all it knew.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_model.h"

/* ---- tables ---- */

static size_t home(const sim_table *t, uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return (size_t)key & (t->cap - 1);
}

/* The slot holding key, or NULL. */
sim_slot *sim_table_find(const sim_table *t, uint64_t key) {
  if (!t->n || !key) return NULL;
  for (size_t i = home(t, key);; i = (i + 1) & (t->cap - 1)) {
    if (t->v[i].key == key) return &t->v[i];
    if (!t->v[i].key) return NULL;
  }
}

/* Rehashes t into cap slots (a power of two, above 2 n). 0 when out of
 * memory (t unchanged). */
static int table_resize(sim_table *t, size_t cap) {
  sim_table u = { calloc(cap, sizeof(sim_slot)), t->n, cap };
  if (!u.v) return 0;
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->v[i].key) continue;
    size_t j = home(&u, t->v[i].key);
    while (u.v[j].key) j = (j + 1) & (cap - 1);
    u.v[j] = t->v[i];
  }
  free(t->v);
  *t = u;
  return 1;
}

sim_slot *sim_table_put(sim_table *t, uint64_t key, int64_t val) {
  sim_slot *s = sim_table_find(t, key);
  if (s || !key) return s;
  if (2 * (t->n + 1) > t->cap && !table_resize(t, t->cap ? 2 * t->cap : 8)) return NULL;
  size_t i = home(t, key);
  while (t->v[i].key) i = (i + 1) & (t->cap - 1);
  t->v[i] = (sim_slot){ key, val };
  t->n++;
  return &t->v[i];
}

/* Removes key, shifting later entries of its probe run back (no
 * tombstones); shrinks a table that became mostly empty. */
int sim_table_remove(sim_table *t, uint64_t key) {
  sim_slot *s = sim_table_find(t, key);
  if (!s) return 0;
  size_t mask = t->cap - 1, i = (size_t)(s - t->v);
  for (size_t j = (i + 1) & mask; t->v[j].key; j = (j + 1) & mask)
    if (((j - home(t, t->v[j].key)) & mask) >= ((j - i) & mask)) {
      t->v[i] = t->v[j];   /* i lies on j's probe path: j may move there */
      i = j;
    }
  t->v[i] = (sim_slot){ 0, 0 };
  t->n--;
  if (t->cap > 8 && 8 * t->n < t->cap) table_resize(t, t->cap / 2);
  return 1;
}

void sim_table_free(sim_table *t) {
  free(t->v);
  *t = (sim_table){ NULL, 0, 0 };
}

/* ---- vector clocks ---- */

/* The position of stream id that c knows, 0 when none. */
int64_t sim_vc_get(const sim_vclock *c, int id) {
  const sim_slot *s = id >= 0 ? sim_table_find(c, (uint64_t)id + 1) : NULL;
  return s ? s->val : 0;
}

/* c[id] = max(c[id], pos). 0 when out of memory (c unchanged). */
int sim_vc_raise(sim_vclock *c, int id, int64_t pos) {
  if (id < 0 || pos <= sim_vc_get(c, id)) return 1;
  sim_slot *s = sim_table_put(c, (uint64_t)id + 1, pos);
  if (!s) return 0;
  s->val = pos;
  return 1;
}

/* c = elementwise max(c, o): O(entries of o). */
int sim_vc_merge(sim_vclock *c, const sim_vclock *o) {
  for (size_t i = 0; i < o->cap; i++)
    if (o->v[i].key && !sim_vc_raise(c, (int)(o->v[i].key - 1), o->v[i].val)) return 0;
  return 1;
}

/* c = o. 0 when out of memory (c unchanged). */
int sim_vc_copy(sim_vclock *c, const sim_vclock *o) {
  if (c == o) return 1;
  if (c->cap != o->cap) {
    sim_slot *v = o->cap ? malloc(o->cap * sizeof *v) : NULL;
    if (o->cap && !v) return 0;
    free(c->v);
    c->v = v, c->cap = o->cap;
  }
  if (o->cap) memcpy(c->v, o->v, o->cap * sizeof *c->v);
  c->n = o->n;
  return 1;
}

void sim_vc_free(sim_vclock *c) { sim_table_free(c); }

/* ---- the queue of memory effects: a min-heap on (end, seq) ---- */

static int op_less(const sim_op *a, const sim_op *b) {
  return a->end != b->end ? a->end < b->end : a->seq < b->seq;
}

static void op_swap(sim_op *a, sim_op *b) { sim_op t = *a; *a = *b; *b = t; }

/* Queues op (its data now owned by the queue). 0 when out of memory. */
int sim_push_op(sim_ctx *c, const sim_op *op) {
  if (!sim_reserve_one((void **)&c->ops, &c->capops, c->nops, sizeof *c->ops, 64)) return 0;
  size_t i = c->nops++;
  c->ops[i] = *op;
  c->ops[i].seq = c->op_seq++;
  while (i && op_less(&c->ops[i], &c->ops[(i - 1) / 2])) {
    op_swap(&c->ops[i], &c->ops[(i - 1) / 2]);
    i = (i - 1) / 2;
  }
  return 1;
}

static void op_pop(sim_ctx *c) {
  c->ops[0] = c->ops[--c->nops];
  for (size_t i = 0;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < c->nops && op_less(&c->ops[l], &c->ops[m])) m = l;
    if (r < c->nops && op_less(&c->ops[r], &c->ops[m])) m = r;
    if (m == i) break;
    op_swap(&c->ops[i], &c->ops[m]);
    i = m;
  }
}

/* Applies op to whatever is mapped at its addresses now; an op whose
 * range is no longer mapped (the chunk was released) has no effect. */
static void op_apply(sim_ctx *c, const sim_op *op) {
  if (op->kind == SIM_OP_UNMAP) {
    sim_map *m = sim_mem_find(&c->mem, op->dst);
    if (m && m->foreign && m->dropping && m->base == op->dst) sim_pool_drop_import(c, m);
    return;
  }
  sim_map *d = sim_mem_range(&c->mem, op->dst, op->n);
  if (!d) return;
  uint64_t off = op->dst - d->base;
  if (op->kind == SIM_OP_FILL) sim_mem_fill(d, off, op->n, op->byte);
  else if (op->kind == SIM_OP_WRITE) sim_mem_write(d, off, op->data, op->n);
  else {
    sim_map *s = sim_mem_range(&c->mem, op->src, op->n);
    if (s) sim_mem_copy(d, off, s, op->src - s->base, op->n);
  }
}

/* Applies, in (end, seq) order, every queued op that ended by host_now. */
static void apply_due(sim_ctx *c) {
  while (c->nops && c->ops[0].end <= c->host_now) {
    sim_op op = c->ops[0];
    op_pop(c);
    op_apply(c, &op);
    free(op.data);
  }
}

void sim_land_until(sim_ctx *c, int64_t t) {
  while (c->nops && c->ops[0].end <= t) {
    sim_op op = c->ops[0];
    op_pop(c);
    op_apply(c, &op);
    free(op.data);
  }
}

/* ---- the host clock ---- */

/* host_now = max(host_now, t); due device work lands. */
void sim_host_advance(sim_ctx *c, int64_t t) {
  if (t > c->host_now) c->host_now = t;
  apply_due(c);
}

/* The host spends ns on an API call. */
void sim_host_cost(sim_ctx *c, double ns) {
  sim_host_advance(c, c->host_now + (int64_t)llround(ns));
}

/* The host spends ns plus ns_per_gib for each GiB of bytes. */
void sim_cost(sim_ctx *c, double ns, double ns_per_gib, uint64_t bytes) {
  sim_host_cost(c, ns + (double)bytes / GIB_D * ns_per_gib);
}

/* ---- what the host knows ---- */

/* Whether id names a dropped stream: created, and no longer in host_known
 * (which has an entry for every stream not dropped). */
static int dropped(const sim_ctx *c, int id) {
  return id > 0 && id <= c->stream_ids && !sim_table_find(&c->host_known, (uint64_t)id + 1);
}

int sim_host_knows(const sim_ctx *c, int stream, int64_t pos) {
  const sim_slot *k = stream >= 0 ? sim_table_find(&c->host_known, (uint64_t)stream + 1) : NULL;
  if (k) return k->val >= pos;
  return dropped(c, stream) || pos <= 0;
}

/* The host learns position pos of stream id (a dropped one is known). */
static void host_raise(sim_ctx *c, int id, int64_t pos) {
  sim_slot *k = id >= 0 ? sim_table_find(&c->host_known, (uint64_t)id + 1) : NULL;
  if (!k && id == 0 && pos > 0) k = sim_table_put(&c->host_known, 1, 0);
  if (k && pos > k->val) k->val = pos, c->host_epoch++;
}

/* The host learns everything clock v knows. */
static void host_learn(sim_ctx *c, const sim_vclock *v) {
  for (size_t i = 0; i < v->cap; i++)
    if (v->v[i].key) host_raise(c, (int)(v->v[i].key - 1), v->v[i].val);
}

/* The host learns that s's work so far completed, and all s knew. */
static void learn_stream(sim_ctx *c, ps_stream *s) {
  host_raise(c, s->id, s->seq);
  host_learn(c, &s->clock);
}

/* Whether the host knows s's last position and everything s knew. */
static int learned(const sim_ctx *c, const ps_stream *s) {
  if (!sim_host_knows(c, s->id, s->seq)) return 0;
  for (size_t i = 0; i < s->clock.cap; i++) {
    const sim_slot *x = &s->clock.v[i];
    if (x->key && !sim_host_knows(c, (int)(x->key - 1), x->val)) return 0;
  }
  return 1;
}

/* Removes from v the entries of dropped streams once they may be most of
 * it: amortised O(1) per entry added. Out of memory: v stays whole. */
static void tidy(sim_ctx *c, sim_vclock *v) {
  if (v->n <= 2 * c->nstreams + 16) return;
  sim_vclock kept = { NULL, 0, 0 };
  for (size_t i = 0; i < v->cap; i++) {
    const sim_slot *x = &v->v[i];
    if (x->key && !dropped(c, (int)(x->key - 1)) && !sim_table_put(&kept, x->key, x->val)) {
      sim_table_free(&kept);
      return;
    }
  }
  sim_table_free(v);
  *v = kept;
}

/* ---- tails: running maxima ---- */

/* s's tail may grow in this call: fold it in later. Room is reserved
 * (captouched > nstreams) and each stream is listed once. */
static void mark_touched(sim_ctx *c, ps_stream *s) {
  if (s == &c->legacy || s->touched) return;
  s->touched = 1;
  c->touched[c->ntouched++] = s;
}

/* Folds the touched streams' tails into tail_all and tail_blocking. Tails
 * only grow, so these running maxima equal the maxima over every stream
 * ever created, as a scan would find them. The last stream resolved stays
 * touched: its call may not be over. */
static void fold_tails(sim_ctx *c) {
  for (size_t i = 0; i < c->ntouched; i++) {
    ps_stream *s = c->touched[i];
    c->tail_all = sim_max64(c->tail_all, s->tail);
    if (s->blocking) c->tail_blocking = sim_max64(c->tail_blocking, s->tail);
    s->touched = 0;
  }
  c->ntouched = 0;
  if (c->resolved) mark_touched(c, c->resolved);
}

/* ---- streams destroyed busy: a min-heap on tail ---- */

static void due_set(sim_ctx *c, size_t i, ps_stream *s) { c->due[i] = s, s->due = i + 1; }

static void due_up(sim_ctx *c, size_t i) {
  ps_stream *s = c->due[i];
  for (; i && c->due[(i - 1) / 2]->tail > s->tail; i = (i - 1) / 2)
    due_set(c, i, c->due[(i - 1) / 2]);
  due_set(c, i, s);
}

static void due_down(sim_ctx *c, size_t i) {
  ps_stream *s = c->due[i];
  for (;;) {
    size_t l = 2 * i + 1, m = l + 1 < c->ndue && c->due[l + 1]->tail < c->due[l]->tail ? l + 1 : l;
    if (l >= c->ndue || c->due[m]->tail >= s->tail) break;
    due_set(c, i, c->due[m]);
    i = m;
  }
  due_set(c, i, s);
}

/* Adds destroyed stream s; 0 when out of memory. */
static int due_push(sim_ctx *c, ps_stream *s) {
  if (!sim_reserve_one((void **)&c->due, &c->capdue, c->ndue, sizeof *c->due, 8)) return 0;
  due_set(c, c->ndue++, s);
  due_up(c, c->ndue - 1);
  return 1;
}

/* Takes s out of the heap (when it is there). */
static void due_remove(sim_ctx *c, ps_stream *s) {
  if (!s->due) return;
  size_t i = s->due - 1;
  s->due = 0;
  ps_stream *last = c->due[--c->ndue];
  if (last == s) return;
  due_set(c, i, last);
  due_up(c, i);
  due_down(c, last->due - 1);
}

static void drop(sim_ctx *c, ps_stream *s);
static void learn_stream(sim_ctx *c, ps_stream *s);
static int learned(const sim_ctx *c, const ps_stream *s);

void sim_streams_due(sim_ctx *c) {
  if (!c->ndue || c->due[0]->tail > c->host_now) return;
  while (c->ndue && c->due[0]->tail <= c->host_now) {
    ps_stream *s = c->due[0];
    due_remove(c, s);
    sim_pools_mark_done(c, s->id);
    learn_stream(c, s);
    if (learned(c, s)) drop(c, s);
  }
  if (!c->ndue) free(c->due), c->due = NULL, c->capdue = 0;
  sim_pools_release_done(c);
}

/* ---- streams ---- */

/* Frees destroyed stream s, which the host has fully learned (learned()):
 * no answer depends on it any more. Its clock entries elsewhere go stale
 * and sim_host_knows is true for all its positions. */
static void drop(sim_ctx *c, ps_stream *s) {
  if (c->resolved == s) c->resolved = NULL;
  due_remove(c, s);
  if (s->touched) fold_tails(c);
  ps_stream *last = c->streams[--c->nstreams];
  c->streams[s->slot] = last, last->slot = s->slot;
  sim_table_remove(&c->host_known, (uint64_t)s->id + 1);
  c->ndestroyed--;
  sim_vc_free(&s->clock);
  free(s);
}

/* Drops every destroyed stream the host has fully learned. Run when their
 * number has grown by a quarter of the streams kept plus as many again:
 * amortised O(1) per destroy. */
static void sweep(sim_ctx *c) {
  for (size_t i = c->nstreams; i-- > 0;)
    if (c->streams[i]->destroyed && learned(c, c->streams[i])) drop(c, c->streams[i]);
  c->sweep_at = 2 * c->ndestroyed + c->nstreams / 4 + 16;
}

ps_stream *sim_stream_resolve(sim_ctx *c, ps_stream *s) {
  if (!s) return &c->legacy;
  if (!sim_table_find(&c->live, (uintptr_t)s)) return NULL;
  mark_touched(c, s);
  c->resolved = s;
  return s;
}

/* The latest tail of the blocking created streams (destroyed included:
 * their work still runs). */
static int64_t blocking_tail(sim_ctx *c) {
  fold_tails(c);
  return c->tail_blocking;
}

/* When work enqueued on s now could start, legacy-stream rules included. */
static int64_t start_time(sim_ctx *c, ps_stream *s) {
  int64_t t = sim_max64(c->host_now, s->tail);
  if (s == &c->legacy) t = sim_max64(t, blocking_tail(c));
  else if (s->blocking) t = sim_max64(t, c->legacy.tail);
  return t;
}

/* Whether an op of dur ns enqueued on s (resolved) now ends within the clock. */
int sim_enqueue_fits(sim_ctx *c, ps_stream *s, int64_t dur) {
  return sim_clock_fits(start_time(c, s), dur);
}

/* Enqueues an op of dur ns on s (resolved): it starts when s, the legacy
 * rules and the host allow, takes the next position on s; returns its end. */
int64_t sim_enqueue(sim_ctx *c, ps_stream *s, int64_t dur) {
  int64_t start = start_time(c, s), end = start + (dur > 0 ? dur : 0);
  mark_touched(c, s);
  s->span_queued = c->host_now, s->span_start = start, s->span_end = end;
  s->tail = end;
  s->seq++;
  sim_vc_raise(&s->clock, s->id, s->seq);
  tidy(c, &s->clock);
  return end;
}

/* When everything a sync of s waits for is done (legacy: blocking too). */
int64_t sim_stream_done_time(sim_ctx *c, ps_stream *s) {
  return s == &c->legacy ? sim_max64(s->tail, blocking_tail(c)) : s->tail;
}

/* PS_INTERRUPTED when the host would have to wait until t and the
 * config's interrupted() says stop; nothing moves then. */
int sim_wait_check(sim_ctx *c, int64_t t) {
  if (t > c->host_now && c->interrupted && c->interrupted(c->interrupted_ud))
    return PS_INTERRUPTED;
  return PS_OK;
}

/* The host learns every blocking stream (after a legacy sync); the
 * destroyed ones are then fully learned, and dropped. */
static void learn_blocking(sim_ctx *c) {
  for (size_t i = c->nstreams; i-- > 0;) {
    ps_stream *s = c->streams[i];
    if (!s->blocking) continue;
    learn_stream(c, s);
    if (s->destroyed) drop(c, s);
  }
}

/* Host waits for s (resolved), retires its frees; releases if configured. */
int sim_sync_stream(sim_ctx *c, ps_stream *s) {
  int64_t t = sim_stream_done_time(c, s);
  if (sim_wait_check(c, t) != PS_OK) return PS_INTERRUPTED;
  sim_host_cost(c, c->prof.sync_ns);
  sim_host_advance(c, t);
  sim_streams_due(c);
  learn_stream(c, s);
  if (s == &c->legacy) learn_blocking(c);
  sim_pools_settle(c);
  if (c->prof.release_on_stream_sync) sim_pools_release(c);
  return PS_OK;
}

/* When every stream's work is done (destroyed streams included). */
static int64_t device_done_time(sim_ctx *c) {
  fold_tails(c);
  return sim_max64(c->legacy.tail, c->tail_all);
}

/* After the host waited for every stream: it learns each one's last
 * position, in O(streams kept). Their clocks need no merging: what any
 * stream (or event) knows of stream j never passes j's own seq, since
 * clock entries come from j's enqueues or frees and spread only by copy
 * and merge; and a dropped stream is known whole. So every destroyed
 * stream is fully learned now, and dropped. */
static void learn_all(sim_ctx *c) {
  host_raise(c, 0, c->legacy.seq);
  for (size_t i = 0; i < c->nstreams; i++) host_raise(c, c->streams[i]->id, c->streams[i]->seq);
  for (size_t i = c->nstreams; i-- > 0;)
    if (c->streams[i]->destroyed) drop(c, c->streams[i]);
}

/* Host waits for every stream; with retire it learns every free and
 * pools release; without, only the time passes. */
void sim_sync_device(sim_ctx *c, int retire) {
  sim_host_advance(c, device_done_time(c));
  if (!retire) return;
  learn_all(c);
  sim_pools_settle(c);
  sim_pools_release(c);
}

/* cudaDeviceSynchronize: retires every free; release_on_device_sync
 * decides whether pools give memory back. */
int sim_device_sync(void *ctx) {
  sim_ctx *c = ctx;
  if (sim_wait_check(c, device_done_time(c)) != PS_OK) return PS_INTERRUPTED;
  sim_host_cost(c, c->prof.sync_ns);
  sim_host_advance(c, device_done_time(c));
  learn_all(c);
  sim_pools_settle(c);
  if (c->prof.release_on_device_sync) sim_pools_release(c);
  return PS_OK;
}

/* Creates a stream; priority is clamped to [-5, 0] as CUDA does. Ids
 * grow from 1 and are never reused. */
int sim_stream_create(void *ctx, int dev, int priority, int blocking, ps_stream **out) {
  sim_ctx *c = ctx;
  if (!out) return PS_ERR_INVALID_VALUE;
  if (!sim_valid_dev(c, dev)) return PS_ERR_INVALID_DEVICE;
  if (!sim_reserve_one((void **)&c->streams, &c->capstreams, c->nstreams, sizeof *c->streams, 8) ||
      !sim_reserve_one((void **)&c->touched, &c->captouched, c->nstreams, sizeof *c->touched, 8))
    return PS_ERR_MEMORY_ALLOCATION;
  ps_stream *s = calloc(1, sizeof *s);
  if (!s) return PS_ERR_MEMORY_ALLOCATION;
  int id = c->stream_ids + 1;
  if (!sim_table_put(&c->host_known, (uint64_t)id + 1, 0)) { free(s); return PS_ERR_MEMORY_ALLOCATION; }
  if (!sim_table_put(&c->live, (uintptr_t)s, 0)) {
    sim_table_remove(&c->host_known, (uint64_t)id + 1);
    free(s);
    return PS_ERR_MEMORY_ALLOCATION;
  }
  c->stream_ids = id;
  s->id = id;
  s->dev = dev;
  s->priority = priority > 0 ? 0 : priority < -5 ? -5 : priority;
  s->blocking = blocking != 0;
  s->span_start = -1;
  s->slot = c->nstreams;
  c->streams[c->nstreams++] = s;
  *out = s;
  return PS_OK;
}

/* Marks s destroyed; its queued work still runs (as in CUDA). A stream
 * whose work is done is retired: its frees count as complete and pools
 * give memory back, as at a sync of it (measured: docs/calibration.md E3).
 * A busy one does the same when its work completes, off the host's clock
 * (release_on_destroyed_stream_done; measured on an H100: the memory was
 * back 26-31 ms after destroying a stream behind a 30 ms spin), or at a
 * sync that covers it first. Once the host has fully learned it, it is
 * dropped (now, or later). */
int sim_stream_destroy(void *ctx, ps_stream *s) {
  sim_ctx *c = ctx;
  if (!s || !sim_table_find(&c->live, (uintptr_t)s)) return PS_ERR_INVALID_RESOURCE;
  int idle = s->tail <= c->host_now, later = c->prof.release_on_destroyed_stream_done && !idle;
  if (later && !due_push(c, s)) return PS_ERR_MEMORY_ALLOCATION;
  sim_table_remove(&c->live, (uintptr_t)s);
  s->destroyed = 1;
  c->ndestroyed++;
  if (c->prof.release_on_stream_destroy && idle) {
    learn_stream(c, s);
    sim_pools_release(c);
  }
  if (learned(c, s)) drop(c, s);
  if (c->ndestroyed > c->sweep_at) sweep(c);
  return PS_OK;
}

int sim_stream_priority_range(void *ctx, int *least, int *greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return PS_OK;
}

/* cudaStreamSynchronize. */
int sim_stream_sync(void *ctx, ps_stream *s) {
  sim_ctx *c = ctx;
  ps_stream *r = sim_stream_resolve(c, s);
  return r ? sim_sync_stream(c, r) : PS_ERR_INVALID_RESOURCE;
}

/* *idle = whether s's work is done at host_now; moves no clock. */
int sim_stream_query(void *ctx, ps_stream *s, int *idle) {
  sim_ctx *c = ctx;
  ps_stream *r = sim_stream_resolve(c, s);
  if (!r || !idle) return r ? PS_ERR_INVALID_VALUE : PS_ERR_INVALID_RESOURCE;
  sim_host_cost(c, c->prof.query_ns);
  *idle = sim_stream_done_time(c, r) <= c->host_now;
  return PS_OK;
}

static void ipc_news(sim_ctx *c, ps_event *e);

/* s's later work starts after e's work; s learns what e knew. Waiting on
 * an event never recorded is a no-op. */
int sim_stream_wait(void *ctx, ps_stream *s, ps_event *e) {
  sim_ctx *c = ctx;
  ps_stream *r = sim_stream_resolve(c, s);
  if (!r) return PS_ERR_INVALID_RESOURCE;
  if (!sim_event_valid(c, e)) return PS_ERR_INVALID_RESOURCE;
  sim_host_cost(c, c->prof.event_api_ns);
  ipc_news(c, e);
  if (!e->recorded) return PS_OK;
  r->tail = sim_max64(r->tail, e->time);
  if (!sim_vc_merge(&r->clock, &e->clock)) return PS_ERR_MEMORY_ALLOCATION;
  tidy(c, &r->clock);
  return PS_OK;
}

/* ---- events ---- */

/* Whether e is a live event, in O(1). */
int sim_event_valid(sim_ctx *c, ps_event *e) {
  return e && sim_table_find(&c->events, (uintptr_t)e);
}

/* An IPC event with timing is refused, as CUDA refuses
 * cudaEventInterprocess without cudaEventDisableTiming. */
int sim_event_create(void *ctx, unsigned flags, ps_event **out) {
  sim_ctx *c = ctx;
  if (!out || flags & ~(unsigned)(PS_EVENT_TIMING | PS_EVENT_IPC)) return PS_ERR_INVALID_VALUE;
  if ((flags & PS_EVENT_IPC) && (flags & PS_EVENT_TIMING)) return PS_ERR_INVALID_VALUE;
  ps_event *e = calloc(1, sizeof *e);
  if (!e) return PS_ERR_MEMORY_ALLOCATION;
  if ((flags & PS_EVENT_IPC) && !(e->ipc = sim_ipc_ev_create())) {
    free(e);
    return PS_ERR_MEMORY_ALLOCATION;
  }
  if (!sim_table_put(&c->events, (uintptr_t)e, 0)) {
    sim_ipc_ev_close(e->ipc);
    free(e);
    return PS_ERR_MEMORY_ALLOCATION;
  }
  e->timing = (flags & PS_EVENT_TIMING) != 0;
  e->dev = c->dev;
  *out = e;
  return PS_OK;
}

static void event_free(ps_event *e) {
  sim_vc_free(&e->clock);
  sim_ipc_ev_close(e->ipc);
  free(e);
}

/* Frees e; its handle is invalid afterwards. An IPC event's name goes
 * (importers that opened it keep their slot). */
int sim_event_destroy(void *ctx, ps_event *e) {
  sim_ctx *c = ctx;
  if (!e || !sim_table_remove(&c->events, (uintptr_t)e)) return PS_ERR_INVALID_RESOURCE;
  event_free(e);
  return PS_OK;
}

/* cudaIpcGetEventHandle: the slot's name. A non-IPC event:
 * cudaErrorInvalidResourceHandle (CUDA's documented answer; not measured). */
int sim_event_export(void *ctx, ps_event *e, uint8_t out[PS_IPC_BYTES]) {
  sim_ctx *c = ctx;
  if (!sim_event_valid(c, e)) return PS_ERR_INVALID_RESOURCE;
  if (!out) return PS_ERR_INVALID_VALUE;
  if (!e->ipc) return PS_ERR_INVALID_RESOURCE;
  sim_host_cost(c, c->prof.event_api_ns);
  sim_ipc_ev_handle(e->ipc, out);
  return PS_OK;
}

/* cudaIpcOpenEventHandle: an event whose records come from the slot; a
 * handle that names no live IPC event: cudaErrorInvalidValue (assumed). */
int sim_event_import(void *ctx, const uint8_t data[PS_IPC_BYTES], ps_event **out) {
  sim_ctx *c = ctx;
  if (!data || !out) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.event_api_ns);
  ps_event *e = calloc(1, sizeof *e);
  if (!e) return PS_ERR_MEMORY_ALLOCATION;
  int st = sim_ipc_ev_open(data, &e->ipc);
  if (st != PS_OK) { free(e); return st; }
  if (!sim_table_put(&c->events, (uintptr_t)e, 0)) { event_free(e); return PS_ERR_MEMORY_ALLOCATION; }
  e->imported = 1;
  *out = e;
  return PS_OK;
}

/* An IPC event that another process recorded since this one last looked
 * completes `delay` after now on this process's clock (each process has
 * its own); it carries no knowledge of this process's streams. The delay
 * is the peer's word: a negative one counts as 0, one past this clock's
 * end as its end (SIM_CLOCK_END), so the sum never overflows. */
static void ipc_news(sim_ctx *c, ps_event *e) {
  int64_t delay;
  if (!e->ipc || !sim_ipc_ev_news(e->ipc, &delay)) return;
  if (delay < 0) delay = 0;
  int64_t now = c->host_now < SIM_CLOCK_END ? c->host_now : SIM_CLOCK_END;
  if (!sim_clock_fits(now, delay)) delay = SIM_CLOCK_END - now;
  e->recorded = 1;
  e->time = now + delay;
  sim_vc_free(&e->clock);
}

/* e captures s's position: the completion time of all prior work on s and
 * what s knows (its own position included). */
int sim_event_record(void *ctx, ps_event *e, ps_stream *s) {
  sim_ctx *c = ctx;
  ps_stream *r = sim_stream_resolve(c, s);
  if (!r || !sim_event_valid(c, e)) return PS_ERR_INVALID_RESOURCE;
  /* CUDA's docs: the event and the stream must be on the same device */
  if (r->dev != e->dev) return PS_ERR_INVALID_RESOURCE;
  sim_host_cost(c, c->prof.event_api_ns);
  e->time = sim_enqueue(c, r, 0);
  e->recorded = 1;
  if (!sim_vc_copy(&e->clock, &r->clock)) return PS_ERR_MEMORY_ALLOCATION;
  if (e->ipc) {   /* the work before it is in the shared bytes for other processes */
    sim_land_until(c, e->time);
    sim_ipc_ev_recorded(e->ipc, e->time - c->host_now);
  }
  return PS_OK;
}

/* cudaEventSynchronize: the host waits for e and learns what e knew. */
int sim_event_sync(void *ctx, ps_event *e) {
  sim_ctx *c = ctx;
  if (!sim_event_valid(c, e)) return PS_ERR_INVALID_RESOURCE;
  ipc_news(c, e);
  if (e->recorded && sim_wait_check(c, e->time) != PS_OK) return PS_INTERRUPTED;
  sim_host_cost(c, c->prof.sync_ns);
  if (!e->recorded) return PS_OK;
  sim_host_advance(c, e->time);
  sim_streams_due(c);
  host_learn(c, &e->clock);
  sim_pools_settle(c);
  if (c->prof.release_on_event_sync) sim_pools_release(c);
  return PS_OK;
}

int sim_event_query(void *ctx, ps_event *e, int *done) {
  sim_ctx *c = ctx;
  if (!sim_event_valid(c, e)) return PS_ERR_INVALID_RESOURCE;
  if (!done) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.query_ns);
  ipc_news(c, e);
  *done = !e->recorded || e->time <= c->host_now;
  return PS_OK;
}

/* ms between two recorded, completed timing events (CUDA's codes). */
int sim_event_elapsed(void *ctx, ps_event *a, ps_event *b, double *ms) {
  sim_ctx *c = ctx;
  if (!sim_event_valid(c, a) || !sim_event_valid(c, b)) return PS_ERR_INVALID_RESOURCE;
  if (!ms) return PS_ERR_INVALID_VALUE;
  if (!a->timing || !b->timing) return PS_ERR_INVALID_RESOURCE;
  if (!a->recorded || !b->recorded) return PS_ERR_INVALID_RESOURCE;
  if (a->time > c->host_now || b->time > c->host_now) return PS_ERR_NOT_READY;
  *ms = (double)(b->time - a->time) / 1e6;
  return PS_OK;
}

/* ---- host time ---- */

int sim_sleep(void *ctx, double ms) {
  sim_ctx *c = ctx;
  if (!(ms >= 0) || ms > 1e12) return PS_ERR_INVALID_VALUE;
  int64_t d = (int64_t)llround(ms * 1e6);
  if (!sim_clock_fits(c->host_now, d)) return PS_ERR_CLOCK_END;
  int64_t t = c->host_now + d;
  if (sim_wait_check(c, t) != PS_OK) return PS_INTERRUPTED;
  sim_host_advance(c, t);
  return PS_OK;
}

double sim_now(void *ctx) {
  return (double)((sim_ctx *)ctx)->host_now / 1e6;
}

/* Frees streams, events and queued work. */
void sim_streams_free(sim_ctx *c) {
  for (size_t i = 0; i < c->nstreams; i++) {
    sim_vc_free(&c->streams[i]->clock);
    free(c->streams[i]);
  }
  for (size_t i = 0; i < c->events.cap; i++) {
    ps_event *e = (ps_event *)(uintptr_t)c->events.v[i].key;
    if (e) event_free(e);
  }
  for (size_t i = 0; i < c->nops; i++) free(c->ops[i].data);
  free(c->streams), free(c->touched), free(c->ops), free(c->due);
  sim_table_free(&c->live);
  sim_table_free(&c->events);
  sim_vc_free(&c->legacy.clock);
  sim_vc_free(&c->host_known);
}
