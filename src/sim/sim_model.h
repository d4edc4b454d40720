/*
 * sim_model.h: the sim backend's shared types and the model files'
 * declarations, for src/sim only. It is the floor of src/sim: its inline
 * helpers call nothing defined in a .c file, so sim.c (the backend's face)
 * calls down into the model files and they never call back up into it.
 *
 * The sim models one GPU on a virtual clock (int64 ns). All state lives in a
 * sim_ctx created by open(); nothing is global. See docs/sim.md.
 */
#ifndef POOLSH_SIM_MODEL_H
#define POOLSH_SIM_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "backend.h"

/* ---- device profile (sim_profile.c) ---- */

typedef struct sim_profile {
  double memory, host_memory;                   /* bytes */
  double api_ns, event_api_ns;                  /* host cost per call */
  double pool_alloc_ns, pool_free_ns;           /* host cost: pool alloc/free */
  double host_pool_alloc_ns;                    /* the same, host-location pools */
  double malloc_ns, malloc_ns_per_gib;          /* host cost: cudaMalloc */
  double free_ns, free_ns_per_gib;              /* host cost: cudaFree (before its wait) */
  double alloc_api_ns, pinned_alloc_ns_per_gib; /* host cost: cudaHostAlloc */
  double pinned_free_ns, pinned_free_ns_per_gib;        /* cudaFreeHost */
  double pageable_alloc_ns, pageable_alloc_ns_per_gib;  /* malloc */
  double pageable_free_ns, pageable_free_ns_per_gib;    /* free: per GiB touched */
  double pageable_touch_ns_per_gib;             /* first touch of pageable pages */
  double host_register_ns, host_register_ns_per_gib;    /* resident pages */
  double host_unregister_ns, host_unregister_ns_per_gib;
  double sync_ns, query_ns;                     /* host cost: idle sync, query */
  double launch_ns, copy_ns;                    /* device-side latency */
  double bw_fill, bw_d2d, bw_pinned;            /* GB/s (1e9) */
  double bw_pageable_h2d, bw_pageable_d2h, bw_h2h;
  double pool_granularity, pool_alignment;      /* bytes */
  double malloc_granularity;                    /* bytes */
  double map_ns, map_ns_per_gib;                /* host cost of growing a pool */
  double release_ns, release_ns_per_gib;        /* host cost of a release */
  double trim_ns, trim_ns_per_gib;              /* host cost of a trim */
  double host_pool_map_ns, host_pool_map_ns_per_gib;          /* the same three, */
  double host_pool_release_ns, host_pool_release_ns_per_gib;  /* host-location */
  double host_pool_trim_ns, host_pool_trim_ns_per_gib;        /* pools */
  double release_on_stream_sync, release_on_event_sync;
  double release_on_device_sync, release_on_cuda_free;     /* 0 or 1 */
  double release_on_stream_destroy;                         /* 0 or 1 */
  double release_on_destroyed_stream_done;                  /* 0 or 1 */
  double report_rules;     /* 1: say each reuse's rule; 0: say nothing, as cuda */
  double vmm_granularity;                       /* bytes: a power of two >= 64 KiB */
  double vmm_create_us, vmm_map_us, vmm_set_access_us, vmm_unmap_us;   /* host cost */
  double vmm_release_us, vmm_release_us_per_mib;
} sim_profile;

void sim_profile_defaults(sim_profile *p);
int sim_profile_get(const sim_profile *p, const char *key, double *v);
/* Checks the value; the caller decides whether the key may change now. */
int sim_profile_set(sim_profile *p, const char *key, double v);
int sim_profile_names(const char **names, int max);

/* The most devices one sim models (--sim-devices). */
#define SIM_MAX_DEVICES 16

/* ---- address space and contents (sim_mem.c) ---- */

#define SIM_PAGE_SHIFT 16
#define SIM_PAGE ((uint64_t)1 << SIM_PAGE_SHIFT)   /* 64 KiB content pages */

typedef enum { SIM_DEVICE_SPACE = 0, SIM_HOST_SPACE = 1 } sim_space;
/* SIM_MAP_ARENA: a pool's arena, owner is its ps_pool. SIM_MAP_VMM: a
 * VMM reservation, its pages its handles' (alias), owner its mappings
 * (sim_vmm.c). */
