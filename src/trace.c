/*
 * trace.c: the event recorder. While recording, every operation poolsh
 * performs appends a fixed-size record (ps_rec) to an array in C; Lua sees
 * the records as tables only when it asks (poolsh.trace.events()). The
 * fields follow docs/trace.md. When streaming (a line format, CSV), the
 * records are written to the file as rows every batch records, and dropped;
 * the file is a temporary beside the path (atomic_file.c), renamed into
 * place when the stream closes: the path holds the old file or a whole one.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "observer.h"

struct ps_trace {
  ps_rec *v;                    /* a ring: record i is v[(head + i) % cap] */
  size_t n, cap, head;
  size_t max;                   /* keep the newest max records, 0: all */
  uint64_t dropped;             /* older records overwritten since the last clear */
  int ticking;                  /* records are stamped with the backend's ticks */
  size_t settled;               /* records before this one have t in ms */
  uint64_t anchor_tick;         /* both clocks, read together when last settled */
  double anchor_ms;
  FILE *out;                    /* streaming: rows go here every batch records */
  ps_atomic file;               /* ... out is its temporary, renamed at the end */
  char *out_path;
  size_t batch;
  uint64_t written;             /* records written to out (and dropped) */
  int out_err;                  /* errno of a failed write: streaming stopped */
  double prev_t;                /* t of the last record written, NAN: none */
};

/* Record i (0: the oldest kept). */
static ps_rec *at(const ps_trace *tr, size_t i) {
  size_t k = tr->head + i;
  return &tr->v[k < tr->cap ? k : k - tr->cap];
}

static ps_trace *trace_new(ps_ctx *c) {
  ps_obs *o = c->obs;
  if (!o->trace && (o->trace = calloc(1, sizeof *o->trace)) != NULL)
    o->trace->prev_t = NAN;
  return o->trace;
}

/* ---- time ------------------------------------------------------------------ */

/* Reading the host's clock costs more than the rest of an event, so on a
 * backend with ticks (a counter at a constant rate against now()) records
 * are stamped with ticks, converted to ms when Lua reads them. */

static void anchor(ps_ctx *c, ps_trace *tr) {
  tr->anchor_tick = c->be->ticks(c->b);
  tr->anchor_ms = c->be->now(c->b);
}

/* Converts the ticks of records not yet settled to ms, interpolating
 * between the last anchor and a new one: exact at the anchors, and never
 * earlier than the record before. */
static void settle(ps_ctx *c, ps_trace *tr) {
  if (!tr->ticking) tr->settled = tr->n;
  if (tr->settled == tr->n) return;
  uint64_t tick0 = tr->anchor_tick;
  double ms0 = tr->anchor_ms;
  anchor(c, tr);
  double per = tr->anchor_tick > tick0 ? (tr->anchor_ms - ms0) / (double)(tr->anchor_tick - tick0) : 0;
  double last = tr->settled ? at(tr, tr->settled - 1)->t : ms0;
  for (size_t i = tr->settled; i < tr->n; i++) {
    ps_rec *r = at(tr, i);
    uint64_t k = r->tick;
    double t = k <= tick0 ? ms0 : k >= tr->anchor_tick ? tr->anchor_ms : ms0 + (double)(k - tick0) * per;
    r->t = last = t > last ? t : last;
  }
  tr->settled = tr->n;
}

/* ---- streaming ------------------------------------------------------------ */

/* The longest CSV row: every number at its widest. */
#define CSV_ROW_MAX 160

/* r as a row of RMM's CSV into row (CSV_ROW_MAX bytes), the columns of
 * lua/poolsh/export/rmm.lua's header, formatted as its M.row does; its
 * length, 0 when r is not a row. */
static int csv_row(char *row, const ps_rec *r) {
  const char *action = r->op == PS_OP_ALLOC ? "allocate" : r->op == PS_OP_FREE ? "free"
                     : r->op == PS_OP_ALLOC_FAILED ? "allocate failure" : NULL;
  if (!action) return 0;
  double x = floor(r->t * 1000.0 + 0.5);
  uint64_t us = x > 0 && x < 1.8e19 ? (uint64_t)x : 0, s = us / 1000000;
  uint64_t addr = r->op != PS_OP_ALLOC_FAILED && r->addr != PS_UNSET ? r->addr : 0;
  int64_t size = r->size != PS_UNSET ? (int64_t)r->size : 0;
  int n = snprintf(row, CSV_ROW_MAX, "1,%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 ".%06" PRIu64
                   ",%s,0x%" PRIx64 ",%" PRId64 ",%d\n", s / 3600, s / 60 % 60, s % 60,
                   us % 1000000, action, addr, size, r->stream >= 0 ? (int)r->stream : 0);
  return n > 0 && n < CSV_ROW_MAX ? n : 0;
}

/* Writes the records kept (settled first) as rows, and drops them. A
 * failed write keeps them all and stops streaming; the error is said when
 * the stream closes. */
static void spill(ps_ctx *c, ps_trace *tr) {
  if (!tr->out || !tr->n) return;
  settle(c, tr);
  errno = 0;
  char row[CSV_ROW_MAX];
  for (size_t i = 0; i < tr->n; i++) {
    int len = csv_row(row, at(tr, i));
    if (len) fwrite(row, 1, (size_t)len, tr->out);
  }
  if (fflush(tr->out) != 0 || ferror(tr->out)) {
    tr->out_err = errno ? errno : EIO;
    ps_atomic_abort(&tr->file);   /* the path keeps what it held before */
    tr->out = NULL;
    return;
  }
  tr->prev_t = at(tr, tr->n - 1)->t;
  tr->written += tr->n;
  tr->n = tr->settled = tr->head = 0;
}

/* ---- recording ---------------------------------------------------------- */


/* The next record, NULL when out of memory. With a cap, the oldest record
 * makes room once max are kept. The pointer is valid until the next
 * append. The array grows only while head is 0 (before the ring turns). */
static ps_rec *append(ps_ctx *c, ps_trace *tr) {
  if (tr->out && tr->n >= tr->batch) spill(c, tr);
  if (tr->max && tr->n == tr->max) {
    ps_rec *r = &tr->v[tr->head];
    tr->head = tr->head + 1 < tr->cap ? tr->head + 1 : 0;
    tr->dropped++;
    if (tr->settled) tr->settled--;
    return r;
  }
  if (tr->n == tr->cap) {
    size_t cap = tr->cap ? tr->cap * 2 : 1024;
    if (tr->max && cap > tr->max) cap = tr->max;
    ps_rec *v = realloc(tr->v, cap * sizeof *v);
    if (!v) return NULL;
    tr->v = v, tr->cap = cap;
  }
  return at(tr, tr->n++);
}

/* Keeps the newest max records (0: all) from now on, in a fresh array
 * whose ring starts at 0. 0 when out of memory (nothing changed). */
static int set_max(ps_trace *tr, size_t max) {
  if (max == tr->max) return 1;
  size_t keep = max && tr->n > max ? max : tr->n, cap = keep ? keep : 0;
  ps_rec *v = cap ? malloc(cap * sizeof *v) : NULL;
  if (cap && !v) return 0;
  for (size_t i = 0; i < keep; i++) v[i] = *at(tr, tr->n - keep + i);
  tr->dropped += tr->n - keep;
  tr->settled = tr->settled > tr->n - keep ? tr->settled - (tr->n - keep) : 0;
  free(tr->v);
  tr->v = v, tr->cap = cap, tr->n = keep, tr->head = 0, tr->max = max;
  return 1;
}

static void stamp(ps_ctx *c, const ps_trace *tr, ps_rec *r) {
  if (tr->ticking) r->tick = c->be->ticks(c->b);
  else r->t = c->be->now(c->b);
}

/* Appends a record of op with its sequence number, time and source
 * location (none with PS_REC_NOSRC or PS_REC_COLLECTED); every other
 * field unset. NULL when not recording or out of memory. */
ps_rec *ps_trace_rec(lua_State *L, ps_ctx *c, ps_op op, int flags) {
  ps_trace *tr = c->obs->trace;
  int32_t src = -1, line = 0;
  if (!c->obs->tracing) return NULL;
  if (!flags) ps_where(L, c, &src, &line);
  ps_rec *r = append(c, tr);
  if (!r) return NULL;
  *r = (ps_rec){
    .op = (uint8_t)op, .gc = (uint8_t)(flags & PS_REC_COLLECTED),
    .stream = -1, .pool = -1, .buffer = -1, .other = -1, .src = src, .line = line, .range = -1,
    .addr = PS_UNSET, .size = PS_UNSET, .reserved = PS_UNSET, .used = PS_UNSET,
    .pending = PS_UNSET, .value = PS_UNSET, .start = NAN
  };
  stamp(c, tr, r);
  return r;
}

static uint64_t pool_attr(ps_ctx *c, ps_seen_pool *p, ps_pool_attr a) {
  uint64_t v = PS_UNSET;
  if (p->h && c->be->pool_get(c->b, p->h, a, &v) != PS_OK) v = PS_UNSET;
  return v;
}

/* Reads p's counters from the backend into the recorder's copies. */
static void pool_baseline(ps_ctx *c, ps_seen_pool *p) {
  p->last_reserved = pool_attr(c, p, PS_ATTR_RESERVED_CURRENT);
  p->last_used = pool_attr(c, p, PS_ATTR_USED_CURRENT);
}

/* After an operation on pool p was recorded (the last record): fills its
 * counters, and records a reserve event when the pool grew. The used
 * bytes move by used_delta (UsedMemCurrent is the exact sum of requested
 * bytes); reserved is read from the backend only when the operation can
 * have grown the pool (an alloc), since a driver query on every free
 * would cost more than the recording budget. */
void ps_trace_pool(lua_State *L, ps_ctx *c, ps_seen_pool *p, int64_t used_delta, int grows) {
  ps_trace *tr = c->obs->trace;
  if (!c->obs->tracing || !tr->n) return;
  if (!p->followed || !p->h) {                   /* destroyed: no counters to read */
    at(tr, tr->n - 1)->pool = p->id;
    return;
  }
  if (p->last_used == PS_UNSET || p->last_reserved == PS_UNSET) pool_baseline(c, p);
  else p->last_used += (uint64_t)used_delta;
  uint64_t reserved = grows ? pool_attr(c, p, PS_ATTR_RESERVED_CURRENT) : p->last_reserved;
  ps_rec *r = at(tr, tr->n - 1);
  r->pool = p->id;
  if (r->op == PS_OP_POOL_CREATE) {            /* the Pool's struct precedes p */
    const ps_poolud *ud = (const ps_poolud *)(const void *)p - 1;
    r->kind = (uint8_t)((ud->props.location == PS_LOCATION_HOST) | (ud->is_default ? 2 : 0) |
                        (ud->props.ipc ? 4 : 0) | (ud->imported ? 8 : 0));
  }
  r->reserved = reserved;
  r->used = p->last_used;
  r->pending = p->pending_bytes;
  if (reserved != PS_UNSET && p->last_reserved != PS_UNSET && reserved > p->last_reserved) {
    uint64_t grew = reserved - p->last_reserved;
    int32_t src = r->src, line = r->line;
    ps_rec *g = ps_trace_rec(L, c, PS_OP_RESERVE, PS_REC_NOSRC);
    ps_addr at = 0;
    uint64_t mapped = 0;
    if (g) g->pool = p->id, g->size = grew, g->reserved = reserved, g->src = src, g->line = line;
    if (g && c->be->pool_last_map && c->be->pool_last_map(c->b, p->h, &at, &mapped) == PS_OK &&
        mapped == grew)
      g->addr = at;                              /* where the new memory lies */
  }
  if (reserved != PS_UNSET) p->last_reserved = reserved;
}

/* Before a host synchronisation: remembers each pool's reserved bytes. */
void ps_trace_sync_begin(ps_ctx *c) {
  if (!c->obs->tracing) return;
  for (ps_seen_pool *p = c->obs->pools; p; p = p->next) pool_baseline(c, p);
}

/* After it: a release event for each pool that gave memory back, caused
 * by the synchronisation just recorded (the last record). */
