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
 * type's metatable, then the one registry of objects. */
enum {
  PS_UV_PARSERS = 1, PS_UV_STREAM, PS_UV_EVENT, PS_UV_POOL, PS_UV_BUFFER,
  PS_UV_BUFFER_FREED,        /* a freed Buffer's metatable: no __gc to run */
  PS_UV_OBJECTS,             /* weak-keyed: every Pool and Stream -> true */
  PS_UV_DEFAULTS,            /* {stream = the default Stream, pools = {[dev] = Pool}} */
  PS_UV_PROCESS,             /* poolsh.Process's metatable (process.c) */
  PS_UV_COUNT = PS_UV_PROCESS
};

/* Every bound struct starts with a tag, PS_TAG | its user value index, so
 * the hot paths check a type with two API calls (see ps_toud). */
#define PS_TAG 0x70530000u

typedef struct ps_obs ps_obs;

/* poolsh --limit and --pinned-limit (limit.c): the limits (0: none), what
 * poolsh.malloc, poolsh.pinned and poolsh.register hold now (pools'
 * reservations are read from the backend), and the last refusal's
 * figures for its message. */
typedef struct ps_limits {
  uint64_t device, pinned;
  uint64_t malloc_held, pinned_held, registered_held;
  struct { int on, pinned; uint64_t total, pools, plain; } refused;
} ps_limits;

/* Long values in messages are cut to this many bytes, then "...". */
#define PS_SHOWN_MAX 64

/* Per-state device context: the backend and its handle. b is NULL once
 * the context is closed (at lua_close), after every object's finalizer. */
typedef struct ps_ctx {
  const ps_backend *be;
  void *b;
  int device;
  int next_id[4];            /* last id given: pool, stream, event, buffer */
  int open_status;           /* why the preferred backend was not used */
  char backend_want[PS_SHOWN_MAX + 4];   /* "auto", "cuda" or "sim" (else refused) */
  uint64_t sim_memory;
  int sim_devices;           /* the sim's devices, 0: one (--sim-devices) */
  volatile sig_atomic_t interrupt;  /* set by the host's SIGINT handler */
  ps_obs *obs;               /* the observation layer's state (observe.c) */
  struct ps_deferred { ps_addr addr; int buffer; } *deferred;  /* cudaMalloc'd memory
                                                   finalizers left to free */
  size_t ndeferred, capdeferred;
  int limited;               /* a limit is set: the bindings' one branch */
  ps_limits lim;
} ps_ctx;

enum { PS_ID_POOL, PS_ID_STREAM, PS_ID_EVENT, PS_ID_BUFFER };

#define PS_UP_CTX lua_upvalueindex(1)
#define PS_UP_METHODS lua_upvalueindex(2)

/* The bound structs hold what the bindings need. Each userdata also holds,
 * right after the struct, the observation layer's record of the object
 * (its layout is observe.c's own; ps_udsize counts both). */
typedef struct ps_streamud {
  uint32_t tag;
  ps_stream *h;
  int id;                    /* 0: the legacy default stream */
  int live;
  int priority;
  int blocking;
  int device;                /* created on (the default stream: ps_streamdevice) */
} ps_streamud;

typedef struct ps_eventud {
  uint32_t tag;
  ps_event *h;
  int id;
  int timing;
  int live;
  int ipc;                   /* 0, PS_IPC_OWN (poolsh.event{ipc=true}) or PS_IPC_IMPORTED */
} ps_eventud;

enum { PS_IPC_OWN = 1, PS_IPC_IMPORTED = 2 };

typedef struct ps_poolud {
  uint32_t tag;
  ps_pool *h;
  int id;
  int is_default;
  int live;
  ps_pool_props props;
  int imported;              /* poolsh.import_pool: another process's pool */
  struct ps_share *share;    /* IPC pools: the socket and export ledger (share.c) */
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
  uint64_t held;             /* bytes counted in ps_limits (not pool memory) */
  int ipc;                   /* 0, PS_IPC_OWN (exported) or PS_IPC_IMPORTED */
  int ipc_slot;              /* exported or imported: its slot in the pool's ledger */
} ps_bufferud;

