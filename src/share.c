/*
 * share.c: what poolsh itself keeps to share an IPC pool between
 * processes, whatever the backend (docs/ipc.md):
 *
 *  - the socket: p:export(path) serves the pool's file descriptor on a
 *    Unix-domain socket at path (usock.c: mode 0600, a bare name in the
 *    private directory), from a small thread that accepts connections of
 *    this uid or root's and sends it with SCM_RIGHTS (beside the
 *    ledger's) until the pool is destroyed or poolsh closes; then the
 *    socket file goes. poolsh.import_pool(path) connects, checks the
 *    server's uid and receives both.
 *  - the export ledger: a small shared segment (a memfd) holding, per
 *    exported buffer, its id and size, whether the exporter freed it, and
 *    how many imports of it each importing process holds. The exporter's
 *    b:free() of a buffer still imported is refused; an import of a
 *    buffer the exporter freed is refused. A process that ended no longer
 *    counts as an importer, nor, in the exporter, one its server never
 *    served (importers write the ledger: their records are not trusted).
 *    The memfd is sealed at its size, so no importer can shrink it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "share.h"
#ifdef __EMSCRIPTEN__   /* a page shares no memory: exports fail as "out of memory" would */
#define memfd_create(name, flags) ((void)(name), (void)(flags), errno = ENOSYS, -1)
#endif
#include "usock.h"

#define LEDGER_MAGIC 0x4745444cu    /* "LDEG" */
#define HELLO_MAGIC 0x52485350u     /* "PSHR" */
#define SHARE_VERSION 2u
#define LEDGER_CAP 1024u
#define IMPORTERS 8                 /* importing processes counted per buffer */
#define SERVED_MAX 256              /* live processes the exporter handed the pool at once */
#define HELLO_FDS_MAX 8             /* room for fds in the hello: any other count than 2 is refused */
#define LEDGER_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* An importer: its pid, its start time (field 22 of /proc/<pid>/stat, so
 * that a reused pid is not taken for it; 0: unknown) and how many imports
 * it holds. A claimer writes pid (by CAS), start, then n; a reader loads
 * n first, then pid and start (docs/ipc.md, the ledger). */
typedef struct ledger_imp { int32_t pid, n; uint64_t start; } ledger_imp;

typedef struct ledger_entry {
  int32_t buffer;                   /* the exporter's buffer id; 0: slot unused */
  uint32_t freed;                   /* the exporter freed it (or is freeing it) */
  uint64_t size;
  ledger_imp imp[IMPORTERS];
} ledger_entry;

typedef struct ledger {
  uint32_t magic, version;
  int32_t pid, pool;                /* the exporter: its pid and pool id */
  uint32_t cap, used;
  ledger_entry e[];
} ledger;

/* What the server sends with the two fds. */
typedef struct hello { uint32_t magic, version; int32_t pid, pool; } hello;

/* A process the exporter's server handed the pool (its pid as SO_PEERCRED
 * gave it, and its start time): only their importer records count. */
typedef struct served { int32_t pid; uint64_t start; } served;

struct ps_share {
  int ledger_fd;
  ledger *led;
  size_t len;
  int32_t pid, pool;                /* the exporter's, copied once (the peer may write the header) */
  int exporter;                     /* this process made the ledger */
  /* the server (exporter) */
  int serving, pool_fd, stop[2];
  ps_usock_listener l;
  pthread_t thread;
  pthread_mutex_t mu;               /* guards served: the server thread adds, the owner reads */
  served served[SERVED_MAX];
  char path[PS_USOCK_PATH_MAX];
};

static size_t ledger_len(void) { return sizeof(ledger) + LEDGER_CAP * sizeof(ledger_entry); }

static ps_share *share_map(int fd) {
  ps_share *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->len = ledger_len();
  void *p = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) { free(s); return NULL; }
  s->led = p, s->ledger_fd = fd, s->l.fd = -1, s->pool_fd = -1;
  s->stop[0] = s->stop[1] = -1;
  pthread_mutex_init(&s->mu, NULL);
  return s;
}

/* The ledger is sealed at its size: an importer that ftruncates it gets
 * EPERM instead of making the exporter's next access SIGBUS. */
