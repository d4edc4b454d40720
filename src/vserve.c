/*
 * vserve.c: the `poolsh --view` server (vserve.h says what each call
 * guarantees; docs/security.md "The view server" why). A floor helper:
 * sockets and bytes, no Lua. One thread polls the listener, a stop pipe
 * and at most PS_VSERVE_CLIENTS clients, each non-blocking with its own
 * deadline; when all are taken, a new connection replaces the client
 * that has waited longest without completing its request, so stalled
 * clients delay nobody; it answers from memory
 * and never touches the Lua state, so it answers while Lua runs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "vserve.h"
#ifdef __EMSCRIPTEN__   /* a page has no getrandom (and poolsh.view refuses to start there) */
#define getrandom(buf, n, flags) ((void)(flags), getentropy(buf, n) == 0 ? (ssize_t)(n) : -1)
#endif

/* Only the page's own files run: no inline script, nothing from
 * elsewhere, fetches to this origin only, no framing. Inline styles are
 * allowed (the renderer may set style attributes); scripts are not. */
#define CSP "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " \
            "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; " \
            "frame-ancestors 'none'"

static const char *const FILE_NAMES[PS_VSERVE_NFILES] = {"", "picture.js", "picture.css"};
static const char *const FILE_TYPES[PS_VSERVE_NFILES] = {
  "text/html; charset=utf-8", "text/javascript; charset=utf-8", "text/css; charset=utf-8"};

typedef struct client {
  int fd;                       /* -1: free */
  size_t n;                     /* header bytes read */
  char *out;                    /* the answer, once made */
  size_t outn, off;
  double deadline;              /* ps_clock_ms() by which this step must end */
  char in[PS_VSERVE_HEADER_MAX];
} client;

struct ps_vserve {
  int lfd, port, stop[2];
  char token[PS_VSERVE_TOKEN_HEX + 1];
  char *files[PS_VSERVE_NFILES];
  size_t flen[PS_VSERVE_NFILES];
  pthread_t thread;
  pthread_mutex_t mu;           /* guards snap, snapn, version */
  char *snap;
  size_t snapn;
  long long version;
  client c[PS_VSERVE_CLIENTS];
};

/* ---- the request ---------------------------------------------------------- */

/* Whether a and b (n bytes each) are equal, in time that does not depend
 * on where they differ. */
static int same_bytes(const char *a, const char *b, size_t n) {
  unsigned char d = 0;
  for (size_t i = 0; i < n; i++) d |= (unsigned char)(a[i] ^ b[i]);
  return d == 0;
}

