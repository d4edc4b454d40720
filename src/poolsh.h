/*
 * poolsh.h: what the bound types (core, stream, event, pool, buffer,
 * device) share. Every C function exported to Lua gets the context
 * userdata as upvalue 1; a type's __index also gets its methods table as
 * upvalue 2.
 */
#ifndef POOLSH_H
#define POOLSH_H

#include <signal.h>
#include "lua.h"
#include "lauxlib.h"
#include "backend.h"

#define PS_CONTEXT "poolsh.Context"
#define PS_STREAM "poolsh.Stream"
#define PS_EVENT "poolsh.Event"
#define PS_POOL "poolsh.Pool"
#define PS_BUFFER "poolsh.Buffer"

/* The context userdata's user values: 1 the unit parsers, then each bound
 * type's metatable, so type checks compare pointers instead of looking a
 * name up in the registry. */
enum {
  PS_UV_PARSERS = 1, PS_UV_STREAM, PS_UV_EVENT, PS_UV_POOL, PS_UV_BUFFER,
  PS_UV_BUFFER_FREED,        /* a freed Buffer's metatable: no __gc to run */
  PS_UV_COUNT = PS_UV_BUFFER_FREED
};

/* Every bound struct starts with a tag, PS_TAG | its user value index, so
 * the hot paths check a type with two API calls (see ps_toud). */
#define PS_TAG 0x70530000u

typedef struct ps_trace ps_trace;
typedef struct ps_ledger ps_ledger;
struct ps_poolud;
struct ps_streamud;

/* Per-state device context: the backend and its handle. b is NULL once
 * the context is closed (at lua_close), after every object's finalizer. */
typedef struct ps_ctx {
  const ps_backend *be;
  void *b;
  int device;
  int next_id[4];            /* last id given: pool, stream, event, buffer */
  int open_status;           /* why the preferred backend was not used */
  char backend_want[8];      /* "auto", "cuda" or "sim" */
  uint64_t sim_memory;
  volatile sig_atomic_t interrupt;  /* set by the host's SIGINT handler */
  ps_trace *trace;           /* the recorder, NULL until first used */
  int tracing;               /* recording now: the hot paths test this */
  int sources;               /* remember where each buffer was allocated */
  uint32_t waits;            /* host waits that could release pool memory */
  struct ps_recent {         /* the last allocations, for the REPL's live view */
    int32_t buffer, pool, stream, reused_from;
    uint8_t rule, kind;
    uint64_t size;
  } recent[64];
  uint64_t nrecent;          /* allocations so far (recent is a ring) */
  struct ps_poolud *pools;   /* live pools, for release attribution */
  struct ps_streamud *streams;  /* live streams (the default one too) */
  ps_ledger *ledger;         /* the blocks poolsh allocated (ledger.c) */
} ps_ctx;

enum { PS_ID_POOL, PS_ID_STREAM, PS_ID_EVENT, PS_ID_BUFFER };



#define PS_UP_CTX lua_upvalueindex(1)
#define PS_UP_METHODS lua_upvalueindex(2)

#define PS_KNOWS 4

typedef struct ps_streamud {
  uint32_t tag;
  ps_stream *h;
  int id;                    /* 0: the legacy default stream */
  int live;
  int priority;
  int blocking;
  uint64_t ops;              /* operations poolsh queued on it */
  uint64_t synced;           /* the host synchronised past this many */
  uint64_t done;             /* known complete: syncs, and idle queries */
  struct { int32_t stream; uint64_t pos; } knows[PS_KNOWS];  /* event waits */
  int32_t pendq;             /* ledger: its queue of pending frees, index + 1 */
  struct ps_streamud *next;  /* in ctx->streams while live */
} ps_streamud;

typedef struct ps_eventud {
  uint32_t tag;
  ps_event *h;
  int id;
  int timing;
  int live;
  int32_t rec_stream;        /* where it was last recorded: stream id, */
  uint64_t rec_pos;          /* and that stream's position (0: never) */
} ps_eventud;

typedef struct ps_poolud {
  uint32_t tag;
  ps_pool *h;
  int id;
  int is_default;
  int live;
  ps_pool_props props;
  struct ps_poolud *next;    /* in ctx->pools while live */
  uint64_t last_reserved;    /* recorder: reserved bytes last seen */
  uint64_t last_used;        /* recorder: used bytes, kept by alloc and free */
  uint64_t live_bytes, pending_bytes;   /* ledger: blocks allocated, frees queued */
  uint64_t pending_count;
  ps_addr lo;                /* lowest block address seen: the arena's base */
  int edges;                 /* ledger: its blocks' edges are kept (free space asked) */
} ps_poolud;

