/*
 * sim.c: the `sim` backend's face, its ops table: life, devices, plain
 * allocations, copies and kernels, host access and the profile options.
 * It calls down into the model files and none calls back up into it:
 * streams and events are in sim_stream.c, pools in sim_pool.c, contents in
 * sim_mem.c, the profile in sim_profile.c, faults in sim_fault.c, error
 * names and texts in sim_error.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fault.h"
#include "sim_model.h"

/* ---- life ---- */

static int sim_probe(void) { return PS_OK; }

/* A fresh context: the default profile (memory from cfg->sim_memory when
 * non-zero), cfg->sim_devices devices (0: one) that can all access each
 * other, the legacy stream and the default pool of cfg->device; host
 * clock at 0. */
static int sim_open(const ps_config *cfg, void **ctx) {
  if (!ctx) return PS_ERR_INVALID_VALUE;
  int ndev = cfg && cfg->sim_devices ? cfg->sim_devices : 1;
  if (ndev < 1 || ndev > SIM_MAX_DEVICES) return PS_ERR_INVALID_VALUE;
  if (cfg && (cfg->device < 0 || cfg->device >= ndev)) return PS_ERR_INVALID_DEVICE;
  sim_ctx *c = calloc(1, sizeof *c);
  if (!c) return PS_ERR_MEMORY_ALLOCATION;
  c->ndev = ndev;
  c->dev = cfg ? cfg->device : 0;
  c->peer_capable = 1;
  c->legacy.dev = c->dev;
  sim_profile_defaults(&c->prof);
  if (cfg && cfg->sim_memory) c->prof.memory = (double)cfg->sim_memory;
  if (cfg) c->interrupted = cfg->interrupted, c->interrupted_ud = cfg->interrupted_ud;
  c->legacy.blocking = 1;
  c->legacy.span_start = -1;
  sim_faults_init(&c->faults);
  sim_ipc_sweep();   /* IPC event slots of this user's dead processes */
  int st = sim_pools_init(c);
  if (st != PS_OK) { free(c); return st; }
  *ctx = c;
  return PS_OK;
}

/* Frees everything the context owns; never synchronises. */
static void sim_close(void *ctx) {
  sim_ctx *c = ctx;
  if (!c) return;
  sim_pools_free(c);
  sim_streams_free(c);
  sim_vmm_free_all(c);
  sim_mem_free_all(&c->mem);
  sim_faults_free(&c->faults);
  free(c);
}

/* ---- devices ---- */

static int sim_device_count(void *ctx, int *n) {
  if (!n) return PS_ERR_INVALID_VALUE;
  *n = ((sim_ctx *)ctx)->ndev;
  return PS_OK;
}

/* Each device has the profile's memory of its own; free = total minus
 * the device's mapped bytes (its pools' chunks and cudaMalloc). */
static int sim_device_info(void *ctx, int dev, ps_device_info *out) {
  sim_ctx *c = ctx;
  if (!sim_valid_dev(c, dev)) return PS_ERR_INVALID_DEVICE;
  if (!out) return PS_ERR_INVALID_VALUE;
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "poolsh sim (built-in profile)");
  out->total = sim_device_total(c);
  uint64_t r = c->mem.dev_mapped[dev];
  out->free = r < out->total ? out->total - r : 0;
  out->cc_major = 9, out->cc_minor = 0;
  out->pools_supported = 1;
  snprintf(out->driver, sizeof out->driver, "sim");   /* api versions: 0 */
  return PS_OK;
}

/* cudaDeviceCanAccessPeer: every pair of distinct devices can, unless the
 * peer_capable option is 0; a device and itself: 0, as CUDA says. */
static int sim_device_can_access_peer(void *ctx, int dev, int peer, int *can) {
  sim_ctx *c = ctx;
  if (!sim_valid_dev(c, dev) || !sim_valid_dev(c, peer)) return PS_ERR_INVALID_DEVICE;
  if (!can) return PS_ERR_INVALID_VALUE;
  *can = dev != peer && c->peer_capable;
  return PS_OK;
}

