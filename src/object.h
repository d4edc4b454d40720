/*
 * object.h: the object base (as luv's handle.c): classes, objects and
 * their type checks, the host-wait protocol, and the Stream, Event, Pool
 * and Buffer helpers that more than one binding uses, so that no binding
 * calls into another's file (but pool.c into buffer.c's, bindings.h).
 */
#ifndef POOLSH_OBJECT_H
#define POOLSH_OBJECT_H

#include "context.h"
#include "observe.h"

/* The userdata at arg if it is a poolsh object of type uv, else NULL.
 * Lua code cannot forge a userdata's bytes, so size and tag identify the
 * type as surely as its metatable, at a third of the cost. */
static inline void *ps_toud(lua_State *L, int arg, int uv) {
  uint32_t *p = (uint32_t *)lua_touserdata(L, arg);
  if (p && lua_rawlen(L, arg) == ps_udsize[uv] && *p == (PS_TAG | (uint32_t)uv)) return p;
  return NULL;
}
void *ps_checkud(lua_State *L, int arg, int uv, const char *tname);
void *ps_newobject(lua_State *L, int uv, int nuv);
void ps_newclass(lua_State *L, int uv, const char *tname, const luaL_Reg *methods,
                 const luaL_Reg *meta, const char *const fields[]);
void ps_addfields(lua_State *L, const char *tname, const char *const fields[]);
void ps_wait_begin(lua_State *L, ps_ctx *c);

/* Checks that refuse dead objects. */
ps_streamud *ps_checkstream(lua_State *L, int arg);
ps_streamud *ps_optstream(lua_State *L, int arg);
ps_eventud *ps_checkevent(lua_State *L, int arg);
ps_poolud *ps_checkpool(lua_State *L, int arg);
ps_bufferud *ps_checkbuffer(lua_State *L, int arg);

/* Streams: the default one, a stream's name in messages, its device. */
void ps_pushdefaultstream(lua_State *L);
const char *ps_streamname(char *out, size_t n, const ps_streamud *s);
int ps_streamdevice(const ps_ctx *c, const ps_streamud *s);

/* Events: new ones (pushed, live), and recording one on a stream. */
ps_eventud *ps_newevent(lua_State *L, int timing);
ps_eventud *ps_newevent_ipc(lua_State *L);
void ps_event_record(lua_State *L, ps_ctx *c, ps_eventud *e, ps_streamud *s);

/* Raises before a kernel (fill, touch, verify) on stream s reaches b
 * from a device without access. */
void ps_check_reach(lua_State *L, ps_ctx *c, const ps_bufferud *b, const ps_streamud *s,
                    const char *what);

#endif
