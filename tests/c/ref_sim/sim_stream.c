/*
 * sim_stream.c: the virtual clock, streams, events, vector clocks and the
 * queue of device work whose memory effects land at their end times.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* ---- vector clocks ---- */

/* The position of stream id that c knows, 0 when none. */
int64_t sim_vc_get(const sim_vclock *c, int id) {
  return id >= 0 && id < c->n ? c->v[id] : 0;
}

/* c[id] = max(c[id], pos). 0 when out of memory (c unchanged). */
int sim_vc_raise(sim_vclock *c, int id, int64_t pos) {
  if (id < 0) return 1;
  if (id >= c->n) {
    int n = id + 8;
    int64_t *v = realloc(c->v, (size_t)n * sizeof *v);
    if (!v) return 0;
    memset(v + c->n, 0, (size_t)(n - c->n) * sizeof *v);
    c->v = v, c->n = n;
  }
  if (pos > c->v[id]) c->v[id] = pos;
  return 1;
}

/* c = elementwise max(c, o). */
int sim_vc_merge(sim_vclock *c, const sim_vclock *o) {
  for (int i = o->n - 1; i >= 0; i--)
    if (o->v[i] > sim_vc_get(c, i) && !sim_vc_raise(c, i, o->v[i])) return 0;
  return 1;
}

/* c = o. */
int sim_vc_copy(sim_vclock *c, const sim_vclock *o) {
  if (c->v) memset(c->v, 0, (size_t)c->n * sizeof *c->v);
  return sim_vc_merge(c, o);
}

void sim_vc_free(sim_vclock *c) {
  free(c->v);
  c->v = NULL, c->n = 0;
}

/* ---- the queue of memory effects: a min-heap on (end, seq) ---- */

static int op_less(const sim_op *a, const sim_op *b) {
  return a->end != b->end ? a->end < b->end : a->seq < b->seq;
}

static void op_swap(sim_op *a, sim_op *b) { sim_op t = *a; *a = *b; *b = t; }

/* Queues op (its data now owned by the queue). 0 when out of memory. */
int sim_reserve_one(void **v, size_t *cap, size_t n, size_t elem, size_t first) {
  if (n < *cap) return 1;
  size_t c = *cap ? *cap * 2 : first;
  void *w = realloc(*v, c * elem);
  if (!w) return 0;
  *v = w, *cap = c;
  return 1;
}

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

/* Whether the host knows that position pos of stream id completed. */
int sim_host_knows(const sim_ctx *c, int stream, int64_t pos) {
  return sim_vc_get(&c->host_known, stream) >= pos;
}

/* ---- streams ---- */

/* The stream a handle names (NULL: legacy), or NULL when not a live one. */
ps_stream *sim_stream_resolve(sim_ctx *c, ps_stream *s) {
  if (!s) return &c->legacy;
  for (size_t i = 0; i < c->nstreams; i++)
    if (c->streams[i] == s) return s->destroyed ? NULL : s;
  return NULL;
}

/* The latest tail of the blocking created streams (destroyed included:
 * their work still runs). */
static int64_t blocking_tail(const sim_ctx *c) {
  int64_t t = 0;
  for (size_t i = 0; i < c->nstreams; i++)
    if (c->streams[i]->blocking) t = sim_max64(t, c->streams[i]->tail);
  return t;
}

/* When work enqueued on s now could start, legacy-stream rules included. */
static int64_t start_time(sim_ctx *c, ps_stream *s) {
  int64_t t = sim_max64(c->host_now, s->tail);
  if (s == &c->legacy) t = sim_max64(t, blocking_tail(c));
  else if (s->blocking) t = sim_max64(t, c->legacy.tail);
  return t;
}

/* Enqueues an op of dur ns on s (resolved): it starts when s, the legacy
 * rules and the host allow, takes the next position on s; returns its end. */
int64_t sim_enqueue(sim_ctx *c, ps_stream *s, int64_t dur) {
  int64_t end = start_time(c, s) + (dur > 0 ? dur : 0);
  s->tail = end;
  s->seq++;
  sim_vc_raise(&s->clock, s->id, s->seq);
  return end;
}

