/*
 * stream.c: poolsh.Stream, a CUDA stream. The legacy default stream is a
 * Stream too (id 0, never destroyed).
 */
#include <stdio.h>
#include <string.h>

#include "bindings.h"
#include "naming.h"






/* poolsh.stream{priority=, blocking=, device=} -> Stream. Created closed,
 * live only once CUDA gave a handle. */
static int stream_new(lua_State *L) {
  static const char *const opts[] = {"priority", "blocking", "name", "device", NULL};
  ps_checkoptions(L, 1, "poolsh.stream", opts);
  ps_ctx *c = ps_context(L);
  int dev = c->device;
  if (!lua_isnoneornil(L, 1) && lua_getfield(L, 1, "device") != LUA_TNIL)
    dev = ps_todevice(L, lua_gettop(L), "poolsh.stream");
  int least = 0, greatest = 0;
  ps_check(L, c->be->stream_priority_range(c->b, &least, &greatest),
           "(querying stream priorities)");
  lua_Integer prio = 0;
  if (!lua_isnoneornil(L, 1) && lua_getfield(L, 1, "priority") != LUA_TNIL) {
    if (!lua_isinteger(L, -1)) luaL_error(L, "poolsh.stream: priority must be an integer");
    prio = lua_tointeger(L, -1);
    if (prio > least || prio < greatest)
      luaL_error(L, "poolsh.stream: priority %I outside [%d, %d] (lower is higher priority)",
                 prio, greatest, least);
  }
  int blocking = ps_optfield_bool(L, 1, "blocking", 1);
  int name = ps_optname(L, 1);
  ps_streamud *s = (ps_streamud *)ps_newobject(L, PS_UV_STREAM, 0);
  s->id = ps_nextid(L, PS_ID_STREAM);
  s->priority = (int)prio;
  s->blocking = blocking;
  s->device = dev;
  if (dev == c->device)
    ps_check(L, c->be->stream_create(c->b, dev, (int)prio, blocking, &s->h),
             "(creating stream s%d)", s->id);
  else
    ps_check(L, c->be->stream_create(c->b, dev, (int)prio, blocking, &s->h),
             "(creating stream s%d on device %d)", s->id, dev);
  s->live = 1;
  if (!lua_isnil(L, name)) ps_setname(L, PS_ID_STREAM, s->id, name);
  ps_obs_stream_created(L, c, s);
  return 1;
}

/* The default stream's userdata (run with the context as upvalue 1). */
static int default_stream_new(lua_State *L) {
  ps_streamud *s = (ps_streamud *)ps_newobject(L, PS_UV_STREAM, 0);
  s->live = 1;
  s->blocking = 1;
  return 1;
}

static int stream_default(lua_State *L) {
  ps_pushdefaultstream(L);
  return 1;
}

/* Destroys the stream once; queued work still completes (CUDA's rule).
 * Destroying a stream whose work is done makes pools give memory back as
 * a sync of it would (docs/calibration.md E3), so the destruction is
 * recorded with any release, and counts as a host wait. Returns the
 * backend's status; the Stream is dead either way. */
static int stream_release(lua_State *L, ps_streamud *s, int from_gc) {
  if (!s->live || s->id == 0) return PS_OK;
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  if (!c->b) {                          /* the context closed first */
    s->live = 0;
    return PS_OK;
  }
  if (!from_gc) ps_wait_begin(L, c);
  else ps_obs_wait_begin(c);            /* a finalizer leaves deferred frees be */
  int st = s->h ? c->be->stream_destroy(c->b, s->h) : PS_OK;
  s->live = 0;
  s->h = NULL;
  ps_obs_stream_destroyed(L, c, s, st, from_gc);
  return st;
}

/* __gc and __close: never raise; a failure becomes a warning. */
static int stream_gc(lua_State *L) {
  ps_streamud *s = (ps_streamud *)ps_toud(L, 1, PS_UV_STREAM);
  if (s == NULL) return luaL_typeerror(L, 1, PS_STREAM);   /* called by hand */
  int id = s->id;
  if (stream_release(L, s, 1) != PS_OK) {
    char msg[80];
    snprintf(msg, sizeof msg, "poolsh: destroying stream s%d failed", id);
    lua_warning(L, msg, 0);
  }
  return 0;
}

static int stream_destroy(lua_State *L) {
  ps_streamud *s = ps_checkstream(L, 1);
  if (s->id == 0) return luaL_error(L, "the default stream cannot be destroyed");
  (void)ps_context(L);                 /* raises if the context is closed */
  ps_check(L, stream_release(L, s, 0), "(destroying stream s%d)", s->id);
  return 0;
}

static int stream_sync(lua_State *L) {
  ps_streamud *s = ps_checkstream(L, 1);
  ps_ctx *c = ps_context(L);
  char n[16];
  ps_wait_begin(L, c);
  ps_check(L, c->be->stream_sync(c->b, s->h), "(synchronizing stream %s)",
           ps_streamname(n, sizeof n, s));
  ps_obs_waited(L, c, &(ps_what){ .op = PS_OP_STREAM_SYNC, .stream = s });
  lua_settop(L, 1);
  return 1;
}

