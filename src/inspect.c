/*
 * inspect.c: what the REPL's live view, poolsh.show() and poolsh.map()
 * read: the live pools and streams, a pool's blocks, the live buffers
 * (the leak report) and the allocations since the last look.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
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

/* poolsh.core.blocks(pool [, all]) -> array of {addr, size, buffer,
 * stream, pending} sorted by address (with all, the done extents too,
 * marked done), and the pool's lowest address seen (its base). */
static int insp_blocks(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  int all = lua_toboolean(L, 2);
  ps_ctx *c = ps_context(L);
  size_t n = 0;
  const ps_seen_pool *sp = ps_seen_pool_of(p);
  ps_span *m = ps_ledger_spans(c, sp, &n, all);
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
    lua_pushboolean(L, v[i].pending == 1);
    lua_setfield(L, -2, "pending");
    if (v[i].pending == 2) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "done");
    }
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
      ps_push_sources(L, ps_context(L), r->buffer, r->why_slot, r->reused_from, r->rule);
      lua_setfield(L, -2, "sources");
    }
    if (r->src_pid) {
      lua_pushfstring(L, "pid %d's b%d", (int)r->src_pid, (int)r->src_buffer);
      lua_setfield(L, -2, "source");
    }
    if (r->why) {
      ps_push_why(L, ps_context(L), r->why, r->why_slot, r->buffer, r->pool, r->stream);
      lua_setfield(L, -2, "why_fresh");
    }
    lua_rawseti(L, -2, (lua_Integer)(i - from + 1));
  }
  lua_pushinteger(L, (lua_Integer)c->nrecent);
  return 2;
}

