/*
 * observe.c: the observation layer's entry points (observe.h). Each event
 * a binding reports goes, in one fixed order, to the ledger (what is
 * allocated, pending, reusable), the recorder (trace.c, while recording)
 * and the views (the live view's ring of recent allocations). The layer
 * owns every record it keeps: each object's (after its struct in the
 * same userdata), the ledger's and the recorder's.
 */
#include <stdlib.h>
#include <string.h>

#include "observer.h"

_Static_assert(sizeof(ps_seen_buffer) == PS_SEEN_BUFFER_BYTES, "observe.h's record size");

const size_t ps_udsize[PS_UV_COUNT + 1] = {
  [PS_UV_STREAM] = sizeof(ps_streamud) + sizeof(ps_seen_stream),
  [PS_UV_EVENT] = sizeof(ps_eventud) + sizeof(ps_seen_event),
  [PS_UV_POOL] = sizeof(ps_poolud) + sizeof(ps_seen_pool),
  [PS_UV_BUFFER] = sizeof(ps_bufferud) + PS_SEEN_BUFFER_BYTES,
};

void ps_obs_open(lua_State *L, ps_ctx *c) {
  if (!c->obs && (c->obs = calloc(1, sizeof *c->obs)) == NULL)
    luaL_error(L, "poolsh: out of memory");
}

void ps_obs_close(ps_ctx *c) {
  if (!c->obs) return;
  ps_trace_free(c->obs->trace);
  ps_ledger_free_all(c->obs->ledger);
  free(c->obs);
  c->obs = NULL;
}

/* ---- positions ----------------------------------------------------------- */

/* One more operation queued on s: the only place a position moves. */
static uint64_t advance(ps_seen_stream *s) {
  return ++s->ops;
}

/* s waited on an event recorded on stream `on` at pos: s knows `on` up
 * to there (the latest position per stream; the oldest entry makes room). */
