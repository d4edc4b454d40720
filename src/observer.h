/*
 * observer.h: the observation layer's own state and the observers it fans
 * out to: the ledger (ledger.c), the recorder (trace.c), the sites
 * (sites.c), the views (inspect.c), and what they share below them: the
 * table of source names (sources.c) and the followed streams by id
 * (followed.c). Only those files and observe.c include it; bindings see
 * observe.h.
 */
#ifndef POOLSH_OBSERVER_H
#define POOLSH_OBSERVER_H

#include "report.h"

typedef struct ps_trace ps_trace;
typedef struct ps_ledger ps_ledger;

#define PS_KNOWS 16
#define PS_UNSET UINT64_MAX

/* What poolsh knows of a stream: it follows the Stream's struct in its
 * userdata (ps_seen_stream_of), so it lives as long as the Stream. */
/* What a stream knows of another: that stream's position up to which
 * an event wait ordered it. */
typedef struct ps_knows {
  int32_t stream;
  uint64_t pos;
} ps_knows;

typedef struct ps_seen_stream {
  int32_t id;
  int followed;              /* in the layer's list: the stream lives */
  ps_stream *h;              /* the backend's handle, for stream_peek */
  uint64_t ops;              /* operations poolsh queued on it: its position */
  uint64_t synced;           /* the host synchronised past this many */
  uint64_t done;             /* known complete: syncs, and idle queries */
  ps_knows knows[PS_KNOWS];  /* event waits, direct and through other streams */
  int32_t pendq;             /* ledger: its queue of pending frees, index + 1 */
  int blocking;              /* synchronises with the legacy default stream */
  struct ps_seen_stream *next;
} ps_seen_stream;

/* What happened to a pool, for poolsh.core.counts() (allocations: fresh
 * and the reuses). */
typedef struct ps_counts {
  uint64_t fresh, growths, ooms, retries;
  uint64_t reuses[PS_RULE_UNKNOWN];     /* by rule; [0] unused */
  uint64_t releases[PS_OP_COUNT];       /* by the op that caused it */
} ps_counts;

typedef struct ps_seen_pool {
  int32_t id;
  int followed;
  ps_pool *h;
  uint64_t last_reserved;    /* recorder: reserved bytes last seen */
  uint64_t last_used;        /* recorder: used bytes, kept by alloc and free */
  uint64_t live_bytes, pending_bytes;   /* ledger: blocks allocated, frees queued */
  uint64_t pending_count;
  ps_addr lo;                /* lowest block address seen: the arena's base */
  int edges;                 /* ledger: its blocks' edges are kept (free space asked) */
  uint64_t done_bytes;       /* ledger: bytes of its done blocks */
  uint64_t seen_reserved;    /* counts: reserved bytes last read, PS_UNSET: unknown */
  uint64_t wait_reserved;    /* counts: reserved bytes when the host wait began */
  uint64_t scope_peak;       /* peak of live_bytes in the innermost peak scope */
  ps_counts n;
  struct ps_seen_pool *next;
} ps_seen_pool;

typedef struct ps_seen_event {
  int32_t rec_stream;        /* where it was last recorded: stream id, */
  uint64_t rec_pos;          /* and that stream's position (0: never) */
  ps_knows knew[PS_KNOWS];   /* what that stream knew then: a wait passes it on */
} ps_seen_event;

/* Why an allocation took fresh memory although freed memory of its pool
 * was there (docs/explain.md); the words are ps_push_why's. */
typedef enum {
  PS_WHY_NONE = 0,
  PS_WHY_OTHER_STREAM,       /* pending on another stream, no event dependency */
  PS_WHY_EVENT_BEFORE,       /* the stream waited on an event recorded before the free */
  PS_WHY_NOT_FOLLOWED,       /* it waited on one after it; follow_event_dependencies off */
  PS_WHY_OPPORTUNISTIC_OFF,  /* the free completed; opportunistic off */
  PS_WHY_FRAGMENTED,         /* freed enough in all, no block large enough */
  PS_WHY_PLACED,             /* a rule allowed it; the pool placed it elsewhere */
  PS_WHY_COUNT
} ps_why_code;

/* A why's details, in the layer's ring of PS_WHYS (a Buffer's record
 * keeps only its code and slot, so the hot path's record stays small). */
typedef struct ps_why {
  int32_t owner;             /* the fresh buffer it explains (the slot's owner) */
  int32_t buffer, stream;    /* the freed block's buffer and where it was freed */
  uint64_t bytes;            /* FRAGMENTED: the largest freed block; PLACED: the rule */
} ps_why;

#define PS_WHYS 4096

/* One buffer whose freed bytes an allocation took (docs/explain.md). */
typedef struct ps_source {
  int32_t buffer, stream;    /* the freed buffer, and where its free was queued */
  uint8_t rule;              /* ps_reuse_rule: why the allocation could take them */
  uint64_t bytes;            /* the bytes taken from it */
} ps_source;

#define PS_SOURCES 8         /* sources kept per allocation; more are counted */
#define PS_SRCS 4096         /* the ring of allocations' sources */

