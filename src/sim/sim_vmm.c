/*
 * sim_vmm.c: the sim's model of CUDA's virtual memory management (the
 * driver's cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess,
 * cuMemUnmap, cuMemRelease, cuMemAddressFree).
 *
 * A reservation is device VA with nothing behind it (a SIM_MAP_VMM_RANGE
 * map). A handle is physical memory: its own 64 KiB pages, counted against
 * its device's (or the host's) memory from create until it is released
 * and no longer mapped. A mapping is a SIM_MAP_VMM map inside a
 * reservation whose pages are the handle's, so copies, fills and checks
 * through any mapping reach the handle's bytes, and two mappings of one
 * handle show the same bytes. Every refusal is the code the H200 gives
 * (tests/data/vmm/h200-probe.json); costs are host time from the profile's
 * vmm_* keys. Device work still queued when a mapping goes lands on
 * whatever is mapped at its addresses when it ends (nothing, or a later
 * mapping), as op_apply does for pools.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_model.h"

#define MIB_D (1024.0 * 1024.0)

struct ps_vmm_handle {
  sim_space space;
  int dev;
  uint64_t size, npages;
  sim_page *pages;
  uint64_t maps;       /* mappings of it */
  int released;        /* cuMemRelease'd: goes with its last mapping */
};

/* A mapping's own state: its handle, where in it, and each device's access. */
typedef struct sim_vmm_mapping {
  ps_vmm_handle *h;
  uint64_t off;
  uint8_t access[SIM_MAX_DEVICES];   /* ps_access */
} sim_vmm_mapping;

/* Reservations (by base) and every handle not yet gone (keys: their
 * addresses; value 1 while not released). */
struct sim_vmm {
  sim_table ranges;    /* base -> size */
  sim_table handles;
};

/* The context's VMM state, made on first use; NULL when out of memory. */
static sim_vmm *state(sim_ctx *c) {
  if (!c->vmm) c->vmm = calloc(1, sizeof *c->vmm);
  return c->vmm;
}

static uint64_t gran(const sim_ctx *c) { return (uint64_t)c->prof.vmm_granularity; }

static uint64_t key_of(const ps_vmm_handle *h) { return (uint64_t)(uintptr_t)h; }

/* The host's cost of a VMM call, us from the profile. */
static void cost_us(sim_ctx *c, double us) { sim_host_cost(c, us * 1000.0); }

/* Frees h's pages and stops counting its memory. */
static void handle_gone(sim_ctx *c, ps_vmm_handle *h) {
  sim_mem_account(&c->mem, h->space, h->dev, -(int64_t)h->size);
  for (uint64_t i = 0; i < h->npages; i++) free(h->pages[i].data);
  free(h->pages);
  if (c->vmm) sim_table_remove(&c->vmm->handles, key_of(h));
  free(h);
}

/* Whether h is a handle created here and not released. */
static int handle_live(sim_ctx *c, ps_vmm_handle *h) {
  sim_slot *s = h && c->vmm ? sim_table_find(&c->vmm->handles, key_of(h)) : NULL;
  return s && s->val == 1;
}

/* The reservation holding all of [a, a + n), or NULL. Reservations are
 * found by walking back from a's map to the nearest VMM_RANGE map. */
static sim_map *range_of(sim_ctx *c, ps_addr a, uint64_t n) {
  size_t left;
  sim_map *const *from = sim_mem_from(&c->mem, a + 1, &left);
  sim_map *const *first = from - (c->mem.n - left);
  for (sim_map *const *p = from; p > first; p--) {
    sim_map *x = p[-1];
    if (x->kind == SIM_MAP_VMM) continue;
    if (x->kind != SIM_MAP_VMM_RANGE) return NULL;
    return a - x->base < x->va && n <= x->va - (a - x->base) ? x : NULL;
  }
  return NULL;
}

/* cuMemGetAllocationGranularity: the profile's vmm_granularity, minimum
 * and recommended alike (the H200 gives 2 MiB for both, device and host). */
