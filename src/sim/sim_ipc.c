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
 *
 * Another process can write every shared byte at any time, so each side
 * keeps its bounds (the arena's size, the mapping's length, the table)
 * in private memory set once, copies what it reads from a mapping before
 * checking it, and uses only the copy. The segment is sealed at its size
 * (no truncation under a mapping: no SIGBUS); event slots must be this
 * user's, mode 0600, a slot long; slots whose creator died are swept.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim_model.h"
#ifdef __EMSCRIPTEN__   /* a page has no shared memory; its random bytes come from getentropy */
#define memfd_create(name, flags) ((void)(name), (void)(flags), errno = ENOSYS, -1)
#define getrandom(buf, n, flags) ((void)(flags), getentropy(buf, n) == 0 ? (ssize_t)(n) : -1)
#endif

#define SEG_MAGIC 0x4c4f4f50u       /* "POOL" */
#define PTR_MAGIC 0x52545050u       /* "PPTR" */
#define EV_MAGIC 0x56455350u        /* "PSEV" */
#define IPC_VERSION 1u
#define SEG_TABLE 4096u             /* exported blocks a segment remembers */
#define SEG_DATA ((uint64_t)1 << 20)   /* the arena's offset in the segment */
#define SIM_IPC_MAX_VA ((uint64_t)1 << 48)   /* the largest arena a segment holds */

/* The first bytes of a segment: written by the exporter (at creation and
 * at each export), copied once by each importer (sim_ipc_seg_open), never
 * read back by the exporter. */
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

_Static_assert(4096 + SEG_TABLE * sizeof(seg_block) <= SEG_DATA, "the table ends before the arena");

/* The seals a segment carries once sized: its length is fixed for good. */
#define SEG_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* Every bound is private, set once at creation or import: the shared
 * mapping can change under us at any time (another process writes it), so
 * nothing read from it is ever used as a length, an offset or an index
 * before it is copied here and checked against these. */
