/*
 * test_sim_ipc.c: the sim's IPC between two processes (docs/sim.md, IPC):
 * a forked child imports the parent's IPC pool through the fd, a block
 * through its token and an event through its handle, reads what the
 * parent wrote before recording the event, writes back and records its
 * own IPC event, which the parent opens and waits on. Also the refusals
 * (imported pool: alloc, trim, threshold; a freed block's token; another
 * pool's token; timing with IPC).
 *
 * Then the malicious peers, each case in a child of its own (a crash is a
 * failure, not the end of the run): an exporter that rewrites the
 * segment's header or table after the import, an importer that rewrites
 * them under the exporter or truncates the arena, segments that are not
 * sealed, too short or out of range, IPC event slots with a huge delay,
 * another user's or the wrong mode, and the slots a killed process left.
 * Run under build-asan too: no case may read or write outside a mapping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"

static const ps_backend *B = &ps_backend_sim;
static int fails;

#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); fails++; } } while (0)
#define IS(call, want) do { int st_ = (call); if (st_ != (want)) { \
  printf("FAIL line %d: %s returned %d, wanted %d\n", __LINE__, #call, st_, (want)); fails++; } } while (0)

static void *open_sim(void) {
  ps_config cfg = { 0, (uint64_t)1 << 30, NULL, NULL, 0 };
  void *ctx = NULL;
  if (B->open(&cfg, &ctx) != PS_OK) { printf("FAIL: open\n"); exit(1); }
  return ctx;
}

/* The child: imports, checks, writes 0xCD, records its event; sends its
 * event handle back on pipe `back`; waits for `go` before it frees. */
static int child(int fd, const uint8_t *tok, const uint8_t *freed_tok, const uint8_t *ev,
                 int back, int go) {
  void *c = open_sim();
  ps_pool *ip;
  IS(B->pool_import(c, fd, &ip), PS_OK);
  uint64_t v = 1;   /* an imported pool's attributes cannot be read (an H200) */
  IS(B->pool_get(c, ip, PS_ATTR_RESERVED_CURRENT, &v), PS_ERR_INVALID_VALUE);
  IS(B->pool_get(c, ip, PS_ATTR_RELEASE_THRESHOLD, &v), PS_ERR_INVALID_VALUE);
  ps_addr a = 0, bad = 0;
  IS(B->pool_alloc(c, ip, 4096, NULL, &a, NULL), PS_ERR_INVALID_VALUE);
  IS(B->pool_trim(c, ip, 0), PS_ERR_INVALID_VALUE);
  IS(B->pool_set(c, ip, PS_ATTR_RELEASE_THRESHOLD, 0), PS_ERR_INVALID_VALUE);
  IS(B->ptr_import(c, ip, freed_tok, &bad), PS_ERR_INVALID_VALUE);
  IS(B->ptr_import(c, ip, tok, &a), PS_OK);
  ps_event *e;
  IS(B->event_import(c, ev, &e), PS_OK);
  ps_stream *s;
  IS(B->stream_create(c, 0, 0, 1, &s), PS_OK);
  IS(B->stream_wait(c, s, e), PS_OK);
  int64_t first_bad = 0;
  IS(B->verify(c, a, 65536, 0xAB, s, &first_bad), PS_OK);
  CHECK(first_bad == -1);
  IS(B->fill(c, a, 65536, 0xCD, s), PS_OK);
  ps_event *fin;
  IS(B->event_create(c, PS_EVENT_IPC | PS_EVENT_TIMING, &fin), PS_ERR_INVALID_VALUE);
  IS(B->event_create(c, PS_EVENT_IPC, &fin), PS_OK);
  IS(B->event_record(c, fin, s), PS_OK);
  uint8_t h[PS_IPC_BYTES];
  IS(B->event_export(c, fin, h), PS_OK);
  IS(B->pool_free(c, a, s), PS_OK);   /* the importer frees first */
  IS(B->stream_sync(c, s), PS_OK);
  CHECK(write(back, h, sizeof h) == (ssize_t)sizeof h);
  char x;
  CHECK(read(go, &x, 1) == 1);        /* the parent opened our event */
  IS(B->stream_destroy(c, s), PS_OK);
  IS(B->event_destroy(c, fin), PS_OK);
  IS(B->event_destroy(c, e), PS_OK);
  IS(B->pool_destroy(c, ip), PS_OK);
  B->close(c);
  return fails ? 1 : 0;
}

