/*
 * test_share.c: poolsh.import_pool's side of share.c against a peer that
 * is not a poolsh exporter: the ledger it sends is checked (size, cap,
 * version) before any entry is read; a short one used to be SIGBUS.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "share.h"

static int fails;
#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); fails++; } } while (0)

/* share.c's hello and ledger header, as a peer would forge them. */
typedef struct { uint32_t magic, version; int32_t pid, pool; } hello;
typedef struct { uint32_t magic, version; int32_t pid, pool; uint32_t cap, used; } header;

typedef struct { int listen_fd, ledger_fd; } server;

static void *serve_once(void *ud) {
  server *sv = ud;
  int conn = accept(sv->listen_fd, NULL, NULL);
  if (conn < 0) return NULL;
  hello h = { 0x52485350u, 2u, (int32_t)getpid(), 1 };
  char buf[CMSG_SPACE(2 * sizeof(int))];
  memset(buf, 0, sizeof buf);
  struct iovec io = { .iov_base = &h, .iov_len = sizeof h };
  struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = buf,
                      .msg_controllen = sizeof buf };
  struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
  cm->cmsg_level = SOL_SOCKET, cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
  int fds[2] = { sv->ledger_fd, sv->ledger_fd };
  memcpy(CMSG_DATA(cm), fds, sizeof fds);
  if (sendmsg(conn, &m, 0) < 0) perror("sendmsg");
  close(conn);
  return NULL;
}

/* Serves a ledger of size bytes starting with hd (NULL: zeros) once, and
 * returns what ps_share_connect answers. */
static int connect_to(size_t size, const header *hd, char *err, size_t n) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/poolsh-test-share-%d.sock", (int)getpid());
  unlink(path);
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  memcpy(a.sun_path, path, strlen(path) + 1);
  server sv = { socket(AF_UNIX, SOCK_STREAM, 0), memfd_create("fake-ledger", 0) };
  if (sv.listen_fd < 0 || sv.ledger_fd < 0 || ftruncate(sv.ledger_fd, (off_t)size) != 0 ||
      bind(sv.listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(sv.listen_fd, 1) != 0) {
    perror("setup");
    exit(1);
  }
  if (hd && pwrite(sv.ledger_fd, hd, sizeof *hd, 0) != (ssize_t)sizeof *hd) exit(1);
  pthread_t t;
  pthread_create(&t, NULL, serve_once, &sv);
  int pool_fd = -1;
  ps_share *s = NULL;
  int r = ps_share_connect(path, 5000, NULL, &pool_fd, &s, err, n);
  pthread_join(t, NULL);
  if (r == 0) { close(pool_fd); ps_share_free(s); }
  close(sv.listen_fd), close(sv.ledger_fd), unlink(path);
  return r;
}

int main(void) {
  char err[256];
  /* an empty ledger: mapping it and reading its magic was SIGBUS */
  CHECK(connect_to(0, NULL, err, sizeof err) == PS_SHARE_FAILED);
  CHECK(strstr(err, "sent no valid export ledger") != NULL);
  /* a ledger that claims more entries than it holds */
  header hd = { 0x4745444cu, 2u, (int32_t)getpid(), 1, 1u << 30, 1u << 30 };
  CHECK(connect_to(1 << 20, &hd, err, sizeof err) == PS_SHARE_FAILED);
  CHECK(strstr(err, "sent no valid export ledger") != NULL);
  /* another version's ledger */
  hd.cap = 1024, hd.used = 0, hd.version = 99;
  CHECK(connect_to(1 << 20, &hd, err, sizeof err) == PS_SHARE_FAILED);
  /* the real header is accepted */
  hd.version = 2;
  CHECK(connect_to(1 << 20, &hd, err, sizeof err) == 0);
  /* ... but not when the file is shorter than the ledger */
  CHECK(connect_to(4096, &hd, err, sizeof err) == PS_SHARE_FAILED);
  /* an exporter that accepts nothing, its backlog full: the connect
   * itself used to block; now the timeout holds */
  {
    char path[64];
    snprintf(path, sizeof path, "/tmp/poolsh-test-share-full-%d.sock", (int)getpid());
    unlink(path);
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
  printf("%s\n", fails ? "FAILED" : "ok");
  return fails != 0;
}
