/*
 * process.c: poolsh.Process, a second poolsh process and the channel to
 * it: poolsh.spawn (a child on a socketpair), poolsh.connect (a
 * `poolsh --serve SOCKET` on a Unix-domain socket), poolsh.parent (the
 * channel a spawned child has back), and poolsh.serve, the loop that runs
 * the chunks p:eval sends (docs/processes.md).
 *
 * The channel carries frames: a 4-byte big-endian length, then the kind
 * ('M' a message, 'E' an eval request, 'R' its results, 'X' its error),
 * a 4-byte sequence number (an eval's reply names its request, so a reply
 * that comes after its eval was interrupted is dropped), a 4-byte count
 * and that many values, each a tag and its bytes: nil, booleans,
 * integers, floats, strings and tables of them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bindings.h"
#include "clock.h"
#include "frame.h"
#include "usock.h"

extern char **environ;

#define PS_PROCESS "poolsh.Process"
#define PS_LISTENER "poolsh.Listener"     /* poolsh.serve(path)'s socket: internal */
#define PS_WIREBUF "poolsh.WireBuffer"    /* a frame being encoded: internal */

#define FRAME_MAX (64u << 20)   /* bytes of one frame's payload */
#define DEPTH_MAX 100           /* tables nested in one value */
#define POLL_MS 50              /* waits poll the interrupt flag this often */
#define CLOSE_GRACE_MS 2000     /* close: the child's time to exit, then SIGTERM */
#define TERM_GRACE_MS 1000      /* then SIGKILL */
#define CHILD_FD 3              /* the child's end of the channel, in the child */
#define CHILD_FD_S "3"
#define QUEUE_MSGS_MAX 4096     /* unread messages (or requests) queued per channel */
#define QUEUE_BYTES_MAX (128u << 20)   /* and their bytes */
#define CLIENTS_MAX 16          /* --serve: clients connected at once; more wait */
#define PARTIAL_MS 10000        /* --serve: a message begun must be whole within this */
#define SEND_MS 10000           /* --serve: a client must take its reply within this */
#define IDLE_MS 60000           /* --serve, full: a client idle this long makes room */
#ifdef __EMSCRIPTEN__   /* a page: no second process (web_refuse below) */
#define prctl(op, arg) ((void)(op), (void)(arg), -1)
#define syscall(...) (errno = ENOSYS, -1L)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

enum { ROLE_CHILD, ROLE_PARENT, ROLE_PEER, ROLE_CLIENT };
enum { UV_INBOX = 1, UV_REQUESTS, UV_WHERE, PROCESS_NUV = UV_WHERE };

/* ---- time and signals ----------------------------------------------------- */

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static const char *signame(int sig) {
  switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGPIPE: return "SIGPIPE";
    case SIGTERM: return "SIGTERM";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return NULL;
  }
}

static volatile sig_atomic_t *interrupt_of(lua_State *L) {
  return &((ps_ctx *)lua_touserdata(L, PS_UP_CTX))->interrupt;
}

/* ---- children: tracking, reaping --------------------------------------------- */

/* Every Process of this state, weakly: poolsh.children() lists the
 * children not yet waited for. */
static void track(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.processes") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "poolsh.processes");
  }
  lua_pushvalue(L, idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* Waits up to ms (0: just looks) for the child to exit; 1 once reaped. */
static int reap(ps_processud *p, int ms) {
  if (p->role != ROLE_CHILD || p->pid <= 0) return 0;
  if (p->reaped) return 1;
  double end = ps_clock_ms() + ms;
  for (;;) {
    int st;
    pid_t r = waitpid(p->pid, &st, WNOHANG);
    if (r == p->pid || (r < 0 && errno == ECHILD)) {
      p->reaped = 1;
      if (r == p->pid && WIFEXITED(st)) p->status = WEXITSTATUS(st);
      else if (r == p->pid && WIFSIGNALED(st)) p->signal = WTERMSIG(st);
      return 1;
    }
    if (ps_clock_ms() >= end) return 0;
    sleep_ms(5);
  }
}

/* Pushes how the child ended: "exited with status 1" or "was killed by
 * signal 9 (SIGKILL)". */
static const char *push_end(lua_State *L, const ps_processud *p) {
  if (p->signal) {
    const char *n = signame(p->signal);
    return n ? lua_pushfstring(L, "was killed by signal %d (%s)", p->signal, n)
             : lua_pushfstring(L, "was killed by signal %d", p->signal);
  }
  return lua_pushfstring(L, "exited with status %d", p->status);
}

/* Pushes "process 1234" (the child), "the parent process 1234" or "the
 * server at PATH". */
static const char *push_who(lua_State *L, int idx, const ps_processud *p) {
  if (p->role == ROLE_PARENT) return lua_pushfstring(L, "the parent process %d", (int)p->pid);
  if (p->role == ROLE_PEER) {
    lua_getiuservalue(L, idx, UV_WHERE);
    const char *w = lua_pushfstring(L, "the server at %s", lua_tostring(L, -1));
    lua_remove(L, -2);
    return w;
  }
  if (p->role == ROLE_CLIENT) return lua_pushliteral(L, "the client");
  return lua_pushfstring(L, "process %d", (int)p->pid);
}

/* Closes the channel once; for a child: waits up to CLOSE_GRACE_MS for
 * it to exit, then SIGTERM, then SIGKILL, and reaps it. Never raises. */
static void process_release(lua_State *L, ps_processud *p) {
  if (p->fd >= 0) close(p->fd);
  p->fd = -1;
  free(p->rbuf);
  p->rbuf = NULL;
  p->rlen = p->rcap = 0;
  if (p->role != ROLE_CHILD || p->pid <= 0 || p->reaped) return;
  if (!reap(p, CLOSE_GRACE_MS)) {
    kill(p->pid, SIGTERM);
    if (!reap(p, TERM_GRACE_MS)) {
      kill(p->pid, SIGKILL);
      int st;
      while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR) {}
      p->reaped = 1;
      p->signal = SIGKILL;
    }
  }
}

/* ---- checks ------------------------------------------------------------------ */

static ps_processud *toprocess(lua_State *L, int arg) {
  return (ps_processud *)ps_checkud(L, arg, PS_UV_PROCESS, PS_PROCESS);
}

/* Raises that the other end is gone: how a child ended, or that the
 * parent or server closed the channel. */
static int gone(lua_State *L, int idx, ps_processud *p) {
  push_who(L, idx, p);
  if (p->role == ROLE_CHILD && reap(p, 1000)) {
    push_end(L, p);
    return luaL_error(L, "%s %s", lua_tostring(L, -2), lua_tostring(L, -1));
  }
  return luaL_error(L, "%s closed the channel", lua_tostring(L, -1));
}

/* The Process at arg with its channel open, else raises. */
static ps_processud *checkopen(lua_State *L, int arg) {
  ps_processud *p = toprocess(L, arg);
  if (p->fd < 0) {
    push_who(L, arg, p);
    return luaL_error(L, "attempt to use a closed poolsh.Process (%s)", lua_tostring(L, -1)),
           NULL;
  }
  if (p->eof) gone(L, arg, p);
  return p;
}

/* Pushes a new closed Process with its queues. */
static ps_processud *newprocess(lua_State *L, int role) {
  ps_processud *p = (ps_processud *)ps_newobject(L, PS_UV_PROCESS, PROCESS_NUV);
  p->fd = -1;
  p->role = role;
  lua_newtable(L);
  lua_setiuservalue(L, -2, UV_INBOX);
  lua_newtable(L);
  lua_setiuservalue(L, -2, UV_REQUESTS);
  track(L, -1);
  return p;
}

/* ---- encoding ------------------------------------------------------------------ */

typedef struct wbuf {
  char *b;
  size_t n, cap;
} wbuf;

