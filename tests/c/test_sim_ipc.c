/*
 * test_sim_ipc.c: the sim's IPC between two processes (docs/sim.md, IPC):
 * a forked child imports the parent's IPC pool through the fd, a block
 * through its token and an event through its handle, reads what the
 * parent wrote before recording the event, writes back and records its
 * own IPC event, which the parent opens and waits on. Also the refusals
 * (imported pool: alloc, trim, threshold; a freed block's token; another
 * pool's token; timing with IPC).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void) {
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
  printf("%s\n", fails ? "FAILED" : "ok");
  return fails ? 1 : 0;
}
