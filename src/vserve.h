/*
 * vserve.h: the `poolsh --view` server (vserve.c), a floor helper: no
 * Lua. A thread answers HTTP GETs on 127.0.0.1 under /<token>/ from
 * memory: the page's files given at start and the latest snapshot the
 * owner published (docs/view.md, docs/security.md "The view server").
 */
#ifndef POOLSH_VSERVE_H
#define POOLSH_VSERVE_H

#include <stddef.h>

#define PS_VSERVE_TOKEN_HEX 32            /* 128 bits, as hex */
#define PS_VSERVE_HEADER_MAX 8192         /* a request's header, at most */
#define PS_VSERVE_CLIENTS 16              /* clients served at once (then the one waiting longest */
                                          /* without a whole request makes room) */
#define PS_VSERVE_ACCEPTS 4               /* connections taken per turn of the loop */
#define PS_VSERVE_BACKLOG 64              /* connections the kernel holds for accept */
#define PS_VSERVE_REQUEST_MS 2000         /* to send the request's header */
#define PS_VSERVE_REPLY_MS 10000          /* to take the answer */
#define PS_VSERVE_BODY_MAX (32u << 20)    /* a file or a snapshot, at most */

/* The files served: the page ("" ), picture.js, picture.css. */
enum { PS_VSERVE_PAGE, PS_VSERVE_JS, PS_VSERVE_CSS, PS_VSERVE_NFILES };

/* What ps_vserve_route made of a request. */
enum {
  PS_VROUTE_FILE,        /* 200: the file *what */
  PS_VROUTE_STATE,       /* 200: state.json (*since: the ?v= asked, else -1) */
  PS_VROUTE_BAD,         /* 400: not a request line poolsh reads */
  PS_VROUTE_HOST,        /* 403: Host is not 127.0.0.1:<port> or localhost:<port> */
  PS_VROUTE_NOTFOUND,    /* 404: a wrong token or an unknown path */
  PS_VROUTE_METHOD,      /* 405: not GET */
};

typedef struct ps_vserve ps_vserve;

/* Reads one request's header (req, n bytes, ending at its blank line):
 * returns a PS_VROUTE_* code; *what is the file for PS_VROUTE_FILE,
 * *since the version ?v= named for PS_VROUTE_STATE (-1: none). Reads
 * only those n bytes; compares the token in constant time. */
int ps_vserve_route(const char *req, size_t n, const char *token, int port, int *what,
                    long long *since);

/* Starts serving on 127.0.0.1:port (0: the kernel chooses) with a new
 * token, the files copied (bodies[i], lens[i]). Returns the server, or
 * NULL with err set. The listener is SOCK_CLOEXEC; the thread blocks
 * every signal. */
ps_vserve *ps_vserve_start(int port, const char *const *bodies, const size_t *lens, char *err,
                           size_t errn);
/* The port it listens on, and its token (hex, NUL-terminated). */
int ps_vserve_port(const ps_vserve *s);
const char *ps_vserve_token(const ps_vserve *s);
/* Replaces the snapshot state.json serves (copied), with its version:
 * 0, or -1 when memory is short (the old one stays). */
int ps_vserve_publish(ps_vserve *s, const char *json, size_t len, long long version);
/* Stops: the thread is told, joined, every socket closed, all freed. */
void ps_vserve_stop(ps_vserve *s);

#endif
