/*
 * sim_mem.c: the sim's address space and the contents of every mapping.
 *
 * Contents live in 64 KiB pages, each uniform (one byte value, no storage)
 * or materialized (malloc'd), so an 80 GiB device needs host RAM only for
 * the pages that hold arbitrary bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim_model.h"

#define VA_ALIGN ((uint64_t)2 << 20)
static const ps_addr VA_LO[2] = { 0x7f0000000000ull, 0x200000000ull };
/* Device VA spans about 7 EiB (below 2^63, so addresses stay positive Lua
 * integers): every pool reserves an arena as large as its limit (VA costs
 * nothing), so 10,000 pools of an 80 GiB device or 4,000 of a 1 PiB one
 * fit. */
static const ps_addr VA_HI[2] = { 0x7000000000000000ull, 0x7e0000000000ull };

/* Index of the first mapping whose base is >= a. */
static size_t lower(const sim_mem *m, ps_addr a) {
  size_t lo = 0, hi = m->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->maps[mid]->base < a) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/* The lowest free VA of `size` bytes in the space's range, or 0. The
 * scan starts at gap_lo, below which every address is taken, and moves it
 * up while it meets no gap: appending costs O(log n), and so does reusing
 * the range of the mapping unmapped last. */
static ps_addr find_gap(sim_mem *m, sim_space sp, uint64_t size) {
  ps_addr at = m->gap_lo[sp] > VA_LO[sp] ? m->gap_lo[sp] : VA_LO[sp];
  int seen = 0;
  for (size_t i = lower(m, at); i < m->n; i++) {
    const sim_map *x = m->maps[i];
    if (x->base >= VA_HI[sp]) break;
    if (x->base >= at && x->base - at >= size) return at;
    seen |= x->base > at;
    ps_addr end = sim_round_up(x->base + x->va, VA_ALIGN);
    if (end > at) at = end;
    if (!seen) m->gap_lo[sp] = at;
  }
  return at + size <= VA_HI[sp] ? at : 0;
}

/* Counts delta bytes of x mapped (or unmapped): in its space and, for
 * device memory, on its device. */
static void account(sim_mem *m, const sim_map *x, int64_t delta) {
  m->mapped[x->space] += (uint64_t)delta;
  if (x->space == SIM_DEVICE_SPACE) m->dev_mapped[x->dev] += (uint64_t)delta;
}

/* Maps `size` (> 0) bytes, contents zero, at the lowest free aligned VA of
 * the space. NULL when out of VA or host RAM; nothing changes then. */
sim_map *sim_mem_map(sim_mem *m, sim_space sp, int dev, uint64_t size, sim_map_kind k) {
  ps_addr base = find_gap(m, sp, size);
  if (!base || size == 0) return NULL;
  if (!sim_reserve_one((void **)&m->maps, &m->cap, m->n, sizeof *m->maps, 16)) return NULL;
  sim_map *x = calloc(1, sizeof *x);
  uint64_t np = (size + SIM_PAGE - 1) >> SIM_PAGE_SHIFT;
  sim_page *pages = x ? calloc(np, sizeof *pages) : NULL;
  if (!pages) { free(x); return NULL; }
  *x = (sim_map){ .base = base, .size = size, .va = size, .space = sp,
                  .kind = k, .dev = dev, .npages = np, .pages = pages };
  size_t i = lower(m, base);
  memmove(m->maps + i + 1, m->maps + i, (m->n - i) * sizeof *m->maps);
  m->maps[i] = x;
  m->n++;
  account(m, x, (int64_t)size);
  return x;
}

/* Reserves `va` (> 0) bytes of address space with nothing mapped yet: a
 * pool arena. sim_mem_resize maps (and unmaps) its first bytes. NULL when
 * out of VA or host RAM. */
sim_map *sim_mem_reserve(sim_mem *m, sim_space sp, int dev, uint64_t va, sim_map_kind k) {
  ps_addr base = va ? find_gap(m, sp, va) : 0;
  if (!base) return NULL;
  if (!sim_reserve_one((void **)&m->maps, &m->cap, m->n, sizeof *m->maps, 16)) return NULL;
  sim_map *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  *x = (sim_map){ .base = base, .size = 0, .va = va, .space = sp, .kind = k, .dev = dev };
  size_t i = lower(m, base);
  memmove(m->maps + i + 1, m->maps + i, (m->n - i) * sizeof *m->maps);
  m->maps[i] = x;
  m->n++;
  return x;
}

