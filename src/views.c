/*
 * views.c: the observation layer's state as the views read it (views.h):
 * a pool's blocks, the allocations since the last look, the counts, the
 * releases and the peak scopes, as codes, ids and numbers. No words: the
 * binding (inspect.c) has Lua render them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "observer.h"
#include "views.h"

static void set_int(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* (bytes) -> a userdata of that size: called protected. */
static int new_block(lua_State *L) {
  lua_newuserdatauv(L, (size_t)lua_tointeger(L, 1), 0);
  return 1;
}

/* The ledger's spans are moved into a userdata the collector owns before
 * the rows are built (the userdata made in a protected call, so that
 * running out of memory there frees them too): an error leaks nothing. */
void ps_view_blocks(lua_State *L, ps_ctx *c, const ps_poolud *p, int all, lua_Integer max) {
  size_t n = 0;
  const ps_seen_pool *sp = ps_seen_pool_of(p);
  ps_span *m = ps_ledger_spans(c, sp, &n, all);
  ps_span *v = NULL;
  if (n) {
    lua_pushcfunction(L, new_block);
    lua_pushinteger(L, (lua_Integer)(n * sizeof *v));
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
      free(m);
      lua_error(L);
    }
    v = (ps_span *)lua_touserdata(L, -1);
    memcpy(v, m, n * sizeof *v);
  }
  free(m);
  size_t shown = max >= 0 && (size_t)max < n ? (size_t)max : n;
  lua_createtable(L, (int)shown, 0);
  for (size_t i = 0; i < shown; i++) {
    lua_createtable(L, 0, 5);
    set_int(L, "addr", v[i].addr);
    set_int(L, "size", v[i].size);
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
  if (n) lua_remove(L, -2);                            /* the copy */
  lua_pushinteger(L, (lua_Integer)sp->lo);
  lua_pushinteger(L, (lua_Integer)n);
}

/* The ring of the last allocations, oldest asked for first; a reused
 * one's sources and a fresh one's why come from the ledger's rings. */
void ps_view_recent(lua_State *L, ps_ctx *c, lua_Integer since) {
  ps_obs *o = c->obs;
  const uint64_t ring = sizeof o->recent / sizeof o->recent[0];
  uint64_t from = since < 0 ? 0 : (uint64_t)since;
  if (o->nrecent > ring && from < o->nrecent - ring) from = o->nrecent - ring;
  lua_newtable(L);
  for (uint64_t i = from; i < o->nrecent; i++) {
    const struct ps_recent *r = &o->recent[i % ring];
    lua_createtable(L, 0, 6);
    lua_pushinteger(L, r->buffer);
    lua_setfield(L, -2, "buffer");
    set_int(L, "size", r->size);
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
      ps_push_sources(L, c, r->buffer, r->why_slot, r->reused_from, r->rule);
      lua_setfield(L, -2, "sources");
    }
    if (r->src_pid) {
      lua_pushinteger(L, r->src_pid);
      lua_setfield(L, -2, "source_pid");
      lua_pushinteger(L, r->src_buffer);
      lua_setfield(L, -2, "source_buffer");
    }
    if (r->why) {
      ps_push_why(L, c, r->why, r->why_slot, r->buffer, r->pool, r->stream);
      lua_setfield(L, -2, "why_fresh");
    }
    lua_rawseti(L, -2, (lua_Integer)(i - from + 1));
  }
  lua_pushinteger(L, (lua_Integer)o->nrecent);
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

/* Each live pool's allocations, reuses by rule, fresh allocations,
 * growths, releases by cause, out-of-memory errors, retries and peak live
 * bytes; total adds destroyed pools' (its peak_live: the peak of the sum). */
void ps_view_counts(lua_State *L, ps_ctx *c) {
  ps_obs *o = c->obs;
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
}

/* Each release: {pool, size, reserved, cause_op, cause_id, threshold}. */
void ps_view_releases(lua_State *L, ps_ctx *c, lua_Integer since) {
  ps_obs *o = c->obs;
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
}

/* The new scope's peaks are the live bytes now; the enclosing scope's are
 * saved. */
int ps_view_peak_push(ps_ctx *c) {
  ps_obs *o = c->obs;
  size_t np = 0;
  for (ps_seen_pool *p = o->pools; p; p = p->next) np++;
  if (o->nscopes == o->capscopes) {
    size_t cap = o->capscopes ? o->capscopes * 2 : 4;
    struct ps_scope *v = realloc(o->scopes, cap * sizeof *v);
    if (!v) return 0;
    o->scopes = v, o->capscopes = cap;
  }
  struct ps_scope *sc = &o->scopes[o->nscopes];
  sc->pools = np ? malloc(np * sizeof *sc->pools) : NULL;
  if (np && !sc->pools) return 0;
  sc->n = 0;
  sc->total = o->scope_total_peak;
  o->scope_total_peak = o->live_total;
  for (ps_seen_pool *p = o->pools; p; p = p->next) {
    sc->pools[sc->n].pool = p->id;
    sc->pools[sc->n++].peak = p->scope_peak;
    p->scope_peak = p->live_bytes;
  }
  o->nscopes++;
  return 1;
}

/* The enclosing scope's peaks take the ending scope's in. */
int ps_view_peak_pop(lua_State *L, ps_ctx *c) {
  ps_obs *o = c->obs;
  if (o->nscopes == 0) return 0;
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

/* Read from the stream's record, which lives in its userdata. */
void ps_view_stream_position(const ps_streamud *s, uint64_t *ops, uint64_t *done) {
  const ps_seen_stream *ss = ps_seen_stream_of(s);
  *ops = ss->ops, *done = ss->done;
}