/* cudaDeviceEnablePeerAccess(peer) with dev current: dev's kernels may
 * reach peer's cudaMalloc'd memory (pools keep their own access).
 * Measured (docs/calibration/h200x2-2026-11-27-issue12.log): out of range
 * cudaErrorInvalidDevice, the same device cudaErrorPeerAccessUnsupported,
 * twice cudaErrorPeerAccessAlreadyEnabled. */
static int sim_device_enable_peer(void *ctx, int dev, int peer) {
  sim_ctx *c = ctx;
  if (!sim_valid_dev(c, dev) || !sim_valid_dev(c, peer)) return PS_ERR_INVALID_DEVICE;
  if (dev == peer || !c->peer_capable) return PS_ERR_PEER_UNSUPPORTED;
  if (c->peer_on[dev][peer]) return PS_ERR_PEER_ALREADY_ENABLED;
  sim_host_cost(c, c->prof.api_ns);
  c->peer_on[dev][peer] = 1;
  return PS_OK;
}

/* Whether dev may reach peer's cudaMalloc'd memory: itself always. */
static int sim_device_peer_enabled(void *ctx, int dev, int peer, int *on) {
  sim_ctx *c = ctx;
  if (!sim_valid_dev(c, dev) || !sim_valid_dev(c, peer)) return PS_ERR_INVALID_DEVICE;
  if (!on) return PS_ERR_INVALID_VALUE;
  *on = dev == peer || c->peer_on[dev][peer];
  return PS_OK;
}

/* A device's kernels reach host memory (pinned, registered; host pools
 * through their access), its own cudaMalloc'd memory and a peer's once
 * peer access is enabled, and pool memory its pool grants it. */
int sim_reachable(const sim_ctx *c, const sim_map *m, int dev) {
  if (m->kind == SIM_MAP_ARENA) return sim_pool_reaches(m->owner, dev);
  if (m->space == SIM_HOST_SPACE) return 1;
  return m->dev == dev || c->peer_on[dev][m->dev];
}

/* ---- plain allocations ---- */

/* Maps size bytes of kind k; size 0 gives address 0. */
static int map_plain(sim_ctx *c, sim_space sp, sim_map_kind k, uint64_t size,
                     ps_addr *out) {
  *out = 0;
  if (size == 0) return PS_OK;
  double cap = sp == SIM_DEVICE_SPACE ? c->prof.memory : c->prof.host_memory;
  uint64_t have = sp == SIM_DEVICE_SPACE ? c->mem.dev_mapped[c->dev] : c->mem.mapped[sp];
  if ((double)(have + size) > cap) return PS_ERR_MEMORY_ALLOCATION;
  sim_map *m = sim_mem_map(&c->mem, sp, sp == SIM_DEVICE_SPACE ? c->dev : 0, size, k);
  if (!m) return PS_ERR_MEMORY_ALLOCATION;
  *out = m->base;
  return PS_OK;
}

/* The mapping of kind k that starts at a (a != 0), or NULL. */
static sim_map *plain_at(sim_ctx *c, sim_map_kind k, ps_addr a) {
  sim_map *m = sim_mem_find(&c->mem, a);
  return m && m->base == a && m->kind == k ? m : NULL;
}

/* cudaMalloc: whole malloc_granularity units of the device; costs
 * malloc_ns plus malloc_ns_per_gib (measured: curves). */
static int sim_malloc_device(void *ctx, uint64_t size, ps_addr *out) {
  sim_ctx *c = ctx;
  if (!out) return PS_ERR_INVALID_VALUE;
  uint64_t r = sim_round_up(size, (uint64_t)c->prof.malloc_granularity);
  sim_cost(c, c->prof.malloc_ns, c->prof.malloc_ns_per_gib, r);
  if (r < size) return PS_ERR_MEMORY_ALLOCATION;
  return map_plain(c, SIM_DEVICE_SPACE, SIM_MAP_MALLOC, r, out);
}

/* cudaFree: costs free_ns plus free_ns_per_gib of what it unmaps, and
 * waits for the device first, as cudaFree does. That wait does not retire
 * pool frees nor release pool memory (measured), unless
 * release_on_cuda_free. */
