/*
 * buffer.c: poolsh.Buffer, a piece of memory of one kind: from a pool
 * (stream-ordered), cudaMalloc, pinned host (cudaHostAlloc) or pageable
 * host memory. Also poolsh.malloc, pinned, pageable, register, unregister.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bindings.h"
#include "naming.h"
#include "limit.h"
#include "render.h"
#include "share.h"

#define kind_names ps_kind_names

static ps_bufferud *tobuffer(lua_State *L, int arg) {
  return (ps_bufferud *)ps_checkud(L, arg, PS_UV_BUFFER, PS_BUFFER);
}


/* Pushes a closed Buffer (live = 0) with its metatable: the one at mt
 * (a pool Buffer's, ps_push_buffer_mt) or, mt 0, the shared one of
 * Buffers of no pool. It becomes live only after the backend allocated
 * it, so a failure leaves nothing. No user values: the metatable keeps
 * what the Buffer needs alive. */
ps_bufferud *ps_newbuffer(lua_State *L, ps_ctx *c, ps_kind kind, uint64_t size, int mt) {
  const size_t bytes = sizeof(ps_bufferud) + PS_SEEN_BUFFER_BYTES;   /* ps_newobject inlined */
  if (mt) mt = lua_absindex(L, mt);
  ps_bufferud *b = (ps_bufferud *)lua_newuserdatauv(L, bytes, 0);
  memset(b, 0, bytes);
  b->tag = PS_TAG | PS_UV_BUFFER;
  if (mt) lua_pushvalue(L, mt);
  else lua_getiuservalue(L, PS_UP_CTX, PS_UV_BUFFER);
  lua_setmetatable(L, -2);
  b->kind = kind;
  b->size = size;
  b->id = ++c->next_id[PS_ID_BUFFER];
  return b;
}

/* Pushes a new copy of the shared metatable uv (live or freed Buffers')
 * holding the Pool at pool and the Stream at stream (keys MT_POOL and
 * MT_STREAM), protected: its __metatable is the shared one. */
static void new_pair_metatable(lua_State *L, int uv, int pool, int stream) {
  lua_getiuservalue(L, PS_UP_CTX, uv);            /* [shared] */
  lua_createtable(L, 4, 13);                      /* [shared, mt] */
  ps_copytable(L, -2);
  lua_pushvalue(L, -2);                           /* getmetatable(b) gives the shared one: */
  lua_setfield(L, -2, "__metatable");             /* Lua cannot drop the holds */
  lua_pushvalue(L, pool);
  lua_rawseti(L, -2, MT_POOL);
  lua_pushvalue(L, stream);
  lua_rawseti(L, -2, MT_STREAM);
  lua_remove(L, -2);                              /* [mt] */
}

/* Pushes the metatable of Buffers of the Pool at pool allocated on the
 * Stream at stream: one per such pair, made on first use and kept in
 * the weak-valued table at cache (0: the Pool's, from its metatable) by
 * the stream's address. It holds the Pool and the Stream, so a Buffer
 * keeps both alive as long as it lives, freed or not, without user
 * values; its MT_FREED is the freed Buffers' one, which holds them too
 * (and this one: both live while a Buffer of either does). */
void ps_push_buffer_mt(lua_State *L, int pool, int stream, int cache) {
  int base = lua_gettop(L);
  pool = lua_absindex(L, pool), stream = lua_absindex(L, stream);
  const void *key = lua_touserdata(L, stream);
  if (cache) cache = lua_absindex(L, cache);
  else if (lua_getmetatable(L, pool) && lua_rawgeti(L, -1, MT_POOL_CACHE) == LUA_TTABLE)
    cache = lua_gettop(L);                        /* [pmt, cache] */
  if (!cache || lua_rawgetp(L, cache, key) != LUA_TTABLE) {
    if (cache) lua_pop(L, 1);
    new_pair_metatable(L, PS_UV_BUFFER, pool, stream);        /* [.., live] */
    new_pair_metatable(L, PS_UV_BUFFER_FREED, pool, stream);  /* [.., live, freed] */
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, MT_LIVE);
    lua_rawseti(L, -2, MT_FREED);                             /* [.., live] */
    if (cache) {
      lua_pushvalue(L, -1);
      lua_rawsetp(L, cache, key);
    }
  }
  if (lua_gettop(L) > base + 1) {                 /* the Pool's cache was pushed */
    lua_replace(L, base + 1);
    lua_settop(L, base + 1);
  }
}

