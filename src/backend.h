/*
 * backend.h: the one boundary between poolsh's Lua bindings and a device.
 *
 * A backend is a table of function pointers (ps_backend) that the `cuda`
 * backend (cudart) and the `sim` backend (a deterministic model of one GPU
 * on a virtual clock) both fill. Nothing above this header includes
 * cuda_runtime.h.
 *
 * Rules every backend follows:
 *  - Every operation returns a status: PS_OK (0) or a CUDA error code
 *    (the numeric cudaError_t values, listed below for the ones poolsh
 *    raises; the sim returns the same codes the GPU would).
 *    error_name()/error_string() turn a code into "cudaErrorMemoryAllocation"
 *    and "out of memory". PS_INTERRUPTED is poolsh's own: a wait gave up
 *    because config.interrupted() said so.
 *  - All state lives in the `ctx` returned by open(): no globals, so several
 *    lua_States may each hold a backend.
 *  - Handles (ps_stream, ps_event, ps_pool) are opaque. A NULL ps_stream is
 *    the legacy default stream.
 *  - Addresses are ps_addr: device or host addresses as the backend sees
 *    them. They are never accepted back from Lua as numbers; the bindings
 *    keep them inside Buffer userdata.
 *  - Waiting calls (syncs, verify, read, write, sleep) poll
 *    config.interrupted between short waits and return PS_INTERRUPTED when
 *    it returns non-zero, leaving the device's work queued (no state lost).
 */
#ifndef POOLSH_BACKEND_H
#define POOLSH_BACKEND_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t ps_addr;
typedef struct ps_stream ps_stream;
typedef struct ps_event ps_event;
typedef struct ps_pool ps_pool;
typedef struct ps_vmm_handle ps_vmm_handle;

/* Status codes: CUDA's own numbers, so both backends agree. */
enum {
  PS_OK = 0,
  PS_ERR_INVALID_VALUE = 1,           /* cudaErrorInvalidValue */
  PS_ERR_MEMORY_ALLOCATION = 2,       /* cudaErrorMemoryAllocation */
  PS_ERR_INSUFFICIENT_DRIVER = 35,    /* cudaErrorInsufficientDriver */
  PS_ERR_NO_DEVICE = 100,             /* cudaErrorNoDevice */
  PS_ERR_INVALID_DEVICE = 101,        /* cudaErrorInvalidDevice */
  PS_ERR_PEER_UNSUPPORTED = 217,      /* cudaErrorPeerAccessUnsupported */
  PS_ERR_INVALID_RESOURCE = 400,      /* cudaErrorInvalidResourceHandle */
  PS_ERR_NOT_READY = 600,             /* cudaErrorNotReady */
  PS_ERR_ILLEGAL_ADDRESS = 700,       /* cudaErrorIllegalAddress */
  PS_ERR_PEER_ALREADY_ENABLED = 704,  /* cudaErrorPeerAccessAlreadyEnabled */
  PS_ERR_ALREADY_REGISTERED = 712,    /* cudaErrorHostMemoryAlreadyRegistered */
  PS_ERR_NOT_REGISTERED = 713,        /* cudaErrorHostMemoryNotRegistered */
  PS_ERR_NOT_SUPPORTED = 801,         /* cudaErrorNotSupported */
  PS_INTERRUPTED = -1,                /* poolsh: a wait was interrupted */
  PS_ERR_CLOCK_END = -2               /* the sim: its virtual clock would pass its
                                         end; named as cudaErrorInvalidValue */
};

/* What a Buffer holds; the backend needs it for host/device paths. */
typedef enum {
  PS_KIND_POOL = 0,      /* cudaMallocFromPoolAsync (device or host pool) */
  PS_KIND_MALLOC = 1,    /* cudaMalloc */
  PS_KIND_PINNED = 2,    /* cudaHostAlloc */
  PS_KIND_PAGEABLE = 3,  /* page-aligned host malloc (registrable) */
  PS_KIND_VMM = 4        /* mapped bytes of a VMM range (cuMemMap); read and
                            written through a stream like device memory */
} ps_kind;