static int wbuf_gc(lua_State *L) {
  wbuf *w = (wbuf *)lua_touserdata(L, 1);
  free(w->b);
  w->b = NULL;
  return 0;
}

/* Pushes an empty buffer the collector frees if encoding raises. */
static wbuf *newwbuf(lua_State *L) {
  wbuf *w = (wbuf *)lua_newuserdatauv(L, sizeof *w, 0);
  memset(w, 0, sizeof *w);
  if (luaL_newmetatable(L, PS_WIREBUF)) {
    lua_pushcfunction(L, wbuf_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return w;
}

static void put(lua_State *L, wbuf *w, const void *src, size_t n) {
  if (w->n + n > 4 + (size_t)FRAME_MAX)            /* the length, then what the receiver takes */
    luaL_error(L, "message too large (more than %d MiB)", (int)(FRAME_MAX >> 20));
  if (w->n + n > w->cap) {
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->n + n) cap *= 2;
    char *b = realloc(w->b, cap);
    if (!b) luaL_error(L, "poolsh: out of memory");
    w->b = b, w->cap = cap;
  }
  memcpy(w->b + w->n, src, n);
  w->n += n;
}

static void put32(lua_State *L, wbuf *w, uint32_t v) {
  unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 8), (unsigned char)v};
  put(L, w, b, 4);
}

static void put64(lua_State *L, wbuf *w, uint64_t v) {
  put32(L, w, (uint32_t)(v >> 32));
  put32(L, w, (uint32_t)v);
}

/* Encodes the value at idx; what names it in an error ("the message",
 * "argument 2", "result 1"). */
static void encode(lua_State *L, wbuf *w, int idx, int depth, const char *what) {
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
    case LUA_TNIL: put(L, w, "n", 1); break;
    case LUA_TBOOLEAN: put(L, w, lua_toboolean(L, idx) ? "t" : "f", 1); break;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        put(L, w, "i", 1);
        put64(L, w, (uint64_t)lua_tointeger(L, idx));
      } else {
        double d = lua_tonumber(L, idx);
        uint64_t u;
        memcpy(&u, &d, sizeof u);
        put(L, w, "d", 1);
        put64(L, w, u);
      }
      break;
    case LUA_TSTRING: {
      size_t n;
      const char *s = lua_tolstring(L, idx, &n);
      if (n > FRAME_MAX) luaL_error(L, "message too large (more than %d MiB)", (int)(FRAME_MAX >> 20));
      put(L, w, "s", 1);
      put32(L, w, (uint32_t)n);
      put(L, w, s, n);
      break;
    }
    case LUA_TTABLE: {
      if (depth >= DEPTH_MAX)
        luaL_error(L, "cannot send %s: tables nested deeper than %d levels (a table that "
                   "contains itself?)", what, DEPTH_MAX);
      luaL_checkstack(L, 4, "sending a table");
      uint32_t n = 0;
      lua_pushnil(L);
      while (lua_next(L, idx)) { n++; lua_pop(L, 1); }
      put(L, w, "T", 1);
      put32(L, w, n);
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        encode(L, w, -2, depth + 1, what);
        encode(L, w, -1, depth + 1, what);
        lua_pop(L, 1);
      }
      break;
    }
    default:
      luaL_error(L, "cannot send a %s%s (%s): only strings, numbers, booleans, nil and tables "
                 "of them travel", luaL_typename(L, idx), depth ? " inside a table" : "", what);
  }
}

/* Pushes a buffer holding a frame of kind with the n values from index
 * first; label names value i in errors (a format with one %d: i + base). */
static wbuf *frame(lua_State *L, char kind, uint32_t seq, int first, int n,
                   const char *label, int base) {
  first = lua_absindex(L, first);
  wbuf *w = newwbuf(L);
  put32(L, w, 0);
  put(L, w, &kind, 1);
  put32(L, w, seq);
  put32(L, w, (uint32_t)n);
  char what[48];
  for (int i = 0; i < n; i++) {
    snprintf(what, sizeof what, label, base + i);
    encode(L, w, first + i, 0, what);
  }
  uint32_t len = (uint32_t)(w->n - 4);
  unsigned char *h = (unsigned char *)w->b;
  h[0] = (unsigned char)(len >> 24), h[1] = (unsigned char)(len >> 16);
  h[2] = (unsigned char)(len >> 8), h[3] = (unsigned char)len;
  return w;
}

/* ---- decoding ------------------------------------------------------------------ */

typedef struct rd {
  const unsigned char *p, *end;
  int bad;                   /* the bytes are not a well-formed message */
} rd;

static uint32_t get32(rd *r) {
  if (r->end - r->p < 4) { r->bad = 1; return 0; }
  uint32_t v = ((uint32_t)r->p[0] << 24) | ((uint32_t)r->p[1] << 16) |
               ((uint32_t)r->p[2] << 8) | r->p[3];
  r->p += 4;
  return v;
}

static uint64_t get64(rd *r) {
  uint64_t hi = get32(r);
  return (hi << 32) | get32(r);
}

/* Pushes one decoded value (something, even when r->bad gets set). */
static void decode(lua_State *L, rd *r, int depth) {
  if (!lua_checkstack(L, 3)) { r->bad = 1; return; }     /* the caller's top is reset */
  if (r->p >= r->end || depth > DEPTH_MAX) { r->bad = 1; lua_pushnil(L); return; }
  char t = (char)*r->p++;
  switch (t) {
    case 'n': lua_pushnil(L); break;
    case 't': lua_pushboolean(L, 1); break;
    case 'f': lua_pushboolean(L, 0); break;
    case 'i': lua_pushinteger(L, (lua_Integer)get64(r)); break;
    case 'd': {
      uint64_t u = get64(r);
      double d;
      memcpy(&d, &u, sizeof d);
      lua_pushnumber(L, d);
      break;
    }
    case 's': {
      uint32_t n = get32(r);
      if ((size_t)(r->end - r->p) < n) { r->bad = 1; n = 0; }
      lua_pushlstring(L, (const char *)r->p, n);
      r->p += n;
      break;
    }
    case 'T': {
      uint32_t n = get32(r);
      if ((size_t)(r->end - r->p) < (size_t)n * 2) { r->bad = 1; n = 0; }
      lua_createtable(L, 0, (int)(n < 1024 ? n : 1024));
      for (uint32_t i = 0; i < n && !r->bad; i++) {
        decode(L, r, depth + 1);
        if (!r->bad) decode(L, r, depth + 1);
        if (r->bad) break;                           /* the caller resets the stack */
        if (lua_isnil(L, -2) || (lua_type(L, -2) == LUA_TNUMBER && isnan(lua_tonumber(L, -2)))) {
          r->bad = 1;
          lua_pop(L, 2);
        } else {
          lua_rawset(L, -3);
        }
      }
      break;
    }
    default: r->bad = 1; lua_pushnil(L);
  }
}

int ps_frame_decode(lua_State *L, const char *body, size_t len, char *kind, uint32_t *seq) {
  int top = lua_gettop(L);
  if (len < 9) return -1;
  rd d = {(const unsigned char *)body, (const unsigned char *)body + len, 0};
  char k = (char)*d.p++;
  *seq = get32(&d);
  uint32_t n = get32(&d);
  if (n > len || (k != 'M' && k != 'E' && k != 'R' && k != 'X') || !lua_checkstack(L, (int)n + 4))
    d.bad = 1;                                         /* each value takes a byte at least */
  for (uint32_t i = 0; i < n && !d.bad; i++) decode(L, &d, 0);
  if (d.bad || d.p != d.end) {
    lua_settop(L, top);
    return -1;
  }
  *kind = k;
  return (int)n;
}

/* ---- the channel: sending, reading frames ---------------------------------------- */