typedef enum { SIM_MAP_ARENA, SIM_MAP_MALLOC, SIM_MAP_PINNED, SIM_MAP_PAGEABLE,
               SIM_MAP_VMM } sim_map_kind;

/* A page is uniform (data == NULL, every byte == val) or materialized.
 * touched: pageable memory the host has faulted in (resident). */
typedef struct sim_page { uint8_t *data; uint8_t val, touched; } sim_page;

typedef struct sim_map {
  ps_addr base;
  uint64_t size;             /* bytes mapped from base (what accounting counts) */
  uint64_t va;               /* address space reserved from base (>= size) */
  sim_space space;
  sim_map_kind kind;
  int registered;            /* pageable: cudaHostRegister'd */
  uint64_t reg_size;         /* pageable: the bytes registered */
  uint64_t resident;         /* pageable: bytes of touched pages */
  void *owner;               /* arena: its ps_pool */
  int dev;                   /* device space: the device whose memory it is */
  uint64_t npages;
  sim_page *pages;
  sim_page **alias;          /* VMM: page i is alias[i], a handle's (NULL: unmapped) */
  /* Shared (IPC) memory: contents live at shm + offset, in a segment
   * other processes map too (sim_ipc.c); pages stay unused. A foreign map
   * (an imported block) does not count in `mapped`: another process owns
   * its memory. */
  uint8_t *shm;
  int foreign;
  int dropping;              /* foreign: its free is queued (SIM_OP_UNMAP) */
} sim_map;

typedef struct sim_mem {
  sim_map **maps;            /* sorted by base, never overlapping */
  size_t n, cap;
  uint64_t mapped[2];        /* bytes mapped per space */
  uint64_t dev_mapped[SIM_MAX_DEVICES];   /* device space: bytes mapped per device */
  ps_addr gap_lo[2];         /* per space: no free VA below this */
} sim_mem;

/* dev: the device whose memory a device-space mapping is (0 for host). */
sim_map *sim_mem_map(sim_mem *m, sim_space sp, int dev, uint64_t size, sim_map_kind k);
sim_map *sim_mem_reserve(sim_mem *m, sim_space sp, int dev, uint64_t va, sim_map_kind k);
/* Maps size bytes whose contents are the shared bytes at shm, owned by
 * another process (foreign: not counted as mapped). NULL when out of VA. */
sim_map *sim_mem_attach(sim_mem *m, sim_space sp, uint64_t size, uint8_t *shm, sim_map_kind k);
int sim_mem_resize(sim_mem *m, sim_map *map, uint64_t size);
void sim_mem_hole(sim_mem *m, sim_map *map, uint64_t off, uint64_t n, int unmap);
void sim_mem_unmap(sim_mem *m, sim_map *map);
sim_map *sim_mem_find(const sim_mem *m, ps_addr a);
sim_map *sim_mem_range(const sim_mem *m, ps_addr a, uint64_t n);
void sim_mem_free_all(sim_mem *m);
void sim_mem_fill(sim_map *d, uint64_t off, uint64_t n, uint8_t v);
void sim_mem_copy(sim_map *d, uint64_t doff, const sim_map *s, uint64_t soff, uint64_t n);
void sim_mem_write(sim_map *d, uint64_t off, const uint8_t *src, uint64_t n);
void sim_mem_read(const sim_map *s, uint64_t off, uint8_t *dst, uint64_t n);
int64_t sim_mem_verify(const sim_map *s, uint64_t off, uint64_t n, uint8_t v);
uint64_t sim_mem_materialized(const sim_mem *m);  /* pages holding data */
/* Marks the pages under [off, off+n) touched; the bytes newly touched. */
uint64_t sim_mem_touch(sim_map *x, uint64_t off, uint64_t n);

/* ---- tables and vector clocks (sim_stream.c) ---- */

/* An open-addressing hash table from non-zero keys to values, at most half
 * full: O(1) to find, put or remove; visit slots whose key is not 0. */
typedef struct sim_slot { uint64_t key; int64_t val; } sim_slot;
typedef struct sim_table { sim_slot *v; size_t n, cap; } sim_table;