static int sim_free_device(void *ctx, ps_addr a) {
  sim_ctx *c = ctx;
  sim_map *m = a ? plain_at(c, SIM_MAP_MALLOC, a) : NULL;
  if (a && !m) return PS_ERR_INVALID_VALUE;
  sim_cost(c, c->prof.free_ns, c->prof.free_ns_per_gib, m ? m->size : 0);
  sim_sync_device(c, c->prof.release_on_cuda_free != 0);
  if (m) sim_mem_unmap(&c->mem, m);
  return PS_OK;
}

/* cudaHostAlloc: pins every page, so it costs by size. */
static int sim_alloc_pinned(void *ctx, uint64_t size, unsigned flags, ps_addr *out) {
  sim_ctx *c = ctx;
  if (!out || flags & ~(unsigned)(PS_PINNED_PORTABLE | PS_PINNED_MAPPED | PS_PINNED_WRITE_COMBINED))
    return PS_ERR_INVALID_VALUE;
  sim_cost(c, c->prof.alloc_api_ns, c->prof.pinned_alloc_ns_per_gib, size);
  return map_plain(c, SIM_HOST_SPACE, SIM_MAP_PINNED, size, out);
}

static int sim_free_pinned(void *ctx, ps_addr a) {
  sim_ctx *c = ctx;
  if (a == 0) return PS_OK;
  sim_map *m = plain_at(c, SIM_MAP_PINNED, a);
  if (!m) return PS_ERR_INVALID_VALUE;
  sim_cost(c, c->prof.pinned_free_ns, c->prof.pinned_free_ns_per_gib, m->size);
  sim_mem_unmap(&c->mem, m);
  return PS_OK;
}

/* malloc: its pages are not touched until something writes or pins them. */
static int sim_alloc_pageable(void *ctx, uint64_t size, ps_addr *out) {
  sim_ctx *c = ctx;
  if (!out) return PS_ERR_INVALID_VALUE;
  sim_cost(c, c->prof.pageable_alloc_ns, c->prof.pageable_alloc_ns_per_gib, size);
  return map_plain(c, SIM_HOST_SPACE, SIM_MAP_PAGEABLE, size, out);
}

/* free: costs by the pages that were touched (they go back to the OS). */
static int sim_free_pageable(void *ctx, ps_addr a) {
  sim_ctx *c = ctx;
  if (a == 0) return PS_OK;
  sim_map *m = plain_at(c, SIM_MAP_PAGEABLE, a);
  if (!m) return PS_ERR_INVALID_VALUE;
  sim_cost(c, c->prof.pageable_free_ns, c->prof.pageable_free_ns_per_gib, m->resident);
  sim_mem_unmap(&c->mem, m);
  return PS_OK;
}

/* The ns the host spends faulting in the pages of [a, a+n) of mapping m
 * that are not yet: pageable_touch_ns_per_gib of pageable memory; other
 * memory is resident. They count as touched from now on. */
static double touch_ns(sim_ctx *c, sim_map *m, ps_addr a, uint64_t n) {
  if (m->kind != SIM_MAP_PAGEABLE) return 0;
  return (double)sim_mem_touch(m, a - m->base, n) / GIB_D * c->prof.pageable_touch_ns_per_gib;
}

/* cudaHostRegister of [a, a+size) inside one pageable buffer: faults in
 * the pages not yet touched, then pins them all. */
static int sim_host_register(void *ctx, ps_addr a, uint64_t size) {
  sim_ctx *c = ctx;
  sim_map *m = sim_mem_range(&c->mem, a, size);
  if (!m || m->kind != SIM_MAP_PAGEABLE) return PS_ERR_INVALID_VALUE;
  if (m->registered) return PS_ERR_ALREADY_REGISTERED;
  sim_host_cost(c, touch_ns(c, m, a, size));
  sim_cost(c, c->prof.host_register_ns, c->prof.host_register_ns_per_gib, size);
  m->registered = 1, m->reg_size = size;
  return PS_OK;
}

static int sim_host_unregister(void *ctx, ps_addr a) {
  sim_ctx *c = ctx;
  sim_map *m = sim_mem_find(&c->mem, a);
  if (!m || m->kind != SIM_MAP_PAGEABLE || !m->registered) return PS_ERR_NOT_REGISTERED;
  sim_cost(c, c->prof.host_unregister_ns, c->prof.host_unregister_ns_per_gib, m->reg_size);
  m->registered = 0, m->reg_size = 0;
  return PS_OK;
}