/* Writes the frame; raises when the other end is gone or on an
 * interrupt (the channel then closes: a frame may be cut). A server's
 * client that does not take its reply within SEND_MS is closed too: it
 * must not hold the server. */
static void send_frame(lua_State *L, int idx, ps_processud *p, const wbuf *w) {
  size_t off = 0;
  volatile sig_atomic_t *intr = interrupt_of(L);
  double deadline = p->role == ROLE_CLIENT ? ps_clock_ms() + SEND_MS : -1;
  while (off < w->n) {
    if (deadline >= 0 && ps_clock_ms() > deadline) {
      close(p->fd);
      p->fd = -1;
      push_who(L, idx, p);
      luaL_error(L, "%s did not take its reply for %d s: the channel is closed",
                 lua_tostring(L, -1), SEND_MS / 1000);
    }
    ssize_t k = send(p->fd, w->b + off, w->n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) { off += (size_t)k; continue; }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (*intr) {
        *intr = 0;
        push_who(L, idx, p);
        if (off > 0) {
          close(p->fd);
          p->fd = -1;
          lua_pushfstring(L, "interrupted sending to %s: the channel is closed (a message "
                          "was cut)", lua_tostring(L, -1));
          return (void)lua_error(L);
        }
        lua_pushfstring(L, "interrupted sending to %s", lua_tostring(L, -1));
        return (void)lua_error(L);
      }
      struct pollfd pf = {p->fd, POLLOUT, 0};
      poll(&pf, 1, POLL_MS);
      continue;
    }
    p->eof = 1;
    gone(L, idx, p);
  }
}

/* Makes room in the read buffer when it is full and holds less than
 * need: the buffer grows as the bytes arrive (doubling, never past need),
 * so a header announcing 64 MiB costs nothing until they come. */
static void grow(lua_State *L, ps_processud *p, size_t need) {
  if (p->rlen < p->rcap || p->rlen >= need) return;
  size_t cap = p->rcap < 2048 ? 4096 : p->rcap * 2;
  if (cap > need && need > 4096) cap = need;
  char *b = realloc(p->rbuf, cap);
  if (!b) luaL_error(L, "poolsh: out of memory");
  p->rbuf = b, p->rcap = cap;
}

/* Reads until the buffer holds need bytes; 1 done, 0 timed out (ms < 0:
 * no limit), -1 the other end closed, -2 interrupted. */
static int fill(lua_State *L, ps_processud *p, size_t need, double deadline) {
  volatile sig_atomic_t *intr = interrupt_of(L);
  while (p->rlen < need) {
    grow(L, p, need);
    if (*intr) return -2;
    int wait = POLL_MS;
    if (deadline >= 0) {
      double left = deadline - ps_clock_ms();
      if (left <= 0) return 0;
      if (left < wait) wait = (int)left + 1;
    }
    struct pollfd pf = {p->fd, POLLIN, 0};
    int r = poll(&pf, 1, wait);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t k = recv(p->fd, p->rbuf + p->rlen, p->rcap - p->rlen, MSG_DONTWAIT);
    if (k > 0) p->rlen += (size_t)k;
    else if (k == 0 || (errno != EAGAIN && errno != EINTR && errno != EWOULDBLOCK)) {
      p->eof = 1;
      return -1;
    }
  }
  return 1;
}

/* Raises that a malformed message came from the Process at idx, closing
 * its channel. */
static int malformed(lua_State *L, int idx, ps_processud *p, const char *why) {
  close(p->fd);
  p->fd = -1;
  push_who(L, idx, p);
  return luaL_error(L, "a malformed message came from %s: the channel is closed%s",
                    lua_tostring(L, -1), why);
}

/* The length a whole frame at the head of the buffer takes (4 + its
 * announced length), or 0 while fewer than 4 bytes are there. */
static size_t frame_need(const ps_processud *p) {
  if (p->rlen < 4) return 0;
  const unsigned char *h = (const unsigned char *)p->rbuf;
  uint32_t len = ((uint32_t)h[0] << 24) | ((uint32_t)h[1] << 16) | ((uint32_t)h[2] << 8) | h[3];
  return 4 + (size_t)len;
}

/* Reads one frame and pushes its values; returns its kind ('M', 'E', 'R',
 * 'X'), or 0 when timed out (nothing pushed); *flen gets its length.
 * Raises when the other end closed, on an interrupt (waiting: the text
 * after "interrupted ") and on a malformed frame (the channel then
 * closes): so is an eval request ('E') from a process that serves eval
 * (a spawned child, a server): only a parent or a client sends those. */
static int read_frame(lua_State *L, int idx, ps_processud *p, double deadline,
                      uint32_t *seq, int *nvals, size_t *flen, const char *waiting) {
  int r = fill(L, p, 4, deadline);
  size_t used = 0;
  if (r == 1) {
    used = frame_need(p);
    if (used < 4 + 9 || used > 4 + (size_t)FRAME_MAX) return malformed(L, idx, p, "");
    r = fill(L, p, used, deadline);
  }
  if (r == 0) return 0;
  if (r == -1) return gone(L, idx, p);
  if (r == -2) {
    *interrupt_of(L) = 0;
    push_who(L, idx, p);
    lua_pushfstring(L, "interrupted %s %s", waiting, lua_tostring(L, -1));
    return lua_error(L);   /* as every interrupted wait: no position (errors.md) */
  }
  /* the frame leaves the buffer first: a malformed one is dropped whole */
  size_t len = used - 4;
  const char *body = lua_pushlstring(L, p->rbuf + 4, len);
  int bodyidx = lua_gettop(L);
  memmove(p->rbuf, p->rbuf + used, p->rlen - used);
  p->rlen -= used;
  if (p->rcap > (1u << 20) && p->rlen < (64u << 10)) {   /* a large frame went: give it back */
    char *b = realloc(p->rbuf, 64u << 10);
    if (b) p->rbuf = b, p->rcap = 64u << 10;
  }
  char kind;
  int n = ps_frame_decode(L, body, len, &kind, seq);
  if (n < 0) {
    lua_settop(L, bodyidx - 1);
    return malformed(L, idx, p, "");
  }
  if (kind == 'E' && (p->role == ROLE_CHILD || p->role == ROLE_PEER)) {
    lua_settop(L, bodyidx - 1);
    return malformed(L, idx, p, " (an eval request: only this process sends those to it)");
  }
  lua_remove(L, bodyidx);
  *nvals = n;
  if (flen) *flen = len;
  return kind;
}

/* Appends the top n values, packed as {n = n, seq = seq, len = bytes},
 * to queue uv of the Process at idx. Past QUEUE_MSGS_MAX entries or
 * QUEUE_BYTES_MAX bytes unread, closes the channel and raises: a peer
 * that floods messages must not grow this process without bound. */
static void enqueue(lua_State *L, int idx, int uv, int n, uint32_t seq, size_t bytes) {
  idx = lua_absindex(L, idx);
  lua_createtable(L, n, 3);
  lua_insert(L, -n - 1);
  for (int i = n; i >= 1; i--) lua_rawseti(L, -i - 1, i);
  lua_pushinteger(L, n);
  lua_setfield(L, -2, "n");
  lua_pushinteger(L, (lua_Integer)seq);
  lua_setfield(L, -2, "seq");
  lua_pushinteger(L, (lua_Integer)bytes);
  lua_setfield(L, -2, "len");
  lua_getiuservalue(L, idx, uv);
  lua_Integer count = (lua_Integer)lua_rawlen(L, -1);
  lua_getfield(L, -1, "bytes");
  lua_Integer total = lua_tointeger(L, -1) + (lua_Integer)bytes;
  lua_pop(L, 1);
  if (count >= QUEUE_MSGS_MAX || total > (lua_Integer)QUEUE_BYTES_MAX) {
    ps_processud *p = toprocess(L, idx);
    close(p->fd);
    p->fd = -1;
    push_who(L, idx, p);
    luaL_error(L, "%s sent more than %d messages or %d MiB that were not read: the channel "
               "is closed", lua_tostring(L, -1), QUEUE_MSGS_MAX, (int)(QUEUE_BYTES_MAX >> 20));
  }
  lua_pushinteger(L, total);
  lua_setfield(L, -2, "bytes");
  lua_insert(L, -2);
  lua_rawseti(L, -2, count + 1);
  lua_pop(L, 1);
}

