/*
 * trace.c: the event recorder. While recording, every operation poolsh
 * performs appends a fixed-size record (ps_rec) to an array in C; Lua sees
 * the records as tables only when it asks (poolsh.trace.events()). The
 * fields follow docs/trace.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poolsh.h"

static const char *const op_names[PS_OP_COUNT] = {
  "alloc", "alloc_failed", "free", "free_completed", "reserve", "release", "copy",
  "fill", "touch", "verify", "spin", "record", "wait", "stream_sync", "event_sync",
  "device_sync", "trim", "set", "pool_create", "pool_destroy", "stream_create",
  "stream_destroy"
};

static const char *const kind_names[] = {"pool", "malloc", "pinned", "pageable"};

struct ps_trace {
  ps_rec *v;
  size_t n, cap;
  char **srcs;                  /* interned short source names */
  size_t nsrc, capsrc;
  int32_t last_src;             /* the last name found: checked first */
};

/* ---- sources ------------------------------------------------------------ */

/* Index of short_src in the table of names, added if new. */
static int32_t intern(ps_trace *tr, const char *name) {
  size_t i = 0;
  while (i < tr->nsrc && strcmp(tr->srcs[i], name) != 0) i++;
  if (i == tr->nsrc) {
    if (tr->nsrc == tr->capsrc) {
      size_t cap = tr->capsrc ? tr->capsrc * 2 : 8;
      char **v = realloc(tr->srcs, cap * sizeof *v);
      if (!v) return -1;
      tr->srcs = v, tr->capsrc = cap;
    }
    char *copy = strdup(name);
    if (!copy) return -1;
    tr->srcs[tr->nsrc++] = copy;
  }
  return (int32_t)i;
}

/* The first Lua frame above the running C function: file and line. */
static void where(lua_State *L, ps_trace *tr, ps_rec *r) {
  lua_Debug ar;
  for (int level = 1; level < 6 && lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
    if (tr->last_src < 0 || strcmp(tr->srcs[tr->last_src], ar.short_src) != 0)
      tr->last_src = intern(tr, ar.short_src);
    r->src = tr->last_src;
    r->line = ar.currentline;
    return;
  }
}

/* The name of a reuse rule (docs/explain.md), NULL for none or unknown. */
const char *ps_rule_name(int rule) {
  static const char *const names[] = {
    NULL, "stream order", "event dependency", "host synchronisation", "opportunistic",
    "internal dependency", NULL
  };
  return rule >= 0 && rule <= PS_RULE_UNKNOWN ? names[rule] : NULL;
}

static ps_trace *trace_new(ps_ctx *c) {
  if (!c->trace && (c->trace = calloc(1, sizeof *c->trace)) != NULL) c->trace->last_src = -1;
  return c->trace;
}

/* Where the running Lua code is (for the ledger's allocation sites). */
void ps_where(lua_State *L, ps_ctx *c, int32_t *src, int32_t *line) {
  ps_trace *tr = trace_new(c);
  ps_rec r;
  r.src = -1, r.line = 0;
  if (tr) where(L, tr, &r);
  *src = r.src, *line = r.line;
}

const char *ps_source_name(ps_ctx *c, int32_t src) {
  return c->trace && src >= 0 && (size_t)src < c->trace->nsrc ? c->trace->srcs[src] : "?";
}

/* ---- recording ---------------------------------------------------------- */


/* Appends a record of op with its sequence number, time and source
 * location; every other field unset. NULL when not recording or out of
 * memory. The pointer is valid until the next append. */
ps_rec *ps_trace_rec(lua_State *L, ps_ctx *c, ps_op op, int flags) {
  ps_trace *tr = c->trace;
  if (!c->tracing) return NULL;
  if (tr->n == tr->cap) {
    size_t cap = tr->cap ? tr->cap * 2 : 1024;
    ps_rec *v = realloc(tr->v, cap * sizeof *v);
    if (!v) return NULL;
    tr->v = v, tr->cap = cap;
  }
  ps_rec *r = &tr->v[tr->n++];
  memset(r, 0, sizeof *r);
  r->op = (uint8_t)op;
  r->stream = r->pool = r->buffer = r->other = r->src = -1;
  r->addr = r->size = r->reserved = r->used = r->pending = r->value = PS_UNSET;
  r->t = c->be->now(c->b);
  r->gc = (uint8_t)(flags & PS_REC_COLLECTED);
  if (!flags) where(L, tr, r);
  return r;
}