struct sim_ipc_seg {
  int fd;
  uint8_t *base;                    /* the mapping, len bytes */
  size_t len;                       /* SEG_DATA + va */
  uint64_t va, id;
  int device;
  uint32_t used;                    /* exporter: slots handed out */
  seg_block *own;                   /* exporter: its table (the truth); NULL in importers */
  seg_block *shared;                /* the table in the mapping: exporter writes, importers copy */
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

/* Maps len bytes of fd shared; the table's pointer is set, nothing read. */
static sim_ipc_seg *seg_map(int fd, size_t len) {
  sim_ipc_seg *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  void *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (b == MAP_FAILED) { free(g); return NULL; }
  g->fd = fd, g->base = b, g->len = len;
  g->shared = (seg_block *)(g->base + 4096);
  return g;
}

/* Writes the header from the exporter's private values (again at each
 * export: an importer may have scribbled on it). */
static void publish_header(sim_ipc_seg *g) {
  seg_header h = { .magic = SEG_MAGIC, .version = IPC_VERSION, .id = g->id,
                   .device = g->device, .va = g->va, .cap = SEG_TABLE, .used = g->used };
  memcpy(g->base, &h, sizeof h);
}

/* A new segment for an arena of va bytes on device dev, sealed at its
 * size (no process can shrink or grow it, so no mapping of it can fault);
 * NULL when the system refuses (out of memory). */
sim_ipc_seg *sim_ipc_seg_create(uint64_t va, int dev) {
  if (va == 0 || va > SIM_IPC_MAX_VA) return NULL;
  int fd = memfd_create("poolsh-sim-ipc-pool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return NULL;
  size_t len = (size_t)(SEG_DATA + va);
  sim_ipc_seg *g = ftruncate(fd, (off_t)len) == 0 && fcntl(fd, F_ADD_SEALS, SEG_SEALS) == 0
                   ? seg_map(fd, len) : NULL;
  if (g && !(g->own = calloc(SEG_TABLE, sizeof *g->own))) {
    munmap(g->base, g->len);
    free(g);
    g = NULL;
  }
  if (!g) { close(fd); return NULL; }
  g->va = va, g->id = random64(), g->device = dev;
  publish_header(g);
  return g;
}

/* Maps the segment another process exported as fd (which stays the
 * caller's). Checked before anything is mapped: a memfd sealed against
 * shrinking, growing and unsealing, at least a header and table long;
 * then its header is copied and checked against that length. PS_OK and
 * *out, or why not: SIM_ERR_IPC_SEGMENT (not a segment, or its header is
 * wrong), SIM_ERR_IPC_UNSEALED, SIM_ERR_IPC_SHORT, PS_ERR_MEMORY_ALLOCATION. */
int sim_ipc_seg_open(int fd, sim_ipc_seg **out) {
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) return PS_ERR_INVALID_VALUE;
  if (!S_ISREG(sb.st_mode)) return SIM_ERR_IPC_SEGMENT;
  int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0) return SIM_ERR_IPC_SEGMENT;             /* not a memfd */
  if ((seals & SEG_SEALS) != SEG_SEALS) return SIM_ERR_IPC_UNSEALED;
#ifdef F_SEAL_FUTURE_WRITE
  if (seals & F_SEAL_FUTURE_WRITE) return SIM_ERR_IPC_SEGMENT;
#endif
  if (seals & F_SEAL_WRITE) return SIM_ERR_IPC_SEGMENT;   /* could not be shared rw */
  if (sb.st_size <= (off_t)SEG_DATA) return SIM_ERR_IPC_SHORT;
  uint64_t va = (uint64_t)sb.st_size - SEG_DATA;
  if (va > SIM_IPC_MAX_VA) return SIM_ERR_IPC_SEGMENT;
  seg_header h;
  if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) return SIM_ERR_IPC_SEGMENT;
  if (h.magic != SEG_MAGIC || h.version != IPC_VERSION || h.cap != SEG_TABLE ||
      h.device < 0 || h.device >= SIM_MAX_DEVICES || h.va == 0)
    return SIM_ERR_IPC_SEGMENT;
  if (h.va != va) return h.va > va ? SIM_ERR_IPC_SHORT : SIM_ERR_IPC_SEGMENT;
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return PS_ERR_MEMORY_ALLOCATION;
  sim_ipc_seg *g = seg_map(own, (size_t)(SEG_DATA + va));
  if (!g) { close(own); return PS_ERR_MEMORY_ALLOCATION; }
  g->va = va, g->id = h.id, g->device = h.device;
  *out = g;
  return PS_OK;
}

void sim_ipc_seg_close(sim_ipc_seg *g) {
  if (!g) return;
  munmap(g->base, g->len);
  close(g->fd);
  free(g->own);
  free(g);
}

uint8_t *sim_ipc_seg_data(sim_ipc_seg *g) { return g->base + SEG_DATA; }
uint64_t sim_ipc_seg_va(const sim_ipc_seg *g) { return g->va; }
int sim_ipc_seg_device(const sim_ipc_seg *g) { return g->device; }

/* A new fd for the segment (the caller closes it); -1 on failure. */
int sim_ipc_seg_fd(sim_ipc_seg *g) { return fcntl(g->fd, F_DUPFD_CLOEXEC, 0); }

/* Publishes the exporter's slot i in the shared table for importers:
 * dead while its fields change, then live as the exporter's copy says. */
static void publish(sim_ipc_seg *g, uint32_t i) {
  seg_block *s = &g->shared[i];
  const seg_block *b = &g->own[i];
  __atomic_store_n(&s->live, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&s->off, b->off, __ATOMIC_RELAXED);
  __atomic_store_n(&s->size, b->size, __ATOMIC_RELAXED);
  __atomic_store_n(&s->gen, b->gen, __ATOMIC_RELAXED);
  __atomic_store_n(&s->live, b->live, __ATOMIC_RELEASE);
}

/* Writes the token of the live block [off, off+size): its table slot,
 * taken anew unless the block was exported already. Works from the
 * exporter's private table only (importers can write the shared one).
 * PS_ERR_MEMORY_ALLOCATION when the table is full of live blocks;
 * PS_ERR_INVALID_VALUE for a block outside the arena or an importer's
 * segment. */
