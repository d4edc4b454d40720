/*
 * core.c: the device context, the one error rule, argument helpers, and
 * luaopen_poolsh_core, which walks the bound types' open functions.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poolsh.h"

#define PS_VERSION "poolsh 0.1.0"

/* ---- the context ------------------------------------------------------ */

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

/* Before the host waits for the device: frees what finalizers left (the
 * wait pays for it), then tells the observation layer. */
void ps_wait_begin(lua_State *L, ps_ctx *c) {
  ps_free_deferred(L, c);
  ps_obs_wait_begin(c);
}

/* __gc of the context: runs after every object's finalizer at lua_close
 * (it is created first), so the device goes away last. */
static int ctx_gc(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, 1);
  ps_free_deferred(L, c);
  if (c->b) c->be->close(c->b);
  c->b = NULL;
  free(c->deferred);
  c->deferred = NULL;
  c->ndeferred = c->capdeferred = 0;
  ps_obs_close(c);
  return 0;
}

volatile sig_atomic_t *poolsh_interrupt_flag(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  return c ? &c->interrupt : NULL;
}

int ps_nextid(lua_State *L, int kind) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  return ++c->next_id[kind];
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

/* ---- sizes, durations, options ----------------------------------------- */

/* Calls the Lua parser `name` (installed by poolsh/init.lua) on the string
 * at idx: returns NULL and sets *v, or returns the parser's complaint. */
static const char *parse_with(lua_State *L, int idx, const char *name, lua_Number *v) {
  idx = lua_absindex(L, idx);
  lua_getiuservalue(L, PS_UP_CTX, PS_UV_PARSERS);
  if (lua_getfield(L, -1, name) != LUA_TFUNCTION) {
    lua_pop(L, 2);
    return "unit strings need require \"poolsh\"";
  }
  lua_pushvalue(L, idx);
  lua_call(L, 1, 2);
  if (lua_isnil(L, -2)) {               /* [parsers, nil, msg] */
    lua_copy(L, -1, -3);
    lua_pop(L, 2);                       /* the message stays on the stack */
    return lua_tostring(L, -1);
  }
  *v = lua_tonumber(L, -2);
  lua_pop(L, 3);
  return NULL;
}

/* Converts the size at idx: a non-negative integer or a unit string
 * ("4 KiB"). Returns NULL, or what is wrong with it. */
const char *ps_tosize(lua_State *L, int idx, uint64_t *out) {
  lua_Integer n;
  int t = lua_type(L, idx);
  if (t == LUA_TNUMBER) {
    if (lua_isinteger(L, idx)) n = lua_tointeger(L, idx);
    else {
      lua_Number f = lua_tonumber(L, idx);
      if (f != floor(f)) return "size must be an integer number of bytes";
      if (!lua_numbertointeger(f, &n)) return "size too large";
    }
  } else if (t == LUA_TSTRING) {
    lua_Number f = 0;
    const char *err = parse_with(L, idx, "size", &f);
    if (err) return err;
    if (!lua_numbertointeger(f, &n)) return "size too large";
  } else {
    return lua_pushfstring(L, "size expected (integer or string), got %s", luaL_typename(L, idx));
  }
  if (n < 0) return "size must not be negative";
  *out = (uint64_t)n;
  return NULL;
}

uint64_t ps_checksize(lua_State *L, int arg) {
  uint64_t n = 0;
  const char *err = ps_tosize(L, arg, &n);
  if (err) luaL_argerror(L, arg, err);
  return n;
}

uint64_t ps_optsize(lua_State *L, int arg, uint64_t def) {
  return lua_isnoneornil(L, arg) ? def : ps_checksize(L, arg);
}

/* Field key of the table at t as a size (def when nil); errors name
 * what and key. */
uint64_t ps_fieldsize(lua_State *L, int t, const char *key, const char *what, uint64_t def) {
  uint64_t n = def;
  if (lua_getfield(L, t, key) != LUA_TNIL) {
    const char *err = ps_tosize(L, -1, &n);
    if (err) luaL_error(L, "%s: %s: %s", what, key, err);
  }
  lua_pop(L, 1);
  return n;
}

/* A socket name or path at arg: the whole Lua string, or an argument
 * error when it holds a NUL byte (C would cut it there: another path). */
const char *ps_checksockpath(lua_State *L, int arg) {
  size_t len;
  const char *s = luaL_checklstring(L, arg, &len);
  if (strlen(s) != len) luaL_argerror(L, arg, "the socket path holds a NUL byte");
  return s;
}