int sim_vmm_granularity(void *ctx, ps_location loc, int dev, int recommended,
                        uint64_t *bytes) {
  sim_ctx *c = ctx;
  if (!bytes || (loc != PS_LOCATION_DEVICE && loc != PS_LOCATION_HOST))
    return PS_ERR_INVALID_VALUE;
  if (loc == PS_LOCATION_DEVICE && !sim_valid_dev(c, dev)) return PS_ERR_INVALID_DEVICE;
  if (loc == PS_LOCATION_HOST && dev != 0) return PS_ERR_INVALID_VALUE;
  *bytes = gran(c);
  return PS_OK;
}

/* cuMemAddressReserve: size a non-zero multiple of the granularity, align
 * 0 (the granularity) or a power of two; VA only, any size the address
 * space holds (more than the device's memory is fine). */
int sim_vmm_reserve(void *ctx, uint64_t size, uint64_t align, ps_addr *addr) {
  sim_ctx *c = ctx;
  sim_vmm *v = state(c);
  if (!v) return PS_ERR_MEMORY_ALLOCATION;
  if (!addr || size == 0 || size % gran(c) || (align & (align - 1)))
    return PS_ERR_INVALID_VALUE;
  if (align < gran(c)) align = gran(c);
  sim_host_cost(c, c->prof.api_ns);
  sim_map *m = sim_mem_reserve_aligned(&c->mem, size, align);
  if (!m) return PS_ERR_MEMORY_ALLOCATION;
  if (!sim_table_put(&v->ranges, m->base, (int64_t)size)) {
    sim_mem_unmap(&c->mem, m);
    return PS_ERR_MEMORY_ALLOCATION;
  }
  *addr = m->base;
  return PS_OK;
}

/* cuMemAddressFree of a whole reservation: refused while any mapping
 * remains in it. */
int sim_vmm_free(void *ctx, ps_addr addr, uint64_t size) {
  sim_ctx *c = ctx;
  sim_slot *s = c->vmm && addr ? sim_table_find(&c->vmm->ranges, addr) : NULL;
  if (!s || (uint64_t)s->val != size) return PS_ERR_INVALID_VALUE;
  size_t left;
  sim_map *const *p = sim_mem_from(&c->mem, addr, &left);
  sim_map *r = NULL;
  for (size_t i = 0; i < left && p[i]->base < addr + size; i++) {
    if (p[i]->kind == SIM_MAP_VMM) return PS_ERR_INVALID_VALUE;
    if (p[i]->kind == SIM_MAP_VMM_RANGE && p[i]->base == addr) r = p[i];
  }
  if (!r) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.api_ns);
  sim_table_remove(&c->vmm->ranges, addr);
  sim_mem_unmap(&c->mem, r);
  return PS_OK;
}

/* cuMemCreate: size a non-zero multiple of the granularity, of device
 * dev's memory or the host's (dev 0); beyond what is left of it,
 * cudaErrorMemoryAllocation. Contents read 0. */
int sim_vmm_create(void *ctx, ps_location loc, int dev, uint64_t size, ps_vmm_handle **out) {
  sim_ctx *c = ctx;
  sim_vmm *v = state(c);
  if (!v) return PS_ERR_MEMORY_ALLOCATION;
  if (!out || size == 0 || size % gran(c)) return PS_ERR_INVALID_VALUE;
  if (loc == PS_LOCATION_DEVICE && !sim_valid_dev(c, dev)) return PS_ERR_INVALID_DEVICE;
  if (loc == PS_LOCATION_HOST && dev != 0) return PS_ERR_INVALID_VALUE;
  if (loc != PS_LOCATION_DEVICE && loc != PS_LOCATION_HOST) return PS_ERR_INVALID_VALUE;
  cost_us(c, c->prof.vmm_create_us);
  sim_space sp = loc == PS_LOCATION_HOST ? SIM_HOST_SPACE : SIM_DEVICE_SPACE;
  double cap = sp == SIM_DEVICE_SPACE ? c->prof.memory : c->prof.host_memory;
  uint64_t have = sp == SIM_DEVICE_SPACE ? c->mem.dev_mapped[dev] : c->mem.mapped[sp];
  if ((double)have + (double)size > cap) return PS_ERR_MEMORY_ALLOCATION;
  ps_vmm_handle *h = calloc(1, sizeof *h);
  uint64_t np = size >> SIM_PAGE_SHIFT;
  sim_page *pages = h ? calloc(np, sizeof *pages) : NULL;
  if (!pages || !sim_table_put(&v->handles, key_of(h), 1)) {
    free(pages), free(h);
    return PS_ERR_MEMORY_ALLOCATION;
  }
  *h = (ps_vmm_handle){ .space = sp, .dev = sp == SIM_DEVICE_SPACE ? dev : 0, .size = size,
                        .npages = np, .pages = pages };
  sim_mem_account(&c->mem, sp, h->dev, (int64_t)size);
  *out = h;
  return PS_OK;
}

