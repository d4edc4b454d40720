/*
 * backend_cuda.c: the cuda backend, a thin layer over the CUDA runtime.
 *
 * Every operation maps to one or two cudart calls and returns their
 * cudaError_t as an int. Waits poll cudaStreamQuery / cudaEventQuery so
 * that config.interrupted can stop them; once the work is done, the real
 * synchronising call runs once (it returns at once) because that is where
 * the driver releases pool memory above the release threshold.
 *
 * The context keeps every stream, event and pool handle it created in
 * singly linked lists, so that close() can destroy them and destroy calls
 * can refuse handles they do not know.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>   /* the driver's VMM types only: its calls are reached through cudart */
#include <cuda_runtime.h>
#include <dlfcn.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "backend.h"
#include "clock.h"
#include "kernels.h"

enum {
  SPIN_POLLS = 64,          /* polls before napping between them */
  NAP_NS = 30000,           /* nap between polls: 30 us */
  SLEEP_SLICE_NS = 5000000  /* sleep() checks for interrupts every 5 ms */
};

/* Every handle starts with its list node, so one unlink serves all. */
typedef struct node {
  struct node *next;
} node;

struct ps_stream {
  node link;
  cudaStream_t h;
  int dev;      /* the device it was created on */
};

struct ps_event {
  node link;
  cudaEvent_t h;
};

struct ps_pool {
  node link;
  cudaMemPool_t h;
  int owned;    /* 0: a device's default pool, never destroyed */
  int device;   /* for default pools: which device's */
  int doomed;   /* destroyed by the user while blocks were still allocated */
  int imported; /* cudaMemPoolImportFromShareableHandle'd: used reads 0 */
  int imports;  /* imported: pointers imported and not yet freed */
};

/* The driver's virtual memory calls (cuMem*), reached through the runtime
 * with cudaGetDriverEntryPointByVersion so that poolsh links cudart only.
 * The ABI asked for is CUDA 12.0's: every call here is unchanged since its
 * 10.2 variant, and any 12.x or 13.x driver gives it. */
#define CU_VMM_ABI 12000
typedef struct cu_vmm_api {
  CUresult (*granularity)(size_t *g, const CUmemAllocationProp *prop,
                          CUmemAllocationGranularity_flags option);
  CUresult (*reserve)(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
                      unsigned long long flags);
  CUresult (*address_free)(CUdeviceptr ptr, size_t size);
  CUresult (*create)(CUmemGenericAllocationHandle *h, size_t size,
                     const CUmemAllocationProp *prop, unsigned long long flags);
  CUresult (*release)(CUmemGenericAllocationHandle h);
  CUresult (*map)(CUdeviceptr ptr, size_t size, size_t offset,
                  CUmemGenericAllocationHandle h, unsigned long long flags);
  CUresult (*unmap)(CUdeviceptr ptr, size_t size);
  CUresult (*set_access)(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                         size_t count);
} cu_vmm_api;

/* Physical memory from cuMemCreate, until cuMemRelease. */
struct ps_vmm_handle {
  node link;
  CUmemGenericAllocationHandle h;
  uint64_t size;
};

/* A reservation, or a mapping inside one with the access last set on it
 * for any device (so that a wait is needed only where kernels could
 * touch it). */
typedef struct vmm_extent {
  node link;
  ps_addr addr;
  uint64_t size;
  int access;   /* mappings: the context's device's ps_access, NONE at first */
  int peer;     /* mappings: another device was given some access */
} vmm_extent;

/* Devices poolsh follows peers and verify's words on (more: refused). */
#define CU_MAX_DEVICES 16
/* A pointer imported from another process's pool (cudaMemPoolImportPointer),
 * so that its pool is destroyed only once every import is freed. */
typedef struct import_node {
  node link;
  ps_addr addr;
  ps_pool *pool;
} import_node;

typedef struct cu_ctx {
  int device;
  int (*interrupted)(void *ud);
  void *interrupted_ud;
  uint64_t origin;              /* ps_clock_ns() at open: now()'s zero */
  int tsc;                      /* the time-stamp counter is usable (ticks) */
  node *streams, *events, *pools, *imports;
  int doomed;   /* how many pools wait for their last block to be freed */
  /* verify's result word, one per device whose streams verified, from a
   * private pool so user pools' counters do not see it; done orders its
   * reuse across streams. */
  struct scratch {
    cudaMemPool_t pool;
    cudaEvent_t done;
    unsigned long long *word;
  } scratch[CU_MAX_DEVICES];
  /* [dev][peer]: cudaDeviceEnablePeerAccess succeeded in this context */
  unsigned char peer_on[CU_MAX_DEVICES][CU_MAX_DEVICES];
  char driver[32];              /* the driver's version, read once */
  int driver_read;
  /* VMM: the entry points (resolved at first use; vmm_status says
   * whether they all were), and what close() must undo. */
  cu_vmm_api vmm;
  int vmm_status;               /* -1: not resolved yet; else PS_OK or why not */
  int host_numa;                /* host memory: 1 HOST_NUMA works, 0 HOST, -1 unknown */
  node *vmm_ranges, *vmm_maps, *vmm_handles;
} cu_ctx;

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

/* PS_OK for cudaSuccess, else the code; clears CUDA's last error so that
 * a non-sticky failure is not reported again by a later call. */
static int status(cudaError_t e) {
  if (e == cudaSuccess) return PS_OK;
  (void)cudaGetLastError();
  return (int)e;
}

static cudaStream_t stream_of(const ps_stream *s) {
  return s ? s->h : (cudaStream_t)0;
}

static void *ptr_of(ps_addr a) { return (void *)(uintptr_t)a; }

/* Work on a stream of another device is launched with that device
 * current: enter() makes it so and returns the device to restore (-1:
 * nothing changed, the hot path on the context's own device costs no
 * call); leave() restores it. */
static int enter(const cu_ctx *c, const ps_stream *s) {
  if (!s || s->dev == c->device) return -1;
  if (cudaSetDevice(s->dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return c->device;
}

static void leave(int old) {
  if (old >= 0) cudaSetDevice(old);
}

static int dev_of(const cu_ctx *c, const ps_stream *s) {
  return s ? s->dev : c->device;
}

static ps_addr addr_of(const void *p) { return (ps_addr)(uintptr_t)p; }

static void push(node **head, node *l) {
  l->next = *head;
  *head = l;
}

/* Removes l from the list; 0 when it was not there. */
static int unlink_from(node **head, const node *l) {
  for (node **p = head; *p; p = &(*p)->next)
    if (*p == l) {
      *p = l->next;
      return 1;
    }
  return 0;
}

static int contains(const node *head, const node *l) {
  for (; head; head = head->next)
    if (head == l) return 1;
  return 0;
}

static int interrupted(const cu_ctx *c) {
  return c->interrupted && c->interrupted(c->interrupted_ud);
}

static void nap_ns(long ns) {
  struct timespec t = {ns / 1000000000L, ns % 1000000000L};
  nanosleep(&t, NULL);
}

/* Whether the CPU's time-stamp counter runs at one rate on every core and
 * in every power state: CPUID says it is invariant, or the kernel chose it
 * as its clock source (virtual machines often hide the CPUID bit). */
static int tsc_usable(void) {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8))) return 1;
  char name[16] = "";
  FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (f) {
    if (!fgets(name, sizeof name, f)) name[0] = '\0';
    fclose(f);
  }
  return strcmp(name, "tsc\n") == 0;
#else
  return 0;
#endif
}

typedef cudaError_t (*query_fn)(void *h);

static cudaError_t query_stream(void *h) {
  return cudaStreamQuery((cudaStream_t)h);
}

static cudaError_t query_event(void *h) {
  return cudaEventQuery((cudaEvent_t)h);
}

/* Returns PS_OK once query(h) says done, PS_INTERRUPTED as soon as the
 * user asks (the work stays queued), or the error the query met. Spins a
 * few polls, then naps NAP_NS between them. */
static int poll_done(const cu_ctx *c, query_fn query, void *h) {
  for (int round = 0;; round++) {
    cudaError_t e = query(h);
    if (e == cudaSuccess) return PS_OK;
    if (e != cudaErrorNotReady) return status(e);
    if (interrupted(c)) return PS_INTERRUPTED;
    if (round >= SPIN_POLLS) nap_ns(NAP_NS);
  }
}