sim_slot *sim_table_find(const sim_table *t, uint64_t key);
/* The slot of key, added with val when missing; NULL when out of memory. */
sim_slot *sim_table_put(sim_table *t, uint64_t key, int64_t val);
int sim_table_remove(sim_table *t, uint64_t key);   /* 0: key missing */
void sim_table_free(sim_table *t);

/* The latest position of each stream id known (key id + 1); missing
 * entries are 0. Costs follow the entries present, never the ids. A clock
 * may lose the entries of dropped streams (see sim_host_knows). */
typedef sim_table sim_vclock;

int64_t sim_vc_get(const sim_vclock *c, int id);
int sim_vc_raise(sim_vclock *c, int id, int64_t pos);
int sim_vc_merge(sim_vclock *c, const sim_vclock *o);
int sim_vc_copy(sim_vclock *c, const sim_vclock *o);
void sim_vc_free(sim_vclock *c);

/* ---- streams, events, pending device work (sim_stream.c) ---- */

struct ps_stream {
  int id;                  /* 0 is the legacy default stream */
  int dev;                 /* the device it was created on */
  int priority, blocking, destroyed;
  int64_t tail;            /* ns: when the last enqueued op completes; only
                            * grows, and only in a call that resolved s */
  int64_t seq;             /* positions handed out on this stream */
  sim_vclock clock;        /* what this stream knows of others */
  size_t slot;             /* index in ctx->streams */
  int touched;             /* in ctx->touched: tail may have grown */
  int64_t span_queued;     /* ns: when the host queued the last op, */
  int64_t span_start;      /* when it starts and ends; span_start < 0: */
  int64_t span_end;        /* none yet */
  size_t due;              /* destroyed busy: its slot in ctx->due + 1 */
};

typedef struct sim_ipc_ev sim_ipc_ev;

struct ps_event {
  int timing, recorded;
  int dev;                 /* created on the context's device */
  sim_ipc_ev *ipc;         /* an IPC event (created or imported): its shared slot */
  int imported;
  int64_t time;            /* ns: completion of work before the record */
  sim_vclock clock;        /* the recording stream's knowledge, position incl. */
};

/* SIM_OP_UNMAP: an imported block's free; its mapping goes when it lands. */
typedef enum { SIM_OP_NONE, SIM_OP_FILL, SIM_OP_COPY, SIM_OP_WRITE, SIM_OP_UNMAP } sim_op_kind;

/* Device work whose memory effect lands at `end`. */
typedef struct sim_op {
  int64_t end;
  uint64_t seq;
  sim_op_kind kind;
  ps_addr dst, src;
  uint64_t n;
  uint8_t byte;
  uint8_t *data;           /* SIM_OP_WRITE: a snapshot of the host bytes */
} sim_op;

/* Every pool not yet freed (v), the live handles (a hash set: O(1) checks),
 * the pools whose reserved size is above their release threshold, and the
 * pools holding frees not retired (a host synchronisation retires them). */
typedef struct sim_pool_list {
  ps_pool **v; size_t n, cap;
  ps_pool **live; size_t nlive, livecap;
  ps_pool **over; size_t nover, capover;
  ps_pool **held; size_t nheld, capheld;
} sim_pool_list;

/* ---- fault injection (sim_fault.c) ---- */

/* The backend operations that count their calls and can be made to fail,
 * as X(name, parameters, arguments): each is implemented by sim_<name>,
 * and sim.c's ops table reaches it through a wrapper that counts the call
 * and fails it, before it changes anything, when a fault is due. The
 * option names "fault.<name>..." and docs/sim.md use these names. */