/* ---- copies and kernels ---- */

typedef enum { CLS_DEVICE, CLS_PINNED, CLS_PAGEABLE } mem_class;

/* How a copy sees a mapping: device memory, page-locked host memory
 * (pinned, registered, host pools) or pageable host memory. */
static mem_class classify(const sim_map *m) {
  if (m->space == SIM_DEVICE_SPACE) return CLS_DEVICE;
  if (m->kind == SIM_MAP_PAGEABLE && !m->registered) return CLS_PAGEABLE;
  return CLS_PINNED;
}

static int64_t ns_for(double bytes, double gbps, double fixed) {
  return (int64_t)llround(fixed + bytes / gbps);   /* GB/s = bytes per ns */
}

/* Duration of copying n bytes between d and s; *sync when the host waits
 * for it (pageable memory involved). */
static int64_t copy_ns(const sim_ctx *c, mem_class d, mem_class s, uint64_t n,
                       int *sync) {
  const sim_profile *p = &c->prof;
  *sync = d == CLS_PAGEABLE || s == CLS_PAGEABLE;
  double bw;
  if (d == CLS_DEVICE && s == CLS_DEVICE) bw = p->bw_d2d;
  else if (d != CLS_DEVICE && s != CLS_DEVICE) bw = p->bw_h2h;
  else if (!*sync) bw = p->bw_pinned;
  else bw = d == CLS_DEVICE ? p->bw_pageable_h2d : p->bw_pageable_d2h;
  return ns_for((double)n, bw, p->copy_ns);
}

/* Enqueues an op on s whose effect lands at its end; with host_sync the
 * host waits for its end (without learning anything else). */
static int enqueue_op(sim_ctx *c, ps_stream *s, int64_t dur, sim_op *op,
                      int host_sync) {
  sim_host_cost(c, c->prof.api_ns);
  op->end = sim_enqueue(c, s, dur);
  if (op->kind != SIM_OP_NONE && !sim_push_op(c, op)) { free(op->data); return PS_ERR_MEMORY_ALLOCATION; }
  if (host_sync) sim_host_advance(c, op->end);
  else sim_host_advance(c, c->host_now);   /* lands zero-length work */
  return PS_OK;
}

/* Whether a copy on a stream of device dev (made current, as poolsh's
 * cuda backend does) may touch m: pool memory only where its pool grants
 * dev access; with that device current the driver refuses the copy with
 * cudaErrorInvalidValue (measured on two H200s, 2026-11-27: poolsh's own
 * copies; with another device current the same copy went through). */
static int copy_reaches(const sim_map *m, ps_addr a, uint64_t n, int dev, int write) {
  if (m->kind == SIM_MAP_VMM) return sim_vmm_reaches(m, a, n, dev, write);
  return m->kind != SIM_MAP_ARENA || sim_pool_reaches(m->owner, dev);
}

/* cudaMemcpyAsync(cudaMemcpyDefault) of n bytes; both ranges mapped. */
static int sim_copy(void *ctx, ps_addr dst, ps_addr src, uint64_t n, ps_stream *s) {
  sim_ctx *c = ctx;
  ps_stream *st = sim_stream_resolve(c, s);
  if (!st) return PS_ERR_INVALID_RESOURCE;
  if (n == 0) return PS_OK;
  sim_map *d = sim_mem_range(&c->mem, dst, n), *sm = sim_mem_range(&c->mem, src, n);
  if (!d || !sm) return PS_ERR_INVALID_VALUE;
  if (!copy_reaches(d, dst, n, st->dev, 1) || !copy_reaches(sm, src, n, st->dev, 0))
    return PS_ERR_INVALID_VALUE;
  int sync;
  int64_t dur = copy_ns(c, classify(d), classify(sm), n, &sync);
  dur += (int64_t)llround(touch_ns(c, d, dst, n));   /* faults as it lands */
  sim_op op = { .kind = SIM_OP_COPY, .dst = dst, .src = src, .n = n };
  return enqueue_op(c, st, dur, &op, sync);
}