/* An allocation's sources, lowest address first, in the layer's ring of
 * PS_SRCS (a reused Buffer's record keeps its slot in why_slot). */
typedef struct ps_srcs {
  int32_t owner;             /* the allocation they belong to */
  uint32_t n, more;          /* sources kept; sources beyond PS_SOURCES */
  uint64_t more_bytes;       /* the bytes those took */
  ps_source v[PS_SOURCES];
} ps_srcs;

typedef struct ps_seen_buffer {
  int32_t reused_from;       /* the buffer whose memory this reuses, or 0 (ids start at 1) */
  int32_t src, line;         /* where it was allocated, src -1: unknown */
  uint8_t reuse_rule;        /* ps_reuse_rule */
  uint8_t why_code;          /* ps_why_code: fresh, and why not reused */
  uint16_t why_slot;         /* its details in the ring of whys; reused: its sources */
  int32_t slot;              /* its block in the ledger + 1 (0: none), checked before use */
} ps_seen_buffer;

static inline ps_seen_stream *ps_seen_stream_of(const ps_streamud *s) {
  return (ps_seen_stream *)(void *)(s + 1);
}
static inline ps_seen_pool *ps_seen_pool_of(const ps_poolud *p) {
  return (ps_seen_pool *)(void *)(p + 1);
}
static inline ps_seen_event *ps_seen_event_of(const ps_eventud *e) {
  return (ps_seen_event *)(void *)(e + 1);
}
static inline ps_seen_buffer *ps_seen_buffer_of(const ps_bufferud *b) {
  return (ps_seen_buffer *)(void *)(b + 1);
}

typedef struct ps_sites ps_sites;
typedef struct ps_streammap ps_streammap;

/* Objects by id (followed.c): open addressing, p NULL an empty slot. */
typedef struct ps_idmap {
  struct ps_idslot { int32_t id; void *p; } *v;
  size_t cap, n;
} ps_idmap;
typedef struct ps_names ps_names;

#define PS_RING 64

/* The layer's state, one per context. */
struct ps_obs {
  ps_trace *trace;           /* the recorder, NULL until first used */
  int tracing;               /* recording now */
  int sources;               /* remember where each buffer was allocated */
  int site_depth;            /* Lua frames per allocation site (sites.c) */
  uint32_t waits;            /* host waits that could release pool memory */
  struct ps_recent {         /* the last allocations, for the REPL's live view */
    int32_t buffer, pool, stream, reused_from;
    uint8_t rule, kind, why;
    uint16_t why_slot;
    uint64_t size;
    int32_t src_pid, src_buffer;   /* imported buffers: the exporter's pid and buffer */
  } recent[PS_RING];
  ps_why *whys;              /* ring of PS_WHYS, made on first use */
  uint64_t nwhys;
  ps_srcs *srcs;             /* ring of PS_SRCS, made on first use */
  uint64_t nsrcs;
  uint64_t nrecent;          /* allocations so far (recent is a ring) */
  struct ps_release {        /* the last releases: memory pools gave back at host waits */
    int32_t pool, cause_id;
    uint8_t cause_op;
    uint64_t size, reserved, threshold;
  } releases[PS_RING];
  uint64_t nreleases;
  struct ps_collected {      /* the last buffers the collector freed (finalizers) */
    int32_t buffer, pool;    /* pool -1: not pool memory */
    uint64_t size;
  } collected[PS_RING];
  uint64_t ncollected, collected_bytes;   /* so far, of all kinds */
  int32_t busy_destroyed;    /* the last stream destroyed with work queued, 0: none */
  ps_counts gone;            /* the counts of destroyed pools */
  uint64_t live_total;       /* live bytes of every pool */
  uint64_t scope_total_peak; /* its peak in the innermost peak scope */
  struct ps_scope {          /* poolsh.core.peak_push(): the enclosing scope's peaks */
    uint64_t total;
    size_t n;
    struct { int32_t pool; uint64_t peak; } *pools;
  } *scopes;
  size_t nscopes, capscopes;
  uint64_t retry_mark, retry_pool_mark;     /* live bytes (all, the pool's) at a retry */
  uint64_t retry_freed, retry_pool_freed;   /* what its collection freed */
  ps_sites *sites;           /* allocation sites (sites.c) */
  ps_names *names;           /* source names and statements (sources.c) */
  int where_ref;             /* ps_where's sentinel table in the registry, 0: none */
  const void *where_table;   /* that table (sources.c reads its one slot) */
  ps_seen_pool *pools;       /* the live pools and streams, newest first */
  ps_seen_stream *streams;
  ps_streammap *stream_map;  /* the streams by id (followed.c) */
  ps_ledger *ledger;         /* the blocks poolsh allocated */
};

/* One recorded event. Ids are -1 and sizes PS_UNSET when they do not
 * apply; other is the second object (copy source, event, reused-from
 * buffer, a release's cause, a VMM record's Memory); kind is the buffer
 * kind, a set's setting, a release's cause op, or a VMM record's
 * location (vmm_create, vmm_release) or access (vmm_set_access), whose
 * device is in rule; a vmm_map's memory offset is in value. */
