/*
 * usock.c: Unix-domain sockets for process.c and share.c (usock.h says
 * what each call guarantees; docs/security.md why). A floor helper: no
 * Lua, no other poolsh file; errors are codes and a sentence in err.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "usock.h"

#define RETRY_MS 50     /* a full backlog is tried again, and waits poll the interrupt, this often */

/* Fills a with path: PS_USOCK_OK, or EMPTY / TOOLONG with err set. */
static int addr_of(const char *path, struct sockaddr_un *a, char *err, size_t n) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  size_t len = strlen(path);
  if (len == 0) {
    snprintf(err, n, "the socket path is empty");
    return PS_USOCK_EMPTY;
  }
  if (len >= sizeof a->sun_path) {
    snprintf(err, n, "socket path too long (%zu bytes, at most %zu)", len, sizeof a->sun_path - 1);
    return PS_USOCK_TOOLONG;
  }
  memcpy(a->sun_path, path, len);
  return PS_USOCK_OK;
}

/* Whether uid may talk to us: this process's own uid, or root's. */
static int uid_allowed(uid_t uid) { return uid == geteuid() || uid == 0; }

/* Checks that dir is a directory (not a symlink) of this uid that no one
 * else may enter: 0, or -1 with err set. */
static int private_dir_ok(const char *dir, char *err, size_t n) {
  struct stat st;
  if (lstat(dir, &st) != 0) {
    snprintf(err, n, "cannot use the private socket directory %s: %s", dir, strerror(errno));
    return -1;
  }
  const char *why = !S_ISDIR(st.st_mode) ? "it is not a directory"
                  : st.st_uid != geteuid() ? "it belongs to another user"
                  : (st.st_mode & 077) ? "others may enter it" : NULL;
  if (why) {
    snprintf(err, n, "the private socket directory %s is not safe: %s (it must be a directory "
             "of uid %d with mode 0700): remove it", dir, why, (int)geteuid());
    return -1;
  }
  return 0;
}

int ps_usock_resolve(const char *name, int create, char *out, char *err, size_t n) {
  size_t len = strlen(name);
  if (len == 0) {
    snprintf(err, n, "the socket path is empty");
    return PS_USOCK_EMPTY;
  }
  if (strchr(name, '/')) {                 /* a path: the directory is the user's choice */
    if (len >= PS_USOCK_PATH_MAX) {
      snprintf(err, n, "socket path too long (%zu bytes, at most %d)", len, PS_USOCK_PATH_MAX - 1);
      return PS_USOCK_TOOLONG;
    }
    memcpy(out, name, len + 1);
    return PS_USOCK_OK;
  }
  if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
    snprintf(err, n, "'%s' is not a socket name", name);
    return PS_USOCK_FAILED;
  }
  char dir[PS_USOCK_PATH_MAX];
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  struct stat st;
  if (xdg && xdg[0] == '/' && strlen(xdg) < sizeof dir - 8 && lstat(xdg, &st) == 0 &&
      S_ISDIR(st.st_mode) && st.st_uid == geteuid())
    snprintf(dir, sizeof dir, "%s/poolsh", xdg);
  else
    snprintf(dir, sizeof dir, "/tmp/poolsh-%d", (int)geteuid());
  if (create && mkdir(dir, 0700) != 0 && errno != EEXIST) {
    snprintf(err, n, "cannot make the private socket directory %s: %s", dir, strerror(errno));
    return PS_USOCK_FAILED;
  }
  if ((create || lstat(dir, &st) == 0) && private_dir_ok(dir, err, n) != 0)
    return PS_USOCK_FAILED;
  if (strlen(dir) + 1 + len >= PS_USOCK_PATH_MAX) {
    snprintf(err, n, "socket path too long (%s/%s: %zu bytes, at most %d)", dir, name,
             strlen(dir) + 1 + len, PS_USOCK_PATH_MAX - 1);
    return PS_USOCK_TOOLONG;
  }
  snprintf(out, PS_USOCK_PATH_MAX, "%s/%s", dir, name);
  return PS_USOCK_OK;
}

int ps_usock_listen(ps_usock_listener *l, const char *path, int backlog, char *err, size_t n) {
  struct sockaddr_un a;
  l->fd = -1;
  int r = addr_of(path, &a, err, n);
  if (r != PS_USOCK_OK) return r;
  struct stat st;
  if (lstat(path, &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      snprintf(err, n, "%s already exists and is not a socket", path);
      return PS_USOCK_NOTSOCK;
    }
    /* Stale only when nobody serves it: ECONNREFUSED. A full backlog
     * (EAGAIN), a socket we may not connect to (EACCES) or anything else
     * is left alone. */
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int e = probe < 0 ? errno : connect(probe, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : errno;
    if (probe >= 0) close(probe);
    if (e != ECONNREFUSED) {
      snprintf(err, n, "%s: a live socket is there (%s)", path,
               e == 0 ? "it accepted a connection" : strerror(e));
      return PS_USOCK_LIVE;
    }
    if (unlink(path) != 0) {
      snprintf(err, n, "cannot replace the stale socket %s: %s", path, strerror(errno));
      return PS_USOCK_FAILED;
    }
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(err, n, "cannot make a socket for %s: %s", path, strerror(errno));
    return PS_USOCK_FAILED;
  }
  /* The mode a socket file gets comes from the umask: bind under 0177, so
   * the file is srw------- from the start. Nothing after the bind goes by
   * the path again (a chmod would follow a symlink another user swapped in
   * after the lstat below, in a directory both may write). */
  mode_t old = umask(0177);
  int b = bind(fd, (struct sockaddr *)&a, sizeof a);
  int e = errno;
  umask(old);
  if (b != 0) {
    close(fd);
    snprintf(err, n, "cannot listen on %s: %s", path, strerror(e));
    return PS_USOCK_FAILED;
  }
  if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
    close(fd);
    snprintf(err, n, "cannot listen on %s: the socket file was replaced while binding", path);
    return PS_USOCK_FAILED;
  }
  l->dev = st.st_dev, l->ino = st.st_ino;
  memcpy(l->path, path, strlen(path) + 1);
  l->fd = fd;
  if (listen(fd, backlog) != 0) {
    snprintf(err, n, "cannot listen on %s: %s", path, strerror(errno));
    ps_usock_close(l);
    return PS_USOCK_FAILED;
  }
  return PS_USOCK_OK;
}

