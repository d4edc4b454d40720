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

#include "observe.h"
#include "observer.h"
#include "share.h"

_Static_assert(sizeof(ps_seen_buffer) == PS_SEEN_BUFFER_BYTES, "observe.h's record size");

const size_t ps_udsize[PS_UV_COUNT + 1] = {
  [PS_UV_STREAM] = sizeof(ps_streamud) + sizeof(ps_seen_stream),
  [PS_UV_EVENT] = sizeof(ps_eventud) + sizeof(ps_seen_event),
  [PS_UV_POOL] = sizeof(ps_poolud) + sizeof(ps_seen_pool),
  [PS_UV_BUFFER] = sizeof(ps_bufferud) + PS_SEEN_BUFFER_BYTES,
  [PS_UV_PROCESS] = sizeof(ps_processud),
};

void ps_obs_open(lua_State *L, ps_ctx *c) {
  if (!c->obs && (c->obs = calloc(1, sizeof *c->obs)) == NULL)
    luaL_error(L, "poolsh: out of memory");
  c->obs->site_depth = 1;
  ps_where_open(L, c);
}

/* Frees what the layer holds; keeps the struct. */
static void obs_free_parts(ps_obs *o) {
  ps_trace_free(o->trace);
  ps_ledger_free_all(o->ledger);
  ps_sites_free(o->sites);
  ps_names_free(o->names);
  ps_followed_free(o->stream_map);
  for (size_t i = 0; i < o->nscopes; i++) free(o->scopes[i].pools);
  free(o->scopes);
}

void ps_obs_close(ps_ctx *c) {
  if (!c->obs) return;
  obs_free_parts(c->obs);
  free(c->obs->whys);
  free(c->obs->srcs);
  free(c->obs);
  c->obs = NULL;
}

/* Forgets every object and record; keeps whether sources are remembered
 * and how deep. Recording stops (the recorder is emptied). */
void ps_obs_lost(ps_ctx *c, const ps_bufferud *b) {
  ps_ledger_lost(c, b);
}

void ps_obs_reset(lua_State *L, ps_ctx *c, void (*dead)(ps_ctx *c, const ps_bufferud *b)) {
  ps_obs *o = c->obs;
  ps_ledger_each_live(c, dead);
  int sources = o->sources, depth = o->site_depth, where_ref = o->where_ref;
  const void *where_table = o->where_table;
  for (ps_seen_pool *p = o->pools; p; p = p->next) p->followed = 0, p->h = NULL;
  for (ps_seen_stream *s = o->streams; s; s = s->next) s->followed = 0;
  obs_free_parts(o);
  free(o->whys);
  free(o->srcs);
  memset(o, 0, sizeof *o);
  o->sources = sources, o->site_depth = depth, o->where_ref = where_ref;
  o->where_table = where_table;
  (void)L;
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
  ss->blocking = s->blocking;
  ps_followed_add(c, ss);
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
  ps_followed_remove(c, ss);
  ps_ledger_stream_followed(c, ss, 0);
}

/* Pool p's reserved bytes now, or PS_UNSET. */
static uint64_t reserved_of(ps_ctx *c, const ps_seen_pool *p) {
  uint64_t v = PS_UNSET;
  if (!p->h || c->be->pool_get(c->b, p->h, PS_ATTR_RESERVED_CURRENT, &v) != PS_OK) v = PS_UNSET;
  return v;
}

void ps_obs_pool_created(lua_State *L, ps_ctx *c, ps_poolud *p) {
  ps_seen_pool *sp = ps_seen_pool_of(p);
  ps_obs *o = c->obs;
  memset(sp, 0, sizeof *sp);
  sp->id = p->id;
  sp->h = p->h;
  sp->followed = 1;
  sp->last_reserved = sp->last_used = PS_UNSET;
  sp->seen_reserved = reserved_of(c, sp);
  sp->wait_reserved = PS_UNSET;
  sp->next = o->pools;
  o->pools = sp;
  ps_ledger_pool_followed(c, sp, 1);
  if (o->tracing) {
    ps_trace_rec(L, c, PS_OP_POOL_CREATE, 0);
    ps_trace_pool(L, c, sp, 0, 1);
  }
}