/* Reads a token's decimal number: no sign, no leading zero, at most max,
 * ending at `stop`. 1, the number in *v and *q past the stop; or 0. */
int ps_token_number(const char **q, const char *end, char stop, unsigned long long max,
                    unsigned long long *v) {
  const char *p = *q;
  unsigned long long x = 0;
  if (p >= end || *p < '1' || *p > '9') return 0;
  for (; p < end && *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (x > (max - d) / 10) return 0;
    x = x * 10 + d;
  }
  if (p >= end || *p != stop) return 0;
  *q = p + 1, *v = x;
  return 1;
}

/* Reads exactly 2n lower-case hex digits from q up to end into n bytes:
 * 1, or 0 when there are more, fewer or other characters. */
int ps_token_hex(const char *q, const char *end, uint8_t *d, int n) {
  if (end - q != 2 * (ptrdiff_t)n) return 0;
  for (int i = 0; i < 2 * n; i++) {
    char ch = q[i];
    int h = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (h < 0) return 0;
    d[i / 2] = (uint8_t)(i % 2 ? d[i / 2] * 16 + h : h);
  }
  return 1;
}

/* A duration in ms: a number, or a string with units ("200 us"). */
double ps_checkduration(lua_State *L, int arg) {
  lua_Number ms = 0;
  if (lua_type(L, arg) == LUA_TNUMBER) ms = lua_tonumber(L, arg);
  else if (lua_type(L, arg) == LUA_TSTRING) {
    const char *err = parse_with(L, arg, "duration", &ms);
    if (err) luaL_argerror(L, arg, err);
  } else return luaL_typeerror(L, arg, "duration (ms or string)");
  if (!(ms >= 0) || isinf(ms)) luaL_argerror(L, arg, "duration must be >= 0 and finite");
  return ms;
}

/* Pushes the value at idx as text for a message (luaL_tolstring), cut to
 * PS_SHOWN_MAX bytes with "..." when longer; returns it. */
const char *ps_shown(lua_State *L, int idx) {
  size_t n;
  const char *s = luaL_tolstring(L, idx, &n);
  if (n <= PS_SHOWN_MAX) return s;
  lua_pushfstring(L, "%s...", lua_pushlstring(L, s, PS_SHOWN_MAX));
  lua_replace(L, -3);
  lua_pop(L, 1);
  return lua_tostring(L, -1);
}

/* A device index at idx: an integer in [0, 1024); raises naming what. */
int ps_todevice(lua_State *L, int idx, const char *what) {
  int isint = 0;
  lua_Integer d = lua_tointegerx(L, idx, &isint);
  if (!isint || lua_type(L, idx) != LUA_TNUMBER || d < 0 || d >= 1024)
    luaL_error(L, "%s: device must be a device index (an integer from 0), got %s", what,
               ps_shown(L, idx));
  return (int)d;
}

/* Formats bytes for messages as poolsh.fmt does (lua/poolsh/units.lua):
 * "64.00 MiB", "100 B". */
const char *ps_fmtsize(char *out, size_t n, uint64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 6) { v /= 1024; u++; }
  if (u == 0) snprintf(out, n, "%llu B", (unsigned long long)bytes);
  else snprintf(out, n, "%.2f %s", v, units[u]);
  return out;
}

/* Refuses keys of the options table at arg that are not in allowed. */
void ps_checkoptions(lua_State *L, int arg, const char *what,
                     const char *const allowed[]) {
  if (lua_isnoneornil(L, arg)) return;
  luaL_checktype(L, arg, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    lua_pop(L, 1);
    int ok = 0;
    if (lua_type(L, -1) == LUA_TSTRING)
      for (int i = 0; allowed[i]; i++)
        if (strcmp(allowed[i], lua_tostring(L, -1)) == 0) ok = 1;
    if (!ok) {
      lua_pushvalue(L, -1);
      luaL_error(L, "%s: unknown option '%s'", what, ps_shown(L, -1));
    }
  }
}

/* A boolean field of an options table (nil: def). */
int ps_optfield_bool(lua_State *L, int arg, const char *key, int def) {
  if (lua_isnoneornil(L, arg)) return def;
  int t = lua_getfield(L, arg, key);
  int v = def;
  if (t == LUA_TBOOLEAN) v = lua_toboolean(L, -1);
  else if (t != LUA_TNIL)
    luaL_error(L, "option '%s' must be a boolean, got %s", key, luaL_typename(L, -1));
  lua_pop(L, 1);
  return v;
}