/* Waits for everything queued on h, interruptibly; then synchronises for
 * real so that the driver applies pool release thresholds. */
static int wait_stream(const cu_ctx *c, cudaStream_t h) {
  int st = poll_done(c, query_stream, (void *)h);
  if (st != PS_OK) return st;
  return status(cudaStreamSynchronize(h));
}

/* ------------------------------------------------------------------ */
/* Life                                                                 */

/* PS_OK when at least one device answers; otherwise why not (35 without
 * a driver, 100 without a device). Opens nothing beyond the runtime. */
static int cu_probe(void) {
  int n = 0;
  int st = status(cudaGetDeviceCount(&n));
  if (st != PS_OK) return st;
  return n >= 1 ? PS_OK : PS_ERR_NO_DEVICE;
}

/* Makes cfg->device current and creates its primary context; the clock
 * origin for now() is taken here. */
static int cu_open(const ps_config *cfg, void **out) {
  if (!cfg || !out) return PS_ERR_INVALID_VALUE;
  int st = status(cudaSetDevice(cfg->device));
  if (st == PS_OK) st = status(cudaFree(0));
  if (st != PS_OK) return st;
  cu_ctx *c = calloc(1, sizeof *c);
  if (!c) return PS_ERR_MEMORY_ALLOCATION;
  c->device = cfg->device;
  c->interrupted = cfg->interrupted;
  c->interrupted_ud = cfg->interrupted_ud;
  c->origin = ps_clock_ns();
  c->tsc = tsc_usable();
  c->vmm_status = -1;
  c->host_numa = -1;
  *out = c;
  return PS_OK;
}

/* Frees verify's word after the last verify that used it, without
 * waiting: the free is ordered on the legacy stream. */
static void scratch_release(cu_ctx *c) {
  for (int d = 0; d < CU_MAX_DEVICES; d++) {
    struct scratch *w = &c->scratch[d];
    if (!w->pool && !w->done) continue;
    if (d != c->device) cudaSetDevice(d);
    if (w->word) {
      if (w->done) cudaStreamWaitEvent(0, w->done, 0);
      cudaFreeAsync(w->word, 0);
    }
    if (w->done) cudaEventDestroy(w->done);
    if (w->pool) cudaMemPoolDestroy(w->pool);
    if (d != c->device) cudaSetDevice(c->device);
  }
}

static void vmm_close(cu_ctx *c);

/* Destroys every handle the context still owns. CUDA finishes queued
 * work and frees the resources afterwards; nothing here waits for it,
 * except for work that may still touch VMM mappings (vmm_close). */
static void cu_close(void *ctx) {
  cu_ctx *c = ctx;
  if (!c) return;
  vmm_close(c);
  scratch_release(c);
  for (node *l = c->streams, *next; l; l = next) {
    next = l->next;
    cudaStreamDestroy(((ps_stream *)l)->h);
    free(l);
  }
  for (node *l = c->events, *next; l; l = next) {
    next = l->next;
    cudaEventDestroy(((ps_event *)l)->h);
    free(l);
  }
  for (node *l = c->imports, *next; l; l = next) {
    next = l->next;
    free(l);
  }
  for (node *l = c->pools, *next; l; l = next) {
    next = l->next;
    if (((ps_pool *)l)->owned) cudaMemPoolDestroy(((ps_pool *)l)->h);
    free(l);
  }
  (void)cudaGetLastError();
  free(c);
}

/* cudaGetErrorName, plus poolsh's own PS_INTERRUPTED. */
static const char *cu_error_name(int st) {
  if (st == PS_INTERRUPTED) return "interrupted";
  return cudaGetErrorName((cudaError_t)st);
}

static const char *cu_error_string(int st) {
  if (st == PS_INTERRUPTED) return "interrupted by the user";
  return cudaGetErrorString((cudaError_t)st);
}

/* ------------------------------------------------------------------ */
/* Devices                                                              */

static int cu_device_count(void *ctx, int *n) {
  return status(cudaGetDeviceCount(n));
}

/* Free and total memory of dev, made current for the call only. */
static int mem_info(int dev, uint64_t *free_b, uint64_t *total) {
  int old = 0;
  int st = status(cudaGetDevice(&old));
  if (st == PS_OK) st = status(cudaSetDevice(dev));
  if (st != PS_OK) return st;
  size_t f = 0, t = 0;
  st = status(cudaMemGetInfo(&f, &t));
  cudaSetDevice(old);
  *free_b = f;
  *total = t;
  return st;
}

/* The driver's version ("580.159.04"): from /proc/driver/nvidia/version
 * (the first number with a dot after "Kernel Module", open or not), else
 * from NVML when libnvidia-ml is there (containers often hide
 * /proc/driver); "" when neither says. */
static void kernel_driver_version(char *out, size_t n) {
  char line[512], v[96] = "";
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  const char *k = f && fgets(line, sizeof line, f) ? strstr(line, "Kernel Module") : NULL;
  for (; k && *k && !v[0]; k++)
    if (k[0] == ' ' && sscanf(k, " %31[0-9.]", v) == 1 && !strchr(v, '.')) v[0] = '\0';
  if (f) fclose(f);
  void *nvml = v[0] ? NULL : dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (nvml) {
    int (*init)(void) = (int (*)(void))dlsym(nvml, "nvmlInit_v2");
    int (*get)(char *, unsigned) = (int (*)(char *, unsigned))dlsym(nvml, "nvmlSystemGetDriverVersion");
    int (*shutdown)(void) = (int (*)(void))dlsym(nvml, "nvmlShutdown");
    if (init && get && shutdown && init() == 0) {
      if (get(v, sizeof v) != 0) v[0] = '\0';
      shutdown();
    }
    dlclose(nvml);
  }
  snprintf(out, n, "%s", v);
}

static int cu_device_info(void *ctx, int dev, ps_device_info *out) {
  struct cudaDeviceProp p;
  memset(out, 0, sizeof *out);
  int st = status(cudaGetDeviceProperties(&p, dev));
  if (st != PS_OK) return st;
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->cc_major = p.major;
  out->cc_minor = p.minor;
  st = status(cudaDeviceGetAttribute(&out->pools_supported,
                                     cudaDevAttrMemoryPoolsSupported, dev));
  if (st == PS_OK) st = status(cudaDriverGetVersion(&out->driver_api));
  if (st == PS_OK) st = status(cudaRuntimeGetVersion(&out->runtime_api));
  if (st != PS_OK) return st;
  cu_ctx *c = ctx;
  if (!c->driver_read) kernel_driver_version(c->driver, sizeof c->driver);
  c->driver_read = 1;
  snprintf(out->driver, sizeof out->driver, "%s", c->driver);
  return mem_info(dev, &out->free, &out->total);
}

/* Fills out completely or returns the first error met. */

/* Waits for every stream the context knows, then the legacy stream, each
 * interruptibly; then cudaDeviceSynchronize, which returns at once. */
static int cu_device_sync(void *ctx) {
  cu_ctx *c = ctx;
  for (node *l = c->streams; l; l = l->next) {
    int st = poll_done(c, query_stream, (void *)((ps_stream *)l)->h);
    if (st != PS_OK) return st;
  }
  int st = poll_done(c, query_stream, NULL);
  if (st != PS_OK) return st;
  return status(cudaDeviceSynchronize());
}

/* ------------------------------------------------------------------ */
/* Streams                                                              */

/* blocking == 0 gives a stream that does not synchronise with the legacy
 * default stream (cudaStreamNonBlocking). */
static int cu_stream_create(void *ctx, int dev, int priority, int blocking,
                            ps_stream **out) {
  cu_ctx *c = ctx;
  ps_stream *s = calloc(1, sizeof *s);
  if (!s) return PS_ERR_MEMORY_ALLOCATION;
  s->dev = dev;
  unsigned flags = blocking ? cudaStreamDefault : cudaStreamNonBlocking;
  int st = PS_OK;
  if (dev != c->device) st = status(cudaSetDevice(dev));
  if (st == PS_OK) st = status(cudaStreamCreateWithPriority(&s->h, flags, priority));
  if (dev != c->device) cudaSetDevice(c->device);
  if (st != PS_OK) {
    free(s);
    return st;
  }
  push(&c->streams, &s->link);
  *out = s;
  return PS_OK;
}