static uint64_t pool_attr(ps_ctx *c, ps_poolud *p, ps_pool_attr a) {
  uint64_t v = PS_UNSET;
  if (p->h && c->be->pool_get(c->b, p->h, a, &v) != PS_OK) v = PS_UNSET;
  return v;
}

/* Reads p's counters from the backend into the recorder's copies. */
static void pool_baseline(ps_ctx *c, ps_poolud *p) {
  p->last_reserved = pool_attr(c, p, PS_ATTR_RESERVED_CURRENT);
  p->last_used = pool_attr(c, p, PS_ATTR_USED_CURRENT);
}

/* After an operation on pool p was recorded (the last record): fills its
 * counters, and records a reserve event when the pool grew. The used
 * bytes move by used_delta (UsedMemCurrent is the exact sum of requested
 * bytes); reserved is read from the backend only when the operation can
 * have grown the pool (an alloc), since a driver query on every free
 * would cost more than the recording budget. */
void ps_trace_pool(lua_State *L, ps_ctx *c, ps_poolud *p, int64_t used_delta, int grows) {
  ps_trace *tr = c->trace;
  if (!c->tracing || !tr->n) return;
  if (!p->live || !p->h) {                   /* destroyed: no counters to read */
    tr->v[tr->n - 1].pool = p->id;
    return;
  }
  if (p->last_used == PS_UNSET || p->last_reserved == PS_UNSET) pool_baseline(c, p);
  else p->last_used += (uint64_t)used_delta;
  uint64_t reserved = grows ? pool_attr(c, p, PS_ATTR_RESERVED_CURRENT) : p->last_reserved;
  ps_rec *r = &tr->v[tr->n - 1];
  r->pool = p->id;
  r->reserved = reserved;
  r->used = p->last_used;
  r->pending = p->pending_bytes;
  if (reserved != PS_UNSET && p->last_reserved != PS_UNSET && reserved > p->last_reserved) {
    uint64_t grew = reserved - p->last_reserved;
    ps_rec *g = ps_trace_rec(L, c, PS_OP_RESERVE, PS_REC_NOSRC);
    if (g) g->pool = p->id, g->size = grew, g->reserved = reserved,
           g->src = tr->v[tr->n - 2].src, g->line = tr->v[tr->n - 2].line;
  }
  if (reserved != PS_UNSET) p->last_reserved = reserved;
}

/* Before a host synchronisation: remembers each pool's reserved bytes. */
void ps_trace_sync_begin(ps_ctx *c) {
  if (!c->tracing) return;
  for (ps_poolud *p = c->pools; p; p = p->next) pool_baseline(c, p);
}

/* After it: a release event for each pool that gave memory back, caused
 * by the synchronisation just recorded (the last record). */
void ps_trace_sync_end(lua_State *L, ps_ctx *c) {
  ps_trace *tr = c->trace;
  if (!c->tracing || !tr->n) return;
  size_t cause = tr->n - 1;
  for (ps_poolud *p = c->pools; p; p = p->next) {
    uint64_t now = pool_attr(c, p, PS_ATTR_RESERVED_CURRENT);
    if (now != PS_UNSET && p->last_reserved != PS_UNSET && now < p->last_reserved) {
      ps_rec *r = ps_trace_rec(L, c, PS_OP_RELEASE, PS_REC_NOSRC);
      if (!r) return;
      const ps_rec *why = &tr->v[cause];
      r->pool = p->id;
      r->size = p->last_reserved - now;
      r->reserved = now;
      r->kind = why->op;                     /* the cause: its op and its object */
      r->other = why->op == PS_OP_STREAM_SYNC ? why->stream
               : why->op == PS_OP_EVENT_SYNC ? why->other : why->pool;
      r->src = why->src, r->line = why->line;
    }
    if (now != PS_UNSET) p->last_reserved = now;
    p->last_used = pool_attr(c, p, PS_ATTR_USED_CURRENT);
  }
}

/* ---- the Lua side --------------------------------------------------------- */