/* The stream a Buffer's own work goes on: its allocation stream while that
 * lives, else the legacy default stream. */
static ps_stream *buffer_stream(lua_State *L, int arg) {
  ps_streamud *s = ((ps_bufferud *)lua_touserdata(L, arg))->stream;
  return s && s->live ? s->h : NULL;
}

/* Frees b once, on stream s for pool memory; others synchronously, but
 * a finalizer (deferred) leaves cudaMalloc'd memory to ps_free_deferred.
 * Returns the backend's status; b stays live on failure. */
int ps_buffer_release(ps_ctx *c, ps_bufferud *b, ps_stream *s, int deferred) {
  if (!b->live) return PS_OK;
  int st = PS_OK;
  switch (b->kind) {
    case PS_KIND_POOL: st = c->be->pool_free(c->b, b->addr, s); break;
    case PS_KIND_MALLOC:   /* a deferred free counts as given back (limit.c) */
      st = deferred ? ps_defer_free(c, b->addr, b->id) : c->be->free_device(c->b, b->addr);
      if (st == PS_OK) ps_limit_gone(c, b);
      break;
    case PS_KIND_PINNED:
      if ((st = c->be->free_pinned(c->b, b->addr)) == PS_OK) ps_limit_gone(c, b);
      break;
    case PS_KIND_PAGEABLE:
      if (b->registered && (st = c->be->host_unregister(c->b, b->addr)) == PS_OK)
        ps_limit_gone(c, b);
      if (st == PS_OK) b->registered = 0, st = c->be->free_pageable(c->b, b->addr);
      break;
    case PS_KIND_VMM:      /* a view of a Range's bytes (vmm.c): nothing to free */
      break;
  }
  if (st == PS_OK) b->live = 0;
  return st;
}

/* The stream b's free goes on: its own while it lives, else the legacy
 * default stream. */
static ps_streamud *own_stream(lua_State *L, const ps_bufferud *b) {
  if (b->stream && b->stream->live) return b->stream;
  ps_pushdefaultstream(L);
  ps_streamud *s = (ps_streamud *)lua_touserdata(L, -1);
  lua_pop(L, 1);                        /* kept alive by the defaults table */
  return s;
}

/* The ledger of b's pool (an exported or imported buffer), or NULL. */
static ps_share *ledger_of(const ps_bufferud *b) {
  return b->ipc && b->pool ? b->pool->share : NULL;
}

/* Before the exporter frees b: marks it freed in the ledger unless some
 * process still imports it; returns how many do (0 for others). The mark
 * comes before the count, an importer counts itself before it checks the
 * mark (ps_share_claim): an import and the free never both go through. */
static int begin_free(const ps_bufferud *b) {
  ps_share *sh = b->ipc == PS_IPC_OWN ? ledger_of(b) : NULL;
  return sh ? ps_share_begin_free(sh, b->ipc_slot) : 0;
}

/* After b's free: the importer's import is gone; or, st != PS_OK, the
 * exporter's mark is undone (b stays live). */
static void ipc_freed(ps_bufferud *b, int st) {
  ps_share *sh = ledger_of(b);
  if (!sh) return;
  if (b->ipc == PS_IPC_OWN) {
    if (st != PS_OK) ps_share_unfree(sh, b->ipc_slot);
  } else if (st == PS_OK)
    ps_share_import(sh, b->ipc_slot, -1);
}

/* __gc and __close: frees without synchronising and never raises;
 * problems become warnings. An exported buffer still imported is not
 * freed (its block stays allocated until the pool goes). The free is
 * reported as the collector's (collected) or as a scope's end. */