ps_share *ps_share_new(int pool_id) {
  int fd = memfd_create("poolsh-export-ledger", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return NULL;
  ps_share *s = ftruncate(fd, (off_t)ledger_len()) == 0 &&
                fcntl(fd, F_ADD_SEALS, LEDGER_SEALS) == 0 ? share_map(fd) : NULL;
  if (!s) { close(fd); return NULL; }
  s->exporter = 1, s->pid = (int32_t)getpid(), s->pool = pool_id;
  s->led->version = SHARE_VERSION, s->led->pid = s->pid;
  s->led->pool = pool_id, s->led->cap = LEDGER_CAP;
  __atomic_store_n(&s->led->magic, LEDGER_MAGIC, __ATOMIC_RELEASE);
  return s;
}

int ps_share_pid(const ps_share *s) { return s->pid; }
int ps_share_pool(const ps_share *s) { return s->pool; }
const char *ps_share_path(const ps_share *s) { return s->serving ? s->path : NULL; }

/* ---- the ledger ---- */

#define SC __ATOMIC_SEQ_CST

/* How many entries may be read: the peer writes used, so it is clamped. */
static uint32_t used_of(const ledger *l) {
  uint32_t n = __atomic_load_n(&l->used, __ATOMIC_ACQUIRE);
  return n < LEDGER_CAP ? n : LEDGER_CAP;
}

/* Process pid's state and start time from /proc/<pid>/stat: 1 running
 * (*start set), 0 gone or a zombie, -1 unknown (no /proc). */
static int proc_stat(int32_t pid, uint64_t *start) {
  char path[40], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ESRCH ? 0 : -1;
  ssize_t got = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (got <= 0) return got == 0 ? 0 : (errno == ESRCH ? 0 : -1);
  buf[got] = 0;
  char *q = strrchr(buf, ')');          /* the name may hold spaces and ')' */
  if (!q || q[1] != ' ') return -1;
  char state = q[2];
  if (state == 'Z' || state == 'X' || state == 'x') return 0;
  /* fields 3.. follow; the start time is field 22 */
  q += 2;
  for (int field = 3; field < 22; field++) {
    q = strchr(q, ' ');
    if (!q) return -1;
    q++;
  }
  *start = strtoull(q, NULL, 10);
  return 1;
}

static uint64_t my_start(void) {
  static uint64_t start;
  static int32_t pid;
  int32_t me = (int32_t)getpid();
  if (pid != me) {                      /* after a fork, the child's own */
    uint64_t st = 0;
    if (proc_stat(me, &st) != 1) st = 0;
    start = st, pid = me;
  }
  return start;
}

/* Whether process pid, started at start (0: unknown), is still running:
 * a process that ended (a zombie too) or whose pid went to another
 * process holds no imports. */
static int alive(int32_t pid, uint64_t start) {
  if (pid <= 0) return 0;
  uint64_t st = 0;
  int r = proc_stat(pid, &st);
  if (r == 0) return 0;
  if (r == 1) return start == 0 || st == start;
  return kill(pid, 0) == 0 || errno == EPERM;
}

/* Whether the exporter's server handed the pool to process pid started
 * at start. An importer writes the ledger, so it could write records of
 * any live process (pid 1, say) that would pin the exporter's buffers
 * forever: the exporter counts only processes it served. */
static int was_served(ps_share *s, int32_t pid, uint64_t start) {
  int yes = 0;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < SERVED_MAX && !yes; i++)
    yes = s->served[i].pid == pid && s->served[i].start == start;
  pthread_mutex_unlock(&s->mu);
  return yes;
}

/* Records that the server hands the pool to process pid (from
 * SO_PEERCRED); 0, or -1 when SERVED_MAX live processes were served. */
static int add_served(ps_share *s, int32_t pid) {
  uint64_t start = 0;
  if (pid <= 0) return -1;
  if (proc_stat(pid, &start) == 0) return -1;   /* gone already */
  int r = -1;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < SERVED_MAX && r < 0; i++)
    if (s->served[i].pid == pid && s->served[i].start == start) r = 0;
  for (int i = 0; i < SERVED_MAX && r < 0; i++)
    if (s->served[i].pid == 0 || !alive(s->served[i].pid, s->served[i].start)) {
      s->served[i].pid = pid, s->served[i].start = start;
      r = 0;
    }
  pthread_mutex_unlock(&s->mu);
  return r;
}

/* Live importers of entry e (n loaded first: see ledger_imp); in the
 * exporter, only processes its server handed the pool. */
static int live_importers(ps_share *s, const ledger_entry *e) {
  int n = 0;
  for (int i = 0; i < IMPORTERS; i++) {
    int32_t k = __atomic_load_n(&e->imp[i].n, SC);
    int32_t pid = __atomic_load_n(&e->imp[i].pid, SC);
    uint64_t start = __atomic_load_n(&e->imp[i].start, SC);
    if (k > 0 && pid && alive(pid, start) && (!s->exporter || was_served(s, pid, start))) n++;
  }
  return n;
}