static ps_trace *trace_of(lua_State *L) {
  ps_trace *tr = trace_new(ps_context(L));
  if (!tr) luaL_error(L, "poolsh.trace: out of memory");
  return tr;
}

/* Frees the recorder; the context calls it when it closes. */
void ps_trace_free(ps_trace *tr) {
  if (!tr) return;
  for (size_t i = 0; i < tr->nsrc; i++) free(tr->srcs[i]);
  free(tr->srcs);
  free(tr->v);
  free(tr);
}

/* poolsh.trace.start(): records from now on (keeps what was recorded).
 * Each live pool's counters become the baseline for reserve events. */
static int trace_start(lua_State *L) {
  ps_ctx *c = ps_context(L);
  trace_of(L);
  c->tracing = 1;
  for (ps_poolud *p = c->pools; p; p = p->next) pool_baseline(c, p);
  return 0;
}

static int trace_stop(lua_State *L) {
  ps_context(L)->tracing = 0;
  return 0;
}

static int trace_clear(lua_State *L) {
  ps_trace *tr = trace_of(L);
  tr->n = 0;
  return 0;
}

static int trace_recording(lua_State *L) {
  lua_pushboolean(L, ps_context(L)->tracing);
  return 1;
}

static int trace_count(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)trace_of(L)->n);
  return 1;
}

static void set_int(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

static void set_u64(lua_State *L, const char *k, uint64_t v) {
  if (v == PS_UNSET) return;
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* Pushes record i as a table (docs/trace.md). */
static void push_rec(lua_State *L, const ps_trace *tr, size_t i) {
  const ps_rec *r = &tr->v[i];
  lua_createtable(L, 0, 12);
  set_int(L, "seq", (int64_t)i + 1);
  lua_pushnumber(L, r->t);
  lua_setfield(L, -2, "t");
  lua_pushstring(L, op_names[r->op]);
  lua_setfield(L, -2, "op");
  if (r->src >= 0) {
    lua_pushfstring(L, "%s:%d", tr->srcs[r->src], (int)r->line);
    lua_setfield(L, -2, "src");
  }
  if (r->stream >= 0) set_int(L, "stream", r->stream);
  if (r->pool >= 0) set_int(L, "pool", r->pool);
  if (r->buffer >= 0) set_int(L, "buffer", r->buffer);
  set_u64(L, "addr", r->addr);
  set_u64(L, "size", r->size);
  set_u64(L, "reserved", r->reserved);
  set_u64(L, "used", r->used);
  set_u64(L, "pending", r->pending);
  if (r->dur > 0) {
    lua_pushnumber(L, r->dur);
    lua_setfield(L, -2, "dur");
  }
  switch (r->op) {
    case PS_OP_ALLOC: case PS_OP_FREE: case PS_OP_ALLOC_FAILED:
      lua_pushstring(L, kind_names[r->kind & 3]);
      lua_setfield(L, -2, "kind");
      if (r->op == PS_OP_ALLOC && r->rule != PS_RULE_UNKNOWN && r->kind == PS_KIND_POOL) {
        lua_pushboolean(L, r->rule != PS_RULE_NONE);
        lua_setfield(L, -2, "reused");
        if (ps_rule_name(r->rule)) {
          lua_pushstring(L, ps_rule_name(r->rule));
          lua_setfield(L, -2, "rule");
        }
        if (r->other >= 0) set_int(L, "reused_from", r->other);
      }
      break;
    case PS_OP_COPY:
      if (r->other >= 0) set_int(L, "src_buffer", r->other);
      if (r->buffer >= 0) set_int(L, "dst", r->buffer);
      break;
    case PS_OP_RECORD: case PS_OP_WAIT: case PS_OP_EVENT_SYNC:
      if (r->other >= 0) set_int(L, "event", r->other);
      break;
    case PS_OP_RELEASE:
      if (r->kind == PS_OP_STREAM_SYNC)
        lua_pushfstring(L, r->other ? "s%d:sync()" : "poolsh.default_stream():sync()", (int)r->other);
      else if (r->kind == PS_OP_EVENT_SYNC) lua_pushfstring(L, "e%d:sync()", (int)r->other);
      else if (r->kind == PS_OP_TRIM) lua_pushfstring(L, "p%d:trim()", (int)r->other);
      else lua_pushliteral(L, "poolsh.sync()");
      lua_setfield(L, -2, "cause");
      break;
    case PS_OP_SET:
      lua_pushstring(L, ps_pool_setting_name(r->kind));
      lua_setfield(L, -2, "name");
      if (r->kind > 0 && r->kind < 4) lua_pushboolean(L, r->value != 0);
      else if (r->value == UINT64_MAX) lua_pushnumber(L, (lua_Number)HUGE_VAL);
      else lua_pushinteger(L, (lua_Integer)r->value);
      lua_setfield(L, -2, "value");
      break;
    default:
      break;
  }
  if (r->gc) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "collected");
  }
}