/* cuMemRelease: allowed while mapped (the memory goes with the last
 * mapping); a handle released already or never created:
 * cudaErrorInvalidValue. Costs a base plus a part per MiB. */
int sim_vmm_release(void *ctx, ps_vmm_handle *h) {
  sim_ctx *c = ctx;
  if (!handle_live(c, h)) return PS_ERR_INVALID_VALUE;
  cost_us(c, c->prof.vmm_release_us + c->prof.vmm_release_us_per_mib * ((double)h->size / MIB_D));
  h->released = 1;
  sim_table_find(&c->vmm->handles, key_of(h))->val = 0;
  if (h->maps == 0) handle_gone(c, h);
  return PS_OK;
}

/* cuMemMap of size bytes of h from offset at addr. The address and size
 * are checked first (unaligned, outside one reservation, over a mapping:
 * cudaErrorInvalidValue), then the handle's part (unaligned offset or
 * past its end: cudaErrorNotSupported). The new mapping has no access. */
int sim_vmm_map(void *ctx, ps_addr addr, uint64_t size, uint64_t offset, ps_vmm_handle *h) {
  sim_ctx *c = ctx;
  uint64_t g = gran(c);
  if (!handle_live(c, h) || size == 0 || addr % g || size % g) return PS_ERR_INVALID_VALUE;
  if (!range_of(c, addr, size)) return PS_ERR_INVALID_VALUE;
  if (offset % g || offset > h->size || size > h->size - offset) return PS_ERR_NOT_SUPPORTED;
  sim_vmm_mapping *vm = calloc(1, sizeof *vm);
  if (!vm) return PS_ERR_MEMORY_ALLOCATION;
  *vm = (sim_vmm_mapping){ .h = h, .off = offset };
  int overlap;
  sim_map *m = sim_mem_alias(&c->mem, addr, size, h->pages + (offset >> SIM_PAGE_SHIFT),
                             h->space, h->dev, vm, &overlap);
  if (!m) { free(vm); return overlap ? PS_ERR_INVALID_VALUE : PS_ERR_MEMORY_ALLOCATION; }
  cost_us(c, c->prof.vmm_map_us);
  h->maps++;
  return PS_OK;
}

/* Collects the mappings in [addr, addr + size) into *out (malloc'd, *n of
 * them, in address order). PS_ERR_INVALID_VALUE when one sticks out of
 * the span; with whole, also when any byte of it is not mapped. */
static int mappings_in(sim_ctx *c, ps_addr addr, uint64_t size, int whole, sim_map ***out,
                       size_t *n) {
  *out = NULL, *n = 0;
  if (size == 0 || addr + size < addr) return PS_ERR_INVALID_VALUE;
  sim_map *first = sim_mem_find(&c->mem, addr);
  if (first && first->kind == SIM_MAP_VMM && first->base != addr) return PS_ERR_INVALID_VALUE;
  size_t left, k = 0;
  sim_map *const *p = sim_mem_from(&c->mem, addr, &left);
  ps_addr at = addr;
  for (size_t i = 0; i < left && p[i]->base < addr + size; i++) {
    if (p[i]->kind != SIM_MAP_VMM) continue;
    if (p[i]->size > addr + size - p[i]->base) return PS_ERR_INVALID_VALUE;
    if (whole && p[i]->base != at) return PS_ERR_INVALID_VALUE;
    at = p[i]->base + p[i]->size;
    k++;
  }
  if (whole && at != addr + size) return PS_ERR_INVALID_VALUE;
  if (k == 0) return PS_OK;
  sim_map **v = malloc(k * sizeof *v);
  if (!v) return PS_ERR_MEMORY_ALLOCATION;
  for (size_t i = 0, j = 0; j < k; i++)
    if (p[i]->kind == SIM_MAP_VMM) v[j++] = p[i];
  *out = v, *n = k;
  return PS_OK;
}