static void set_int(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* Pushes counts n as counts() shows them, with peak_live. */
static void push_counts(lua_State *L, const ps_counts *n, uint64_t peak) {
  uint64_t allocs = n->fresh;
  for (int i = 1; i < PS_RULE_UNKNOWN; i++) allocs += n->reuses[i];
  lua_createtable(L, 0, 8);
  set_int(L, "allocs", allocs);
  set_int(L, "fresh", n->fresh);
  set_int(L, "growths", n->growths);
  set_int(L, "ooms", n->ooms);
  set_int(L, "retries", n->retries);
  set_int(L, "peak_live", peak);
  lua_createtable(L, 0, PS_RULE_UNKNOWN);
  for (int i = 1; i < PS_RULE_UNKNOWN; i++) set_int(L, ps_rule_names[i], n->reuses[i]);
  lua_setfield(L, -2, "reuses");
  lua_newtable(L);
  for (int i = 0; i < PS_OP_COUNT; i++)
    if (n->releases[i]) set_int(L, ps_op_names[i], n->releases[i]);
  lua_setfield(L, -2, "releases");
}

/* The peak of pool p's live bytes (total: of the sum, p NULL) since
 * poolsh started: the innermost scope's, or a higher one saved by
 * peak_push. */
static uint64_t peak_of(const ps_obs *o, const ps_seen_pool *p) {
  uint64_t peak = p ? p->scope_peak : o->scope_total_peak;
  for (size_t i = 0; i < o->nscopes; i++) {
    const struct ps_scope *sc = &o->scopes[i];
    if (!p && sc->total > peak) peak = sc->total;
    for (size_t k = 0; p && k < sc->n; k++)
      if (sc->pools[k].pool == p->id && sc->pools[k].peak > peak) peak = sc->pools[k].peak;
  }
  return peak;
}

/* poolsh.core.counts() -> {pools = {[id] = counts}, total = counts}:
 * each live pool's allocations, reuses by rule, fresh allocations,
 * growths, releases by cause, out-of-memory errors, retries and peak
 * live bytes; total adds destroyed pools' (its peak_live: the peak of
 * the sum). */
static int insp_counts(lua_State *L) {
  ps_obs *o = ps_context(L)->obs;
  ps_counts all = o->gone;
  lua_createtable(L, 0, 2);
  lua_newtable(L);
  for (ps_seen_pool *p = o->pools; p; p = p->next) {
    push_counts(L, &p->n, peak_of(o, p));
    lua_rawseti(L, -2, p->id);
    all.fresh += p->n.fresh, all.growths += p->n.growths;
    all.ooms += p->n.ooms, all.retries += p->n.retries;
    for (int i = 0; i < PS_RULE_UNKNOWN; i++) all.reuses[i] += p->n.reuses[i];
    for (int i = 0; i < PS_OP_COUNT; i++) all.releases[i] += p->n.releases[i];
  }
  lua_setfield(L, -2, "pools");
  push_counts(L, &all, peak_of(o, NULL));
  lua_setfield(L, -2, "total");
  return 1;
}

/* poolsh.core.releases(since) -> the releases numbered after since (at
 * most the last 64): {pool, size, reserved, cause_op, cause_id,
 * threshold}, and the number of the latest. */
static int insp_releases(lua_State *L) {
  ps_obs *o = ps_context(L)->obs;
  lua_Integer since = luaL_optinteger(L, 1, 0);
  uint64_t from = since < 0 ? 0 : (uint64_t)since;
  if (o->nreleases > PS_RING && from < o->nreleases - PS_RING) from = o->nreleases - PS_RING;
  lua_newtable(L);
  for (uint64_t i = from; i < o->nreleases; i++) {
    const struct ps_release *r = &o->releases[i % PS_RING];
    lua_createtable(L, 0, 6);
    set_int(L, "pool", (uint64_t)r->pool);
    set_int(L, "size", r->size);
    set_int(L, "reserved", r->reserved);
    lua_pushstring(L, ps_op_names[r->cause_op]);
    lua_setfield(L, -2, "cause_op");
    if (r->cause_id >= 0) set_int(L, "cause_id", (uint64_t)r->cause_id);
    if (r->threshold == UINT64_MAX) lua_pushnumber(L, (lua_Number)HUGE_VAL);
    else lua_pushinteger(L, (lua_Integer)r->threshold);
    lua_setfield(L, -2, "threshold");
    lua_rawseti(L, -2, (lua_Integer)(i - from + 1));
  }
  lua_pushinteger(L, (lua_Integer)o->nreleases);
  return 2;
}

/* poolsh.core.peak_push(): a new peak scope begins, its peaks the live
 * bytes now. */
static int insp_peak_push(lua_State *L) {
  ps_obs *o = ps_context(L)->obs;
  size_t np = 0;
  for (ps_seen_pool *p = o->pools; p; p = p->next) np++;
  if (o->nscopes == o->capscopes) {
    size_t cap = o->capscopes ? o->capscopes * 2 : 4;
    struct ps_scope *v = realloc(o->scopes, cap * sizeof *v);
    if (!v) return luaL_error(L, "poolsh.core.peak_push: out of memory");
    o->scopes = v, o->capscopes = cap;
  }
  struct ps_scope *sc = &o->scopes[o->nscopes];
  sc->pools = np ? malloc(np * sizeof *sc->pools) : NULL;
  if (np && !sc->pools) return luaL_error(L, "poolsh.core.peak_push: out of memory");
  sc->n = 0;
  sc->total = o->scope_total_peak;
  o->scope_total_peak = o->live_total;
  for (ps_seen_pool *p = o->pools; p; p = p->next) {
    sc->pools[sc->n].pool = p->id;
    sc->pools[sc->n++].peak = p->scope_peak;
    p->scope_peak = p->live_bytes;
  }
  o->nscopes++;
  return 0;
}

/* poolsh.core.peak_pop() -> {pools = {[id] = peak}, total = peak}: the
 * peaks of the innermost scope, which ends (its enclosing scope's peaks
 * take them in). Raises when no scope is open. */
static int insp_peak_pop(lua_State *L) {
  ps_obs *o = ps_context(L)->obs;
  if (o->nscopes == 0) return luaL_error(L, "poolsh.core.peak_pop: no peak scope (peak_push first)");
  lua_createtable(L, 0, 2);
  lua_newtable(L);
  for (ps_seen_pool *p = o->pools; p; p = p->next) {
    lua_pushinteger(L, (lua_Integer)p->scope_peak);
    lua_rawseti(L, -2, p->id);
  }
  lua_setfield(L, -2, "pools");
  set_int(L, "total", o->scope_total_peak);
  struct ps_scope *sc = &o->scopes[--o->nscopes];
  if (sc->total > o->scope_total_peak) o->scope_total_peak = sc->total;
  for (size_t k = 0; k < sc->n; k++)
    for (ps_seen_pool *p = o->pools; p; p = p->next)
      if (p->id == sc->pools[k].pool && sc->pools[k].peak > p->scope_peak)
        p->scope_peak = sc->pools[k].peak;
  free(sc->pools);
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

int poolsh_open_inspect(lua_State *L) {
  lua_settop(L, 1);
  ps_setfuncs(L, insp_funcs);
  return 0;
}
