/*
 * inspect.c: what the REPL's live view, poolsh.show() and poolsh.map()
 * read: the live pools and streams, a pool's blocks, the live buffers
 * (the leak report) and the allocations since the last look.
 */
#include <stdlib.h>
#include <string.h>

#include "observer.h"

/* poolsh.core.objects() -> pools, streams: arrays of the live ones, from
 * the registry of objects (ps_newobject). */
static int insp_objects(lua_State *L) {
  ps_context(L);
  lua_settop(L, 0);
  lua_newtable(L);                                    /* 1: pools */
  lua_newtable(L);                                    /* 2: streams */
  lua_getiuservalue(L, PS_UP_CTX, PS_UV_OBJECTS);
  lua_pushnil(L);
  while (lua_next(L, -2)) {                           /* [pools, streams, objs, k, v] */
    lua_pop(L, 1);
    ps_poolud *p = (ps_poolud *)ps_toud(L, -1, PS_UV_POOL);
    ps_streamud *s = (ps_streamud *)ps_toud(L, -1, PS_UV_STREAM);
    int into = p && p->live ? 1 : s && s->live ? 2 : 0;
    if (into) {
      lua_Integer n = luaL_len(L, into);
      lua_pushvalue(L, -1);
      lua_rawseti(L, into, n + 1);
    }
  }
  lua_pop(L, 1);
  return 2;   /* the Lua side sorts them by id */
}

/* poolsh.core.blocks(pool) -> array of {addr, size, buffer, stream, pending}
 * sorted by address, and the pool's lowest address seen (its base). */
static int insp_blocks(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  ps_ctx *c = ps_context(L);
  size_t n = 0;
  const ps_seen_pool *sp = ps_seen_pool_of(p);
  ps_span *m = ps_ledger_spans(c, sp, &n);
  /* a copy the collector owns, so an error below leaks nothing */
  ps_span *v = n ? (ps_span *)lua_newuserdatauv(L, n * sizeof *v, 0) : NULL;
  if (n) memcpy(v, m, n * sizeof *v);
  free(m);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_createtable(L, 0, 5);
    lua_pushinteger(L, (lua_Integer)v[i].addr);
    lua_setfield(L, -2, "addr");
    lua_pushinteger(L, (lua_Integer)v[i].size);
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, v[i].buffer);
    lua_setfield(L, -2, "buffer");
    lua_pushinteger(L, v[i].stream);
    lua_setfield(L, -2, "stream");
    lua_pushboolean(L, v[i].pending);
    lua_setfield(L, -2, "pending");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_pushinteger(L, (lua_Integer)sp->lo);
  return 2;
}

/* A count limit at arg: none or nil for all, else an integer >= 0. */
static lua_Integer opt_max(lua_State *L, int arg) {
  if (lua_isnoneornil(L, arg)) return -1;
  lua_Integer max = luaL_checkinteger(L, arg);
  luaL_argcheck(L, max >= 0, arg, "count must be >= 0");
  return max;
}

/* poolsh.core.live([max]) -> the oldest live buffers (at most max),
 * lowest id first, and how many are live in all (the leak report). */
static int insp_live(lua_State *L) {
  lua_Integer max = opt_max(L, 1);
  lua_pushinteger(L, ps_ledger_push_live(L, ps_context(L), max));
  return 2;
}

/* poolsh.core.pending([max]) -> pending frees (at most max), and how
 * many are pending in all. */
static int insp_pending(lua_State *L) {
  lua_Integer max = opt_max(L, 1);
  lua_pushinteger(L, ps_ledger_push_pending(L, ps_context(L), max));
  return 2;
}

/* poolsh.core.recent(since) -> allocations numbered after since (at most
 * the last 64), and the number of the latest. */
static int insp_recent(lua_State *L) {
  ps_obs *c = ps_context(L)->obs;
  const uint64_t ring = sizeof c->recent / sizeof c->recent[0];
  lua_Integer since = luaL_optinteger(L, 1, 0);
  uint64_t from = since < 0 ? 0 : (uint64_t)since;
  if (c->nrecent > ring && from < c->nrecent - ring) from = c->nrecent - ring;
  lua_newtable(L);
  for (uint64_t i = from; i < c->nrecent; i++) {
    const struct ps_recent *r = &c->recent[i % ring];
    lua_createtable(L, 0, 6);
    lua_pushinteger(L, r->buffer);
    lua_setfield(L, -2, "buffer");
    lua_pushinteger(L, (lua_Integer)r->size);
    lua_setfield(L, -2, "size");
    if (r->pool >= 0) {
      lua_pushinteger(L, r->pool);
      lua_setfield(L, -2, "pool");
      lua_pushinteger(L, r->stream);
      lua_setfield(L, -2, "stream");
      lua_pushboolean(L, r->reused_from >= 0);
      lua_setfield(L, -2, "reused");
    }
    if (r->reused_from >= 0) {
      lua_pushinteger(L, r->reused_from);
      lua_setfield(L, -2, "reused_from");
      lua_pushstring(L, ps_rule_names[r->rule]);
      lua_setfield(L, -2, "rule");
    }
    lua_rawseti(L, -2, (lua_Integer)(i - from + 1));
  }
  lua_pushinteger(L, (lua_Integer)c->nrecent);
  return 2;
}

/* poolsh.core.sources([on]) -> whether allocation sites are remembered
 * (for the leak report) when not recording; sets it when given. */
static int insp_sources(lua_State *L) {
  ps_obs *o = ps_context(L)->obs;
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TBOOLEAN);
    o->sources = lua_toboolean(L, 1);
  }
  lua_pushboolean(L, o->sources);
  return 1;
}

/* poolsh.core.stream_state(stream) -> operations queued, known complete,
 * and whether it is idle now: the backend's stream_peek, which costs no
 * time and changes nothing (nil when the backend has none). Unlike
 * s:query(), it teaches the ledger nothing. */
static int insp_stream_state(lua_State *L) {
  ps_streamud *s = ps_checkstream(L, 1);
  ps_ctx *c = ps_context(L);
  const ps_seen_stream *ss = ps_seen_stream_of(s);
  int idle = 0;
  lua_pushinteger(L, (lua_Integer)ss->ops);
  lua_pushinteger(L, (lua_Integer)ss->done);
  if (c->be->stream_peek && c->be->stream_peek(c->b, s->h, &idle) == PS_OK) lua_pushboolean(L, idle);
  else lua_pushnil(L);
  return 3;
}

static const luaL_Reg insp_funcs[] = {
  {"objects", insp_objects}, {"blocks", insp_blocks}, {"live", insp_live},
  {"pending", insp_pending},
  {"recent", insp_recent}, {"sources", insp_sources}, {"stream_state", insp_stream_state},
  {NULL, NULL}
};

int poolsh_open_inspect(lua_State *L) {
  lua_settop(L, 1);
  ps_setfuncs(L, insp_funcs);
  return 0;
}