#define SIM_FAULT_OPS(X) \
  X(device_count, (void *ctx, int *n), (ctx, n)) \
  X(device_info, (void *ctx, int dev, ps_device_info *out), (ctx, dev, out)) \
  X(device_sync, (void *ctx), (ctx)) \
  X(stream_create, (void *ctx, int dev, int priority, int blocking, ps_stream **out), \
    (ctx, dev, priority, blocking, out)) \
  X(stream_destroy, (void *ctx, ps_stream *s), (ctx, s)) \
  X(stream_priority_range, (void *ctx, int *least, int *greatest), (ctx, least, greatest)) \
  X(stream_sync, (void *ctx, ps_stream *s), (ctx, s)) \
  X(stream_query, (void *ctx, ps_stream *s, int *idle), (ctx, s, idle)) \
  X(stream_wait, (void *ctx, ps_stream *s, ps_event *e), (ctx, s, e)) \
  X(event_create, (void *ctx, unsigned flags, ps_event **out), (ctx, flags, out)) \
  X(event_destroy, (void *ctx, ps_event *e), (ctx, e)) \
  X(event_record, (void *ctx, ps_event *e, ps_stream *s), (ctx, e, s)) \
  X(event_sync, (void *ctx, ps_event *e), (ctx, e)) \
  X(event_query, (void *ctx, ps_event *e, int *done), (ctx, e, done)) \
  X(event_elapsed, (void *ctx, ps_event *a, ps_event *b, double *ms), (ctx, a, b, ms)) \
  X(pool_create, (void *ctx, const ps_pool_props *props, ps_pool **out), (ctx, props, out)) \
  X(pool_default, (void *ctx, int dev, ps_pool **out), (ctx, dev, out)) \
  X(pool_destroy, (void *ctx, ps_pool *p), (ctx, p)) \
  X(pool_set, (void *ctx, ps_pool *p, ps_pool_attr a, uint64_t v), (ctx, p, a, v)) \
  X(pool_get, (void *ctx, ps_pool *p, ps_pool_attr a, uint64_t *v), (ctx, p, a, v)) \
  X(pool_trim, (void *ctx, ps_pool *p, uint64_t keep), (ctx, p, keep)) \
  X(pool_alloc, (void *ctx, ps_pool *p, uint64_t size, ps_stream *s, ps_addr *out, \
                 ps_alloc_note *note), (ctx, p, size, s, out, note)) \
  X(pool_free, (void *ctx, ps_addr a, ps_stream *s), (ctx, a, s)) \
  X(malloc_device, (void *ctx, uint64_t size, ps_addr *out), (ctx, size, out)) \
  X(free_device, (void *ctx, ps_addr a), (ctx, a)) \
  X(alloc_pinned, (void *ctx, uint64_t size, unsigned flags, ps_addr *out), \
    (ctx, size, flags, out)) \
  X(free_pinned, (void *ctx, ps_addr a), (ctx, a)) \
  X(alloc_pageable, (void *ctx, uint64_t size, ps_addr *out), (ctx, size, out)) \
  X(free_pageable, (void *ctx, ps_addr a), (ctx, a)) \
  X(host_register, (void *ctx, ps_addr a, uint64_t size), (ctx, a, size)) \
  X(host_unregister, (void *ctx, ps_addr a), (ctx, a)) \
  X(copy, (void *ctx, ps_addr dst, ps_addr src, uint64_t n, ps_stream *s), \
    (ctx, dst, src, n, s)) \
  X(fill, (void *ctx, ps_addr a, uint64_t n, int byte, ps_stream *s), (ctx, a, n, byte, s)) \
  X(touch, (void *ctx, ps_addr a, uint64_t n, ps_stream *s), (ctx, a, n, s)) \
  X(verify, (void *ctx, ps_addr a, uint64_t n, int byte, ps_stream *s, int64_t *first_bad), \
    (ctx, a, n, byte, s, first_bad)) \
  X(spin, (void *ctx, ps_stream *s, double ms), (ctx, s, ms)) \
  X(read, (void *ctx, ps_kind k, ps_addr src, void *dst, uint64_t n, ps_stream *s), \
    (ctx, k, src, dst, n, s)) \
  X(write, (void *ctx, ps_kind k, ps_addr dst, const void *src, uint64_t n, ps_stream *s), \
    (ctx, k, dst, src, n, s)) \
  X(sleep, (void *ctx, double ms), (ctx, ms)) \
  X(event_export, (void *ctx, ps_event *e, uint8_t out[PS_IPC_BYTES]), (ctx, e, out)) \
  X(event_import, (void *ctx, const uint8_t data[PS_IPC_BYTES], ps_event **out), (ctx, data, out)) \
  X(pool_export, (void *ctx, ps_pool *p, int *fd), (ctx, p, fd)) \
  X(pool_import, (void *ctx, int fd, ps_pool **out), (ctx, fd, out)) \
  X(ptr_export, (void *ctx, ps_addr a, uint8_t out[PS_IPC_BYTES]), (ctx, a, out)) \
  X(ptr_import, (void *ctx, ps_pool *p, const uint8_t data[PS_IPC_BYTES], ps_addr *out), \
    (ctx, p, data, out))