/* Refuses the legacy stream and handles this context did not create. */
static int cu_stream_destroy(void *ctx, ps_stream *s) {
  cu_ctx *c = ctx;
  if (!s || !unlink_from(&c->streams, &s->link))
    return PS_ERR_INVALID_RESOURCE;
  int st = status(cudaStreamDestroy(s->h));
  free(s);
  return st;
}

static int cu_stream_priority_range(void *ctx, int *least, int *greatest) {
  return status(cudaDeviceGetStreamPriorityRange(least, greatest));
}

static int cu_stream_sync(void *ctx, ps_stream *s) {
  return wait_stream(ctx, stream_of(s));
}

/* *idle = 1 when everything queued on s has completed. */
static int cu_stream_query(void *ctx, ps_stream *s, int *idle) {
  cudaError_t e = cudaStreamQuery(stream_of(s));
  *idle = e == cudaSuccess;
  return e == cudaErrorNotReady ? PS_OK : status(e);
}

static int cu_stream_wait(void *ctx, ps_stream *s, ps_event *e) {
  if (!e) return PS_ERR_INVALID_RESOURCE;
  return status(cudaStreamWaitEvent(stream_of(s), e->h, 0));
}

/* ------------------------------------------------------------------ */
/* Events                                                               */

/* An IPC event is cudaEventInterprocess | cudaEventDisableTiming; with
 * timing too, CUDA's answer (cudaErrorInvalidValue) comes back. */
static int cu_event_create(void *ctx, unsigned flags, ps_event **out) {
  cu_ctx *c = ctx;
  ps_event *e = calloc(1, sizeof *e);
  if (!e) return PS_ERR_MEMORY_ALLOCATION;
  unsigned cflags = (flags & PS_EVENT_TIMING) ? cudaEventDefault : cudaEventDisableTiming;
  if (flags & PS_EVENT_IPC) cflags |= cudaEventInterprocess;
  int st = status(cudaEventCreateWithFlags(&e->h, cflags));
  if (st != PS_OK) {
    free(e);
    return st;
  }
  push(&c->events, &e->link);
  *out = e;
  return PS_OK;
}

static int cu_event_destroy(void *ctx, ps_event *e) {
  cu_ctx *c = ctx;
  if (!e || !unlink_from(&c->events, &e->link))
    return PS_ERR_INVALID_RESOURCE;
  int st = status(cudaEventDestroy(e->h));
  free(e);
  return st;
}

static int cu_event_record(void *ctx, ps_event *e, ps_stream *s) {
  if (!e) return PS_ERR_INVALID_RESOURCE;
  return status(cudaEventRecord(e->h, stream_of(s)));
}

static int cu_event_sync(void *ctx, ps_event *e) {
  if (!e) return PS_ERR_INVALID_RESOURCE;
  int st = poll_done(ctx, query_event, (void *)e->h);
  if (st != PS_OK) return st;
  return status(cudaEventSynchronize(e->h));
}

static int cu_event_query(void *ctx, ps_event *e, int *done) {
  if (!e) return PS_ERR_INVALID_RESOURCE;
  cudaError_t r = cudaEventQuery(e->h);
  *done = r == cudaSuccess;
  return r == cudaErrorNotReady ? PS_OK : status(r);
}

/* cudaIpcGetEventHandle: the handle's 64 bytes. */
static int cu_event_export(void *ctx, ps_event *e, uint8_t out[PS_IPC_BYTES]) {
  if (!e) return PS_ERR_INVALID_RESOURCE;
  cudaIpcEventHandle_t h;
  int st = status(cudaIpcGetEventHandle(&h, e->h));
  if (st == PS_OK) memcpy(out, &h, sizeof h < PS_IPC_BYTES ? sizeof h : PS_IPC_BYTES);
  return st;
}

/* cudaIpcOpenEventHandle: destroyed with cudaEventDestroy like any event. */
static int cu_event_import(void *ctx, const uint8_t data[PS_IPC_BYTES], ps_event **out) {
  cu_ctx *c = ctx;
  cudaIpcEventHandle_t h;
  memset(&h, 0, sizeof h);
  memcpy(&h, data, sizeof h < PS_IPC_BYTES ? sizeof h : PS_IPC_BYTES);
  ps_event *e = calloc(1, sizeof *e);
  if (!e) return PS_ERR_MEMORY_ALLOCATION;
  int st = status(cudaIpcOpenEventHandle(&e->h, h));
  if (st != PS_OK) {
    free(e);
    return st;
  }
  push(&c->events, &e->link);
  *out = e;
  return PS_OK;
}

/* Milliseconds between two completed timing events (float in CUDA). */
static int cu_event_elapsed(void *ctx, ps_event *start, ps_event *end,
                            double *ms) {
  if (!start || !end) return PS_ERR_INVALID_RESOURCE;
  float f = 0;
  int st = status(cudaEventElapsedTime(&f, start->h, end->h));
  if (st == PS_OK) *ms = f;
  return st;
}

/* ------------------------------------------------------------------ */
/* Pools                                                                */

static int wrap_pool(cu_ctx *c, cudaMemPool_t h, int owned, int device,
                     ps_pool **out) {
  ps_pool *p = calloc(1, sizeof *p);
  if (!p) return PS_ERR_MEMORY_ALLOCATION;
  p->h = h;
  p->owned = owned;
  p->device = device;
  push(&c->pools, &p->link);
  *out = p;
  return PS_OK;
}

/* Host pools are readable only by the host until a device is granted
 * access; poolsh's kernels run on the context's device. */
static int grant_access(cudaMemPool_t h, int device) {
  struct cudaMemAccessDesc d;
  memset(&d, 0, sizeof d);
  d.location.type = cudaMemLocationTypeDevice;
  d.location.id = device;
  d.flags = cudaMemAccessFlagsProtReadWrite;
  return status(cudaMemPoolSetAccess(h, &d, 1));
}

/* A pinned pool on a device or on the host (CUDA 12.2+; older drivers
 * return their error); props->ipc makes it exportable as a POSIX file
 * descriptor. */
static int cu_pool_create(void *ctx, const ps_pool_props *props,
                          ps_pool **out) {
  cu_ctx *c = ctx;
  struct cudaMemPoolProps pp;
  memset(&pp, 0, sizeof pp);
  pp.allocType = cudaMemAllocationTypePinned;
  pp.handleTypes = props->ipc ? cudaMemHandleTypePosixFileDescriptor : cudaMemHandleTypeNone;
  int host = props->location == PS_LOCATION_HOST;
  pp.location.type = host ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  pp.location.id = host ? 0 : props->device;
  pp.maxSize = props->max_size;
  cudaMemPool_t h;
  int st = status(cudaMemPoolCreate(&h, &pp));
  if (st != PS_OK) return st;
  if (host) st = grant_access(h, c->device);
  if (st == PS_OK) st = wrap_pool(c, h, 1, props->device, out);
  if (st != PS_OK) cudaMemPoolDestroy(h);
  return st;
}

/* The device's default pool; one handle per device, not owned. */
static int cu_pool_default(void *ctx, int dev, ps_pool **out) {
  cu_ctx *c = ctx;
  for (node *l = c->pools; l; l = l->next) {
    ps_pool *p = (ps_pool *)l;
    if (!p->owned && p->device == dev) {
      *out = p;
      return PS_OK;
    }
  }
  cudaMemPool_t h;
  int st = status(cudaDeviceGetDefaultMemPool(&h, dev));
  if (st != PS_OK) return st;
  return wrap_pool(c, h, 0, dev, out);
}

static uint64_t pool_used(ps_pool *p) {
  if (p->imported) return (uint64_t)p->imports;   /* the driver says 0 (measured) */
  uint64_t used = 0; /* cuuint64_t */
  cudaMemPoolGetAttribute(p->h, cudaMemPoolAttrUsedMemCurrent, &used);
  return used;
}