/* A kernel over [a, a+n): launch latency plus n bytes at fill bandwidth. */
static int kernel(sim_ctx *c, ps_addr a, uint64_t n, ps_stream *s, sim_op *op) {
  ps_stream *st = sim_stream_resolve(c, s);
  if (!st) return PS_ERR_INVALID_RESOURCE;
  sim_map *m = n ? sim_mem_range(&c->mem, a, n) : NULL;
  if (n && !m) return PS_ERR_INVALID_VALUE;
  /* A GPU faults (cudaErrorIllegalAddress, sticky); the sim refuses the
   * launch with that code and goes on. */
  if (m && m->kind == SIM_MAP_VMM) {   /* every byte mapped, readable (a fill: writable) */
    if (!sim_vmm_reaches(m, a, n, st->dev, op->kind == SIM_OP_FILL)) return PS_ERR_ILLEGAL_ADDRESS;
  } else if (m && !sim_reachable(c, m, st->dev)) {
    return PS_ERR_ILLEGAL_ADDRESS;
  }
  int64_t dur = ns_for((double)n, c->prof.bw_fill, c->prof.launch_ns);
  return enqueue_op(c, st, dur, op, 0);
}

static int sim_fill(void *ctx, ps_addr a, uint64_t n, int byte, ps_stream *s) {
  sim_op op = { .kind = n ? SIM_OP_FILL : SIM_OP_NONE, .dst = a, .n = n,
                .byte = (uint8_t)byte };
  return kernel(ctx, a, n, s, &op);
}

/* Touches memory: takes time, changes nothing. */
static int sim_touch(void *ctx, ps_addr a, uint64_t n, ps_stream *s) {
  sim_op op = { .kind = SIM_OP_NONE };
  return kernel(ctx, a, n, s, &op);
}

/* A checking kernel on s, then the host waits for s and checks the bytes
 * as they are when s's work is done. */
static int sim_verify(void *ctx, ps_addr a, uint64_t n, int byte, ps_stream *s,
                      int64_t *first_bad) {
  sim_ctx *c = ctx;
  if (!first_bad) return PS_ERR_INVALID_VALUE;
  sim_op op = { .kind = SIM_OP_NONE };
  int st = kernel(c, a, n, s, &op);
  if (st != PS_OK) return st;
  st = sim_sync_stream(c, sim_stream_resolve(c, s));
  if (st != PS_OK) return st;   /* interrupted: the kernel stays queued */
  *first_bad = -1;
  if (n == 0) return PS_OK;
  sim_map *m = sim_mem_range(&c->mem, a, n);  /* a sync may have released it */
  if (!m) return PS_ERR_ILLEGAL_ADDRESS;
  *first_bad = sim_mem_verify(m, a - m->base, n, (uint8_t)byte);
  return PS_OK;
}

static int sim_spin(void *ctx, ps_stream *s, double ms) {
  sim_ctx *c = ctx;
  ps_stream *st = sim_stream_resolve(c, s);
  if (!st) return PS_ERR_INVALID_RESOURCE;
  if (!(ms >= 0) || ms > 1e12) return PS_ERR_INVALID_VALUE;
  int64_t dur = (int64_t)llround(ms * 1e6);
  if (!sim_enqueue_fits(c, st, dur)) return PS_ERR_CLOCK_END;
  sim_op op = { .kind = SIM_OP_NONE };
  return enqueue_op(c, st, dur, &op, 0);
}

/* ---- host access ---- */

/* The mapping of [a, a+n) when it is memory of kind k, else NULL. */
static sim_map *kind_range(sim_ctx *c, ps_kind k, ps_addr a, uint64_t n) {
  static const sim_map_kind want[] = { SIM_MAP_ARENA, SIM_MAP_MALLOC,
                                       SIM_MAP_PINNED, SIM_MAP_PAGEABLE, SIM_MAP_VMM };
  sim_map *m = sim_mem_range(&c->mem, a, n);
  if (!m || (unsigned)k > PS_KIND_VMM || m->kind != want[k]) return NULL;
  return m;
}