/* Maps size bytes of another process's shared memory (an imported IPC
 * block): contents at shm, not counted as mapped here. */
sim_map *sim_mem_attach(sim_mem *m, sim_space sp, uint64_t size, uint8_t *shm, sim_map_kind k) {
  ps_addr base = size ? find_gap(m, sp, size) : 0;
  if (!base) return NULL;
  if (!sim_reserve_one((void **)&m->maps, &m->cap, m->n, sizeof *m->maps, 16)) return NULL;
  sim_map *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  *x = (sim_map){ .base = base, .size = size, .va = size, .space = sp, .kind = k,
                  .shm = shm, .foreign = 1 };
  size_t i = lower(m, base);
  memmove(m->maps + i + 1, m->maps + i, (m->n - i) * sizeof *m->maps);
  m->maps[i] = x;
  m->n++;
  return x;
}

/* Gives the shared pages under [off, off+n) back to the system (they read
 * 0 after): whole host pages are punched out, the edges zeroed. */
static void shm_zero(uint8_t *shm, uint64_t off, uint64_t n) {
  const uint64_t pg = 4096;
  uint64_t lo = sim_round_up(off, pg), hi = (off + n) / pg * pg;
  if (hi > lo && madvise(shm + lo, hi - lo, MADV_REMOVE) == 0) {
    memset(shm + off, 0, lo - off);
    memset(shm + hi, 0, off + n - hi);
  } else {
    memset(shm + off, 0, n);
  }
}

/* Makes the first `size` bytes (<= x->va) of x mapped. Bytes that become
 * mapped read 0; bytes that stop being mapped lose their contents. 0 when
 * out of host RAM (x unchanged). */
int sim_mem_resize(sim_mem *m, sim_map *x, uint64_t size) {
  if (size > x->va) return 0;
  if (x->shm) {                          /* shared: the segment holds the bytes */
    if (size < x->size) shm_zero(x->shm, size, x->size - size);
    m->mapped[x->space] += size;
    m->mapped[x->space] -= x->size;
    x->size = size;
    return 1;
  }
  uint64_t np = (size + SIM_PAGE - 1) >> SIM_PAGE_SHIFT;
  for (uint64_t i = np; i < x->npages; i++) free(x->pages[i].data);
  if (np != x->npages) {
    sim_page *pg = np ? realloc(x->pages, np * sizeof *pg) : NULL;
    if (np && !pg) return 0;
    if (!np) free(x->pages);
    if (np > x->npages) memset(pg + x->npages, 0, (np - x->npages) * sizeof *pg);
    x->pages = pg, x->npages = np;
  }
  account(m, x, (int64_t)size - (int64_t)x->size);
  x->size = size;
  return 1;
}

/* Marks the n bytes at off inside x's mapped part as given back (unmap)
 * or mapped again: they stop or start counting as mapped, and contents
 * given back are lost (they read 0 when mapped again). */
void sim_mem_hole(sim_mem *m, sim_map *x, uint64_t off, uint64_t n, int unmap) {
  if (unmap) {
    sim_mem_fill(x, off, n, 0);
    account(m, x, -(int64_t)n);
  } else {
    account(m, x, (int64_t)n);
  }
}

/* Frees x and its pages (a VMM reservation's pages are its handles'). */
static void map_free(sim_map *x) {
  if (!x->alias)
    for (uint64_t i = 0; i < x->npages; i++) free(x->pages[i].data);
  free(x->pages);
  free(x->alias);
  free(x);
}

/* Unmaps x and frees its pages; its VA may be handed out again. A VMM
 * reservation counts nothing as mapped (its handles do). */
void sim_mem_unmap(sim_mem *m, sim_map *x) {
  size_t i = lower(m, x->base);
  if (i >= m->n || m->maps[i] != x) return;
  memmove(m->maps + i, m->maps + i + 1, (m->n - i - 1) * sizeof *m->maps);
  m->n--;
  if (!x->foreign && x->kind != SIM_MAP_VMM) account(m, x, -(int64_t)x->size);
  if (x->base < m->gap_lo[x->space]) m->gap_lo[x->space] = x->base;
  map_free(x);
}

