/*
 * event.c: poolsh.Event, a CUDA event: a marker in a stream that other
 * streams can wait on and the host can synchronise with.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bindings.h"
#include "naming.h"




/* poolsh.event{timing=true, ipc=false} -> Event. An IPC event has no
 * timing (CUDA's rule). */
static int event_new(lua_State *L) {
  static const char *const opts[] = {"timing", "name", "ipc", NULL};
  ps_checkoptions(L, 1, "poolsh.event", opts);
  int ipc = ps_optfield_bool(L, 1, "ipc", 0);
  int timing = ps_optfield_bool(L, 1, "timing", !ipc);
  if (ipc && timing)
    return luaL_error(L, "poolsh.event: an IPC event cannot have timing: pass timing = false "
                      "(CUDA needs cudaEventDisableTiming with cudaEventInterprocess)");
  int name = ps_optname(L, 1);
  ps_eventud *e = ipc ? ps_newevent_ipc(L) : ps_newevent(L, timing);
  if (!lua_isnil(L, name)) ps_setname(L, PS_ID_EVENT, e->id, name);
  return 1;
}

/* Destroys the event once; returns the backend's status (dead either way). */
static int event_release(lua_State *L, ps_eventud *e) {
  if (!e->live) return PS_OK;
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  int st = (c->b && e->h) ? c->be->event_destroy(c->b, e->h) : PS_OK;
  e->live = 0;
  e->h = NULL;
  return st;
}

static int event_gc(lua_State *L) {
  ps_eventud *e = (ps_eventud *)ps_toud(L, 1, PS_UV_EVENT);
  if (e == NULL) return luaL_typeerror(L, 1, PS_EVENT);     /* called by hand */
  if (event_release(L, e) != PS_OK)
    lua_warning(L, "poolsh: destroying an event failed", 0);
  return 0;
}

static int event_destroy(lua_State *L) {
  ps_eventud *e = ps_checkevent(L, 1);
  ps_context(L);
  ps_check(L, event_release(L, e), "(destroying event e%d)", e->id);
  return 0;
}


/* e:record([stream]) -> e. */
static int event_record(lua_State *L) {
  ps_eventud *e = ps_checkevent(L, 1);
  ps_streamud *s = ps_optstream(L, 2);
  ps_event_record(L, ps_context(L), e, s);
  lua_settop(L, 1);
  return 1;
}

static int event_sync(lua_State *L) {
  ps_eventud *e = ps_checkevent(L, 1);
  ps_ctx *c = ps_context(L);
  ps_wait_begin(L, c);
  ps_check(L, c->be->event_sync(c->b, e->h), "(synchronizing event e%d)", e->id);
  ps_obs_waited(L, c, &(ps_what){ .op = PS_OP_EVENT_SYNC, .event = e });
  lua_settop(L, 1);
  return 1;
}

static int event_query(lua_State *L) {
  ps_eventud *e = ps_checkevent(L, 1);
  ps_ctx *c = ps_context(L);
  int done = 0;
  ps_check(L, c->be->event_query(c->b, e->h, &done), "(querying event e%d)", e->id);
  if (done) ps_obs_idle(L, c, NULL, e);
  lua_pushboolean(L, done);
  return 1;
}

/* e:elapsed(e2) -> ms from e to e2 (both recorded, completed, timing). */
static int event_elapsed(lua_State *L) {
  ps_eventud *a = ps_checkevent(L, 1);
  ps_eventud *b = ps_checkevent(L, 2);
  ps_ctx *c = ps_context(L);
  if (!a->timing || !b->timing)
    return luaL_error(L, "event e%d was created with timing=false", a->timing ? b->id : a->id);
  double ms = 0;
  ps_check(L, c->be->event_elapsed(c->b, a->h, b->h, &ms),
           "(elapsed time from event e%d to e%d)", a->id, b->id);
  lua_pushnumber(L, ms);
  return 1;
}

#define EVENT_TOKEN "poolsh-event1:"

/* e:export() -> token: "poolsh-event1:<pid>:e<id>:" and the 64 bytes of
 * cudaIpcEventHandle_t in hex. */
