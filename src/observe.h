/*
 * observe.h: the observation layer's entry points, the only calls the
 * bindings make into it (docs/architecture.md). A binding checks its
 * arguments, calls the backend, then reports what happened once; the
 * layer fans the report out to the ledger (ledger.c), the recorder
 * (trace.c) and the views (inspect.c). It never changes what it observes.
 */
#ifndef POOLSH_OBSERVE_H
#define POOLSH_OBSERVE_H

#include "report.h"

/* Makes the layer's state (raises on out of memory) and frees it. */
void ps_obs_open(lua_State *L, ps_ctx *c);
void ps_obs_close(ps_ctx *c);

/* Objects coming and going. The stream's and pool's records start
 * following them here; a destroyed one (any status) stops. */
void ps_obs_stream_created(lua_State *L, ps_ctx *c, ps_streamud *s);
void ps_obs_pool_created(lua_State *L, ps_ctx *c, ps_poolud *p);
void ps_obs_pool_destroying(lua_State *L, ps_ctx *c, ps_poolud *p, int collected);

/* Buffers: an allocation (pool and stream NULL for the other kinds; said:
 * the backend's word on reuse), one that failed (pushes what explains it:
 * nil unless out of memory, else a table of ids, bytes and the advice
 * that applies, which lua/poolsh/render/oom.lua words, docs/errors.md),
 * and a free (queued on stream s for pool memory; NULL for the other
 * kinds). */
void ps_obs_alloc(lua_State *L, ps_ctx *c, const ps_bufferud *b, ps_poolud *p,
                  ps_streamud *s, ps_reuse_rule said);
void ps_obs_alloc_failed(lua_State *L, ps_ctx *c, ps_poolud *p, ps_streamud *s, uint64_t size,
                         int status);
/* An out-of-memory retry of p:alloc: begun before the collection, ended
 * after the second try (whatever its status). */
void ps_obs_retry_begin(ps_ctx *c, ps_poolud *p);
void ps_obs_retried(lua_State *L, ps_ctx *c, ps_poolud *p, ps_streamud *s, uint64_t size);
void ps_obs_free(lua_State *L, ps_ctx *c, const ps_bufferud *b, ps_streamud *s, int collected);
/* poolsh.core.collected([since]): the frees the collector made (collected
 * set above), for the REPL's live view (docs/live.md). */
int ps_obs_collected(lua_State *L);

/* Work queued on a stream: copy, fill, touch, spin, record, wait. */
void ps_obs_enqueued(lua_State *L, ps_ctx *c, const ps_what *w);
/* A pool's settings changed: set (reset_high too). */
void ps_obs_pool_set(lua_State *L, ps_ctx *c, const ps_what *w);

/* A host wait: begun before the backend call, ended after it succeeded,
 * with its cause: stream, event and device syncs, verify, read, write
 * (each waits for its stream), trim, a stream destroyed, a cudaFree. */
void ps_obs_wait_begin(ps_ctx *c);
void ps_obs_waited(lua_State *L, ps_ctx *c, const ps_what *w);
/* A stream destroyed (at any status): it is no longer followed; when
 * destroying it succeeded, it was a host wait (docs/calibration.md E3). */
void ps_obs_stream_destroyed(lua_State *L, ps_ctx *c, ps_streamud *s, int status, int collected);

/* A query found stream s idle, or event e (on s) complete. */
void ps_obs_idle(lua_State *L, ps_ctx *c, ps_streamud *s, ps_eventud *e);

/* What the views tell bindings back: a buffer's reuse (-1 and
 * PS_RULE_NONE when fresh); a pool's ledger counts (live, pending,
 * pending_count) and, with estimates, its free space (free, largest_free,
 * free_estimated), set into the table on top. */
void ps_obs_reuse(const ps_bufferud *b, int32_t *from, ps_reuse_rule *rule);
void ps_obs_pool_view(lua_State *L, ps_ctx *c, const ps_poolud *p, uint64_t reserved,
                      int estimates);

/* Pushes b's why_fresh (nil when it reused, or nothing explains it). */
void ps_obs_push_why_fresh(lua_State *L, const ps_bufferud *b);
/* Pushes the buffers whose freed memory b reuses, lowest address first:
 * an array of {buffer, rule, bytes, stream} (empty when fresh). */
void ps_obs_push_sources(lua_State *L, const ps_bufferud *b);
/* poolsh.core.reset(): each live Buffer is passed to dead (which ends
 * it), then the layer forgets everything. A Buffer that the collector
 * takes while still live (its finalizer's free failed) is lost. */
void ps_obs_reset(lua_State *L, ps_ctx *c, void (*dead)(ps_ctx *c, const ps_bufferud *b));
void ps_obs_lost(ps_ctx *c, const ps_bufferud *b);

/* A Buffer's record is zeroed with it (buffer.c's hot path): 0 reads as
 * "not reused". */
#define PS_SEEN_BUFFER_BYTES 20

/* The size of each bound type's userdata: its struct, then the layer's
 * record (by context user value index). */
extern const size_t ps_udsize[];

/* A VMM call that succeeded (vmm.c): reserve, create, map, unmap,
 * set_access, release, free. Ids -1 and location, device, access -1 where
 * they do not apply. */
typedef struct ps_vmm_what {
  ps_op op;
  int32_t range, memory;
  ps_addr addr;              /* the virtual address it concerns (0: none) */
  uint64_t size, memory_offset;
  int location, device, access;
} ps_vmm_what;
void ps_obs_vmm(lua_State *L, ps_ctx *c, const ps_vmm_what *w);

int poolsh_open_trace(lua_State *L);
int poolsh_open_sites(lua_State *L);

#endif