static int finalize(lua_State *L, int collected) {
  ps_bufferud *b = (ps_bufferud *)ps_toud(L, 1, PS_UV_BUFFER);
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  if (b == NULL) return luaL_typeerror(L, 1, PS_BUFFER);    /* called by hand */
  if (!b->live || !c->b) return 0;
  if (b->kind == PS_KIND_VMM) { b->live = 0; return 0; }     /* a view: never observed */
  int n = b->ipc ? begin_free(b) : 0;
  if (n) {
    char msg[200];
    snprintf(msg, sizeof msg, "poolsh: b%d is still imported by %d process%s: not freed",
             b->id, n, n == 1 ? "" : "es");
    lua_warning(L, msg, 0);
    return 0;
  }
  int st = ps_buffer_release(c, b, buffer_stream(L, 1), 1);
  if (b->ipc) ipc_freed(b, st);
  if (st == PS_OK)
    ps_obs_free(L, c, b, b->kind != PS_KIND_POOL ? NULL : own_stream(L, b), collected);
  else {
    char msg[200];
    ps_obs_lost(c, b);                  /* the collector takes it anyway */
    snprintf(msg, sizeof msg, "poolsh: freeing buffer b%d: %s: %s", b->id,
             c->be->error_name(st), c->be->error_string(st));
    lua_warning(L, msg, 0);
  }
  return 0;
}

/* __gc: the collector frees b (no variable held it). */
static int buffer_gc(lua_State *L) { return finalize(L, 1); }

/* Gives the freed Buffer at idx (a positive index) its metatable's freed
 * twin, without __gc: the collector still keeps it for one more cycle (it
 * was marked for finalization) but calls nothing for it (the alloc+free
 * hot path). A Buffer that has it already keeps it. Leaves the old
 * metatable on the stack (its callers return nothing). */
static void mark_freed(lua_State *L, int idx) {
  if (lua_getmetatable(L, idx)                     /* [mt]; none after debug.setmetatable */
      && lua_rawgeti(L, -1, MT_FREED) == LUA_TTABLE) lua_setmetatable(L, idx);
}

/* __close: frees like __gc, then drops the finalizer. */
static int buffer_close(lua_State *L) {
  finalize(L, 0);
  if (!((ps_bufferud *)lua_touserdata(L, 1))->live) mark_freed(L, 1);   /* checked by buffer_gc */
  return 0;
}

/* b:free([stream]): pool memory is freed asynchronously on stream (default:
 * the allocating stream); other kinds synchronously. */
static int buffer_free(lua_State *L) {
  ps_ctx *c = ps_context(L);
  ps_bufferud *b = (ps_bufferud *)ps_toud(L, 1, PS_UV_BUFFER);
  if (b == NULL || !b->live) b = ps_checkbuffer(L, 1);
  ps_streamud *su = NULL;
  if (b->kind != PS_KIND_POOL) {
    luaL_argcheck(L, lua_isnoneornil(L, 2), 2, "only pool buffers are freed on a stream");
  } else if (!lua_isnoneornil(L, 2)) {
    su = ps_checkstream(L, 2);
  } else {
    su = b->stream;
    if (!su->live)
      return luaL_error(L, "b%d's stream s%d was destroyed: pass a stream to free it on",
                        b->id, su->id);
  }
  if (b->ipc) {
    int n = begin_free(b);
    if (n)
      return luaL_error(L, "b%d is still imported by %d process%s: every importer must free it "
                        "first", b->id, n, n == 1 ? "" : "es");
  }
  if (b->kind == PS_KIND_VMM) {         /* a view: its Range owns the bytes */
    b->live = 0;
    mark_freed(L, 1);
    return 0;
  }
  if (b->kind == PS_KIND_MALLOC) ps_wait_begin(L, c);     /* cudaFree waits */
  int st = ps_buffer_release(c, b, su ? su->h : NULL, 0);
  if (b->ipc) ipc_freed(b, st);
  if (st != PS_OK && su) {
    char n[16];
    ps_fail(L, st, "(freeing buffer b%d on stream %s)", b->id, ps_streamname(n, sizeof n, su));
  }
  if (st != PS_OK) ps_fail(L, st, "(freeing buffer b%d)", b->id);
  ps_obs_free(L, c, b, su, 0);
  mark_freed(L, 1);
  return 0;
}