int ps_share_exported(ps_share *s, int buffer, uint64_t size) {
  ledger *l = s->led;
  uint32_t used = used_of(l);
  for (uint32_t i = 0; i < used; i++)
    if (__atomic_load_n(&l->e[i].buffer, SC) == buffer) return (int)i;
  if (used < LEDGER_CAP) {
    ledger_entry *e = &l->e[used];
    e->size = size;
    e->buffer = buffer;
    __atomic_store_n(&l->used, used + 1, __ATOMIC_RELEASE);
    return (int)used;
  }
  /* Full: an entry of a buffer the exporter freed that no live process
   * imports is reused (a token of that buffer then names a buffer never
   * exported). The buffer id goes first (an importer re-checking it then
   * refuses), the importers are cleared, the new id comes last. */
  for (uint32_t i = 0; i < used; i++) {
    ledger_entry *e = &l->e[i];
    if (!__atomic_load_n(&e->freed, SC) || live_importers(s, e)) continue;
    __atomic_store_n(&e->buffer, 0, SC);
    for (int k = 0; k < IMPORTERS; k++) {
      __atomic_store_n(&e->imp[k].n, 0, SC);
      __atomic_store_n(&e->imp[k].start, 0, SC);
      __atomic_store_n(&e->imp[k].pid, 0, SC);
    }
    __atomic_store_n(&e->size, size, SC);
    __atomic_store_n(&e->freed, 0, SC);
    __atomic_store_n(&e->buffer, buffer, SC);
    return (int)i;
  }
  return -1;
}

int ps_share_find(const ps_share *s, int buffer, uint64_t *size, int *freed) {
  const ledger *l = s->led;
  uint32_t n = used_of(l);
  for (uint32_t i = 0; i < n; i++)
    if (__atomic_load_n(&l->e[i].buffer, SC) == buffer) {
      *size = __atomic_load_n(&l->e[i].size, SC);
      *freed = (int)__atomic_load_n(&l->e[i].freed, SC);
      return (int)i;
    }
  return -1;
}

int ps_share_buffer(const ps_share *s, int slot) { return s->led->e[slot].buffer; }

int ps_share_importers(ps_share *s, int slot) {
  return live_importers(s, &s->led->e[slot]);
}

int ps_share_begin_free(ps_share *s, int slot) {
  ledger_entry *e = &s->led->e[slot];
  __atomic_store_n(&e->freed, 1, SC);   /* first: an importer re-checks it after counting */
  int n = live_importers(s, e);
  if (n) __atomic_store_n(&e->freed, 0, SC);
  return n;
}

void ps_share_unfree(ps_share *s, int slot) {
  __atomic_store_n(&s->led->e[slot].freed, 0, SC);
}

/* This process's importer record in e, or NULL. */
static ledger_imp *mine(ledger_entry *e) {
  int32_t me = (int32_t)getpid();
  uint64_t start = my_start();
  for (int i = 0; i < IMPORTERS; i++)
    if (__atomic_load_n(&e->imp[i].pid, SC) == me &&
        __atomic_load_n(&e->imp[i].start, SC) == start)
      return &e->imp[i];
  return NULL;
}

int ps_share_import(ps_share *s, int slot, int delta) {
  ledger_entry *e = &s->led->e[slot];
  ledger_imp *m = mine(e);
  if (m) {
    int32_t n = __atomic_load_n(&m->n, SC);   /* never below 0 */
    while (!__atomic_compare_exchange_n(&m->n, &n, n + delta < 0 ? 0 : n + delta, 0, SC, SC)) {}
    return 0;
  }
  if (delta <= 0) return -1;
  for (int i = 0; i < IMPORTERS; i++) {      /* a free record, or one of a process gone */
    ledger_imp *r = &e->imp[i];
    int32_t pid = __atomic_load_n(&r->pid, SC);
    if (pid && alive(pid, __atomic_load_n(&r->start, SC))) continue;
    /* the pid first: only the winner writes start and n */
    if (!__atomic_compare_exchange_n(&r->pid, &pid, (int32_t)getpid(), 0, SC, SC)) continue;
    __atomic_store_n(&r->start, my_start(), SC);
    __atomic_store_n(&r->n, delta, SC);
    return 0;
  }
  return -1;
}

