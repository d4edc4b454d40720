/*
 * fuzz_hello.c: the input fuzzer of the IPC hello (ps_share_receive in
 * share.c, the path poolsh.import_pool takes once the exporter's socket
 * answered): the hello's bytes and the fds that come with it, as a peer
 * could send them. An input is: the number of fds (0-4), how the ledger
 * is made (sealed or not, its size, /dev/null instead), the hello's
 * length and bytes, then the ledger's first bytes. Each is decoded or
 * refused with a clear message, within 2 s, and leaves no fd open.
 * Usage: fuzz_hello [--seed S] [--seconds T | --inputs N] [--tmpdir D] [--replay FILE]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzzlib.h"
#include "share.h"

#define LEDGER_LEN (24 + 1024 * 144)
#define INPUT_MAX 256

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int k = 0;
  if (!d) return -1;
  while (readdir(d)) k++;
  closedir(d);
  return k;
}

static const char *decode(const unsigned char *b, size_t n) {
  int before = open_fds();
  unsigned nfds = n > 0 ? b[0] % 5 : 2, how = n > 1 ? b[1] : 1;
  size_t hlen = n > 2 ? b[2] % 33 : 16;
  const unsigned char *hb = n > 3 ? b + 3 : b;
  if (hlen > (n > 3 ? n - 3 : 0)) hlen = n > 3 ? n - 3 : 0;
  const unsigned char *lb = hb + hlen;
  size_t llen = (size_t)(b + n - lb);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return "socketpair";
  int ledger = (how & 8) ? open("/dev/null", O_RDWR | O_CLOEXEC)
                         : memfd_create("fuzz-ledger", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  int pool = memfd_create("fuzz-pool", MFD_CLOEXEC);
  if (ledger < 0 || pool < 0) return "cannot make the fds";
  if (!(how & 8)) {
    static const size_t sizes[4] = { LEDGER_LEN, 0, 4096, LEDGER_LEN + 4096 };
    size_t size = sizes[(how >> 1) & 3];
    if (ftruncate(ledger, (off_t)size) != 0) return "ftruncate";
    if (llen > size) llen = size;
    if (llen && pwrite(ledger, lb, llen, 0) != (ssize_t)llen) return "pwrite";
    if ((how & 1) && fcntl(ledger, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
      return "seal";
  }
  int fds[4] = { pool, ledger, pool, ledger };
  char cbuf[CMSG_SPACE(4 * sizeof(int))];
  memset(cbuf, 0, sizeof cbuf);
  unsigned char hello[33];
  memcpy(hello, hb, hlen);
  struct iovec io = { .iov_base = hello, .iov_len = hlen };
  struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1 };
  if (nfds) {
    m.msg_control = cbuf, m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET, cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
  }
  if (hlen) (void)sendmsg(sv[0], &m, MSG_NOSIGNAL);
  close(pool), close(ledger), close(sv[0]);
  int pool_fd = -1;
  ps_share *s = NULL;
  char err[300] = "";
  int r = ps_share_receive(sv[1], "fuzz.sock", &pool_fd, &s, err, sizeof err);
  close(sv[1]);
  if (r == 0) {
    if (!s || pool_fd < 0) return "received, but no pool fd or ledger";
    close(pool_fd);
    ps_share_free(s);
  } else {
    if (r != PS_SHARE_FAILED || !strstr(err, "fuzz.sock")) return fz_why("an unclear refusal: %s", err);
    fz_refused();
  }
  int after = open_fds();
  if (after != before) return fz_why("left %d fds open", after - before);
  return NULL;
}

int main(int argc, char **argv) {
  /* the valid hello: 2 fds, a sealed ledger of the right size; magic
   * "PSHR", version 2, pid 4242, pool 1; the ledger's header: magic
   * "LDEG", version 2, the same pid, pool 1, cap 1024, used 0 */
  unsigned char ok[] = {
    2, 1, 16,
    0x50, 0x53, 0x48, 0x52, 2, 0, 0, 0, 0x92, 0x10, 0, 0, 1, 0, 0, 0,
    0x4c, 0x44, 0x45, 0x47, 2, 0, 0, 0, 0x92, 0x10, 0, 0, 1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0,
  };
  fz_input corpus[] = { { ok, sizeof ok } };   /* an unsealed ledger, /dev/null, 3 fds: one mutation away */
  return fz_run("hello", argc, argv, corpus, 1, decode, 2.0, INPUT_MAX);
}