/* event_create's flags: timing on; an interprocess event
 * (cudaEventInterprocess, which CUDA allows only without timing). */
enum { PS_EVENT_TIMING = 1, PS_EVENT_IPC = 2 };

/* A device's access to a pool's memory: cudaMemAccessFlags' values. */
typedef enum { PS_ACCESS_NONE = 0, PS_ACCESS_READ = 1, PS_ACCESS_RW = 3 } ps_access;

/* IPC: the bytes of cudaMemPoolPtrExportData and of cudaIpcEventHandle_t. */
#define PS_IPC_BYTES 64

/* cudaHostAlloc flags, as poolsh.pinned's options. */
enum { PS_PINNED_PORTABLE = 1, PS_PINNED_MAPPED = 2, PS_PINNED_WRITE_COMBINED = 4 };

typedef enum { PS_LOCATION_DEVICE = 0, PS_LOCATION_HOST = 1 } ps_location;

/* Pool attributes (cudaMemPoolAttr*). Usage counters are read-only except
 * that writing 0 to a *_HIGH counter resets it to the current value. */
typedef enum {
  PS_ATTR_RELEASE_THRESHOLD = 0,
  PS_ATTR_FOLLOW_EVENT_DEPS,     /* cudaMemPoolReuseFollowEventDependencies */
  PS_ATTR_OPPORTUNISTIC,         /* cudaMemPoolReuseAllowOpportunistic */
  PS_ATTR_INTERNAL_DEPS,         /* cudaMemPoolReuseAllowInternalDependencies */
  PS_ATTR_RESERVED_CURRENT,
  PS_ATTR_RESERVED_HIGH,
  PS_ATTR_USED_CURRENT,
  PS_ATTR_USED_HIGH
} ps_pool_attr;

typedef struct ps_pool_props {
  ps_location location;
  int device;             /* device index (device pools; host pools: NUMA 0) */
  uint64_t max_size;      /* 0: no limit beyond the device */
  int ipc;                /* exportable to other processes (POSIX file descriptors) */
} ps_pool_props;

typedef struct ps_device_info {
  char name[256];
  uint64_t total, free;   /* bytes */
  int cc_major, cc_minor;
  int pools_supported;    /* cudaDevAttrMemoryPoolsSupported */
  int driver_api, runtime_api;   /* cudaDriverGetVersion, cudaRuntimeGetVersion */
  char driver[32];        /* the kernel driver's version, "" when unknown */
} ps_device_info;

/* Why an allocation got the memory it got. The sim always knows;
 * the cuda backend fills PS_RULE_UNKNOWN and lets the layer above infer. */
typedef enum {
  PS_RULE_NONE = 0,         /* fresh memory: no earlier block reused */
  PS_RULE_STREAM_ORDER,     /* freed earlier on the same stream */
  PS_RULE_EVENT_DEP,        /* the stream waited on an event after the free */
  PS_RULE_HOST_SYNC,        /* the host synchronised past the free */
  PS_RULE_OPPORTUNISTIC,    /* the free had already completed on the GPU */
  PS_RULE_INTERNAL_DEP,     /* the pool made the stream wait for the free */
  PS_RULE_UNKNOWN
} ps_reuse_rule;

typedef struct ps_alloc_note {
  ps_reuse_rule rule;
  ps_addr reused_block;     /* start of the freed block reused (rule != NONE) */
} ps_alloc_note;

/* One extent of a pool's address space in the backend's own model
 * (pool_truth): a live block, or free space never allocated (fresh), or
 * a freed block whose free is pending on the device, done there but not
 * known to the host, or retired (a host synchronisation covered it). */
typedef enum {
  PS_TRUTH_LIVE = 0, PS_TRUTH_FRESH, PS_TRUTH_PENDING, PS_TRUTH_DONE, PS_TRUTH_RETIRED
} ps_truth_kind;