/* cuMemUnmap: every whole mapping in [addr, addr + size) goes (none: a
 * success); part of a mapping: cudaErrorInvalidValue, nothing changed.
 * A released handle's memory goes with its last mapping. */
int sim_vmm_unmap(void *ctx, ps_addr addr, uint64_t size) {
  sim_ctx *c = ctx;
  sim_map **v;
  size_t n;
  if (size % gran(c) || addr % gran(c)) return PS_ERR_INVALID_VALUE;
  int st = mappings_in(c, addr, size, 0, &v, &n);
  if (st != PS_OK) return st;
  cost_us(c, c->prof.vmm_unmap_us);
  for (size_t i = 0; i < n; i++) {
    sim_vmm_mapping *vm = v[i]->owner;
    ps_vmm_handle *h = vm->h;
    sim_mem_unmap(&c->mem, v[i]);
    free(vm);
    if (--h->maps == 0 && h->released) handle_gone(c, h);
  }
  free(v);
  return PS_OK;
}

/* cuMemSetAccess for device dev over whole mappings covering all of
 * [addr, addr + size); anything else: cudaErrorInvalidValue. */
int sim_vmm_set_access(void *ctx, ps_addr addr, uint64_t size, int dev, ps_access a) {
  sim_ctx *c = ctx;
  if (!sim_valid_dev(c, dev)) return PS_ERR_INVALID_DEVICE;
  if (a != PS_ACCESS_NONE && a != PS_ACCESS_READ && a != PS_ACCESS_RW)
    return PS_ERR_INVALID_VALUE;
  sim_map **v;
  size_t n;
  int st = mappings_in(c, addr, size, 1, &v, &n);
  if (st != PS_OK) return st;
  if (n == 0) return PS_ERR_INVALID_VALUE;
  cost_us(c, c->prof.vmm_set_access_us);
  for (size_t i = 0; i < n; i++) ((sim_vmm_mapping *)v[i]->owner)->access[dev] = (uint8_t)a;
  free(v);
  return PS_OK;
}

/* Whether device dev may read (or, with write, write) through m. */
int sim_vmm_reaches(const sim_map *m, int dev, int write) {
  const sim_vmm_mapping *vm = m->owner;
  if (dev < 0 || dev >= SIM_MAX_DEVICES || !vm) return 0;
  return write ? vm->access[dev] == PS_ACCESS_RW : vm->access[dev] != PS_ACCESS_NONE;
}

/* Frees every mapping's state and every handle (close: the maps
 * themselves go with sim_mem_free_all). */
void sim_vmm_free_all(sim_ctx *c) {
  if (!c->vmm) return;
  for (size_t i = 0; i < c->mem.n; i++)
    if (c->mem.maps[i]->kind == SIM_MAP_VMM) {
      free(c->mem.maps[i]->owner);
      c->mem.maps[i]->owner = NULL;
    }
  sim_table *t = &c->vmm->handles;
  for (size_t i = 0; i < t->cap; i++)
    if (t->v[i].key) {
      ps_vmm_handle *h = (ps_vmm_handle *)(uintptr_t)t->v[i].key;
      for (uint64_t j = 0; j < h->npages; j++) free(h->pages[j].data);
      free(h->pages);
      free(h);
    }
  sim_table_free(&c->vmm->handles);
  sim_table_free(&c->vmm->ranges);
  free(c->vmm);
  c->vmm = NULL;
}
