/*
 * sim_internal.h: the sim backend's shared types, for src/sim only.
 *
 * The sim models one GPU on a virtual clock (int64 ns). All state lives in a
 * sim_ctx created by open(); nothing is global. See docs/sim.md.
 */
#ifndef POOLSH_SIM_INTERNAL_H
#define POOLSH_SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* ---- device profile (sim_profile.c) ---- */

typedef struct sim_profile {
  double memory, host_memory;                   /* bytes */
  double api_ns, event_api_ns, alloc_api_ns;    /* host cost per call */
  double pool_alloc_ns, pool_free_ns;           /* host cost: pool alloc/free */
  double malloc_ns, free_ns;                    /* host cost: cudaMalloc/cudaFree */
  double sync_ns, query_ns;                     /* host cost: idle sync, query */
  double launch_ns, copy_ns;                    /* device-side latency */
  double bw_fill, bw_d2d, bw_pinned;            /* GB/s (1e9) */
  double bw_pageable_h2d, bw_pageable_d2h, bw_h2h;
  double pool_granularity, pool_alignment;      /* bytes */
  double malloc_granularity;                    /* bytes */
  double map_ns, map_ns_per_gib;                /* host cost of growing a pool */
  double release_ns, release_ns_per_gib;        /* host cost of a release */
  double trim_ns_per_gib;                       /* host cost of a trim */
  double release_on_stream_sync, release_on_event_sync;
  double release_on_device_sync, release_on_cuda_free;     /* 0 or 1 */
  double release_on_stream_destroy;                         /* 0 or 1 */
  double report_rules;     /* 1: say each reuse's rule; 0: say nothing, as cuda */
} sim_profile;

void sim_profile_defaults(sim_profile *p);
int sim_profile_get(const sim_profile *p, const char *key, double *v);
/* Checks the value; the caller decides whether the key may change now. */
int sim_profile_set(sim_profile *p, const char *key, double v);
int sim_profile_names(const char **names, int max);

/* ---- address space and contents (sim_mem.c) ---- */

#define SIM_PAGE_SHIFT 16
#define SIM_PAGE ((uint64_t)1 << SIM_PAGE_SHIFT)   /* 64 KiB content pages */

typedef enum { SIM_DEVICE_SPACE = 0, SIM_HOST_SPACE = 1 } sim_space;
/* SIM_MAP_ARENA: a pool's arena, owner is its ps_pool. */
typedef enum { SIM_MAP_ARENA, SIM_MAP_MALLOC, SIM_MAP_PINNED, SIM_MAP_PAGEABLE } sim_map_kind;

/* A page is uniform (data == NULL, every byte == val) or materialized. */
typedef struct sim_page { uint8_t *data; uint8_t val; } sim_page;

typedef struct sim_map {
  ps_addr base;
  uint64_t size;             /* bytes mapped from base (what accounting counts) */
  uint64_t va;               /* address space reserved from base (>= size) */
  sim_space space;
  sim_map_kind kind;
  int registered;            /* pageable: cudaHostRegister'd */
  void *owner;               /* arena: its ps_pool */
  uint64_t npages;
  sim_page *pages;
} sim_map;

typedef struct sim_mem {
  sim_map **maps;            /* sorted by base, never overlapping */
  size_t n, cap;
  uint64_t mapped[2];        /* bytes mapped per space */
} sim_mem;

sim_map *sim_mem_map(sim_mem *m, sim_space sp, uint64_t size, sim_map_kind k);
sim_map *sim_mem_reserve(sim_mem *m, sim_space sp, uint64_t va, sim_map_kind k);
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

/* ---- vector clocks ---- */

/* clk[id] = latest position on stream id known; missing entries are 0. */
typedef struct sim_vclock { int64_t *v; int n; } sim_vclock;

int64_t sim_vc_get(const sim_vclock *c, int id);
int sim_vc_raise(sim_vclock *c, int id, int64_t pos);
int sim_vc_merge(sim_vclock *c, const sim_vclock *o);
int sim_vc_copy(sim_vclock *c, const sim_vclock *o);
void sim_vc_free(sim_vclock *c);

/* ---- streams, events, pending device work (sim_stream.c) ---- */

struct ps_stream {
  int id;                  /* 0 is the legacy default stream */
  int priority, blocking, destroyed;
  int64_t tail;            /* ns: when the last enqueued op completes */
  int64_t seq;             /* positions handed out on this stream */
  sim_vclock clock;        /* what this stream knows of others */
};

struct ps_event {
  int timing, recorded;
  int64_t time;            /* ns: completion of work before the record */
  sim_vclock clock;        /* the recording stream's knowledge, position incl. */
};

typedef enum { SIM_OP_NONE, SIM_OP_FILL, SIM_OP_COPY, SIM_OP_WRITE } sim_op_kind;

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

typedef struct sim_pool_list { ps_pool **v; size_t n, cap; } sim_pool_list;

typedef struct sim_ctx {
  sim_profile prof;
  int64_t host_now;        /* ns since open */
  ps_stream legacy;        /* the NULL stream */
  ps_stream **streams;     /* created streams, destroyed ones kept */
  size_t nstreams, capstreams;
  ps_event **events;
  size_t nevents, capevents;
  sim_vclock host_known;   /* positions the host knows completed */
  sim_op *ops;             /* min-heap on (end, seq) */
  size_t nops, capops;
  uint64_t op_seq;
  sim_mem mem;
  sim_pool_list pools;
  ps_pool *default_pool;
  int (*interrupted)(void *ud);   /* from ps_config: give up a wait */
  void *interrupted_ud;
} sim_ctx;

ps_stream *sim_stream_resolve(sim_ctx *c, ps_stream *s);   /* NULL: invalid */
int sim_event_valid(sim_ctx *c, ps_event *e);
/* Enqueues an op of `dur` ns on s: returns its end and takes a position. */
int64_t sim_enqueue(sim_ctx *c, ps_stream *s, int64_t dur);
int64_t sim_stream_done_time(sim_ctx *c, ps_stream *s);
void sim_host_advance(sim_ctx *c, int64_t t);   /* also applies due work */
void sim_host_cost(sim_ctx *c, double ns);
int sim_push_op(sim_ctx *c, const sim_op *op);
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
/* Host synchronisation happened: release what thresholds ask for. */
void sim_pools_release(sim_ctx *c);
uint64_t sim_device_reserved(const sim_ctx *c);
uint64_t sim_device_total(const sim_ctx *c);

int sim_pool_create(void *ctx, const ps_pool_props *props, ps_pool **out);
int sim_pool_default(void *ctx, int dev, ps_pool **out);
int sim_pool_destroy(void *ctx, ps_pool *p);
int sim_pool_set(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t v);
int sim_pool_get(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t *v);
int sim_pool_trim(void *ctx, ps_pool *p, uint64_t keep);
int sim_pool_alloc(void *ctx, ps_pool *p, uint64_t size, ps_stream *s,
                   ps_addr *out, ps_alloc_note *note);
int sim_pool_free(void *ctx, ps_addr a, ps_stream *s);

/* ---- helpers ---- */

static inline uint64_t sim_round_up(uint64_t x, uint64_t g) {
  return g ? (x + g - 1) / g * g : x;
}
static inline int64_t sim_max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Makes room for one more element in the array *v of n elements and
 * capacity *cap (doubling, from first). 0 when out of memory; nothing
 * changes then. */
int sim_reserve_one(void **v, size_t *cap, size_t n, size_t elem, size_t first);

#endif