/* Counts delta bytes of memory mapped that no map holds (VMM handles). */
void sim_mem_account(sim_mem *m, sim_space sp, int dev, int64_t delta) {
  sim_map x = { .space = sp, .dev = dev };
  account(m, &x, delta);
}

/* A VMM reservation: the lowest free device VA of size + align bytes,
 * its base rounded up to align; every page unmapped (alias NULL). */
sim_map *sim_mem_reserve_aligned(sim_mem *m, uint64_t size, uint64_t align) {
  if (size == 0 || align == 0 || size % SIM_PAGE || size > SIM_VMM_MAX_RESERVE ||
      align > ((uint64_t)1 << 40))
    return NULL;
  ps_addr at = find_gap(m, SIM_DEVICE_SPACE, size + align);
  if (!at) return NULL;
  if (!sim_reserve_one((void **)&m->maps, &m->cap, m->n, sizeof *m->maps, 16)) return NULL;
  sim_map *x = calloc(1, sizeof *x);
  uint64_t np = size >> SIM_PAGE_SHIFT;
  sim_page **alias = x ? calloc(np, sizeof *alias) : NULL;
  if (!alias) { free(x); return NULL; }
  *x = (sim_map){ .base = sim_round_up(at, align), .size = size, .va = size,
                  .space = SIM_DEVICE_SPACE, .kind = SIM_MAP_VMM, .npages = np,
                  .alias = alias };
  size_t i = lower(m, x->base);
  memmove(m->maps + i + 1, m->maps + i, (m->n - i) * sizeof *m->maps);
  m->maps[i] = x;
  m->n++;
  return x;
}

/* The mapping that contains a, or NULL. */
sim_map *sim_mem_find(const sim_mem *m, ps_addr a) {
  size_t i = lower(m, a + 1);
  if (i == 0) return NULL;
  sim_map *x = m->maps[i - 1];
  return a - x->base < x->size ? x : NULL;
}

/* The mapping that holds all of [a, a+n) (n > 0), or NULL. */
sim_map *sim_mem_range(const sim_mem *m, ps_addr a, uint64_t n) {
  sim_map *x = sim_mem_find(m, a);
  if (!x || n == 0 || n > x->size - (a - x->base)) return NULL;
  return x;
}

/* Unmaps everything. */
void sim_mem_free_all(sim_mem *m) {
  for (size_t i = 0; i < m->n; i++) map_free(m->maps[i]);
  free(m->maps);
  memset(m, 0, sizeof *m);
}

/* Page i of x: its own, or for a VMM reservation the handle's page
 * mapped there (NULL where nothing is mapped: writes there are lost and
 * reads give 0, as work that lands after an unmap). */
static inline sim_page *page_at(const sim_map *x, uint64_t i) {
  return x->alias ? x->alias[i] : &x->pages[i];
}

/* Gives page p storage holding its uniform value; 0 when out of RAM. */
static int materialize(sim_page *p) {
  if (p->data) return 1;
  p->data = malloc(SIM_PAGE);
  if (!p->data) return 0;
  memset(p->data, p->val, SIM_PAGE);
  return 1;
}

/* Sets [off, off+n) to v; whole pages become uniform. */
void sim_mem_fill(sim_map *d, uint64_t off, uint64_t n, uint8_t v) {
  if (d->shm) {
    if (v == 0 && n >= 2 * 4096) shm_zero(d->shm, off, n); else memset(d->shm + off, v, n);
    return;
  }
  while (n) {
    sim_page *p = page_at(d, off >> SIM_PAGE_SHIFT);
    uint64_t in = off & (SIM_PAGE - 1), k = SIM_PAGE - in;
    if (k > n) k = n;
    if (!p) {
    } else if (k == SIM_PAGE) {
      free(p->data);
      p->data = NULL, p->val = v;
    } else if (p->data || p->val != v) {
      if (materialize(p)) memset(p->data + in, v, k);
    }
    off += k, n -= k;
  }
}

