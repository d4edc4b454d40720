/*
 * bench.c: the baselines of scripts/bench_alloc.lua. bench_c times the
 * alloc+free loop in C; bench_floor makes the thinnest safe Lua binding of
 * the same two calls, to show what any binding costs on a machine.
 */
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "bindings.h"
#include "clock.h"

/* The context, for a benchmark: refused under --limit, whose checks a
 * benchmark's direct backend calls would pass by. */
static ps_ctx *bench_context(lua_State *L, const char *name) {
  ps_ctx *c = ps_context(L);
  if (c->limited)
    luaL_error(L, "poolsh.%s: not under --limit or --pinned-limit (it calls the backend "
               "directly, past the limit's checks)", name);
  return c;
}

/* poolsh.bench_c(pool, stream, size, n) -> seconds for n alloc+free
 * pairs done in C, with nothing between the backend's two calls. */
static int bench_c(lua_State *L) {
  uint64_t size = ps_checksize(L, 3);   /* first: a Lua parser may destroy p or s */
  ps_poolud *p = ps_checkpool(L, 1);
  ps_streamud *s = ps_optstream(L, 2);
  lua_Integer n = luaL_checkinteger(L, 4);
  luaL_argcheck(L, n >= 0, 4, "count must be >= 0");
  ps_ctx *c = bench_context(L, "bench_c");
  double t0 = ps_clock_s();
  for (lua_Integer i = 0; i < n; i++) {
    ps_addr a = 0;
    ps_check(L, c->be->pool_alloc(c->b, p->h, size, s->h, &a, NULL), "(bench alloc)");
    int st = c->be->pool_free(c->b, a, s->h);
    if (st != PS_OK) {              /* the block stays allocated: say so */
      ps_fail(L, st, "(bench free: %s left allocated in pool p%d)", ps_pushsize(L, size), p->id);
    }
  }
  lua_pushnumber(L, ps_clock_s() - t0);
  return 1;
}

/* A floor block: its address and whether it is still allocated. */
typedef struct floor_block {
  ps_addr addr;
  int live;
} floor_block;

/* alloc() -> block: upvalues context, pool, stream, size, metatable. */
static int floor_alloc(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  ps_poolud *p = (ps_poolud *)lua_touserdata(L, lua_upvalueindex(2));
  ps_streamud *s = (ps_streamud *)lua_touserdata(L, lua_upvalueindex(3));
  floor_block *b = (floor_block *)lua_newuserdatauv(L, sizeof *b, 0);
  b->live = 0;
  lua_pushvalue(L, lua_upvalueindex(5));
  lua_setmetatable(L, -2);
  if (!p->live || !s->live) return luaL_error(L, "bench_floor: its pool or stream is gone");
  ps_check(L, c->be->pool_alloc(c->b, p->h, (uint64_t)lua_tointeger(L, lua_upvalueindex(4)),
                                s->h, &b->addr, NULL), "(bench alloc)");
  b->live = 1;
  return 1;
}

/* free(block): upvalues context, stream, metatable. */
static int floor_free(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  floor_block *b = (floor_block *)lua_touserdata(L, 1);
  if (!b || !lua_getmetatable(L, 1) || !lua_rawequal(L, -1, lua_upvalueindex(3)) || !b->live)
    return luaL_argerror(L, 1, "live bench_floor block expected");
  ps_streamud *s = (ps_streamud *)lua_touserdata(L, lua_upvalueindex(2));
  ps_check(L, c->be->pool_free(c->b, b->addr, s->live ? s->h : NULL), "(bench free)");
  b->live = 0;
  return 0;
}

/* poolsh.bench_floor(pool, stream, size) -> alloc, free: closures doing
 * the backend's alloc and free with nothing else (no fields, no
 * finalizer, no method lookup). Blocks dropped without free stay
 * allocated until the pool is destroyed: a benchmark tool only. */