/* When everything a sync of s waits for is done (legacy: blocking too). */
int64_t sim_stream_done_time(sim_ctx *c, ps_stream *s) {
  return s == &c->legacy ? sim_max64(s->tail, blocking_tail(c)) : s->tail;
}

/* The host learns that s's work so far completed, and all s knew. */
static void learn_stream(sim_ctx *c, ps_stream *s) {
  sim_vc_raise(&c->host_known, s->id, s->seq);
  sim_vc_merge(&c->host_known, &s->clock);
}

/* PS_INTERRUPTED when the host would have to wait until t and the
 * config's interrupted() says stop; nothing moves then. */
int sim_wait_check(sim_ctx *c, int64_t t) {
  if (t > c->host_now && c->interrupted && c->interrupted(c->interrupted_ud))
    return PS_INTERRUPTED;
  return PS_OK;
}

/* Host waits for s (resolved), retires its frees; releases if configured. */
int sim_sync_stream(sim_ctx *c, ps_stream *s) {
  int64_t t = sim_stream_done_time(c, s);
  if (sim_wait_check(c, t) != PS_OK) return PS_INTERRUPTED;
  sim_host_cost(c, c->prof.sync_ns);
  sim_host_advance(c, t);
  learn_stream(c, s);
  if (s == &c->legacy)
    for (size_t i = 0; i < c->nstreams; i++)
      if (c->streams[i]->blocking) learn_stream(c, c->streams[i]);
  if (c->prof.release_on_stream_sync) sim_pools_release(c);
  return PS_OK;
}

/* When every stream's work is done (destroyed streams included). */
static int64_t device_done_time(const sim_ctx *c) {
  int64_t t = c->legacy.tail;
  for (size_t i = 0; i < c->nstreams; i++) t = sim_max64(t, c->streams[i]->tail);
  return t;
}

/* Host waits for every stream; with retire it learns every free and
 * pools release; without, only the time passes. */
void sim_sync_device(sim_ctx *c, int retire) {
  sim_host_advance(c, device_done_time(c));
  if (!retire) return;
  learn_stream(c, &c->legacy);
  for (size_t i = 0; i < c->nstreams; i++) learn_stream(c, c->streams[i]);
  sim_pools_release(c);
}

/* cudaDeviceSynchronize: retires every free; release_on_device_sync
 * decides whether pools give memory back. */
int sim_device_sync(void *ctx) {
  sim_ctx *c = ctx;
  if (sim_wait_check(c, device_done_time(c)) != PS_OK) return PS_INTERRUPTED;
  sim_host_cost(c, c->prof.sync_ns);
  sim_host_advance(c, device_done_time(c));
  learn_stream(c, &c->legacy);
  for (size_t i = 0; i < c->nstreams; i++) learn_stream(c, c->streams[i]);
  if (c->prof.release_on_device_sync) sim_pools_release(c);
  return PS_OK;
}

/* Creates a stream; priority is clamped to [-5, 0] as CUDA does. */
int sim_stream_create(void *ctx, int dev, int priority, int blocking, ps_stream **out) {
  sim_ctx *c = ctx;
  if (!out) return PS_ERR_INVALID_VALUE;
  if (!sim_reserve_one((void **)&c->streams, &c->capstreams, c->nstreams, sizeof *c->streams, 8))
    return PS_ERR_MEMORY_ALLOCATION;
  ps_stream *s = calloc(1, sizeof *s);
  if (!s) return PS_ERR_MEMORY_ALLOCATION;
  s->id = (int)c->nstreams + 1;
  s->priority = priority > 0 ? 0 : priority < -5 ? -5 : priority;
  s->blocking = blocking != 0;
  c->streams[c->nstreams++] = s;
  *out = s;
  return PS_OK;
}

/* Marks s destroyed; its queued work still runs (as in CUDA). A stream
 * whose work is done is retired: its frees count as complete and pools
 * give memory back, as at a sync of it (measured: docs/calibration.md E3);
 * a busy one releases nothing until a later sync covers its frees. */
