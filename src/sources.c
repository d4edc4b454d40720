/*
 * sources.c: the observation layer's one table of source names. The
 * recorder's events, the ledger's allocations and the sites' frames all
 * name a Lua source by its index here (ps_where gives the running one);
 * the REPL's statements are added here too, each as a name of its own.
 * Under trace.c, sites.c and ledger.c: it calls none of them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "observer.h"

#define WHERE_SLOTS 256        /* the cache of ps_where, a power of 2 */

/* A Lua instruction's place: its source's index and line (line 0: a
 * function without line information, which ps_where passes over). */
typedef struct where_slot {
  const void *pc;              /* the frame's saved instruction pointer, NULL: empty */
  int32_t src, line;
} where_slot;

struct ps_names {
  char **v;
  size_t n, cap;
  int32_t last;                /* the last source found by ps_where: compared first */
  uint64_t epoch;              /* the collector's epoch the cache holds (0: none) */
  where_slot where[WHERE_SLOTS];
};

void ps_names_free(ps_names *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n; i++) free(t->v[i]);
  free(t->v);
  free(t);
}

/* The context's table, made on first use; NULL when out of memory. */
static ps_names *names_of(ps_ctx *c) {
  ps_obs *o = c->obs;
  if (!o->names && (o->names = calloc(1, sizeof *o->names)) != NULL) o->names->last = -1;
  return o->names;
}

/* The index of a copy of name: the one already there unless fresh is
 * set, else a new one. -1 when out of memory. */
int32_t ps_name_index(ps_ctx *c, const char *name, int fresh) {
  ps_names *t = names_of(c);
  if (!t) return -1;
  size_t i = 0;
  if (!fresh)
    while (i < t->n && strcmp(t->v[i], name) != 0) i++;
  else i = t->n;
  if (i < t->n) return (int32_t)i;
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 16;
    char **v = realloc(t->v, cap * sizeof *v);
    if (!v) return -1;
    t->v = v, t->cap = cap;
  }
  char *copy = strdup(name);
  if (!copy) return -1;
  t->v[t->n] = copy;
  return (int32_t)t->n++;
}

/* Name i, "?" when there is none. */
const char *ps_name_of(ps_ctx *c, int32_t i) {
  const ps_names *t = c->obs->names;
  return t && i >= 0 && (size_t)i < t->n ? t->v[i] : "?";
}

/* ---- the cache of ps_where ------------------------------------------------
 *
 * lua_getinfo(L, "Sl") finds a frame's source and line by walking the
 * function's line table: most of what knowing an allocation's site costs.
 * Both are fixed by the instruction the frame stopped at, so they are
 * cached by that instruction's address: the saved pc of Lua's CallInfo,
 * which lua_getstack gives as ar.i_ci. Lua ships its structs only in its
 * private headers: the *54 structs below copy the parts read here from
 * Lua 5.4's lstate.h, lobject.h and ltable.h, and a probe at open
 * (where_setup) checks the copies against lua_getinfo and the API, or
 * the cache stays off (ps_where then works as without it).
 *
 * An address names one instruction only while its function prototype
 * lives, and the collector frees prototypes only after the atomic phase
 * of a cycle. A sentinel userdata, alone in a weak-valued table held by
 * the registry (obs->where_ref), is cleared from it at each such phase;
 * its finalizer puts a new sentinel there, its epoch one more. The cache
 * is used only while a sentinel is there, and emptied when its epoch has
 * changed: no prototype freed since an entry was made can answer. (Code
 * that reaches the sentinel through debug.getregistry and keeps it stops
 * the epochs, and the cache may then answer for a freed prototype:
 * docs/api.md, poolsh.sources.) */

typedef struct CallInfo54 {    /* lstate.h's CallInfo */
  void *func, *top;
  void *previous, *next;
  union {
    struct { const void *savedpc; volatile int trap; int nextraargs; } l;
    struct { void *k; ptrdiff_t old_errfunc; intptr_t ctx; } c;
  } u;
  union { int funcidx, nyield, nres; struct { unsigned short ftransfer, ntransfer; } ti; } u2;
  short nresults;
  unsigned short callstatus;
} CallInfo54;
#define CIST_C_54 (1 << 1)     /* lstate.h: the frame is a C function's */