int sim_ipc_seg_export(sim_ipc_seg *g, uint64_t off, uint64_t size, uint8_t out[PS_IPC_BYTES]) {
  seg_block *t = g->own;
  if (!t || size == 0 || off > g->va || size > g->va - off) return PS_ERR_INVALID_VALUE;
  uint32_t slot = UINT32_MAX;
  for (uint32_t i = 0; i < g->used; i++) {
    if (t[i].live && t[i].off == off) { slot = i; break; }
    if (!t[i].live && slot == UINT32_MAX) slot = i;
  }
  if (slot == UINT32_MAX || !(t[slot].live && t[slot].off == off)) {
    if (slot == UINT32_MAX) {
      if (g->used >= SEG_TABLE) return PS_ERR_MEMORY_ALLOCATION;
      slot = g->used++;
    }
    t[slot].off = off, t[slot].size = size, t[slot].gen++, t[slot].live = 1;
  }
  publish(g, slot);   /* again for a block exported already: undoes an importer's writes */
  publish_header(g);
  ptr_data d = { .magic = PTR_MAGIC, .version = IPC_VERSION, .id = g->id,
                 .off = off, .size = size, .slot = slot, .gen = t[slot].gen };
  memcpy(out, &d, sizeof d);
  return PS_OK;
}

/* The exporter freed the block at off: imports of it are refused from now. */
void sim_ipc_seg_freed(sim_ipc_seg *g, uint64_t off) {
  if (!g->own) return;
  for (uint32_t i = 0; i < g->used; i++)
    if (g->own[i].live && g->own[i].off == off) g->own[i].live = 0, publish(g, i);
}

/* Checks a token against the segment: PS_OK and the block's offset and
 * size, or PS_ERR_INVALID_VALUE (another pool's token, a block freed).
 * The token's slot is bounded by the table's private size; the slot's
 * entry is copied out of the mapping, then compared with the token and
 * bounded by the arena's private size, so what is returned lies inside
 * the arena whatever another process writes meanwhile. */
int sim_ipc_seg_check(sim_ipc_seg *g, const uint8_t data[PS_IPC_BYTES], uint64_t *off,
                      uint64_t *size) {
  ptr_data d;
  memcpy(&d, data, sizeof d);
  if (d.magic != PTR_MAGIC || d.version != IPC_VERSION || d.id != g->id) return PS_ERR_INVALID_VALUE;
  if (d.slot >= SEG_TABLE) return PS_ERR_INVALID_VALUE;
  const seg_block *s = &g->shared[d.slot];
  seg_block b;
  b.live = __atomic_load_n(&s->live, __ATOMIC_ACQUIRE);
  b.off = __atomic_load_n(&s->off, __ATOMIC_RELAXED);
  b.size = __atomic_load_n(&s->size, __ATOMIC_RELAXED);
  b.gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
  if (!b.live || b.gen != d.gen || b.off != d.off || b.size != d.size) return PS_ERR_INVALID_VALUE;
  if (b.size == 0 || b.off > g->va || b.size > g->va - b.off) return PS_ERR_INVALID_VALUE;
  *off = b.off, *size = b.size;
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

#define EV_PREFIX "poolsh-sim-ev-"
#define EV_DIR "/dev/shm"           /* where glibc's shm_open keeps its objects */

/* When process pid started (field 22 of /proc/pid/stat, clock ticks since
 * boot): 0 and *start; -1 when no such process; 1 when it cannot tell. */
static int proc_start(long pid, unsigned long long *start) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ESRCH ? -1 : 1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return n == 0 || errno == ESRCH ? -1 : 1;   /* exited meanwhile */
  buf[n] = 0;
  char *p = strrchr(buf, ')');      /* the command may hold spaces and ')' */
  for (int field = 2; p && field < 22; field++) p = strchr(p + 1, ' ');
  if (!p) return 1;
  char *end;
  errno = 0;
  *start = strtoull(p + 1, &end, 10);
  return end == p + 1 || errno ? 1 : 0;
}

