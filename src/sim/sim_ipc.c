/*
 * sim_ipc.c: the sim's IPC between poolsh processes on one machine
 * (docs/sim.md, IPC; docs/ipc.md).
 *
 * An IPC pool's segment is a memfd that pool_export hands out as the fd,
 * as the GPU's handle is one: a header, a table of the blocks exported,
 * and the pool's arena, mapped MAP_SHARED and sparse, so the exporter and
 * every importer read and write the same bytes. An IPC event is a POSIX
 * shared-memory slot, named in its 64-byte handle, holding whether and how
 * often it was recorded and how long after its recording it completes on
 * the recorder's clock. Each process keeps its own virtual clock: an
 * importer's wait on the event completes that long after its own host
 * clock when it first sees the record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim_internal.h"

#define SEG_MAGIC 0x4c4f4f50u       /* "POOL" */
#define PTR_MAGIC 0x52545050u       /* "PPTR" */
#define EV_MAGIC 0x56455350u        /* "PSEV" */
#define IPC_VERSION 1u
#define SEG_TABLE 4096u             /* exported blocks a segment remembers */
#define SEG_DATA ((uint64_t)1 << 20)   /* the arena's offset in the segment */

/* The first bytes of a segment. */
typedef struct seg_header {
  uint32_t magic, version;
  uint64_t id;                      /* random: names the pool in pointer tokens */
  int32_t device, pad;
  uint64_t va;                      /* the arena's bytes, from SEG_DATA */
  uint32_t cap, used;               /* the table's slots, slots handed out */
} seg_header;

/* An exported block: its offset and size in the arena; live until the
 * exporter frees it; gen tells a slot's successive blocks apart. */
typedef struct seg_block { uint64_t off, size; uint32_t gen, live; } seg_block;

struct sim_ipc_seg {
  int fd;
  uint8_t *base;
  size_t len;
  seg_header *h;
  seg_block *t;
};

/* The 64 bytes of a pointer token (cudaMemPoolPtrExportData's size). */
typedef struct ptr_data {
  uint32_t magic, version;
  uint64_t id, off, size;
  uint32_t slot, gen;
  uint8_t pad[PS_IPC_BYTES - 40];
} ptr_data;

static uint64_t random64(void) {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    v = ((uint64_t)getpid() << 40) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
  }
  return v ? v : 1;
}

static sim_ipc_seg *seg_map(int fd, size_t len) {
  sim_ipc_seg *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  void *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (b == MAP_FAILED) { free(g); return NULL; }
  g->fd = fd, g->base = b, g->len = len;
  g->h = (seg_header *)g->base;
  g->t = (seg_block *)(g->base + 4096);
  return g;
}

/* A new segment for an arena of va bytes on device dev; NULL when the
 * system refuses (out of memory). */
sim_ipc_seg *sim_ipc_seg_create(uint64_t va, int dev) {
  int fd = memfd_create("poolsh-sim-ipc-pool", MFD_CLOEXEC);
  if (fd < 0) return NULL;
  size_t len = (size_t)(SEG_DATA + va);
  sim_ipc_seg *g = ftruncate(fd, (off_t)len) == 0 ? seg_map(fd, len) : NULL;
  if (!g) { close(fd); return NULL; }
  *g->h = (seg_header){ .magic = SEG_MAGIC, .version = IPC_VERSION, .id = random64(),
                        .device = dev, .va = va, .cap = SEG_TABLE };
  return g;
}

/* Maps the segment another process exported as fd (which stays the
 * caller's); NULL when fd is not one. */
sim_ipc_seg *sim_ipc_seg_open(int fd) {
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0 || (uint64_t)sb.st_size < SEG_DATA) return NULL;
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return NULL;
  sim_ipc_seg *g = seg_map(own, (size_t)sb.st_size);
  if (!g) { close(own); return NULL; }
  if (g->h->magic != SEG_MAGIC || g->h->version != IPC_VERSION ||
      SEG_DATA + g->h->va != (uint64_t)sb.st_size || g->h->cap != SEG_TABLE) {
    sim_ipc_seg_close(g);
    return NULL;
  }
  return g;
}