void ps_trace_sync_end(lua_State *L, ps_ctx *c) {
  ps_trace *tr = c->obs->trace;
  if (!c->obs->tracing || !tr->n) return;
  const ps_rec why = *at(tr, tr->n - 1);        /* a copy: appends may overwrite it */
  for (ps_seen_pool *p = c->obs->pools; p; p = p->next) {
    uint64_t now = pool_attr(c, p, PS_ATTR_RESERVED_CURRENT);
    if (now != PS_UNSET && p->last_reserved != PS_UNSET && now < p->last_reserved) {
      ps_rec *r = ps_trace_rec(L, c, PS_OP_RELEASE, PS_REC_NOSRC);
      if (!r) return;
      r->pool = p->id;
      r->size = p->last_reserved - now;
      r->reserved = now;
      r->kind = why.op;                      /* the cause: its op and its object */
      r->other = why.op == PS_OP_STREAM_SYNC || why.op == PS_OP_STREAM_DESTROY ? why.stream
               : why.op == PS_OP_EVENT_SYNC ? why.other
               : why.op == PS_OP_TRIM || why.op == PS_OP_DEVICE_SYNC ? why.pool
               : why.buffer;              /* verify, read, write, a cudaFree */
      r->src = why.src, r->line = why.line;
    }
    if (now != PS_UNSET) p->last_reserved = now;
    p->last_used = pool_attr(c, p, PS_ATTR_USED_CURRENT);
  }
}

/* ---- device work ------------------------------------------------------- */

static int is_work(int op) {
  return op == PS_OP_COPY || op == PS_OP_FILL || op == PS_OP_TOUCH || op == PS_OP_VERIFY ||
         op == PS_OP_SPIN;
}

/* Device work r just queued on ss (NULL: the legacy default stream): its
 * start and duration there, asked of the backend with a query that
 * changes nothing.
 * A copy the host waited for (pageable memory) is stamped when it was
 * called. Where the backend cannot tell, a spin keeps the time it asked
 * for, from the call's time, marked estimated; other work stays unknown. */
void ps_trace_span(ps_ctx *c, ps_rec *r, const ps_seen_stream *ss) {
  const ps_trace *tr = c->obs->trace;
  if (!is_work(r->op) || r->stream < 0 || (r->op == PS_OP_COPY && r->size == 0)) return;
  double q, a, b;
  if (c->be->stream_last_span && (ss || !r->stream) &&
      c->be->stream_last_span(c->b, ss ? ss->h : NULL, &q, &a, &b) == PS_OK && b >= a) {
    r->start = a, r->dur = b - a, r->estimated = 0;
    if (r->op == PS_OP_COPY && !tr->ticking && r->t >= b && q < r->t) {
      double before = tr->n > 1 ? at(tr, tr->n - 2)->t : tr->prev_t == tr->prev_t ? tr->prev_t : q;
      r->t = q > before ? q : before;
    }
  } else if (r->dur > 0) {
    r->estimated = 1;                  /* start: the call's time, when read */
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
  free(tr->v);
  ps_atomic_abort(&tr->file);   /* never saved: the path keeps what it held */
  free(tr->out_path);
  free(tr);
}

/* From now on, writes header and then the records as rows to path every
 * batch records (arguments from 2 on). The path streamed to already: sets
 * the batch size. */
static int stream_open(lua_State *L, ps_trace *tr) {
  const char *path = luaL_checkstring(L, 2), *header = luaL_checkstring(L, 3);
  lua_Integer batch = luaL_checkinteger(L, 4);
  luaL_argcheck(L, batch > 0, 4, "batch must be a positive integer");
  if (tr->out && strcmp(tr->out_path, path) == 0) return tr->batch = (size_t)batch, 0;
  if (tr->out || tr->out_path) return luaL_error(L, "poolsh.trace: already streaming to '%s'", tr->out_path);
  if (tr->max) return luaL_error(L, "poolsh.trace: stream_to cannot be combined with max_events");
  char *copy = strdup(path);
  int e = copy ? ps_atomic_open(&tr->file, path) : ENOMEM;
  if (e) {
    free(copy);
    return luaL_error(L, "poolsh.trace: cannot open '%s' for writing: %s", path, ps_atomic_strerror(e));
  }
  FILE *f = tr->file.f;
  if (fprintf(f, "%s\n", header) < 0 || fflush(f) != 0) {
    e = errno ? errno : EIO;
    ps_atomic_abort(&tr->file);
    free(copy);
    return luaL_error(L, "poolsh.trace: cannot write '%s': %s", path, strerror(e));
  }
  tr->out = f, tr->out_path = copy, tr->batch = (size_t)batch, tr->out_err = 0;
  return 0;
}

/* poolsh.core.trace_save() -> events written since the last clear: writes
 * what is kept to the file streamed to and renames it into place (nothing
 * when not streaming). Raises when a write failed: the path keeps what it
 * held before, and the events not written stay. */
static int trace_save(lua_State *L) {
  ps_trace *tr = trace_of(L);
  if (!tr->out_path) return lua_pushinteger(L, 0), 1;
  spill(ps_context(L), tr);
  if (tr->out) {
    int e = ps_atomic_commit(&tr->file);
    if (e && !tr->out_err) tr->out_err = e;
  }
  tr->out = NULL;
  if (tr->out_err) {
    lua_pushfstring(L, "poolsh.trace: writing '%s' failed after %I events: %s; the %I events "
                    "not written are kept (poolsh.trace.save them to another file)",
                    tr->out_path, (lua_Integer)tr->written, strerror(tr->out_err), (lua_Integer)tr->n);
  }
  free(tr->out_path);
  tr->out_path = NULL;
  if (tr->out_err) return lua_error(L);
  lua_pushinteger(L, (lua_Integer)tr->written);
  return 1;
}

/* -> the path streamed to (nil: none), events written, the batch size,
 * the error of a failed write (nil: none). */
static int trace_streaming(lua_State *L) {
  ps_trace *tr = trace_of(L);
  if (tr->out_path) lua_pushstring(L, tr->out_path);
  else lua_pushnil(L);
  lua_pushinteger(L, (lua_Integer)tr->written);
  lua_pushinteger(L, (lua_Integer)tr->batch);
  if (tr->out_err) lua_pushstring(L, strerror(tr->out_err));
  else lua_pushnil(L);
  return 4;
}

/* poolsh.trace.start([max_events [, path, header, batch]]): records from
 * now on (keeps what was recorded); with max_events > 0, only the newest
 * that many (0: all); with a path, streaming to it (stream_open).
 * Each live pool's counters become the baseline for reserve events. */
static int trace_start(lua_State *L) {
  ps_ctx *c = ps_context(L);
  ps_trace *tr = trace_of(L);
  if (!lua_isnoneornil(L, 2)) stream_open(L, tr);
  if (!lua_isnoneornil(L, 1)) {
    lua_Integer max = luaL_checkinteger(L, 1);
    luaL_argcheck(L, max >= 0, 1, "max_events must be a non-negative integer");
    if (max && tr->out_path) return luaL_error(L, "poolsh.trace: max_events cannot be combined with stream_to");
    settle(c, tr);
    if (!set_max(tr, (size_t)max)) return luaL_error(L, "poolsh.trace: out of memory");
  }
  if (!c->obs->tracing) {
    settle(c, tr);
    tr->ticking = c->be->ticks && c->be->ticks(c->b) != 0;
    if (tr->ticking) anchor(c, tr);
  }
  c->obs->tracing = 1;
  for (ps_seen_pool *p = c->obs->pools; p; p = p->next) pool_baseline(c, p);
  return 0;
}

static int trace_stop(lua_State *L) {
  ps_ctx *c = ps_context(L);
  if (c->obs->trace) settle(c, c->obs->trace);
  c->obs->tracing = 0;
  return 0;
}

static int trace_clear(lua_State *L) {
  ps_trace *tr = trace_of(L);
  settle(ps_context(L), tr);
  tr->n = tr->settled = tr->head = 0;
  tr->dropped = tr->written = 0;
  tr->prev_t = NAN;
  return 0;
}

static int trace_recording(lua_State *L) {
  lua_pushboolean(L, ps_context(L)->obs->tracing);
  return 1;
}

/* -> records kept, records dropped (overwritten by max_events). */
static int trace_count(lua_State *L) {
  ps_trace *tr = trace_of(L);
  lua_pushinteger(L, (lua_Integer)tr->n);
  lua_pushinteger(L, (lua_Integer)tr->dropped);
  return 2;
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
static void push_rec(lua_State *L, ps_ctx *c, const ps_trace *tr, size_t i) {
  const ps_rec *r = at(tr, i);
  lua_createtable(L, 0, 12);
  set_int(L, "seq", (int64_t)(tr->dropped + tr->written + i + 1));
  lua_pushnumber(L, r->t);
  lua_setfield(L, -2, "t");
  lua_pushstring(L, ps_op_names[r->op]);
  lua_setfield(L, -2, "op");
  if (r->src >= 0) {
    lua_pushfstring(L, "%s:%d", ps_name_of(c, r->src), (int)r->line);
    lua_setfield(L, -2, "src");
  }
  if (r->stream >= 0) set_int(L, "stream", r->stream);
  if (r->pool >= 0) set_int(L, "pool", r->pool);
  if (r->buffer >= 0) set_int(L, "buffer", r->buffer);
  if (r->range >= 0) set_int(L, "range", r->range);
  if (r->op >= PS_OP_VMM_RESERVE && r->other >= 0) set_int(L, "memory", r->other);
  set_u64(L, "addr", r->addr);
  set_u64(L, "size", r->size);
  set_u64(L, "reserved", r->reserved);
  set_u64(L, "used", r->used);
  set_u64(L, "pending", r->pending);
  if (r->start == r->start || r->estimated) {
    lua_pushnumber(L, r->start == r->start ? r->start : r->t);
    lua_setfield(L, -2, "start");
  }
  if (r->dur > 0 || r->start == r->start) {
    lua_pushnumber(L, r->dur);
    lua_setfield(L, -2, "dur");
  }
  if (r->estimated) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "dur_estimated");
  }
  switch (r->op) {
    case PS_OP_ALLOC: case PS_OP_FREE: case PS_OP_ALLOC_FAILED:
      lua_pushstring(L, ps_kind_names[r->kind & 3]);
      lua_setfield(L, -2, "kind");
      if (r->kind & 4) {                            /* another process's buffer */
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "imported");
      }
      if (r->op == PS_OP_ALLOC && r->rule != PS_RULE_UNKNOWN && r->kind == PS_KIND_POOL) {
        lua_pushboolean(L, r->rule != PS_RULE_NONE);
        lua_setfield(L, -2, "reused");
        if (ps_rule_names[r->rule]) {
          lua_pushstring(L, ps_rule_names[r->rule]);
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
    case PS_OP_POOL_CREATE:
      lua_pushstring(L, r->kind & 1 ? "host" : "device");
      lua_setfield(L, -2, "location");
      lua_pushboolean(L, r->kind & 2);
      lua_setfield(L, -2, "default");
      if (r->kind & 4) {                            /* IPC pools only (docs/ipc.md) */
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "ipc");
        lua_pushboolean(L, (r->kind & 8) != 0);
        lua_setfield(L, -2, "imported");
      }
      break;
    case PS_OP_RELEASE:
      lua_pushstring(L, ps_op_names[r->kind]);      /* poolsh/trace.lua words it */
      lua_setfield(L, -2, "cause_op");
      set_int(L, "cause_id", r->other);
      break;
    case PS_OP_ALLOC_RETRY:
      set_u64(L, "freed", r->value);                /* what the collection freed */
      break;
    case PS_OP_VMM_CREATE: case PS_OP_VMM_RELEASE:
      lua_pushstring(L, r->kind & 1 ? "host" : "device");
      lua_setfield(L, -2, "location");
      set_int(L, "device", r->rule);
      break;
    case PS_OP_VMM_MAP:
      set_u64(L, "memory_offset", r->value);
      break;
    case PS_OP_VMM_SET_ACCESS:
      lua_pushstring(L, r->kind == PS_ACCESS_RW ? "rw" : r->kind == PS_ACCESS_READ ? "read" : "none");
      lua_setfield(L, -2, "access");
      set_int(L, "device", r->rule);
      break;
    case PS_OP_SET:
      if (r->kind == PS_SET_ACCESS) {               /* value: device << 8 | access */
        lua_pushliteral(L, "access");
        lua_setfield(L, -2, "name");
        int a = (int)(r->value & 0xff);
        lua_pushstring(L, a == PS_ACCESS_RW ? "rw" : a == PS_ACCESS_READ ? "read" : "none");
        lua_setfield(L, -2, "value");
        set_int(L, "device", (int32_t)(uint32_t)(r->value >> 8));
        break;
      }
      lua_pushstring(L, r->kind < PS_SET_RESET_HIGH ? ps_setting_names[r->kind] : "reset_high");
      lua_setfield(L, -2, "name");
      if (r->kind > 0 && r->kind < PS_SET_RESET_HIGH) lua_pushboolean(L, r->value != 0);
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
  ps_ctx *c = ps_context(L);
  ps_trace *tr = trace_of(L);
  settle(c, tr);
  lua_Integer from = luaL_optinteger(L, 1, 1), to = luaL_optinteger(L, 2, (lua_Integer)tr->n);
  if (from < 1) from = 1;
  if (to > (lua_Integer)tr->n) to = (lua_Integer)tr->n;
  lua_createtable(L, to >= from ? (int)(to - from + 1) : 0, 0);
  for (lua_Integer i = from; i <= to; i++) {
    push_rec(L, c, tr, (size_t)i - 1);
    lua_rawseti(L, -2, i - from + 1);
  }
  return 1;
}

/* The records from..to (1-based, clamped to those kept) of the Lua
 * arguments at a and a + 1; *from > *to when none. */
static void range(lua_State *L, const ps_trace *tr, int a, size_t *from, size_t *to) {
  lua_Integer f = luaL_optinteger(L, a, 1), t = luaL_optinteger(L, a + 1, (lua_Integer)tr->n);
  if (f < 1) f = 1;
  if (t > (lua_Integer)tr->n) t = (lua_Integer)tr->n;
  *from = (size_t)f, *to = t < f ? (size_t)f - 1 : (size_t)t;
}

/* poolsh.core.trace_csv([from [, to]]) -> the RMM CSV rows (no header) of
 * the records from..to, as a string: csv_row's, the rows --trace streams. */
static int trace_csv(lua_State *L) {
  ps_trace *tr = trace_of(L);
  settle(ps_context(L), tr);
  size_t from, to;
  range(L, tr, 1, &from, &to);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t i = from; i <= to; i++) {
    char *row = luaL_prepbuffsize(&b, CSV_ROW_MAX);
    luaL_addsize(&b, (size_t)csv_row(row, at(tr, i - 1)));
  }
  luaL_pushresult(&b);
  return 1;
}

