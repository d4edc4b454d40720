/*
 * object.c: the object base (object.h): classes and objects, the type
 * checks that refuse dead objects, the host-wait protocol, and the
 * Stream and Event helpers the bindings share.
 */
#include <stdio.h>
#include <string.h>

#include "object.h"
#include "naming.h"

/* ---- classes and objects ---------------------------------------------- */

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

/* Before the host waits for the device: frees what finalizers left (the
 * wait pays for it), then tells the observation layer. */
void ps_wait_begin(lua_State *L, ps_ctx *c) {
  ps_free_deferred(L, c);
  ps_obs_wait_begin(c);
}
/* ---- checks that refuse dead objects --------------------------------- */

/* The name object kind/id is shown by ("b3", or the one it was given),
 * pushed (the error that uses it discards the stack). */
static const char *objname(lua_State *L, int kind, int id) {
  ps_pushname(L, kind, id);
  return lua_tostring(L, -1);
}

/* Returns the Stream at arg, refusing a destroyed one. */
ps_streamud *ps_checkstream(lua_State *L, int arg) {
  ps_streamud *s = (ps_streamud *)ps_checkud(L, arg, PS_UV_STREAM, PS_STREAM);
  if (!s->live) luaL_error(L, "attempt to use a destroyed poolsh.Stream (%s)", objname(L, PS_ID_STREAM, s->id));
  return s;
}

/* Like ps_checkstream, but nil or none at arg becomes the default stream
 * (also on the stack, so callers can keep a reference to it). */
ps_streamud *ps_optstream(lua_State *L, int arg) {
  if (lua_isnoneornil(L, arg)) {
    if (lua_gettop(L) < arg) lua_settop(L, arg);
    ps_pushdefaultstream(L);
    lua_replace(L, arg);
  }
  return ps_checkstream(L, arg);
}

/* Returns the Event at arg, refusing a destroyed one. */
ps_eventud *ps_checkevent(lua_State *L, int arg) {
  ps_eventud *e = (ps_eventud *)ps_checkud(L, arg, PS_UV_EVENT, PS_EVENT);
  if (!e->live) luaL_error(L, "attempt to use a destroyed poolsh.Event (%s)", objname(L, PS_ID_EVENT, e->id));
  return e;
}

/* Returns the Pool at arg, refusing a destroyed one. */
ps_poolud *ps_checkpool(lua_State *L, int arg) {
  ps_poolud *p = (ps_poolud *)ps_checkud(L, arg, PS_UV_POOL, PS_POOL);
  if (!p->live) luaL_error(L, "attempt to use a destroyed poolsh.Pool (%s)", objname(L, PS_ID_POOL, p->id));
  return p;
}

/* Returns the Buffer at arg, refusing a freed one. */
ps_bufferud *ps_checkbuffer(lua_State *L, int arg) {
  ps_bufferud *b = (ps_bufferud *)ps_checkud(L, arg, PS_UV_BUFFER, PS_BUFFER);
  if (!b->live) luaL_error(L, "attempt to use a freed poolsh.Buffer (%s)", objname(L, PS_ID_BUFFER, b->id));
  return b;
}

/* ---- streams ------------------------------------------------------------ */

/* Pushes the default Stream (the legacy stream, id 0). */
void ps_pushdefaultstream(lua_State *L) {
  ps_pushdefaults(L);
  lua_getfield(L, -1, "stream");
  lua_remove(L, -2);
}

/* A stream's name in messages, into out: "default" or "s<id>". */
const char *ps_streamname(char *out, size_t n, const ps_streamud *s) {
  if (s->id == 0) snprintf(out, n, "default");
  else snprintf(out, n, "s%d", s->id);
  return out;
}

/* The device a stream's work runs on: the default stream's is poolsh's. */
int ps_streamdevice(const ps_ctx *c, const ps_streamud *s) {
  return s->id == 0 ? c->device : s->device;
}

/* ---- events ------------------------------------------------------------- */

/* Pushes a new live Event; created closed, live once CUDA gave a handle. */
ps_eventud *ps_newevent(lua_State *L, int timing) {
  ps_ctx *c = ps_context(L);
  ps_eventud *e = (ps_eventud *)ps_newobject(L, PS_UV_EVENT, 0);
  e->id = ps_nextid(L, PS_ID_EVENT);
  e->timing = timing;
  ps_check(L, c->be->event_create(c->b, timing ? PS_EVENT_TIMING : 0, &e->h), "(creating event e%d)", e->id);
  e->live = 1;
  return e;
}

/* Pushes a new live IPC event (cudaEventInterprocess, no timing). */
ps_eventud *ps_newevent_ipc(lua_State *L) {
  ps_ctx *c = ps_context(L);
  ps_eventud *e = (ps_eventud *)ps_newobject(L, PS_UV_EVENT, 0);
  e->id = ps_nextid(L, PS_ID_EVENT);
  ps_check(L, c->be->event_create(c->b, PS_EVENT_IPC, &e->h), "(creating IPC event e%d)", e->id);
  e->ipc = PS_IPC_OWN;
  e->live = 1;
  return e;
}