typedef struct ps_rec {
  uint8_t op, kind, rule, gc;
  int32_t stream, pool, buffer, other;
  int32_t src, line;
  int32_t range;              /* VMM records: the Range, else -1 */
  union {
    double t;                 /* ms on the backend's clock, */
    uint64_t tick;            /* or the backend's ticks until settled (trace.c) */
  };
  double dur;                 /* ms of device work, or 0 when unknown */
  double start;               /* ms: when device work started, NAN when unknown */
  uint8_t estimated;          /* dur is the call's request, not measured */
  uint64_t addr, size, reserved, used, pending, value;
} ps_rec;

/* trace.c: the recorder (docs/trace.md). */
enum { PS_REC_COLLECTED = 1, PS_REC_NOSRC = 2 };
ps_rec *ps_trace_rec(lua_State *L, ps_ctx *c, ps_op op, int flags);
void ps_trace_span(ps_ctx *c, ps_rec *r, const ps_seen_stream *ss);
void ps_trace_pool(lua_State *L, ps_ctx *c, ps_seen_pool *p, int64_t used_delta, int grows);
void ps_trace_sync_begin(ps_ctx *c);
void ps_trace_sync_end(lua_State *L, ps_ctx *c);
void ps_trace_free(ps_trace *tr);
void ps_trace_buffer(lua_State *L, ps_ctx *c, ps_op op, const ps_bufferud *b, int32_t stream,
                     ps_seen_pool *p, int collected, int grows);

/* sources.c: the one table of source names (and the REPL's statements). */
int32_t ps_name_index(ps_ctx *c, const char *name, int fresh);
const char *ps_name_of(ps_ctx *c, int32_t i);
void ps_where(lua_State *L, ps_ctx *c, int32_t *src, int32_t *line);
void ps_where_open(lua_State *L, ps_ctx *c);
void ps_names_free(ps_names *t);

/* followed.c: objects by id, and the followed streams by id. */
void *ps_idmap_get(const ps_idmap *m, int32_t id);
int ps_idmap_put(ps_idmap *m, int32_t id, void *p);
void ps_idmap_del(ps_idmap *m, int32_t id);
void ps_followed_add(ps_ctx *c, ps_seen_stream *s);
void ps_followed_remove(ps_ctx *c, ps_seen_stream *s);
ps_seen_stream *ps_stream_by_id(ps_ctx *c, int32_t id);
void ps_followed_free(ps_streammap *m);

/* sites.c: allocation sites (Lua frames or the REPL's statement). */
int32_t ps_site_alloc(lua_State *L, ps_ctx *c, uint64_t size, int32_t src, int32_t line);
void ps_site_free(ps_ctx *c, int32_t site, uint64_t size);
void ps_push_site(lua_State *L, ps_ctx *c, int32_t site);
void ps_sites_free(ps_sites *s);

/* ledger.c: blocks, pending frees, reuse (docs/explain.md). */
typedef struct ps_span {
  ps_addr addr;
  uint64_t size;
  int32_t buffer, stream;
  int pending;               /* 1: pending; 2: done (freed, known complete) */
} ps_span;

int ps_ledger_alloc(lua_State *L, ps_ctx *c, ps_seen_pool *p, ps_seen_stream *s,
                    const ps_bufferud *b, ps_reuse_rule said);
void ps_ledger_track(lua_State *L, ps_ctx *c, const ps_bufferud *b);
void ps_ledger_untrack(ps_ctx *c, const ps_bufferud *b);
void ps_ledger_free(ps_ctx *c, ps_seen_pool *p, ps_seen_stream *s, const ps_bufferud *b);
void ps_ledger_learn(lua_State *L, ps_ctx *c);
void ps_ledger_released(lua_State *L, ps_ctx *c);
void ps_ledger_pool_followed(ps_ctx *c, ps_seen_pool *p, int followed);
void ps_ledger_stream_followed(ps_ctx *c, ps_seen_stream *s, int followed);
ps_span *ps_ledger_spans(ps_ctx *c, const ps_seen_pool *p, size_t *n, int done);
void ps_ledger_free_space(ps_ctx *c, ps_seen_pool *p, uint64_t reserved, uint64_t *nfree,
                          uint64_t *largest);
lua_Integer ps_ledger_push_live(lua_State *L, ps_ctx *c, lua_Integer max);
lua_Integer ps_ledger_push_pending(lua_State *L, ps_ctx *c, lua_Integer max);
void ps_ledger_free_all(ps_ledger *l);
void ps_ledger_each_live(ps_ctx *c, void (*each)(ps_ctx *c, const ps_bufferud *b));
void ps_ledger_lost(ps_ctx *c, const ps_bufferud *b);
void ps_ledger_pending_by_stream(ps_ctx *c, const ps_seen_pool *p,
                                 void (*each)(void *ud, int32_t stream, uint64_t bytes, int done),
                                 void *ud);
void ps_push_why(lua_State *L, ps_ctx *c, int code, int slot, int32_t owner, int32_t pool,
                 int32_t stream);
void ps_push_sources(lua_State *L, ps_ctx *c, int32_t owner, int slot, int32_t first, int rule);

#endif