/* poolsh.core.trace_objects() -> pools, streams: the ids the records kept
 * name. pools[id] is the flags of the pool's last pool_create record (1
 * host, 2 default: push_rec's location and default), false when it has
 * none; streams[id] is true. What poolsh.trace.meta reads without
 * building an event table per record. */
static int trace_objects(lua_State *L) {
  ps_trace *tr = trace_of(L);
  lua_settop(L, 0);
  lua_newtable(L);
  lua_newtable(L);
  for (size_t i = 0; i < tr->n; i++) {
    const ps_rec *r = at(tr, i);
    if (r->pool >= 0) {
      if (r->op == PS_OP_POOL_CREATE) {
        lua_pushinteger(L, r->kind & 3);
        lua_rawseti(L, 1, r->pool);
      } else if (lua_rawgeti(L, 1, r->pool) == LUA_TNIL) {
        lua_pushboolean(L, 0);
        lua_rawseti(L, 1, r->pool);
      }
      lua_settop(L, 2);
    }
    if (r->stream >= 0) {
      lua_pushboolean(L, 1);
      lua_rawseti(L, 2, r->stream);
    }
  }
  return 2;
}

static int overlap(int64_t a, int64_t an, int64_t b, int64_t bn) {
  return a < b + bn && b < a + an;
}

/* poolsh.core.trace_regions() -> reserved, hull: what the PyTorch export's
 * replay needs ahead of the events (lua/poolsh/export/pytorch.lua's
 * prepass, read from the records in C). reserved[pool] = {{addr=, size=},
 * ...}: the regions its reserve records with an address give, in order;
 * hull[pool] = {lo=, hi=}: the span of its allocations outside all of
 * them, at least the pool's peak reserved when it has none. Integers as
 * Lua sees them (signed), so the comparisons are Lua's. */
static int trace_regions(lua_State *L) {
  ps_trace *tr = trace_of(L);
  lua_settop(L, 0);
  lua_newtable(L);                                 /* 1: reserved */
  lua_newtable(L);                                 /* 2: hull */
  lua_newtable(L);                                 /* 3: peak */
  for (size_t i = 0; i < tr->n; i++) {
    const ps_rec *r = at(tr, i);
    if (r->pool < 0) continue;
    if (r->reserved != PS_UNSET) {
      lua_Integer peak = lua_rawgeti(L, 3, r->pool) == LUA_TNUMBER ? lua_tointeger(L, -1) : 0;
      lua_pop(L, 1);
      lua_pushinteger(L, (lua_Integer)r->reserved > peak ? (lua_Integer)r->reserved : peak);
      lua_rawseti(L, 3, r->pool);
    }
    if (r->op == PS_OP_RESERVE && r->addr != PS_UNSET && r->size != PS_UNSET) {
      if (lua_rawgeti(L, 1, r->pool) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_rawseti(L, 1, r->pool);
      }
      lua_createtable(L, 0, 2);
      lua_pushinteger(L, (lua_Integer)r->addr);
      lua_setfield(L, -2, "addr");
      lua_pushinteger(L, (lua_Integer)r->size);
      lua_setfield(L, -2, "size");
      lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
      lua_pop(L, 1);
    }
  }
  for (size_t i = 0; i < tr->n; i++) {
    const ps_rec *r = at(tr, i);
    if (r->op != PS_OP_ALLOC || r->pool < 0 || r->addr == PS_UNSET || r->size == PS_UNSET) continue;
    int64_t a = (int64_t)r->addr, n = (int64_t)r->size;
    int covered = 0;
    if (lua_rawgeti(L, 1, r->pool) == LUA_TTABLE) {
      lua_Integer k = (lua_Integer)lua_rawlen(L, -1);
      for (lua_Integer j = 1; j <= k && !covered; j++) {
        lua_rawgeti(L, -1, j);
        lua_getfield(L, -1, "addr");
        lua_getfield(L, -2, "size");
        covered = overlap(a, n, lua_tointeger(L, -2), lua_tointeger(L, -1));
        lua_pop(L, 3);
      }
    }
    lua_pop(L, 1);
    if (covered) continue;
    if (lua_rawgeti(L, 2, r->pool) == LUA_TNIL) {
      lua_pop(L, 1);
      lua_createtable(L, 0, 2);
      lua_pushinteger(L, a);
      lua_setfield(L, -2, "lo");
      lua_pushinteger(L, a + n);
      lua_setfield(L, -2, "hi");
      lua_rawseti(L, 2, r->pool);
      continue;
    }
    lua_getfield(L, -1, "lo");
    lua_getfield(L, -2, "hi");
    lua_Integer lo = lua_tointeger(L, -2), hi = lua_tointeger(L, -1);
    lua_pop(L, 2);
    if (a < lo) lua_pushinteger(L, a), lua_setfield(L, -2, "lo");
    if (a + n > hi) lua_pushinteger(L, a + n), lua_setfield(L, -2, "hi");
    lua_pop(L, 1);
  }
  lua_pushnil(L);                                  /* the pools with a hull and no regions */
  while (lua_next(L, 2)) {                         /* [..., pool, hull] */
    lua_pushvalue(L, -2);
    int regions = lua_rawget(L, 1) != LUA_TNIL;
    lua_pop(L, 1);
    if (!regions) {
      lua_pushvalue(L, -2);
      lua_rawget(L, 3);
      lua_Integer peak = lua_tointeger(L, -1);     /* 0: none */
      lua_pop(L, 1);
      lua_getfield(L, -1, "lo");
      lua_getfield(L, -2, "hi");
      lua_Integer lo = lua_tointeger(L, -2), hi = lua_tointeger(L, -1);
      lua_pop(L, 2);
      if (lo + peak > hi) lua_pushinteger(L, lo + peak), lua_setfield(L, -2, "hi");
    }
    lua_pop(L, 1);
  }
  lua_settop(L, 2);
  return 2;
}

/* ---- the HTML report's rows ----------------------------------------------- */

/* A growable text in a userdata whose __gc frees it, so that an error
 * raised half-way (a cause that fails, no memory) leaks nothing. */
typedef struct { char *p; size_t n, cap; } text;

static int text_gc(lua_State *L) {
  text *t = lua_touserdata(L, 1);
  free(t->p);
  t->p = NULL;
  return 0;
}