/* Checks offset (arg) and length (arg+1, default: to the end) inside b. */
static void check_range(lua_State *L, ps_bufferud *b, int arg, uint64_t *off, uint64_t *n,
                        int has_len) {
  *off = ps_optsize(L, arg, 0);
  if (*off > b->size)
    luaL_error(L, "offset %I beyond the end of b%d (%I bytes)", (lua_Integer)*off, b->id,
               (lua_Integer)b->size);
  if (has_len) *n = ps_optsize(L, arg + 1, b->size - *off);
  ps_checkbuffer(L, 1);   /* a size parser written in Lua may have freed b */
  if (*n > b->size - *off)
    luaL_error(L, "range [%I, %I) out of bounds of b%d (%I bytes)", (lua_Integer)*off,
               (lua_Integer)(*off + *n), b->id, (lua_Integer)b->size);
}

/* The stream a host access to n bytes of b waits for: device memory is
 * copied on b's stream (the legacy one when b has none left); NULL when
 * the host reads or writes b directly. */
static ps_streamud *access_stream(lua_State *L, const ps_bufferud *b, uint64_t n) {
  if (n == 0 || (b->kind != PS_KIND_POOL && b->kind != PS_KIND_MALLOC && b->kind != PS_KIND_VMM))
    return NULL;
  return own_stream(L, b);
}

/* b:read([offset [, n]]) -> string: synchronous. */
static int buffer_read(lua_State *L) {
  ps_bufferud *b = ps_checkbuffer(L, 1);
  ps_ctx *c = ps_context(L);
  uint64_t off, n;
  check_range(L, b, 2, &off, &n, 1);
  luaL_Buffer lb;
  char *dst = luaL_buffinitsize(L, &lb, (size_t)n);
  ps_streamud *s = access_stream(L, b, n);
  if (s) ps_wait_begin(L, c);
  ps_check(L, c->be->read(c->b, b->kind, b->addr + off, dst, n, buffer_stream(L, 1)),
           "(reading %llu bytes of b%d)", (unsigned long long)n, b->id);
  if (s) ps_obs_waited(L, c, &(ps_what){ .op = PS_OP_READ, .stream = s, .buffer = b,
                                         .offset = off, .size = n });
  luaL_pushresultsize(&lb, (size_t)n);
  return 1;
}

/* b:write(offset, str) -> b: synchronous. */
static int buffer_write(lua_State *L) {
  ps_bufferud *b = ps_checkbuffer(L, 1);
  ps_ctx *c = ps_context(L);
  size_t len;
  const char *src = luaL_checklstring(L, 3, &len);
  uint64_t off, n = len;
  check_range(L, b, 2, &off, &n, 0);
  ps_streamud *s = access_stream(L, b, n);
  if (s) ps_wait_begin(L, c);
  ps_check(L, c->be->write(c->b, b->kind, b->addr + off, src, n, buffer_stream(L, 1)),
           "(writing %llu bytes to b%d)", (unsigned long long)n, b->id);
  if (s) ps_obs_waited(L, c, &(ps_what){ .op = PS_OP_WRITE, .stream = s, .buffer = b,
                                         .offset = off, .size = n });
  lua_settop(L, 1);
  return 1;
}

/* b.name = "weights": the only settable field. */
static int buffer_newindex(lua_State *L) {
  return ps_newindex_name(L, PS_ID_BUFFER, tobuffer(L, 1)->id, PS_BUFFER);
}