/* Reads the creator out of a slot's name (after EV_PREFIX):
 * "<pid>-<start>-<random>", or the older "<pid>-<random>" (start 0,
 * unknown). 0 when the name is one of these. */
static int ev_creator(const char *s, long *pid, unsigned long long *start) {
  char *end;
  if (*s < '1' || *s > '9') return -1;
  errno = 0;
  *pid = strtol(s, &end, 10);
  if (errno || *end != '-' || *pid <= 0 || *pid > INT_MAX) return -1;
  s = end + 1;
  *start = 0;
  size_t digits = strspn(s, "0123456789");
  if (digits && s[digits] == '-') {
    errno = 0;
    *start = strtoull(s, &end, 10);
    if (errno) return -1;
    s = end + 1;
  }
  size_t hex = strspn(s, "0123456789abcdef");
  return hex && s[hex] == 0 ? 0 : -1;
}

/* Unlinks the IPC event slots this user's dead processes left behind (a
 * poolsh killed by SIGKILL never unlinks its own): an object of ours,
 * named by poolsh, whose creator no longer runs (no such pid, or a pid
 * that started at another time: reused). Other users' objects stay. */
void sim_ipc_sweep(void) {
  DIR *d = opendir(EV_DIR);
  if (!d) return;
  uid_t me = geteuid();
  struct dirent *de;
  while ((de = readdir(d))) {
    const char *n = de->d_name;
    long pid;
    unsigned long long start, now = 0;
    if (strncmp(n, EV_PREFIX, strlen(EV_PREFIX)) != 0 || strlen(n) + 2 > PS_IPC_BYTES - 8 ||
        ev_creator(n + strlen(EV_PREFIX), &pid, &start) != 0)
      continue;
    int alive = proc_start(pid, &now);
    if (alive == 1 || (alive == 0 && (start == 0 || now == start))) continue;
    struct stat sb;
    if (fstatat(dirfd(d), n, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) ||
        sb.st_uid != me)
      continue;
    char name[PS_IPC_BYTES];
    snprintf(name, sizeof name, "/%s", n);
    shm_unlink(name);
  }
  closedir(d);
}

/* Maps the slot called name: a new one (create; mode 0600 whatever the
 * umask), or an existing one, which must be this user's, mode 0600 and
 * exactly a slot long (fstat after opening, so the checked object is the
 * mapped one). PS_OK and *out, or PS_ERR_INVALID_VALUE (no such slot),
 * SIM_ERR_IPC_EV_OWNER, SIM_ERR_IPC_EV_OBJECT, PS_ERR_MEMORY_ALLOCATION. */
static int ev_map(const char *name, int create, sim_ipc_ev **out) {
  int fd = shm_open(name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT | O_EXCL : 0), 0600);
  if (fd < 0)   /* EACCES: not ours (a 0600 object of another user) */
    return create ? PS_ERR_MEMORY_ALLOCATION : errno == EACCES ? SIM_ERR_IPC_EV_OWNER
                                                               : PS_ERR_INVALID_VALUE;
  int st = PS_OK;
  struct stat sb;
  if (create && (fchmod(fd, 0600) != 0 || ftruncate(fd, sizeof(ev_slot)) != 0))
    st = PS_ERR_MEMORY_ALLOCATION;
  else if (fstat(fd, &sb) != 0)
    st = PS_ERR_INVALID_VALUE;
  else if (sb.st_uid != geteuid())
    st = SIM_ERR_IPC_EV_OWNER;
  else if (!S_ISREG(sb.st_mode) || (sb.st_mode & 07777) != 0600 ||
           sb.st_size != (off_t)sizeof(ev_slot))
    st = SIM_ERR_IPC_EV_OBJECT;
  void *p = MAP_FAILED;
  if (st == PS_OK) {
    p = mmap(NULL, sizeof(ev_slot), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) st = PS_ERR_MEMORY_ALLOCATION;
  }
  close(fd);
  sim_ipc_ev *v = st == PS_OK ? calloc(1, sizeof *v) : NULL;
  if (st == PS_OK && !v) st = PS_ERR_MEMORY_ALLOCATION;
  if (st != PS_OK) {
    if (p != MAP_FAILED) munmap(p, sizeof(ev_slot));
    if (create) shm_unlink(name);
    return st;
  }
  v->slot = p;
  snprintf(v->name, sizeof v->name, "%s", name);
  v->owner = create;
  *out = v;
  return PS_OK;
}