#define SIM_FAULT_ENUM(name, params, args) SIM_F_##name,
typedef enum { SIM_FAULT_OPS(SIM_FAULT_ENUM) SIM_F_N } sim_fault_op;
#undef SIM_FAULT_ENUM

/* One armed fault: calls next, next + every, ... of op return status,
 * `left` times (INFINITY: every one from next on). */
typedef struct sim_fault {
  int op, status;
  uint64_t next, every;
  double left;
} sim_fault;

typedef struct sim_faults {
  uint64_t calls[SIM_F_N];     /* calls of each op since open, failed ones too */
  sim_fault *v; size_t n, cap; /* armed, in the order armed */
  double count, every;         /* for the next fault armed (fault.count, fault.every) */
} sim_faults;

typedef struct sim_ctx {
  sim_profile prof;
  int64_t host_now;        /* ns since open */
  ps_stream legacy;        /* the NULL stream */
  /* Created streams not yet dropped: live ones, and destroyed ones the
   * host has not fully learned yet (their position or what they knew). */
  ps_stream **streams;
  size_t nstreams, capstreams, ndestroyed, sweep_at;
  int stream_ids;          /* ids handed out: 1 .. stream_ids */
  sim_table live;          /* handles of live streams */
  sim_table events;        /* handles of live events */
  ps_stream **touched;     /* streams whose tail may have grown since */
  ps_stream *resolved;     /* the last stream resolved: kept touched */
  size_t ntouched, captouched;   /* folded into tail_all, tail_blocking */
  int64_t tail_all, tail_blocking;   /* max tail of created (blocking) streams */
  /* Positions the host knows completed: one entry for the legacy stream
   * and each stream in `streams`. Read it through sim_host_knows. */
  sim_vclock host_known;
  uint64_t host_epoch;     /* grows whenever sim_host_knows may answer anew */
  /* Streams destroyed while busy whose pools release when their work
   * completes: a min-heap on tail (a destroyed stream's tail is fixed). */
  ps_stream **due;
  size_t ndue, capdue;
  sim_op *ops;             /* min-heap on (end, seq) */
  size_t nops, capops;
  uint64_t op_seq;
  sim_mem mem;
  sim_pool_list pools;
  ps_pool *default_pool[SIM_MAX_DEVICES];   /* made on first use (the context's at open) */
  int ndev;                /* devices modelled: 1 .. SIM_MAX_DEVICES */
  int dev;                 /* the context's device (ps_config.device) */
  int peer_capable;        /* 1: every pair of devices can access each other */
  uint8_t peer_on[SIM_MAX_DEVICES][SIM_MAX_DEVICES];   /* [dev][peer]: enabled */
  int (*interrupted)(void *ud);   /* from ps_config: give up a wait */
  void *interrupted_ud;
  sim_faults faults;
  /* Young-run records the young best fit looked at (it stays O(log n):
   * tests/c/test_sim_scale.c reads it). */
  uint64_t young_visits;
  /* Island treap nodes and records the pool's best fit looked at (O(k log
   * n) while other streams' frees it may not use are all pending:
   * tests/c/test_sim_scale.c reads it). */
  uint64_t fit_visits;
  /* Frees retired so far (a sync retires the frees it covers, not the
   * next allocation: tests/c/test_sim_scale.c reads it). */
  uint64_t retires;
  /* Times a pool rebuilt its islands at once, retiring every free it
   * held (tests/c/test_sim_scale.c reads it). */
  uint64_t isl_rebuilds;
  struct sim_vmm *vmm;     /* VMM reservations and handles (sim_vmm.c) */
} sim_ctx;