static int destroy_now(cu_ctx *c, ps_pool *p) {
  int st = status(cudaMemPoolDestroy(p->h));
  if (st != PS_OK) return st;
  unlink_from(&c->pools, &p->link);
  free(p);
  return PS_OK;
}

/* Destroys the pools doomed earlier whose last block has been freed. */
static void reap_doomed(cu_ctx *c) {
  for (node *l = c->pools, *next; l && c->doomed; l = next) {
    next = l->next;
    ps_pool *p = (ps_pool *)l;
    if (p->doomed && pool_used(p) == 0 && destroy_now(c, p) == PS_OK) c->doomed--;
  }
}

/* cudaMemPoolDestroy's rule (blocks still allocated stay valid until
 * freed), kept by poolsh itself: the driver (580.159.04) crashed in a
 * later cudaDeviceSynchronize after a pool was destroyed with blocks
 * allocated, so such a pool is destroyed once its last block is freed.
 * Default pools are refused with PS_ERR_INVALID_VALUE without asking
 * CUDA; unknown handles with PS_ERR_INVALID_RESOURCE. */
static int cu_pool_destroy(void *ctx, ps_pool *p) {
  cu_ctx *c = ctx;
  if (!p || !contains(c->pools, &p->link) || p->doomed) return PS_ERR_INVALID_RESOURCE;
  if (!p->owned) return PS_ERR_INVALID_VALUE;
  if (pool_used(p) == 0) return destroy_now(c, p);
  p->doomed = 1;
  c->doomed++;
  return PS_OK;
}

/* Maps a poolsh attribute to CUDA's; *flag says it is an int reuse flag
 * rather than a cuuint64_t. 0 for an unknown attribute. */
static int pool_attr(ps_pool_attr a, enum cudaMemPoolAttr *out, int *flag) {
  static const enum cudaMemPoolAttr map[] = {
      [PS_ATTR_RELEASE_THRESHOLD] = cudaMemPoolAttrReleaseThreshold,
      [PS_ATTR_FOLLOW_EVENT_DEPS] = cudaMemPoolReuseFollowEventDependencies,
      [PS_ATTR_OPPORTUNISTIC] = cudaMemPoolReuseAllowOpportunistic,
      [PS_ATTR_INTERNAL_DEPS] = cudaMemPoolReuseAllowInternalDependencies,
      [PS_ATTR_RESERVED_CURRENT] = cudaMemPoolAttrReservedMemCurrent,
      [PS_ATTR_RESERVED_HIGH] = cudaMemPoolAttrReservedMemHigh,
      [PS_ATTR_USED_CURRENT] = cudaMemPoolAttrUsedMemCurrent,
      [PS_ATTR_USED_HIGH] = cudaMemPoolAttrUsedMemHigh};
  if ((unsigned)a >= sizeof map / sizeof map[0]) return 0;
  *out = map[a];
  *flag = a == PS_ATTR_FOLLOW_EVENT_DEPS || a == PS_ATTR_OPPORTUNISTIC ||
          a == PS_ATTR_INTERNAL_DEPS;
  return 1;
}

/* Reuse flags take v != 0; the rest pass v through, so CUDA refuses what
 * it refuses (current counters, non-zero highs). */
static int cu_pool_set(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t v) {
  enum cudaMemPoolAttr attr;
  int flag;
  if (!p) return PS_ERR_INVALID_RESOURCE;
  if (!pool_attr(a, &attr, &flag)) return PS_ERR_INVALID_VALUE;
  if (flag) {
    int f = v != 0;
    return status(cudaMemPoolSetAttribute(p->h, attr, &f));
  }
  uint64_t x = v; /* cuuint64_t */
  return status(cudaMemPoolSetAttribute(p->h, attr, &x));
}

static int cu_pool_get(void *ctx, ps_pool *p, ps_pool_attr a, uint64_t *v) {
  enum cudaMemPoolAttr attr;
  int flag;
  if (!p) return PS_ERR_INVALID_RESOURCE;
  if (!pool_attr(a, &attr, &flag)) return PS_ERR_INVALID_VALUE;
  if (flag) {
    int f = 0;
    int st = status(cudaMemPoolGetAttribute(p->h, attr, &f));
    if (st == PS_OK) *v = (uint64_t)f;
    return st;
  }
  uint64_t x = 0; /* cuuint64_t */
  int st = status(cudaMemPoolGetAttribute(p->h, attr, &x));
  if (st == PS_OK) *v = x;
  return st;
}

static int cu_pool_trim(void *ctx, ps_pool *p, uint64_t keep) {
  if (!p) return PS_ERR_INVALID_RESOURCE;
  return status(cudaMemPoolTrimTo(p->h, keep));
}

/* Out of memory comes back as PS_ERR_MEMORY_ALLOCATION for the layer
 * above to collect garbage and retry. The reuse rule is unknown here. */
static int cu_pool_alloc(void *ctx, ps_pool *p, uint64_t size, ps_stream *s,
                         ps_addr *out, ps_alloc_note *note) {
  if (!p) return PS_ERR_INVALID_RESOURCE;
  if (p->doomed) return PS_ERR_INVALID_VALUE;
  void *m = NULL;
  int old = enter(ctx, s);
  int st = status(cudaMallocFromPoolAsync(&m, size, p->h, stream_of(s)));
  leave(old);
  if (st != PS_OK) return st;
  *out = addr_of(m);
  if (note) {
    note->rule = PS_RULE_UNKNOWN;
    note->reused_block = 0;
  }
  return PS_OK;
}

static int cu_pool_free(void *ctx, ps_addr a, ps_stream *s) {
  cu_ctx *c = ctx;
  int old = enter(c, s);
  int st = status(cudaFreeAsync(ptr_of(a), stream_of(s)));
  for (node *l = c->imports; st == PS_OK && l; l = l->next) {
    import_node *n = (import_node *)l;
    if (n->addr != a) continue;
    n->pool->imports--;
    unlink_from(&c->imports, l);
    free(n);
    break;
  }
  leave(old);
  if (c->doomed) reap_doomed(c);
  return st;
}

/* cudaMemPoolGetAccess of device dev (out of range: the runtime's
 * cudaErrorInvalidValue, measured on an H200). */
static int cu_pool_get_access(void *ctx, ps_pool *p, int dev, ps_access *out) {
  if (!p) return PS_ERR_INVALID_RESOURCE;
  struct cudaMemLocation loc;
  memset(&loc, 0, sizeof loc);
  loc.type = cudaMemLocationTypeDevice;
  loc.id = dev;
  enum cudaMemAccessFlags f = cudaMemAccessFlagsProtNone;
  int st = status(cudaMemPoolGetAccess(&f, p->h, &loc));
  if (st == PS_OK) *out = (ps_access)f;
  return st;
}

/* cudaMemPoolSetAccess of one device; the runtime's errors as they come
 * (measured: read-only cudaErrorNotSupported, the pool's own device none
 * cudaErrorInvalidDevice). */
static int cu_pool_set_access(void *ctx, ps_pool *p, int dev, ps_access a) {
  if (!p) return PS_ERR_INVALID_RESOURCE;
  struct cudaMemAccessDesc d;
  memset(&d, 0, sizeof d);
  d.location.type = cudaMemLocationTypeDevice;
  d.location.id = dev;
  d.flags = (enum cudaMemAccessFlags)a;
  return status(cudaMemPoolSetAccess(p->h, &d, 1));
}

/* ------------------------------------------------------------------ */
/* Peers                                                                */

static int cu_device_can_access_peer(void *ctx, int dev, int peer, int *can) {
  return status(cudaDeviceCanAccessPeer(can, dev, peer));
}

/* cudaDeviceEnablePeerAccess(peer) with dev current, restored after. */
static int cu_device_enable_peer(void *ctx, int dev, int peer) {
  cu_ctx *c = ctx;
  int st = PS_OK;
  if (dev != c->device) st = status(cudaSetDevice(dev));
  if (st == PS_OK) st = status(cudaDeviceEnablePeerAccess(peer, 0));
  if (dev != c->device) cudaSetDevice(c->device);
  if (st == PS_OK && dev >= 0 && dev < CU_MAX_DEVICES && peer >= 0 && peer < CU_MAX_DEVICES)
    c->peer_on[dev][peer] = 1;
  return st;
}