/* ---- classes ------------------------------------------------------------ */

/* Copies the entries of the table at src into the table on top. */
void ps_copytable(lua_State *L, int src) {
  src = lua_absindex(L, src);
  lua_pushnil(L);
  while (lua_next(L, src)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
}

/* Sets l's functions into the table on top, each with the context upvalue. */
void ps_setfuncs(lua_State *L, const luaL_Reg *l) {
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  luaL_setfuncs(L, l, 1);
}

/* The index of the string at idx in fields (NULL-ended), or -1 (also
 * for a key that is not a string: other keys read nil). */
int ps_field(lua_State *L, int idx, const char *const fields[]) {
  if (lua_type(L, idx) != LUA_TSTRING) return -1;
  const char *k = lua_tostring(L, idx);
  for (int i = 0; fields[i]; i++)
    if (strcmp(fields[i], k) == 0) return i;
  return -1;
}

/* __index helper: the method named by arg 2, from upvalue 2; else nil. */
int ps_method(lua_State *L) {
  lua_pushvalue(L, 2);
  return lua_rawget(L, PS_UP_METHODS) != LUA_TNIL;
}

/* Like luaL_checkudata, without a registry lookup on the fast path. */
void *ps_checkud(lua_State *L, int arg, int uv, const char *tname) {
  void *p = ps_toud(L, arg, uv);
  return p ? p : luaL_checkudata(L, arg, tname);   /* raises the usual message */
}

/* Pushes a new closed object of type uv: a zeroed userdata of
 * ps_udsize[uv] bytes with nuv user values, tagged, with its metatable.
 * Pools, streams and events also go into the registry of objects
 * (weakly): the views list it, poolsh.core.reset() ends them. */
void *ps_newobject(lua_State *L, int uv, int nuv) {
  void *o = lua_newuserdatauv(L, ps_udsize[uv], nuv);
  memset(o, 0, ps_udsize[uv]);
  *(uint32_t *)o = PS_TAG | (uint32_t)uv;
  lua_getiuservalue(L, PS_UP_CTX, uv);
  lua_setmetatable(L, -2);
  if (uv == PS_UV_POOL || uv == PS_UV_STREAM || uv == PS_UV_EVENT) {
    lua_getiuservalue(L, PS_UP_CTX, PS_UV_OBJECTS);   /* [o, objects] */
    lua_pushvalue(L, -2);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
  return o;
}

/* Pushes the context's table of default objects: {stream =, pools =}. */
void ps_pushdefaults(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  lua_getiuservalue(L, -1, PS_UV_DEFAULTS);
  lua_remove(L, -2);
}

/* Appends fields to metatable tname's field list (mt.fields), the one
 * list Lua reads (REPL completion, docs coverage). */
void ps_addfields(lua_State *L, const char *tname, const char *const fields[]) {
  luaL_getmetatable(L, tname);
  lua_getfield(L, -1, "fields");
  lua_Integer n = luaL_len(L, -1);
  for (int i = 0; fields[i]; i++) {
    lua_pushstring(L, fields[i]);
    lua_rawseti(L, -2, ++n);
  }
  lua_pop(L, 2);
}

/* Creates metatable tname (kept as context user value uv): methods go into
 * mt.methods; meta functions (including __index) get upvalues (context,
 * methods). Leaves nothing. */
void ps_newclass(lua_State *L, int uv, const char *tname, const luaL_Reg *methods,
                 const luaL_Reg *meta, const char *const fields[]) {
  luaL_newmetatable(L, tname);                  /* [mt] */
  lua_newtable(L);
  lua_setfield(L, -2, "fields");
  lua_pop(L, 1);
  ps_addfields(L, tname, fields);
  luaL_getmetatable(L, tname);
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  lua_pushvalue(L, -2);
  lua_setiuservalue(L, -2, uv);
  lua_pop(L, 1);
  lua_newtable(L);                              /* [mt, methods] */
  ps_setfuncs(L, methods);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "methods");
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  lua_insert(L, -2);                            /* [mt, ctx, methods] */
  luaL_setfuncs(L, meta, 2);
  lua_pop(L, 1);
}

/* ---- the module --------------------------------------------------------- */

/* The sim's most devices: SIM_MAX_DEVICES in src/sim/sim_model.h. */
#define MAX_SIM_DEVICES 16

/* poolsh.core.configure{backend=, device=, sim_memory=, sim_devices=,
 * limit=, pinned_limit=}: before first use. */
static int core_configure(lua_State *L) {
  static const char *const opts[] = {"backend", "device", "sim_memory", "sim_devices", "limit",
                                     "pinned_limit", NULL};
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  luaL_checktype(L, 1, LUA_TTABLE);
  ps_checkoptions(L, 1, "poolsh.configure", opts);
  if (c->be) return luaL_error(L, "poolsh.configure: the %s backend is already open", c->be->name);
  if (lua_getfield(L, 1, "backend") != LUA_TNIL) {
    const char *want = lua_tostring(L, -1);
    if (!want || (strcmp(want, "auto") && strcmp(want, "cuda") && strcmp(want, "sim")))
      return luaL_error(L, "poolsh.configure: unknown backend '%s' (auto, cuda or sim)",
                        ps_shown(L, -1));
    snprintf(c->backend_want, sizeof c->backend_want, "%s", want);
  }
  if (lua_getfield(L, 1, "device") != LUA_TNIL)
    c->device = ps_todevice(L, lua_gettop(L), "poolsh.configure");
  c->sim_memory = ps_fieldsize(L, 1, "sim_memory", "poolsh.configure", c->sim_memory);
  if (lua_getfield(L, 1, "sim_devices") != LUA_TNIL) {   /* a number or its string */
    int isint = 0;
    lua_Integer n = lua_tointegerx(L, -1, &isint);
    if (!isint || n < 1 || n > MAX_SIM_DEVICES)
      return luaL_error(L, "poolsh.configure: sim_devices: must be an integer from 1 to %d, "
                        "got '%s'", MAX_SIM_DEVICES, ps_shown(L, -1));
    c->sim_devices = (int)n;
  }
  ps_limit_configure(L, c, 1);
  return 0;
}

/* poolsh.core.set_parsers{size = f, duration = f}: unit-string parsers. */
static int core_set_parsers(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, PS_UP_CTX, PS_UV_PARSERS);
  return 0;
}