/* Device-side access: a copy to/from a pageable host buffer on s, then
 * the host waits for s. Host-side access happens at once. */
static int device_access(sim_ctx *c, ps_kind k, sim_map *m, ps_addr a, uint64_t n,
                         ps_stream *s, sim_op *op) {
  if (k != PS_KIND_POOL && k != PS_KIND_MALLOC && k != PS_KIND_VMM) return PS_OK;
  ps_stream *st = sim_stream_resolve(c, s);
  if (!st) { free(op->data); return PS_ERR_INVALID_RESOURCE; }
  if (!copy_reaches(m, a, n, st->dev, op->kind == SIM_OP_WRITE)) {
    free(op->data);
    return PS_ERR_INVALID_VALUE;
  }
  int sync;
  int64_t dur = copy_ns(c, classify(m), CLS_PAGEABLE, n, &sync);
  int r = enqueue_op(c, st, dur, op, 0);
  return r == PS_OK ? sim_sync_stream(c, st) : r;
}

static int sim_read(void *ctx, ps_kind k, ps_addr src, void *dst, uint64_t n,
                    ps_stream *s) {
  sim_ctx *c = ctx;
  if (n == 0) return PS_OK;
  sim_map *m = kind_range(c, k, src, n);
  if (!m || !dst) return PS_ERR_INVALID_VALUE;
  sim_op op = { .kind = SIM_OP_NONE };
  int st = device_access(c, k, m, src, n, s, &op);
  if (st != PS_OK) return st;
  m = sim_mem_range(&c->mem, src, n);   /* a sync may have released it */
  if (!m) return PS_ERR_ILLEGAL_ADDRESS;
  sim_mem_read(m, src - m->base, dst, n);
  return PS_OK;
}

static int sim_write(void *ctx, ps_kind k, ps_addr dst, const void *src,
                     uint64_t n, ps_stream *s) {
  sim_ctx *c = ctx;
  if (n == 0) return PS_OK;
  sim_map *m = kind_range(c, k, dst, n);
  if (!m || !src) return PS_ERR_INVALID_VALUE;
  if (k == PS_KIND_PINNED || k == PS_KIND_PAGEABLE) {
    sim_host_advance(c, c->host_now);
    sim_host_cost(c, touch_ns(c, m, dst, n));
    sim_mem_write(m, dst - m->base, src, n);
    return PS_OK;
  }
  sim_op op = { .kind = SIM_OP_WRITE, .dst = dst, .n = n, .data = malloc(n) };
  if (!op.data) return PS_ERR_MEMORY_ALLOCATION;
  memcpy(op.data, src, n);
  return device_access(c, k, m, dst, n, s, &op);
}

/* ---- options ---- */

static int is_fault_key(const char *key) {
  return key && strncmp(key, "fault.", 6) == 0;
}

/* The machine's options, beside the device profile: "devices" (how many
 * the sim models) and "peer_capable" (0: no pair can access each other).
 * They are not profile options (a machine's, not a device's) and
 * poolsh.reset() does not keep them. */
static int is_machine_key(const char *key) {
  return key && (strcmp(key, "devices") == 0 || strcmp(key, "peer_capable") == 0);
}

/* Whether anything but the default pools and the legacy stream exists or
 * holds memory: then the number of devices cannot change. */
static int sim_busy(const sim_ctx *c) {
  if (c->mem.mapped[SIM_DEVICE_SPACE] || c->mem.mapped[SIM_HOST_SPACE]) return 1;
  if (c->live.n) return 1;
  size_t defaults = 0;
  for (int d = 0; d < SIM_MAX_DEVICES; d++) defaults += c->default_pool[d] != NULL;
  return c->pools.nlive > defaults;
}

static int machine_set(sim_ctx *c, const char *key, double v) {
  if (strcmp(key, "peer_capable") == 0) {
    if (v != 0 && v != 1) return PS_ERR_INVALID_VALUE;
    c->peer_capable = (int)v;
    if (!c->peer_capable) memset(c->peer_on, 0, sizeof c->peer_on);
    return PS_OK;
  }
  if (!(v >= 1 && v <= SIM_MAX_DEVICES) || v != (double)(int)v || v <= c->dev)
    return PS_ERR_INVALID_VALUE;
  if ((int)v != c->ndev && sim_busy(c)) return PS_ERR_NOT_SUPPORTED;
  c->ndev = (int)v;
  memset(c->peer_on, 0, sizeof c->peer_on);
  return PS_OK;
}