/* Pops the oldest entry of queue uv and pushes it; 0 (nothing pushed)
 * when the queue is empty. */
static int dequeue(lua_State *L, int idx, int uv) {
  idx = lua_absindex(L, idx);
  lua_getiuservalue(L, idx, uv);
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
  if (n == 0) { lua_pop(L, 1); return 0; }
  lua_rawgeti(L, -1, 1);
  for (lua_Integer i = 1; i < n; i++) {
    lua_rawgeti(L, -2, i + 1);
    lua_rawseti(L, -3, i);
  }
  lua_pushnil(L);
  lua_rawseti(L, -3, n);
  lua_getfield(L, -1, "len");
  lua_getfield(L, -3, "bytes");
  lua_Integer left = lua_tointeger(L, -1) - lua_tointeger(L, -2);
  lua_pop(L, 2);
  lua_pushinteger(L, left > 0 ? left : 0);
  lua_setfield(L, -3, "bytes");
  lua_remove(L, -2);
  return 1;
}

/* Pushes entry's n values; returns n. */
static int unpack_entry(lua_State *L) {
  int t = lua_gettop(L);
  lua_getfield(L, t, "n");
  int n = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  luaL_checkstack(L, n, "too many values");
  for (int i = 1; i <= n; i++) lua_rawgeti(L, t, i);
  lua_remove(L, t);
  return n;
}

/* A duration in seconds at arg (nil: none): the deadline in ms, or -1. */
static double optdeadline(lua_State *L, int arg) {
  if (lua_isnoneornil(L, arg)) return -1;
  lua_Number s = luaL_checknumber(L, arg);
  if (!(s >= 0) || isinf(s)) luaL_argerror(L, arg, "timeout must be >= 0 and finite (seconds)");
  return ps_clock_ms() + s * 1e3;
}

/* ---- methods ------------------------------------------------------------------- */

/* p:send(v): sends one value (a message p:recv takes on the other end). */
static int process_send(lua_State *L) {
  ps_processud *p = checkopen(L, 1);
  luaL_checkany(L, 2);
  if (lua_gettop(L) > 2)
    return luaL_argerror(L, 3, "send takes one value (a table carries more)");
  send_frame(L, 1, p, frame(L, 'M', 0, 2, 1, "the message", 0));
  return 0;
}

/* p:recv([timeout_s]) -> the next message; raises when timeout_s
 * seconds pass first. */
static int process_recv(lua_State *L) {
  ps_processud *p = toprocess(L, 1);
  double deadline = optdeadline(L, 2);
  lua_Number secs = luaL_optnumber(L, 2, 0);
  lua_settop(L, 1);
  if (dequeue(L, 1, UV_INBOX)) return unpack_entry(L) ? 1 : (lua_pushnil(L), 1);
  p = checkopen(L, 1);
  for (;;) {
    uint32_t seq;
    int n;
    size_t len;
    int kind = read_frame(L, 1, p, deadline, &seq, &n, &len, "waiting for a message from");
    if (kind == 0) {
      char t[32];
      snprintf(t, sizeof t, "%.14g", (double)secs);
      push_who(L, 1, p);
      return luaL_error(L, "timed out after %s s waiting for a message from %s", t,
                        lua_tostring(L, -1));
    }
    if (kind == 'M') {
      if (n == 0) lua_pushnil(L);
      return 1;
    }
    if (kind == 'E') enqueue(L, 1, UV_REQUESTS, n, seq, len);   /* for poolsh.serve */
    else lua_pop(L, n);                                    /* a late reply: dropped */
  }
}

/* p:eval(code, ...) -> what the chunk returned in the other process;
 * raises its error, prefixed with its pid. code may be {code, timeout_s
 * = seconds}: eval then raises when the results take longer (a late
 * reply is dropped: its sequence number names the eval that gave up). */
static int process_eval(lua_State *L) {
  ps_processud *p = checkopen(L, 1);
  double deadline = -1;
  lua_Number secs = 0;
  if (lua_type(L, 2) == LUA_TTABLE) {
    if (lua_rawgeti(L, 2, 1) != LUA_TSTRING)
      return luaL_argerror(L, 2, "the table holds no code: {code, timeout_s = seconds}");
    if (lua_getfield(L, 2, "timeout_s") != LUA_TNIL) {
      if (!lua_isnumber(L, -1))
        return luaL_argerror(L, 2, "timeout_s must be a number (seconds)");
      secs = lua_tonumber(L, -1);
      if (!(secs >= 0) || isinf(secs))
        return luaL_argerror(L, 2, "timeout_s must be >= 0 and finite (seconds)");
      deadline = ps_clock_ms() + secs * 1e3;
    }
    lua_pop(L, 1);
    lua_replace(L, 2);                                 /* the code, in the table's place */
  }
  luaL_checkstring(L, 2);
  if (!p->serving) {
    push_who(L, 1, p);
    return luaL_error(L, "%s does not serve eval (it runs a script: talk to it with send and "
                      "recv)", lua_tostring(L, -1));
  }
  uint32_t seq = ++p->seq;
  int top = lua_gettop(L);
  wbuf *w = frame(L, 'E', seq, 2, top - 1, "argument %d of eval", 1);
  send_frame(L, 1, p, w);
  lua_settop(L, 1);
  for (;;) {
    uint32_t got;
    int n;
    size_t len;
    int kind = read_frame(L, 1, p, deadline, &got, &n, &len, "waiting for eval's results from");
    if (kind == 0) {
      char t[32];
      snprintf(t, sizeof t, "%.14g", (double)secs);
      push_who(L, 1, p);
      return luaL_error(L, "timed out after %s s waiting for eval's results from %s", t,
                        lua_tostring(L, -1));
    }
    if (kind == 'M') { enqueue(L, 1, UV_INBOX, n, 0, len); continue; }
    if (kind == 'E') { enqueue(L, 1, UV_REQUESTS, n, got, len); continue; }
    if (got != seq) { lua_pop(L, n); continue; }
    if (kind == 'R') return n;
    lua_settop(L, 1 + (n > 0));
    if (n == 0) lua_pushliteral(L, "(no message)");
    if (p->pid > 0)
      return luaL_error(L, "process %d: %s", (int)p->pid, luaL_tolstring(L, 2, NULL));
    return luaL_error(L, "%s", luaL_tolstring(L, 2, NULL));
  }
}

/* p:wait([timeout_s]) -> the child's exit status (128 + the signal's
 * number and its name when a signal ended it). */
static int process_wait(lua_State *L) {
  ps_processud *p = toprocess(L, 1);
  double deadline = optdeadline(L, 2);
  if (p->role != ROLE_CHILD) {
    push_who(L, 1, p);
    return luaL_error(L, "%s was not spawned by this process: it cannot be waited for",
                      lua_tostring(L, -1));
  }
  volatile sig_atomic_t *intr = interrupt_of(L);
  while (!reap(p, 0)) {
    if (*intr) {
      *intr = 0;
      lua_pushfstring(L, "interrupted waiting for process %d to exit", (int)p->pid);
      return lua_error(L);
    }
    if (deadline >= 0 && ps_clock_ms() >= deadline) {
      char t[32];
      snprintf(t, sizeof t, "%.14g", (double)luaL_optnumber(L, 2, 0));
      return luaL_error(L, "timed out after %s s waiting for process %d to exit", t, (int)p->pid);
    }
    sleep_ms(10);
  }
  if (p->signal) {
    lua_pushinteger(L, 128 + p->signal);
    const char *n = signame(p->signal);
    if (n) lua_pushstring(L, n);
    else lua_pushfstring(L, "signal %d", p->signal);
    return 2;
  }
  lua_pushinteger(L, p->status);
  return 1;
}