typedef struct ps_truth {
  ps_addr addr;
  uint64_t size;            /* the extent is [addr, addr + size) */
  uint64_t req;             /* live: the bytes asked for */
  int kind;                 /* ps_truth_kind */
  int stream;               /* freed: the stream of its free, -1 when merged from several */
  uint32_t seq;             /* freed: the pool's count of frees at its free */
} ps_truth;

typedef struct ps_config {
  int device;                        /* --device=N */
  uint64_t sim_memory;               /* sim: device size in bytes, 0 = profile */
  int (*interrupted)(void *ud);      /* non-zero: give up waiting */
  void *interrupted_ud;
  int sim_devices;                   /* sim: devices modelled, 0 = 1 (--sim-devices) */
} ps_config;

typedef struct ps_backend {
  const char *name;  /* "cuda" or "sim" */

  /* Life. probe() says whether this backend can run here (PS_OK) or why not
   * (a code: PS_ERR_NO_DEVICE, PS_ERR_INSUFFICIENT_DRIVER, ...), without
   * opening anything. open() creates the per-state context; close() frees
   * everything the context still owns and never synchronises. */
  int (*probe)(void);
  int (*open)(const ps_config *cfg, void **ctx);
  void (*close)(void *ctx);
  const char *(*error_name)(int status);
  const char *(*error_string)(int status);

  /* Devices. */
  int (*device_count)(void *ctx, int *n);
  int (*device_info)(void *ctx, int dev, ps_device_info *out);
  int (*device_sync)(void *ctx);                  /* cudaDeviceSynchronize */
  /* Peers: cudaDeviceCanAccessPeer; cudaDeviceEnablePeerAccess from dev to
   * peer's memory (cudaMalloc'd memory; pools have their own access, below);
   * whether this context enabled it. */
  int (*device_can_access_peer)(void *ctx, int dev, int peer, int *can);
  int (*device_enable_peer)(void *ctx, int dev, int peer);
  int (*device_peer_enabled)(void *ctx, int dev, int peer, int *on);

  /* Streams. NULL is the legacy default stream of the context's device
   * (never destroyed); other streams belong to the device they were made on. */
  int (*stream_create)(void *ctx, int dev, int priority, int blocking, ps_stream **out);
  int (*stream_destroy)(void *ctx, ps_stream *s);
  int (*stream_priority_range)(void *ctx, int *least, int *greatest);
  int (*stream_sync)(void *ctx, ps_stream *s);
  int (*stream_query)(void *ctx, ps_stream *s, int *idle);
  /* Like stream_query, for observers: costs no time and changes nothing
   * (on the sim, no clock moves and no work lands). May be NULL. */
  int (*stream_peek)(void *ctx, ps_stream *s, int *idle);
  int (*stream_wait)(void *ctx, ps_stream *s, ps_event *e);
  /* For observers, changing nothing like stream_peek: when the last op
   * queued on s was queued by the host, starts and ends on the device, in
   * ms on now()'s clock (PS_OK), or PS_ERR_NOT_READY when not known. May
   * be NULL (cuda: never known). */
  int (*stream_last_span)(void *ctx, ps_stream *s, double *queued_ms, double *start_ms,
                          double *end_ms);

  /* Events, on the context's device. flags: PS_EVENT_*. */
  int (*event_create)(void *ctx, unsigned flags, ps_event **out);
  int (*event_destroy)(void *ctx, ps_event *e);
  int (*event_record)(void *ctx, ps_event *e, ps_stream *s);
  int (*event_sync)(void *ctx, ps_event *e);
  int (*event_query)(void *ctx, ps_event *e, int *done);
  int (*event_elapsed)(void *ctx, ps_event *start, ps_event *end, double *ms);
  /* IPC events (PS_EVENT_IPC): cudaIpcGetEventHandle, cudaIpcOpenEventHandle.
   * An imported event can be waited on, queried and synced, and recorded
   * (CUDA allows it; the sim shares the record back). */
  int (*event_export)(void *ctx, ps_event *e, uint8_t out[PS_IPC_BYTES]);
  int (*event_import)(void *ctx, const uint8_t data[PS_IPC_BYTES], ps_event **out);

  /* Stream-ordered pools. pool_destroy follows cudaMemPoolDestroy: blocks
   * still allocated stay valid and are freed as usual later. */
  int (*pool_create)(void *ctx, const ps_pool_props *props, ps_pool **out);
  int (*pool_default)(void *ctx, int dev, ps_pool **out);
  int (*pool_destroy)(void *ctx, ps_pool *p);
  int (*pool_set)(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t v);
  int (*pool_get)(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t *v);
  int (*pool_trim)(void *ctx, ps_pool *p, uint64_t keep);
  /* For observers, changing nothing: where p last mapped memory, the
   * address of its first new chunk and the bytes mapped (PS_OK), or
   * PS_ERR_NOT_READY when not known. May be NULL (cuda: never known). */
  int (*pool_last_map)(void *ctx, ps_pool *p, ps_addr *addr, uint64_t *size);
  /* For tests (the ledger's oracle), changing nothing: pool p's address
   * space as the backend's own model holds it, each extent in address
   * order passed to each(ud, t), kinds as of the host's time now. May be
   * NULL (cuda: the driver does not say). */
  int (*pool_truth)(void *ctx, ps_pool *p, void (*each)(void *ud, const ps_truth *t), void *ud);
  /* note may be NULL. */
  int (*pool_alloc)(void *ctx, ps_pool *p, uint64_t size, ps_stream *s,
                    ps_addr *out, ps_alloc_note *note);
  int (*pool_free)(void *ctx, ps_addr a, ps_stream *s);  /* cudaFreeAsync */
  /* Access of device dev to p's memory (cudaMemPoolGetAccess/SetAccess). */
  int (*pool_get_access)(void *ctx, ps_pool *p, int dev, ps_access *out);
  int (*pool_set_access)(void *ctx, ps_pool *p, int dev, ps_access a);
  /* IPC pools (props.ipc): pool_export gives a new file descriptor the
   * caller closes (cudaMemPoolExportToShareableHandle); pool_import opens
   * one (the fd stays the caller's). ptr_export/ptr_import are
   * cudaMemPoolExportPointer/ImportPointer; an imported block is freed with
   * pool_free like any other. */
  int (*pool_export)(void *ctx, ps_pool *p, int *fd);
  int (*pool_import)(void *ctx, int fd, ps_pool **out);
  int (*ptr_export)(void *ctx, ps_addr a, uint8_t out[PS_IPC_BYTES]);
  int (*ptr_import)(void *ctx, ps_pool *p, const uint8_t data[PS_IPC_BYTES], ps_addr *out);

  /* Other memory, all synchronous frees. */
  int (*malloc_device)(void *ctx, uint64_t size, ps_addr *out);
  int (*free_device)(void *ctx, ps_addr a);
  int (*alloc_pinned)(void *ctx, uint64_t size, unsigned flags, ps_addr *out);
  int (*free_pinned)(void *ctx, ps_addr a);
  int (*alloc_pageable)(void *ctx, uint64_t size, ps_addr *out);
  int (*free_pageable)(void *ctx, ps_addr a);
  int (*host_register)(void *ctx, ps_addr a, uint64_t size);
  int (*host_unregister)(void *ctx, ps_addr a);

  /* Virtual memory management (the driver's cuMem* calls). A range of
   * addresses is reserved (vmm_reserve, cuMemAddressReserve; align 0: the
   * granularity) and freed whole (vmm_free, cuMemAddressFree: the size
   * given at reserve; PS_ERR_INVALID_VALUE while any mapping remains in
   * it). Physical memory is a handle (vmm_create, cuMemCreate) of loc's
   * memory on device dev (host: NUMA node dev), counted against that
   * memory; size a multiple of the granularity (vmm_granularity,
   * cuMemGetAllocationGranularity: minimum, or recommended when non-zero).
   * vmm_map (cuMemMap) maps size bytes of h from offset at addr inside
   * one reservation: addr or size unaligned, outside a reservation, or
   * over an existing mapping: PS_ERR_INVALID_VALUE; offset unaligned or
   * offset + size past h: PS_ERR_NOT_SUPPORTED. A handle may be mapped in
   * several places, and they show the same bytes. A new mapping has no
   * access until vmm_set_access (cuMemSetAccess) gives device dev access
   * a over [addr, addr + size), which must cover whole mappings only
   * (else PS_ERR_INVALID_VALUE, also for unmapped bytes). vmm_unmap
   * (cuMemUnmap) removes whole mappings in [addr, addr + size) (part of
   * one: PS_ERR_INVALID_VALUE; nothing mapped there: PS_OK). vmm_release
   * (cuMemRelease) is allowed while mapped: the memory goes when its last
   * mapping is unmapped; h is not to be passed again after it returns
   * PS_OK. close() unmaps, releases and frees what is left. Any of these
   * may be NULL (PS_ERR_NOT_SUPPORTED above). */
  int (*vmm_granularity)(void *ctx, ps_location loc, int dev, int recommended,
                         uint64_t *bytes);
  int (*vmm_reserve)(void *ctx, uint64_t size, uint64_t align, ps_addr *addr);
  int (*vmm_free)(void *ctx, ps_addr addr, uint64_t size);
  int (*vmm_create)(void *ctx, ps_location loc, int dev, uint64_t size, ps_vmm_handle **out);
  int (*vmm_release)(void *ctx, ps_vmm_handle *h);
  int (*vmm_map)(void *ctx, ps_addr addr, uint64_t size, uint64_t offset, ps_vmm_handle *h);
  int (*vmm_unmap)(void *ctx, ps_addr addr, uint64_t size);
  int (*vmm_set_access)(void *ctx, ps_addr addr, uint64_t size, int dev, ps_access a);

  /* Copies and kernels, ordered on stream s. copy is cudaMemcpyAsync with
   * cudaMemcpyDefault: host-synchronous where CUDA makes it so (pageable). */
  int (*copy)(void *ctx, ps_addr dst, ps_addr src, uint64_t n, ps_stream *s);
  int (*fill)(void *ctx, ps_addr a, uint64_t n, int byte, ps_stream *s);
  int (*touch)(void *ctx, ps_addr a, uint64_t n, ps_stream *s);
  /* Waits for s; *first_bad = -1 when every byte equals `byte`. */
  int (*verify)(void *ctx, ps_addr a, uint64_t n, int byte, ps_stream *s,
                int64_t *first_bad);
  int (*spin)(void *ctx, ps_stream *s, double ms);

  /* Synchronous host access to a buffer of the given kind. Device memory
   * (and pool memory of any location) goes through stream s and waits for
   * it; pinned and pageable memory is read/written directly. */
  int (*read)(void *ctx, ps_kind k, ps_addr src, void *dst, uint64_t n, ps_stream *s);
  int (*write)(void *ctx, ps_kind k, ps_addr dst, const void *src, uint64_t n, ps_stream *s);

  /* Clock: the host's monotonic clock on cuda, the virtual clock on sim. */
  int (*sleep)(void *ctx, double ms);
  double (*now)(void *ctx);   /* ms since open() */
  /* A counter cheaper to read than now() that runs at a constant rate
   * against it, or 0 when there is none; NULL on a virtual clock. */
  uint64_t (*ticks)(void *ctx);

  /* Backend-specific knobs (the sim's device profile). Unknown keys:
   * PS_ERR_INVALID_VALUE; cuda: PS_ERR_NOT_SUPPORTED. option_names fills up
   * to max names and returns how many exist. */
  int (*option_get)(void *ctx, const char *key, double *v);
  int (*option_set)(void *ctx, const char *key, double v);
  int (*option_names)(void *ctx, const char **names, int max);
} ps_backend;

extern const ps_backend ps_backend_sim;
#ifdef POOLSH_HAVE_CUDA
extern const ps_backend ps_backend_cuda;
#endif

#endif
