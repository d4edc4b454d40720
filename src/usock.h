/*
 * usock.h: the one Unix-domain socket helper of poolsh (usock.c), used by
 * process.c (poolsh --serve, poolsh.connect) and share.c (p:export,
 * poolsh.import_pool). A floor helper: it knows no Lua; every call returns
 * a code and, where it fails, a sentence in the caller's buffer.
 *
 * What it guarantees (docs/security.md):
 *  - a bare name (no '/') resolves to a private 0700 directory of this
 *    uid: $XDG_RUNTIME_DIR/poolsh/ when that directory is ours, else
 *    /tmp/poolsh-<uid>/; a path with '/' is used as given;
 *  - a listening socket is bound under umask 077 and chmod 0600, and only
 *    the inode it bound is unlinked when it closes;
 *  - an existing socket at the path is replaced only when connecting to it
 *    gives ECONNREFUSED (nobody serves it);
 *  - every accepted peer and every server connected to runs as this uid
 *    or as root (SO_PEERCRED); others are refused, the server's refusals
 *    logged on stderr.
 */
#ifndef POOLSH_USOCK_H
#define POOLSH_USOCK_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "clock.h"

#define PS_USOCK_PATH_MAX 108     /* sizeof sun_path */

enum {
  PS_USOCK_OK = 0,
  PS_USOCK_FAILED = -1,       /* err says why */
  PS_USOCK_INTERRUPTED = -2,  /* *interrupt was set */
  PS_USOCK_TIMEOUT = -3,      /* the deadline passed */
  PS_USOCK_NOENT = -4,        /* connect: no socket at the path */
  PS_USOCK_REFUSED = -5,      /* connect: nobody serves it (ECONNREFUSED) */
  PS_USOCK_PEER = -6,         /* the other end runs as another uid: err names it */
  PS_USOCK_NOTSOCK = -7,      /* listen: the path exists and is not a socket */
  PS_USOCK_LIVE = -8,         /* listen: a live socket is there */
  PS_USOCK_TOOLONG = -9,      /* the path does not fit sun_path: err says so */
  PS_USOCK_EMPTY = -10,       /* the path is empty */
};

typedef struct ps_usock_listener {
  int fd;                            /* -1: closed */
  dev_t dev;                         /* the inode bound, unlinked at close if still there */
  ino_t ino;
  char path[PS_USOCK_PATH_MAX];
} ps_usock_listener;

/* Writes where name's socket lives into out (PS_USOCK_PATH_MAX bytes): a
 * path with '/' as given; a bare name in the private directory, created
 * (0700) when create is set, checked (a directory, ours, 0700, not a
 * symlink) in both cases. PS_USOCK_OK or a code, err set. */
int ps_usock_resolve(const char *name, int create, char *out, char *err, size_t n);

/* Listens at path (already resolved) with backlog: replaces a stale
 * socket, binds under umask 077, makes it 0600, records its inode.
 * PS_USOCK_OK (l filled) or a code, err set. */
int ps_usock_listen(ps_usock_listener *l, const char *path, int backlog, char *err, size_t n);

/* Closes the listener; unlinks its path only if it is still the inode
 * bound. Idempotent. */
void ps_usock_close(ps_usock_listener *l);

/* Accepts one connection (close-on-exec; blocking unless nonblock) and
 * checks its uid. The fd, or -1 with errno set (EAGAIN, EMFILE, ...), or
 * -2 when the peer was refused (closed, one line on stderr). *pid gets
 * the peer's pid (0: unknown). */
int ps_usock_accept(ps_usock_listener *l, int nonblock, int *pid);

/* Connects to path without blocking: a full backlog is tried again every
 * 50 ms until deadline_ms (now_ms()'s clock; < 0: none) or *interrupt
 * (may be NULL). Then checks the server's uid before anything is sent.
 * The fd (non-blocking, close-on-exec) and *pid, or a code: NOENT,
 * REFUSED, TIMEOUT, INTERRUPTED, PEER, TOOLONG, EMPTY, FAILED (err set). */
int ps_usock_connect(const char *path, double deadline_ms, volatile sig_atomic_t *interrupt,
                     int *pid, char *err, size_t n);

/* Waits until fd is ready for events (POLLIN/POLLOUT), polling
 * *interrupt every 50 ms, until deadline_ms (< 0: none). PS_USOCK_OK,
 * TIMEOUT, INTERRUPTED or FAILED (errno set). */
int ps_usock_wait(int fd, short events, double deadline_ms, volatile sig_atomic_t *interrupt);

/* The clock of the deadlines above: clock.h's ps_clock_ms, by the name
 * usock's callers (share.c) know it. */
static inline double ps_usock_now_ms(void) {
  return ps_clock_ms();
}

#endif