/* Pushes where imported buffer b comes from: "pid 1234's b3". */
static void push_source(lua_State *L, const ps_bufferud *b) {
  ps_share *sh = b->ipc == PS_IPC_IMPORTED ? ledger_of(b) : NULL;
  if (!sh) { lua_pushnil(L); return; }
  lua_pushfstring(L, "pid %d's b%d", ps_share_pid(sh), ps_share_buffer(sh, b->ipc_slot));
}

static int buffer_tostring(lua_State *L) {
  ps_bufferud *b = tobuffer(L, 1);
  const char *ipc = "";
  if (b->ipc == PS_IPC_IMPORTED) {
    push_source(L, b);
    ipc = lua_pushfstring(L, ", imported from %s", lua_tostring(L, -1));
  } else if (b->ipc == PS_IPC_OWN) {
    ipc = ", exported";
  }
  lua_pushfstring(L, "poolsh.Buffer %s (%s %s%s%s)", ps_pushlabel(L, PS_ID_BUFFER, b->id),
                  ps_pushsize(L, b->size),
                  kind_names[b->kind], ipc, b->live ? "" : ", freed");
  return 1;
}

/* ---- IPC: tokens ---- */

#define TOKEN_PREFIX "poolsh-ipc1:"

/* b:export() -> token: "poolsh-ipc1:<pid>:b<id>:<size>:" and the
 * backend's 64 bytes (cudaMemPoolPtrExportData) in hex. */