typedef struct TValue54 {      /* lobject.h's TValue: its Value is a union of a
                                  * pointer, a lua_Integer and a lua_Number, so
                                  * tt sits after 8 bytes on 32-bit builds too */
  union { void *gc; long long i; double n; } v;
  unsigned char tt;
} TValue54;
#define TT_UDATA54 (7 | (1 << 6))   /* a full userdata, collectable */

typedef struct Table54 {       /* lobject.h's Table, up to its array part */
  void *next;
  unsigned char tt, marked, flags, lsizenode;
  unsigned int alimit;
  const TValue54 *array;
} Table54;

typedef struct Udata054 {      /* lobject.h's Udata0: a userdata without user values */
  void *next;
  unsigned char tt, marked;
  unsigned short nuvalue;
  size_t len;
  void *metatable;
  union { double n; void *s; long long i; long l; } bindata;
} Udata054;

static const CallInfo54 *ci_of(const lua_Debug *ar) {
  return (const CallInfo54 *)(const void *)ar->i_ci;
}

static size_t where_hash(const void *pc) {
  uintptr_t x = (uintptr_t)pc >> 2;
  return (size_t)(x ^ (x >> 9)) & (WHERE_SLOTS - 1);
}

/* The sentinel's finalizer (upvalue 1: the weak table): the next
 * sentinel, its epoch one more, in the weak table. Allocation failing
 * leaves the table empty: the cache stays off. */
static int where_sentinel_gc(lua_State *L) {
  const uint64_t *old = (const uint64_t *)lua_touserdata(L, 1);
  if (!old || !lua_getmetatable(L, 1)) return 0;                  /* [old, mt] */
  uint64_t *e = (uint64_t *)lua_newuserdatauv(L, sizeof *e, 0);    /* [old, mt, new] */
  *e = *old + 1;
  lua_pushvalue(L, 2);
  lua_setmetatable(L, -2);
  lua_rawseti(L, lua_upvalueindex(1), 1);
  return 0;
}

/* What where_probe saw: the frames' saved pcs and whether they are C. */
typedef struct where_seen {
  const void *pc[2];
  int n, ok;
} where_seen;

/* Called twice by the probe chunk: checks that the copied CallInfo tells
 * a C frame (this one) from a Lua frame (the chunk's) as lua_getinfo
 * does, and keeps the chunk's saved pc. */
static int where_probe(lua_State *L) {
  where_seen *w = (where_seen *)lua_touserdata(L, 1);
  lua_Debug ar0, ar1;
  if (!w || w->n >= 2 || !lua_getstack(L, 0, &ar0) || !lua_getstack(L, 1, &ar1)) return 0;
  lua_getinfo(L, "Sl", &ar1);
  int ok = (ci_of(&ar0)->callstatus & CIST_C_54) && !(ci_of(&ar1)->callstatus & CIST_C_54) &&
           ar1.currentline == 2 + w->n && ci_of(&ar1)->u.l.savedpc != NULL;
  if (!ok) w->ok = 0;
  w->pc[w->n++] = ci_of(&ar1)->u.l.savedpc;
  return 0;
}

/* Run protected: the probe, then the weak table and its first sentinel
 * (arg 1: the where_seen, arg 2: the ps_obs). */
static int where_setup(lua_State *L) {
  where_seen *w = (where_seen *)lua_touserdata(L, 1);
  ps_obs *o = (ps_obs *)lua_touserdata(L, 2);
  w->ok = 1;
  if (luaL_loadstring(L, "local f, w = ...\nf(w)\nf(w)") != LUA_OK) return 0;
  lua_pushcfunction(L, where_probe);
  lua_pushlightuserdata(L, w);
  lua_call(L, 2, 0);
  /* Each call is the same three instructions (two moves and the call). */
  if (!w->ok || w->n != 2 ||
      (const char *)w->pc[1] - (const char *)w->pc[0] != 3 * (ptrdiff_t)sizeof(uint32_t))
    return 0;
  lua_createtable(L, 1, 0);                                   /* [w, o, weak] */
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_createtable(L, 0, 1);                                   /* [w, o, weak, mt] */
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, where_sentinel_gc, 1);
  lua_setfield(L, -2, "__gc");
  uint64_t *e = (uint64_t *)lua_newuserdatauv(L, sizeof *e, 0);   /* [w, o, weak, mt, s] */
  *e = 1;
  lua_insert(L, -2);
  lua_setmetatable(L, -2);
  lua_rawseti(L, -2, 1);                                      /* [w, o, weak] */
  const Table54 *t = (const Table54 *)lua_topointer(L, -1);
  if (t->alimit != 1 || t->array[0].tt != TT_UDATA54 ||
      (const char *)t->array[0].v.gc + offsetof(Udata054, bindata) != (const char *)e)
    return 0;
  o->where_table = t;
  o->where_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