/* poolsh.backend() -> "cuda" | "sim" (opens the device on first use). */
static int core_backend(lua_State *L) {
  lua_pushstring(L, ps_context(L)->be->name);
  return 1;
}

/* poolsh.backend_reason() -> why auto fell back to the sim, or nil. */
static int core_backend_reason(lua_State *L) {
  ps_ctx *c = ps_context(L);
  if (c->open_status == PS_OK) return 0;
#ifdef POOLSH_HAVE_CUDA
  if (c->open_status != -2) {
    lua_pushfstring(L, "no usable CUDA device (%s): using the simulated device",
                    ps_backend_cuda.error_name(c->open_status));
    return 1;
  }
#endif
  lua_pushstring(L, "built without CUDA: using the simulated device");
  return 1;
}

/* ---- reset ---------------------------------------------------------------- */

/* Frees live Buffer b's memory (pool memory on the legacy stream) and
 * ends it: its finalizer does nothing now. Whatever the backend says:
 * closing the backend next frees what it still holds on the sim; on cuda
 * the device's default pool and cudaMalloc'd memory outlive the close. */
static void buffer_dead(ps_ctx *c, const ps_bufferud *b) {
  ps_bufferud *m = (ps_bufferud *)b;
  if (ps_buffer_release(c, m, NULL, 0) != PS_OK) m->live = 0;
}

/* Ends every Pool, Stream and Event in the registry of objects but the
 * default stream (the legacy stream, which no backend makes): they read
 * as destroyed and their finalizers do nothing. */
static void end_objects(lua_State *L) {
  lua_getiuservalue(L, PS_UP_CTX, PS_UV_OBJECTS);
  lua_pushnil(L);
  while (lua_next(L, -2)) {                          /* [objects, k, v] */
    lua_pop(L, 1);
    ps_poolud *p = (ps_poolud *)ps_toud(L, -1, PS_UV_POOL);
    ps_streamud *s = (ps_streamud *)ps_toud(L, -1, PS_UV_STREAM);
    ps_eventud *e = (ps_eventud *)ps_toud(L, -1, PS_UV_EVENT);
    if (p) p->live = 0, p->h = NULL;
    if (s && s->id != 0) s->live = 0, s->h = NULL;
    if (e) e->live = 0, e->h = NULL;
  }
  lua_pop(L, 1);
}

/* Fresh registry of objects and defaults, keeping the device's name and
 * the default stream, which the layer follows again. */