static int buffer_export(lua_State *L) {
  ps_bufferud *b = ps_checkbuffer(L, 1);
  ps_ctx *c = ps_context(L);
  if (b->kind != PS_KIND_POOL || !b->pool || !b->pool->props.ipc)
    return luaL_error(L, "b%d is not in an IPC pool: allocate it from poolsh.pool{ipc = true}",
                      b->id);
  if (b->ipc == PS_IPC_IMPORTED)
    return luaL_error(L, "b%d is imported: only its exporter can export it", b->id);
  ps_poolud *p = b->pool;
  if (!p->share && !(p->share = ps_share_new(p->id)))
    return luaL_error(L, "b%d: cannot make the pool's export ledger (out of memory)", b->id);
  uint8_t d[PS_IPC_BYTES];
  ps_check(L, c->be->ptr_export(c->b, b->addr, d), "(exporting b%d)", b->id);
  int slot = ps_share_exported(p->share, b->id, b->size);
  if (slot < 0) return luaL_error(L, "b%d: p%d's export ledger is full", b->id, p->id);
  b->ipc = PS_IPC_OWN, b->ipc_slot = slot;
  char hex[2 * PS_IPC_BYTES + 1];
  for (int i = 0; i < PS_IPC_BYTES; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
  lua_pushfstring(L, TOKEN_PREFIX "%d:b%d:%I:%s", (int)getpid(), b->id, (lua_Integer)b->size,
                  hex);
  return 1;
}

/* Parses a token, the whole Lua string (NULs included):
 * "poolsh-ipc1:<pid>:b<id>:<size>:" and 128 lower-case hex digits, nothing
 * after. NULL and pid, buffer id, size and the 64 bytes; or what is wrong
 * with it. */
static const char *parse_token(const char *t, size_t len, long *pid, long *id,
                               unsigned long long *size, uint8_t d[PS_IPC_BYTES]) {
  size_t np = strlen(TOKEN_PREFIX);
  if (len < np || memcmp(t, TOKEN_PREFIX, np) != 0)
    return len >= 10 && memcmp(t, "poolsh-ipc", 10) == 0 ? "a token of another poolsh version"
                                                         : "not a buffer token (poolsh-ipc1:...)";
  const char *q = t + np, *end = t + len;
  unsigned long long v;
  if (!ps_token_number(&q, end, ':', INT_MAX, &v)) return "no exporter pid";
  *pid = (long)v;
  if (q >= end || *q++ != 'b' || !ps_token_number(&q, end, ':', INT_MAX, &v)) return "no buffer id";
  *id = (long)v;
  if (!ps_token_number(&q, end, ':', (unsigned long long)INT64_MAX, size)) return "no size";
  if (!ps_token_hex(q, end, d, PS_IPC_BYTES)) return "its data is not 128 hex digits";
  return NULL;
}

/* ip:import(token [, stream]): pushes a Buffer mapping the exporter's
 * block, in imported pool p, its work (and free) on stream. */
ps_bufferud *ps_buffer_import(lua_State *L, ps_ctx *c, ps_poolud *p, int token, int stream) {
  size_t len;
  const char *t = luaL_checklstring(L, token, &len);
  ps_streamud *s = ps_optstream(L, stream);
  if (!p->imported)
    luaL_error(L, "p%d is not an imported pool: import buffers into poolsh.import_pool's pool",
               p->id);
  long pid, id;
  unsigned long long size;
  uint8_t d[PS_IPC_BYTES];
  const char *bad = parse_token(t, len, &pid, &id, &size, d);
  if (bad) luaL_error(L, "p%d:import: malformed token: %s", p->id, bad);
  int epid = ps_share_pid(p->share);
  if (pid != epid)
    luaL_error(L, "p%d:import: the token is from pid %d's pool, not from p%d's exporter (pid %d)",
               p->id, (int)pid, p->id, epid);
  uint64_t lsize;
  int freed, slot = ps_share_find(p->share, (int)id, &lsize, &freed);
  if (slot < 0)
    luaL_error(L, "p%d:import: pid %d's b%d was never exported from this pool", p->id,
               (int)pid, (int)id);
  if (lsize != size) luaL_error(L, "p%d:import: malformed token: its size is not b%d's", p->id,
                                (int)id);
  if (freed)
    luaL_error(L, "p%d:import: pid %d's b%d was already freed by its exporter", p->id, (int)pid,
               (int)id);
  /* The driver gives the same address again (an H200, 2026-11-27): two
   * Buffers would free one import twice. */
  if (ps_share_held(p->share, slot) > 0)
    luaL_error(L, "p%d:import: pid %d's b%d is already imported in this process: free that "
               "Buffer first", p->id, (int)pid, (int)id);
  ps_push_buffer_mt(L, 1, stream, 0);             /* ps_optstream put the stream there */
  ps_bufferud *b = ps_newbuffer(L, c, PS_KIND_POOL, size, -1);
  b->stream = s, b->pool = p;
  /* Counted before the import, then the exporter's free re-checked (see
   * begin_free); the count goes again if the backend refuses. */
  int claim = ps_share_claim(p->share, slot, (int)id);
  if (claim == -1)
    luaL_error(L, "p%d:import: pid %d's b%d has too many importing processes", p->id,
               (int)pid, (int)id);
  if (claim == -2)
    luaL_error(L, "p%d:import: pid %d's b%d was already freed by its exporter", p->id, (int)pid,
               (int)id);
  int st = c->be->ptr_import(c->b, p->h, d, &b->addr);
  if (st != PS_OK) ps_share_import(p->share, slot, -1);
  ps_check(L, st, "(importing pid %d's b%d into p%d)", (int)pid, (int)id, p->id);
  b->ipc = PS_IPC_IMPORTED, b->ipc_slot = slot;
  b->live = 1;
  /* Observed as memory of no pool here: the block is the exporter's, the
   * imported pool's counters do not count it (measured). */
  ps_obs_alloc(L, c, b, NULL, NULL, PS_RULE_UNKNOWN);
  return b;
}

static int buffer_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tobuffer(L, 1)->size);
  return 1;
}

/* A Buffer's fields: mt.fields in Lua, buffer_index here. */
static const char *const buffer_fields[] = {
  "size", "addr", "kind", "pool", "stream", "live", "id", "name", "registered", "reused",
  "reused_from", "reuse_rule", "why_fresh", "exported", "imported", "source", "sources", NULL
};