/* p:kill([signal]): sends SIGTERM, or the signal named ("KILL",
 * "SIGINT", ...) or numbered. */
static int process_kill(lua_State *L) {
  static const char *const names[] = {"TERM", "KILL", "INT", "HUP", "QUIT", "USR1", "USR2", NULL};
  static const int sigs[] = {SIGTERM, SIGKILL, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  ps_processud *p = toprocess(L, 1);
  int sig = SIGTERM;
  if (lua_type(L, 2) == LUA_TSTRING) {
    const char *s = lua_tostring(L, 2);
    if (strncmp(s, "SIG", 3) == 0) s += 3;
    int i = 0;
    while (names[i] && strcmp(names[i], s) != 0) i++;
    if (!names[i])
      return luaL_argerror(L, 2, lua_pushfstring(L, "unknown signal '%s' (TERM, KILL, INT, "
                                                 "HUP, QUIT, USR1, USR2)", ps_shown(L, 2)));
    sig = sigs[i];
  } else if (!lua_isnoneornil(L, 2)) {
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1 || n > 64) return luaL_argerror(L, 2, "signal number outside [1, 64]");
    sig = (int)n;
  }
  if (p->role != ROLE_CHILD) {
    push_who(L, 1, p);
    return luaL_error(L, "%s was not spawned by this process: it cannot be killed",
                      lua_tostring(L, -1));
  }
  if (reap(p, 0)) {
    push_end(L, p);
    return luaL_error(L, "process %d %s", (int)p->pid, lua_tostring(L, -1));
  }
  kill(p->pid, sig);
  return 0;
}

/* p:close() -> for a child, its exit status as p:wait gives it. */
static int process_close(lua_State *L) {
  ps_processud *p = toprocess(L, 1);
  int was_open = p->fd >= 0;
  process_release(L, p);
  if (p->role != ROLE_CHILD || !was_open) return 0;
  lua_settop(L, 1);
  return process_wait(L);
}

static int process_gc(lua_State *L) {
  ps_processud *p = (ps_processud *)ps_toud(L, 1, PS_UV_PROCESS);
  if (p == NULL) return luaL_typeerror(L, 1, PS_PROCESS);     /* called by hand */
  process_release(L, p);
  return 0;
}

static int process_tostring(lua_State *L) {
  ps_processud *p = (ps_processud *)ps_checkud(L, 1, PS_UV_PROCESS, PS_PROCESS);
  push_who(L, 1, p);
  if (p->reaped) {
    push_end(L, p);
    lua_pushfstring(L, "poolsh.Process (%s %s)", lua_tostring(L, -2), lua_tostring(L, -1));
  } else {
    lua_getiuservalue(L, 1, UV_WHERE);                /* a child's script, or nil */
    int script = p->role == ROLE_CHILD && lua_isstring(L, -1);
    lua_pushfstring(L, "poolsh.Process (%s%s%s%s)", lua_tostring(L, -2), script ? ", " : "",
                    script ? lua_tostring(L, -1) : "",
                    p->fd < 0 ? ", closed" : p->serving ? ", serving" : "");
  }
  return 1;
}

/* A Process's fields: mt.fields in Lua, process_index here. */
static const char *const process_fields[] = {"pid", "open", "serving", "status", NULL};

static int process_index(lua_State *L) {
  if (ps_method(L)) return 1;
  ps_processud *p = (ps_processud *)ps_checkud(L, 1, PS_UV_PROCESS, PS_PROCESS);
  switch (ps_field(L, 2, process_fields)) {
    case 0: if (p->pid > 0) lua_pushinteger(L, p->pid); else lua_pushnil(L); break;
    case 1: lua_pushboolean(L, p->fd >= 0 && !p->eof); break;
    case 2: lua_pushboolean(L, p->serving); break;
    case 3:
      if (p->role == ROLE_CHILD && reap(p, 0))
        lua_pushinteger(L, p->signal ? 128 + p->signal : p->status);
      else lua_pushnil(L);
      break;
    default: lua_pushnil(L); break;
  }
  return 1;
}

/* ---- finding the program ------------------------------------------------------------ */

static int executable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Pushes the poolsh program's path: POOLSH_BIN, else this host (the
 * poolsh program sets poolsh.host in the registry), else the program
 * beside the module that holds this function (dladdr: build/poolsh beside
 * build/lib/poolsh/core.so; an
 * install's bin/poolsh beside lib/lua/5.4/poolsh/core.so). Raises when
 * none is found. */
static const char *push_program(lua_State *L) {
  const char *env = getenv("POOLSH_BIN");
  if (env && *env) {
    if (!executable(env)) luaL_error(L, "poolsh.spawn: POOLSH_BIN=%s is not an executable file", env);
    return lua_pushstring(L, env);
  }
  if (lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.host") == LUA_TSTRING) return lua_tostring(L, -1);
  lua_pop(L, 1);
  Dl_info info;
  char dir[PATH_MAX], cand[PATH_MAX + 32];
  if (dladdr((void *)(uintptr_t)push_program, &info) && info.dli_fname &&   /* this file's */
      realpath(info.dli_fname, dir)) {
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    static const char *const rel[] = {"/../../poolsh", "/../../../../bin/poolsh"};
    for (int i = 0; i < 2; i++) {
      snprintf(cand, sizeof cand, "%s%s", dir, rel[i]);
      char real[PATH_MAX];
      if (executable(cand) && realpath(cand, real)) return lua_pushstring(L, real);
    }
  }
  luaL_error(L, "poolsh.spawn: cannot find the poolsh program (not beside the module "
             "poolsh.core): set POOLSH_BIN to its path");
  return NULL;
}

/* Appends string s to the argv table on top. */
static void arg_push(lua_State *L, const char *s) {
  lua_pushstring(L, s);
  lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
}

/* Appends this process's global options to the argv table on top, so
 * that the child opens the same device: the backend in use, the device,
 * the sim's memory and profile, the limits, -E. */
static void push_global_options(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  char opt[128];
  /* -E (the host sets LUA_NOENV, as lua.c does): the child ignores
   * LUA_INIT and the environment too */
  if (lua_getfield(L, LUA_REGISTRYINDEX, "LUA_NOENV") != LUA_TNIL && lua_toboolean(L, -1)) {
    lua_pop(L, 1);
    arg_push(L, "-E");
  } else {
    lua_pop(L, 1);
  }
  snprintf(opt, sizeof opt, "--backend=%s", c->be ? c->be->name : c->backend_want);
  arg_push(L, opt);
  if (c->device >= 0) snprintf(opt, sizeof opt, "--device=%d", c->device), arg_push(L, opt);
  if (c->sim_memory)
    snprintf(opt, sizeof opt, "--sim-memory=%llu", (unsigned long long)c->sim_memory),
    arg_push(L, opt);
  if (c->lim.device)
    snprintf(opt, sizeof opt, "--limit=%llu", (unsigned long long)c->lim.device), arg_push(L, opt);
  if (c->lim.pinned)
    snprintf(opt, sizeof opt, "--pinned-limit=%llu", (unsigned long long)c->lim.pinned),
    arg_push(L, opt);
  /* the profile loaded (poolsh.profile.info().path), if that module was */
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "poolsh.profile") == LUA_TTABLE &&
      lua_getfield(L, -1, "info") == LUA_TFUNCTION && lua_pcall(L, 0, 1, 0) == LUA_OK &&
      lua_istable(L, -1) && lua_getfield(L, -1, "path") == LUA_TSTRING) {
    lua_pushfstring(L, "--profile=%s", lua_tostring(L, -1));
    lua_rawseti(L, top, (lua_Integer)luaL_len(L, top) + 1);
  }
  lua_settop(L, top);
}