/* A new IPC event's slot, never recorded, named after this process (its
 * pid and start time, so a later poolsh can tell when it is gone and
 * remove the slot: sim_ipc_sweep, run first); NULL when the system
 * refuses. */
sim_ipc_ev *sim_ipc_ev_create(void) {
  sim_ipc_sweep();
  unsigned long long start = 0;
  proc_start((long)getpid(), &start);
  for (int tries = 0; tries < 8; tries++) {
    char name[PS_IPC_BYTES - 8];
    int n = snprintf(name, sizeof name, "/" EV_PREFIX "%d-%llu-%012llx", (int)getpid(), start,
                     (unsigned long long)(random64() & 0xffffffffffffull));
    if (n < 0 || (size_t)n >= sizeof name) return NULL;
    sim_ipc_ev *v = NULL;
    if (ev_map(name, 1, &v) == PS_OK) {
      v->slot->version = IPC_VERSION;
      __atomic_store_n(&v->slot->magic, EV_MAGIC, __ATOMIC_RELEASE);
      return v;
    }
    if (errno != EEXIST) return NULL;   /* taken (by another user?): another name */
  }
  return NULL;
}

void sim_ipc_ev_handle(const sim_ipc_ev *v, uint8_t out[PS_IPC_BYTES]) {
  ev_data d = { .magic = EV_MAGIC, .version = IPC_VERSION };
  memcpy(d.name, v->name, sizeof d.name);
  memcpy(out, &d, sizeof d);
}

/* Opens the slot a handle names: PS_OK and *out; PS_ERR_INVALID_VALUE when
 * the handle is not one or its event is gone (destroyed, its process
 * ended); SIM_ERR_IPC_EV_OWNER / SIM_ERR_IPC_EV_OBJECT when the object is
 * another user's or not a slot as poolsh makes them. The name must be
 * poolsh's, one path component, terminated inside the handle. */
int sim_ipc_ev_open(const uint8_t data[PS_IPC_BYTES], sim_ipc_ev **out) {
  ev_data d;
  memcpy(&d, data, sizeof d);
  size_t np = strlen("/" EV_PREFIX);
  if (d.magic != EV_MAGIC || d.version != IPC_VERSION || !memchr(d.name, 0, sizeof d.name) ||
      strncmp(d.name, "/" EV_PREFIX, np) != 0 || strchr(d.name + 1, '/') ||
      strspn(d.name + np, "0123456789abcdef-") != strlen(d.name + np))
    return PS_ERR_INVALID_VALUE;
  sim_ipc_ev *v = NULL;
  int st = ev_map(d.name, 0, &v);
  if (st != PS_OK) return st;
  if (__atomic_load_n(&v->slot->magic, __ATOMIC_ACQUIRE) != EV_MAGIC ||
      __atomic_load_n(&v->slot->version, __ATOMIC_RELAXED) != IPC_VERSION) {
    sim_ipc_ev_close(v);
    return SIM_ERR_IPC_EV_OBJECT;
  }
  v->seen = 0;
  *out = v;
  return PS_OK;
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
 * *delay is how long after its recording it completes, as the slot says:
 * any int64_t (the caller bounds it). */
int sim_ipc_ev_news(sim_ipc_ev *v, int64_t *delay) {
  uint64_t g = __atomic_load_n(&v->slot->gen, __ATOMIC_ACQUIRE);
  if (g == v->seen) return 0;
  *delay = __atomic_load_n(&v->slot->delay, __ATOMIC_RELAXED);
  v->seen = g;
  return 1;
}
