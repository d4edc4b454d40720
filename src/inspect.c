/*
 * inspect.c: what the REPL's live view, poolsh.show() and poolsh.map()
 * read: the live pools and streams, a pool's blocks, the live buffers
 * (the leak report) and the allocations since the last look. A binding:
 * it checks the arguments, asks the observation layer (views.h) and has
 * Lua put its codes in words (render.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "render.h"
#include "views.h"

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

/* A count limit at arg: none or nil for all, else an integer >= 0. */
static lua_Integer opt_max(lua_State *L, int arg) {
  if (lua_isnoneornil(L, arg)) return -1;
  lua_Integer max = luaL_checkinteger(L, arg);
  luaL_argcheck(L, max >= 0, arg, "count must be >= 0");
  return max;
}

/* poolsh.core.blocks(pool [, all [, max]]) -> array of {addr, size,
 * buffer, stream, pending} sorted by address (with all, the done extents
 * too, marked done; at most max, the lowest), the pool's lowest address
 * seen (its base), and how many blocks there are in all. */
static int insp_blocks(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  int all = lua_toboolean(L, 2);
  ps_view_blocks(L, ps_context(L), p, all, opt_max(L, 3));
  return 3;
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
 * the last 64), and the number of the latest. Each reads as a Buffer
 * does: its why_fresh in words (poolsh.render.why_fresh); an imported
 * one's source as numbers (source_pid, source_buffer), which the live
 * view words. */
static int insp_recent(lua_State *L) {
  lua_Integer since = luaL_optinteger(L, 1, 0);
  lua_settop(L, 0);
  ps_view_recent(L, ps_context(L), since);           /* [allocs, latest] */
  for (lua_Integer i = 1, n = luaL_len(L, 1); i <= n; i++) {
    lua_rawgeti(L, 1, i);                            /* [allocs, latest, a] */
    if (lua_getfield(L, -1, "why_fresh") == LUA_TTABLE) {
      ps_render(L, "poolsh.render.why_fresh", 1);
      lua_setfield(L, -2, "why_fresh");
    } else {
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return 2;
}

/* poolsh.core.counts() -> {pools = {[id] = counts}, total = counts}:
 * each live pool's allocations, reuses by rule, fresh allocations,
 * growths, releases by cause, out-of-memory errors, retries and peak
 * live bytes; total adds destroyed pools' (its peak_live: the peak of
 * the sum). */
static int insp_counts(lua_State *L) {
  ps_view_counts(L, ps_context(L));
  return 1;
}

/* poolsh.core.releases(since) -> the releases numbered after since (at
 * most the last 64): {pool, size, reserved, cause_op, cause_id,
 * threshold}, and the number of the latest. */
static int insp_releases(lua_State *L) {
  lua_Integer since = luaL_optinteger(L, 1, 0);
  ps_view_releases(L, ps_context(L), since);
  return 2;
}

/* poolsh.core.peak_push(): a new peak scope begins, its peaks the live
 * bytes now. */
static int insp_peak_push(lua_State *L) {
  if (!ps_view_peak_push(ps_context(L))) return luaL_error(L, "poolsh.core.peak_push: out of memory");
  return 0;
}

/* poolsh.core.peak_pop() -> {pools = {[id] = peak}, total = peak}: the
 * peaks of the innermost scope, which ends (its enclosing scope's peaks
 * take them in). Raises when no scope is open. */
static int insp_peak_pop(lua_State *L) {
  if (!ps_view_peak_pop(L, ps_context(L)))
    return luaL_error(L, "poolsh.core.peak_pop: no peak scope (peak_push first)");
  return 1;
}

/* poolsh.core.stream_state(stream) -> operations queued, known complete,
 * and whether it is idle now: the backend's stream_peek, which costs no
 * time and changes nothing (nil when the backend has none). Unlike
 * s:query(), it teaches the ledger nothing. */
static int insp_stream_state(lua_State *L) {
  ps_streamud *s = ps_checkstream(L, 1);
  ps_ctx *c = ps_context(L);
  uint64_t ops, done;
  int idle = 0;
  ps_view_stream_position(s, &ops, &done);
  lua_pushinteger(L, (lua_Integer)ops);
  lua_pushinteger(L, (lua_Integer)done);
  if (c->be->stream_peek && c->be->stream_peek(c->b, s->h, &idle) == PS_OK) lua_pushboolean(L, idle);
  else lua_pushnil(L);
  return 3;
}

static void set_int(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

static const char *const truth_kinds[] = { "live", "fresh", "pending", "done", "retired" };

/* Appends extent t to the array on top (_sim_truth). */
static void truth_row(void *ud, const ps_truth *t) {
  lua_State *L = ud;
  lua_createtable(L, 0, 6);
  set_int(L, "addr", t->addr);
  set_int(L, "size", t->size);
  if (t->kind == PS_TRUTH_LIVE) set_int(L, "req", t->req);
  lua_pushstring(L, t->kind >= 0 && t->kind <= PS_TRUTH_RETIRED ? truth_kinds[t->kind] : "?");
  lua_setfield(L, -2, "state");
  if (t->kind >= PS_TRUTH_PENDING) {
    lua_pushinteger(L, t->stream);
    lua_setfield(L, -2, "stream");
    set_int(L, "seq", t->seq);
  }
  lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
}

/* poolsh.core._sim_truth(pool) -> the backend's own picture of the
 * pool's address space, for tests (the ledger's oracle, docs/fuzzing.md):
 * an array of {addr, size, state, req (live), stream and seq (freed)} in
 * address order, state one of live, fresh, pending, done, retired. It
 * changes nothing. Raises on a backend that cannot say (cuda). */
static int insp_sim_truth(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  ps_ctx *c = ps_context(L);
  if (!c->be->pool_truth)
    return luaL_error(L, "poolsh.core._sim_truth: the %s backend cannot report its truth (sim only)",
                      c->be->name);
  if (!p->live || !p->h) return luaL_argerror(L, 1, "a live pool expected");
  lua_newtable(L);
  int st = c->be->pool_truth(c->b, p->h, truth_row, L);
  if (st != PS_OK) return luaL_error(L, "poolsh.core._sim_truth: p%d: %s", p->id,
                                     c->be->error_name(st));
  return 1;
}

static const luaL_Reg insp_funcs[] = {
  {"objects", insp_objects}, {"blocks", insp_blocks}, {"live", insp_live},
  {"pending", insp_pending},
  {"recent", insp_recent}, {"stream_state", insp_stream_state}, {"counts", insp_counts},
  {"releases", insp_releases}, {"peak_push", insp_peak_push}, {"peak_pop", insp_peak_pop},
  {"_sim_truth", insp_sim_truth}, {"collected", ps_obs_collected}, {NULL, NULL}
};

/* Sets the views into the table of views (arg 2). */
int poolsh_open_inspect(lua_State *L) {
  lua_settop(L, 2);
  ps_setfuncs(L, insp_funcs);
  return 0;
}