/* Whether this context enabled dev's access to peer (a device reaches its
 * own memory). CUDA has no query for it. */
static int cu_device_peer_enabled(void *ctx, int dev, int peer, int *on) {
  cu_ctx *c = ctx;
  int n = 0;
  int st = status(cudaGetDeviceCount(&n));
  if (st != PS_OK) return st;
  if (dev < 0 || peer < 0 || dev >= n || peer >= n) return PS_ERR_INVALID_DEVICE;
  *on = dev == peer ||
        (dev < CU_MAX_DEVICES && peer < CU_MAX_DEVICES && c->peer_on[dev][peer]);
  return PS_OK;
}

/* cudaMemPoolExportToShareableHandle: a new POSIX file descriptor. */
static int cu_pool_export(void *ctx, ps_pool *p, int *fd) {
  if (!p) return PS_ERR_INVALID_RESOURCE;
  int h = -1;
  int st = status(cudaMemPoolExportToShareableHandle(&h, p->h,
                                                     cudaMemHandleTypePosixFileDescriptor, 0));
  if (st == PS_OK) *fd = h;
  return st;
}

/* cudaMemPoolImportFromShareableHandle; the fd stays the caller's. The
 * handle is destroyed with cudaMemPoolDestroy once its imports are freed. */
static int cu_pool_import(void *ctx, int fd, ps_pool **out) {
  cu_ctx *c = ctx;
  cudaMemPool_t h;
  int st = status(cudaMemPoolImportFromShareableHandle(
      &h, (void *)(uintptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0));
  if (st != PS_OK) return st;
  st = wrap_pool(c, h, 1, c->device, out);   /* the exporter's device: assumed ours */
  if (st != PS_OK) {
    cudaMemPoolDestroy(h);
    return st;
  }
  (*out)->imported = 1;
  return PS_OK;
}

static int cu_ptr_export(void *ctx, ps_addr a, uint8_t out[PS_IPC_BYTES]) {
  struct cudaMemPoolPtrExportData d;
  memset(&d, 0, sizeof d);
  int st = status(cudaMemPoolExportPointer(&d, ptr_of(a)));
  if (st == PS_OK) memcpy(out, &d, sizeof d < PS_IPC_BYTES ? sizeof d : PS_IPC_BYTES);
  return st;
}

static int cu_ptr_import(void *ctx, ps_pool *p, const uint8_t data[PS_IPC_BYTES],
                         ps_addr *out) {
  cu_ctx *c = ctx;
  if (!p) return PS_ERR_INVALID_RESOURCE;
  struct cudaMemPoolPtrExportData d;
  memset(&d, 0, sizeof d);
  memcpy(&d, data, sizeof d < PS_IPC_BYTES ? sizeof d : PS_IPC_BYTES);
  import_node *n = calloc(1, sizeof *n);
  if (!n) return PS_ERR_MEMORY_ALLOCATION;
  void *m = NULL;
  int st = status(cudaMemPoolImportPointer(&m, p->h, &d));
  if (st != PS_OK) {
    free(n);
    return st;
  }
  n->addr = addr_of(m), n->pool = p;
  push(&c->imports, &n->link);
  p->imports++;
  *out = n->addr;
  return PS_OK;
}

/* ------------------------------------------------------------------ */
/* Other memory                                                         */

static int cu_malloc_device(void *ctx, uint64_t size, ps_addr *out) {
  void *m = NULL;
  int st = status(cudaMalloc(&m, size));
  if (st == PS_OK) *out = addr_of(m);
  return st;
}

static int cu_free_device(void *ctx, ps_addr a) {
  return status(cudaFree(ptr_of(a)));
}

static int cu_alloc_pinned(void *ctx, uint64_t size, unsigned flags,
                           ps_addr *out) {
  unsigned f = cudaHostAllocDefault;
  if (flags & PS_PINNED_PORTABLE) f |= cudaHostAllocPortable;
  if (flags & PS_PINNED_MAPPED) f |= cudaHostAllocMapped;
  if (flags & PS_PINNED_WRITE_COMBINED) f |= cudaHostAllocWriteCombined;
  void *m = NULL;
  int st = status(cudaHostAlloc(&m, size, f));
  if (st == PS_OK) *out = addr_of(m);
  return st;
}

static int cu_free_pinned(void *ctx, ps_addr a) {
  return status(cudaFreeHost(ptr_of(a)));
}

/* Page-aligned and rounded up to whole pages, so that registering it
 * pins no one else's bytes. */
static int cu_alloc_pageable(void *ctx, uint64_t size, ps_addr *out) {
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) page = 4096;
  uint64_t rounded = (size + (uint64_t)page - 1) / (uint64_t)page * page;
  if (rounded < size) return PS_ERR_MEMORY_ALLOCATION;
  void *m = NULL;
  if (posix_memalign(&m, (size_t)page, rounded ? rounded : (size_t)page))
    return PS_ERR_MEMORY_ALLOCATION;
  *out = addr_of(m);
  return PS_OK;
}

static int cu_free_pageable(void *ctx, ps_addr a) {
  free(ptr_of(a));
  return PS_OK;
}

static int cu_host_register(void *ctx, ps_addr a, uint64_t size) {
  return status(cudaHostRegister(ptr_of(a), size, cudaHostRegisterDefault));
}

static int cu_host_unregister(void *ctx, ps_addr a) {
  return status(cudaHostUnregister(ptr_of(a)));
}

/* ------------------------------------------------------------------ */
/* Virtual memory management                                            */

/* The driver's CUresult as a status: its codes are the runtime's numbers
 * for every error these calls return (CUDA_ERROR_INVALID_VALUE 1,
 * CUDA_ERROR_OUT_OF_MEMORY 2 = cudaErrorMemoryAllocation,
 * CUDA_ERROR_INVALID_DEVICE 101, CUDA_ERROR_NOT_SUPPORTED 801), the same
 * ones the sim returns. */
static int cu_status(CUresult r) {
  return r == CUDA_SUCCESS ? PS_OK : (int)r;
}

/* One entry point by name at CU_VMM_ABI into *fn: PS_OK, or
 * PS_ERR_NOT_SUPPORTED when this driver (or runtime) does not give it. */
static int entry_point(const char *name, void **fn) {
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  *fn = NULL;
#if CUDART_VERSION >= 12050
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, fn, CU_VMM_ABI, cudaEnableDefault, &q);
#else
  cudaError_t e = cudaGetDriverEntryPoint(name, fn, cudaEnableDefault, &q);
#endif
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e == cudaSuccess && q == cudaDriverEntryPointSuccess && *fn ? PS_OK : PS_ERR_NOT_SUPPORTED;
}

/* Resolves every VMM entry point once; PS_OK when all were found, else
 * PS_ERR_NOT_SUPPORTED for every VMM call of this context. */
static int vmm_ready(cu_ctx *c) {
  if (c->vmm_status >= 0) return c->vmm_status;
  static const char *const names[] = {
      "cuMemGetAllocationGranularity", "cuMemAddressReserve", "cuMemAddressFree",
      "cuMemCreate", "cuMemRelease", "cuMemMap", "cuMemUnmap", "cuMemSetAccess"};
  void *fns[sizeof names / sizeof names[0]];
  int st = PS_OK;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && st == PS_OK; i++)
    st = entry_point(names[i], &fns[i]);
  if (st == PS_OK) {
    /* Object pointers to function pointers through memcpy: ISO C has no cast. */
    memcpy(&c->vmm.granularity, &fns[0], sizeof fns[0]);
    memcpy(&c->vmm.reserve, &fns[1], sizeof fns[1]);
    memcpy(&c->vmm.address_free, &fns[2], sizeof fns[2]);
    memcpy(&c->vmm.create, &fns[3], sizeof fns[3]);
    memcpy(&c->vmm.release, &fns[4], sizeof fns[4]);
    memcpy(&c->vmm.map, &fns[5], sizeof fns[5]);
    memcpy(&c->vmm.unmap, &fns[6], sizeof fns[6]);
    memcpy(&c->vmm.set_access, &fns[7], sizeof fns[7]);
  }
  c->vmm_status = st;
  return st;
}