void ps_usock_close(ps_usock_listener *l) {
  if (l->fd < 0) return;
  close(l->fd);
  l->fd = -1;
  struct stat st;
  if (lstat(l->path, &st) == 0 && st.st_dev == l->dev && st.st_ino == l->ino) unlink(l->path);
}

int ps_usock_accept(ps_usock_listener *l, int nonblock, int *pid) {
  *pid = 0;
  int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0));
  if (fd < 0) return -1;
  struct ucred cred;
  socklen_t cl = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 || !uid_allowed(cred.uid)) {
    int known = cl == sizeof cred;
    close(fd);
    if (known) fprintf(stderr, "poolsh: refused a connection to %s from uid %d (pid %d)\n",
                       l->path, (int)cred.uid, (int)cred.pid);
    else fprintf(stderr, "poolsh: refused a connection to %s from an unknown uid\n", l->path);
    fflush(stderr);
    return -2;
  }
  *pid = (int)cred.pid;
  return fd;
}

int ps_usock_wait(int fd, short events, double deadline_ms, volatile sig_atomic_t *interrupt) {
  for (;;) {
    if (interrupt && *interrupt) return PS_USOCK_INTERRUPTED;
    int wait = RETRY_MS;
    if (deadline_ms >= 0) {
      double left = deadline_ms - ps_clock_ms();
      if (left <= 0) return PS_USOCK_TIMEOUT;
      if (left < wait) wait = (int)left + 1;
    }
    struct pollfd pf = {fd, events, 0};
    int r = poll(&pf, 1, wait);
    if (r < 0 && errno != EINTR) return PS_USOCK_FAILED;
    if (r > 0) return PS_USOCK_OK;        /* ready, or an error the next call reports */
  }
}

int ps_usock_connect(const char *path, double deadline_ms, volatile sig_atomic_t *interrupt,
                     int *pid, char *err, size_t n) {
  struct sockaddr_un a;
  *pid = 0;
  int r = addr_of(path, &a, err, n);
  if (r != PS_USOCK_OK) return r;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    snprintf(err, n, "cannot make a socket for %s: %s", path, strerror(errno));
    return PS_USOCK_FAILED;
  }
  /* Non-blocking: a server whose backlog is full (busy, or stopped)
   * answers EAGAIN, tried again every RETRY_MS under the deadline and
   * the interrupt. */
  int e = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : errno;
  while (e == EAGAIN || e == EINTR || e == EINPROGRESS || e == EALREADY) {
    if (e == EINPROGRESS || e == EALREADY) {           /* not for Unix sockets on Linux */
      r = ps_usock_wait(fd, POLLOUT, deadline_ms, interrupt);
      if (r == PS_USOCK_OK) {
        socklen_t el = sizeof e;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0) e = errno;
        continue;
      }
    } else {
      r = ps_usock_wait(-1, 0, deadline_ms < 0 || deadline_ms > ps_clock_ms() + RETRY_MS
                                   ? ps_clock_ms() + RETRY_MS : deadline_ms, interrupt);
      if (r == PS_USOCK_TIMEOUT && (deadline_ms < 0 || ps_clock_ms() < deadline_ms)) {
        e = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : errno;
        if (e == EISCONN) e = 0;
        continue;
      }
    }
    close(fd);
    if (r == PS_USOCK_INTERRUPTED) snprintf(err, n, "interrupted connecting to %s", path);
    else if (r == PS_USOCK_TIMEOUT) snprintf(err, n, "timed out connecting to %s", path);
    else snprintf(err, n, "cannot wait for %s: %s", path, strerror(errno));
    return r == PS_USOCK_OK ? PS_USOCK_FAILED : r;
  }
  if (e != 0) {
    close(fd);
    if (e == ENOENT) {
      snprintf(err, n, "no socket at %s", path);
      return PS_USOCK_NOENT;
    }
    if (e == ECONNREFUSED) {
      snprintf(err, n, "nobody serves %s (connection refused)", path);
      return PS_USOCK_REFUSED;
    }
    snprintf(err, n, "cannot connect to %s: %s", path, strerror(e));
    return PS_USOCK_FAILED;
  }
  /* The server's uid, before a byte goes either way: a socket another
   * user created first at this path is not ours to talk to. */
  struct ucred cred;
  socklen_t cl = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0) {
    snprintf(err, n, "cannot check who serves %s: %s", path, strerror(errno));
    close(fd);
    return PS_USOCK_FAILED;
  }
  if (!uid_allowed(cred.uid)) {
    close(fd);
    snprintf(err, n, "%s is served by uid %d, not by this user (uid %d) or root: refused "
             "before anything was sent", path, (int)cred.uid, (int)geteuid());
    return PS_USOCK_PEER;
  }
  *pid = (int)cred.pid;
  return fd;
}