/* A NULL-ended array of the strings in table t, in a userdata on top
 * (the strings stay in t, which the caller keeps on the stack). */
static char **push_cvec(lua_State *L, int t) {
  t = lua_absindex(L, t);
  lua_Integer n = luaL_len(L, t);
  char **v = (char **)lua_newuserdatauv(L, sizeof(char *) * (size_t)(n + 1), 0);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, t, i);
    v[i - 1] = (char *)lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  v[n] = NULL;
  return v;
}

/* poolsh.spawn([script [, args...]]) -> Process. */
static int process_spawn(lua_State *L) {
  int nargs = lua_gettop(L);
  const char *script = luaL_optstring(L, 1, NULL);
  for (int i = 2; i <= nargs; i++)
    if (!lua_isstring(L, i)) luaL_typeerror(L, i, "string");
  if (!script && nargs > 1) luaL_argerror(L, 1, "script expected when arguments follow");
  if (script && access(script, R_OK) != 0)
    return luaL_error(L, "poolsh.spawn: cannot read script %s: %s", script, strerror(errno));
  ps_context(L);                                     /* the backend in use, for the child */
  lua_newtable(L);                                   /* argv */
  int argv_t = lua_gettop(L);
  push_program(L);
  lua_rawseti(L, argv_t, 1);
  push_global_options(L);
  if (script) {
    arg_push(L, "--");
    for (int i = 1; i <= nargs; i++) arg_push(L, lua_tostring(L, i));
  }
  lua_newtable(L);                                   /* the environment */
  int env_t = lua_gettop(L);
  for (char **e = environ; *e; e++)
    if (strncmp(*e, "POOLSH_PARENT_FD=", 17) != 0) arg_push(L, *e);
  arg_push(L, "POOLSH_PARENT_FD=" CHILD_FD_S);
  char **argv = push_cvec(L, argv_t);
  char **envp = push_cvec(L, env_t);
  ps_processud *p = newprocess(L, ROLE_CHILD);       /* closed: collected if a step raises */
  int pidx = lua_gettop(L);
  p->serving = script == NULL;
  int sv[2], errpipe[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return luaL_error(L, "poolsh.spawn: cannot make a channel: %s", strerror(errno));
  p->fd = sv[0];
  if (pipe2(errpipe, O_CLOEXEC) != 0) {
    close(sv[1]);
    return luaL_error(L, "poolsh.spawn: %s", strerror(errno));
  }
  pid_t parent = getpid();
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {                                    /* the child: async-signal-safe calls */
    setpgid(0, 0);                                   /* Ctrl-C at the parent's terminal is the parent's */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0), close(devnull);
    if (sv[1] != CHILD_FD) dup2(sv[1], CHILD_FD);     /* the copy does not close on exec */
    else fcntl(CHILD_FD, F_SETFD, 0);
    /* Nothing else the parent opened reaches the program: every fd past
     * the channel closes on exec (errpipe too, as it should). */
    if (syscall(SYS_close_range, CHILD_FD + 1, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      struct rlimit rl;
      int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
      for (int fd = CHILD_FD + 1; fd < max; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    execve(argv[0], argv, envp);
    int e = errno;
    ssize_t w = write(errpipe[1], &e, sizeof e);
    (void)w;
    _exit(127);
  }
  close(sv[1]);
  close(errpipe[1]);
  if (pid < 0) {
    close(errpipe[0]);
    return luaL_error(L, "poolsh.spawn: cannot fork: %s", strerror(errno));
  }
  p->pid = pid;
  int e = 0;
  ssize_t k;
  while ((k = read(errpipe[0], &e, sizeof e)) < 0 && errno == EINTR) {}
  close(errpipe[0]);
  if (k == (ssize_t)sizeof e) {                      /* exec failed */
    reap(p, 1000);
    return luaL_error(L, "poolsh.spawn: cannot run %s: %s", argv[0], strerror(e));
  }
  if (script) { lua_pushstring(L, script); lua_setiuservalue(L, pidx, UV_WHERE); }
  lua_settop(L, pidx);
  return 1;
}

/* ---- Unix-domain sockets: connect and serve ------------------------------------------ */

/* poolsh.connect(name [, timeout_s]) -> a Process for the `poolsh --serve`
 * at name (a bare name: in the private directory, usock.h). The connect
 * does not block: while the server's backlog is full (it serves
 * CLIENTS_MAX clients) it is tried again every POLL_MS, until timeout_s
 * (default: no limit) or an interrupt. A server of another uid (not root)
 * is refused before anything is sent. */
static int process_connect(lua_State *L) {
  const char *name = ps_checksockpath(L, 1);
  double deadline = optdeadline(L, 2);
  char path[PS_USOCK_PATH_MAX], err[320];
  if (ps_usock_resolve(name, 0, path, err, sizeof err) != PS_USOCK_OK)
    return luaL_error(L, "poolsh.connect: %s", err);
  ps_processud *p = newprocess(L, ROLE_PEER);
  lua_pushstring(L, path);
  lua_setiuservalue(L, -2, UV_WHERE);
  volatile sig_atomic_t *intr = interrupt_of(L);
  int pid;
  int fd = ps_usock_connect(path, deadline, intr, &pid, err, sizeof err);
  switch (fd) {
    case PS_USOCK_INTERRUPTED:
      *intr = 0;
      lua_pushfstring(L, "interrupted connecting to the server at %s", path);
      return lua_error(L);                             /* no position, as every interrupted wait */
    case PS_USOCK_TIMEOUT: {
      char t[32];
      snprintf(t, sizeof t, "%.14g", (double)luaL_checknumber(L, 2));
      return luaL_error(L, "poolsh.connect: timed out after %s s: the server at %s does not "
                        "accept (busy with other clients, or stopped)", t, path);
    }
    case PS_USOCK_NOENT:
      return luaL_error(L, "poolsh.connect: no socket at %s (start poolsh --serve %s)", path, name);
    case PS_USOCK_REFUSED:
      return luaL_error(L, "poolsh.connect: nobody serves on %s (connection refused)", path);
    default:
      if (fd < 0) return luaL_error(L, "poolsh.connect: %s", err);
  }
  p->fd = fd;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);   /* as a spawned child's channel */
  p->pid = pid;
  p->serving = 1;
  return 1;
}

/* frame() for a pcall: (kind, seq, label, base, values...) -> the buffer. */
static int frame_protected(lua_State *L) {
  char kind = (char)lua_tointeger(L, 1);
  uint32_t seq = (uint32_t)lua_tointeger(L, 2);
  const char *label = lua_tostring(L, 3);
  int base = (int)lua_tointeger(L, 4);
  frame(L, kind, seq, 5, lua_gettop(L) - 4, label, base);
  return 1;
}

/* Pushes the reply frame of kind with the n values from index first;
 * when they cannot be encoded (a function inside a table, too large),
 * an 'X' frame with that error instead: a reply always goes back. */
static wbuf *reply_frame(lua_State *L, char kind, uint32_t seq, int first, int n,
                         const char *label, int base) {
  first = lua_absindex(L, first);
  luaL_checkstack(L, n + 5, "too many results of eval");
  lua_pushcfunction(L, frame_protected);
  lua_pushinteger(L, kind);
  lua_pushinteger(L, (lua_Integer)seq);
  lua_pushstring(L, label);
  lua_pushinteger(L, base);
  for (int i = 0; i < n; i++) lua_pushvalue(L, first + i);
  if (lua_pcall(L, n + 4, 1, 0) == LUA_OK) return (wbuf *)lua_touserdata(L, -1);
  if (lua_type(L, -1) != LUA_TSTRING) {
    lua_pop(L, 1);
    lua_pushliteral(L, "eval: the reply cannot be sent back");
  }
  return frame(L, 'X', seq, -1, 1, "the error", 0);   /* a short string: fits */
}

/* Runs the eval request on top (its entry {n, seq, code, args...}) and
 * sends the reply. */
static void serve_request(lua_State *L, int idx, ps_processud *p) {
  int entry = lua_gettop(L);
  lua_getfield(L, entry, "seq");
  uint32_t seq = (uint32_t)lua_tointeger(L, -1);
  lua_getfield(L, entry, "n");
  int n = (int)lua_tointeger(L, -1);
  lua_pop(L, 2);
  int base = lua_gettop(L);
  size_t len = 0;
  lua_rawgeti(L, entry, 1);
  const char *code = lua_tolstring(L, -1, &len);
  int st = code ? luaL_loadbufferx(L, code, len, "=eval", "t") : LUA_ERRRUN;
  if (!code) lua_pushliteral(L, "eval: the code is not a string");
  if (st == LUA_OK) {
    lua_remove(L, -2);
    luaL_checkstack(L, n, "too many arguments to eval");
    for (int i = 2; i <= n; i++) lua_rawgeti(L, entry, i);
    st = lua_pcall(L, n > 0 ? n - 1 : 0, LUA_MULTRET, 0);
  }
  wbuf *w;
  if (st == LUA_OK) {
    int top = lua_gettop(L);
    /* results that cannot be sent become the error eval raises */
    int ok = 1;
    for (int i = base + 1; i <= top && ok; i++) {
      int t = lua_type(L, i);
      ok = t == LUA_TNIL || t == LUA_TBOOLEAN || t == LUA_TNUMBER || t == LUA_TSTRING ||
           t == LUA_TTABLE;
      if (!ok)
        lua_pushfstring(L, "eval: result %d is a %s, which cannot be sent back", i - base,
                        luaL_typename(L, i));
    }
    if (ok) {
      w = reply_frame(L, 'R', seq, base + 1, top - base, "result %d of eval", 1);
    } else {
      w = reply_frame(L, 'X', seq, -1, 1, "the error", 0);
    }
  } else {
    if (!lua_isstring(L, -1)) {
      const char *tn = luaL_typename(L, -1);
      lua_pushfstring(L, "(error object is a %s value)", tn);
    }
    w = reply_frame(L, 'X', seq, -1, 1, "the error", 0);
  }
  send_frame(L, idx, p, w);
  lua_settop(L, entry - 1);
}

/* Serves the Process at idx: runs each eval request, queues messages,
 * returns when the other end closes the channel. */
static void serve_channel(lua_State *L, int idx) {
  ps_processud *p = toprocess(L, idx);
  for (;;) {
    if (dequeue(L, idx, UV_REQUESTS)) {
      serve_request(L, idx, p);
      continue;
    }
    if (p->fd < 0) return;
    uint32_t seq;
    int n;
    size_t len;
    int r = fill(L, p, 1, -1);
    if (r == -1) return;                             /* the other end closed */
    int kind = read_frame(L, idx, p, -1, &seq, &n, &len, "waiting for a request from");
    if (kind == 'E') enqueue(L, idx, UV_REQUESTS, n, seq, len);
    else if (kind == 'M') enqueue(L, idx, UV_INBOX, n, 0, len);
    else lua_pop(L, n);
  }
}

/* Serves what the client Process at 1 sent so far, without waiting
 * (in a pcall: its errors end only it): reads what the socket holds, runs
 * each whole eval request, queues messages. Returns whether the client
 * closed the channel, and whether a whole message came. */
static int serve_ready(lua_State *L) {
  ps_processud *p = toprocess(L, 1);
  int closed = 0;
  size_t need = frame_need(p);
  if (need == 0 || p->rlen < need) {                 /* read what came */
    grow(L, p, need ? need : 4);
    ssize_t k = recv(p->fd, p->rbuf + p->rlen, p->rcap - p->rlen, MSG_DONTWAIT);
    if (k > 0) p->rlen += (size_t)k;
    else if (k == 0 || (errno != EAGAIN && errno != EINTR && errno != EWOULDBLOCK)) closed = 1;
  }
  int whole = 0;
  for (;; whole = 1) {
    need = frame_need(p);
    if (need == 0 || (p->rlen < need && need >= 4 + 9 && need <= 4 + (size_t)FRAME_MAX)) break;
    uint32_t seq;
    int n;
    size_t len;
    int kind = read_frame(L, 1, p, 0, &seq, &n, &len, "waiting for a request from");
    if (kind == 'E') enqueue(L, 1, UV_REQUESTS, n, seq, len);
    else if (kind == 'M') enqueue(L, 1, UV_INBOX, n, 0, len);
    else lua_pop(L, n);
    while (dequeue(L, 1, UV_REQUESTS)) serve_request(L, 1, p);
    if (p->fd < 0) break;
  }
  lua_pushboolean(L, closed || p->fd < 0);
  lua_pushboolean(L, whole);
  return 2;
}

/* The listening socket of poolsh.serve(path): closed and its path
 * removed (if it is still the socket bound) by close or the collector. */
static int listener_gc(lua_State *L) {
  ps_usock_close((ps_usock_listener *)lua_touserdata(L, 1));
  return 0;
}

/* Listens on path (a stale socket there, which nobody serves, is
 * replaced); pushes the listener. */
static ps_usock_listener *listen_on(lua_State *L, const char *path) {
  ps_usock_listener *l = (ps_usock_listener *)lua_newuserdatauv(L, sizeof *l, 0);
  l->fd = -1;
  if (luaL_newmetatable(L, PS_LISTENER)) {
    lua_pushcfunction(L, listener_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, listener_gc);
    lua_setfield(L, -2, "__close");
  }
  lua_setmetatable(L, -2);
  char err[320];
  switch (ps_usock_listen(l, path, CLIENTS_MAX, err, sizeof err)) {
    case PS_USOCK_OK: return l;
    case PS_USOCK_NOTSOCK:
      return luaL_error(L, "poolsh.serve: %s already exists and is not a socket", path), NULL;
    case PS_USOCK_LIVE:
      return luaL_error(L, "poolsh.serve: %s: a poolsh already serves there", path), NULL;
    default: return luaL_error(L, "poolsh.serve: %s", err), NULL;
  }
}

/* A client of poolsh.serve(path): its Process is in the clients table at
 * the same index; last: when it last sent a byte; partial: since when
 * part of a message waits for the rest (0: none). */
typedef struct client { ps_processud *p; double last, partial; } client;

/* Ends client i (its Process stays in the table until replaced); why,
 * when given, goes to stderr. */
static void drop_client(lua_State *L, client *c, const char *why) {
  if (why) {
    fprintf(stderr, "poolsh: client %d: %s\n", c->p->pid, why);
    fflush(stderr);
  }
  process_release(L, c->p);
  c->p = NULL;
}

/* poolsh.serve([name]): runs the chunks p:eval sends. With name, on a
 * Unix-domain socket there (a bare name: in the private directory), for
 * up to CLIENTS_MAX clients at once, each whole request in turn, until
 * interrupted; without, on the channel to the parent (poolsh.parent),
 * until the parent closes it. No client holds the others: one that sends
 * part of a message and stops is closed after PARTIAL_MS, one that does
 * not take its reply after SEND_MS, and when CLIENTS_MAX are connected
 * one idle for IDLE_MS makes room for a new one. */
static int process_serve(lua_State *L) {
  if (lua_isnoneornil(L, 1)) {
    lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.parent");
    if (!ps_toud(L, -1, PS_UV_PROCESS))
      return luaL_error(L, "poolsh.serve: this process was not spawned: give a socket path");
    serve_channel(L, lua_gettop(L));
    return 0;
  }
  const char *name = ps_checksockpath(L, 1);
  char path[PS_USOCK_PATH_MAX], err[320];
  if (ps_usock_resolve(name, 1, path, err, sizeof err) != PS_USOCK_OK)
    return luaL_error(L, "poolsh.serve: %s", err);
  lua_settop(L, 1);
  ps_usock_listener *l = listen_on(L, path);
  lua_createtable(L, CLIENTS_MAX, 0);                /* the clients' Processes */
  int ctab = lua_gettop(L);
  client cl[CLIENTS_MAX];
  memset(cl, 0, sizeof cl);
  fprintf(stderr, "poolsh: serving on %s (pid %d)\n", path, (int)getpid());
  fflush(stderr);
  volatile sig_atomic_t *intr = interrupt_of(L);
  for (;;) {
    if (*intr) {
      *intr = 0;
      for (int i = 0; i < CLIENTS_MAX; i++) if (cl[i].p) drop_client(L, &cl[i], NULL);
      ps_usock_close(l);
      lua_pushfstring(L, "interrupted serving on %s", path);
      return lua_error(L);
    }
    double now = ps_clock_ms();
    struct pollfd pf[CLIENTS_MAX + 1];
    int idx[CLIENTS_MAX + 1], np = 0, nclients = 0, idle = -1;
    for (int i = 0; i < CLIENTS_MAX; i++) {
      if (!cl[i].p) continue;
      nclients++;
      if (cl[i].partial > 0 && now - cl[i].partial > PARTIAL_MS) {
        snprintf(err, sizeof err, "sent part of a message and not the rest within %d s: the "
                 "channel is closed", PARTIAL_MS / 1000);
        drop_client(L, &cl[i], err);
        nclients--;
        continue;
      }
      if (cl[i].partial == 0 && now - cl[i].last > IDLE_MS &&
          (idle < 0 || cl[i].last < cl[idle].last))
        idle = i;
      pf[np] = (struct pollfd){cl[i].p->fd, POLLIN, 0};
      idx[np++] = i;
    }
    if (nclients < CLIENTS_MAX || idle >= 0) {        /* full: new clients wait in the backlog */
      pf[np] = (struct pollfd){l->fd, POLLIN, 0};
      idx[np++] = -1;
    }
    if (poll(pf, (nfds_t)np, POLL_MS) <= 0) continue;
    for (int k = 0; k < np; k++) {
      if (!pf[k].revents) continue;
      if (idx[k] < 0) {                              /* a new client */
        int pid;
        int fd = ps_usock_accept(l, 1, &pid);
        if (fd == -1 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM))
          sleep_ms(POLL_MS);                         /* out of fds: do not spin */
        if (fd < 0) continue;
        int i = 0;
        while (i < CLIENTS_MAX && cl[i].p) i++;
        if (i == CLIENTS_MAX) {
          i = idle;
          drop_client(L, &cl[i], "idle while other clients waited: the channel is closed");
        }
        ps_processud *p = newprocess(L, ROLE_CLIENT);
        p->fd = fd;
        p->pid = pid;
        lua_rawseti(L, ctab, i + 1);
        cl[i] = (client){p, ps_clock_ms(), 0};
        continue;
      }
      client *c = &cl[idx[k]];
      if (!c->p) continue;
      lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);   /* the upvalue interrupt_of reads */
      lua_pushcclosure(L, serve_ready, 1);
      lua_rawgeti(L, ctab, idx[k] + 1);
      if (lua_pcall(L, 1, 2, 0) != LUA_OK) {         /* that client's session ends */
        const char *e = lua_tostring(L, -1);
        if (!e || strncmp(e, "interrupted", 11) == 0) {   /* the server's too */
          for (int i = 0; i < CLIENTS_MAX; i++) if (cl[i].p) drop_client(L, &cl[i], NULL);
          ps_usock_close(l);
          return lua_error(L);
        }
        drop_client(L, c, e);
      } else if (lua_toboolean(L, -2)) {
        drop_client(L, c, NULL);
      } else {
        c->last = ps_clock_ms();
        if (c->p->rlen == 0) c->partial = 0;
        else if (c->partial == 0 || lua_toboolean(L, -1)) c->partial = c->last;
      }
      lua_settop(L, ctab);
    }
  }
}