static int buffer_index(lua_State *L) {
  if (ps_method(L)) return 1;
  ps_bufferud *b = tobuffer(L, 1);
  int32_t from;
  ps_reuse_rule rule;
  ps_obs_reuse(b, &from, &rule);
  int field = ps_field(L, 2, buffer_fields);
  switch (field) {
    case 0: lua_pushinteger(L, (lua_Integer)b->size); break;
    case 1: lua_pushinteger(L, (lua_Integer)b->addr); break;
    case 2: lua_pushstring(L, kind_names[b->kind]); break;
    case 3: case 4:                              /* its metatable holds them */
      if (lua_getmetatable(L, 1)) lua_rawgeti(L, -1, field == 3 ? MT_POOL : MT_STREAM);
      else lua_pushnil(L);
      break;
    case 5: lua_pushboolean(L, b->live); break;
    case 6: lua_pushinteger(L, b->id); break;
    case 7: ps_pushname(L, PS_ID_BUFFER, b->id); break;
    case 8: lua_pushboolean(L, b->registered); break;
    case 9: lua_pushboolean(L, from >= 0); break;
    case 10: if (from >= 0) lua_pushinteger(L, from); else lua_pushnil(L); break;
    case 11: lua_pushstring(L, ps_rule_names[rule]); break;   /* nil when fresh */
    case 12:                                     /* codes; words only when there is a why */
      ps_obs_push_why_fresh(L, b);
      if (lua_istable(L, -1)) ps_render(L, "poolsh.render.why_fresh", 1);
      break;
    case 13: lua_pushboolean(L, b->ipc == PS_IPC_OWN); break;
    case 14: lua_pushboolean(L, b->ipc == PS_IPC_IMPORTED); break;
    case 15: push_source(L, b); break;
    case 16: ps_obs_push_sources(L, b); break;
    default: lua_pushnil(L); break;              /* other keys read nil */
  }
  return 1;
}

/* Allocates a Buffer of a kind that has no pool or stream; on
 * out-of-memory collects garbage and retries once. */
static int new_plain(lua_State *L, ps_kind kind, uint64_t size, unsigned flags) {
  ps_ctx *c = ps_context(L);
  luaL_argcheck(L, size > 0, 1, "size must be at least 1 byte");
  ps_bufferud *b = ps_newbuffer(L, c, kind, size, 0);
  uint64_t held = ps_limit_counted(c, kind, size);
  int st = PS_ERR_MEMORY_ALLOCATION;
  for (int try = 0; try < 2 && st == PS_ERR_MEMORY_ALLOCATION; try++) {
    if (try) lua_gc(L, LUA_GCCOLLECT);
    if (kind == PS_KIND_MALLOC) ps_free_deferred(L, c);   /* memory finalizers left */
    st = c->limited ? ps_limit_check(L, c, kind != PS_KIND_MALLOC, held) : PS_OK;
    if (st != PS_OK) continue;
    switch (kind) {
      case PS_KIND_MALLOC: st = c->be->malloc_device(c->b, size, &b->addr); break;
      case PS_KIND_PINNED: st = c->be->alloc_pinned(c->b, size, flags, &b->addr); break;
      default: st = c->be->alloc_pageable(c->b, size, &b->addr); break;
    }
  }
  if (st != PS_OK && c->limited && c->lim.refused.on)
    ps_limit_fail(L, c, lua_pushfstring(L, "poolsh.%s(%s)", kind_names[kind],
                                        ps_pushsize(L, size)));
  if (st != PS_OK) ps_fail(L, st, "allocating %s of %s memory", ps_pushsize(L, size), kind_names[kind]);
  ps_limit_took(c, b, held);
  b->live = 1;
  ps_obs_alloc(L, c, b, NULL, NULL, PS_RULE_UNKNOWN);
  return 1;
}

static int buffer_malloc(lua_State *L) {
  return new_plain(L, PS_KIND_MALLOC, ps_checksize(L, 1), 0);
}