static int legit(void) {
  void *c = open_sim();
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, 0, 1 }, plain = props;
  plain.ipc = 0;
  ps_pool *p, *q;
  IS(B->pool_create(c, &props, &p), PS_OK);
  IS(B->pool_create(c, &plain, &q), PS_OK);
  int fd = -1;
  IS(B->pool_export(c, q, &fd), PS_ERR_INVALID_VALUE);   /* not an IPC pool */
  IS(B->pool_export(c, p, &fd), PS_OK);
  ps_stream *s;
  IS(B->stream_create(c, 0, 0, 1, &s), PS_OK);
  ps_addr a, gone, other;
  IS(B->pool_alloc(c, p, 65536, s, &a, NULL), PS_OK);
  IS(B->pool_alloc(c, p, 4096, s, &gone, NULL), PS_OK);
  IS(B->pool_alloc(c, q, 4096, s, &other, NULL), PS_OK);
  uint8_t tok[PS_IPC_BYTES], freed_tok[PS_IPC_BYTES], ev[PS_IPC_BYTES];
  IS(B->ptr_export(c, other, tok), PS_ERR_INVALID_VALUE);   /* not in an IPC pool */
  IS(B->ptr_export(c, a, tok), PS_OK);
  IS(B->ptr_export(c, gone, freed_tok), PS_OK);
  IS(B->pool_free(c, gone, s), PS_OK);                      /* its token is refused now */
  IS(B->fill(c, a, 65536, 0xAB, s), PS_OK);
  ps_event *e, *plain_e;
  IS(B->event_create(c, PS_EVENT_IPC, &e), PS_OK);
  IS(B->event_create(c, 0, &plain_e), PS_OK);
  IS(B->event_export(c, plain_e, ev), PS_ERR_INVALID_RESOURCE);
  IS(B->event_record(c, e, s), PS_OK);   /* lands the fill in the shared bytes */
  IS(B->event_export(c, e, ev), PS_OK);
  int back[2], go[2];
  CHECK(pipe(back) == 0 && pipe(go) == 0);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) _exit(child(fd, tok, freed_tok, ev, back[1], go[0]));
  uint8_t h[PS_IPC_BYTES];
  CHECK(read(back[0], h, sizeof h) == (ssize_t)sizeof h);
  ps_event *fin;
  IS(B->event_import(c, h, &fin), PS_OK);
  CHECK(write(go[1], "x", 1) == 1);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  IS(B->stream_wait(c, s, fin), PS_OK);
  int64_t first_bad = 0;
  IS(B->verify(c, a, 65536, 0xCD, s, &first_bad), PS_OK);   /* the child's bytes */
  CHECK(first_bad == -1);
  /* An IPC event opened in the process that made it, recorded through
   * the import: the creator sees the record, completing as long after its
   * own clock as the recorder's work took. */
  ps_event *twin;
  IS(B->event_import(c, ev, &twin), PS_OK);
  IS(B->spin(c, s, 5), PS_OK);
  IS(B->event_record(c, twin, s), PS_OK);
  int done = 1;
  IS(B->event_query(c, e, &done), PS_OK);
  CHECK(done == 0);
  IS(B->event_sync(c, e), PS_OK);
  IS(B->event_query(c, e, &done), PS_OK);
  CHECK(done == 1);
  IS(B->event_destroy(c, twin), PS_OK);
  uint8_t junk[PS_IPC_BYTES] = { 1, 2, 3 };
  ps_event *none;
  IS(B->event_import(c, junk, &none), PS_ERR_INVALID_VALUE);
  IS(B->pool_import(c, -1, &q), PS_ERR_INVALID_VALUE);
  IS(B->pool_free(c, a, s), PS_OK);
  IS(B->pool_free(c, other, s), PS_OK);
  IS(B->device_sync(c), PS_OK);
  uint64_t r = 1;
  IS(B->pool_get(c, p, PS_ATTR_RESERVED_CURRENT, &r), PS_OK);
  CHECK(r == 0);   /* threshold 0: the chunk went back at the sync */
  close(fd);
  IS(B->event_destroy(c, fin), PS_OK);
  IS(B->event_destroy(c, e), PS_OK);
  IS(B->event_destroy(c, plain_e), PS_OK);
  IS(B->pool_destroy(c, p), PS_OK);
  IS(B->pool_destroy(c, q), PS_OK);
  B->close(c);
  return fails;
}