/* A Process (process.c): the channel (fd), the other end's pid and
 * what it is (role: process.c's ROLE_*). No observation record. */
typedef struct ps_processud {
  uint32_t tag;
  int fd;                    /* -1 once closed */
  int pid;                   /* the child, the parent or the server (0: unknown) */
  int role;
  int serving;               /* the other end runs p:eval's chunks */
  int reaped;                /* the child was waited for: status/signal hold */
  int status, signal;
  int eof;                   /* the other end closed the channel */
  uint32_t seq;              /* the last eval request's number */
  char *rbuf;                /* bytes read, not yet a whole frame */
  size_t rlen, rcap;
} ps_processud;

#include "observe.h"

/* names.c: one table for each name Lua and C share (poolsh.core.names). */
extern const char *const ps_kind_names[];      /* by ps_kind */
extern const char *const ps_setting_names[];   /* a pool's settable fields, then NULL */
extern const char *const ps_rule_names[];      /* by ps_reuse_rule; NULL: none */
int poolsh_open_names(lua_State *L);

/* core.c */
ps_ctx *ps_context_open(lua_State *L, ps_ctx *c);
/* The open context, opening the backend on first use (ps_context_open
 * raises when it cannot). Inline: every binding calls it. */
static inline ps_ctx *ps_context(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  return c->b ? c : ps_context_open(L, c);
}
/* fmt is C's printf format (not lua_pushfstring's). */
int ps_fail(lua_State *L, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int ps_check(lua_State *L, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *ps_tosize(lua_State *L, int idx, uint64_t *out);
uint64_t ps_checksize(lua_State *L, int arg);
uint64_t ps_optsize(lua_State *L, int arg, uint64_t def);
int ps_todevice(lua_State *L, int idx, const char *what);
const char *ps_shown(lua_State *L, int idx);
uint64_t ps_fieldsize(lua_State *L, int t, const char *key, const char *what, uint64_t def);
double ps_checkduration(lua_State *L, int arg);
const char *ps_checksockpath(lua_State *L, int arg);
int ps_token_number(const char **q, const char *end, char stop, unsigned long long max,
                    unsigned long long *v);
int ps_token_hex(const char *q, const char *end, uint8_t *d, int n);
const char *ps_fmtsize(char *out, size_t n, uint64_t bytes);
void ps_checkoptions(lua_State *L, int arg, const char *what,
                     const char *const allowed[]);
int ps_optfield_bool(lua_State *L, int arg, const char *key, int def);
void ps_newclass(lua_State *L, int uv, const char *tname, const luaL_Reg *methods,
                 const luaL_Reg *meta, const char *const fields[]);
void ps_addfields(lua_State *L, const char *tname, const char *const fields[]);
int ps_defer_free(ps_ctx *c, ps_addr a, int buffer);
void ps_free_deferred(lua_State *L, ps_ctx *c);
void ps_wait_begin(lua_State *L, ps_ctx *c);

/* The userdata at arg if it is a poolsh object of type uv, else NULL.
 * Lua code cannot forge a userdata's bytes, so size and tag identify the
 * type as surely as its metatable, at a third of the cost. */
static inline void *ps_toud(lua_State *L, int arg, int uv) {
  uint32_t *p = (uint32_t *)lua_touserdata(L, arg);
  if (p && lua_rawlen(L, arg) == ps_udsize[uv] && *p == (PS_TAG | (uint32_t)uv)) return p;
  return NULL;
}
void *ps_checkud(lua_State *L, int arg, int uv, const char *tname);
void *ps_newobject(lua_State *L, int uv, int nuv);
void ps_pushdefaults(lua_State *L);
void ps_setfuncs(lua_State *L, const luaL_Reg *l);
void ps_copytable(lua_State *L, int src);
int ps_nextid(lua_State *L, int kind);
int ps_method(lua_State *L);
int ps_field(lua_State *L, int idx, const char *const fields[]);

/* stream.c, event.c, pool.c, buffer.c: checks that refuse dead objects. */
ps_streamud *ps_checkstream(lua_State *L, int arg);
ps_streamud *ps_optstream(lua_State *L, int arg);
void ps_pushdefaultstream(lua_State *L);
const char *ps_streamname(char *out, size_t n, const ps_streamud *s);
ps_eventud *ps_checkevent(lua_State *L, int arg);
ps_eventud *ps_newevent(lua_State *L, int timing);
ps_eventud *ps_newevent_ipc(lua_State *L);
/* buffer.c: IPC buffers (b:export, ip:import). */
int ps_buffer_export(lua_State *L);
ps_bufferud *ps_buffer_import(lua_State *L, ps_ctx *c, ps_poolud *p, int token, int stream);
void ps_event_record(lua_State *L, ps_ctx *c, ps_eventud *e, ps_streamud *s);
ps_poolud *ps_checkpool(lua_State *L, int arg);
ps_bufferud *ps_checkbuffer(lua_State *L, int arg);
int ps_streamdevice(const ps_ctx *c, const ps_streamud *s);
/* buffer.c: raises before a kernel (fill, touch, verify) on stream s
 * reaches b from a device without access. */
void ps_check_reach(lua_State *L, ps_ctx *c, const ps_bufferud *b, const ps_streamud *s,
                    const char *what);
ps_bufferud *ps_newbuffer(lua_State *L, ps_ctx *c, ps_kind kind, uint64_t size);
ps_stream *ps_bufferstream(lua_State *L, int arg);
int ps_buffer_release(ps_ctx *c, ps_bufferud *b, ps_stream *s, int deferred);

/* limit.c: poolsh --limit and --pinned-limit, checked by the bindings. */
void ps_limit_configure(lua_State *L, ps_ctx *c, int t);
int ps_limit_pool_alloc(lua_State *L, ps_ctx *c, ps_bufferud *b, ps_alloc_note *note);
uint64_t ps_limit_counted(ps_ctx *c, ps_kind kind, uint64_t size);
int ps_limit_check(lua_State *L, ps_ctx *c, int pinned, uint64_t bytes);
void ps_limit_took(ps_ctx *c, ps_bufferud *b, uint64_t held);
void ps_limit_gone(ps_ctx *c, ps_bufferud *b);
int ps_limit_fail(lua_State *L, ps_ctx *c, const char *what);
void ps_limit_push(lua_State *L, ps_ctx *c);

int poolsh_open_stream(lua_State *L);
int poolsh_open_event(lua_State *L);
int poolsh_open_pool(lua_State *L);
int poolsh_open_buffer(lua_State *L);
int poolsh_open_device(lua_State *L);
int poolsh_open_bench(lua_State *L);
int poolsh_open_process(lua_State *L);
int poolsh_open_atomic_file(lua_State *L);   /* atomic_file.c */

/* naming.c: names given to objects (kind: PS_ID_*). */
void ps_checkname(lua_State *L, int idx);
int ps_optname(lua_State *L, int arg);
void ps_setname(lua_State *L, int kind, int id, int idx);
void ps_pushname(lua_State *L, int kind, int id);
const char *ps_pushlabel(lua_State *L, int kind, int id);
int ps_newindex_name(lua_State *L, int kind, int id, const char *tname);
int poolsh_open_naming(lua_State *L);

/* The flag the host's SIGINT handler sets to stop a wait (Ctrl-C). */
volatile sig_atomic_t *poolsh_interrupt_flag(lua_State *L);
int luaopen_poolsh_core(lua_State *L);

#endif