/* Records e on s, and reports it. Shared by e:record and s:record. */
void ps_event_record(lua_State *L, ps_ctx *c, ps_eventud *e, ps_streamud *s) {
  char n[16];
  int dev = ps_streamdevice(c, s);
  int st = c->be->event_record(c->b, e->h, s->h);
  if (st != PS_OK && dev != c->device)     /* CUDA: event and stream on one device */
    ps_fail(L, st, "(recording event e%d on stream %s of device %d: events are created on "
            "device %d and record only on its streams)", e->id, ps_streamname(n, sizeof n, s),
            dev, c->device);
  ps_check(L, st, "(recording event e%d on stream %s)", e->id, ps_streamname(n, sizeof n, s));
  ps_obs_enqueued(L, c, &(ps_what){ .op = PS_OP_RECORD, .stream = s, .event = e });
}

/* ---- buffers ------------------------------------------------------------ */

/* Raises, before a kernel is queued, when stream s's device cannot reach
 * buffer b: pool memory whose pool does not grant that device rw access
 * (its own device always has it), or cudaMalloc'd memory (on poolsh's
 * device) from another device without peer access enabled. Host memory
 * (pinned, registered) is reached from any device. Such a kernel faults
 * on the GPU (cudaErrorIllegalAddress, and the process's CUDA context is
 * lost: measured, docs/calibration/h200x2-2026-11-24-peer.log and
 * -11-27-issue12.log), so poolsh refuses it with that error, on both
 * backends. Copies need no check: cudaMemcpyAsync (cudaMemcpyDefault)
 * works without access (measured). The common case (the pool's own
 * device, poolsh's device for cudaMalloc'd memory) asks the backend
 * nothing. A view of a VMM Range (r:buffer) needs "rw" access for the
 * stream's device on every mapping under it (cuMemSetAccess; its own
 * device too): the Range's mappings say, through the registry hook
 * "poolsh.vmm.reach" that vmm.c sets. */
void ps_check_reach(lua_State *L, ps_ctx *c, const ps_bufferud *b, const ps_streamud *s,
                    const char *what) {
  int dev = ps_streamdevice(c, s), owner, st, ok = 1;
  const ps_poolud *p = b->pool;
  if (b->kind == PS_KIND_POOL && p) {
    owner = p->props.location == PS_LOCATION_DEVICE ? p->props.device : -1;
    if (owner == dev || !p->live || !p->h) return;   /* a destroyed pool: the backend's word */
    ps_access a = PS_ACCESS_NONE;
    st = c->be->pool_get_access(c->b, p->h, dev, &a);
    if (st == PS_ERR_INVALID_VALUE || st == PS_ERR_INVALID_DEVICE) return;   /* the backend
                                                         refuses the stream's work */
    ps_check(L, st, "(reading the access of device %d to pool p%d)", dev, p->id);
    ok = a == PS_ACCESS_RW;
  } else if (b->kind == PS_KIND_MALLOC) {
    owner = c->device;
    if (owner == dev) return;
    st = c->be->device_peer_enabled(c->b, dev, owner, &ok);
    if (st == PS_ERR_INVALID_DEVICE) return;
    ps_check(L, st, "(asking whether device %d has peer access to device %d)", dev, owner);
  } else if (b->kind == PS_KIND_VMM) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.vmm.reach") != LUA_TFUNCTION) {
      lua_pop(L, 1);
      return;
    }
    lua_pushlightuserdata(L, (void *)b);
    lua_pushinteger(L, dev);
    lua_call(L, 2, 2);                    /* [lacks, grant] or [nil, nil] */
    if (lua_isnil(L, -2)) { lua_pop(L, 2); return; }
    char n[16];
    ps_streamname(n, sizeof n, s);
    ps_fail(L, PS_ERR_ILLEGAL_ADDRESS, "(%s of b%d on stream %s: device %d has %s; on the GPU "
            "the kernel would fault and the process's CUDA context would be lost, so poolsh "
            "refused to launch it: %s)", what, b->id, n, dev, lua_tostring(L, -2),
            lua_tostring(L, -1));
  } else {
    return;
  }
  if (ok) return;
  char n[16], grant[96];
  ps_streamname(n, sizeof n, s);
  if (b->kind == PS_KIND_MALLOC)
    snprintf(grant, sizeof grant, "poolsh.enable_peer_access(%d, %d) grants it", owner, dev);
  else
    snprintf(grant, sizeof grant, "p%d:set_access(%d, \"rw\") grants it", p->id, dev);
  char whose[64];
  if (b->kind == PS_KIND_MALLOC)
    snprintf(whose, sizeof whose, "no peer access to b%d (cudaMalloc'd on device %d)", b->id, owner);
  else if (owner < 0)
    snprintf(whose, sizeof whose, "no access to b%d's host pool p%d", b->id, p->id);
  else
    snprintf(whose, sizeof whose, "no access to b%d's pool p%d (on device %d)", b->id, p->id, owner);
  ps_fail(L, PS_ERR_ILLEGAL_ADDRESS, "(%s of b%d on stream %s: device %d has %s; on the GPU "
          "the kernel would fault and the process's CUDA context would be lost, so poolsh "
          "refused to launch it: %s)", what, b->id, n, dev, whose, grant);
}