int ps_share_claim(ps_share *s, int slot, int buffer) {
  ledger_entry *e = &s->led->e[slot];
  if (ps_share_import(s, slot, 1) != 0) return -1;
  /* counted first, then the exporter's free re-checked (it sets freed
   * first, then counts): one of the two sees the other */
  if (__atomic_load_n(&e->freed, SC) || __atomic_load_n(&e->buffer, SC) != buffer) {
    ps_share_import(s, slot, -1);
    return -2;
  }
  return 0;
}

int ps_share_held(const ps_share *s, int slot) {
  ledger_imp *m = mine((ledger_entry *)&s->led->e[slot]);
  return m ? __atomic_load_n(&m->n, SC) : 0;
}

/* ---- the socket ---- */

static int send_fds(int conn, const hello *h, int a, int b) {
  char buf[CMSG_SPACE(2 * sizeof(int))];
  memset(buf, 0, sizeof buf);
  struct iovec io = { .iov_base = (void *)h, .iov_len = sizeof *h };
  struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = buf,
                      .msg_controllen = sizeof buf };
  struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
  cm->cmsg_level = SOL_SOCKET, cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
  int fds[2] = { a, b };
  memcpy(CMSG_DATA(cm), fds, sizeof fds);
  return sendmsg(conn, &m, MSG_NOSIGNAL) == (ssize_t)sizeof *h ? 0 : -1;
}

/* The server: each connection of this uid (or root's, ps_usock_accept
 * checks) gets the hello and both fds, then is closed; its pid is
 * remembered as served. Ends when the stop pipe is written. */
static void *serve(void *ud) {
  ps_share *s = ud;
  hello h = { HELLO_MAGIC, SHARE_VERSION, s->pid, s->pool };
  for (;;) {
    struct pollfd pf[2] = { { s->l.fd, POLLIN, 0 }, { s->stop[0], POLLIN, 0 } };
    if (poll(pf, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pf[1].revents) break;
    if (!(pf[0].revents & POLLIN)) continue;
    int pid;
    int conn = ps_usock_accept(&s->l, 0, &pid);
    if (conn == -2) continue;                 /* another uid: refused and logged */
    if (conn < 0) {
      /* Out of fds or memory: the socket stays readable, so wait a while
       * (still seeing the stop pipe) rather than spin. */
      if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS) {
        struct pollfd st = { s->stop[0], POLLIN, 0 };
        if (poll(&st, 1, 50) > 0) break;
      }
      continue;
    }
    if (add_served(s, pid) != 0) {
      fprintf(stderr, "poolsh: refused a connection to %s from pid %d: %d processes it serves "
              "are alive\n", s->path, pid, SERVED_MAX);
      fflush(stderr);
    } else {
      send_fds(conn, &h, s->pool_fd, s->ledger_fd);
    }
    close(conn);
  }
  return NULL;
}

static int fail(char *err, size_t n, const char *fmt, const char *path) {
  snprintf(err, n, fmt, path, strerror(errno));
  return -1;
}

int ps_share_serve(ps_share *s, const char *name, int pool_fd, char *err, size_t n) {
  char path[PS_USOCK_PATH_MAX];
  if (ps_usock_resolve(name, 1, path, err, n) != PS_USOCK_OK) return -1;
  int r = ps_usock_listen(&s->l, path, 16, err, n);
  if (r == PS_USOCK_NOTSOCK || r == PS_USOCK_LIVE) {
    snprintf(err, n, "%s already exists: remove it or choose another path", path);
    return -1;
  }
  if (r != PS_USOCK_OK) return -1;
  if (pipe2(s->stop, O_CLOEXEC) != 0) {
    fail(err, n, "cannot listen at %s: %s", path);
    ps_usock_close(&s->l);
    return -1;
  }
  s->pool_fd = pool_fd;
  memcpy(s->path, path, strlen(path) + 1);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);   /* signals stay the main thread's */
  r = pthread_create(&s->thread, NULL, serve, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (r != 0) {
    errno = r;
    fail(err, n, "cannot start serving %s: %s", path);
    ps_usock_close(&s->l);
    close(s->stop[0]), close(s->stop[1]);
    s->pool_fd = s->stop[0] = s->stop[1] = -1;
    return -1;
  }
  s->serving = 1;
  return 0;
}

void ps_share_stop(ps_share *s) {
  if (!s || !s->serving) return;
  ssize_t w = write(s->stop[1], "x", 1);
  (void)w;
  pthread_join(s->thread, NULL);
  ps_usock_close(&s->l);                      /* unlinks only the socket it bound */
  close(s->stop[0]), close(s->stop[1]), close(s->pool_fd);
  s->pool_fd = s->stop[0] = s->stop[1] = -1;
  s->serving = 0;
}