void sim_ipc_seg_close(sim_ipc_seg *g) {
  if (!g) return;
  munmap(g->base, g->len);
  close(g->fd);
  free(g);
}

uint8_t *sim_ipc_seg_data(sim_ipc_seg *g) { return g->base + SEG_DATA; }
uint64_t sim_ipc_seg_va(const sim_ipc_seg *g) { return g->h->va; }
int sim_ipc_seg_device(const sim_ipc_seg *g) { return g->h->device; }

/* A new fd for the segment (the caller closes it); -1 on failure. */
int sim_ipc_seg_fd(sim_ipc_seg *g) { return fcntl(g->fd, F_DUPFD_CLOEXEC, 0); }

/* Writes the token of the live block [off, off+size): its table slot,
 * taken anew unless the block was exported already. PS_ERR_MEMORY_ALLOCATION
 * when the table is full of live blocks. */
int sim_ipc_seg_export(sim_ipc_seg *g, uint64_t off, uint64_t size, uint8_t out[PS_IPC_BYTES]) {
  seg_block *t = g->t;
  uint32_t slot = UINT32_MAX;
  for (uint32_t i = 0; i < g->h->used; i++) {
    if (t[i].live && t[i].off == off) { slot = i; break; }
    if (!t[i].live && slot == UINT32_MAX) slot = i;
  }
  if (slot == UINT32_MAX || !(t[slot].live && t[slot].off == off)) {
    if (slot == UINT32_MAX) {
      if (g->h->used >= g->h->cap) return PS_ERR_MEMORY_ALLOCATION;
      slot = g->h->used++;
    }
    t[slot].off = off, t[slot].size = size, t[slot].gen++;
    __atomic_store_n(&t[slot].live, 1, __ATOMIC_RELEASE);
  }
  ptr_data d = { .magic = PTR_MAGIC, .version = IPC_VERSION, .id = g->h->id,
                 .off = off, .size = size, .slot = slot, .gen = t[slot].gen };
  memcpy(out, &d, sizeof d);
  return PS_OK;
}

/* The exporter freed the block at off: imports of it are refused from now. */
void sim_ipc_seg_freed(sim_ipc_seg *g, uint64_t off) {
  for (uint32_t i = 0; i < g->h->used; i++)
    if (g->t[i].live && g->t[i].off == off) __atomic_store_n(&g->t[i].live, 0, __ATOMIC_RELEASE);
}

/* Checks a token against the segment: PS_OK and the block's offset and
 * size, or PS_ERR_INVALID_VALUE (another pool's token, a block freed). */
int sim_ipc_seg_check(sim_ipc_seg *g, const uint8_t data[PS_IPC_BYTES], uint64_t *off,
                      uint64_t *size) {
  ptr_data d;
  memcpy(&d, data, sizeof d);
  if (d.magic != PTR_MAGIC || d.version != IPC_VERSION || d.id != g->h->id) return PS_ERR_INVALID_VALUE;
  if (d.slot >= g->h->used || d.slot >= g->h->cap) return PS_ERR_INVALID_VALUE;
  const seg_block *b = &g->t[d.slot];
  if (!__atomic_load_n(&b->live, __ATOMIC_ACQUIRE) || b->gen != d.gen || b->off != d.off ||
      b->size != d.size || d.size == 0 || d.off > g->h->va || d.size > g->h->va - d.off)
    return PS_ERR_INVALID_VALUE;
  *off = d.off, *size = d.size;
  return PS_OK;
}

/* ---- events ---- */

/* The shared slot of an IPC event. */
typedef struct ev_slot {
  uint32_t magic, version;
  uint64_t gen;                     /* records so far (0: never recorded) */
  int64_t delay;                    /* ns from the last record to completion */
} ev_slot;