/* Writes n bytes from src at off. */
void sim_mem_write(sim_map *d, uint64_t off, const uint8_t *src, uint64_t n) {
  if (d->shm) { memmove(d->shm + off, src, n); return; }
  while (n) {
    sim_page *p = page_at(d, off >> SIM_PAGE_SHIFT);
    uint64_t in = off & (SIM_PAGE - 1), k = SIM_PAGE - in;
    if (k > n) k = n;
    if (p && materialize(p)) memmove(p->data + in, src, k);   /* VMM aliases: src may be this page */
    off += k, n -= k, src += k;
  }
}

/* Reads n bytes at off into dst. */
void sim_mem_read(const sim_map *s, uint64_t off, uint8_t *dst, uint64_t n) {
  if (s->shm) { memmove(dst, s->shm + off, n); return; }
  while (n) {
    const sim_page *p = page_at(s, off >> SIM_PAGE_SHIFT);
    uint64_t in = off & (SIM_PAGE - 1), k = SIM_PAGE - in;
    if (k > n) k = n;
    if (p && p->data) memcpy(dst, p->data + in, k); else memset(dst, p ? p->val : 0, k);
    off += k, n -= k, dst += k;
  }
}

/* Copies n bytes (front to back; overlap is undefined as in CUDA).
 * Pieces whose source page is uniform stay uniform where they cover a
 * whole destination page. */
void sim_mem_copy(sim_map *d, uint64_t doff, const sim_map *s, uint64_t soff,
                  uint64_t n) {
  if (s->shm) { sim_mem_write(d, doff, s->shm + soff, n); return; }
  while (n) {
    const sim_page *sp = page_at(s, soff >> SIM_PAGE_SHIFT);
    uint64_t sin = soff & (SIM_PAGE - 1), din = doff & (SIM_PAGE - 1);
    uint64_t k = SIM_PAGE - (sin > din ? sin : din);
    if (k > n) k = n;
    if (sp && sp->data) sim_mem_write(d, doff, sp->data + sin, k);
    else sim_mem_fill(d, doff, k, sp ? sp->val : 0);
    doff += k, soff += k, n -= k;
  }
}

/* Offset (from off) of the first byte != v in [off, off+n), or -1. */
int64_t sim_mem_verify(const sim_map *s, uint64_t off, uint64_t n, uint8_t v) {
  uint64_t start = off;
  if (s->shm) {
    for (uint64_t i = 0; i < n; i++)
      if (s->shm[off + i] != v) return (int64_t)i;
    return -1;
  }
  while (n) {
    const sim_page *p = page_at(s, off >> SIM_PAGE_SHIFT);
    uint64_t in = off & (SIM_PAGE - 1), k = SIM_PAGE - in;
    if (k > n) k = n;
    if (!p) {
      if (v != 0) return (int64_t)(off - start);
    } else if (!p->data) {
      if (p->val != v) return (int64_t)(off - start);
    } else {
      for (uint64_t i = 0; i < k; i++)
        if (p->data[in + i] != v) return (int64_t)(off + i - start);
    }
    off += k, n -= k;
  }
  return -1;
}

/* How many pages hold storage (tests check that fills stay cheap). */
uint64_t sim_mem_materialized(const sim_mem *m) {
  uint64_t c = 0;
  for (size_t i = 0; i < m->n; i++)
    for (uint64_t j = 0; !m->maps[i]->alias && j < m->maps[i]->npages; j++)
      c += m->maps[i]->pages[j].data != NULL;
  return c;
}

/* Marks the pages under [off, off+n) of x touched (faulted in by the
 * host); returns the bytes of those that were not, counting them into
 * x->resident. O(pages in the range). */
uint64_t sim_mem_touch(sim_map *x, uint64_t off, uint64_t n) {
  if (n == 0 || off >= x->size || x->alias) return 0;
  uint64_t end = n > x->size - off ? x->size : off + n, got = 0;
  for (uint64_t i = off >> SIM_PAGE_SHIFT; i < x->npages && (i << SIM_PAGE_SHIFT) < end; i++) {
    if (x->pages[i].touched) continue;
    x->pages[i].touched = 1;
    uint64_t lo = i << SIM_PAGE_SHIFT, hi = lo + SIM_PAGE;
    got += (hi < x->size ? hi : x->size) - lo;
  }
  x->resident += got;
  return got;
}