/* Pinned memory of loc: device dev, or the host (NUMA node dev with
 * numa, else CU_MEM_LOCATION_TYPE_HOST, which CUDA 13 drivers add). */
static void vmm_prop(CUmemAllocationProp *p, ps_location loc, int dev, int numa) {
  memset(p, 0, sizeof *p);
  p->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p->requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  if (loc == PS_LOCATION_HOST) {
#if CUDA_VERSION >= 12020
    p->location.type = numa ? CU_MEM_LOCATION_TYPE_HOST_NUMA : CU_MEM_LOCATION_TYPE_HOST;
    p->location.id = numa ? dev : 0;
#else
    p->location.type = CU_MEM_LOCATION_TYPE_DEVICE;   /* no host VMM before CUDA 12.2 */
    p->location.id = -1;                              /* refused by the driver */
#endif
  } else {
    p->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p->location.id = dev;
  }
}

/* Calls f(prop) for loc's memory. Host memory tries a NUMA node first and
 * plain HOST after (or the other way round once one of them worked), and
 * remembers which one the driver took. */
typedef CUresult (*prop_call)(cu_ctx *c, const CUmemAllocationProp *p, void *ud);

static int with_prop(cu_ctx *c, ps_location loc, int dev, prop_call f, void *ud) {
  CUmemAllocationProp p;
  if (loc != PS_LOCATION_HOST) {
    vmm_prop(&p, loc, dev, 0);
    return cu_status(f(c, &p, ud));
  }
  int first = c->host_numa != 0;   /* unknown or NUMA: NUMA first */
  vmm_prop(&p, loc, dev, first);
  CUresult r = f(c, &p, ud);
  if (r == CUDA_SUCCESS) {
    c->host_numa = first;
  } else if (c->host_numa < 0 && (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_NOT_SUPPORTED) &&
             (first || dev == 0)) {
    vmm_prop(&p, loc, dev, !first);
    CUresult r2 = f(c, &p, ud);
    if (r2 == CUDA_SUCCESS) c->host_numa = !first;
    if (r2 == CUDA_SUCCESS || r2 == CUDA_ERROR_OUT_OF_MEMORY) r = r2;
  }
  return cu_status(r);
}

/* The innermost extent of list that holds [a, a + n); NULL when none
 * does (or a + n overflows). */
static vmm_extent *extent_holding(node *list, ps_addr a, uint64_t n) {
  if (a + n < a) return NULL;
  for (node *l = list; l; l = l->next) {
    vmm_extent *x = (vmm_extent *)l;
    if (a >= x->addr && a + n <= x->addr + x->size) return x;
  }
  return NULL;
}

static int overlaps(const vmm_extent *x, ps_addr a, uint64_t n) {
  return x->addr < a + n && a < x->addr + x->size;
}

static int inside(const vmm_extent *x, ps_addr a, uint64_t n) {
  return x->addr >= a && x->addr + x->size <= a + n;
}

static int add_extent(node **list, ps_addr a, uint64_t n) {
  vmm_extent *x = calloc(1, sizeof *x);
  if (!x) return PS_ERR_MEMORY_ALLOCATION;
  x->addr = a, x->size = n, x->access = PS_ACCESS_NONE;
  push(list, &x->link);
  return PS_OK;
}

/* Waits, interruptibly, until every stream of the context and the legacy
 * stream are idle: queued work on bytes about to be unmapped or made
 * inaccessible would otherwise fault the GPU (PyTorch synchronises before
 * cuMemUnmap for the same reason). Queries only, so no pool releases
 * memory as a synchronising call would make it. */
static int wait_idle(cu_ctx *c) {
  for (node *l = c->streams; l; l = l->next) {
    int st = poll_done(c, query_stream, (void *)((ps_stream *)l)->h);
    if (st != PS_OK) return st;
  }
  return poll_done(c, query_stream, NULL);
}

/* Whether any mapping overlapping [a, a + n) gives the context's device
 * more access than `a_new`, or gave another device any (then kernels may
 * use it now). */
static int access_drops(const cu_ctx *c, ps_addr a, uint64_t n, int a_new) {
  for (node *l = c->vmm_maps; l; l = l->next) {
    const vmm_extent *x = (const vmm_extent *)l;
    if (overlaps(x, a, n) && ((x->access & ~a_new) || x->peer)) return 1;
  }
  return 0;
}

static CUresult granularity_call(cu_ctx *c, const CUmemAllocationProp *p, void *ud) {
  size_t *g = ud;
  return c->vmm.granularity(g, p, g[1] ? CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
                                       : CU_MEM_ALLOC_GRANULARITY_MINIMUM);
}

/* cuMemGetAllocationGranularity of loc's pinned memory. */
static int cu_vmm_granularity(void *ctx, ps_location loc, int dev, int recommended,
                              uint64_t *bytes) {
  cu_ctx *c = ctx;
  int st = vmm_ready(c);
  if (st != PS_OK) return st;
  size_t g[2] = {0, recommended ? 1 : 0};
  st = with_prop(c, loc, dev, granularity_call, g);
  if (st == PS_OK) *bytes = g[0];
  return st;
}

/* cuMemAddressReserve anywhere (no address hint), aligned to align or,
 * for 0, to the context's device's minimum granularity, so that every
 * later map is aligned as cuMemMap demands. */
static int cu_vmm_reserve(void *ctx, uint64_t size, uint64_t align, ps_addr *addr) {
  cu_ctx *c = ctx;
  int st = vmm_ready(c);
  if (st != PS_OK) return st;
  if (align == 0) st = cu_vmm_granularity(c, PS_LOCATION_DEVICE, c->device, 0, &align);
  if (st != PS_OK) return st;
  CUdeviceptr p = 0;
  st = cu_status(c->vmm.reserve(&p, size, align, 0, 0));
  if (st != PS_OK) return st;
  st = add_extent(&c->vmm_ranges, (ps_addr)p, size);
  if (st != PS_OK) {
    c->vmm.address_free(p, size);
    return st;
  }
  *addr = (ps_addr)p;
  return PS_OK;
}

/* cuMemAddressFree of a whole reservation made here; refused
 * (PS_ERR_INVALID_VALUE, as the driver answers) while a mapping is left
 * in it, and for anything that is not one of this context's reservations. */
static int cu_vmm_free(void *ctx, ps_addr addr, uint64_t size) {
  cu_ctx *c = ctx;
  int st = vmm_ready(c);
  if (st != PS_OK) return st;
  vmm_extent *r = extent_holding(c->vmm_ranges, addr, size);
  if (!r || r->addr != addr || r->size != size) return PS_ERR_INVALID_VALUE;
  for (node *l = c->vmm_maps; l; l = l->next)
    if (overlaps((vmm_extent *)l, addr, size)) return PS_ERR_INVALID_VALUE;
  st = cu_status(c->vmm.address_free((CUdeviceptr)addr, size));
  if (st != PS_OK) return st;
  unlink_from(&c->vmm_ranges, &r->link);
  free(r);
  return PS_OK;
}

static CUresult create_call(cu_ctx *c, const CUmemAllocationProp *p, void *ud) {
  ps_vmm_handle *h = ud;
  return c->vmm.create(&h->h, h->size, p, 0);
}

/* cuMemCreate of size bytes of loc's pinned memory; out of memory is
 * PS_ERR_MEMORY_ALLOCATION (CUDA_ERROR_OUT_OF_MEMORY has its number). */
static int cu_vmm_create(void *ctx, ps_location loc, int dev, uint64_t size,
                         ps_vmm_handle **out) {
  cu_ctx *c = ctx;
  int st = vmm_ready(c);
  if (st != PS_OK) return st;
  ps_vmm_handle *h = calloc(1, sizeof *h);
  if (!h) return PS_ERR_MEMORY_ALLOCATION;
  h->size = size;
  st = with_prop(c, loc, dev, create_call, h);
  if (st != PS_OK) {
    free(h);
    return st;
  }
  push(&c->vmm_handles, &h->link);
  *out = h;
  return PS_OK;
}