static int stream_query(lua_State *L) {
  ps_streamud *s = ps_checkstream(L, 1);
  ps_ctx *c = ps_context(L);
  int idle = 0;
  char n[16];
  ps_check(L, c->be->stream_query(c->b, s->h, &idle), "(querying stream %s)",
           ps_streamname(n, sizeof n, s));
  if (idle) ps_obs_idle(L, c, s, NULL);
  lua_pushboolean(L, idle);
  return 1;
}

/* s:record([ev]) -> ev: records ev (a new timing event if none) on s. */
static int stream_record(lua_State *L) {
  ps_streamud *s = ps_checkstream(L, 1);
  ps_ctx *c = ps_context(L);
  ps_eventud *e;
  if (lua_isnoneornil(L, 2)) {
    lua_settop(L, 1);
    e = ps_newevent(L, 1);
  } else {
    e = ps_checkevent(L, 2);
    lua_settop(L, 2);
  }
  ps_event_record(L, c, e, s);
  return 1;
}

static int stream_wait(lua_State *L) {
  ps_streamud *s = ps_checkstream(L, 1);
  ps_eventud *e = ps_checkevent(L, 2);
  ps_ctx *c = ps_context(L);
  char n[16];
  ps_check(L, c->be->stream_wait(c->b, s->h, e->h), "(stream %s waiting on event e%d)",
           ps_streamname(n, sizeof n, s), e->id);
  ps_obs_enqueued(L, c, &(ps_what){ .op = PS_OP_WAIT, .stream = s, .event = e });
  lua_settop(L, 1);
  return 1;
}

/* s.name = "copies": the only settable field. */
static int stream_newindex(lua_State *L) {
  ps_streamud *s = (ps_streamud *)ps_checkud(L, 1, PS_UV_STREAM, PS_STREAM);
  return ps_newindex_name(L, PS_ID_STREAM, s->id, PS_STREAM);
}

static int stream_tostring(lua_State *L) {
  ps_streamud *s = (ps_streamud *)ps_checkud(L, 1, PS_UV_STREAM, PS_STREAM);
  lua_pushfstring(L, "poolsh.Stream %s%s", ps_pushlabel(L, PS_ID_STREAM, s->id),
                  s->live ? "" : " (destroyed)");
  return 1;
}

/* A Stream's fields: mt.fields in Lua, stream_index here. */
static const char *const stream_fields[] = {
  "id", "name", "priority", "blocking", "live", "default", "device", NULL
};

static int stream_index(lua_State *L) {
  if (ps_method(L)) return 1;
  ps_streamud *s = (ps_streamud *)ps_checkud(L, 1, PS_UV_STREAM, PS_STREAM);
  switch (ps_field(L, 2, stream_fields)) {
    case 0: lua_pushinteger(L, s->id); break;
    case 1: ps_pushname(L, PS_ID_STREAM, s->id); break;
    case 2: lua_pushinteger(L, s->priority); break;
    case 3: lua_pushboolean(L, s->blocking); break;
    case 4: lua_pushboolean(L, s->live); break;
    case 5: lua_pushboolean(L, s->id == 0); break;
    case 6: lua_pushinteger(L, ps_streamdevice((ps_ctx *)lua_touserdata(L, PS_UP_CTX), s)); break;
    default: lua_pushnil(L); break;              /* other keys read nil */
  }
  return 1;
}

static const luaL_Reg stream_methods[] = {
  {"sync", stream_sync}, {"query", stream_query}, {"record", stream_record},
  {"wait", stream_wait}, {"destroy", stream_destroy}, {NULL, NULL}
};

static const luaL_Reg stream_meta[] = {
  {"__index", stream_index}, {"__gc", stream_gc}, {"__close", stream_gc},
  {"__tostring", stream_tostring}, {"__newindex", stream_newindex}, {NULL, NULL}
};

static const luaL_Reg stream_funcs[] = {
  {"stream", stream_new}, {"default_stream", stream_default}, {NULL, NULL}
};

/* Makes the default stream once per state: a Stream with a NULL handle,
 * id 0. The context is upvalue 1 of the functions it calls: here arg 1. */
static int open_default_stream(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, 1);
  ps_pushdefaults(L);                                   /* [ctx, defaults] */
  if (lua_getfield(L, -1, "stream") != LUA_TNIL) return 0;
  lua_pop(L, 1);
  lua_pushvalue(L, 1);
  lua_pushcclosure(L, default_stream_new, 1);
  lua_call(L, 0, 1);                                    /* [ctx, defaults, s] */
  ps_streamud *s = (ps_streamud *)lua_touserdata(L, -1);
  lua_setfield(L, -2, "stream");
  ps_obs_stream_created(L, c, s);
  return 0;
}

/* Adds Stream's functions to the module table at 1; makes the default
 * stream. */
int poolsh_open_stream(lua_State *L) {
  ps_newclass(L, PS_UV_STREAM, PS_STREAM, stream_methods, stream_meta, stream_fields);
  lua_settop(L, 1);
  ps_setfuncs(L, stream_funcs);
  lua_pushcfunction(L, open_default_stream);
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  lua_call(L, 1, 0);
  return 0;
}