static void new_tables(lua_State *L) {
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setiuservalue(L, PS_UP_CTX, PS_UV_OBJECTS);
  lua_getiuservalue(L, PS_UP_CTX, PS_UV_DEFAULTS);   /* [old] */
  lua_createtable(L, 0, 2);
  lua_newtable(L);
  lua_setfield(L, -2, "pools");
  lua_getfield(L, -2, "device_name");
  lua_setfield(L, -2, "device_name");
  lua_getfield(L, -2, "stream");                      /* [old, new, s] */
  ps_streamud *s = (ps_streamud *)lua_touserdata(L, -1);
  lua_getiuservalue(L, PS_UP_CTX, PS_UV_OBJECTS);
  lua_pushvalue(L, -2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_setfield(L, -2, "stream");
  lua_setiuservalue(L, PS_UP_CTX, PS_UV_DEFAULTS);
  lua_pop(L, 1);
  if (s) ps_obs_stream_created(L, (ps_ctx *)lua_touserdata(L, PS_UP_CTX), s);
}

/* poolsh.core.reset(): frees and destroys everything poolsh made: every
 * Buffer, Pool, Stream and Event reads as freed or destroyed, the
 * backend is closed and opened again (the sim keeps its options), ids
 * start at 1, the observation layer forgets all (recording stops). */
static int core_reset(lua_State *L) {
  ps_ctx *c = ps_context(L);
  const ps_backend *be = c->be;
  const char *names[128];
  double values[128];
  int n = be->option_names ? be->option_names(c->b, names, 128) : 0;
  if (n > 128) n = 128;
  for (int i = 0; i < n; i++)
    if (be->option_get(c->b, names[i], &values[i]) != PS_OK) names[i] = NULL;
  end_objects(L);
  ps_obs_reset(L, c, buffer_dead);
  ps_free_deferred(L, c);
  c->ndeferred = 0;
  (void)be->device_sync(c->b);     /* the frees complete before pools go */
  be->close(c->b);
  c->b = NULL;
  c->be = NULL;
  memset(c->next_id, 0, sizeof c->next_id);
  c->lim.malloc_held = c->lim.pinned_held = c->lim.registered_held = 0;   /* limits stay */
  new_tables(L);
  c = ps_context(L);                                 /* opens it again */
  for (int i = 0; i < n; i++)
    if (names[i]) c->be->option_set(c->b, names[i], values[i]);
  return 0;
}

static const luaL_Reg core_funcs[] = {
  {"configure", core_configure},
  {"reset", core_reset},
  {"set_parsers", core_set_parsers},
  {"backend", core_backend},
  {"backend_reason", core_backend_reason},
  {NULL, NULL}
};

/* Creates the context userdata (closed until first use) in the registry. */
static void new_context(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_newuserdatauv(L, sizeof *c, PS_UV_COUNT);
  memset(c, 0, sizeof *c);
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
  luaL_newmetatable(L, PS_CONTEXT);
  lua_pushcfunction(L, ctx_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_newtable(L);
  lua_setiuservalue(L, -2, PS_UV_PARSERS);
  lua_newtable(L);                                   /* the registry of objects */
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setiuservalue(L, -2, PS_UV_OBJECTS);
  lua_createtable(L, 0, 2);                          /* the defaults */
  lua_newtable(L);
  lua_setfield(L, -2, "pools");
  lua_setiuservalue(L, -2, PS_UV_DEFAULTS);
  ps_obs_open(L, c);
  lua_setfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
}

/* require "poolsh.core": one context per lua_State, then each type. */
int luaopen_poolsh_core(lua_State *L) {
  static const lua_CFunction opens[] = {
    poolsh_open_stream, poolsh_open_event, poolsh_open_pool,
    poolsh_open_buffer, poolsh_open_device, poolsh_open_bench, poolsh_open_trace,
    poolsh_open_inspect, poolsh_open_names, poolsh_open_naming, poolsh_open_sites,
    poolsh_open_process, poolsh_open_atomic_file, NULL
  };
  if (lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT) == LUA_TNIL) new_context(L);
  lua_pop(L, 1);
  lua_newtable(L);
  ps_setfuncs(L, core_funcs);
  lua_pushliteral(L, PS_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushinteger(L, PS_SHOWN_MAX);
  lua_setfield(L, -2, "shown_max");
  for (int i = 0; opens[i]; i++) {
    lua_pushcfunction(L, opens[i]);
    lua_pushvalue(L, -2);
    lua_call(L, 1, 0);
  }
  return 1;
}
