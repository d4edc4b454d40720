/*
 * context.h: the device context (one per lua_State) and the structs of
 * the bound objects, which the observation layer reads too; the one
 * error rule (ps_fail); the frees finalizers leave; ids. Above the floor
 * (auxlib.h) and the backend (backend.h), below everything else.
 */
#ifndef POOLSH_CONTEXT_H
#define POOLSH_CONTEXT_H

#include <signal.h>
#include "auxlib.h"
#include "backend.h"
#include "names.h"

#define PS_STREAM "poolsh.Stream"
#define PS_EVENT "poolsh.Event"
#define PS_POOL "poolsh.Pool"
#define PS_BUFFER "poolsh.Buffer"

/* The context userdata's user values: 1 the unit parsers (auxlib.h), then
 * each bound type's metatable, then the one registry of objects. */
enum {
  PS_UV_STREAM = PS_UV_PARSERS + 1, PS_UV_EVENT, PS_UV_POOL, PS_UV_BUFFER,
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
  uint64_t vmm_held, vmm_pinned_held;   /* poolsh.vmm.create's device, host memory (vmm.c) */
  struct { int on, pinned; uint64_t total, pools, plain; } refused;
} ps_limits;

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
  const void *mt_stream;     /* the stream of the Buffer metatable its alloc keeps at hand */
} ps_poolud;

/* A Buffer has no user values: pool and stream point at its Pool and
 * Stream (or are NULL), which its metatable holds (buffer.c,
 * ps_push_buffer_mt), so they live as long as it does. */
typedef struct ps_bufferud {
  uint32_t tag;
  ps_streamud *stream;
  struct ps_poolud *pool;    /* kept alive by its metatable, like stream */
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

/* context.c */
void ps_context_init(ps_ctx *c);
ps_ctx *ps_context_open(lua_State *L, ps_ctx *c);
/* The open context, opening the backend on first use (ps_context_open
 * raises when it cannot). Inline: every binding calls it. */
static inline ps_ctx *ps_context(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  return c->b ? c : ps_context_open(L, c);
}
void ps_context_close(lua_State *L, ps_ctx *c);
/* fmt is C's printf format (not lua_pushfstring's). */
int ps_fail(lua_State *L, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int ps_check(lua_State *L, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int ps_defer_free(ps_ctx *c, ps_addr a, int buffer);
void ps_free_deferred(lua_State *L, ps_ctx *c);
int ps_nextid(lua_State *L, int kind);
void ps_pushdefaults(lua_State *L);

#endif