/* poolsh.children() -> the pids of the children spawned and not yet
 * waited for (exited ones included until reaped), in no order. */
static int process_children(lua_State *L) {
  lua_newtable(L);
  if (lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.processes") != LUA_TTABLE) {
    lua_pop(L, 1);
    return 1;
  }
  lua_Integer n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    ps_processud *p = (ps_processud *)ps_toud(L, -1, PS_UV_PROCESS);
    if (p && p->role == ROLE_CHILD && p->pid > 0 && !p->reaped) {
      lua_pushinteger(L, p->pid);
      lua_rawseti(L, -4, ++n);
    }
  }
  lua_pop(L, 1);
  return 1;
}

static const luaL_Reg process_methods[] = {
  {"send", process_send}, {"recv", process_recv}, {"eval", process_eval},
  {"wait", process_wait}, {"kill", process_kill}, {"close", process_close}, {NULL, NULL}
};

static const luaL_Reg process_meta[] = {
  {"__index", process_index}, {"__gc", process_gc}, {"__close", process_gc},
  {"__tostring", process_tostring}, {NULL, NULL}
};

#ifdef __EMSCRIPTEN__
/* In a page there is no second process to start or reach: raises
 * "poolsh.NAME: not in the browser" (NAME: the upvalue). */
static int web_refuse(lua_State *L) {
  return luaL_error(L, "poolsh.%s: not in the browser (a second process needs the native poolsh)",
                    lua_tostring(L, lua_upvalueindex(1)));
}