/* The handle: the slot's name. */
typedef struct ev_data {
  uint32_t magic, version;
  char name[PS_IPC_BYTES - 8];
} ev_data;

struct sim_ipc_ev {
  ev_slot *slot;
  char name[PS_IPC_BYTES - 8];
  int owner;                        /* created here: unlinks the name */
  uint64_t seen;                    /* the record last seen (importers) */
};

static sim_ipc_ev *ev_map(const char *name, int create) {
  sim_ipc_ev *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  int fd = shm_open(name, O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0), 0600);
  if (fd < 0) { free(v); return NULL; }
  if (create && ftruncate(fd, sizeof(ev_slot)) != 0) {
    close(fd), shm_unlink(name), free(v);
    return NULL;
  }
  struct stat sb;
  void *p = fstat(fd, &sb) == 0 && sb.st_size >= (off_t)sizeof(ev_slot)
            ? mmap(NULL, sizeof(ev_slot), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  close(fd);
  if (p == MAP_FAILED) {
    if (create) shm_unlink(name);
    free(v);
    return NULL;
  }
  v->slot = p;
  snprintf(v->name, sizeof v->name, "%s", name);
  v->owner = create;
  return v;
}

/* A new IPC event's slot, never recorded; NULL when the system refuses. */
sim_ipc_ev *sim_ipc_ev_create(void) {
  char name[PS_IPC_BYTES - 8];
  snprintf(name, sizeof name, "/poolsh-sim-ev-%d-%016llx", (int)getpid(),
           (unsigned long long)random64());
  sim_ipc_ev *v = ev_map(name, 1);
  if (v) {
    v->slot->version = IPC_VERSION;
    __atomic_store_n(&v->slot->magic, EV_MAGIC, __ATOMIC_RELEASE);
  }
  return v;
}

void sim_ipc_ev_handle(const sim_ipc_ev *v, uint8_t out[PS_IPC_BYTES]) {
  ev_data d = { .magic = EV_MAGIC, .version = IPC_VERSION };
  memcpy(d.name, v->name, sizeof d.name);
  memcpy(out, &d, sizeof d);
}

/* Opens the slot a handle names; NULL when it is not one or its event is
 * gone (destroyed, its process ended). */
sim_ipc_ev *sim_ipc_ev_open(const uint8_t data[PS_IPC_BYTES]) {
  ev_data d;
  memcpy(&d, data, sizeof d);
  if (d.magic != EV_MAGIC || d.version != IPC_VERSION || d.name[0] != '/' ||
      !memchr(d.name, 0, sizeof d.name) || strncmp(d.name, "/poolsh-sim-ev-", 15) != 0)
    return NULL;
  sim_ipc_ev *v = ev_map(d.name, 0);
  if (v && __atomic_load_n(&v->slot->magic, __ATOMIC_ACQUIRE) != EV_MAGIC) {
    sim_ipc_ev_close(v);
    return NULL;
  }
  return v;
}

void sim_ipc_ev_close(sim_ipc_ev *v) {
  if (!v) return;
  if (v->owner) shm_unlink(v->name);
  munmap(v->slot, sizeof(ev_slot));
  free(v);
}

/* A record in this process: completes delay ns from now. */
void sim_ipc_ev_recorded(sim_ipc_ev *v, int64_t delay) {
  __atomic_store_n(&v->slot->delay, delay, __ATOMIC_RELAXED);
  v->seen = __atomic_add_fetch(&v->slot->gen, 1, __ATOMIC_RELEASE);
}

/* Whether another process recorded since this one last looked: then
 * *delay is how long after its recording it completes. */
int sim_ipc_ev_news(sim_ipc_ev *v, int64_t *delay) {
  uint64_t g = __atomic_load_n(&v->slot->gen, __ATOMIC_ACQUIRE);
  if (g == v->seen) return 0;
  *delay = __atomic_load_n(&v->slot->delay, __ATOMIC_RELAXED);
  v->seen = g;
  return 1;
}
