/*
 * context.c: the device context: the backend's choice and opening, its
 * close, the one error rule, the frees finalizers leave, and ids.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"

/* ---- the context ------------------------------------------------------ */

/* The backend polls it during a wait: the host's SIGINT handler set the
 * flag (Ctrl-C). */
static int interrupted(void *ud) {
  return ((ps_ctx *)ud)->interrupt != 0;
}

/* Picks the backend once: POOLSH_BACKEND / configure{} ask for one; "auto"
 * takes cuda when a device is usable and remembers why it was not. */
static const ps_backend *choose_backend(lua_State *L, ps_ctx *c) {
  const char *want = c->backend_want;
  c->open_status = PS_OK;
  if (strcmp(want, "sim") == 0) return &ps_backend_sim;
  if (strcmp(want, "cuda") != 0 && strcmp(want, "auto") != 0)
    luaL_error(L, "unknown backend '%s' (POOLSH_BACKEND or --backend: auto, cuda or sim)", want);
#ifdef POOLSH_HAVE_CUDA
  int st = ps_backend_cuda.probe();
  if (st == PS_OK) return &ps_backend_cuda;
  if (strcmp(want, "cuda") == 0) {          /* a CUDA failure: no position (errors.md) */
    lua_pushfstring(L, "%s: %s (the cuda backend was asked for)",
                    ps_backend_cuda.error_name(st), ps_backend_cuda.error_string(st));
    lua_error(L);
  }
  c->open_status = st;
#else
  if (strcmp(want, "cuda") == 0)
    luaL_error(L, "poolsh was built without CUDA: only the sim backend exists");
  c->open_status = -2;
#endif
  return &ps_backend_sim;
}
/* Fills a new context c (zeroed, closed) from the environment:
 * POOLSH_BACKEND (shown cut when long) and POOLSH_DEVICE (-1 when it is
 * not an index from 0 to 1023: ps_context_open refuses it). */
void ps_context_init(ps_ctx *c) {
  const char *want = getenv("POOLSH_BACKEND");
  if (!want || !*want) want = "auto";
  if (strlen(want) > PS_SHOWN_MAX)           /* shown cut, like every long value */
    snprintf(c->backend_want, sizeof c->backend_want, "%.*s...", PS_SHOWN_MAX, want);
  else
    snprintf(c->backend_want, sizeof c->backend_want, "%s", want);
  const char *dev = getenv("POOLSH_DEVICE");
  if (dev && *dev) {
    char *end;
    long d = strtol(dev, &end, 10);
    c->device = (*end || d < 0 || d > 1023) ? -1 : (int)d;   /* refused at open */
  }
}

/* Opens context c (ps_context's slow path). Raises if the backend
 * cannot be opened or the context was closed. */
ps_ctx *ps_context_open(lua_State *L, ps_ctx *c) {
  if (c->be) luaL_error(L, "poolsh: the device context is closed");
  if (c->device < 0) {
    lua_pushstring(L, getenv("POOLSH_DEVICE"));
    luaL_error(L, "POOLSH_DEVICE must be a device index from 0 to 1023, got '%s'",
               ps_shown(L, -1));
  }
  const ps_backend *be = choose_backend(L, c);
  ps_config cfg = {c->device, c->sim_memory, interrupted, c, c->sim_devices};
  void *b = NULL;
  int st = be->open(&cfg, &b);
  if (st != PS_OK) {
    lua_pushfstring(L, "%s: %s (opening the %s backend on device %d)",
                    be->error_name(st), be->error_string(st), be->name, c->device);
    lua_error(L);
  }
  c->be = be;
  c->b = b;
  return c;
}
/* Pushes the context's table of default objects: {stream =, pools =}. */
void ps_pushdefaults(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  lua_getiuservalue(L, -1, PS_UV_DEFAULTS);
  lua_remove(L, -2);
}

/* Closes context c for good (at lua_close, after every object's
 * finalizer): frees what finalizers left, then closes the backend. */
void ps_context_close(lua_State *L, ps_ctx *c) {
  ps_free_deferred(L, c);
  if (c->b) c->be->close(c->b);
  c->b = NULL;
  free(c->deferred);
  c->deferred = NULL;
  c->ndeferred = c->capdeferred = 0;
}

/* The next id of kind (PS_ID_*): ids start at 1 (again after a reset). */
int ps_nextid(lua_State *L, int kind) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  return ++c->next_id[kind];
}
/* ---- frees finalizers leave ------------------------------------------- */

/* A finalizer never waits for the device, and cudaFree does: it leaves
 * the address here, freed at the next host wait, before the next
 * cudaMalloc, or when the context closes. Returns the backend's status
 * (PS_OK, or out of memory for the list: then it frees at once). */
int ps_defer_free(ps_ctx *c, ps_addr a, int buffer) {
  if (c->ndeferred == c->capdeferred) {
    size_t cap = c->capdeferred ? c->capdeferred * 2 : 16;
    struct ps_deferred *v = realloc(c->deferred, cap * sizeof *v);
    if (!v) return c->be->free_device(c->b, a);
    c->deferred = v, c->capdeferred = cap;
  }
  c->deferred[c->ndeferred++] = (struct ps_deferred){ a, buffer };
  return PS_OK;
}

/* Frees what finalizers left; a failure becomes a warning, as it would
 * have in the finalizer. */
void ps_free_deferred(lua_State *L, ps_ctx *c) {
  while (c->ndeferred > 0 && c->b) {
    struct ps_deferred d = c->deferred[--c->ndeferred];
    int st = c->be->free_device(c->b, d.addr);
    if (st != PS_OK && L) {
      char msg[200];
      snprintf(msg, sizeof msg, "poolsh: freeing buffer b%d: %s: %s", d.buffer,
               c->be->error_name(st), c->be->error_string(st));
      lua_warning(L, msg, 0);
    }
  }
}
/* ---- errors: one rule ------------------------------------------------- */

/* Raises a backend failure: "<cudaErrorName>: <description> <what>".
 * An interrupted wait raises "interrupted <what>: queued work goes on".
 * Never returns. */
int ps_fail(lua_State *L, int status, const char *fmt, ...) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  char what[2048];   /* out of memory adds lines that explain it */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (status == PS_INTERRUPTED) {
    c->interrupt = 0;
    size_t n = strlen(what);
    if (n >= 2 && what[0] == '(' && what[n - 1] == ')') {   /* "(doing x)" -> "doing x" */
      memmove(what, what + 1, n - 2);
      what[n - 2] = '\0';
    }
    lua_pushfstring(L, "interrupted %s: queued work goes on", what);
  } else {
    lua_pushfstring(L, "%s: %s %s", c->be->error_name(status), c->be->error_string(status), what);
  }
  return lua_error(L);   /* no position prefix: the message starts with the name */
}

/* Raises like ps_fail when status is not PS_OK; returns 0 otherwise. */
int ps_check(lua_State *L, int status, const char *fmt, ...) {
  if (status == PS_OK) return 0;
  char what[2048];   /* out of memory adds lines that explain it */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return ps_fail(L, status, "%s", what);
}