/* A zeroed userdata of `size` bytes whose metatable `tname` has __gc = gc. */
static void *gc_box(lua_State *L, size_t size, const char *tname, lua_CFunction gc) {
  void *box = lua_newuserdatauv(L, size, 0);
  memset(box, 0, size);
  if (luaL_newmetatable(L, tname)) {
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return box;
}

static text *text_new(lua_State *L) { return gc_box(L, sizeof(text), "poolsh.trace.text", text_gc); }

/* Makes room for n more bytes in t. */
static void reserve(lua_State *L, text *t, size_t n) {
  size_t cap = t->cap ? t->cap : 65536;
  while (cap - t->n < n) cap *= 2;
  char *p = realloc(t->p, cap);
  if (!p) luaL_error(L, "poolsh.trace: out of memory");
  t->p = p, t->cap = cap;
}

/* Appends s[0..n) to t; the short pieces of a row byte by byte, which is
 * cheaper than a call to memcpy for each. */
static inline void put(lua_State *L, text *t, const char *s, size_t n) {
  if (t->cap - t->n < n) reserve(L, t, n);
  char *d = t->p + t->n;
  if (n <= 16) for (size_t i = 0; i < n; i++) d[i] = s[i];
  else memcpy(d, s, n);
  t->n += n;
}

static void puts_(lua_State *L, text *t, const char *s) { put(L, t, s, strlen(s)); }

static void putf(lua_State *L, text *t, const char *fmt, ...) {
  char b[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  put(L, t, b, n > 0 ? (size_t)(n < (int)sizeof b ? n : (int)sizeof b - 1) : 0);
}

/* The length of the UTF-8 sequence at u[i] (a byte >= 0x80) within n
 * bytes, 0 when it is not one: strict as Lua's utf8.len (no overlong
 * forms, surrogates or code points past U+10FFFF). */
static size_t utf8_seq(const unsigned char *u, size_t i, size_t n) {
  unsigned c = u[i], lo = 0x80, hi = 0xBF;
  size_t len;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (n - i < len || u[i + 1] < lo || u[i + 1] > hi) return 0;
  for (size_t k = 2; k < len; k++)
    if ((u[i + k] & 0xC0) != 0x80) return 0;
  return len;
}

/* s as util.quote writes a JSON string: '"', '\\', '<' and controls
 * escaped, each byte that is not UTF-8 as \ufffd; the runs between
 * escapes copied whole. */
static void quote(lua_State *L, text *t, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t run = 0, i = 0;
  put(L, t, "\"", 1);
  while (i < n) {
    unsigned ch = u[i];
    if (ch >= 32 && ch < 127 && ch != '"' && ch != '\\' && ch != '<') {
      i++;
      continue;
    }
    size_t k = ch >= 0x80 ? utf8_seq(u, i, n) : 0;
    if (k) { i += k; continue; }
    put(L, t, s + run, i - run);
    const char *e = ch == '"' ? "\\\"" : ch == '\\' ? "\\\\" : ch == '\b' ? "\\b" : ch == '\f' ? "\\f"
                  : ch == '\n' ? "\\n" : ch == '\r' ? "\\r" : ch == '\t' ? "\\t" : ch == '<' ? "\\u003c"
                  : ch >= 0x80 ? "\\ufffd" : NULL;
    if (e) puts_(L, t, e);
    else putf(L, t, "\\u%04x", ch);
    i++;
    run = i;
  }
  put(L, t, s + run, n - run);
  put(L, t, "\"", 1);
}

/* The shortest of %.15g, %.16g, %.17g that reads back as v, into b (32
 * bytes), without printf where a 64-bit long double decides it: y = v *
 * 10^d is then within y * 2^-64 of exact, so the rounding of y to an
 * integer and whether that integer reads back as v are known unless y lies
 * within y * 2^-60 of either boundary (then 0: the caller asks printf).
 * Length or 0. */
static int shortest_fast(double v, char *b) {
#if LDBL_MANT_DIG >= 64
  if (!(v >= 1e-3 && v < 1e15)) return 0;
  int e2;
  double m = frexp(v, &e2);
  if (m == 0.5) return 0;                              /* a power of two: uneven neighbours */
  long double half = ldexpl(1.0L, e2 - 54);             /* half an ulp of v */
  int k = 0;                                            /* digits before the point */
  for (double p = 1; p <= v; p *= 10) k++;
  static const long double pow10[] = {1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L,
    1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L};
  for (int digits = 15; digits <= 17; digits++) {
    int d = digits - k;                                 /* decimals */
    if (d < 0 || d > 20) return 0;
    long double y = (long double)v * pow10[d];
    long double q = floorl(y + 0.5L), f = y - floorl(y), eps = y * 0x1p-60L;
    if (fabsl(f - 0.5L) <= eps) return 0;
    long double err = fabsl(q - y), h = half * pow10[d];
    if (fabsl(err - h) <= eps) return 0;
    if (err >= h && digits < 17) continue;
    if (err >= h) return 0;
    uint64_t u = (uint64_t)q;
    char tmp[32];
    int n = 0;
    do tmp[n++] = (char)('0' + u % 10); while ((u /= 10) != 0);
    /* tmp holds the digits reversed; q < 10^digits; leading zeros when k <= 0 */
    while (n < d + 1) tmp[n++] = '0';
    int lo = 0;                                         /* trailing zeros of the fraction go */
    while (lo < d && tmp[lo] == '0') lo++;
    int len = 0;
    for (int i = n - 1; i >= d; i--) b[len++] = tmp[i];
    if (lo < d) {
      b[len++] = '.';
      for (int i = d - 1; i >= lo; i--) b[len++] = tmp[i];
    }
    b[len] = 0;
    return len;
  }
#else
  (void)v, (void)b;
#endif
  return 0;
}

/* A float as util.number writes it: the shortest of %.15g, %.16g, %.17g
 * that reads back as the same double; null for NaN and infinities. */
static void number(lua_State *L, text *t, double v) {
  if (v != v || v == HUGE_VAL || v == -HUGE_VAL) { puts_(L, t, "null"); return; }
  char b[64];
  int n = shortest_fast(v, b);
  if (n) { put(L, t, b, (size_t)n); return; }
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(b, sizeof b, "%.*g", digits, v);
    if (strtod(b, NULL) == v || digits == 17) break;
  }
  puts_(L, t, b);
}

/* v in decimal, as "%" PRId64 writes it. */
static void integer(lua_State *L, text *t, int64_t v) {
  char b[24], *e = b + sizeof b, *p = e;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do *--p = (char)('0' + u % 10); while ((u /= 10) != 0);
  if (v < 0) *--p = '-';
  put(L, t, p, (size_t)(e - p));
}

/* v as a quoted hex address, as "\"0x%" PRIx64 "\"" writes it. */
static void address(lua_State *L, text *t, uint64_t v) {
  char b[24], *e = b + sizeof b, *p = e;
  *--p = '"';
  do *--p = "0123456789abcdef"[v & 15]; while ((v >>= 4) != 0);
  *--p = 'x', *--p = '0', *--p = '"';
  put(L, t, p, (size_t)(e - p));
}

/* v as "%.3f" writes it (Lua's string.format too). Where long double
 * holds v * 1000 exactly (a 64-bit mantissa), v is rounded to
 * thousandths as printf does, to nearest, ties to even, without printf. */
static void fixed3(lua_State *L, text *t, double v) {
#if LDBL_MANT_DIG >= 64
  if (v >= 0 && v < 1e15) {
    uint64_t q = (uint64_t)rintl((long double)v * 1000.0L);
    char b[32], *e = b + sizeof b, *p = e;
    for (int k = 0; k < 3; k++, q /= 10) *--p = (char)('0' + q % 10);
    *--p = '.';
    do *--p = (char)('0' + q % 10); while ((q /= 10) != 0);
    put(L, t, p, (size_t)(e - p));
    return;
  }
#endif
  putf(L, t, "%.3f", v);
}

/* An id, or null when unset (-1). */
static void id_or_null(lua_State *L, text *t, int32_t v) {
  if (v >= 0) integer(L, t, v); else puts_(L, t, "null");
}

static void u64_or_null(lua_State *L, text *t, uint64_t v) {
  if (v != PS_UNSET) integer(L, t, (int64_t)v); else puts_(L, t, "null");
}

/* names[kind][id] (a string kept by the names table, at index nt), else
 * NULL. */
static const char *named(lua_State *L, int nt, const char *kind, int32_t id) {
  const char *s = NULL;
  int top = lua_gettop(L);
  if (lua_getfield(L, nt, kind) == LUA_TTABLE && lua_rawgeti(L, -1, id) == LUA_TSTRING)
    s = lua_tostring(L, -1);
  lua_settop(L, top);
  return s;
}

/* util.label's object: its name, else letter .. id. Adds it to t. */
static void object(lua_State *L, text *t, int nt, const char *kind, char letter, int32_t id) {
  int top = lua_gettop(L);
  const char *s = id >= 0 ? named(L, nt, kind, id) : NULL;
  if (s) puts_(L, t, s);
  else if (id >= 0) put(L, t, &letter, 1), integer(L, t, id);
  else putf(L, t, "%cnil", letter);
  lua_settop(L, top);
}

static int is_slice(int op) { return is_work(op); }

/* busy[stream] (the table at bt) as a number, NAN when none. */
static double busy_of(lua_State *L, int bt, int32_t stream) {
  if (stream >= 0) lua_rawgeti(L, bt, stream); else lua_getfield(L, bt, "?");
  double v = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : NAN;
  lua_pop(L, 1);
  return v;
}

static void set_busy(lua_State *L, int bt, int32_t stream, double v) {
  lua_pushnumber(L, v);
  if (stream >= 0) lua_rawseti(L, bt, stream); else lua_setfield(L, bt, "?");
}

static int real(double v) { return v == v && v >= 0; }

/* Pushes what the function at ct words release record r's cause as
 * (trace.cause's arguments: the call that released, the object's id). */
static void push_cause(lua_State *L, int ct, const ps_rec *r) {
  lua_pushvalue(L, ct);
  lua_pushstring(L, ps_op_names[r->kind]);
  lua_pushinteger(L, r->other);
  lua_call(L, 2, 1);
}

/* The record's detail "k=v" (html.lua's details, in its order), for the
 * fields push_rec gives r, quoted, into out (t a scratch); the cause
 * worded by the function at ct. */
static void details(lua_State *L, text *out, text *t, const ps_rec *r, int ct) {
  int any = 0;
  t->n = 0;
#define SEP() (any++ ? put(L, t, " ", 1) : (void)0)
  int pooled = r->op == PS_OP_ALLOC || r->op == PS_OP_FREE || r->op == PS_OP_ALLOC_FAILED;
  int reuse = r->op == PS_OP_ALLOC && r->rule != PS_RULE_UNKNOWN && r->kind == PS_KIND_POOL;
  if (reuse && ps_rule_names[r->rule]) SEP(), putf(L, t, "rule=%s", ps_rule_names[r->rule]);
  if (pooled) SEP(), puts_(L, t, "kind="), puts_(L, t, ps_kind_names[r->kind & 3]);
  if (reuse && r->other >= 0) SEP(), putf(L, t, "reused_from=%d", (int)r->other);
  if (r->op == PS_OP_RELEASE) {
    push_cause(L, ct, r);
    size_t n;
    const char *s = lua_tolstring(L, -1, &n);
    if (s) SEP(), puts_(L, t, "cause="), put(L, t, s, n);
    lua_pop(L, 1);
  }
  if ((r->op == PS_OP_RECORD || r->op == PS_OP_WAIT || r->op == PS_OP_EVENT_SYNC) && r->other >= 0)
    SEP(), putf(L, t, "event=%d", (int)r->other);
  if (r->op == PS_OP_COPY && r->buffer >= 0) SEP(), putf(L, t, "dst=%d", (int)r->buffer);
  if (r->op == PS_OP_COPY && r->other >= 0) SEP(), putf(L, t, "src_buffer=%d", (int)r->other);
  if (r->op == PS_OP_SET) {
    if (r->kind == PS_SET_ACCESS) {
      int a = (int)(r->value & 0xff);
      SEP(), putf(L, t, "name=access value=%s", a == PS_ACCESS_RW ? "rw" : a == PS_ACCESS_READ ? "read" : "none");
    } else {
      SEP(), putf(L, t, "name=%s value=", r->kind < PS_SET_RESET_HIGH ? ps_setting_names[r->kind] : "reset_high");
      if (r->kind > 0 && r->kind < PS_SET_RESET_HIGH) puts_(L, t, r->value ? "true" : "false");
      else if (r->value == UINT64_MAX) puts_(L, t, "inf");
      else integer(L, t, (int64_t)r->value);
    }
  }
  if (r->op == PS_OP_POOL_CREATE)
    SEP(), putf(L, t, "location=%s default=%s", r->kind & 1 ? "host" : "device", r->kind & 2 ? "true" : "false");
  if (r->op == PS_OP_VMM_CREATE || r->op == PS_OP_VMM_RELEASE)
    SEP(), putf(L, t, "location=%s", r->kind & 1 ? "host" : "device");
  if (r->estimated) SEP(), puts_(L, t, "dur_estimated=true");
  if (r->gc) SEP(), puts_(L, t, "collected=true");
#undef SEP
  if (!any) puts_(L, out, "null");
  else quote(L, out, t->p, t->n);
}

/* util.label's text of r ("alloc b7", "copy b2 -> b5", "wait e3"),
 * quoted, into t; objects named by the names table at nt; sc a scratch. */
static void label(lua_State *L, text *t, text *sc, const ps_rec *r, int nt) {
  const char *op = ps_op_names[r->op];
  sc->n = 0;
  if (r->op == PS_OP_COPY && (r->buffer >= 0 || r->other >= 0)) {
    puts_(L, sc, "copy ");
    object(L, sc, nt, "buffer", 'b', r->other);
    puts_(L, sc, " -> ");
    object(L, sc, nt, "buffer", 'b', r->buffer);
  } else if (r->buffer >= 0) {
    puts_(L, sc, op), put(L, sc, " ", 1), object(L, sc, nt, "buffer", 'b', r->buffer);
  } else if (r->range >= 0) {
    puts_(L, sc, op), put(L, sc, " ", 1), object(L, sc, nt, "range", 'r', r->range);
    if (r->op == PS_OP_VMM_MAP && r->other >= 0)
      put(L, sc, " ", 1), object(L, sc, nt, "memory", 'm', r->other);
  } else if (r->op >= PS_OP_VMM_RESERVE && r->other >= 0) {
    puts_(L, sc, op), put(L, sc, " ", 1), object(L, sc, nt, "memory", 'm', r->other);
  } else if ((r->op == PS_OP_RECORD || r->op == PS_OP_WAIT || r->op == PS_OP_EVENT_SYNC) && r->other >= 0) {
    puts_(L, sc, op), put(L, sc, " ", 1), object(L, sc, nt, "event", 'e', r->other);
  } else if (r->pool >= 0 && r->stream < 0) {
    puts_(L, sc, op), put(L, sc, " ", 1), object(L, sc, nt, "pool", 'p', r->pool);
  } else {
    puts_(L, sc, op);
  }
  quote(L, t, sc->p, sc->n);
}

/* The event's src ("name:line", r->src >= 0), quoted, into t; sc a scratch. */
static void src_of(lua_State *L, ps_ctx *c, text *t, text *sc, const ps_rec *r) {
  sc->n = 0;
  puts_(L, sc, ps_name_of(c, r->src));
  put(L, sc, ":", 1), integer(L, sc, r->line);
  quote(L, t, sc->p, sc->n);
}

/* poolsh.core.trace_html(from, to, names, busy, cause) -> the HTML
 * report's rows (lua/poolsh/export/html.lua's row) of records from..to,
 * joined by ",": names is meta.names, busy the slicer's end of each
 * stream's last slice (kept between calls), cause trace.cause. */
static int trace_html(lua_State *L) {
  ps_ctx *c = ps_context(L);
  ps_trace *tr = trace_of(L);
  settle(c, tr);
  size_t from, to;
  range(L, tr, 1, &from, &to);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_checktype(L, 4, LUA_TTABLE);
  luaL_checktype(L, 5, LUA_TFUNCTION);
  lua_settop(L, 5);
  text *t = text_new(L);                 /* 6 */
  text *sc = text_new(L);                /* 7: a label or src before it is quoted */
  if (to >= from && to - from < 1048576) reserve(L, t, (to - from + 1) * 192);   /* a row's usual size: no regrowth */
  for (size_t i = from; i <= to && i <= tr->n; i++) {   /* a callback may clear the trace */
    const ps_rec rec = *at(tr, i - 1), *r = &rec;      /* or grow it: r is a copy */
    int has_start = r->start == r->start || r->estimated, has_dur = r->dur > 0 || r->start == r->start;
    double start = r->start == r->start ? r->start : r->t;
    if (i > from) put(L, t, ",", 1);
    put(L, t, "[", 1);
    integer(L, t, (int64_t)(tr->dropped + tr->written + i));
    put(L, t, ",", 1);
    number(L, t, r->t);
    put(L, t, ",", 1);
    quote(L, t, ps_op_names[r->op], strlen(ps_op_names[r->op]));
    put(L, t, ",", 1);
    id_or_null(L, t, r->stream);
    put(L, t, ",", 1);
    id_or_null(L, t, r->pool);
    put(L, t, ",", 1);
    if (is_slice(r->op)) {                          /* util.slicer(0) */
      double b = busy_of(L, 4, r->stream);
      double s0 = has_start && real(start) ? start : (b == b && b > r->t ? b : r->t);
      double d = has_dur && real(r->dur) ? r->dur : 0;
      double end = s0 + d;
      double base = b == b ? b : s0;                /* math.max(busy[s] or start, start + dur) */
      set_busy(L, 4, r->stream, base >= end ? base : end);
      number(L, t, s0);
      put(L, t, ",", 1);
      number(L, t, d);
    } else {
      puts_(L, t, "null,null");
    }
    put(L, t, ",", 1);
    label(L, t, sc, r, 3);
    put(L, t, ",", 1);
    if (r->src >= 0) src_of(L, c, t, sc, r); else puts_(L, t, "null");
    put(L, t, ",", 1);
    id_or_null(L, t, r->buffer);
    put(L, t, ",", 1);
    if (r->addr != PS_UNSET) address(L, t, r->addr); else puts_(L, t, "null");
    put(L, t, ",", 1);
    u64_or_null(L, t, r->size);
    put(L, t, ",", 1);
    u64_or_null(L, t, r->reserved);
    put(L, t, ",", 1);
    u64_or_null(L, t, r->used);
    put(L, t, ",", 1);
    u64_or_null(L, t, r->pending);
    put(L, t, ",", 1);
    details(L, t, sc, r, 5);
    put(L, t, "]", 1);
  }
  lua_pushlstring(L, t->p ? t->p : "", t->n);
  return 1;
}

/* ---- the Chrome trace's events -------------------------------------------- */

/* What one trace_json call keeps per object, in a userdata whose __gc
 * frees it: each pool's counters by id (util.counter's state), each
 * stream's end of its last slice by id + 1, 0 for no stream (util.slicer's
 * busy, NAN: none). */
typedef struct { int64_t reserved, used, pending; } counters;
typedef struct { counters *pool; size_t npool; double *busy; size_t nbusy; } json_state;

static int json_state_gc(lua_State *L) {
  json_state *st = lua_touserdata(L, 1);
  free(st->pool), free(st->busy);
  *st = (json_state){0};
  return 0;
}

static json_state *json_state_new(lua_State *L) {
  return gc_box(L, sizeof(json_state), "poolsh.trace.json", json_state_gc);
}

/* Pool id's counters (id >= 0), zero when first asked for. */
static counters *pool_counters(lua_State *L, json_state *st, int32_t id) {
  size_t k = (size_t)id;
  if (k >= st->npool) {
    size_t n = st->npool ? st->npool : 16;
    while (n <= k) n *= 2;
    counters *p = realloc(st->pool, n * sizeof *p);
    if (!p) luaL_error(L, "poolsh.trace: out of memory");
    memset(p + st->npool, 0, (n - st->npool) * sizeof *p);
    st->pool = p, st->npool = n;
  }
  return &st->pool[k];
}

/* Stream id's busy end (id -1: the events without a stream), NAN at first. */
static double *stream_busy(lua_State *L, json_state *st, int32_t id) {
  size_t k = (size_t)(id + 1);
  if (k >= st->nbusy) {
    size_t n = st->nbusy ? st->nbusy : 16;
    while (n <= k) n *= 2;
    double *p = realloc(st->busy, n * sizeof *p);
    if (!p) luaL_error(L, "poolsh.trace: out of memory");
    for (size_t j = st->nbusy; j < n; j++) p[j] = NAN;
    st->busy = p, st->nbusy = n;
  }
  return &st->busy[k];
}

/* Calls out (at index ot) with what t holds, and empties t. */
static void json_flush(lua_State *L, text *t, int ot) {
  if (!t->n) return;
  lua_pushvalue(L, ot);
  lua_pushlstring(L, t->p, t->n);
  t->n = 0;
  lua_call(L, 1, 0);
}

/* The event's args (chrome.lua's args_json): push_rec's fields but t and
 * op, keys in byte order; the cause worded by the function at ct. */
static void json_args(lua_State *L, text *t, text *sc, ps_ctx *c, const ps_rec *r, uint64_t seq, int ct) {
  int any = 0;
#define KEY(k) (put(L, t, any++ ? ",\"" k "\":" : "{\"" k "\":", sizeof(k) + 3))
  int pooled = r->op == PS_OP_ALLOC || r->op == PS_OP_FREE || r->op == PS_OP_ALLOC_FAILED;
  int reuse = r->op == PS_OP_ALLOC && r->rule != PS_RULE_UNKNOWN && r->kind == PS_KIND_POOL;
  int evt = r->op == PS_OP_RECORD || r->op == PS_OP_WAIT || r->op == PS_OP_EVENT_SYNC;
  int set = r->op == PS_OP_SET, access = set && r->kind == PS_SET_ACCESS, create = r->op == PS_OP_POOL_CREATE;
  int has_start = r->start == r->start || r->estimated;
  int vmm = r->op >= PS_OP_VMM_RESERVE, vloc = r->op == PS_OP_VMM_CREATE || r->op == PS_OP_VMM_RELEASE;
  int vacc = r->op == PS_OP_VMM_SET_ACCESS;
  if (vacc)
    KEY("access"), puts_(L, t, r->kind == PS_ACCESS_RW ? "\"rw\"" : r->kind == PS_ACCESS_READ ? "\"read\"" : "\"none\"");
  if (r->addr != PS_UNSET) KEY("addr"), address(L, t, r->addr);
  if (r->buffer >= 0) KEY("buffer"), integer(L, t, r->buffer);
  if (r->op == PS_OP_RELEASE) {
    push_cause(L, ct, r);
    size_t n;
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
    if (s) KEY("cause"), quote(L, t, s, n);
    lua_pop(L, 1);
  }
  if (r->gc) KEY("collected"), puts_(L, t, "true");
  if (create) KEY("default"), puts_(L, t, r->kind & 2 ? "true" : "false");
  if (access) KEY("device"), integer(L, t, (int32_t)(uint32_t)(r->value >> 8));
  if (vloc || vacc) KEY("device"), integer(L, t, r->rule);
  if (r->op == PS_OP_COPY && r->buffer >= 0) KEY("dst"), integer(L, t, r->buffer);
  if (r->dur > 0 || r->start == r->start) KEY("dur"), number(L, t, r->dur);
  if (r->estimated) KEY("dur_estimated"), puts_(L, t, "true");
  if (evt && r->other >= 0) KEY("event"), integer(L, t, r->other);
  if (r->op == PS_OP_ALLOC_RETRY && r->value != PS_UNSET) KEY("freed"), integer(L, t, (int64_t)r->value);
  if (pooled && (r->kind & 4)) KEY("imported"), puts_(L, t, "true");
  if (create && (r->kind & 4)) KEY("imported"), puts_(L, t, r->kind & 8 ? "true" : "false");
  if (create && (r->kind & 4)) KEY("ipc"), puts_(L, t, "true");
  if (pooled) KEY("kind"), put(L, t, "\"", 1), puts_(L, t, ps_kind_names[r->kind & 3]), put(L, t, "\"", 1);
  if (create || vloc) KEY("location"), puts_(L, t, r->kind & 1 ? "\"host\"" : "\"device\"");
  if (vmm && r->other >= 0) KEY("memory"), integer(L, t, r->other);
  if (r->op == PS_OP_VMM_MAP && r->value != PS_UNSET) KEY("memory_offset"), integer(L, t, (int64_t)r->value);
  if (set) {
    const char *name = access ? "access" : r->kind < PS_SET_RESET_HIGH ? ps_setting_names[r->kind] : "reset_high";
    KEY("name"), quote(L, t, name, strlen(name));
  }
  if (r->pending != PS_UNSET) KEY("pending"), integer(L, t, (int64_t)r->pending);
  if (r->pool >= 0) KEY("pool"), integer(L, t, r->pool);
  if (r->range >= 0) KEY("range"), integer(L, t, r->range);
  if (r->reserved != PS_UNSET) KEY("reserved"), integer(L, t, (int64_t)r->reserved);
  if (reuse) KEY("reused"), puts_(L, t, r->rule != PS_RULE_NONE ? "true" : "false");
  if (reuse && r->other >= 0) KEY("reused_from"), integer(L, t, r->other);
  if (reuse && ps_rule_names[r->rule]) KEY("rule"), putf(L, t, "\"%s\"", ps_rule_names[r->rule]);
  KEY("seq"), integer(L, t, (int64_t)seq);
  if (r->size != PS_UNSET) KEY("size"), integer(L, t, (int64_t)r->size);
  if (r->src >= 0) KEY("src"), src_of(L, c, t, sc, r);
  if (r->op == PS_OP_COPY && r->other >= 0) KEY("src_buffer"), integer(L, t, r->other);
  if (has_start) KEY("start"), number(L, t, r->start == r->start ? r->start : r->t);
  if (r->stream >= 0) KEY("stream"), integer(L, t, r->stream);
  if (r->used != PS_UNSET) KEY("used"), integer(L, t, (int64_t)r->used);
  if (set) {
    KEY("value");
    if (access) {
      int a = (int)(r->value & 0xff);
      puts_(L, t, a == PS_ACCESS_RW ? "\"rw\"" : a == PS_ACCESS_READ ? "\"read\"" : "\"none\"");
    } else if (r->kind > 0 && r->kind < PS_SET_RESET_HIGH) {
      puts_(L, t, r->value ? "true" : "false");
    } else if (r->value == UINT64_MAX) {
      puts_(L, t, "null");
    } else {
      integer(L, t, (int64_t)r->value);
    }
  }
#undef KEY
  puts_(L, t, any ? "}" : "{}");
}

/* The lane (tid) of r: chrome.lua's lane. */
static int64_t json_lane(const ps_rec *r) {
  return r->stream >= 0 ? 1 + (int64_t)r->stream : r->pool >= 0 ? 1000000 + (int64_t)r->pool : 999999;
}

/* poolsh.core.trace_json(names, heads, lanes, cause, out, default_ms) ->
 * whether it wrote an event: lua/poolsh/export/chrome.lua's events (and
 * its pools' counter events) of every record kept, joined by ",", given
 * to out(string) a MiB at a time, so that memory stays a chunk whatever
 * the trace's size. names is meta.names, heads[pool] the start of its
 * counter events (else "p<id> memory"'s), cause trace.cause; lanes[tid]
 * is set true for each lane used; default_ms is the duration of a slice
 * without one. */
static int trace_json(lua_State *L) {
  ps_ctx *c = ps_context(L);
  ps_trace *tr = trace_of(L);
  settle(c, tr);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_checktype(L, 4, LUA_TFUNCTION);
  luaL_checktype(L, 5, LUA_TFUNCTION);
  double def = luaL_checknumber(L, 6);
  lua_settop(L, 6);
  text *t = text_new(L);                 /* 7 */
  text *sc = text_new(L);                /* 8 */
  json_state *st = json_state_new(L);    /* 9 */
  double clock = 0;
  int64_t last_lane = -1;
  for (size_t i = 0; i < tr->n; i++) {
    const ps_rec rec = *at(tr, i), *r = &rec;   /* a copy: callbacks and finalizers may record */
    if (r->t == r->t) clock = r->t;      /* util.clock */
    const char *op = ps_op_names[r->op];
    int64_t lane = json_lane(r);
    if (lane != last_lane) {
      if (lua_rawgeti(L, 3, lane) == LUA_TNIL) lua_pushboolean(L, 1), lua_rawseti(L, 3, lane);
      lua_pop(L, 1);
      last_lane = lane;
    }
    puts_(L, t, i ? ",{\"name\":" : "{\"name\":");
    label(L, t, sc, r, 1);
    puts_(L, t, ",\"cat\":\""), puts_(L, t, op), puts_(L, t, "\",\"pid\":1,\"tid\":");
    integer(L, t, lane), put(L, t, ",", 1);
    if (is_work(r->op)) {                /* util.slicer(default_ms) */
      int has_start = r->start == r->start || r->estimated, has_dur = r->dur > 0 || r->start == r->start;
      double start = r->start == r->start ? r->start : r->t;
      double *b = stream_busy(L, st, r->stream);
      double s0 = has_start && real(start) ? start : (*b == *b && *b > clock ? *b : clock);
      double d = has_dur && real(r->dur) ? r->dur : def;
      double end = s0 + d, base = *b == *b ? *b : s0;
      *b = base >= end ? base : end;
      double us = s0 * 1000, dus = d * 1000;
      puts_(L, t, "\"ph\":\"X\",\"ts\":"), fixed3(L, t, us), puts_(L, t, ",\"dur\":"), fixed3(L, t, dus);
    } else {
      double us = clock * 1000;
      puts_(L, t, "\"ph\":\"i\",\"s\":\"t\",\"ts\":"), fixed3(L, t, us);
    }
    puts_(L, t, ",\"args\":");
    json_args(L, t, sc, c, r, tr->dropped + tr->written + i + 1, 4);
    put(L, t, "}", 1);
    if (r->pool >= 0) {                  /* util.counter */
      counters *k = pool_counters(L, st, r->pool);
      int moved = 0;
      if (r->reserved != PS_UNSET) k->reserved = (int64_t)r->reserved, moved = 1;
      if (r->used != PS_UNSET) k->used = (int64_t)r->used, moved = 1;
      if (r->pending != PS_UNSET) k->pending = (int64_t)r->pending, moved = 1;
      if (r->op == PS_OP_FREE_COMPLETED && r->pending == PS_UNSET && r->size != PS_UNSET) {
        int64_t left = k->pending - (int64_t)r->size;
        k->pending = left > 0 ? left : 0, moved = 1;
      }
      if (moved) {
        put(L, t, ",", 1);
        if (lua_rawgeti(L, 2, r->pool) == LUA_TSTRING) {
          size_t n;
          const char *h = lua_tolstring(L, -1, &n);
          put(L, t, h, n);
        } else {
          putf(L, t, "{\"ph\":\"C\",\"name\":\"p%d memory\",\"cat\":\"memory\",\"pid\":1,\"tid\":%" PRId64
               ",\"ts\":", (int)r->pool, 1000000 + (int64_t)r->pool);
        }
        lua_pop(L, 1);
        double us = clock * 1000;
        fixed3(L, t, us);
        puts_(L, t, ",\"args\":{\"pending\":"), integer(L, t, k->pending);
        puts_(L, t, ",\"reserved\":"), integer(L, t, k->reserved);
        puts_(L, t, ",\"used\":"), integer(L, t, k->used), puts_(L, t, "}}");
      }
    }
    if (t->n >= 1048576) json_flush(L, t, 5);
  }
  json_flush(L, t, 5);
  lua_pushboolean(L, tr->n > 0);
  return 1;
}

/* ---- the PyTorch snapshot's replay ----------------------------------------- */

/* lua/poolsh/export/pytorch.lua's Replay over the records, in C: the same
 * trace entries, byte for byte, and the same state at the end (the
 * regions and the buffers still live or pending), which pytorch.lua turns
 * into the segments. Buffers and pools are found through address maps, so
 * an allocation costs the same however many buffers are live. */

/* A key as pytorch.lua's: a buffer (tag K_BUF: its id; K_AT: "@" .. addr)
 * or a pool (K_POOL: its id; K_MBUF, K_MAT: "malloc:" .. a buffer key). */
enum { K_BUF = 1, K_AT, K_POOL, K_MBUF, K_MAT };
typedef struct { int64_t v; int32_t idx; uint8_t tag; } slot;   /* tag 0: empty, 255: deleted */
typedef struct { slot *s; size_t cap, n, dead; } keymap;

typedef struct { int64_t addr, size; int32_t stream; int64_t order; } region;
typedef struct {
  uint8_t tag; int64_t v;                /* the pool's key */
  region *r; size_t nr, capr;
  int32_t head[3];                       /* buffers by state: 1 allocated, 2 pending free */
} rpool;
typedef struct {
  uint8_t tag, state; int64_t v;         /* the buffer's key; state 0: slot free */
  int64_t addr, size; int32_t stream, pool, src, line, prev, next;
} rbuf;
typedef struct { int64_t addr, size; } span;
typedef struct { span *r; size_t nr, capr; int64_t peak, lo, hi; int hull; } prepool;

typedef struct {
  keymap bufs, pools, completed;
  rbuf *b; size_t nb, capb; int32_t freeb;
  rpool *p; size_t np, capp;
  prepool *pre; size_t npre;
  int32_t *tmp; size_t captmp;          /* complete_pending's list */
  int64_t order, n;                      /* regions opened, entries written */
} replay;

static void *grow_array(lua_State *L, void *p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return p;
  size_t n = *cap ? *cap : 16;
  while (n < need) n *= 2;
  void *q = realloc(p, n * size);
  if (!q) luaL_error(L, "poolsh.trace: out of memory");
  memset((char *)q + *cap * size, 0, (n - *cap) * size);
  *cap = n;
  return q;
}

static size_t key_hash(uint8_t tag, int64_t v, size_t cap) {
  uint64_t h = ((uint64_t)v ^ ((uint64_t)tag << 56)) * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 17) & (cap - 1);
}