/* ---- malicious peers ---- */

/* The segment's layout (docs/sim.md, IPC), as another process sees it. */
#define SEG_DATA ((uint64_t)1 << 20)
#define SEG_TABLE 4096u
typedef struct seg_header {
  uint32_t magic, version;
  uint64_t id;
  int32_t device, pad;
  uint64_t va;
  uint32_t cap, used;
} seg_header;
typedef struct seg_block { uint64_t off, size; uint32_t gen, live; } seg_block;
typedef struct ptr_data {
  uint32_t magic, version;
  uint64_t id, off, size;
  uint32_t slot, gen;
  uint8_t pad[PS_IPC_BYTES - 40];
} ptr_data;
typedef struct ev_slot { uint32_t magic, version; uint64_t gen; int64_t delay; } ev_slot;

/* An exporter's context with an IPC pool of max_size bytes (0: the
 * device), a stream, and the pool's fd mapped here as a peer maps it. */
typedef struct side {
  void *c;
  ps_pool *p;
  ps_stream *s;
  int fd;
  uint8_t *map;
  size_t len;
} side;

static void exporter(side *x, uint64_t max_size) {
  x->c = open_sim();
  ps_pool_props props = { PS_LOCATION_DEVICE, 0, max_size, 1 };
  IS(B->pool_create(x->c, &props, &x->p), PS_OK);
  IS(B->stream_create(x->c, 0, 0, 1, &x->s), PS_OK);
  IS(B->pool_export(x->c, x->p, &x->fd), PS_OK);
  struct stat sb;
  CHECK(fstat(x->fd, &sb) == 0);
  x->len = (size_t)sb.st_size;
  x->map = mmap(NULL, x->len, PROT_READ | PROT_WRITE, MAP_SHARED, x->fd, 0);
  if (x->map == MAP_FAILED) { printf("FAIL: mmap\n"); exit(1); }
}

static seg_header *hdr(side *x) { return (seg_header *)x->map; }
static seg_block *table(side *x) { return (seg_block *)(x->map + 4096); }

/* A memfd holding a copy of x's segment's first `len` bytes (header and
 * table), `size` bytes long, with `seals` added. */