/* Fault injection's functions: sim_fault.h. */

/* ---- errors (sim_error.c) ---- */

/* The code of a CUDA error name the sim knows (cudaSuccess and
 * "interrupted" excluded), or PS_OK when there is none. */
int sim_error_code(const char *name);
/* A status's CUDA error name and text ("cudaErrorUnknown", "unknown
 * error" for a status the sim does not know). */
const char *sim_error_name(int st);
const char *sim_error_string(int st);

/* The live stream a handle names (NULL: the legacy one), in O(1); NULL
 * when invalid. Marks it touched: the caller may raise its tail. */
ps_stream *sim_stream_resolve(sim_ctx *c, ps_stream *s);
int sim_event_valid(sim_ctx *c, ps_event *e);
/* Enqueues an op of `dur` ns on s: returns its end and takes a position. */
int64_t sim_enqueue(sim_ctx *c, ps_stream *s, int64_t dur);
int sim_enqueue_fits(sim_ctx *c, ps_stream *s, int64_t dur);
int64_t sim_stream_done_time(sim_ctx *c, ps_stream *s);
void sim_host_advance(sim_ctx *c, int64_t t);   /* also applies due work */
void sim_host_cost(sim_ctx *c, double ns);

#define GIB_D (1024.0 * 1024.0 * 1024.0)
/* Charges the host ns plus ns_per_gib for each GiB of bytes. */
void sim_cost(sim_ctx *c, double ns, double ns_per_gib, uint64_t bytes);
int sim_push_op(sim_ctx *c, const sim_op *op);
/* Lands now, in order, every queued op that ends by t (an IPC event's
 * record: its work is in the shared bytes before another process looks). */
void sim_land_until(sim_ctx *c, int64_t t);
/* Host waits for s as cudaStreamSynchronize does (retire and release
 * included); PS_INTERRUPTED when it had to wait and cfg said stop. */
int sim_sync_stream(sim_ctx *c, ps_stream *s);
/* Host waits for every stream; with retire, as cudaDeviceSynchronize
 * (frees retired, pools release); without, only the time passes. Not
 * interruptible (the caller checks). */
void sim_sync_device(sim_ctx *c, int retire);
/* PS_INTERRUPTED when waiting until t would wait and cfg says stop. */
int sim_wait_check(sim_ctx *c, int64_t t);
void sim_streams_free(sim_ctx *c);
/* Streams destroyed busy whose work completed by host_now: the host
 * learns them and pools release, off the host's clock (the driver does
 * it when the work completes; the next call sees it). O(1) when none. */
void sim_streams_due(sim_ctx *c);
/* Whether the host knows that position pos of stream `stream` completed.
 * Always true for a dropped stream (destroyed, and fully learned before it
 * was dropped): its entries in clocks no longer matter. */
int sim_host_knows(const sim_ctx *c, int stream, int64_t pos);

/* The ops of sim_stream.c that the ops table uses directly. */
int sim_device_sync(void *ctx);
int sim_stream_create(void *ctx, int dev, int priority, int blocking, ps_stream **out);
int sim_stream_destroy(void *ctx, ps_stream *s);
int sim_stream_priority_range(void *ctx, int *least, int *greatest);
int sim_stream_sync(void *ctx, ps_stream *s);
int sim_stream_query(void *ctx, ps_stream *s, int *idle);
int sim_stream_wait(void *ctx, ps_stream *s, ps_event *e);
int sim_event_create(void *ctx, unsigned flags, ps_event **out);
int sim_event_destroy(void *ctx, ps_event *e);
int sim_event_record(void *ctx, ps_event *e, ps_stream *s);
int sim_event_sync(void *ctx, ps_event *e);
int sim_event_query(void *ctx, ps_event *e, int *done);
int sim_event_elapsed(void *ctx, ps_event *a, ps_event *b, double *ms);
int sim_sleep(void *ctx, double ms);
double sim_now(void *ctx);

/* ---- pools (sim_pool.c) ---- */

int sim_pools_init(sim_ctx *c);
void sim_pools_free(sim_ctx *c);
/* Host synchronisation happened: release what thresholds ask for, at a
 * host cost (release_ns ... per space). */