/* poolsh.trace.events([from [, to]]) -> array of event tables. */
static int trace_events(lua_State *L) {
  ps_trace *tr = trace_of(L);
  lua_Integer from = luaL_optinteger(L, 1, 1), to = luaL_optinteger(L, 2, (lua_Integer)tr->n);
  if (from < 1) from = 1;
  if (to > (lua_Integer)tr->n) to = (lua_Integer)tr->n;
  lua_createtable(L, to >= from ? (int)(to - from + 1) : 0, 0);
  for (lua_Integer i = from; i <= to; i++) {
    push_rec(L, tr, (size_t)i - 1);
    lua_rawseti(L, -2, i - from + 1);
  }
  return 1;
}

static const luaL_Reg trace_funcs[] = {
  {"trace_start", trace_start}, {"trace_stop", trace_stop}, {"trace_clear", trace_clear},
  {"trace_events", trace_events}, {"trace_recording", trace_recording},
  {"trace_count", trace_count}, {NULL, NULL}
};

int poolsh_open_trace(lua_State *L) {
  lua_settop(L, 1);
  ps_setfuncs(L, trace_funcs);
  return 0;
}

/* ---- buffers ------------------------------------------------------------ */

/* Records the allocation of b (from pool p; NULL for the other kinds). */
void ps_trace_alloc(lua_State *L, ps_ctx *c, const ps_bufferud *b, ps_poolud *p) {
  ps_rec *r = ps_trace_rec(L, c, PS_OP_ALLOC, b->src >= 0 ? PS_REC_NOSRC : 0);
  if (!r) return;
  if (b->src >= 0) r->src = b->src, r->line = b->line;   /* the ledger found it already */
  r->buffer = b->id, r->addr = b->addr, r->size = b->size, r->kind = (uint8_t)b->kind;
  r->stream = b->stream ? b->stream->id : -1;
  r->rule = b->kind != PS_KIND_POOL ? PS_RULE_UNKNOWN
          : b->reused_from >= 0 ? (uint8_t)b->reuse_rule : PS_RULE_NONE;
  r->other = b->reused_from;
  if (p) ps_trace_pool(L, c, p, (int64_t)b->size, 1);
}

/* Records the free of b, queued on s for pool memory. */
void ps_trace_release(lua_State *L, ps_ctx *c, const ps_bufferud *b, ps_streamud *s,
                      ps_poolud *p, int from_gc) {
  ps_rec *r = ps_trace_rec(L, c, PS_OP_FREE, from_gc ? PS_REC_COLLECTED : 0);
  if (!r) return;
  r->buffer = b->id, r->addr = b->addr, r->size = b->size, r->kind = (uint8_t)b->kind;
  r->stream = s ? s->id : (b->kind == PS_KIND_POOL ? 0 : -1);
  if (p) ps_trace_pool(L, c, p, -(int64_t)b->size, 0);
}

/* Records an operation with no pool counters: ids are -1 and addr/size
 * PS_UNSET where they do not apply. */
void ps_trace_op(lua_State *L, ps_ctx *c, ps_op op, int stream, int buffer, int other,
                 uint64_t addr, uint64_t size) {
  ps_rec *r = ps_trace_rec(L, c, op, 0);
  if (!r) return;
  r->stream = stream, r->buffer = buffer, r->other = other, r->addr = addr, r->size = size;
}

/* Sets the duration of the last record (a spin's is known on both backends). */
void ps_trace_set_dur(ps_ctx *c, double ms) {
  if (c->tracing && c->trace->n) c->trace->v[c->trace->n - 1].dur = ms;
}
