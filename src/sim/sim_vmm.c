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

/* One mapping of a reservation: where (offset, size), what (its handle
 * from hoff), and each device's access. */
typedef struct vmm_mapping {
  uint64_t off, size, hoff;
  ps_vmm_handle *h;
  uint8_t access[SIM_MAX_DEVICES];   /* ps_access */
} vmm_mapping;

/* A reservation's mappings by offset (its map's owner). */
typedef struct vmm_res {
  vmm_mapping *v;
  size_t n, cap;
} vmm_res;

/* Every handle not yet gone (keys: their addresses; value 1 while not
 * released). */
struct sim_vmm {
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

/* The reservation holding all of [a, a + n) (n > 0), or NULL. */
static sim_map *range_of(sim_ctx *c, ps_addr a, uint64_t n) {
  sim_map *x = sim_mem_range(&c->mem, a, n);
  return x && x->kind == SIM_MAP_VMM ? x : NULL;
}

/* Index of the first mapping of r that ends after off. */
static size_t first_after(const vmm_res *r, uint64_t off) {
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (r->v[mid].off + r->v[mid].size <= off) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/* The mappings of r over [off, off + n): [*i, *j). PS_ERR_INVALID_VALUE
 * when one sticks out of the span; with whole, also when a byte of it is
 * not mapped. */
static int span(const vmm_res *r, uint64_t off, uint64_t n, int whole, size_t *i, size_t *j) {
  size_t k = first_after(r, off);
  uint64_t at = off;
  *i = k;
  for (; k < r->n && r->v[k].off < off + n; k++) {
    const vmm_mapping *x = &r->v[k];
    if (x->off < off || x->off + x->size > off + n) return PS_ERR_INVALID_VALUE;
    if (whole && x->off != at) return PS_ERR_INVALID_VALUE;
    at = x->off + x->size;
  }
  *j = k;
  if (whole && at != off + n) return PS_ERR_INVALID_VALUE;
  return PS_OK;
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
  if (!addr || size == 0 || size % gran(c) || (align & (align - 1)))
    return PS_ERR_INVALID_VALUE;
  if (align < gran(c)) align = gran(c);
  sim_host_cost(c, c->prof.api_ns);
  vmm_res *r = calloc(1, sizeof *r);
  sim_map *m = r ? sim_mem_reserve_aligned(&c->mem, size, align) : NULL;
  if (!m) { free(r); return PS_ERR_MEMORY_ALLOCATION; }
  m->owner = r;
  *addr = m->base;
  return PS_OK;
}

/* cuMemAddressFree of a whole reservation: refused while any mapping
 * remains in it. */
int sim_vmm_free(void *ctx, ps_addr addr, uint64_t size) {
  sim_ctx *c = ctx;
  sim_map *m = addr ? sim_mem_find(&c->mem, addr) : NULL;
  if (!m || m->kind != SIM_MAP_VMM || m->base != addr || m->size != size)
    return PS_ERR_INVALID_VALUE;
  vmm_res *r = m->owner;
  if (r->n) return PS_ERR_INVALID_VALUE;
  sim_host_cost(c, c->prof.api_ns);
  free(r->v);
  free(r);
  sim_mem_unmap(&c->mem, m);
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

/* cuMemMap of size bytes of h from offset at addr, in the H200's order: a
 * dead handle is cudaErrorInvalidValue; anything but the whole handle from
 * offset 0 is cudaErrorNotSupported (the driver's "offset must be zero",
 * and it refuses a smaller size too); then an unaligned address, a span
 * outside one reservation or over a mapping is cudaErrorInvalidValue. The
 * new mapping has no access. */
int sim_vmm_map(void *ctx, ps_addr addr, uint64_t size, uint64_t offset, ps_vmm_handle *h) {
  sim_ctx *c = ctx;
  uint64_t g = gran(c);
  if (!handle_live(c, h)) return PS_ERR_INVALID_VALUE;
  if (offset != 0 || size != h->size) return PS_ERR_NOT_SUPPORTED;
  if (addr % g || size % g) return PS_ERR_INVALID_VALUE;
  sim_map *m = range_of(c, addr, size);
  if (!m) return PS_ERR_INVALID_VALUE;
  vmm_res *r = m->owner;
  uint64_t off = addr - m->base;
  size_t i = first_after(r, off);
  if (i < r->n && r->v[i].off < off + size) return PS_ERR_INVALID_VALUE;   /* overlaps */
  if (!sim_reserve_one((void **)&r->v, &r->cap, r->n, sizeof *r->v, 4))
    return PS_ERR_MEMORY_ALLOCATION;
  cost_us(c, c->prof.vmm_map_us);
  memmove(r->v + i + 1, r->v + i, (r->n - i) * sizeof *r->v);
  r->v[i] = (vmm_mapping){ .off = off, .size = size, .hoff = offset, .h = h };
  r->n++;
  for (uint64_t p = 0; p < size >> SIM_PAGE_SHIFT; p++)
    m->alias[(off >> SIM_PAGE_SHIFT) + p] = &h->pages[(offset >> SIM_PAGE_SHIFT) + p];
  h->maps++;
  return PS_OK;
}

/* cuMemUnmap: every whole mapping in [addr, addr + size) goes (none, or
 * outside any reservation: a success); part of a mapping:
 * cudaErrorInvalidValue, nothing changed. A released handle's memory goes
 * with its last mapping. */
int sim_vmm_unmap(void *ctx, ps_addr addr, uint64_t size) {
  sim_ctx *c = ctx;
  if (size == 0 || size % gran(c) || addr % gran(c)) return PS_ERR_INVALID_VALUE;
  sim_map *m = sim_mem_find(&c->mem, addr);
  if (m && m->kind != SIM_MAP_VMM) return PS_ERR_INVALID_VALUE;
  cost_us(c, c->prof.vmm_unmap_us);
  if (!m) return PS_OK;
  vmm_res *r = m->owner;
  uint64_t off = addr - m->base;
  if (size > m->size - off) size = m->size - off;
  size_t i, j;
  int st = span(r, off, size, 0, &i, &j);
  if (st != PS_OK) return st;
  for (size_t k = i; k < j; k++) {
    vmm_mapping *x = &r->v[k];
    memset(m->alias + (x->off >> SIM_PAGE_SHIFT), 0, (x->size >> SIM_PAGE_SHIFT) * sizeof *m->alias);
    if (--x->h->maps == 0 && x->h->released) handle_gone(c, x->h);
  }
  if (j > i) memmove(r->v + i, r->v + j, (r->n - j) * sizeof *r->v);   /* r->v may be NULL */
  r->n -= j - i;
  return PS_OK;
}

/* cuMemSetAccess for device dev over whole mappings covering all of
 * [addr, addr + size); anything else: cudaErrorInvalidValue. */
int sim_vmm_set_access(void *ctx, ps_addr addr, uint64_t size, int dev, ps_access a) {
  sim_ctx *c = ctx;
  if (!sim_valid_dev(c, dev)) return PS_ERR_INVALID_DEVICE;
  if (a != PS_ACCESS_NONE && a != PS_ACCESS_READ && a != PS_ACCESS_RW)
    return PS_ERR_INVALID_VALUE;
  sim_map *m = size ? range_of(c, addr, size) : NULL;
  if (!m) return PS_ERR_INVALID_VALUE;
  vmm_res *r = m->owner;
  size_t i, j;
  int st = span(r, addr - m->base, size, 1, &i, &j);
  if (st != PS_OK) return st;
  cost_us(c, c->prof.vmm_set_access_us);
  for (size_t k = i; k < j; k++) r->v[k].access[dev] = (uint8_t)a;
  return PS_OK;
}

/* Whether device dev may read (or, with write, write) all of [a, a + n)
 * of reservation m: mapped, with access. */
int sim_vmm_reaches(const sim_map *m, ps_addr a, uint64_t n, int dev, int write) {
  const vmm_res *r = m->owner;
  if (dev < 0 || dev >= SIM_MAX_DEVICES || !r || n == 0) return n == 0;
  uint64_t off = a - m->base, at = off;
  for (size_t k = first_after(r, off); k < r->n && at < off + n; k++) {
    const vmm_mapping *x = &r->v[k];
    if (x->off > at) return 0;
    if (write ? x->access[dev] != PS_ACCESS_RW : x->access[dev] == PS_ACCESS_NONE) return 0;
    at = x->off + x->size;
  }
  return at >= off + n;
}

/* Frees every reservation's mappings and every handle (close: the maps
 * themselves go with sim_mem_free_all). */
void sim_vmm_free_all(sim_ctx *c) {
  for (size_t i = 0; i < c->mem.n; i++)
    if (c->mem.maps[i]->kind == SIM_MAP_VMM) {
      vmm_res *r = c->mem.maps[i]->owner;
      if (r) free(r->v);
      free(r);
      c->mem.maps[i]->owner = NULL;
    }
  if (!c->vmm) return;
  sim_table *t = &c->vmm->handles;
  for (size_t i = 0; i < t->cap; i++)
    if (t->v[i].key) {
      ps_vmm_handle *h = (ps_vmm_handle *)(uintptr_t)t->v[i].key;
      for (uint64_t j = 0; j < h->npages; j++) free(h->pages[j].data);
      free(h->pages);
      free(h);
    }
  sim_table_free(&c->vmm->handles);
  free(c->vmm);
  c->vmm = NULL;
}