static int sim_option_get(void *ctx, const char *key, double *v) {
  if (is_fault_key(key)) return sim_fault_option_get(ctx, key, v);
  if (is_machine_key(key)) {
    if (!v) return PS_ERR_INVALID_VALUE;
    const sim_ctx *c = ctx;
    *v = strcmp(key, "devices") == 0 ? c->ndev : c->peer_capable;
    return PS_OK;
  }
  return sim_profile_get(&((sim_ctx *)ctx)->prof, key, v);
}

/* Sets a profile option; "memory" and "host_memory" only while nothing is
 * mapped in any space (PS_ERR_NOT_SUPPORTED after). "fault.*" keys arm
 * faults (sim_fault.c); they are not profile options. */
static int sim_option_set(void *ctx, const char *key, double v) {
  sim_ctx *c = ctx;
  double old;
  if (is_fault_key(key)) return sim_fault_option_set(c, key, v);
  if (is_machine_key(key)) return machine_set(c, key, v);
  if (sim_profile_get(&c->prof, key, &old) != PS_OK) return PS_ERR_INVALID_VALUE;
  if ((strcmp(key, "memory") == 0 || strcmp(key, "host_memory") == 0) &&
      (c->mem.mapped[SIM_DEVICE_SPACE] || c->mem.mapped[SIM_HOST_SPACE]))
    return PS_ERR_NOT_SUPPORTED;
  return sim_profile_set(&c->prof, key, v);
}

static int sim_option_names(void *ctx, const char **names, int max) {
  return sim_profile_names(names, max);
}

int sim_stream_peek(void *ctx, ps_stream *s, int *idle);   /* sim_peek.c */
int sim_stream_last_span(void *ctx, ps_stream *s, double *queued_ms, double *start_ms,
                         double *end_ms);
int sim_pool_last_map(void *ctx, ps_pool *p, ps_addr *addr, uint64_t *size);   /* sim_pool.c */
int sim_pool_truth(void *ctx, ps_pool *p, void (*each)(void *, const ps_truth *), void *ud);

/* ---- the ops table ---- */

/* Each op of SIM_FAULT_OPS first counts its call and returns a fault's
 * error when one is due, before it changes anything (no time passes). */
#define COUNTED(name, params, args) \
  static int counted_##name params { \
    int st = sim_fault_check((sim_ctx *)ctx, SIM_F_##name); \
    if (st != PS_OK) return st; \
    sim_streams_due((sim_ctx *)ctx); \
    return sim_##name args; \
  }
SIM_FAULT_OPS(COUNTED)
#undef COUNTED
#define SLOT(name, params, args) .name = counted_##name,

const ps_backend ps_backend_sim = {
  .name = "sim",
  .probe = sim_probe, .open = sim_open, .close = sim_close,
  .error_name = sim_error_name, .error_string = sim_error_string,
  SIM_FAULT_OPS(SLOT)
  .stream_peek = sim_stream_peek,
  .stream_last_span = sim_stream_last_span,
  .pool_last_map = sim_pool_last_map, .pool_truth = sim_pool_truth,
  .device_can_access_peer = sim_device_can_access_peer,
  .device_enable_peer = sim_device_enable_peer,
  .device_peer_enabled = sim_device_peer_enabled,
  .pool_get_access = sim_pool_get_access,
  .pool_set_access = sim_pool_set_access,
  .now = sim_now,
  .option_get = sim_option_get, .option_set = sim_option_set,
  .option_names = sim_option_names,
  .vmm_granularity = sim_vmm_granularity, .vmm_reserve = sim_vmm_reserve,
  .vmm_free = sim_vmm_free, .vmm_create = sim_vmm_create, .vmm_release = sim_vmm_release,
  .vmm_map = sim_vmm_map, .vmm_unmap = sim_vmm_unmap, .vmm_set_access = sim_vmm_set_access,
};
#undef SLOT