/* The index kept for key (tag, v), -1 when none. */
static int32_t map_get(const keymap *m, uint8_t tag, int64_t v) {
  if (!m->cap) return -1;
  for (size_t i = key_hash(tag, v, m->cap);; i = (i + 1) & (m->cap - 1)) {
    const slot *s = &m->s[i];
    if (s->tag == 0) return -1;
    if (s->tag == tag && s->v == v) return s->idx;
  }
}

static void map_del(keymap *m, uint8_t tag, int64_t v) {
  if (!m->cap) return;
  for (size_t i = key_hash(tag, v, m->cap);; i = (i + 1) & (m->cap - 1)) {
    slot *s = &m->s[i];
    if (s->tag == 0) return;
    if (s->tag == tag && s->v == v) { s->tag = 255, m->n--, m->dead++; return; }
  }
}

static void map_put(lua_State *L, keymap *m, uint8_t tag, int64_t v, int32_t idx) {
  if ((m->n + m->dead + 1) * 10 >= m->cap * 7) {      /* rehash, twice as large when full */
    size_t cap = m->cap ? m->cap : 64;
    while ((m->n + 1) * 10 >= cap * 4) cap *= 2;
    slot *s = calloc(cap, sizeof *s);
    if (!s) luaL_error(L, "poolsh.trace: out of memory");
    for (size_t i = 0; i < m->cap; i++)
      if (m->s[i].tag && m->s[i].tag != 255) {
        size_t j = key_hash(m->s[i].tag, m->s[i].v, cap);
        while (s[j].tag) j = (j + 1) & (cap - 1);
        s[j] = m->s[i];
      }
    free(m->s);
    m->s = s, m->cap = cap, m->dead = 0;
  }
  size_t i = key_hash(tag, v, m->cap), tomb = SIZE_MAX;
  for (;; i = (i + 1) & (m->cap - 1)) {
    slot *s = &m->s[i];
    if (s->tag == 255) { if (tomb == SIZE_MAX) tomb = i; continue; }
    if (s->tag == 0) break;
    if (s->tag == tag && s->v == v) { s->idx = idx; return; }
  }
  if (tomb != SIZE_MAX) i = tomb, m->dead--;
  m->s[i] = (slot){v, idx, tag};
  m->n++;
}