static int event_export(lua_State *L) {
  ps_eventud *e = ps_checkevent(L, 1);
  ps_ctx *c = ps_context(L);
  if (!e->ipc)
    return luaL_error(L, "e%d is not an IPC event: create it with poolsh.event{ipc = true}", e->id);
  uint8_t d[PS_IPC_BYTES];
  ps_check(L, c->be->event_export(c->b, e->h, d), "(exporting event e%d)", e->id);
  char hex[2 * PS_IPC_BYTES + 1];
  for (int i = 0; i < PS_IPC_BYTES; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
  lua_pushfstring(L, EVENT_TOKEN "%d:e%d:%s", (int)getpid(), e->id, hex);
  return 1;
}

/* Parses an event token: "poolsh-event1:<pid>:e<id>:" then 128 lower-case
 * hex digits, nothing after them (the whole Lua string, NULs included).
 * NULL and the 64 bytes in d, or what is wrong with it. */
static const char *parse_event_token(const char *t, size_t len, uint8_t d[PS_IPC_BYTES]) {
  size_t np = strlen(EVENT_TOKEN);
  if (len < np || memcmp(t, EVENT_TOKEN, np) != 0) return "not an event token (poolsh-event1:...)";
  const char *q = t + np, *end = t + len;
  unsigned long long v;
  if (!ps_token_number(&q, end, ':', INT_MAX, &v)) return "no exporter pid";
  if (q >= end || *q++ != 'e' || !ps_token_number(&q, end, ':', INT_MAX, &v)) return "no event id";
  if (!ps_token_hex(q, end, d, PS_IPC_BYTES)) return "its data is not 128 hex digits";
  return NULL;
}

/* poolsh.import_event(token) -> Event: another process's IPC event, to
 * wait on, query, sync (and record). */
static int event_import(lua_State *L) {
  size_t len;
  const char *t = luaL_checklstring(L, 1, &len);
  ps_ctx *c = ps_context(L);
  uint8_t d[PS_IPC_BYTES];
  const char *bad = parse_event_token(t, len, d);
  if (bad) return luaL_error(L, "poolsh.import_event: malformed token: %s", bad);
  const char *q = t + len - 2 * PS_IPC_BYTES;
  size_t np = strlen(EVENT_TOKEN);
  ps_eventud *e = (ps_eventud *)ps_newobject(L, PS_UV_EVENT, 0);
  e->id = ps_nextid(L, PS_ID_EVENT);
  ps_check(L, c->be->event_import(c->b, d, &e->h), "(importing event %.*s as e%d)",
           (int)(q - 1 - t - np), t + np, e->id);
  e->ipc = PS_IPC_IMPORTED;
  e->live = 1;
  return 1;
}

/* e.name = "done": the only settable field. */
static int event_newindex(lua_State *L) {
  ps_eventud *e = (ps_eventud *)ps_checkud(L, 1, PS_UV_EVENT, PS_EVENT);
  return ps_newindex_name(L, PS_ID_EVENT, e->id, PS_EVENT);
}

static int event_tostring(lua_State *L) {
  ps_eventud *e = (ps_eventud *)ps_checkud(L, 1, PS_UV_EVENT, PS_EVENT);
  lua_pushfstring(L, "poolsh.Event %s%s", ps_pushlabel(L, PS_ID_EVENT, e->id),
                  e->live ? "" : " (destroyed)");
  return 1;
}

/* An Event's fields: mt.fields in Lua, event_index here. */
static const char *const event_fields[] = {"id", "name", "timing", "live", "ipc", "imported",
                                           NULL};

static int event_index(lua_State *L) {
  if (ps_method(L)) return 1;
  ps_eventud *e = (ps_eventud *)ps_checkud(L, 1, PS_UV_EVENT, PS_EVENT);
  switch (ps_field(L, 2, event_fields)) {
    case 0: lua_pushinteger(L, e->id); break;
    case 1: ps_pushname(L, PS_ID_EVENT, e->id); break;
    case 2: lua_pushboolean(L, e->timing); break;
    case 3: lua_pushboolean(L, e->live); break;
    case 4: lua_pushboolean(L, e->ipc != 0); break;
    case 5: lua_pushboolean(L, e->ipc == PS_IPC_IMPORTED); break;
    default: lua_pushnil(L); break;              /* other keys read nil */
  }
  return 1;
}

static const luaL_Reg event_methods[] = {
  {"record", event_record}, {"sync", event_sync}, {"query", event_query},
  {"elapsed", event_elapsed}, {"destroy", event_destroy}, {"export", event_export},
  {NULL, NULL}
};

static const luaL_Reg event_meta[] = {
  {"__index", event_index}, {"__gc", event_gc}, {"__close", event_gc},
  {"__tostring", event_tostring}, {"__newindex", event_newindex}, {NULL, NULL}
};

static const luaL_Reg event_funcs[] = {
  {"event", event_new}, {"import_event", event_import}, {NULL, NULL}
};

int poolsh_open_event(lua_State *L) {
  ps_newclass(L, PS_UV_EVENT, PS_EVENT, event_methods, event_meta, event_fields);
  lua_settop(L, 1);
  ps_setfuncs(L, event_funcs);
  return 0;
}