/* cuMemRelease; the driver keeps the memory while mappings of it remain.
 * A handle this context does not hold (released already) is refused with
 * PS_ERR_INVALID_VALUE, the driver's answer to a second release, without
 * passing it on. */
static int cu_vmm_release(void *ctx, ps_vmm_handle *h) {
  cu_ctx *c = ctx;
  int st = vmm_ready(c);
  if (st != PS_OK) return st;
  if (!h || !contains(c->vmm_handles, &h->link)) return PS_ERR_INVALID_VALUE;
  st = cu_status(c->vmm.release(h->h));
  if (st != PS_OK) return st;
  unlink_from(&c->vmm_handles, &h->link);
  free(h);
  return PS_OK;
}

/* cuMemMap of h's bytes [offset, offset + size) at addr, which must lie
 * inside one of this context's reservations (else PS_ERR_INVALID_VALUE,
 * as the driver answers outside any); the rest (alignment, overlap, past
 * the handle) is the driver's to check. */
static int cu_vmm_map(void *ctx, ps_addr addr, uint64_t size, uint64_t offset,
                      ps_vmm_handle *h) {
  cu_ctx *c = ctx;
  int st = vmm_ready(c);
  if (st != PS_OK) return st;
  if (!h || !contains(c->vmm_handles, &h->link)) return PS_ERR_INVALID_VALUE;
  if (!extent_holding(c->vmm_ranges, addr, size)) return PS_ERR_INVALID_VALUE;
  vmm_extent *x = calloc(1, sizeof *x);   /* before the map: no failure after it */
  if (!x) return PS_ERR_MEMORY_ALLOCATION;
  st = cu_status(c->vmm.map((CUdeviceptr)addr, size, offset, h->h, 0));
  if (st != PS_OK) {
    free(x);
    return st;
  }
  x->addr = addr, x->size = size, x->access = PS_ACCESS_NONE;
  push(&c->vmm_maps, &x->link);
  return PS_OK;
}

/* cuMemUnmap of the whole mappings in [addr, addr + size) of one of this
 * context's reservations. Part of a mapping is refused
 * (PS_ERR_INVALID_VALUE, the driver's answer) before the driver is
 * asked; a range with nothing mapped is the driver's PS_OK. When a
 * mapping there is accessible, waits first for the device's queued work
 * (wait_idle): PS_INTERRUPTED leaves everything mapped. */
static int cu_vmm_unmap(void *ctx, ps_addr addr, uint64_t size) {
  cu_ctx *c = ctx;
  int st = vmm_ready(c);
  if (st != PS_OK) return st;
  if (!extent_holding(c->vmm_ranges, addr, size)) return PS_ERR_INVALID_VALUE;
  for (node *l = c->vmm_maps; l; l = l->next) {
    const vmm_extent *x = (const vmm_extent *)l;
    if (overlaps(x, addr, size) && !inside(x, addr, size)) return PS_ERR_INVALID_VALUE;
  }
  if (access_drops(c, addr, size, PS_ACCESS_NONE) && (st = wait_idle(c)) != PS_OK) return st;
  st = cu_status(c->vmm.unmap((CUdeviceptr)addr, size));
  if (st != PS_OK) return st;
  for (node **p = &c->vmm_maps; *p;) {
    vmm_extent *x = (vmm_extent *)*p;
    if (inside(x, addr, size)) {
      *p = x->link.next;
      free(x);
    } else {
      p = &(*p)->next;
    }
  }
  return PS_OK;
}

/* cuMemSetAccess of device dev over [addr, addr + size) of one of this
 * context's reservations; the driver refuses unmapped bytes and part of
 * a mapping. Taking access away waits for queued work first, as unmap does. */
static int cu_vmm_set_access(void *ctx, ps_addr addr, uint64_t size, int dev, ps_access a) {
  cu_ctx *c = ctx;
  int st = vmm_ready(c);
  if (st != PS_OK) return st;
  if (!extent_holding(c->vmm_ranges, addr, size)) return PS_ERR_INVALID_VALUE;
  if (access_drops(c, addr, size, (int)a) && (st = wait_idle(c)) != PS_OK) return st;
  CUmemAccessDesc d;
  memset(&d, 0, sizeof d);
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = dev;
  d.flags = (CUmemAccess_flags)a;   /* ps_access has CUDA's values */
  st = cu_status(c->vmm.set_access((CUdeviceptr)addr, size, &d, 1));
  if (st != PS_OK) return st;
  for (node *l = c->vmm_maps; l; l = l->next) {
    vmm_extent *x = (vmm_extent *)l;
    if (!inside(x, addr, size)) continue;
    if (dev == c->device) x->access = (int)a;
    else if (a != PS_ACCESS_NONE) x->peer = 1;
  }
  return PS_OK;
}

/* Undoes what the context still holds: waits for the device when a
 * mapping is accessible (work queued on it would fault), then unmaps,
 * releases and frees. Errors are dropped: the context is going. */
static void vmm_close(cu_ctx *c) {
  if (c->vmm_status != PS_OK) return;
  if (c->vmm_maps && access_drops(c, 0, UINT64_MAX, PS_ACCESS_NONE)) {
    for (node *l = c->streams; l; l = l->next) cudaStreamSynchronize(((ps_stream *)l)->h);
    cudaStreamSynchronize(0);
  }
  for (node *l = c->vmm_maps, *next; l; l = next) {
    next = l->next;
    c->vmm.unmap((CUdeviceptr)((vmm_extent *)l)->addr, ((vmm_extent *)l)->size);
    free(l);
  }
  for (node *l = c->vmm_handles, *next; l; l = next) {
    next = l->next;
    c->vmm.release(((ps_vmm_handle *)l)->h);
    free(l);
  }
  for (node *l = c->vmm_ranges, *next; l; l = next) {
    next = l->next;
    c->vmm.address_free((CUdeviceptr)((vmm_extent *)l)->addr, ((vmm_extent *)l)->size);
    free(l);
  }
  c->vmm_maps = c->vmm_handles = c->vmm_ranges = NULL;
  (void)cudaGetLastError();
}

/* ------------------------------------------------------------------ */
/* Copies and kernels                                                   */

static int cu_copy(void *ctx, ps_addr dst, ps_addr src, uint64_t n,
                   ps_stream *s) {
  int old = enter(ctx, s);
  int st = status(cudaMemcpyAsync(ptr_of(dst), ptr_of(src), n,
                                  cudaMemcpyDefault, stream_of(s)));
  leave(old);
  return st;
}

static int cu_fill(void *ctx, ps_addr a, uint64_t n, int byte, ps_stream *s) {
  int old = enter(ctx, s);
  int st = status(psk_fill(ptr_of(a), n, (unsigned char)byte, stream_of(s)));
  leave(old);
  return st;
}

static int cu_touch(void *ctx, ps_addr a, uint64_t n, ps_stream *s) {
  int old = enter(ctx, s);
  int st = status(psk_touch(ptr_of(a), n, stream_of(s)));
  leave(old);
  return st;
}

/* Creates device dev's result word on first use (dev current), in a
 * private pool, ordered on the legacy stream; done marks the end of its
 * last use. */
static int scratch_ready(struct scratch *w, int dev) {
  if (w->word) return PS_OK;
  int st = PS_OK;
  if (!w->pool) {
    struct cudaMemPoolProps pp;
    memset(&pp, 0, sizeof pp);
    pp.allocType = cudaMemAllocationTypePinned;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = dev;
    st = status(cudaMemPoolCreate(&w->pool, &pp));
  }
  if (st == PS_OK && !w->done)
    st = status(cudaEventCreateWithFlags(&w->done, cudaEventDisableTiming));
  void *m = NULL;
  if (st == PS_OK)
    st = status(cudaMallocFromPoolAsync(&m, sizeof *w->word, w->pool, 0));
  if (st == PS_OK) st = status(cudaEventRecord(w->done, 0));
  if (st == PS_OK) w->word = m;
  else if (m) cudaFreeAsync(m, 0);
  return st;
}