void sim_pools_release(sim_ctx *c);
/* After the host learned of work done: pools retire the frees it covers
 * (the sync pays for them, not the next allocation). */
void sim_pools_settle(sim_ctx *c);
/* A destroyed stream's work completed: the pools holding its frees
 * release, done by the driver off the host's clock (no cost). */
void sim_pools_mark_done(sim_ctx *c, int stream);
void sim_pools_release_done(sim_ctx *c);
uint64_t sim_device_reserved(const sim_ctx *c);
uint64_t sim_device_total(const sim_ctx *c);
/* Whether device dev's kernels may reach the memory mapping m holds (pool
 * access, peer access for cudaMalloc'd memory; host memory always).
 * Copies of pool memory need the pool's access too (sim.c, copy_reaches). */
int sim_reachable(const sim_ctx *c, const sim_map *m, int dev);
int sim_pool_reaches(const ps_pool *p, int dev);
int sim_pool_get_access(void *ctx, ps_pool *p, int dev, ps_access *out);
int sim_pool_set_access(void *ctx, ps_pool *p, int dev, ps_access a);
/* Whether dev is a device the sim models. */
static inline int sim_valid_dev(const sim_ctx *c, int dev) { return dev >= 0 && dev < c->ndev; }

int sim_pool_create(void *ctx, const ps_pool_props *props, ps_pool **out);
int sim_pool_default(void *ctx, int dev, ps_pool **out);
int sim_pool_destroy(void *ctx, ps_pool *p);
int sim_pool_set(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t v);
int sim_pool_get(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t *v);
int sim_pool_trim(void *ctx, ps_pool *p, uint64_t keep);
int sim_pool_alloc(void *ctx, ps_pool *p, uint64_t size, ps_stream *s,
                   ps_addr *out, ps_alloc_note *note);
int sim_pool_free(void *ctx, ps_addr a, ps_stream *s);
/* For tests: whether the young-run index matches a walk (sim_pool.c). */
int sim_pool_young_check(const ps_pool *p);
/* For tests: whether the island treaps match a walk (sim_pool.c). */
int sim_pool_island_check(const ps_pool *p);
/* An imported block's free landed on the importer's stream: its mapping goes. */
void sim_pool_drop_import(sim_ctx *c, sim_map *m);

/* ---- IPC between processes (sim_ipc.c) ---- */

/* Why an import was refused, beyond cudaErrorInvalidValue (named so, with
 * their own text: sim.c's ERRS). */
enum {
  SIM_ERR_IPC_SEGMENT = -10,   /* the fd is not a sim IPC pool's segment */
  SIM_ERR_IPC_UNSEALED = -11,  /* the segment's size is not sealed */
  SIM_ERR_IPC_SHORT = -12,     /* the segment is shorter than its header says */
  SIM_ERR_IPC_EV_OWNER = -13,  /* an IPC event's shm object is another user's */
  SIM_ERR_IPC_EV_OBJECT = -14  /* ... not mode 0600, or not an event slot */
};

typedef struct sim_ipc_seg sim_ipc_seg;
sim_ipc_seg *sim_ipc_seg_create(uint64_t va, int dev);
int sim_ipc_seg_open(int fd, sim_ipc_seg **out);
void sim_ipc_seg_close(sim_ipc_seg *g);
uint8_t *sim_ipc_seg_data(sim_ipc_seg *g);
uint64_t sim_ipc_seg_va(const sim_ipc_seg *g);
int sim_ipc_seg_device(const sim_ipc_seg *g);
int sim_ipc_seg_fd(sim_ipc_seg *g);
int sim_ipc_seg_export(sim_ipc_seg *g, uint64_t off, uint64_t size, uint8_t out[PS_IPC_BYTES]);
void sim_ipc_seg_freed(sim_ipc_seg *g, uint64_t off);
int sim_ipc_seg_check(sim_ipc_seg *g, const uint8_t data[PS_IPC_BYTES], uint64_t *off,
                      uint64_t *size);
