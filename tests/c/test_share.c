/*
 * test_share.c: poolsh.import_pool's side of share.c against a peer that
 * is not a poolsh exporter: the ledger it sends is checked (sealed, size,
 * cap, version) before any entry is read (a short one used to be SIGBUS),
 * and every fd a wrong hello carries is closed. Then a real exporter:
 * its ledger is sealed, its socket 0600, and forged importer records of
 * processes it never served do not pin its buffers.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "share.h"

static int fails;
#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); fails++; } } while (0)

/* share.c's hello and ledger header, as a peer would forge them. */
typedef struct { uint32_t magic, version; int32_t pid, pool; } hello;
typedef struct { uint32_t magic, version; int32_t pid, pool; uint32_t cap, used; } header;

#define LEDGER_LEN (24 + 1024 * 144)   /* the header, then 1024 entries */

static char dir[64];                    /* this run's temporary directory */

typedef struct { int listen_fd, nfds, fds[4]; } server;

static void *serve_once(void *ud) {
  server *sv = ud;
  int conn = accept(sv->listen_fd, NULL, NULL);
  if (conn < 0) return NULL;
  hello h = { 0x52485350u, 2u, (int32_t)getpid(), 1 };
  char buf[CMSG_SPACE(4 * sizeof(int))];
  memset(buf, 0, sizeof buf);
  struct iovec io = { .iov_base = &h, .iov_len = sizeof h };
  struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = buf,
                      .msg_controllen = CMSG_SPACE(sv->nfds * sizeof(int)) };
  struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
  cm->cmsg_level = SOL_SOCKET, cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sv->nfds * sizeof(int));
  memcpy(CMSG_DATA(cm), sv->fds, sv->nfds * sizeof(int));
  if (sendmsg(conn, &m, 0) < 0) perror("sendmsg");
  close(conn);
  return NULL;
}

/* Serves a ledger of size bytes starting with hd (NULL: zeros), sealed
 * or not, once, as nfds copies of its fd, and returns what
 * ps_share_connect answers. */
static int serve_ledger(size_t size, const header *hd, int sealed, int nfds, char *err, size_t n) {
  char path[96];
  snprintf(path, sizeof path, "%s/share.sock", dir);
  unlink(path);
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  memcpy(a.sun_path, path, strlen(path) + 1);
  int ledger = memfd_create("fake-ledger", MFD_ALLOW_SEALING);
  server sv = { socket(AF_UNIX, SOCK_STREAM, 0), nfds, { ledger, ledger, ledger, ledger } };
  if (sv.listen_fd < 0 || ledger < 0 || ftruncate(ledger, (off_t)size) != 0 ||
      bind(sv.listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(sv.listen_fd, 1) != 0) {
    perror("setup");
    exit(1);
  }
  if (hd && pwrite(ledger, hd, sizeof *hd, 0) != (ssize_t)sizeof *hd) exit(1);
  if (sealed && fcntl(ledger, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) exit(1);
  pthread_t t;
  pthread_create(&t, NULL, serve_once, &sv);
  int pool_fd = -1;
  ps_share *s = NULL;
  int r = ps_share_connect(path, 5000, NULL, &pool_fd, &s, err, n);
  pthread_join(t, NULL);
  if (r == 0) { close(pool_fd); ps_share_free(s); }
  close(sv.listen_fd), close(ledger), unlink(path);
  return r;
}

static int connect_to(size_t size, const header *hd, char *err, size_t n) {
  return serve_ledger(size, hd, 1, 2, err, n);
}

/* How many fds this process has open. */
static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int k = 0;
  if (!d) return -1;
  while (readdir(d)) k++;
  closedir(d);
  return k;
}

/* An fd of this process open on the export ledger (the importer's copy
 * is the same memfd), or -1. */
static int ledger_fd(void) {
  char link[64], to[128];
  for (int fd = 3; fd < 1024; fd++) {
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, to, sizeof to - 1);
    if (k <= 0) continue;
    to[k] = 0;
    if (strstr(to, "memfd:poolsh-export-ledger")) return fd;
  }
  return -1;
}