static int replay_gc(lua_State *L) {
  replay *R = lua_touserdata(L, 1);
  free(R->bufs.s), free(R->pools.s), free(R->completed.s), free(R->b);
  for (size_t i = 0; i < R->np; i++) free(R->p[i].r);
  for (size_t i = 0; i < R->npre; i++) free(R->pre[i].r);
  free(R->p), free(R->pre), free(R->tmp);
  memset(R, 0, sizeof *R);
  return 0;
}

/* The pool of key (tag, v), made when first asked for. */
static int32_t rpool_of(lua_State *L, replay *R, uint8_t tag, int64_t v) {
  int32_t k = map_get(&R->pools, tag, v);
  if (k >= 0) return k;
  R->p = grow_array(L, R->p, &R->capp, R->np + 1, sizeof *R->p);
  rpool *p = &R->p[R->np];
  p->tag = tag, p->v = v, p->head[1] = p->head[2] = -1;
  map_put(L, &R->pools, tag, v, (int32_t)R->np);
  return (int32_t)R->np++;
}

/* ---- pickle bytes (lua/poolsh/export/pickle.lua's) */

static void pk_int(lua_State *L, text *t, int64_t n) {
  unsigned char b[10];
  if (n >= 0 && n < 0x100) { b[0] = 'K', b[1] = (unsigned char)n; put(L, t, (char *)b, 2); return; }
  if (n >= 0 && n < 0x10000) { b[0] = 'M', b[1] = n & 0xff, b[2] = (n >> 8) & 0xff; put(L, t, (char *)b, 3); return; }
  if (n >= -0x80000000LL && n < 0x80000000LL) {
    uint32_t u = (uint32_t)(int32_t)n;
    b[0] = 'J';
    for (int k = 0; k < 4; k++) b[1 + k] = (u >> (8 * k)) & 0xff;
    put(L, t, (char *)b, 5);
    return;
  }
  uint64_t u = (uint64_t)n;
  int len = 8;
  for (int k = 0; k < 8; k++) b[2 + k] = (u >> (8 * k)) & 0xff;
  while (len > 1) {
    unsigned last = b[2 + len - 1], prev = b[2 + len - 2];
    if ((last == 0 && prev < 0x80) || (last == 0xff && prev >= 0x80)) len--; else break;
  }
  b[0] = 0x8a, b[1] = (unsigned char)len;
  put(L, t, (char *)b, (size_t)len + 2);
}

/* A str: its UTF-8, each byte that is not UTF-8 as U+FFFD (pickle.lua's). */
static void pk_str(lua_State *L, text *t, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t len = 0;
  for (size_t i = 0; i < n;) {
    size_t k = u[i] < 0x80 ? 1 : utf8_seq(u, i, n);
    len += k ? k : 3, i += k ? k : 1;
  }
  unsigned char h[5] = {'X', len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff, (len >> 24) & 0xff};
  put(L, t, (char *)h, 5);
  if (len == n) { put(L, t, s, n); return; }
  for (size_t i = 0; i < n;) {
    size_t k = u[i] < 0x80 ? 1 : utf8_seq(u, i, n);
    if (k) put(L, t, s + i, k), i += k;
    else put(L, t, "\xef\xbf\xbd", 3), i++;
  }
}