sim_ipc_ev *sim_ipc_ev_create(void);
void sim_ipc_ev_handle(const sim_ipc_ev *v, uint8_t out[PS_IPC_BYTES]);
int sim_ipc_ev_open(const uint8_t data[PS_IPC_BYTES], sim_ipc_ev **out);
void sim_ipc_sweep(void);
void sim_ipc_ev_close(sim_ipc_ev *v);
void sim_ipc_ev_recorded(sim_ipc_ev *v, int64_t delay);
int sim_ipc_ev_news(sim_ipc_ev *v, int64_t *delay);

int sim_event_export(void *ctx, ps_event *e, uint8_t out[PS_IPC_BYTES]);
int sim_event_import(void *ctx, const uint8_t data[PS_IPC_BYTES], ps_event **out);
int sim_pool_export(void *ctx, ps_pool *p, int *fd);
int sim_pool_import(void *ctx, int fd, ps_pool **out);
int sim_ptr_export(void *ctx, ps_addr a, uint8_t out[PS_IPC_BYTES]);
int sim_ptr_import(void *ctx, ps_pool *p, const uint8_t data[PS_IPC_BYTES], ps_addr *out);

/* ---- virtual memory management (sim_vmm.c, sim_mem.c) ---- */

typedef struct sim_vmm sim_vmm;
/* The largest reservation (4 TiB): its page table (8 bytes per 64 KiB,
 * touched only where mapped) stays within 512 MiB of host addresses;
 * beyond it, cudaErrorMemoryAllocation as when a GPU's VA runs out. */
#define SIM_VMM_MAX_RESERVE ((uint64_t)1 << 42)
/* sim_mem.c: counts delta bytes of dev's (device space) or the host's
 * memory as mapped without a mapping (a VMM handle's physical memory). */
void sim_mem_account(sim_mem *m, sim_space sp, int dev, int64_t delta);
/* Reserves size bytes of device VA aligned to align (a power of two): a
 * SIM_MAP_VMM map, nothing mapped. NULL when out of VA or host RAM. */
sim_map *sim_mem_reserve_aligned(sim_mem *m, uint64_t size, uint64_t align);
/* Whether device dev may reach [a, a + n) of VMM reservation m: every
 * byte mapped, readable (write 0) or writable. */
int sim_vmm_reaches(const sim_map *m, ps_addr a, uint64_t n, int dev, int write);
void sim_vmm_free_all(sim_ctx *c);
int sim_vmm_granularity(void *ctx, ps_location loc, int dev, int recommended, uint64_t *bytes);
int sim_vmm_reserve(void *ctx, uint64_t size, uint64_t align, ps_addr *addr);
int sim_vmm_free(void *ctx, ps_addr addr, uint64_t size);
int sim_vmm_create(void *ctx, ps_location loc, int dev, uint64_t size, ps_vmm_handle **out);
int sim_vmm_release(void *ctx, ps_vmm_handle *h);
int sim_vmm_map(void *ctx, ps_addr addr, uint64_t size, uint64_t offset, ps_vmm_handle *h);
int sim_vmm_unmap(void *ctx, ps_addr addr, uint64_t size);
int sim_vmm_set_access(void *ctx, ps_addr addr, uint64_t size, int dev, ps_access a);

/* ---- helpers ---- */

static inline uint64_t sim_round_up(uint64_t x, uint64_t g) {
  return g ? (x + g - 1) / g * g : x;
}
static inline int64_t sim_max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The virtual clock never passes this (about 146 years): spins and sleeps
 * that would are refused, so host costs added after cannot overflow. */
#define SIM_CLOCK_END ((int64_t)1 << 62)
/* Whether t + d (d >= 0) stays within the clock. */
static inline int sim_clock_fits(int64_t t, int64_t d) { return d <= SIM_CLOCK_END - t; }

/* Makes room for one more element in the growable array *v of n elements
 * (capacity *cap, elem bytes each; first is the initial capacity, doubled
 * after). 1 when there is room, 0 when out of memory (*v unchanged). */
static inline int sim_reserve_one(void **v, size_t *cap, size_t n, size_t elem, size_t first) {
  if (n < *cap) return 1;
  size_t c = *cap ? *cap * 2 : first;
  void *w = realloc(*v, c * elem);
  if (!w) return 0;
  *v = w, *cap = c;
  return 1;
}

#endif