static int bench_floor(lua_State *L) {
  ps_checkpool(L, 1);
  ps_optstream(L, 2);
  uint64_t size = ps_checksize(L, 3);
  luaL_argcheck(L, size > 0, 3, "size must be at least 1 byte");
  bench_context(L, "bench_floor");
  lua_settop(L, 3);
  lua_pushinteger(L, (lua_Integer)size);
  lua_replace(L, 3);
  lua_newtable(L);                                   /* [p, s, n, mt] */
  lua_pushliteral(L, "poolsh.bench_floor block");
  lua_setfield(L, -2, "__name");
  lua_pushvalue(L, PS_UP_CTX);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  lua_pushvalue(L, 4);
  lua_pushcclosure(L, floor_alloc, 5);
  lua_pushvalue(L, PS_UP_CTX);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 4);
  lua_pushcclosure(L, floor_free, 3);
  return 2;
}

/* The blocks a bench_fill left allocated, freed by its release closure. */
typedef struct fill_blocks {
  size_t n;
  int live;
  ps_addr addr[1];
} fill_blocks;

/* release(): upvalues context, stream, the fill_blocks; frees them once. */
static int fill_release(lua_State *L) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  ps_streamud *s = (ps_streamud *)lua_touserdata(L, lua_upvalueindex(2));
  fill_blocks *f = (fill_blocks *)lua_touserdata(L, lua_upvalueindex(3));
  if (!f->live) return 0;
  if (!s->live) return luaL_error(L, "bench_fill: its stream is gone");
  f->live = 0;
  for (size_t i = 0; i < f->n; i++)
    ps_check(L, c->be->pool_free(c->b, f->addr[i], s->h), "(bench free)");
  return 0;
}

/* poolsh.bench_fill(pool, stream, n) -> release: allocates 2n blocks of
 * 1-7 KiB from C and frees every other one, leaving n live blocks and n
 * holes that only the backend knows of (no Buffer, no ledger entry), so a
 * benchmark can tell the backend's cost per block from poolsh's. The
 * blocks stay until release() is called. A benchmark tool only. */
static int bench_fill(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  ps_streamud *s = ps_optstream(L, 2);
  lua_Integer n = luaL_checkinteger(L, 3);
  luaL_argcheck(L, n >= 1 && n <= (1 << 28), 3, "count must be in 1..2^28");
  bench_context(L, "bench_fill");
  fill_blocks *f = (fill_blocks *)lua_newuserdatauv(L, sizeof *f + (size_t)n * sizeof(ps_addr), 0);
  f->n = 0, f->live = 1;
  ps_ctx *c = ps_context(L);
  uint64_t seed = 12345;
  for (lua_Integer i = 0; i < 2 * n; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648u;
    ps_addr a = 0;
    int st = c->be->pool_alloc(c->b, p->h, 1024 + seed % (6 * 1024 + 1), s->h, &a, NULL);
    if (st == PS_OK && i % 2 == 0) st = c->be->pool_free(c->b, a, s->h);
    else if (st == PS_OK) f->addr[f->n++] = a;
    if (st != PS_OK) {
      lua_pushvalue(L, PS_UP_CTX);
      lua_pushvalue(L, 2);
      lua_pushvalue(L, -3);
      lua_pushcclosure(L, fill_release, 3);
      lua_call(L, 0, 0);   /* frees what it has so far */
      ps_check(L, st, "(bench fill)");
    }
  }
  lua_pushvalue(L, PS_UP_CTX);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -3);
  lua_pushcclosure(L, fill_release, 3);
  return 1;
}

/* poolsh.bench_heap() -> bytes the C heap has handed out and not taken
 * back (glibc's mallinfo2), or nil where that cannot be read. Unlike the
 * resident size it does not hide memory reused after a free. */
static int bench_heap(lua_State *L) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  struct mallinfo2 m = mallinfo2();
  lua_pushinteger(L, (lua_Integer)(m.uordblks + m.hblkhd));
#else
  lua_pushnil(L);
#endif
  return 1;
}

static const luaL_Reg bench_funcs[] = {
  {"bench_c", bench_c}, {"bench_floor", bench_floor}, {"bench_fill", bench_fill},
  {"bench_heap", bench_heap}, {NULL, NULL}
};

int poolsh_open_bench(lua_State *L) {
  lua_settop(L, 1);
  ps_setfuncs(L, bench_funcs);
  return 0;
}