#define PK_KEY(L, t, k) pk_str(L, t, k, sizeof(k) - 1)

/* M.frames(src, op)'s pickle: [] without a src, else
 * [{filename = name, line = line, name = op}]. */
static void pk_frames(lua_State *L, ps_ctx *c, text *t, int32_t src, int32_t line, const char *op) {
  if (src < 0) { put(L, t, "]", 1); return; }
  const char *name = ps_name_of(c, src);
  put(L, t, "](}(", 4);
  PK_KEY(L, t, "filename");
  if (line >= 0) pk_str(L, t, name, strlen(name));
  else {                                  /* "name:-1" does not end in :digits */
    char b[24];
    size_t n = strlen(name);
    int k = snprintf(b, sizeof b, ":%d", (int)line);
    luaL_Buffer lb;
    luaL_buffinit(L, &lb);
    luaL_addlstring(&lb, name, n), luaL_addlstring(&lb, b, (size_t)k);
    luaL_pushresult(&lb);
    size_t m;
    const char *s = lua_tolstring(L, -1, &m);
    pk_str(L, t, s, m);
    lua_pop(L, 1);
  }
  PK_KEY(L, t, "line");
  pk_int(L, t, line >= 0 ? line : 0);
  PK_KEY(L, t, "name");
  pk_str(L, t, op, strlen(op));
  put(L, t, "ue", 2);
}

typedef struct {
  lua_State *L; ps_ctx *c; replay *R; text *t; int ot;
} pkctx;

/* Replay:entry: one trace entry (frames: src < 0 for none), in batches of
 * 1000 (MARK ... APPENDS), handed to out a MiB at a time. has_addr 0: oom
 * (no addr); device_free < 0: none. */
static void pk_entry(pkctx *x, const char *action, int has_addr, int64_t addr, int64_t size,
                     int64_t stream, int32_t src, int32_t line, const char *op, double t, int64_t device_free) {
  lua_State *L = x->L;
  text *o = x->t;
  if (x->R->n % 1000 == 0) put(L, o, x->R->n > 0 ? "e(" : "(", x->R->n > 0 ? 2 : 1);
  x->R->n++;
  put(L, o, "}(", 2);
  PK_KEY(L, o, "action");
  pk_str(L, o, action, strlen(action));
  if (has_addr) PK_KEY(L, o, "addr"), pk_int(L, o, addr);
  if (device_free >= 0) PK_KEY(L, o, "device_free"), pk_int(L, o, device_free);
  PK_KEY(L, o, "frames");
  pk_frames(L, x->c, o, src, line, op);
  PK_KEY(L, o, "size"), pk_int(L, o, size);
  PK_KEY(L, o, "stream"), pk_int(L, o, stream);
  PK_KEY(L, o, "time_us");
  double us = floor(t * 1000 + 0.5);
  if (us >= -9223372036854775808.0 && us < 9223372036854775808.0) pk_int(L, o, (int64_t)us);
  else {
    unsigned char b[9];
    uint64_t u;
    memcpy(&u, &us, 8);
    b[0] = 'G';
    for (int k = 0; k < 8; k++) b[1 + k] = (u >> (56 - 8 * k)) & 0xff;
    put(L, o, (char *)b, 9);
  }
  put(L, o, "u", 1);
  if (o->n >= 1048576) json_flush(L, o, x->ot);
}

static void add_region(pkctx *x, int32_t pool, int64_t addr, int64_t size, int32_t stream, double t) {
  replay *R = x->R;
  rpool *p = &R->p[pool];
  p->r = grow_array(x->L, p->r, &p->capr, p->nr + 1, sizeof *p->r);
  p->r[p->nr++] = (region){addr, size, stream >= 0 ? stream : 0, ++R->order};
  pk_entry(x, "segment_alloc", 1, addr, size, stream >= 0 ? stream : 0, -1, 0, NULL, t, -1);
}

static int64_t drop_region(pkctx *x, int32_t pool, size_t i, double t) {
  rpool *p = &x->R->p[pool];
  region r = p->r[i];
  memmove(p->r + i, p->r + i + 1, (p->nr - i - 1) * sizeof *p->r);
  p->nr--;
  pk_entry(x, "segment_free", 1, r.addr, r.size, r.stream, -1, 0, NULL, t, -1);
  return r.size;
}

static int overlaps64(int64_t a, int64_t an, int64_t b, int64_t bn) { return a < b + bn && b < a + an; }

/* Moves buffer i to state (0: gone), as Replay:set_state. */
static void set_state(replay *R, int32_t i, int state) {
  rbuf *b = &R->b[i];
  rpool *p = &R->p[b->pool];
  if (b->state) {                          /* out of its list */
    if (b->prev >= 0) R->b[b->prev].next = b->next; else p->head[b->state] = b->next;
    if (b->next >= 0) R->b[b->next].prev = b->prev;
  }
  if (!state) {
    map_del(&R->bufs, b->tag, b->v);
    b->state = 0, b->next = R->freeb, R->freeb = i;
    return;
  }
  b->state = (uint8_t)state, b->prev = -1, b->next = p->head[state];
  if (b->next >= 0) R->b[b->next].prev = i;
  p->head[state] = i;
}

/* tostring(key) < tostring(other key), for overlapping's order. */
static int key_less(const rbuf *a, const rbuf *b) {
  char x[32], y[32];
  snprintf(x, sizeof x, a->tag == K_AT ? "@%" PRId64 : "%" PRId64, a->v);
  snprintf(y, sizeof y, b->tag == K_AT ? "@%" PRId64 : "%" PRId64, b->v);
  return strcmp(x, y) < 0;
}

/* Completes pool's pending frees overlapping [addr, addr + size), by
 * address then key; mark: remember them as completed (complete_in). */
static void complete_pending(pkctx *x, int32_t pool, int64_t addr, int64_t size, double t, int mark) {
  replay *R = x->R;
  size_t n = 0;
  for (int32_t i = R->p[pool].head[2]; i >= 0; i = R->b[i].next) {
    if (!overlaps64(R->b[i].addr, R->b[i].size, addr, size)) continue;
    R->tmp = grow_array(x->L, R->tmp, &R->captmp, n + 1, sizeof *R->tmp);
    R->tmp[n++] = i;
  }
  int32_t *list = R->tmp;
  for (size_t a = 1; a < n; a++)           /* insertion sort: few at a time */
    for (size_t b = a; b > 0; b--) {
      const rbuf *p = &R->b[list[b - 1]], *q = &R->b[list[b]];
      if (p->addr < q->addr || (p->addr == q->addr && !key_less(q, p))) break;
      int32_t s = list[b]; list[b] = list[b - 1], list[b - 1] = s;
    }
  for (size_t k = 0; k < n; k++) {
    rbuf *b = &R->b[list[k]];
    uint8_t tag = b->tag;
    int64_t v = b->v;
    pk_entry(x, "free_completed", 1, b->addr, b->size, b->stream, -1, 0, NULL, t, -1);
    set_state(R, list[k], 0);
    if (mark) map_put(x->L, &R->completed, tag, v, 1);
  }
}

/* The prepass (trace_regions's, for pool id): its reserved regions, hull
 * and peak. */
static prepool *pre_of(lua_State *L, replay *R, int32_t id) {
  R->pre = grow_array(L, R->pre, &R->npre, (size_t)id + 1, sizeof *R->pre);
  return &R->pre[id];
}

static void prepass(lua_State *L, replay *R, const ps_trace *tr) {
  for (size_t i = 0; i < tr->n; i++) {
    const ps_rec *r = at(tr, i);
    if (r->pool < 0) continue;
    prepool *q = pre_of(L, R, r->pool);
    if (r->reserved != PS_UNSET && (int64_t)r->reserved > q->peak) q->peak = (int64_t)r->reserved;
    if (r->op == PS_OP_RESERVE && r->addr != PS_UNSET && r->size != PS_UNSET) {
      q->r = grow_array(L, q->r, &q->capr, q->nr + 1, sizeof *q->r);
      q->r[q->nr++] = (span){(int64_t)r->addr, (int64_t)r->size};
    }
  }
  for (size_t i = 0; i < tr->n; i++) {
    const ps_rec *r = at(tr, i);
    if (r->op != PS_OP_ALLOC || r->pool < 0 || r->addr == PS_UNSET || r->size == PS_UNSET) continue;
    prepool *q = pre_of(L, R, r->pool);
    int64_t a = (int64_t)r->addr, n = (int64_t)r->size;
    int covered = 0;
    for (size_t k = 0; k < q->nr && !covered; k++) covered = overlaps64(a, n, q->r[k].addr, q->r[k].size);
    if (covered) continue;
    if (!q->hull) q->hull = 1, q->lo = a, q->hi = a + n;
    else {
      if (a < q->lo) q->lo = a;
      if (a + n > q->hi) q->hi = a + n;
    }
  }
  for (size_t i = 0; i < R->npre; i++) {
    prepool *q = &R->pre[i];
    if (q->hull && !q->nr && q->lo + q->peak > q->hi) q->hi = q->lo + q->peak;
  }
}

static int has_region(const rpool *p, int64_t addr, int64_t size, int inside) {
  for (size_t i = 0; i < p->nr; i++) {
    const region *r = &p->r[i];
    if (inside ? addr >= r->addr && addr + size <= r->addr + r->size : r->addr == addr && r->size == size)
      return 1;
  }
  return 0;
}

/* Replay:ensure_region for an alloc of [a, a + n) in pool id (index pi). */
static void ensure_region(pkctx *x, int32_t pi, int32_t id, int64_t a, int64_t n, int32_t stream, double t) {
  replay *R = x->R;
  if (has_region(&R->p[pi], a, n, 1)) return;
  prepool *q = (size_t)id < R->npre ? &R->pre[id] : NULL;
  int found = 0;
  for (size_t k = 0; q && k < q->nr; k++)
    if (overlaps64(a, n, q->r[k].addr, q->r[k].size)) {
      found = 1;
      if (!has_region(&R->p[pi], q->r[k].addr, q->r[k].size, 0))
        add_region(x, pi, q->r[k].addr, q->r[k].size, stream, t);
    }
  if (found) return;
  if (q && q->hull && a >= q->lo && a + n <= q->hi) add_region(x, pi, q->lo, q->hi - q->lo, stream, t);
  else add_region(x, pi, a, n, stream, t);
}

/* The buffer key of r (Replay:find's): its id, else "@" .. addr; 0: none. */
static uint8_t buf_key(const ps_rec *r, int64_t *v) {
  if (r->buffer >= 0) { *v = r->buffer; return K_BUF; }
  if (r->addr != PS_UNSET) { *v = (int64_t)r->addr; return K_AT; }
  return 0;
}

static void replay_alloc(pkctx *x, const ps_rec *r, int32_t src, int32_t line, double t) {
  replay *R = x->R;
  if (r->addr == PS_UNSET || r->size == PS_UNSET) return;
  int64_t a = (int64_t)r->addr, n = (int64_t)r->size, kv;
  uint8_t kt = buf_key(r, &kv);
  int32_t pi;
  if (r->pool < 0) {                       /* a cudaMalloc'd buffer is its own segment */
    pi = rpool_of(x->L, R, kt == K_BUF ? K_MBUF : K_MAT, kv);
    add_region(x, pi, a, n, r->stream, t);
  } else {
    pi = rpool_of(x->L, R, K_POOL, r->pool);
    complete_pending(x, pi, a, n, t, 0);
    ensure_region(x, pi, r->pool, a, n, r->stream, t);
  }
  int32_t old = map_get(&R->bufs, kt, kv);
  if (old >= 0) set_state(R, old, 0);
  int32_t i = R->freeb;
  if (i >= 0) R->freeb = R->b[i].next;
  else {
    R->b = grow_array(x->L, R->b, &R->capb, R->nb + 1, sizeof *R->b);
    i = (int32_t)R->nb++;
  }
  R->b[i] = (rbuf){kt, 0, kv, a, n, r->stream >= 0 ? r->stream : 0, pi, src, line, -1, -1};
  map_put(x->L, &R->bufs, kt, kv, i);
  set_state(R, i, 1);
  pk_entry(x, "alloc", 1, a, n, r->stream >= 0 ? r->stream : 0, src, line, "alloc", t, -1);
}