/* Adds the counts b to a. */
static void add_counts(ps_counts *a, const ps_counts *b) {
  a->fresh += b->fresh, a->growths += b->growths;
  a->ooms += b->ooms, a->retries += b->retries;
  for (int i = 0; i < PS_RULE_UNKNOWN; i++) a->reuses[i] += b->reuses[i];
  for (int i = 0; i < PS_OP_COUNT; i++) a->releases[i] += b->releases[i];
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
  add_counts(&c->obs->gone, &sp->n);
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

static int count_releases(ps_ctx *c, const ps_what *w);

/* Into the live view's ring of recent allocations. */
static void remember(ps_ctx *c, const ps_bufferud *b, int32_t pool, int32_t stream) {
  ps_obs *o = c->obs;
  const ps_seen_buffer *sb = ps_seen_buffer_of(b);
  struct ps_recent *r = &o->recent[o->nrecent++ % (sizeof o->recent / sizeof o->recent[0])];
  r->buffer = b->id, r->pool = pool, r->stream = stream;
  r->reused_from = sb->reused_from ? sb->reused_from : -1;
  r->rule = sb->reuse_rule, r->kind = (uint8_t)b->kind;
  r->size = b->size;
  r->why = sb->why_code, r->why_slot = sb->why_slot;
  r->src_pid = 0;
}

/* Counts a pool allocation: reused or fresh, and whether the pool grew
 * (reserved is read only when the ledger says it may have: not fits). */
static void count_alloc(ps_ctx *c, ps_seen_pool *sp, const ps_seen_buffer *sb, int fits) {
  if (sb->reused_from) sp->n.reuses[sb->reuse_rule]++;   /* a rule below PS_RULE_UNKNOWN */
  else sp->n.fresh++;
  if (fits) return;
  uint64_t r = reserved_of(c, sp);
  if (r != PS_UNSET && sp->seen_reserved != PS_UNSET && r > sp->seen_reserved) sp->n.growths++;
  if (r != PS_UNSET) sp->seen_reserved = r;
}

/* The hot path of a traced or untraced alloc+free loop: one call from
 * p:alloc, then the ledger, the ring and (recording) the trace. */
void ps_obs_alloc(lua_State *L, ps_ctx *c, const ps_bufferud *b, ps_poolud *p,
                  ps_streamud *s, ps_reuse_rule said) {
  ps_obs *o = c->obs;
  ps_seen_buffer *sb = ps_seen_buffer_of(b);
  sb->src = -1;
  if (!p) {
    /* cudaMalloc first freed what finalizers left (ps_free_deferred): a
     * cudaFree, at which pools may have given memory back */
    if (b->kind == PS_KIND_MALLOC) ps_ledger_released(L, c);
    ps_ledger_track(L, c, b);
    remember(c, b, -1, -1);
    if (b->ipc == PS_IPC_IMPORTED && b->pool && b->pool->share) {   /* where it comes from */
      struct ps_recent *r = &o->recent[(o->nrecent - 1) % (sizeof o->recent / sizeof o->recent[0])];
      r->src_pid = ps_share_pid(b->pool->share);
      r->src_buffer = ps_share_buffer(b->pool->share, b->ipc_slot);
    }
    if (o->tracing) ps_trace_buffer(L, c, PS_OP_ALLOC, b, -1, NULL, 0, 0);
    return;
  }
  ps_seen_pool *sp = ps_seen_pool_of(p);
  ps_seen_stream *ss = ps_seen_stream_of(s);
  advance(ss);
  int fits = ps_ledger_alloc(L, c, sp, ss, b, said);
  count_alloc(c, sp, sb, fits);
  remember(c, b, p->id, s->id);
  if (o->tracing) ps_trace_buffer(L, c, PS_OP_ALLOC, b, s->id, sp, 0, !fits);
}

/* ---- out of memory, in codes and numbers ------------------------------------- */

#define OOM_STREAMS 8          /* streams named in the pending line */

typedef struct oom_acc {
  int32_t stream;              /* the allocating stream */
  int n;                       /* streams holding freed memory */
  struct { int32_t stream; uint64_t pending, done; } v[OOM_STREAMS];
  uint64_t more;               /* bytes on streams beyond v */
} oom_acc;

static void oom_each(void *ud, int32_t stream, uint64_t bytes, int done) {
  oom_acc *a = ud;
  int i = 0;
  while (i < a->n && a->v[i].stream != stream) i++;
  if (i == a->n) {
    if (a->n == OOM_STREAMS) {
      a->more += bytes;
      return;
    }
    a->v[a->n++].stream = stream;
    a->v[i].pending = a->v[i].done = 0;
  }
  if (done) a->v[i].done += bytes;
  else a->v[i].pending += bytes;
}

/* Sets t[k] (t on top) to bytes: an integer, or a float beyond 2^63. */
static void set_bytes(lua_State *L, const char *k, uint64_t bytes) {
  if (bytes <= (uint64_t)LUA_MAXINTEGER) lua_pushinteger(L, (lua_Integer)bytes);
  else lua_pushnumber(L, (lua_Number)bytes);
  lua_setfield(L, -2, k);
}

static void set_id(lua_State *L, const char *k, int32_t id) {
  lua_pushinteger(L, id);
  lua_setfield(L, -2, k);
}

static uint64_t pool_setting(ps_ctx *c, const ps_poolud *p, ps_pool_attr a) {
  uint64_t v = 0;
  if (!p->h || c->be->pool_get(c->b, p->h, a, &v) != PS_OK) v = 0;
  return v;
}

/* Sets the advice (docs/errors.md, the last line): which applies, the
 * freed bytes it speaks of and the first other stream that freed them.
 * "none": nothing freed; "no_extent": the freed memory was usable (own
 * stream, or internal dependencies on) but holds no extent of the size;
 * "other_streams": freed on other streams, not usable from this one. */
static void oom_advice(lua_State *L, ps_ctx *c, const ps_poolud *p, const oom_acc *a) {
  uint64_t other = 0, own = 0;
  int32_t first = -1;
  for (int i = 0; i < a->n; i++) {
    if (a->v[i].stream == a->stream) own += a->v[i].pending + a->v[i].done;
    else {
      other += a->v[i].pending + a->v[i].done;
      if (first < 0) first = a->v[i].stream;
    }
  }
  other += a->more;
  const char *advice = other + own == 0 ? "none"
                     : other == 0 || pool_setting(c, p, PS_ATTR_INTERNAL_DEPS) ? "no_extent"
                     : "other_streams";
  lua_pushstring(L, advice);
  lua_setfield(L, -2, "advice");
  set_bytes(L, "freed", other + own);
  set_bytes(L, "freed_other", other);
  if (first >= 0) set_id(L, "first_other", first);
  lua_pushboolean(L, pool_setting(c, p, PS_ATTR_FOLLOW_EVENT_DEPS) != 0);
  lua_setfield(L, -2, "follow_event_dependencies");
}

/* Pushes what explains an out-of-memory failure, in codes and numbers
 * (lua/poolsh/render/oom.lua words it): the pool's counters and freed
 * memory per stream, its max_size and the driver's granularity, the
 * device's free memory, what the collection before the retry freed, and
 * which advice applies. */
static void push_oom(lua_State *L, ps_ctx *c, ps_poolud *p, ps_streamud *s, uint64_t size) {
  ps_obs *o = c->obs;
  ps_seen_pool *sp = ps_seen_pool_of(p);
  oom_acc a = { .stream = s->id };
  ps_ledger_pending_by_stream(c, sp, oom_each, &a);
  lua_createtable(L, 0, 24);
  set_id(L, "pool", p->id);
  set_id(L, "stream", s->id);
  set_bytes(L, "size", size);
  set_bytes(L, "reserved", pool_setting(c, p, PS_ATTR_RESERVED_CURRENT));
  set_bytes(L, "used", pool_setting(c, p, PS_ATTR_USED_CURRENT));
  set_bytes(L, "pending", sp->pending_bytes);
  lua_createtable(L, a.n, 0);                    /* [facts, by_stream] */
  for (int i = 0; i < a.n; i++) {
    lua_createtable(L, 0, 3);
    set_id(L, "stream", a.v[i].stream);
    set_bytes(L, "pending", a.v[i].pending);
    set_bytes(L, "done", a.v[i].done);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "by_stream");
  set_bytes(L, "more", a.more);                  /* bytes on streams beyond by_stream */
  if (p->props.max_size) {
    double g = 32.0 * 1024 * 1024;         /* the driver's granularity (calibration.md E7) */
    if (c->be->option_get) c->be->option_get(c->b, "pool_granularity", &g);
    set_bytes(L, "max_size", p->props.max_size);
    set_bytes(L, "granularity", g >= 1 ? (uint64_t)g : 1);
  }
  ps_device_info d;
  if (p->props.location == PS_LOCATION_DEVICE &&
      c->be->device_info(c->b, p->props.device, &d) == PS_OK) {
    set_id(L, "device", p->props.device);
    set_bytes(L, "device_free", d.free);
    set_bytes(L, "device_total", d.total);
  }
  set_bytes(L, "retry_freed", o->retry_freed);
  set_bytes(L, "retry_pool_freed", o->retry_pool_freed);
  oom_advice(L, c, p, &a);
}

void ps_obs_alloc_failed(lua_State *L, ps_ctx *c, ps_poolud *p, ps_streamud *s, uint64_t size,
                         int status) {
  ps_seen_pool *sp = ps_seen_pool_of(p);
  ps_rec *r = c->obs->tracing ? ps_trace_rec(L, c, PS_OP_ALLOC_FAILED, 0) : NULL;
  if (r) {
    r->stream = s->id, r->size = size;
    ps_trace_pool(L, c, sp, 0, 1);
  }
  if (status != PS_ERR_MEMORY_ALLOCATION) {
    lua_pushnil(L);
    return;
  }
  sp->n.ooms++;
  push_oom(L, c, p, s, size);
}

void ps_obs_retry_begin(ps_ctx *c, ps_poolud *p) {
  c->obs->retry_mark = c->obs->live_total;
  c->obs->retry_pool_mark = ps_seen_pool_of(p)->live_bytes;
}

/* The collection's frees went through ps_obs_free: what it freed is the
 * drop in live bytes (of every pool, and of p). */
void ps_obs_retried(lua_State *L, ps_ctx *c, ps_poolud *p, ps_streamud *s, uint64_t size) {
  ps_obs *o = c->obs;
  ps_seen_pool *sp = ps_seen_pool_of(p);
  o->retry_freed = o->retry_mark > o->live_total ? o->retry_mark - o->live_total : 0;
  o->retry_pool_freed = o->retry_pool_mark > sp->live_bytes ? o->retry_pool_mark - sp->live_bytes : 0;
  sp->n.retries++;
  ps_rec *r = o->tracing ? ps_trace_rec(L, c, PS_OP_ALLOC_RETRY, 0) : NULL;
  if (!r) return;
  r->stream = s->id, r->size = size, r->value = o->retry_freed;
  ps_trace_pool(L, c, sp, 0, 1);
}

/* A cudaFree waits for the device, where a pool may give memory back (the
 * sim's release_on_cuda_free): the caller began a wait for it, ended here. */
void ps_obs_free(lua_State *L, ps_ctx *c, const ps_bufferud *b, ps_streamud *s, int collected) {
  ps_obs *o = c->obs;
  if (collected) {
    o->collected[o->ncollected++ % PS_RING] = (struct ps_collected){
      .buffer = b->id, .pool = b->kind == PS_KIND_POOL && b->pool ? b->pool->id : -1,
      .size = b->size };
    o->collected_bytes += b->size;
  }
  if (b->kind != PS_KIND_POOL || b->ipc == PS_IPC_IMPORTED) {   /* imported: not this pool's */
    int waited = b->kind == PS_KIND_MALLOC && !collected;
    ps_ledger_untrack(c, b);
    if (o->tracing) {
      ps_trace_buffer(L, c, PS_OP_FREE, b, -1, NULL, collected, 0);
      if (waited) ps_trace_sync_end(L, c);
    }
    if (waited) {
      count_releases(c, &(ps_what){ .op = PS_OP_FREE, .buffer = b });
      ps_ledger_released(L, c);
    }
    return;
  }
  ps_seen_pool *sp = ps_seen_pool_of(b->pool);
  ps_seen_stream *ss = s ? ps_seen_stream_of(s) : NULL;
  if (ss) advance(ss);
  ps_ledger_free(c, sp, ss, b);
  if (o->tracing) ps_trace_buffer(L, c, PS_OP_FREE, b, s ? s->id : 0, sp, collected, 0);
}

void ps_obs_push_why_fresh(lua_State *L, const ps_bufferud *b) {
  const ps_seen_buffer *sb = ps_seen_buffer_of(b);
  ps_push_why(L, ps_context(L), sb->why_code, sb->why_slot, b->id, b->pool ? b->pool->id : -1,
              b->stream ? b->stream->id : -1);
}

void ps_obs_push_sources(lua_State *L, const ps_bufferud *b) {
  const ps_seen_buffer *sb = ps_seen_buffer_of(b);
  ps_push_sources(L, ps_context(L), b->id, sb->why_slot, sb->reused_from, sb->reuse_rule);
}

void ps_obs_reuse(const ps_bufferud *b, int32_t *from, ps_reuse_rule *rule) {
  const ps_seen_buffer *sb = ps_seen_buffer_of(b);
  *from = sb->reused_from ? sb->reused_from : -1;
  *rule = sb->reused_from ? (ps_reuse_rule)sb->reuse_rule : PS_RULE_NONE;
}

static void set_count(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* Remembers a release of sp's memory down to `now`, caused by op on the
 * object cause_id. */
static void add_release(ps_ctx *c, ps_seen_pool *p, uint64_t before, uint64_t now, int op,
                        int32_t cause_id) {
  ps_obs *o = c->obs;
  p->n.releases[op]++;
  uint64_t threshold = 0;
  if (c->be->pool_get(c->b, p->h, PS_ATTR_RELEASE_THRESHOLD, &threshold) != PS_OK) threshold = PS_UNSET;
  o->releases[o->nreleases++ % PS_RING] = (struct ps_release){ .pool = p->id, .cause_id = cause_id,
    .cause_op = (uint8_t)op, .size = before - now, .reserved = now, .threshold = threshold };
}

/* Pool p holds `now` bytes: when that is less than last read and no host
 * wait came between, a stream destroyed with work queued has finished it,
 * and the pool gave back what that work freed (the driver does so then,
 * docs/calibration.md Host costs): a release caused by that destroy. */
struct gone { ps_ctx *c; int32_t stream; };

/* A destroyed stream with a free of the pool still pending. */
static void find_gone(void *ud, int32_t stream, uint64_t bytes, int done) {
  struct gone *g = ud;
  (void)bytes;
  if (!done && !g->stream && stream > 0 && !ps_stream_by_id(g->c, stream)) g->stream = stream;
}

static void deferred_release(ps_ctx *c, ps_seen_pool *p, uint64_t now) {
  if (!c->obs->busy_destroyed || now == PS_UNSET || p->seen_reserved == PS_UNSET ||
      now >= p->seen_reserved)
    return;
  struct gone g = { c, 0 };   /* the stream whose frees the pool held, else the last one */
  ps_ledger_pending_by_stream(c, p, find_gone, &g);
  add_release(c, p, p->seen_reserved, now, PS_OP_STREAM_DESTROY,
              g.stream ? g.stream : c->obs->busy_destroyed);
  p->seen_reserved = now;
}

/* The first estimate makes the ledger keep the pool's block edges from
 * then on (docs/explain.md). */
void ps_obs_pool_view(lua_State *L, ps_ctx *c, const ps_poolud *p, uint64_t reserved,
                      int estimates) {
  ps_seen_pool *sp = ps_seen_pool_of(p);
  if (c->obs->busy_destroyed && reserved < sp->seen_reserved && sp->seen_reserved != PS_UNSET) {
    deferred_release(c, sp, reserved);
    ps_ledger_learn(L, c);                /* the destroyed stream's frees completed */
  }
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
  if (w->stream) ps_trace_span(c, r, w->stream->id ? ps_seen_stream_of(w->stream) : NULL);
  return r;
}

void ps_obs_enqueued(lua_State *L, ps_ctx *c, const ps_what *w) {
  ps_seen_stream *ss = ps_seen_stream_of(w->stream);
  uint64_t pos = advance(ss);
  if (w->op == PS_OP_RECORD) {
    ps_seen_event *se = ps_seen_event_of(w->event);
    se->rec_stream = w->stream->id;
    se->rec_pos = pos;
    memcpy(se->knew, ss->knows, sizeof se->knew);
  } else if (w->op == PS_OP_WAIT) {
    const ps_seen_event *se = ps_seen_event_of(w->event);
    if (se->rec_pos) learns(ss, se->rec_stream, se->rec_pos);
    for (int i = 0; se->rec_pos && i < PS_KNOWS; i++)   /* the driver follows waits through streams */
      if (se->knew[i].pos && se->knew[i].stream != ss->id) learns(ss, se->knew[i].stream, se->knew[i].pos);
  }
  if (c->obs->tracing) record(L, c, w, 0);
}

/* Every followed pool's reserved bytes are read before and after each
 * host wait (never on alloc or free): a drop is a release. */
void ps_obs_wait_begin(ps_ctx *c) {
  for (ps_seen_pool *p = c->obs->pools; p; p = p->next) {
    p->wait_reserved = reserved_of(c, p);
    deferred_release(c, p, p->wait_reserved);
  }
  if (c->obs->tracing) ps_trace_sync_begin(c);
}

/* The id of the object a release's cause names (docs/trace.md's
 * cause_id): a stream, an event, a pool or a buffer; -1 for none. */
static int32_t cause_id(const ps_what *w) {
  switch (w->op) {
    case PS_OP_STREAM_SYNC: case PS_OP_STREAM_DESTROY: return w->stream ? w->stream->id : -1;
    case PS_OP_EVENT_SYNC: return w->event ? w->event->id : -1;
    case PS_OP_TRIM: return w->pool ? w->pool->id : -1;
    case PS_OP_DEVICE_SYNC: return -1;
    default: return w->buffer ? w->buffer->id : -1;   /* verify, read, write, a cudaFree */
  }
}

/* After a host wait caused by w: each pool that holds less than when the
 * wait began gave memory back; counted and remembered in the ring.
 * Returns how many did. */
/* Ends a quiet wait: the pools' counts move on without a release. */
static void forget_wait(ps_ctx *c) {
  for (ps_seen_pool *p = c->obs->pools; p; p = p->next) {
    uint64_t now = reserved_of(c, p);
    p->wait_reserved = PS_UNSET;
    if (now != PS_UNSET) p->seen_reserved = now;
  }
}

static int count_releases(ps_ctx *c, const ps_what *w) {
  ps_obs *o = c->obs;
  int n = 0;
  for (ps_seen_pool *p = o->pools; p; p = p->next) {
    uint64_t before = p->wait_reserved, now = reserved_of(c, p);
    p->wait_reserved = PS_UNSET;
    if (now != PS_UNSET) p->seen_reserved = now;
    if (before == PS_UNSET || now == PS_UNSET || now >= before) continue;
    add_release(c, p, before, now, w->op, cause_id(w));
    n++;
  }
  return n;
}

/* Marks stream t synced and done up to pos. */
static void synced_to(ps_seen_stream *t, uint64_t pos) {
  if (pos > t->synced) t->synced = pos;
  if (pos > t->done) t->done = pos;
}

/* The host learned what s knew of other streams (knew). */
static void synced_knew(ps_ctx *c, const ps_seen_stream *s, const ps_knows *knew) {
  for (int i = 0; knew && i < PS_KNOWS; i++) {
    ps_seen_stream *o = knew[i].pos ? ps_stream_by_id(c, knew[i].stream) : NULL;
    if (o && o != s) synced_to(o, knew[i].pos);
  }
}

/* Host synchronisation of stream s (NULL: every stream) up to upto (for
 * every stream: its last operation): marks it synced and done, and the
 * streams it waited on through events up to where it waited (knew: what
 * s knew by upto), as the host learns them too; waiting for all of the
 * legacy default stream (knew is its own) also waits for every blocking
 * stream (CUDA's legacy-stream rule, which the sim models). */
static void synced(ps_ctx *c, ps_seen_stream *s, uint64_t upto, const ps_knows *knew) {
  for (ps_seen_stream *t = s ? s : c->obs->streams; t; t = s ? NULL : t->next)
    synced_to(t, s ? upto : t->ops);
  if (!s) return;
  if (s->id == 0 && knew == s->knows)   /* waiting for the legacy stream waits for */
    for (ps_seen_stream *t = c->obs->streams; t; t = t->next)   /* every blocking stream */
      if (t->blocking && t != s) {
        synced_to(t, t->ops);
        synced_knew(c, t, t->knows);
      }
  synced_knew(c, s, knew);
}

/* The end of every host wait, in one order: the stream's position (verify,
 * read and write queue work first), the record and the releases it
 * caused, how far the wait saw streams complete, the frees that completed,
 * the blocks the pools gave back. */
void ps_obs_waited(lua_State *L, ps_ctx *c, const ps_what *w) {
  ps_seen_stream *ss = w->stream ? ps_seen_stream_of(w->stream) : NULL;
  int learn = 1;
  uint64_t upto = 0;
  const ps_knows *knew = NULL;
  switch (w->op) {
    case PS_OP_VERIFY: case PS_OP_READ: case PS_OP_WRITE: advance(ss); /* fall through */
    case PS_OP_STREAM_SYNC: upto = ss->ops, knew = ss->knows; break;
    case PS_OP_EVENT_SYNC:
      ss = recorded_on(c, w->event, &upto);
      knew = ps_seen_event_of(w->event)->knew;
      break;
    case PS_OP_DEVICE_SYNC: ss = NULL; break;
    /* a destroyed stream known idle, or whose destruction made a pool give
     * memory back (only an idle one's does, docs/calibration.md E3): its
     * frees completed now; a busy one's when its pool releases */
    case PS_OP_STREAM_DESTROY: learn = ss->done >= ss->ops ? 1 : -1; ss = NULL; break;
    default: learn = 0; ss = NULL; break;       /* trim: no stream waited for */
  }
  if (c->obs->tracing && !w->quiet) {
    ps_rec *r = record(L, c, w, w->collected ? PS_REC_COLLECTED : 0);
    if (r && w->op == PS_OP_TRIM) r->pool = w->pool->id, r->size = w->size;
    ps_trace_sync_end(L, c);
  }
  if (w->quiet) forget_wait(c);
  else if (count_releases(c, w) && learn < 0) learn = 1;
  if (ss || w->op == PS_OP_DEVICE_SYNC) synced(c, ss, upto, knew);
  if (learn > 0) ps_ledger_learn(L, c);
  ps_ledger_released(L, c);
}

void ps_obs_stream_destroyed(lua_State *L, ps_ctx *c, ps_streamud *s, int status, int collected) {
  ps_seen_stream *ss = ps_seen_stream_of(s);
  if (status == PS_OK && ss->done < ss->ops) c->obs->busy_destroyed = s->id;   /* maybe busy */
  unfollow_stream(c, ss);
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

/* poolsh.core.collected(since) -> the buffers the collector freed numbered
 * after since (at most the last 64), each {buffer, size, pool (pool
 * memory only)}; the number of the latest; and the bytes the collector
 * freed so far (all of them, listed or not). Reads only. */
int ps_obs_collected(lua_State *L) {
  ps_obs *o = ps_context(L)->obs;
  lua_Integer since = luaL_optinteger(L, 1, 0);
  uint64_t from = since < 0 ? 0 : (uint64_t)since;
  if (o->ncollected > PS_RING && from < o->ncollected - PS_RING) from = o->ncollected - PS_RING;
  lua_newtable(L);
  for (uint64_t i = from; i < o->ncollected; i++) {
    const struct ps_collected *r = &o->collected[i % PS_RING];
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, r->buffer);
    lua_setfield(L, -2, "buffer");
    lua_pushinteger(L, (lua_Integer)r->size);
    lua_setfield(L, -2, "size");
    if (r->pool >= 0) {
      lua_pushinteger(L, r->pool);
      lua_setfield(L, -2, "pool");
    }
    lua_rawseti(L, -2, (lua_Integer)(i - from + 1));
  }
  lua_pushinteger(L, (lua_Integer)o->ncollected);
  lua_pushinteger(L, (lua_Integer)o->collected_bytes);
  return 3;
}

/* A VMM call: one record (docs/trace.md), nothing else to follow (VMM
 * memory is no pool's and no Buffer's). */
void ps_obs_vmm(lua_State *L, ps_ctx *c, const ps_vmm_what *w) {
  ps_rec *r = c->obs->tracing ? ps_trace_rec(L, c, w->op, 0) : NULL;
  if (!r) return;
  r->range = w->range;
  r->other = w->memory;
  if (w->addr) r->addr = w->addr;
  r->size = w->size;
  if (w->op == PS_OP_VMM_MAP) r->value = w->memory_offset;
  if (w->location >= 0) r->kind = (uint8_t)w->location;
  if (w->access >= 0) r->kind = (uint8_t)w->access;
  if (w->device >= 0) r->rule = (uint8_t)w->device;
}