static int fake_segment(side *x, uint64_t size, int seals, const seg_header *h) {
  int fd = memfd_create("evil", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  CHECK(fd >= 0);
  CHECK(ftruncate(fd, (off_t)size) == 0);
  CHECK(pwrite(fd, x->map, 4096 + SEG_TABLE * sizeof(seg_block), 0) > 0);
  if (h) CHECK(pwrite(fd, h, sizeof *h, 0) == (ssize_t)sizeof *h);
  if (seals) CHECK(fcntl(fd, F_ADD_SEALS, seals) == 0);
  return fd;
}

/* A malicious exporter rewrites va and the table after the import: the
 * importer's bounds stay those it checked, so a token whose block lies
 * past the real arena is refused, and a genuine one maps inside it. */
static int evil_exporter_va(void) {
  side x;
  exporter(&x, (uint64_t)4 << 20);
  ps_addr a, ia = 0, bad = 0;
  IS(B->pool_alloc(x.c, x.p, 65536, x.s, &a, NULL), PS_OK);
  uint8_t tok[PS_IPC_BYTES];
  IS(B->ptr_export(x.c, a, tok), PS_OK);
  void *c = open_sim();
  ps_pool *ip;
  IS(B->pool_import(c, x.fd, &ip), PS_OK);
  uint64_t va = hdr(&x)->va;
  hdr(&x)->va = (uint64_t)1 << 47;           /* after the importer's check */
  hdr(&x)->used = UINT32_MAX, hdr(&x)->cap = UINT32_MAX;
  ptr_data d;
  memcpy(&d, tok, sizeof d);
  seg_block *t = table(&x);
  /* slot 1 forged: a block from the arena's end to far past it */
  t[1] = (seg_block){ va - 4096, (uint64_t)1 << 40, 7, 1 };
  ptr_data f = d;
  f.slot = 1, f.gen = 7, f.off = va - 4096, f.size = (uint64_t)1 << 40;
  uint8_t forged[PS_IPC_BYTES];
  memcpy(forged, &f, sizeof f);
  IS(B->ptr_import(c, ip, forged, &bad), PS_ERR_INVALID_VALUE);
  /* slot 2 forged: past the arena altogether (the importer's own memory) */
  t[2] = (seg_block){ (uint64_t)1 << 46, 4096, 7, 1 };
  f.slot = 2, f.off = (uint64_t)1 << 46, f.size = 4096;
  memcpy(forged, &f, sizeof f);
  IS(B->ptr_import(c, ip, forged, &bad), PS_ERR_INVALID_VALUE);
  /* slot numbers past the table, sizes that wrap */
  f = d, f.slot = SEG_TABLE;
  memcpy(forged, &f, sizeof f);
  IS(B->ptr_import(c, ip, forged, &bad), PS_ERR_INVALID_VALUE);
  f = d, f.slot = UINT32_MAX;
  memcpy(forged, &f, sizeof f);
  IS(B->ptr_import(c, ip, forged, &bad), PS_ERR_INVALID_VALUE);
  t[3] = (seg_block){ 4096, UINT64_MAX - 100, 1, 1 };
  f = d, f.slot = 3, f.gen = 1, f.off = 4096, f.size = UINT64_MAX - 100;
  memcpy(forged, &f, sizeof f);
  IS(B->ptr_import(c, ip, forged, &bad), PS_ERR_INVALID_VALUE);
  t[4] = (seg_block){ 4096, 0, 1, 1 };
  f = d, f.slot = 4, f.gen = 1, f.off = 4096, f.size = 0;
  memcpy(forged, &f, sizeof f);
  IS(B->ptr_import(c, ip, forged, &bad), PS_ERR_INVALID_VALUE);
  /* the genuine token still maps the exporter's bytes, and only them */
  IS(B->fill(x.c, a, 65536, 0x5A, x.s), PS_OK);
  IS(B->stream_sync(x.c, x.s), PS_OK);
  IS(B->ptr_import(c, ip, tok, &ia), PS_OK);
  int64_t first_bad = 0;
  IS(B->verify(c, ia, 65536, 0x5A, NULL, &first_bad), PS_OK);
  CHECK(first_bad == -1);
  IS(B->verify(c, ia, 65537, 0x5A, NULL, &first_bad), PS_ERR_INVALID_VALUE);
  IS(B->pool_free(c, ia, NULL), PS_OK);
  IS(B->device_sync(c), PS_OK);
  IS(B->pool_destroy(c, ip), PS_OK);
  B->close(c);
  B->close(x.c);
  return fails;
}

/* A malicious importer rewrites the header and the table under the
 * exporter: the exporter's next exports use its own table (slots inside
 * it, the same token for a block exported again) and write nothing past
 * the segment. */
static int evil_importer_table(void) {
  side x;
  exporter(&x, (uint64_t)2 << 20);
  ps_addr a, b2;
  IS(B->pool_alloc(x.c, x.p, 4096, x.s, &a, NULL), PS_OK);
  uint8_t tok[PS_IPC_BYTES], again[PS_IPC_BYTES], tok2[PS_IPC_BYTES];
  IS(B->ptr_export(x.c, a, tok), PS_OK);
  /* a slot that would straddle the segment's end: written past it, unchecked */
  uint32_t past = (uint32_t)((x.len - 4096) / sizeof(seg_block));
  hdr(&x)->used = past, hdr(&x)->cap = UINT32_MAX;
  memset(table(&x), 0xff, SEG_TABLE * sizeof(seg_block));   /* every slot garbage */
  table(&x)[0].live = 0;
  IS(B->ptr_export(x.c, a, again), PS_OK);
  CHECK(memcmp(tok, again, PS_IPC_BYTES) == 0);   /* its own table's slot and generation */
  IS(B->pool_alloc(x.c, x.p, 4096, x.s, &b2, NULL), PS_OK);
  IS(B->ptr_export(x.c, b2, tok2), PS_OK);
  ptr_data d;
  memcpy(&d, tok2, sizeof d);
  CHECK(d.slot == 1);
  /* both still import (the exporter published its entries again) */
  void *c = open_sim();
  ps_pool *ip;
  ps_addr i1 = 0, i2 = 0;
  IS(B->pool_import(c, x.fd, &ip), PS_OK);
  IS(B->ptr_import(c, ip, tok, &i1), PS_OK);
  IS(B->ptr_import(c, ip, tok2, &i2), PS_OK);
  IS(B->pool_free(c, i1, NULL), PS_OK);
  IS(B->pool_free(c, i2, NULL), PS_OK);
  IS(B->device_sync(c), PS_OK);
  /* the importer marks a freed block live again: the exporter's frees and
   * exports go by its own table */
  IS(B->pool_free(x.c, a, x.s), PS_OK);
  table(&x)[0].live = 1;
  table(&x)[0].size = (uint64_t)1 << 40;
  IS(B->pool_free(x.c, b2, x.s), PS_OK);
  IS(B->device_sync(x.c), PS_OK);
  IS(B->pool_destroy(c, ip), PS_OK);
  B->close(c);
  B->close(x.c);
  return fails;
}

/* An importer truncates (or grows) the arena: the seals refuse it, and
 * the exporter goes on filling and exporting (no SIGBUS). */
static int evil_importer_truncate(void) {
  side x;
  exporter(&x, (uint64_t)4 << 20);
  int seals = fcntl(x.fd, F_GET_SEALS);
  CHECK(seals >= 0 && (seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) ==
                      (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL));
  CHECK(ftruncate(x.fd, 4096) != 0 && errno == EPERM);   /* unsealed: the fill below faults */
  ps_addr a;
  uint8_t tok[PS_IPC_BYTES];
  IS(B->pool_alloc(x.c, x.p, (uint64_t)2 << 20, x.s, &a, NULL), PS_OK);
  IS(B->fill(x.c, a, (uint64_t)2 << 20, 0x11, x.s), PS_OK);
  IS(B->stream_sync(x.c, x.s), PS_OK);
  IS(B->ptr_export(x.c, a, tok), PS_OK);
  int64_t first_bad = 0;
  IS(B->verify(x.c, a, (uint64_t)2 << 20, 0x11, x.s, &first_bad), PS_OK);
  CHECK(first_bad == -1);
  IS(B->pool_free(x.c, a, x.s), PS_OK);
  CHECK(ftruncate(x.fd, (off_t)x.len * 2) != 0 && errno == EPERM);
  CHECK(fcntl(x.fd, F_ADD_SEALS, F_SEAL_WRITE) != 0);   /* sealed: no more seals */
  B->close(x.c);
  return fails;
}

/* Segments an importer refuses before it maps them: not sealed, too
 * short for their header, not a memfd, a header out of range (a device
 * past the importer's, a wrong table size). */
static int evil_segments(void) {
  side x;
  exporter(&x, (uint64_t)2 << 20);
  void *c = open_sim();
  ps_pool *ip = NULL;
  int all = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
  int fd = fake_segment(&x, x.len, 0, NULL);            /* a good copy, unsealed */
  int st = B->pool_import(c, fd, &ip);
  CHECK(st != PS_OK);
  CHECK(strstr(B->error_string(st), "not sealed") != NULL);
  CHECK(strcmp(B->error_name(st), "cudaErrorInvalidValue") == 0);
  /* the importer would die of SIGBUS if it had mapped it: */
  CHECK(ftruncate(fd, 4096) == 0);
  close(fd);
  fd = fake_segment(&x, x.len, F_SEAL_SHRINK | F_SEAL_SEAL, NULL);   /* can still grow */
  st = B->pool_import(c, fd, &ip);
  CHECK(st != PS_OK && strstr(B->error_string(st), "not sealed"));
  close(fd);
  fd = fake_segment(&x, x.len - 4096, all, NULL);       /* shorter than its header's va */
  st = B->pool_import(c, fd, &ip);
  CHECK(st != PS_OK && strstr(B->error_string(st), "shorter"));
  close(fd);
  fd = fake_segment(&x, 8192, all, NULL);               /* not even a table */
  st = B->pool_import(c, fd, &ip);
  CHECK(st != PS_OK && strstr(B->error_string(st), "shorter"));
  close(fd);
  seg_header h = *hdr(&x);
  h.device = 1000;
  fd = fake_segment(&x, x.len, all, &h);
  st = B->pool_import(c, fd, &ip);
  CHECK(st != PS_OK && strstr(B->error_string(st), "not a sim IPC pool"));
  close(fd);
  h = *hdr(&x), h.device = 3;                            /* in range, not this sim's */
  fd = fake_segment(&x, x.len, all, &h);
  IS(B->pool_import(c, fd, &ip), PS_ERR_INVALID_DEVICE);
  close(fd);
  h = *hdr(&x), h.cap = UINT32_MAX;
  fd = fake_segment(&x, x.len, all, &h);
  st = B->pool_import(c, fd, &ip);
  CHECK(st != PS_OK && strstr(B->error_string(st), "not a sim IPC pool"));
  close(fd);
  int pfd[2];
  CHECK(pipe(pfd) == 0);
  st = B->pool_import(c, pfd[0], &ip);
  CHECK(st != PS_OK && strstr(B->error_string(st), "not a sim IPC pool"));
  close(pfd[0]), close(pfd[1]);
  fd = memfd_create("plain", MFD_CLOEXEC);             /* sealing not allowed: F_SEAL_SEAL only */
  CHECK(fd >= 0 && ftruncate(fd, (off_t)x.len) == 0);
  st = B->pool_import(c, fd, &ip);
  CHECK(st != PS_OK && strstr(B->error_string(st), "not sealed"));
  close(fd);
  IS(B->pool_import(c, x.fd, &ip), PS_OK);               /* the real one */
  IS(B->pool_destroy(c, ip), PS_OK);
  B->close(c);
  B->close(x.c);
  return fails;
}

/* The name inside an IPC event's handle. */
static const char *ev_name(const uint8_t h[PS_IPC_BYTES]) { return (const char *)h + 8; }

/* A peer writes a huge (or negative) delay into an event's slot: the
 * waiter's clock does not overflow; the event completes at the clock's
 * end (or now). */
static int evil_event_delay(void) {
  void *a = open_sim(), *c = open_sim();
  ps_event *e, *ie;
  ps_stream *s;
  uint8_t h[PS_IPC_BYTES];
  IS(B->stream_create(a, 0, 0, 1, &s), PS_OK);
  IS(B->event_create(a, PS_EVENT_IPC, &e), PS_OK);
  IS(B->event_export(a, e, h), PS_OK);
  IS(B->event_import(c, h, &ie), PS_OK);
  int fd = shm_open(ev_name(h), O_RDWR, 0);
  CHECK(fd >= 0);
  ev_slot *sl = mmap(NULL, sizeof *sl, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (sl == MAP_FAILED) { printf("FAIL: mmap slot\n"); return 1; }
  sl->delay = INT64_MAX, sl->gen++;
  int done = 1;
  IS(B->event_query(c, ie, &done), PS_OK);
  CHECK(done == 0);                      /* a wrapped sum would read as long done */
  IS(B->event_sync(c, ie), PS_OK);
  CHECK(B->now(c) >= 4.6e12);            /* the clock's end, 2^62 ns */
  IS(B->event_query(c, ie, &done), PS_OK);
  CHECK(done == 1);
  IS(B->event_destroy(c, ie), PS_OK);
  B->close(c);
  c = open_sim();
  IS(B->event_import(c, h, &ie), PS_OK);
  sl->delay = INT64_MIN, sl->gen++;
  IS(B->event_query(c, ie, &done), PS_OK);
  CHECK(done == 1);
  IS(B->event_sync(c, ie), PS_OK);
  CHECK(B->now(c) < 1000);
  munmap(sl, sizeof *sl);
  B->close(c);
  B->close(a);
  return fails;
}

/* A handle naming an object poolsh did not make as this user's slot:
 * another user's (refused though it holds a slot), mode 0644, the wrong
 * size, a name outside poolsh's. */
static int evil_event_objects(void) {
  void *c = open_sim();
  ps_event *ie;
  char name[56];
  uint8_t h[PS_IPC_BYTES] = {0};
  uint32_t magic = 0x56455350u, version = 1;
  memcpy(h, &magic, 4), memcpy(h + 4, &version, 4);
  snprintf(name, sizeof name, "/poolsh-sim-ev-%d-0-%012llx", (int)getpid(),
           (unsigned long long)(random() & 0xffffffffff));
  memcpy(h + 8, name, strlen(name) + 1);
  ev_slot good = { magic, version, 0, 0 };
  int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  CHECK(fd >= 0 && fchmod(fd, 0600) == 0);
  CHECK(pwrite(fd, &good, sizeof good, 0) == (ssize_t)sizeof good);
  IS(B->event_import(c, h, &ie), PS_OK);                 /* as poolsh makes them */
  IS(B->event_destroy(c, ie), PS_OK);
  CHECK(fchmod(fd, 0644) == 0);
  int st = B->event_import(c, h, &ie);
  CHECK(st != PS_OK && strstr(B->error_string(st), "not mode 0600"));
  CHECK(fchmod(fd, 0600) == 0 && ftruncate(fd, 8) == 0);
  st = B->event_import(c, h, &ie);
  CHECK(st != PS_OK && strstr(B->error_string(st), "not mode 0600"));
  CHECK(ftruncate(fd, sizeof good) == 0 && pwrite(fd, &good, sizeof good, 0) > 0);
  if (geteuid() == 0) {
    /* this user's slot, opened by nobody: shm_open's EACCES */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
          setresuid(65534, 65534, 65534) != 0)
        _exit(2);
      void *n = open_sim();
      ps_event *ne;
      int nst = B->event_import(n, h, &ne);
      B->close(n);
      _exit(nst != PS_OK && strstr(B->error_string(nst), "another user") ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* another user's slot, opened by root: fstat's owner */
    CHECK(fchown(fd, 65534, 65534) == 0);
    st = B->event_import(c, h, &ie);
    CHECK(st != PS_OK && strstr(B->error_string(st), "another user"));
  } else {
    printf("(not root: another user's event object not tried)\n");
  }
  close(fd);
  shm_unlink(name);
  memcpy(h + 8, "/poolsh-sim-ev-../../etc/x", 27);
  IS(B->event_import(c, h, &ie), PS_ERR_INVALID_VALUE);
  memcpy(h + 8, "/other-name", 12);
  IS(B->event_import(c, h, &ie), PS_ERR_INVALID_VALUE);
  memset(h + 8, 'a', 56);                                /* no terminator */
  IS(B->event_import(c, h, &ie), PS_ERR_INVALID_VALUE);
  B->close(c);
  return fails;
}

/* A process killed while its IPC event lives leaves the slot; the next
 * context opened removes it, and leaves a live process's alone. */
static int dead_event_sweep(void) {
  int p[2];
  CHECK(pipe(p) == 0);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    void *c = open_sim();
    ps_event *e;
    uint8_t h[PS_IPC_BYTES];
    if (B->event_create(c, PS_EVENT_IPC, &e) != PS_OK || B->event_export(c, e, h) != PS_OK) _exit(1);
    if (write(p[1], h, sizeof h) != (ssize_t)sizeof h) _exit(1);
    pause();
    _exit(0);
  }
  uint8_t dead[PS_IPC_BYTES], live[PS_IPC_BYTES];
  CHECK(read(p[0], dead, sizeof dead) == (ssize_t)sizeof dead);
  close(p[0]), close(p[1]);
  void *mine = open_sim();
  ps_event *e;
  IS(B->event_create(mine, PS_EVENT_IPC, &e), PS_OK);
  IS(B->event_export(mine, e, live), PS_OK);
  void *c = open_sim();                                  /* the child still runs */
  int fd = shm_open(ev_name(dead), O_RDONLY, 0);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  kill(pid, SIGKILL);
  CHECK(waitpid(pid, NULL, 0) == pid);
  B->close(c);
  c = open_sim();                                        /* sweeps */
  fd = shm_open(ev_name(dead), O_RDONLY, 0);
  CHECK(fd < 0 && errno == ENOENT);
  if (fd >= 0) close(fd), shm_unlink(ev_name(dead));
  ps_event *ie;
  IS(B->event_import(c, dead, &ie), PS_ERR_INVALID_VALUE);
  IS(B->event_import(c, live, &ie), PS_OK);              /* ours: kept */
  IS(B->event_destroy(c, ie), PS_OK);
  B->close(c);
  B->close(mine);
  return fails;
}

/* Runs one case in a child: a crash or a signal is a failure. */
static int run_case(const char *name, int (*fn)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int f = fn();
    fflush(stdout);
    _exit(f ? 1 : 0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  if (WIFSIGNALED(status)) {
    printf("FAIL %s: killed by signal %d\n", name, WTERMSIG(status));
    return 1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    printf("FAIL %s\n", name);
    return 1;
  }
  return 0;
}

int main(void) {
  srandom((unsigned)getpid());
  int bad = run_case("legit", legit);
  bad += run_case("evil_exporter_va", evil_exporter_va);
  bad += run_case("evil_importer_table", evil_importer_table);
  bad += run_case("evil_importer_truncate", evil_importer_truncate);
  bad += run_case("evil_segments", evil_segments);
  bad += run_case("evil_event_delay", evil_event_delay);
  bad += run_case("evil_event_objects", evil_event_objects);
  bad += run_case("dead_event_sweep", dead_event_sweep);
  printf("%s\n", bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
