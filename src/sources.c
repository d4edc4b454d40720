/*
 * sources.c: the observation layer's one table of source names. The
 * recorder's events, the ledger's allocations and the sites' frames all
 * name a Lua source by its index here (ps_where gives the running one);
 * the REPL's statements are added here too, each as a name of its own.
 * Under trace.c, sites.c and ledger.c: it calls none of them.
 */
#include <stdlib.h>
#include <string.h>

#include "observer.h"

struct ps_names {
  char **v;
  size_t n, cap;
  int32_t last;                /* the last source found by ps_where: compared first */
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

/* Where the running Lua code is: the first Lua frame above the running C
 * function, its source's index and its line (-1 and 0: unknown). The
 * source is compared with the last one found before it is looked up. */
void ps_where(lua_State *L, ps_ctx *c, int32_t *src, int32_t *line) {
  ps_names *t = names_of(c);
  lua_Debug ar;
  *src = -1, *line = 0;
  if (!t) return;
  for (int level = 1; level < 6 && lua_getstack(L, level, &ar); level++) {
    lua_getinfo(L, "Sl", &ar);
    if (ar.currentline > 0) {
      if (t->last < 0 || strcmp(t->v[t->last], ar.short_src) != 0)
        t->last = ps_name_index(c, ar.short_src, 0);
      *src = t->last;
      *line = t->last >= 0 ? ar.currentline : 0;
      return;
    }
  }
}
