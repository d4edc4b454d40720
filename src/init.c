/*
 * init.c: the roof (as Lua's linit.c): luaopen_poolsh_core creates the
 * context and walks every bound type's open function; configure, reset,
 * set_parsers, backend and backend_reason. Nothing calls into it but
 * the hosts (main.c, module.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poolsh.h"
#include "bindings.h"
#include "render.h"
#include "limit.h"
#include "atomic_file.h"
#include "naming.h"

#define PS_VERSION "poolsh 0.1.0"

/* __gc of the context: runs after every object's finalizer at lua_close
 * (it is created first), so the device goes away last, then the
 * observation layer's state. */
static int ctx_gc(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, 1);
  ps_context_close(L, c);
  ps_obs_close(c);
  return 0;
}

/* The flag the host's SIGINT handler sets to stop a wait (Ctrl-C); NULL
 * before require "poolsh.core". */
volatile sig_atomic_t *poolsh_interrupt_flag(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  return c ? &c->interrupt : NULL;
}

/* The hosts' message handler (lua.c's msghandler): the message with a
 * traceback; brief (at a REPL): the message alone, its traceback kept in
 * poolsh.repl.last_traceback for poolsh.repl.traceback(). */
int poolsh_msghandler(lua_State *L, int brief) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  if (!brief) return 1;
  if (lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.repl") == LUA_TTABLE) {   /* [msg, tb, repl] */
    lua_pushliteral(L, "last_traceback");
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
  }
  lua_pushstring(L, msg);
  return 1;
}

/* Tells poolsh the statement a host's REPL now runs (its text at idx; 0:
 * none), which names the allocations it makes (poolsh.core.statement,
 * docs/live.md). */
void poolsh_set_statement(lua_State *L, int idx) {
  int top = lua_gettop(L);
  if (idx) idx = lua_absindex(L, idx);
  if (lua_getglobal(L, "poolsh") == LUA_TTABLE && lua_getfield(L, -1, "core") == LUA_TTABLE &&
      lua_getfield(L, -1, "statement") == LUA_TFUNCTION) {
    if (idx) lua_pushvalue(L, idx);
    else lua_pushnil(L);
    lua_pcall(L, 1, 0, 0);
  }
  lua_settop(L, top);
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
  ps_vmm_reset(L);
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
  {"set_parsers", core_set_parsers},
  {"backend", core_backend},
  {"backend_reason", core_backend_reason},
  {NULL, NULL}
};

/* The internal views and entries the Lua modules use (poolsh.core). */
static const luaL_Reg core_views[] = {
  {"reset", core_reset},
  {NULL, NULL}
};
/* Creates the context userdata (closed until first use) in the registry. */
static void new_context(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_newuserdatauv(L, sizeof *c, PS_UV_COUNT);
  memset(c, 0, sizeof *c);
  ps_context_init(c);
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

/* require "poolsh.core": one context per lua_State, then each type's
 * open function, given the module and the table of internal views. It
 * returns the views (poolsh.core, whatever is loaded first), which read
 * the module for what they lack; the module is the views' __index, which
 * lua/poolsh/init.lua extends in place as poolsh. Each C function is held
 * by one loaded table, so an error names it the same way on every run. */
int luaopen_poolsh_core(lua_State *L) {
  static const lua_CFunction opens[] = {
    poolsh_open_stream, poolsh_open_event, poolsh_open_pool,
    poolsh_open_buffer, poolsh_open_device, poolsh_open_bench, poolsh_open_trace,
    poolsh_open_inspect, poolsh_open_names, poolsh_open_naming, poolsh_open_sites,
    poolsh_open_process, poolsh_open_atomic_file, poolsh_open_vmm, poolsh_open_view, NULL
  };
  if (lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT) == LUA_TNIL) new_context(L);
  ps_render_keep_require(L);
  lua_pop(L, 1);
  lua_newtable(L);                              /* [module] */
  ps_setfuncs(L, core_funcs);
  lua_pushliteral(L, PS_VERSION);
  lua_setfield(L, -2, "version");
  lua_newtable(L);                              /* [module, views] */
  ps_setfuncs(L, core_views);
  lua_pushinteger(L, PS_SHOWN_MAX);
  lua_setfield(L, -2, "shown_max");
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "core");
  for (int i = 0; opens[i]; i++) {              /* each open(module, views) */
    lua_pushcfunction(L, opens[i]);
    lua_pushvalue(L, -3);
    lua_pushvalue(L, -3);
    lua_call(L, 2, 0);
  }
  lua_createtable(L, 0, 1);                     /* views read the module for */
  lua_pushvalue(L, -3);                         /* what they lack */
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  return 1;                                     /* the views: poolsh.core */
}