/* Turns the cache of ps_where on when Lua's CallInfo is the one copied
 * here; once per lua_State (the context's layer keeps the ref across
 * resets). Nothing is raised: the cache stays off instead. */
void ps_where_open(lua_State *L, ps_ctx *c) {
  ps_obs *o = c->obs;
  where_seen w = {{NULL, NULL}, 0, 0};
  if (o->where_ref > 0 || lua_version(L) != 504 || !lua_checkstack(L, 4)) return;
  lua_pushcfunction(L, where_setup);
  lua_pushlightuserdata(L, &w);
  lua_pushlightuserdata(L, o);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) lua_pop(L, 1);
  if (o->where_ref <= 0) o->where_table = NULL, o->where_ref = 0;
}

/* The current sentinel's epoch, read from the weak table's array; 0 when
 * there is none (the collector cleared it and has not yet run its
 * finalizer): no cache then, nor when its first value is not a userdata
 * of an epoch's size (the debug library can put anything there). The
 * registry holds the table, and so does each sentinel's finalizer (a
 * table taken out of the registry lives on); no API call is made here,
 * on every allocation's path. */
static uint64_t where_epoch(const ps_obs *o) {
  const Table54 *t = (const Table54 *)o->where_table;
  if (!t || t->alimit < 1 || t->array[0].tt != TT_UDATA54) return 0;
  const Udata054 *u = (const Udata054 *)t->array[0].v.gc;
  if (u->nuvalue != 0 || u->len != sizeof(uint64_t)) return 0;
  return *(const uint64_t *)(const void *)((const char *)u + offsetof(Udata054, bindata));
}

/* Where the running Lua code is: the first Lua frame above the running C
 * function with line information, its source's index and its line (-1
 * and 0: unknown). The source is compared with the last one found before
 * it is looked up; a frame's answer is cached by its saved pc. */
void ps_where(lua_State *L, ps_ctx *c, int32_t *src, int32_t *line) {
  ps_names *t = names_of(c);
  lua_Debug ar;
  *src = -1, *line = 0;
  if (!t) return;
  uint64_t epoch = where_epoch(c->obs);
  if (epoch != t->epoch) {
    if (t->epoch) memset(t->where, 0, sizeof t->where);
    t->epoch = epoch;
  }
  for (int level = 1; level < 6 && lua_getstack(L, level, &ar); level++) {
    where_slot *w = NULL;
    if (epoch) {
      const CallInfo54 *ci = ci_of(&ar);
      if (ci->callstatus & CIST_C_54) continue;      /* lua_getinfo: no line */
      w = &t->where[where_hash(ci->u.l.savedpc)];
      if (w->pc == ci->u.l.savedpc) {
        if (w->line <= 0) continue;
        *src = w->src, *line = w->line;
        return;
      }
    }
    lua_getinfo(L, "Sl", &ar);
    if (ar.currentline > 0) {
      if (t->last < 0 || strcmp(t->v[t->last], ar.short_src) != 0)
        t->last = ps_name_index(c, ar.short_src, 0);
      *src = t->last;
      *line = t->last >= 0 ? ar.currentline : 0;
      if (w && t->last >= 0) *w = (where_slot){ ci_of(&ar)->u.l.savedpc, *src, *line };
      return;
    }
    if (w) *w = (where_slot){ ci_of(&ar)->u.l.savedpc, -1, 0 };
  }
}