/* Whether the n bytes at s are exactly the string lit. */
static int is(const char *s, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Whether the Host value v (n bytes, trimmed) names this server. */
static int host_ok(const char *v, size_t n, int port) {
  char a[32], b[32];
  int na = snprintf(a, sizeof a, "127.0.0.1:%d", port);
  int nb = snprintf(b, sizeof b, "localhost:%d", port);
  return ((size_t)na == n && memcmp(v, a, n) == 0) ||
         ((size_t)nb == n && strncasecmp(v, b, n) == 0);
}

/* The version ?v=N names in query q (n bytes), else -1. */
static long long since_of(const char *q, size_t n) {
  if (n < 3 || memcmp(q, "v=", 2) != 0 || n - 2 > 18) return -1;
  long long v = 0;
  for (size_t i = 2; i < n; i++) {
    if (q[i] < '0' || q[i] > '9') return -1;
    v = v * 10 + (q[i] - '0');
  }
  return v;
}

int ps_vserve_route(const char *req, size_t n, const char *token, int port, int *what,
                    long long *since) {
  *what = -1, *since = -1;
  const char *end = req + n, *eol = NULL;
  for (const char *p = req; p + 1 < end; p++)
    if (p[0] == '\r' && p[1] == '\n') { eol = p; break; }
  if (!eol) return PS_VROUTE_BAD;
  /* The request line: METHOD SP TARGET SP HTTP/1.x */
  const char *sp1 = memchr(req, ' ', (size_t)(eol - req));
  if (!sp1 || sp1 == req) return PS_VROUTE_BAD;
  const char *target = sp1 + 1;
  const char *sp2 = memchr(target, ' ', (size_t)(eol - target));
  if (!sp2 || sp2 == target) return PS_VROUTE_BAD;
  size_t vlen = (size_t)(eol - sp2 - 1);
  if (!(is(sp2 + 1, vlen, "HTTP/1.0") || is(sp2 + 1, vlen, "HTTP/1.1"))) return PS_VROUTE_BAD;
  for (const char *p = req; p < sp1; p++)
    if (*p < 'A' || *p > 'Z') return PS_VROUTE_BAD;
  /* The headers: exactly one Host, naming this server. */
  const char *host = NULL;
  size_t hostn = 0;
  int hosts = 0;
  for (const char *line = eol + 2; line < end;) {
    const char *le = NULL;
    for (const char *p = line; p + 1 < end; p++)
      if (p[0] == '\r' && p[1] == '\n') { le = p; break; }
    if (!le) return PS_VROUTE_BAD;
    if (le == line) break;                         /* the blank line */
    const char *colon = memchr(line, ':', (size_t)(le - line));
    if (!colon) return PS_VROUTE_BAD;
    if (colon - line == 4 && strncasecmp(line, "host", 4) == 0) {
      const char *v = colon + 1, *ve = le;
      while (v < ve && (*v == ' ' || *v == '\t')) v++;
      while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
      host = v, hostn = (size_t)(ve - v), hosts++;
    }
    line = le + 2;
  }
  if (hosts != 1 || !host_ok(host, hostn, port)) return PS_VROUTE_HOST;
  if (!is(req, (size_t)(sp1 - req), "GET")) return PS_VROUTE_METHOD;
  /* The target: /<token>/NAME[?query] */
  size_t tlen = (size_t)(sp2 - target);
  if (tlen < PS_VSERVE_TOKEN_HEX + 2 || target[0] != '/' ||
      !same_bytes(target + 1, token, PS_VSERVE_TOKEN_HEX) || target[PS_VSERVE_TOKEN_HEX + 1] != '/')
    return PS_VROUTE_NOTFOUND;
  const char *name = target + PS_VSERVE_TOKEN_HEX + 2;
  const char *q = memchr(name, '?', (size_t)(sp2 - name));
  size_t namen = (size_t)((q ? q : sp2) - name);
  if (is(name, namen, "state.json")) {
    if (q) *since = since_of(q + 1, (size_t)(sp2 - q - 1));
    return PS_VROUTE_STATE;
  }
  if (q) return PS_VROUTE_NOTFOUND;
  for (int i = 0; i < PS_VSERVE_NFILES; i++)
    if (is(name, namen, FILE_NAMES[i])) {
      *what = i;
      return PS_VROUTE_FILE;
    }
  return PS_VROUTE_NOTFOUND;
}

/* ---- answers -------------------------------------------------------------- */

/* Makes c's answer: status, then the body (len bytes) of the given type.
 * When memory is short, the client is dropped instead (fd -1 left to the
 * caller: returns -1). */
static int answer(client *c, const char *status, const char *type, const char *body, size_t len) {
  char head[1024];
  int hn = snprintf(head, sizeof head,
                    "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                    "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
                    "Referrer-Policy: no-referrer\r\nX-Frame-Options: DENY\r\n"
                    "Content-Security-Policy: " CSP "\r\nConnection: close\r\n\r\n",
                    status, type, len);
  c->out = malloc((size_t)hn + len);
  if (!c->out) return -1;
  memcpy(c->out, head, (size_t)hn);
  if (len) memcpy(c->out + hn, body, len);
  c->outn = (size_t)hn + len, c->off = 0;
  return 0;
}

/* A short plain answer: the status line's words, without a hint. */
static int plain(client *c, const char *status, const char *text) {
  return answer(c, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* Makes the answer to c's complete request. */
static int respond(ps_vserve *s, client *c) {
  int what;
  long long since;
  switch (ps_vserve_route(c->in, c->n, s->token, s->port, &what, &since)) {
  case PS_VROUTE_FILE:
    return answer(c, "200 OK", FILE_TYPES[what], s->files[what], s->flen[what]);
  case PS_VROUTE_STATE: {
    pthread_mutex_lock(&s->mu);
    int r;
    if (since >= 0 && since == s->version) r = answer(c, "204 No Content", "application/json", "", 0);
    else r = answer(c, "200 OK", "application/json", s->snap, s->snapn);
    pthread_mutex_unlock(&s->mu);
    return r;
  }
  case PS_VROUTE_HOST: return plain(c, "403 Forbidden", "forbidden\n");
  case PS_VROUTE_METHOD: return plain(c, "405 Method Not Allowed", "GET only\n");
  case PS_VROUTE_NOTFOUND: return plain(c, "404 Not Found", "not found\n");
  default: return plain(c, "400 Bad Request", "bad request\n");
  }
}

/* ---- the thread ----------------------------------------------------------- */

static void drop(client *c) {
  if (c->fd >= 0) close(c->fd);
  free(c->out);
  c->fd = -1, c->out = NULL, c->n = c->outn = c->off = 0;
}

/* Reads what c sent; makes the answer once the header is whole (431 when
 * it does not fit). Drops c on end of file or an error. */
static void on_readable(ps_vserve *s, client *c) {
  /* One byte at a time past the start would be slow; read what fits,
   * then look for the blank line in what arrived (it may not end it:
   * bytes after it are a body GET has none of, ignored). */
  ssize_t r = recv(c->fd, c->in + c->n, sizeof c->in - c->n, 0);
  if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) { drop(c); return; }
  if (r < 0) return;
  size_t from = c->n >= 3 ? c->n - 3 : 0;
  c->n += (size_t)r;
  char *blank = memmem(c->in + from, c->n - from, "\r\n\r\n", 4);
  int made;
  if (blank) {
    c->n = (size_t)(blank - c->in) + 4;
    made = respond(s, c);
  } else if (c->n == sizeof c->in) {
    made = plain(c, "431 Request Header Fields Too Large", "request header too large\n");
  } else {
    return;
  }
  if (made != 0) { drop(c); return; }
  c->deadline = ps_clock_ms() + PS_VSERVE_REPLY_MS;
  shutdown(c->fd, SHUT_RD);
}

/* Sends what c can take of its answer; drops it when all went. */
static void on_writable(client *c) {
  ssize_t w = send(c->fd, c->out + c->off, c->outn - c->off, MSG_NOSIGNAL);
  if (w < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (w <= 0) { drop(c); return; }
  c->off += (size_t)w;
  if (c->off == c->outn) drop(c);
}

/* The client that has waited longest without completing its request
 * (the earliest request deadline among those still reading), or NULL
 * when every client is sending an answer. */
static client *longest_waiting(ps_vserve *s) {
  client *old = NULL;
  for (int i = 0; i < PS_VSERVE_CLIENTS; i++) {
    client *c = &s->c[i];
    if (c->fd >= 0 && !c->out && (!old || c->deadline < old->deadline)) old = c;
  }
  return old;
}

/* Accepts one connection into a free slot; when none is free, makes room
 * by dropping the client that has waited longest without completing its
 * request (the slowloris defence: idle connections cannot keep a real
 * request waiting, and the clients stay at most PS_VSERVE_CLIENTS). Reads
 * at once what the new client already sent. Returns 0 when the backlog is
 * empty or nothing could be accepted, 1 when it took one. */
static int take_one(ps_vserve *s) {
  client *slot = NULL;
  for (int i = 0; i < PS_VSERVE_CLIENTS && !slot; i++)
    if (s->c[i].fd < 0) slot = &s->c[i];
  client *victim = slot ? NULL : longest_waiting(s);
  if (!slot && !victim) return 0;              /* all answering: the backlog waits */
  int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) {
    if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
      poll(NULL, 0, 100);               /* out of fds or memory: no busy loop */
    return 0;
  }
  if (!slot) drop(victim), slot = victim;
  slot->fd = fd, slot->n = 0;
  slot->deadline = ps_clock_ms() + PS_VSERVE_REQUEST_MS;
  on_readable(s, slot);
  return 1;
}

static void *serve(void *ud) {
  ps_vserve *s = (ps_vserve *)ud;
  struct pollfd pf[2 + PS_VSERVE_CLIENTS];
  int who[2 + PS_VSERVE_CLIENTS];
  for (;;) {
    int np = 0;
    double now = ps_clock_ms(), next = -1;
    pf[np++] = (struct pollfd){s->stop[0], POLLIN, 0};
    for (int i = 0; i < PS_VSERVE_CLIENTS; i++) {
      client *c = &s->c[i];
      if (c->fd < 0) continue;
      if (now >= c->deadline) { drop(c); continue; }   /* stalled */
      if (next < 0 || c->deadline < next) next = c->deadline;
      who[np] = i;
      pf[np++] = (struct pollfd){c->fd, c->out ? POLLOUT : POLLIN, 0};
    }
    /* The listener is polled while a slot is free or a client still
     * reading can make room; with every client answering, the backlog
     * waits (answers are taken within PS_VSERVE_REPLY_MS). */
    int lslot = -1;
    int room = 0;
    for (int i = 0; i < PS_VSERVE_CLIENTS && !room; i++) room = s->c[i].fd < 0 || !s->c[i].out;
    if (room) lslot = np, pf[np++] = (struct pollfd){s->lfd, POLLIN, 0};
    int wait = next < 0 ? -1 : (int)(next - now) + 1;
    int r = poll(pf, (nfds_t)np, wait);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pf[0].revents) break;                          /* stop */
    for (int k = 1; k < np; k++) {
      if (k == lslot || !pf[k].revents) continue;
      client *c = &s->c[who[k]];
      if (c->fd < 0) continue;
      if (c->out) on_writable(c);
      else if (pf[k].revents & (POLLIN | POLLHUP | POLLERR)) on_readable(s, c);
    }
    /* A few at a time, each read at once: a connection taken here is the
     * newest, so PS_VSERVE_ACCEPTS more cannot make it the one dropped. */
    if (lslot >= 0 && (pf[lslot].revents & POLLIN))
      for (int k = 0; k < PS_VSERVE_ACCEPTS && take_one(s); k++) {}
  }
  for (int i = 0; i < PS_VSERVE_CLIENTS; i++) drop(&s->c[i]);
  return NULL;
}

/* ---- start, publish, stop ------------------------------------------------- */

/* Frees s and closes what it holds (the thread is not running). */
static void release(ps_vserve *s) {
  if (s->lfd >= 0) close(s->lfd);
  if (s->stop[0] >= 0) close(s->stop[0]);
  if (s->stop[1] >= 0) close(s->stop[1]);
  for (int i = 0; i < PS_VSERVE_NFILES; i++) free(s->files[i]);
  free(s->snap);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

ps_vserve *ps_vserve_start(int port, const char *const *bodies, const size_t *lens, char *err,
                           size_t errn) {
  if (port < 0 || port > 65535) {
    snprintf(err, errn, "port %d is not a TCP port (0 to 65535; 0: any free one)", port);
    return NULL;
  }
  ps_vserve *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, errn, "not enough memory");
    return NULL;
  }
  s->lfd = s->stop[0] = s->stop[1] = -1;
  pthread_mutex_init(&s->mu, NULL);
  for (int i = 0; i < PS_VSERVE_CLIENTS; i++) s->c[i].fd = -1;
  static const char empty[] = "{\"version\":0}";
  s->snap = malloc(sizeof empty);
  if (s->snap) memcpy(s->snap, empty, sizeof empty), s->snapn = sizeof empty - 1;
  int ok = s->snap != NULL;
  for (int i = 0; ok && i < PS_VSERVE_NFILES; i++) {
    s->files[i] = malloc(lens[i] + 1);
    if (!s->files[i]) ok = 0;
    else memcpy(s->files[i], bodies[i], lens[i]), s->flen[i] = lens[i];
  }
  if (!ok) {
    snprintf(err, errn, "not enough memory");
    release(s);
    return NULL;
  }
  unsigned char raw[PS_VSERVE_TOKEN_HEX / 2];
  if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
    snprintf(err, errn, "no random bytes for the token: %s", strerror(errno));
    release(s);
    return NULL;
  }
  for (size_t i = 0; i < sizeof raw; i++) snprintf(s->token + 2 * i, 3, "%02x", raw[i]);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s->lfd < 0) {
    snprintf(err, errn, "cannot make a TCP socket: %s", strerror(errno));
    release(s);
    return NULL;
  }
  int one = 1;       /* a port asked again soon after: its old connections' TIME_WAIT is no obstacle */
  setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(s->lfd, (struct sockaddr *)&a, sizeof a) != 0) {
    int e = errno;
    if (e == EADDRINUSE) snprintf(err, errn, "port %d of 127.0.0.1 is in use", port);
    else if (e == EACCES) snprintf(err, errn, "port %d needs privileges (choose one above 1023, "
                                              "or 0 for any free one)", port);
    else snprintf(err, errn, "cannot listen on 127.0.0.1:%d: %s", port, strerror(e));
    release(s);
    return NULL;
  }
  if (listen(s->lfd, PS_VSERVE_BACKLOG) != 0 || getsockname(s->lfd, (struct sockaddr *)&a, &al) != 0) {
    snprintf(err, errn, "cannot listen on 127.0.0.1:%d: %s", port, strerror(errno));
    release(s);
    return NULL;
  }
  s->port = ntohs(a.sin_port);
  if (fcntl(s->lfd, F_SETFL, O_NONBLOCK) != 0 || pipe2(s->stop, O_CLOEXEC) != 0) {
    snprintf(err, errn, "cannot set up the view server: %s", strerror(errno));
    release(s);
    return NULL;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);   /* signals stay the main thread's */
  int r = pthread_create(&s->thread, NULL, serve, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (r != 0) {
    snprintf(err, errn, "cannot start the view server's thread: %s", strerror(r));
    release(s);
    return NULL;
  }
  return s;
}

int ps_vserve_port(const ps_vserve *s) { return s->port; }
const char *ps_vserve_token(const ps_vserve *s) { return s->token; }

int ps_vserve_publish(ps_vserve *s, const char *json, size_t len, long long version) {
  char *copy = malloc(len ? len : 1);
  if (!copy) return -1;
  memcpy(copy, json, len);
  pthread_mutex_lock(&s->mu);
  char *old = s->snap;
  s->snap = copy, s->snapn = len, s->version = version;
  pthread_mutex_unlock(&s->mu);
  free(old);
  return 0;
}

void ps_vserve_stop(ps_vserve *s) {
  if (!s) return;
  ssize_t w;
  do w = write(s->stop[1], "x", 1); while (w < 0 && errno == EINTR);
  pthread_join(s->thread, NULL);
  release(s);
}