static void replay_free(pkctx *x, const ps_rec *r, double t) {
  replay *R = x->R;
  int64_t kv = 0;
  uint8_t kt = buf_key(r, &kv);
  int32_t i = kt ? map_get(&R->bufs, kt, kv) : -1;
  rbuf *b = i >= 0 ? &R->b[i] : NULL;
  int64_t a = r->addr != PS_UNSET ? (int64_t)r->addr : b ? b->addr : 0;
  int64_t n = r->size != PS_UNSET ? (int64_t)r->size : b ? b->size : 0;
  int64_t s = r->stream >= 0 ? r->stream : 0;
  pk_entry(x, "free_requested", 1, a, n, s, r->src, r->line, "free", t, -1);
  if (b && R->p[b->pool].tag != K_POOL) {  /* cudaFree: completes at once, the segment goes */
    int32_t pi = b->pool;
    set_state(R, i, 0);
    pk_entry(x, "free_completed", 1, a, n, s, -1, 0, NULL, t, -1);
    while (R->p[pi].nr) drop_region(x, pi, R->p[pi].nr - 1, t);
  } else if (b) {
    set_state(R, i, 2);
  }
}

static void replay_free_completed(pkctx *x, const ps_rec *r, double t) {
  replay *R = x->R;
  int64_t kv = 0;
  uint8_t kt = buf_key(r, &kv);
  if (kt && map_get(&R->completed, kt, kv) >= 0) { map_del(&R->completed, kt, kv); return; }
  int32_t i = kt ? map_get(&R->bufs, kt, kv) : -1;
  rbuf *b = i >= 0 ? &R->b[i] : NULL;
  if (b && b->state != 2) return;
  int64_t a = r->addr != PS_UNSET ? (int64_t)r->addr : b ? b->addr : 0;
  int64_t n = r->size != PS_UNSET ? (int64_t)r->size : b ? b->size : 0;
  int64_t s = r->stream >= 0 ? r->stream : b ? b->stream : 0;
  if (b) set_state(R, i, 0);
  pk_entry(x, "free_completed", 1, a, n, s, -1, 0, NULL, t, -1);
}

static void replay_release(pkctx *x, const ps_rec *r, double t) {
  replay *R = x->R;
  int32_t pi = map_get(&R->pools, K_POOL, r->pool);
  if (pi < 0) return;
  int all = r->op == PS_OP_POOL_DESTROY || r->reserved == 0;
  int64_t want = r->size != PS_UNSET ? (int64_t)r->size : 0, freed = 0;
  for (size_t i = R->p[pi].nr; i-- > 0;) {
    if (!all && freed >= want) break;
    region g = R->p[pi].r[i];
    int busy = 0;
    for (int32_t k = R->p[pi].head[1]; k >= 0 && !busy; k = R->b[k].next)
      busy = overlaps64(R->b[k].addr, R->b[k].size, g.addr, g.size);
    if (all || !busy) {
      complete_pending(x, pi, g.addr, g.size, t, 1);
      freed += drop_region(x, pi, i, t);
    }
  }
}

static void replay_oom(pkctx *x, const ps_rec *r, double t, int has_total, int64_t total) {
  int64_t sum = 0;
  for (size_t i = 0; i < x->R->np; i++)
    for (size_t k = 0; k < x->R->p[i].nr; k++) sum += x->R->p[i].r[k].size;
  int64_t left = has_total && total - sum > 0 ? total - sum : 0;
  pk_entry(x, "oom", 0, 0, r->size != PS_UNSET ? (int64_t)r->size : 0, r->stream >= 0 ? r->stream : 0,
           r->src, r->line, "alloc_failed", t, left);
}

/* Pushes a buffer key as Lua's: its id, or "@" .. addr. */
static void push_key(lua_State *L, uint8_t tag, int64_t v) {
  if (tag == K_BUF || tag == K_POOL) lua_pushinteger(L, v);
  else if (tag == K_AT) lua_pushfstring(L, "@%I", (lua_Integer)v);
  else lua_pushfstring(L, tag == K_MAT ? "malloc:@%I" : "malloc:%I", (lua_Integer)v);
}

/* poolsh.core.trace_pickle(out, total) -> pools, live, freeing: writes
 * the snapshot's device trace entries (pytorch.lua's Replay:run and
 * entry writer, in batches of 1000) with out(string), a MiB at a time,
 * total the device's bytes (nil: unknown); returns the replay's state at
 * the end as pytorch.lua's Replay keeps it: pools[key] = {regions =
 * {{addr=, size=, stream=, order=}...}}, live[pool][key] and
 * freeing[pool][key] = {addr=, size=, stream=, pool=, src=, state=}. */
static int trace_pickle(lua_State *L) {
  ps_ctx *c = ps_context(L);
  ps_trace *tr = trace_of(L);
  settle(c, tr);
  luaL_checktype(L, 1, LUA_TFUNCTION);
  int has_total = !lua_isnoneornil(L, 2);
  int64_t total = has_total ? (int64_t)luaL_checkinteger(L, 2) : 0;
  lua_settop(L, 2);
  text *t = text_new(L);                   /* 3 */
  replay *R = lua_newuserdatauv(L, sizeof *R, 0);   /* 4 */
  memset(R, 0, sizeof *R);
  R->freeb = -1;
  if (luaL_newmetatable(L, "poolsh.trace.replay")) {
    lua_pushcfunction(L, replay_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  pkctx x = {L, c, R, t, 1};
  prepass(L, R, tr);
  double clock = 0;
  for (size_t i = 0; i < tr->n; i++) {
    const ps_rec rec = *at(tr, i), *r = &rec;   /* a copy: out and finalizers may record */
    if (r->t == r->t) clock = r->t;
    int kinded = r->op == PS_OP_ALLOC || r->op == PS_OP_FREE || r->op == PS_OP_ALLOC_FAILED;
    if (kinded && r->pool < 0 && (r->kind & 3) >= PS_KIND_PINNED) continue;   /* host memory */
    switch (r->op) {
      case PS_OP_RESERVE:
        if (r->pool >= 0 && r->addr != PS_UNSET && r->size != PS_UNSET) {
          int32_t pi = rpool_of(L, R, K_POOL, r->pool);
          if (!has_region(&R->p[pi], (int64_t)r->addr, (int64_t)r->size, 0))
            add_region(&x, pi, (int64_t)r->addr, (int64_t)r->size, r->stream, clock);
        }
        break;
      case PS_OP_ALLOC: replay_alloc(&x, r, r->src, r->line, clock); break;
      case PS_OP_FREE: replay_free(&x, r, clock); break;
      case PS_OP_FREE_COMPLETED: replay_free_completed(&x, r, clock); break;
      case PS_OP_RELEASE: case PS_OP_POOL_DESTROY:
        if (r->pool >= 0) replay_release(&x, r, clock);
        break;
      case PS_OP_ALLOC_FAILED: replay_oom(&x, r, clock, has_total, total); break;
      default: break;
    }
  }
  if (R->n > 0) put(L, t, "e", 1);
  json_flush(L, t, 1);
  lua_newtable(L);                         /* 5: pools */
  lua_newtable(L);                         /* 6: live */
  lua_newtable(L);                         /* 7: freeing */
  for (size_t i = 0; i < R->np; i++) {
    rpool *p = &R->p[i];
    push_key(L, p->tag, p->v);
    lua_createtable(L, 0, 1);
    lua_createtable(L, (int)p->nr, 0);
    for (size_t k = 0; k < p->nr; k++) {
      lua_createtable(L, 0, 4);
      set_int(L, "addr", p->r[k].addr);
      set_int(L, "size", p->r[k].size);
      set_int(L, "stream", p->r[k].stream);
      set_int(L, "order", p->r[k].order);
      lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "regions");
    lua_settable(L, 5);
    for (int st = 1; st <= 2; st++) {
      if (p->head[st] < 0) continue;
      push_key(L, p->tag, p->v);
      lua_newtable(L);
      for (int32_t k = p->head[st]; k >= 0; k = R->b[k].next) {
        rbuf *b = &R->b[k];
        push_key(L, b->tag, b->v);
        lua_createtable(L, 0, 6);
        set_int(L, "addr", b->addr);
        set_int(L, "size", b->size);
        set_int(L, "stream", b->stream);
        push_key(L, p->tag, p->v);
        lua_setfield(L, -2, "pool");
        if (b->src >= 0) {
          lua_pushfstring(L, "%s:%d", ps_name_of(c, b->src), (int)b->line);
          lua_setfield(L, -2, "src");
        }
        lua_pushstring(L, st == 1 ? "active_allocated" : "active_pending_free");
        lua_setfield(L, -2, "state");
        lua_settable(L, -3);
      }
      lua_settable(L, st == 1 ? 6 : 7);
    }
  }
  return 3;
}

static const luaL_Reg trace_funcs[] = {
  {"trace_csv", trace_csv}, {"trace_html", trace_html}, {"trace_json", trace_json}, {"trace_pickle", trace_pickle}, {"trace_objects", trace_objects}, {"trace_regions", trace_regions},
  {"trace_save", trace_save}, {"trace_streaming", trace_streaming},
  {"trace_start", trace_start}, {"trace_stop", trace_stop}, {"trace_clear", trace_clear},
  {"trace_events", trace_events}, {"trace_recording", trace_recording},
  {"trace_count", trace_count}, {NULL, NULL}
};

/* Sets the views into the table of views (arg 2). */
int poolsh_open_trace(lua_State *L) {
  lua_settop(L, 2);
  ps_setfuncs(L, trace_funcs);
  return 0;
}

/* ---- buffers ------------------------------------------------------------ */

/* Appends the record of a buffer's alloc or free (pool p, NULL for the
 * other kinds), field by field: the hot path of a traced alloc+free loop.
 * The pool's counters are poolsh's own unless the pool may have grown. */
void ps_trace_buffer(lua_State *L, ps_ctx *c, ps_op op, const ps_bufferud *b, int32_t stream,
                     ps_seen_pool *p, int collected, int grows) {
  ps_trace *tr = c->obs->trace;
  const ps_seen_buffer *sb = ps_seen_buffer_of(b);
  int32_t src = -1, line = 0;
  if (op == PS_OP_ALLOC && sb->src >= 0) src = sb->src, line = sb->line;  /* the ledger's */
  else if (!collected) ps_where(L, c, &src, &line);
  ps_rec *r = append(c, tr);
  if (!r) return;
  r->op = (uint8_t)op;
  r->kind = (uint8_t)(b->kind | (b->ipc == PS_IPC_IMPORTED ? 4 : 0));
  r->rule = op != PS_OP_ALLOC ? 0 : b->kind != PS_KIND_POOL ? PS_RULE_UNKNOWN
          : sb->reused_from ? (uint8_t)sb->reuse_rule : PS_RULE_NONE;
  r->gc = (uint8_t)(collected != 0);
  r->stream = stream;
  r->buffer = b->id;
  r->other = op == PS_OP_ALLOC && sb->reused_from ? sb->reused_from : -1;
  r->src = src, r->line = line;
  r->addr = b->addr, r->size = b->size;
  r->dur = 0;
  r->start = NAN;
  r->estimated = 0;
  r->value = PS_UNSET;
  stamp(c, tr, r);
  int64_t delta = op == PS_OP_ALLOC ? (int64_t)b->size : -(int64_t)b->size;
  if (p && !grows && p->followed && p->h && p->last_used != PS_UNSET && p->last_reserved != PS_UNSET) {
    r->pool = p->id;
    r->reserved = p->last_reserved;
    r->used = p->last_used += (uint64_t)delta;
    r->pending = p->pending_bytes;
    return;
  }
  r->pool = -1;
  r->reserved = r->used = r->pending = PS_UNSET;
  if (p) ps_trace_pool(L, c, p, delta, grows);
}