int main(void) {
  char err[256];
  snprintf(dir, sizeof dir, "%s", "/tmp/poolsh-test-share-XXXXXX");
  if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
  /* an empty ledger: mapping it and reading its magic was SIGBUS */
  CHECK(connect_to(0, NULL, err, sizeof err) == PS_SHARE_FAILED);
  CHECK(strstr(err, "sent no valid export ledger") != NULL);
  /* a ledger that claims more entries than it holds */
  header hd = { 0x4745444cu, 2u, (int32_t)getpid(), 1, 1u << 30, 1u << 30 };
  CHECK(connect_to(LEDGER_LEN, &hd, err, sizeof err) == PS_SHARE_FAILED);
  CHECK(strstr(err, "sent no valid export ledger") != NULL);
  /* another version's ledger */
  hd.cap = 1024, hd.used = 0, hd.version = 99;
  CHECK(connect_to(LEDGER_LEN, &hd, err, sizeof err) == PS_SHARE_FAILED);
  /* the real header is accepted */
  hd.version = 2;
  CHECK(connect_to(LEDGER_LEN, &hd, err, sizeof err) == 0);
  /* ... but not when the file is shorter, or longer, than the ledger */
  CHECK(connect_to(4096, &hd, err, sizeof err) == PS_SHARE_FAILED);
  CHECK(connect_to(LEDGER_LEN + 4096, &hd, err, sizeof err) == PS_SHARE_FAILED);
  /* ... nor when it is not sealed (the peer could shrink it: SIGBUS) */
  CHECK(serve_ledger(LEDGER_LEN, &hd, 0, 2, err, sizeof err) == PS_SHARE_FAILED);
  CHECK(strstr(err, "sent no valid export ledger (it is not sealed)") != NULL);
  /* a hello with one fd, or three: every fd received is closed */
  {
    int before = open_fds();
    for (int i = 0; i < 20; i++) {
      CHECK(serve_ledger(LEDGER_LEN, &hd, 1, 1, err, sizeof err) == PS_SHARE_FAILED);
      CHECK(serve_ledger(LEDGER_LEN, &hd, 1, 3, err, sizeof err) == PS_SHARE_FAILED);
    }
    CHECK(strstr(err, "is not a poolsh pool's socket") != NULL);
    CHECK(open_fds() == before);
  }
  /* an exporter that accepts nothing, its backlog full: the connect
   * itself used to block; now the timeout holds */
  {
    char path[96];
    snprintf(path, sizeof path, "%s/full.sock", dir);
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    memcpy(a.sun_path, path, strlen(path) + 1);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 0) != 0) exit(1);
    int filler[64], nf = 0;
    while (nf < 64) {
      int c = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
      if (connect(c, (struct sockaddr *)&a, sizeof a) != 0) { close(c); break; }
      filler[nf++] = c;
    }
    alarm(10);                          /* a blocking connect fails the test */
    int pool_fd;
    ps_share *s = NULL;
    CHECK(ps_share_connect(path, 200, NULL, &pool_fd, &s, err, sizeof err) == PS_SHARE_FAILED);
    CHECK(strstr(err, "timed out after 200 ms") != NULL);
    alarm(0);
    while (nf) close(filler[--nf]);
    close(l), unlink(path);
  }
  /* A real exporter and importer (this process is both): the ledger is
   * sealed, and the exporter counts only importers it served. */
  {
    char path[96];
    snprintf(path, sizeof path, "%s/real.sock", dir);
    ps_share *ex = ps_share_new(1);
    int pool = memfd_create("fake-pool", 0);
    CHECK(ex && pool >= 0 && ps_share_serve(ex, path, pool, err, sizeof err) == 0);
    struct stat st;
    CHECK(lstat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    int slot = ps_share_exported(ex, 7, 4096);
    CHECK(slot == 0);
    int fd = ledger_fd();
    CHECK(fd >= 0);
    /* an importer's ftruncate is refused: the exporter's next access
     * would be SIGBUS */
    CHECK(ftruncate(fd, 0) != 0 && errno == EPERM);
    CHECK(ftruncate(fd, LEDGER_LEN * 2) != 0 && errno == EPERM);
    /* a record an importer forged for a live process never served (pid
     * 1) does not pin the buffer */
    int32_t forged[4] = { 1, 1, 0, 0 };       /* pid, n, start (0: unknown) */
    CHECK(pwrite(fd, forged, sizeof forged, 24 + 16) == (ssize_t)sizeof forged);
    CHECK(ps_share_begin_free(ex, slot) == 0);
    ps_share_unfree(ex, slot);
    /* a process served that claims it does */
    int pool_fd;
    ps_share *im = NULL;
    CHECK(ps_share_connect(path, 5000, NULL, &pool_fd, &im, err, sizeof err) == 0);
    if (im) {
      close(pool_fd);
      CHECK(ps_share_claim(im, slot, 7) == 0);
      CHECK(ps_share_begin_free(ex, slot) == 1);
      ps_share_import(im, slot, -1);
      CHECK(ps_share_begin_free(ex, slot) == 0);
      ps_share_free(im);
    }
    ps_share_free(ex);
    CHECK(lstat(path, &st) != 0);            /* the socket went with the server */
  }
  rmdir(dir);
  printf("%s\n", fails ? "FAILED" : "ok");
  return fails != 0;
}