/* Puts web_refuse in place of spawn, connect and serve in table t. */
static void web_refuse_all(lua_State *L, int t) {
  static const char *const gone[] = {"spawn", "connect", "serve", NULL};
  for (int i = 0; gone[i]; i++) {
    lua_pushstring(L, gone[i]);
    lua_pushcclosure(L, web_refuse, 1);
    lua_setfield(L, t, gone[i]);
  }
}
#endif

static const luaL_Reg process_funcs[] = {
  {"spawn", process_spawn}, {"connect", process_connect}, {"serve", process_serve},
  {"children", process_children}, {NULL, NULL}
};

/* A process spawned by poolsh.spawn finds its channel's end in
 * POOLSH_PARENT_FD: it becomes poolsh.parent (the variable is removed,
 * the descriptor closes on exec, so the process's own children do not
 * inherit it). */
static int adopt_parent(lua_State *L) {
  const char *env = getenv("POOLSH_PARENT_FD");
  if (!env || !*env) return 0;
  char *end;
  long fd = strtol(env, &end, 10);
  unsetenv("POOLSH_PARENT_FD");
  if (*end || fd < 3 || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0) return 0;
  fcntl((int)fd, F_SETFD, FD_CLOEXEC);
  ps_processud *p = newprocess(L, ROLE_PARENT);
  p->fd = (int)fd;
  p->pid = getppid();
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "poolsh.parent");
  return 1;
}

int poolsh_open_process(lua_State *L) {
  ps_newclass(L, PS_UV_PROCESS, PS_PROCESS, process_methods, process_meta, process_fields);
  lua_settop(L, 1);
  ps_setfuncs(L, process_funcs);
#ifdef __EMSCRIPTEN__
  web_refuse_all(L, 1);
#endif
  if (lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.parent") != LUA_TUSERDATA) {
    lua_pop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);   /* the upvalue ps_newobject reads */
    lua_pushcclosure(L, adopt_parent, 1);
    lua_call(L, 0, 1);
  }
  lua_setfield(L, 1, "parent");
  return 0;
}