/* A Buffer's user values: 1 = its Pool (or nil), 2 = its Stream (or nil);
 * pool and stream point at them, kept alive by the user values. */
typedef struct ps_bufferud {
  uint32_t tag;
  ps_streamud *stream;
  struct ps_poolud *pool;    /* kept alive by user value 1, like stream */
  ps_addr addr;
  uint64_t size;
  ps_kind kind;
  int id;
  int live;
  int registered;            /* pageable buffers: cudaHostRegister'd */
  int32_t reused_from;       /* the buffer whose memory this reuses, or -1 */
  int32_t src, line;         /* where it was allocated (ledger), src -1: unknown */
  ps_reuse_rule reuse_rule;
} ps_bufferud;

/* core.c */
ps_ctx *ps_context(lua_State *L);
/* fmt is C's printf format (not lua_pushfstring's). */
int ps_fail(lua_State *L, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int ps_check(lua_State *L, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *ps_tosize(lua_State *L, int idx, uint64_t *out);
uint64_t ps_checksize(lua_State *L, int arg);
uint64_t ps_optsize(lua_State *L, int arg, uint64_t def);
int ps_todevice(lua_State *L, int idx, const char *what);
/* Long values in messages are cut to this many bytes, then "...". */
#define PS_SHOWN_MAX 64
const char *ps_shown(lua_State *L, int idx);
uint64_t ps_fieldsize(lua_State *L, int t, const char *key, const char *what, uint64_t def);
double ps_checkduration(lua_State *L, int arg);
const char *ps_fmtsize(char *out, size_t n, uint64_t bytes);
void ps_checkoptions(lua_State *L, int arg, const char *what,
                     const char *const allowed[]);
int ps_optfield_bool(lua_State *L, int arg, const char *key, int def);
void ps_newclass(lua_State *L, int uv, const char *tname, const luaL_Reg *methods,
                 const luaL_Reg *meta);
extern const size_t ps_udsize[PS_UV_COUNT + 1];

/* The userdata at arg if it is a poolsh object of type uv, else NULL.
 * Lua code cannot forge a userdata's bytes, so size and tag identify the
 * type as surely as its metatable, at a third of the cost. */
static inline void *ps_toud(lua_State *L, int arg, int uv) {
  uint32_t *p = (uint32_t *)lua_touserdata(L, arg);
  if (p && lua_rawlen(L, arg) == ps_udsize[uv] && *p == (PS_TAG | (uint32_t)uv)) return p;
  return NULL;
}
void *ps_checkud(lua_State *L, int arg, int uv, const char *tname);
void ps_setmetatable(lua_State *L, int uv);
void ps_setfuncs(lua_State *L, const luaL_Reg *l);
void ps_copytable(lua_State *L, int src);
int ps_nextid(lua_State *L, int kind);
int ps_method(lua_State *L);

/* stream.c, event.c, pool.c, buffer.c: checks that refuse dead objects. */
ps_streamud *ps_checkstream(lua_State *L, int arg);
ps_streamud *ps_optstream(lua_State *L, int arg);
void ps_pushdefaultstream(lua_State *L);
const char *ps_streamname(char *out, size_t n, const ps_streamud *s);
ps_eventud *ps_checkevent(lua_State *L, int arg);
ps_eventud *ps_newevent(lua_State *L, int timing);
void ps_event_record(lua_State *L, ps_ctx *c, ps_eventud *e, ps_streamud *s);
ps_poolud *ps_checkpool(lua_State *L, int arg);
ps_bufferud *ps_checkbuffer(lua_State *L, int arg);
ps_bufferud *ps_newbuffer(lua_State *L, ps_ctx *c, ps_kind kind, uint64_t size);
ps_stream *ps_bufferstream(lua_State *L, int arg);

int poolsh_open_stream(lua_State *L);
int poolsh_open_event(lua_State *L);
int poolsh_open_pool(lua_State *L);
int poolsh_open_buffer(lua_State *L);
int poolsh_open_device(lua_State *L);
int poolsh_open_bench(lua_State *L);

/* trace.c: the recorder (docs/trace.md). */
typedef enum {
  PS_OP_ALLOC, PS_OP_ALLOC_FAILED, PS_OP_FREE, PS_OP_FREE_COMPLETED, PS_OP_RESERVE,
  PS_OP_RELEASE, PS_OP_COPY, PS_OP_FILL, PS_OP_TOUCH, PS_OP_VERIFY, PS_OP_SPIN,
  PS_OP_RECORD, PS_OP_WAIT, PS_OP_STREAM_SYNC, PS_OP_EVENT_SYNC, PS_OP_DEVICE_SYNC,
  PS_OP_TRIM, PS_OP_SET, PS_OP_POOL_CREATE, PS_OP_POOL_DESTROY, PS_OP_STREAM_CREATE,
  PS_OP_STREAM_DESTROY, PS_OP_READ, PS_OP_WRITE, PS_OP_COUNT
} ps_op;

#define PS_UNSET UINT64_MAX

/* One event. Ids are -1 and sizes PS_UNSET when they do not apply; other
 * is the second object (copy source, event, reused-from buffer, a release's
 * cause); kind is the buffer kind, a set's setting, or a release's cause op. */
typedef struct ps_rec {
  uint8_t op, kind, rule, gc;
  int32_t stream, pool, buffer, other;
  int32_t src, line;
  union {
    double t;                 /* ms on the backend's clock, */
    uint64_t tick;            /* or the backend's ticks until settled (trace.c) */
  };
  double dur;                 /* ms of device work, or 0 when unknown */
  uint64_t addr, size, reserved, used, pending, value;
} ps_rec;

/* ps_trace_rec's flags: a finalizer's operation (no source; marked
 * collected), or an event derived from the last one (no source walk). */
enum { PS_REC_COLLECTED = 1, PS_REC_NOSRC = 2 };
ps_rec *ps_trace_rec(lua_State *L, ps_ctx *c, ps_op op, int flags);
void ps_trace_pool(lua_State *L, ps_ctx *c, ps_poolud *p, int64_t used_delta, int grows);
void ps_trace_sync_begin(ps_ctx *c);
void ps_trace_sync_end(lua_State *L, ps_ctx *c);
void ps_trace_free(ps_trace *tr);
void ps_trace_set_dur(ps_ctx *c, double ms);
void ps_trace_op(lua_State *L, ps_ctx *c, ps_op op, int stream, int buffer, int other,
                 uint64_t addr, uint64_t size);
void ps_trace_alloc(lua_State *L, ps_ctx *c, const ps_bufferud *b, ps_poolud *p, int fits);
void ps_trace_release(lua_State *L, ps_ctx *c, const ps_bufferud *b, ps_streamud *s,
                      ps_poolud *p, int from_gc);
const char *ps_pool_setting_name(int i);
const char *ps_rule_name(int rule);
int poolsh_open_trace(lua_State *L);


/* ledger.c: blocks, pending frees, reuse (docs/explain.md). */
typedef struct ps_span {
  ps_addr addr;
  uint64_t size;
  int32_t buffer, stream;
  int pending;
} ps_span;

int ps_ledger_alloc(lua_State *L, ps_ctx *c, ps_poolud *p, ps_streamud *s, ps_bufferud *b,
                    ps_reuse_rule said);
void ps_ledger_track(lua_State *L, ps_ctx *c, ps_bufferud *b);
void ps_ledger_untrack(ps_ctx *c, const ps_bufferud *b);
lua_Integer ps_ledger_push_live(lua_State *L, ps_ctx *c, lua_Integer max);
lua_Integer ps_ledger_push_pending(lua_State *L, ps_ctx *c, lua_Integer max);
void ps_remember(ps_ctx *c, const ps_bufferud *b, int32_t pool);
void ps_register_object(lua_State *L, int idx);
int poolsh_open_inspect(lua_State *L);
void ps_where(lua_State *L, ps_ctx *c, int32_t *src, int32_t *line);
const char *ps_source_name(ps_ctx *c, int32_t src);
void ps_ledger_free(ps_ctx *c, ps_poolud *p, ps_streamud *s, const ps_bufferud *b);
void ps_ledger_learn(lua_State *L, ps_ctx *c);
void ps_ledger_synced(ps_ctx *c, ps_streamud *s, uint64_t upto);
void ps_ledger_released(ps_ctx *c);
ps_span *ps_ledger_spans(ps_ctx *c, const ps_poolud *p, size_t *n);
void ps_ledger_free_space(ps_ctx *c, ps_poolud *p, uint64_t reserved, uint64_t *nfree,
                          uint64_t *largest);
ps_streamud *ps_stream_by_id(ps_ctx *c, int32_t id);
void ps_after_sync(lua_State *L, ps_ctx *c, ps_streamud *s, uint64_t upto);
void ps_after_idle(lua_State *L, ps_ctx *c, ps_streamud *s, uint64_t upto);
void ps_stream_learns(ps_streamud *s, int32_t on, uint64_t pos);
void ps_ledger_free_all(ps_ledger *l);
void ps_ledger_pool_linked(ps_ctx *c, struct ps_poolud *p, int linked);
void ps_ledger_stream_linked(ps_ctx *c, ps_streamud *s, int linked);

/* The flag the host's SIGINT handler sets to stop a wait (Ctrl-C). */
volatile sig_atomic_t *poolsh_interrupt_flag(lua_State *L);
int luaopen_poolsh_core(lua_State *L);

#endif