static void learns(ps_seen_stream *s, int32_t on, uint64_t pos) {
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

/* The live stream event e was last recorded on, and its position there. */
static ps_seen_stream *recorded_on(ps_ctx *c, const ps_eventud *e, uint64_t *pos) {
  const ps_seen_event *se = ps_seen_event_of(e);
  *pos = se->rec_pos;
  return se->rec_pos ? ps_stream_by_id(c, se->rec_stream) : NULL;
}

/* ---- objects ------------------------------------------------------------- */

void ps_obs_stream_created(lua_State *L, ps_ctx *c, ps_streamud *s) {
  ps_seen_stream *ss = ps_seen_stream_of(s);
  ps_obs *o = c->obs;
  memset(ss, 0, sizeof *ss);
  ss->id = s->id;
  ss->h = s->h;
  ss->followed = 1;
  ss->next = o->streams;
  o->streams = ss;
  ps_ledger_stream_followed(c, ss, 1);
  if (o->tracing && s->id) {
    ps_rec *r = ps_trace_rec(L, c, PS_OP_STREAM_CREATE, 0);
    if (r) r->stream = s->id;
  }
}

/* Stops following ss: out of the list; its queue of frees is completed
 * by the next learn. */
static void unfollow_stream(ps_ctx *c, ps_seen_stream *ss) {
  if (!ss->followed) return;
  for (ps_seen_stream **pp = &c->obs->streams; *pp; pp = &(*pp)->next)
    if (*pp == ss) {
      *pp = ss->next;
      break;
    }
  ss->followed = 0;
  ps_ledger_stream_followed(c, ss, 0);
}

void ps_obs_pool_created(lua_State *L, ps_ctx *c, ps_poolud *p) {
  ps_seen_pool *sp = ps_seen_pool_of(p);
  ps_obs *o = c->obs;
  memset(sp, 0, sizeof *sp);
  sp->id = p->id;
  sp->h = p->h;
  sp->followed = 1;
  sp->last_reserved = sp->last_used = PS_UNSET;
  sp->next = o->pools;
  o->pools = sp;
  ps_ledger_pool_followed(c, sp, 1);
  if (o->tracing) {
    ps_trace_rec(L, c, PS_OP_POOL_CREATE, 0);
    ps_trace_pool(L, c, sp, 0, 1);
  }
}

/* Reported before the backend destroys p, while its counters can still be
 * read: the pool is no longer followed, whatever the backend says. */
void ps_obs_pool_destroying(lua_State *L, ps_ctx *c, ps_poolud *p, int collected) {
  ps_seen_pool *sp = ps_seen_pool_of(p);
  if (!sp->followed) return;
  if (c->obs->tracing && ps_trace_rec(L, c, PS_OP_POOL_DESTROY, collected ? PS_REC_COLLECTED : 0)) {
    sp->last_used = PS_UNSET;                  /* read both counters afresh */
    ps_trace_pool(L, c, sp, 0, 1);
  }
  for (ps_seen_pool **pp = &c->obs->pools; *pp; pp = &(*pp)->next)
    if (*pp == sp) {
      *pp = sp->next;
      break;
    }
  sp->followed = 0;
  sp->h = NULL;
  sp->last_used = sp->last_reserved = PS_UNSET;
  ps_ledger_pool_followed(c, sp, 0);
}

void ps_obs_pool_set(lua_State *L, ps_ctx *c, const ps_what *w) {
  ps_rec *r = c->obs->tracing ? ps_trace_rec(L, c, PS_OP_SET, 0) : NULL;
  if (!r) return;
  ps_seen_pool *sp = ps_seen_pool_of(w->pool);
  r->kind = (uint8_t)w->setting;
  r->value = w->value;
  sp->last_used = PS_UNSET;                    /* read both counters afresh */
  ps_trace_pool(L, c, sp, 0, 1);
}

/* ---- buffers --------------------------------------------------------------- */

/* Into the live view's ring of recent allocations. */
static void remember(ps_ctx *c, const ps_bufferud *b, int32_t pool, int32_t stream) {
  ps_obs *o = c->obs;
  const ps_seen_buffer *sb = ps_seen_buffer_of(b);
  struct ps_recent *r = &o->recent[o->nrecent++ % (sizeof o->recent / sizeof o->recent[0])];
  r->buffer = b->id, r->pool = pool, r->stream = stream;
  r->reused_from = sb->reused_from ? sb->reused_from : -1;
  r->rule = (uint8_t)sb->reuse_rule, r->kind = (uint8_t)b->kind;
  r->size = b->size;
}

/* The hot path of a traced or untraced alloc+free loop: one call from
 * p:alloc, then the ledger, the ring and (recording) the trace. */
void ps_obs_alloc(lua_State *L, ps_ctx *c, const ps_bufferud *b, ps_poolud *p,
                  ps_streamud *s, ps_reuse_rule said) {
  ps_obs *o = c->obs;
  ps_seen_buffer *sb = ps_seen_buffer_of(b);
  sb->src = -1;
  if (!p) {
    ps_ledger_track(L, c, b);
    remember(c, b, -1, -1);
    if (o->tracing) ps_trace_buffer(L, c, PS_OP_ALLOC, b, -1, NULL, 0, 0);
    return;
  }
  ps_seen_pool *sp = ps_seen_pool_of(p);
  ps_seen_stream *ss = ps_seen_stream_of(s);
  advance(ss);
  int fits = ps_ledger_alloc(L, c, sp, ss, b, said);
  remember(c, b, p->id, s->id);
  if (o->tracing) ps_trace_buffer(L, c, PS_OP_ALLOC, b, s->id, sp, 0, !fits);
}

void ps_obs_alloc_failed(lua_State *L, ps_ctx *c, ps_poolud *p, ps_streamud *s, uint64_t size) {
  ps_rec *r = c->obs->tracing ? ps_trace_rec(L, c, PS_OP_ALLOC_FAILED, 0) : NULL;
  if (!r) return;
  r->stream = s->id, r->size = size;
  ps_trace_pool(L, c, ps_seen_pool_of(p), 0, 1);
}

/* A cudaFree waits for the device, where a pool may give memory back (the
 * sim's release_on_cuda_free): the caller began a wait for it, ended here. */
void ps_obs_free(lua_State *L, ps_ctx *c, const ps_bufferud *b, ps_streamud *s, int collected) {
  ps_obs *o = c->obs;
  if (b->kind != PS_KIND_POOL) {
    int waited = b->kind == PS_KIND_MALLOC && !collected;
    ps_ledger_untrack(c, b);
    if (o->tracing) {
      ps_trace_buffer(L, c, PS_OP_FREE, b, -1, NULL, collected, 0);
      if (waited) ps_trace_sync_end(L, c);
    }
    if (waited) ps_ledger_released(c);
    return;
  }
  ps_seen_pool *sp = ps_seen_pool_of(b->pool);
  ps_seen_stream *ss = s ? ps_seen_stream_of(s) : NULL;
  if (ss) advance(ss);
  ps_ledger_free(c, sp, ss, b);
  if (o->tracing) ps_trace_buffer(L, c, PS_OP_FREE, b, s ? s->id : 0, sp, collected, 0);
}

void ps_obs_reuse(const ps_bufferud *b, int32_t *from, ps_reuse_rule *rule) {
  const ps_seen_buffer *sb = ps_seen_buffer_of(b);
  *from = sb->reused_from ? sb->reused_from : -1;
  *rule = sb->reused_from ? sb->reuse_rule : PS_RULE_NONE;
}

static void set_count(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* The first estimate makes the ledger keep the pool's block edges from
 * then on (docs/explain.md). */
void ps_obs_pool_view(lua_State *L, ps_ctx *c, const ps_poolud *p, uint64_t reserved,
                      int estimates) {
  ps_seen_pool *sp = ps_seen_pool_of(p);
  set_count(L, "live", sp->live_bytes);
  set_count(L, "pending", sp->pending_bytes);
  set_count(L, "pending_count", sp->pending_count);
  if (!estimates) return;
  uint64_t nfree = 0, largest = 0;
  ps_ledger_free_space(c, sp, reserved, &nfree, &largest);
  set_count(L, "free", nfree);
  set_count(L, "largest_free", largest);
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "free_estimated");
}

/* ---- work and waits ------------------------------------------------------------ */

/* Records w's op with its objects (no pool counters). */
static ps_rec *record(lua_State *L, ps_ctx *c, const ps_what *w, int flags) {
  ps_rec *r = ps_trace_rec(L, c, w->op, flags);
  if (!r) return NULL;
  if (w->stream) r->stream = w->stream->id;
  if (w->event) r->other = w->event->id;
  if (w->buffer) {
    r->buffer = w->buffer->id;
    r->addr = w->buffer->addr + w->offset;
    r->size = w->size;
  }
  if (w->other) r->other = w->other->id;
  r->dur = w->dur;
  ps_trace_span(c, r);
  return r;
}

void ps_obs_enqueued(lua_State *L, ps_ctx *c, const ps_what *w) {
  ps_seen_stream *ss = ps_seen_stream_of(w->stream);
  uint64_t pos = advance(ss);
  if (w->op == PS_OP_RECORD) {
    ps_seen_event *se = ps_seen_event_of(w->event);
    se->rec_stream = w->stream->id;
    se->rec_pos = pos;
  } else if (w->op == PS_OP_WAIT) {
    const ps_seen_event *se = ps_seen_event_of(w->event);
    if (se->rec_pos) learns(ss, se->rec_stream, se->rec_pos);
  }
  if (c->obs->tracing) record(L, c, w, 0);
}

void ps_obs_wait_begin(ps_ctx *c) {
  if (c->obs->tracing) ps_trace_sync_begin(c);
}

/* Host synchronisation of stream s (NULL: every stream) up to upto (for
 * every stream: its last operation): marks it synced and done. */
static void synced(ps_ctx *c, ps_seen_stream *s, uint64_t upto) {
  for (ps_seen_stream *t = s ? s : c->obs->streams; t; t = s ? NULL : t->next) {
    uint64_t pos = s ? upto : t->ops;
    if (pos > t->synced) t->synced = pos;
    if (pos > t->done) t->done = pos;
  }
}

/* The end of every host wait, in one order: the stream's position (verify,
 * read and write queue work first), the record and the releases it
 * caused, how far the wait saw streams complete, the frees that completed,
 * the blocks the pools gave back. */
void ps_obs_waited(lua_State *L, ps_ctx *c, const ps_what *w) {
  ps_seen_stream *ss = w->stream ? ps_seen_stream_of(w->stream) : NULL;
  int learn = 1;
  uint64_t upto = 0;
  switch (w->op) {
    case PS_OP_VERIFY: case PS_OP_READ: case PS_OP_WRITE: advance(ss); /* fall through */
    case PS_OP_STREAM_SYNC: upto = ss->ops; break;
    case PS_OP_EVENT_SYNC: ss = recorded_on(c, w->event, &upto); break;
    case PS_OP_DEVICE_SYNC: ss = NULL; break;
    default: learn = 0; ss = NULL; break;       /* trim: no stream waited for */
  }
  if (c->obs->tracing) {
    ps_rec *r = record(L, c, w, w->collected ? PS_REC_COLLECTED : 0);
    if (r && w->op == PS_OP_TRIM) r->pool = w->pool->id, r->size = w->size;
    ps_trace_sync_end(L, c);
  }
  if (ss || w->op == PS_OP_DEVICE_SYNC) synced(c, ss, upto);
  if (learn) ps_ledger_learn(L, c);
  ps_ledger_released(c);
}

void ps_obs_stream_destroyed(lua_State *L, ps_ctx *c, ps_streamud *s, int status, int collected) {
  unfollow_stream(c, ps_seen_stream_of(s));
  if (status != PS_OK) return;
  ps_obs_waited(L, c, &(ps_what){ .op = PS_OP_STREAM_DESTROY, .stream = s,
                                  .collected = collected });
}

void ps_obs_idle(lua_State *L, ps_ctx *c, ps_streamud *s, ps_eventud *e) {
  uint64_t upto = 0;
  ps_seen_stream *ss = e ? recorded_on(c, e, &upto) : ps_seen_stream_of(s);
  if (!ss) return;
  if (!e) upto = ss->ops;
  if (upto > ss->done) ss->done = upto;
  ps_ledger_learn(L, c);
}