void ps_share_free(ps_share *s) {
  if (!s) return;
  ps_share_stop(s);
  munmap(s->led, s->len);
  close(s->ledger_fd);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

int ps_share_receive(int fd, const char *path, int *pool_fd, ps_share **out, char *err, size_t n) {
  hello h;
  union { char buf[CMSG_SPACE(HELLO_FDS_MAX * sizeof(int))]; struct cmsghdr align; } u;
  memset(&u, 0, sizeof u);
  struct iovec io = { .iov_base = &h, .iov_len = sizeof h };
  struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = u.buf,
                      .msg_controllen = sizeof u.buf };
  ssize_t got = recvmsg(fd, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  /* Every fd that came is ours to close, whatever else is wrong: a hello
   * with one fd, or three, leaked them before. */
  int fds[HELLO_FDS_MAX], nfds = 0;
  for (struct cmsghdr *cm = got >= 0 ? CMSG_FIRSTHDR(&m) : NULL; cm; cm = CMSG_NXTHDR(&m, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0))
      continue;
    size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; i++) {
      int f;
      memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof f);
      if (nfds < HELLO_FDS_MAX) fds[nfds++] = f;
      else close(f);
    }
  }
  if (got != (ssize_t)sizeof h || (m.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || nfds != 2 ||
      h.magic != HELLO_MAGIC || h.version != SHARE_VERSION) {
    for (int i = 0; i < nfds; i++) close(fds[i]);
    snprintf(err, n, "%s is not a poolsh pool's socket (or another version's)", path);
    return PS_SHARE_FAILED;
  }
  /* The ledger is the peer's: sealed at its size (else the peer could
   * shrink it under us: SIGBUS), then its size and header checked before
   * any entry is read. */
  struct stat st;
  int seals = fcntl(fds[1], F_GET_SEALS);
  if (seals < 0 || (seals & LEDGER_SEALS) != LEDGER_SEALS) {
    close(fds[0]), close(fds[1]);
    snprintf(err, n, "%s sent no valid export ledger (it is not sealed)", path);
    return PS_SHARE_FAILED;
  }
  ps_share *s = fstat(fds[1], &st) == 0 && st.st_size == (off_t)ledger_len()
                    ? share_map(fds[1]) : NULL;
  if (!s || s->led->magic != LEDGER_MAGIC || s->led->version != SHARE_VERSION ||
      s->led->cap != LEDGER_CAP || s->led->pid != h.pid) {
    if (s) ps_share_free(s); else close(fds[1]);
    close(fds[0]);
    snprintf(err, n, "%s sent no valid export ledger", path);
    return PS_SHARE_FAILED;
  }
  s->pid = h.pid, s->pool = h.pool;
  *pool_fd = fds[0];
  *out = s;
  return 0;
}

int ps_share_connect(const char *name, double timeout_ms, volatile sig_atomic_t *interrupt,
                     int *pool_fd, ps_share **out, char *err, size_t n) {
  char path[PS_USOCK_PATH_MAX];
  if (ps_usock_resolve(name, 0, path, err, n) != PS_USOCK_OK) return PS_SHARE_FAILED;
  double end = ps_usock_now_ms() + timeout_ms;
  int pid;
  int fd = ps_usock_connect(path, end, interrupt, &pid, err, n);
  /* then the hello, under the same deadline */
  int r = fd >= 0 ? ps_usock_wait(fd, POLLIN, end, interrupt) : fd;
  if (r != PS_USOCK_OK && fd >= 0) close(fd);
  switch (r) {
    case PS_USOCK_OK: break;
    case PS_USOCK_NOENT:
      snprintf(err, n, "no socket at %s: export the pool there first", path);
      return PS_SHARE_FAILED;
    case PS_USOCK_REFUSED:
      snprintf(err, n, "nobody is serving %s (its exporter ended or destroyed the pool)", path);
      return PS_SHARE_FAILED;
    case PS_USOCK_TIMEOUT:
      snprintf(err, n, "timed out after %g ms waiting for the pool at %s", timeout_ms, path);
      return PS_SHARE_FAILED;
    case PS_USOCK_INTERRUPTED:
      snprintf(err, n, "interrupted waiting for %s", path);
      return PS_SHARE_INTERRUPTED;
    default:
      if (fd >= 0) fail(err, n, "cannot wait for %s: %s", path);
      return PS_SHARE_FAILED;
  }
  r = ps_share_receive(fd, path, pool_fd, out, err, n);
  close(fd);
  return r;
}