/* Queues: wait for the word's last user, set it to ~0, search, mark. */
static int verify_enqueue(struct scratch *w, ps_addr a, uint64_t n, int byte,
                          cudaStream_t h) {
  int st = status(cudaStreamWaitEvent(h, w->done, 0));
  if (st == PS_OK)
    st = status(cudaMemsetAsync(w->word, 0xff, sizeof *w->word, h));
  if (st == PS_OK)
    st = status(psk_verify(ptr_of(a), n, (unsigned char)byte, w->word, h));
  if (st == PS_OK) st = status(cudaEventRecord(w->done, h));
  return st;
}

/* Waits for s (interruptibly) and reports the first byte != byte, or -1.
 * Interrupted, the search stays queued and its result is dropped. */
static int cu_verify(void *ctx, ps_addr a, uint64_t n, int byte,
                     ps_stream *s, int64_t *first_bad) {
  cu_ctx *c = ctx;
  cudaStream_t h = stream_of(s);
  int dev = dev_of(c, s);
  if (dev < 0 || dev >= CU_MAX_DEVICES) return PS_ERR_INVALID_DEVICE;
  struct scratch *w = &c->scratch[dev];
  int old = enter(c, s);
  int st = scratch_ready(w, dev);
  if (st == PS_OK) st = verify_enqueue(w, a, n, byte, h);
  leave(old);
  if (st == PS_OK) st = poll_done(c, query_stream, (void *)h);
  if (st != PS_OK) return st;
  /* s is idle: this copy to pageable memory completes before returning. */
  unsigned long long v = 0;
  old = enter(c, s);
  st = status(cudaMemcpyAsync(&v, w->word, sizeof v,
                              cudaMemcpyDeviceToHost, h));
  if (st == PS_OK) st = status(cudaStreamSynchronize(h));
  leave(old);
  if (st == PS_OK) *first_bad = v == ~0ULL ? -1 : (int64_t)v;
  return st;
}

/* Busy-waits one GPU thread for ms on s. */
static int cu_spin(void *ctx, ps_stream *s, double ms) {
  if (!(ms >= 0)) return PS_ERR_INVALID_VALUE;
  double ns = ms * 1e6;
  uint64_t n = ns >= 9e18 ? (uint64_t)9e18 : (uint64_t)ns;
  int old = enter(ctx, s);
  int st = status(psk_spin(n, stream_of(s)));
  leave(old);
  return st;
}

/* Waits for h first, interruptibly, because a copy to or from pageable
 * memory would otherwise block on earlier work; then copies and waits. */
static int copy_and_wait(cu_ctx *c, void *dst, const void *src, uint64_t n,
                         const ps_stream *s) {
  cudaStream_t h = stream_of(s);
  int st = poll_done(c, query_stream, (void *)h);
  int old = st == PS_OK ? enter(c, s) : -1;
  if (st == PS_OK)
    st = status(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, h));
  leave(old);
  if (st == PS_OK) st = wait_stream(c, h);
  return st;
}

static int is_device_kind(ps_kind k) {
  return k == PS_KIND_POOL || k == PS_KIND_MALLOC || k == PS_KIND_VMM;
}

/* Pool and cudaMalloc memory go through s; host memory is read directly. */
static int cu_read(void *ctx, ps_kind k, ps_addr src, void *dst, uint64_t n,
                   ps_stream *s) {
  if (n == 0) return PS_OK;                   /* no copy: no wait */
  if (is_device_kind(k))
    return copy_and_wait(ctx, dst, ptr_of(src), n, s);
  memcpy(dst, ptr_of(src), n);
  return PS_OK;
}

static int cu_write(void *ctx, ps_kind k, ps_addr dst, const void *src,
                    uint64_t n, ps_stream *s) {
  if (n == 0) return PS_OK;
  if (is_device_kind(k))
    return copy_and_wait(ctx, ptr_of(dst), src, n, s);
  memcpy(ptr_of(dst), src, n);
  return PS_OK;
}

/* ------------------------------------------------------------------ */
/* Clock and options                                                    */

static double cu_now(void *ctx) {
  const cu_ctx *c = ctx;
  return (double)(ps_clock_ns() - c->origin) / 1e6;
}

static uint64_t cu_ticks(void *ctx) {
#if defined(__x86_64__)
  if (((const cu_ctx *)ctx)->tsc) return __rdtsc();
#endif
  (void)ctx;
  return 0;
}

/* Sleeps ms on the host in slices, checking for interrupts between. */
static int cu_sleep(void *ctx, double ms) {
  cu_ctx *c = ctx;
  if (!(ms >= 0)) return PS_ERR_INVALID_VALUE;
  double end = cu_now(c) + ms;
  for (;;) {
    double left_ns = (end - cu_now(c)) * 1e6;
    if (left_ns <= 0) return PS_OK;
    if (interrupted(c)) return PS_INTERRUPTED;
    nap_ns(left_ns < SLEEP_SLICE_NS ? (long)left_ns : SLEEP_SLICE_NS);
  }
}

static int cu_option_get(void *ctx, const char *key, double *v) {
  return PS_ERR_NOT_SUPPORTED;
}

static int cu_option_set(void *ctx, const char *key, double v) {
  return PS_ERR_NOT_SUPPORTED;
}

static int cu_option_names(void *ctx, const char **names, int max) {
  return 0;
}

const ps_backend ps_backend_cuda = {
    .name = "cuda",
    .probe = cu_probe,
    .open = cu_open,
    .close = cu_close,
    .error_name = cu_error_name,
    .error_string = cu_error_string,
    .device_count = cu_device_count,
    .device_info = cu_device_info,
    .device_sync = cu_device_sync,
    .stream_create = cu_stream_create,
    .stream_destroy = cu_stream_destroy,
    .stream_priority_range = cu_stream_priority_range,
    .stream_sync = cu_stream_sync,
    .stream_query = cu_stream_query,
    .stream_peek = cu_stream_query,   /* cudaStreamQuery changes nothing */
    .pool_truth = NULL,               /* the driver does not say (the sim's oracle only) */
    .stream_wait = cu_stream_wait,
    .event_create = cu_event_create,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .event_sync = cu_event_sync,
    .event_query = cu_event_query,
    .event_elapsed = cu_event_elapsed,
    .pool_create = cu_pool_create,
    .pool_default = cu_pool_default,
    .pool_destroy = cu_pool_destroy,
    .pool_set = cu_pool_set,
    .pool_get = cu_pool_get,
    .pool_trim = cu_pool_trim,
    .pool_alloc = cu_pool_alloc,
    .pool_free = cu_pool_free,
    .pool_get_access = cu_pool_get_access,
    .pool_set_access = cu_pool_set_access,
    .device_can_access_peer = cu_device_can_access_peer,
    .device_enable_peer = cu_device_enable_peer,
    .device_peer_enabled = cu_device_peer_enabled,
    .pool_export = cu_pool_export,
    .pool_import = cu_pool_import,
    .ptr_export = cu_ptr_export,
    .ptr_import = cu_ptr_import,
    .event_export = cu_event_export,
    .event_import = cu_event_import,
    .malloc_device = cu_malloc_device,
    .free_device = cu_free_device,
    .alloc_pinned = cu_alloc_pinned,
    .free_pinned = cu_free_pinned,
    .alloc_pageable = cu_alloc_pageable,
    .free_pageable = cu_free_pageable,
    .host_register = cu_host_register,
    .host_unregister = cu_host_unregister,
    .vmm_granularity = cu_vmm_granularity,
    .vmm_reserve = cu_vmm_reserve,
    .vmm_free = cu_vmm_free,
    .vmm_create = cu_vmm_create,
    .vmm_release = cu_vmm_release,
    .vmm_map = cu_vmm_map,
    .vmm_unmap = cu_vmm_unmap,
    .vmm_set_access = cu_vmm_set_access,
    .copy = cu_copy,
    .fill = cu_fill,
    .touch = cu_touch,
    .verify = cu_verify,
    .spin = cu_spin,
    .read = cu_read,
    .write = cu_write,
    .sleep = cu_sleep,
    .now = cu_now,
    .ticks = cu_ticks,
    .option_get = cu_option_get,
    .option_set = cu_option_set,
    .option_names = cu_option_names,
};
