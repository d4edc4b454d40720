/*
 * followed.c: the observation layer's maps by id (ps_idmap: the ledger's
 * pools too) and its followed streams by id, O(1). The layer's list
 * (ps_obs.streams) holds them; this map finds one by id for the ledger,
 * the recorder and observe.c. Under all three: it calls none.
 */
#include <stdlib.h>

#include "observer.h"

struct ps_streammap {
  ps_idmap ids;
  int lost;                    /* a put ran out of memory: scan the list */
};

static size_t hash_id(int32_t id, size_t cap) {
  return (size_t)(((uint64_t)(uint32_t)id * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* The slot holding id, or the empty one where it would go. */
static size_t find(const ps_idmap *m, int32_t id) {
  size_t i = hash_id(id, m->cap);
  while (m->v[i].p && m->v[i].id != id) i = (i + 1) & (m->cap - 1);
  return i;
}

/* What id maps to, NULL when nothing. */
void *ps_idmap_get(const ps_idmap *m, int32_t id) {
  return m->cap ? m->v[find(m, id)].p : NULL;
}

/* Maps id to p; 0 when out of memory (nothing changed). */
int ps_idmap_put(ps_idmap *m, int32_t id, void *p) {
  if ((m->n + 1) * 4 > m->cap * 3) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    struct ps_idslot *v = calloc(cap, sizeof *v), *old = m->v;
    if (!v) return 0;
    size_t oldcap = m->cap;
    m->v = v, m->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].p) m->v[find(m, old[i].id)] = old[i];
    free(old);
  }
  size_t i = find(m, id);
  if (!m->v[i].p) m->n++;
  m->v[i] = (struct ps_idslot){ id, p };
  return 1;
}

/* Removes id's entry, shifting later entries of its run back. */
void ps_idmap_del(ps_idmap *m, int32_t id) {
  if (!m->cap) return;
  size_t i = find(m, id), mask = m->cap - 1;
  if (!m->v[i].p) return;
  m->v[i].p = NULL;
  m->n--;
  for (size_t j = (i + 1) & mask; m->v[j].p; j = (j + 1) & mask) {
    size_t home = hash_id(m->v[j].id, m->cap);
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      m->v[i] = m->v[j];
      m->v[j].p = NULL;
      i = j;
    }
  }
}

/* s is followed from now on: at the head of the layer's list, and found
 * by its id. Out of memory, lookups scan the list instead. */
void ps_followed_add(ps_ctx *c, ps_seen_stream *s) {
  ps_obs *o = c->obs;
  s->followed = 1;
  s->next = o->streams;
  o->streams = s;
  if (!o->stream_map && (o->stream_map = calloc(1, sizeof *o->stream_map)) == NULL) return;
  if (!ps_idmap_put(&o->stream_map->ids, s->id, s)) o->stream_map->lost = 1;
}

/* s is no longer followed: out of the list and the map. */
void ps_followed_remove(ps_ctx *c, ps_seen_stream *s) {
  ps_obs *o = c->obs;
  for (ps_seen_stream **pp = &o->streams; *pp; pp = &(*pp)->next)
    if (*pp == s) {
      *pp = s->next;
      break;
    }
  s->followed = 0;
  ps_streammap *m = o->stream_map;
  if (m && ps_idmap_get(&m->ids, s->id) == s) ps_idmap_del(&m->ids, s->id);
}

/* The followed stream of that id, NULL when none. */
ps_seen_stream *ps_stream_by_id(ps_ctx *c, int32_t id) {
  const ps_streammap *m = c->obs->stream_map;
  if (m && !m->lost) return ps_idmap_get(&m->ids, id);
  for (ps_seen_stream *s = c->obs->streams; s; s = s->next)
    if (s->id == id) return s;
  return NULL;
}

void ps_followed_free(ps_streammap *m) {
  if (!m) return;
  free(m->ids.v);
  free(m);
}
