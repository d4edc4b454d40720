/*
 * sites.c: allocation sites. While sources are remembered (or recording),
 * each allocation gets a site: the Lua frames that made it, innermost
 * first, up to a depth (poolsh.core.sources(on, depth)), or, in the REPL,
 * the statement's text (poolsh.core.statement). Sites are interned; each
 * counts its allocations, live bytes, their peak and all bytes allocated,
 * updated at alloc and free in O(1) (poolsh.core.sites()).
 *
 * The innermost frame is ps_where's (sources.c): the one the recorder and
 * the ledger already take, so depth 1 costs one table look-up more, and
 * two comparisons when the site is the last one found. Every frame names
 * its source, and a statement its text, in the layer's one table of
 * names (sources.c).
 */
#include <stdlib.h>
#include <string.h>

#include "observer.h"

#define SITE_DEPTH_MAX 16
#define STMT_LINE (-1)           /* a frame that is the REPL's statement */

/* A frame is (name, line): a name of sources.c's table, and its line,
 * or STMT_LINE for the REPL's statement whose text that name is. */
typedef struct ps_site {
  uint32_t hash;
  int32_t next;                  /* in its bucket's chain, -1: none */
  int n;                         /* frames */
  int32_t frames[2 * SITE_DEPTH_MAX];
  uint64_t count, live, peak, total;
} ps_site;

struct ps_sites {
  ps_site *v;
  size_t n, cap;
  int32_t *buckets;              /* heads of chains, -1: empty */
  size_t nbuckets;
  int32_t last_src, last_line, last_site;   /* the last depth-1 site found */
  int32_t stmt;                  /* the current statement's name, -1: none */
};

void ps_sites_free(ps_sites *s) {
  if (!s) return;
  free(s->v);
  free(s->buckets);
  free(s);
}

static ps_sites *sites_of(ps_ctx *c) {
  ps_obs *o = c->obs;
  if (o->sites) return o->sites;
  ps_sites *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->last_src = s->last_site = s->stmt = -1;
  return o->sites = s;
}

static uint32_t hash_frames(const int32_t *f, int n) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < 2 * n; i++) h = (h ^ (uint32_t)f[i]) * 16777619u;
  return h;
}

static int grow_buckets(ps_sites *s) {
  size_t nb = s->nbuckets ? s->nbuckets * 2 : 64;
  int32_t *b = malloc(nb * sizeof *b);
  if (!b) return 0;
  for (size_t i = 0; i < nb; i++) b[i] = -1;
  for (size_t i = 0; i < s->n; i++) {
    size_t k = s->v[i].hash & (nb - 1);
    s->v[i].next = b[k];
    b[k] = (int32_t)i;
  }
  free(s->buckets);
  s->buckets = b, s->nbuckets = nb;
  return 1;
}

/* The site of frames f[0..n), made when new; -1 when out of memory. */
static int32_t intern(ps_sites *s, const int32_t *f, int n) {
  uint32_t h = hash_frames(f, n);
  if (s->nbuckets)
    for (int32_t i = s->buckets[h & (s->nbuckets - 1)]; i >= 0; i = s->v[i].next)
      if (s->v[i].hash == h && s->v[i].n == n && memcmp(s->v[i].frames, f, 2 * n * sizeof *f) == 0)
        return i;
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    ps_site *v = realloc(s->v, cap * sizeof *v);
    if (!v) return -1;
    s->v = v, s->cap = cap;
  }
  if ((s->n + 1) * 4 > s->nbuckets * 3 && !grow_buckets(s)) return -1;
  ps_site *x = &s->v[s->n];
  memset(x, 0, sizeof *x);
  x->hash = h, x->n = n;
  memcpy(x->frames, f, 2 * n * sizeof *f);
  size_t k = h & (s->nbuckets - 1);
  x->next = s->buckets[k];
  s->buckets[k] = (int32_t)s->n;
  return (int32_t)s->n++;
}

/* Whether the frame in ar is the REPL's statement: its main chunk. */
static int is_statement(const lua_Debug *ar) {
  return strcmp(ar->what, "main") == 0 && strcmp(ar->source, "=stdin") == 0;
}

/* Counts an allocation of size at site. */
static int32_t count(ps_sites *s, int32_t site, uint64_t size) {
  if (site < 0) return site;
  ps_site *x = &s->v[site];
  x->count++;
  x->total += size;
  if ((x->live += size) > x->peak) x->peak = x->live;
  return site;
}

/* Kept out of line: its lua_Debug would enlarge the fast path's frame. */
static int32_t capture_deep(lua_State *L, ps_ctx *c, ps_sites *s, int32_t src, int32_t line);

/* The slow path of ps_site_alloc: a depth above 1, a statement, or a
 * site other than the last one. */
static int32_t __attribute__((noinline)) site_slow(lua_State *L, ps_ctx *c, int32_t src,
                                                   int32_t line, uint64_t size) {
  ps_sites *s = sites_of(c);
  if (!s || src < 0) return -1;
  if (c->obs->site_depth > 1 || s->stmt >= 0) return count(s, capture_deep(L, c, s, src, line), size);
  int32_t f[2] = { src, line };
  s->last_site = intern(s, f, 1);
  s->last_src = src, s->last_line = line;
  return count(s, s->last_site, size);
}

/* The site of the running allocation of size bytes, counted there; -1
 * when unknown. (src, line) is its innermost frame as ps_where gives it.
 * At depth 1 with no statement, the last site found costs two
 * comparisons. */