int sim_stream_destroy(void *ctx, ps_stream *s) {
  sim_ctx *c = ctx;
  if (!s || !sim_stream_resolve(c, s)) return PS_ERR_INVALID_RESOURCE;
  s->destroyed = 1;
  if (c->prof.release_on_stream_destroy && s->tail <= c->host_now) {
    learn_stream(c, s);
    sim_pools_release(c);
  }
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

/* s's later work starts after e's work; s learns what e knew. Waiting on
 * an event never recorded is a no-op. */
int sim_stream_wait(void *ctx, ps_stream *s, ps_event *e) {
  sim_ctx *c = ctx;
  ps_stream *r = sim_stream_resolve(c, s);
  if (!r) return PS_ERR_INVALID_RESOURCE;
  if (!sim_event_valid(c, e)) return PS_ERR_INVALID_RESOURCE;
  sim_host_cost(c, c->prof.event_api_ns);
  if (!e->recorded) return PS_OK;
  r->tail = sim_max64(r->tail, e->time);
  return sim_vc_merge(&r->clock, &e->clock) ? PS_OK : PS_ERR_MEMORY_ALLOCATION;
}

/* ---- events ---- */

int sim_event_valid(sim_ctx *c, ps_event *e) {
  for (size_t i = 0; e && i < c->nevents; i++)
    if (c->events[i] == e) return 1;
  return 0;
}

int sim_event_create(void *ctx, unsigned flags, ps_event **out) {
  sim_ctx *c = ctx;
  if (!out) return PS_ERR_INVALID_VALUE;
  if (!sim_reserve_one((void **)&c->events, &c->capevents, c->nevents, sizeof *c->events, 8))
    return PS_ERR_MEMORY_ALLOCATION;
  ps_event *e = calloc(1, sizeof *e);
  if (!e) return PS_ERR_MEMORY_ALLOCATION;
  e->timing = (flags & PS_EVENT_TIMING) != 0;
  c->events[c->nevents++] = e;
  *out = e;
  return PS_OK;
}

/* Frees e; its handle is invalid afterwards. */
int sim_event_destroy(void *ctx, ps_event *e) {
  sim_ctx *c = ctx;
  for (size_t i = 0; e && i < c->nevents; i++)
    if (c->events[i] == e) {
      c->events[i] = c->events[--c->nevents];
      sim_vc_free(&e->clock);
      free(e);
      return PS_OK;
    }
  return PS_ERR_INVALID_RESOURCE;
}

/* e captures s's position: the completion time of all prior work on s and
 * what s knows (its own position included). */
int sim_event_record(void *ctx, ps_event *e, ps_stream *s) {
  sim_ctx *c = ctx;
  ps_stream *r = sim_stream_resolve(c, s);
  if (!r || !sim_event_valid(c, e)) return PS_ERR_INVALID_RESOURCE;
  sim_host_cost(c, c->prof.event_api_ns);
  e->time = sim_enqueue(c, r, 0);
  e->recorded = 1;
  if (!sim_vc_copy(&e->clock, &r->clock)) return PS_ERR_MEMORY_ALLOCATION;
  return PS_OK;
}

/* cudaEventSynchronize: the host waits for e and learns what e knew. */
int sim_event_sync(void *ctx, ps_event *e) {
  sim_ctx *c = ctx;
  if (!sim_event_valid(c, e)) return PS_ERR_INVALID_RESOURCE;
  if (e->recorded && sim_wait_check(c, e->time) != PS_OK) return PS_INTERRUPTED;
  sim_host_cost(c, c->prof.sync_ns);
  if (!e->recorded) return PS_OK;
  sim_host_advance(c, e->time);
  sim_vc_merge(&c->host_known, &e->clock);
  if (c->prof.release_on_event_sync) sim_pools_release(c);
  return PS_OK;
}

int sim_event_query(void *ctx, ps_event *e, int *done) {
  sim_ctx *c = ctx;
  if (!sim_event_valid(c, e)) return PS_ERR_INVALID_RESOURCE;
  if (!done) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.query_ns);
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
  int64_t t = c->host_now + (int64_t)llround(ms * 1e6);
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
  for (size_t i = 0; i < c->nevents; i++) {
    sim_vc_free(&c->events[i]->clock);
    free(c->events[i]);
  }
  for (size_t i = 0; i < c->nops; i++) free(c->ops[i].data);
  free(c->streams), free(c->events), free(c->ops);
  sim_vc_free(&c->legacy.clock);
  sim_vc_free(&c->host_known);
}