/* poolsh.pinned(size [, {portable=, mapped=, write_combined=}]). */
static int buffer_pinned(lua_State *L) {
  static const char *const opts[] = {"portable", "mapped", "write_combined", NULL};
  uint64_t size = ps_checksize(L, 1);
  ps_checkoptions(L, 2, "poolsh.pinned", opts);
  unsigned flags = (ps_optfield_bool(L, 2, "portable", 0) ? PS_PINNED_PORTABLE : 0) |
                   (ps_optfield_bool(L, 2, "mapped", 0) ? PS_PINNED_MAPPED : 0) |
                   (ps_optfield_bool(L, 2, "write_combined", 0) ? PS_PINNED_WRITE_COMBINED : 0);
  lua_settop(L, 1);
  return new_plain(L, PS_KIND_PINNED, size, flags);
}

static int buffer_pageable(lua_State *L) {
  return new_plain(L, PS_KIND_PAGEABLE, ps_checksize(L, 1), 0);
}

static ps_bufferud *check_pageable(lua_State *L, int arg) {
  ps_bufferud *b = ps_checkbuffer(L, arg);
  if (b->kind != PS_KIND_PAGEABLE)
    luaL_argerror(L, arg, lua_pushfstring(L, "pageable buffer expected, b%d is %s", b->id,
                                          kind_names[b->kind]));
  return b;
}

/* poolsh.register(buf): cudaHostRegister of a pageable buffer. */
static int buffer_register(lua_State *L) {
  ps_bufferud *b = check_pageable(L, 1);
  ps_ctx *c = ps_context(L);
  if (b->registered) return luaL_error(L, "b%d is already registered", b->id);
  if (c->limited && ps_limit_check(L, c, 1, b->size) != PS_OK) {
    ps_limit_fail(L, c, lua_pushfstring(L, "poolsh.register(b%d, %s)", b->id,
                                        ps_pushsize(L, b->size)));
  }
  ps_check(L, c->be->host_register(c->b, b->addr, b->size), "(registering b%d)", b->id);
  ps_limit_took(c, b, b->size);
  b->registered = 1;
  lua_settop(L, 1);
  return 1;
}

static int buffer_unregister(lua_State *L) {
  ps_bufferud *b = check_pageable(L, 1);
  ps_ctx *c = ps_context(L);
  if (!b->registered) return luaL_error(L, "b%d is not registered", b->id);
  ps_check(L, c->be->host_unregister(c->b, b->addr), "(unregistering b%d)", b->id);
  ps_limit_gone(c, b);
  b->registered = 0;
  lua_settop(L, 1);
  return 1;
}

static const luaL_Reg buffer_methods[] = {
  {"free", buffer_free}, {"read", buffer_read}, {"write", buffer_write},
  {"export", buffer_export}, {NULL, NULL}
};

static const luaL_Reg buffer_meta[] = {
  {"__index", buffer_index}, {"__gc", buffer_gc}, {"__close", buffer_close},
  {"__tostring", buffer_tostring}, {"__len", buffer_len}, {"__newindex", buffer_newindex},
  {NULL, NULL}
};

static const luaL_Reg buffer_funcs[] = {
  {"malloc", buffer_malloc}, {"pinned", buffer_pinned}, {"pageable", buffer_pageable},
  {"register", buffer_register}, {"unregister", buffer_unregister}, {NULL, NULL}
};

/* Makes the freed Buffers' metatable: the live one's fields less __gc;
 * each names the other (MT_FREED, MT_LIVE). */
static void new_freed_metatable(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);   /* [ctx] */
  luaL_getmetatable(L, PS_BUFFER);                  /* [ctx, mt] */
  lua_newtable(L);                                  /* [ctx, mt, freed] */
  ps_copytable(L, -2);
  lua_pushnil(L);
  lua_setfield(L, -2, "__gc");
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, MT_LIVE);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, MT_FREED);
  lua_setiuservalue(L, -3, PS_UV_BUFFER_FREED);
  lua_pop(L, 2);
}

int poolsh_open_buffer(lua_State *L) {
  ps_newclass(L, PS_UV_BUFFER, PS_BUFFER, buffer_methods, buffer_meta, buffer_fields);
  new_freed_metatable(L);
  lua_settop(L, 1);
  ps_setfuncs(L, buffer_funcs);
  return 0;
}