int32_t ps_site_alloc(lua_State *L, ps_ctx *c, uint64_t size, int32_t src, int32_t line) {
  ps_sites *s = c->obs->sites;
  if (s && src == s->last_src && line == s->last_line && s->last_site >= 0 &&
      c->obs->site_depth == 1 && s->stmt < 0)
    return count(s, s->last_site, size);
  return site_slow(L, c, src, line, size);
}

/* The site of frames up to the depth asked, the REPL's statement in
 * place of its chunk; the innermost frame is ps_where's (src, line). */
static int32_t capture_deep(lua_State *L, ps_ctx *c, ps_sites *s, int32_t src, int32_t line) {
  int depth = c->obs->site_depth;
  int32_t f[2 * SITE_DEPTH_MAX];
  int n = 0;
  lua_Debug ar;
  for (int level = 1; n < depth && lua_getstack(L, level, &ar); level++) {
    lua_getinfo(L, "Sl", &ar);
    if (ar.currentline <= 0) continue;            /* a C function */
    if (s->stmt >= 0 && is_statement(&ar)) {
      f[2 * n] = s->stmt, f[2 * n + 1] = STMT_LINE;
      n++;
      break;
    }
    int32_t name = n ? ps_name_index(c, ar.short_src, 0) : src;
    if (name < 0) return -1;
    f[2 * n] = name;
    f[2 * n + 1] = n ? ar.currentline : line;
    n++;
  }
  return n ? intern(s, f, n) : -1;
}

void ps_site_free(ps_ctx *c, int32_t site, uint64_t size) {
  if (site < 0) return;
  ps_site *x = &c->obs->sites->v[site];
  x->live -= size;                     /* it counted size at the alloc */
}

/* Pushes site's text: "a.lua:10 < b.lua:3", innermost first, or the
 * statement's text. */
void ps_push_site(lua_State *L, ps_ctx *c, int32_t site) {
  const ps_sites *s = c->obs->sites;
  if (!s || site < 0 || (size_t)site >= s->n) {
    lua_pushliteral(L, "?");
    return;
  }
  const ps_site *x = &s->v[site];
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; i < x->n; i++) {
    int32_t src = x->frames[2 * i], line = x->frames[2 * i + 1];
    if (i) luaL_addstring(&b, " < ");
    luaL_addstring(&b, ps_name_of(c, src));
    if (line == STMT_LINE) continue;
    lua_pushfstring(L, ":%d", (int)line);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
}

/* ---- the Lua side ------------------------------------------------------------ */

/* poolsh.core.sources([on [, depth]]) -> whether allocation sites are
 * remembered when not recording, and how many Lua frames a site holds;
 * sets them when given (depth 1 to 16). */
static int sites_sources(lua_State *L) {
  ps_obs *o = ps_context(L)->obs;
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TBOOLEAN);
  int depth = o->site_depth;
  if (!lua_isnoneornil(L, 2)) {
    lua_Integer d = luaL_checkinteger(L, 2);
    luaL_argcheck(L, d >= 1 && d <= SITE_DEPTH_MAX, 2, "depth must be from 1 to 16");
    depth = (int)d;
  }
  if (!lua_isnoneornil(L, 1)) o->sources = lua_toboolean(L, 1);
  o->site_depth = depth;
  lua_pushboolean(L, o->sources);
  lua_pushinteger(L, o->site_depth);
  return 2;
}

/* poolsh.core.statement([text]): allocations made from now on by the
 * REPL's statement (its chunk "=stdin") have text as their site; nil
 * ends it. */
static int sites_statement(lua_State *L) {
  ps_ctx *c = ps_context(L);
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TSTRING);
  ps_sites *s = sites_of(c);
  if (!s) return luaL_error(L, "poolsh.core.statement: out of memory");
  if (lua_isnoneornil(L, 1)) {
    s->stmt = -1;
    return 0;
  }
  const char *text = lua_tostring(L, 1);
  if (s->stmt >= 0 && strcmp(ps_name_of(c, s->stmt), text) == 0) return 0;
  int32_t i = ps_name_index(c, text, 1);
  if (i < 0) return luaL_error(L, "poolsh.core.statement: out of memory");
  s->stmt = i;
  return 0;
}

static void set_u64(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* poolsh.core.sites() -> array of {site, count, live_bytes, peak_bytes,
 * total_bytes}, in the order the sites were first seen. */
static int sites_list(lua_State *L) {
  ps_ctx *c = ps_context(L);
  const ps_sites *s = c->obs->sites;
  size_t n = s ? s->n : 0;
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    s = c->obs->sites;                 /* pushing strings may run finalizers */
    ps_site x = s->v[i];
    lua_createtable(L, 0, 5);
    ps_push_site(L, c, (int32_t)i);
    lua_setfield(L, -2, "site");
    set_u64(L, "count", x.count);
    set_u64(L, "live_bytes", x.live);
    set_u64(L, "peak_bytes", x.peak);
    set_u64(L, "total_bytes", x.total);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
    if (!c->obs->sites || c->obs->sites->n < n) break;   /* reset by a finalizer */
  }
  return 1;
}

static const luaL_Reg sites_funcs[] = {
  {"sources", sites_sources}, {NULL, NULL}
};

static const luaL_Reg sites_views[] = {
  {"statement", sites_statement}, {"sites", sites_list}, {NULL, NULL}
};

/* Sets the functions into the module (arg 1), the views into the table
 * of views (arg 2). */
int poolsh_open_sites(lua_State *L) {
  lua_settop(L, 2);
  ps_setfuncs(L, sites_views);
  lua_pop(L, 1);
  ps_setfuncs(L, sites_funcs);
  return 0;
}
