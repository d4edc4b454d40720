/*
 * limit.c: poolsh --limit and --pinned-limit (POOLSH_LIMIT,
 * POOLSH_PINNED_LIMIT), so that one shared GPU serves a room. --limit caps
 * the device memory this process holds: every device pool's reservation
 * plus poolsh.malloc and poolsh.vmm.create's device memory; --pinned-limit
 * the pinned host memory: every host pool's reservation, poolsh.pinned,
 * poolsh.register and poolsh.vmm.create's host memory. The limits are the
 * context's; the bindings check them: before the backend call where they
 * know what it takes (malloc, pinned, register, vmm.create), after it for a
 * pool,
 * whose reservation the driver decides. An allocation over a limit is
 * undone and raises cudaErrorMemoryAllocation naming the limit.
 */
#include <stdio.h>
#include <string.h>

#include "limit.h"

/* cudaMalloc's unit when the backend has no malloc_granularity option
 * (cuda): 2 MiB on the H100 and H200 (lua/poolsh/profiles/). */
#define MALLOC_GRANULARITY ((uint64_t)2 << 20)

static uint64_t add(uint64_t a, uint64_t b) {
  return a + b < a ? UINT64_MAX : a + b;
}

/* poolsh.configure's limit and pinned_limit (sizes; 0: none) from the
 * table at t. Raises "poolsh.configure: limit: <size error>". */
void ps_limit_configure(lua_State *L, ps_ctx *c, int t) {
  c->lim.device = ps_fieldsize(L, t, "limit", "poolsh.configure", c->lim.device);
  c->lim.pinned = ps_fieldsize(L, t, "pinned_limit", "poolsh.configure", c->lim.pinned);
  c->limited = c->lim.device || c->lim.pinned;
}

static uint64_t reserved(ps_ctx *c, const ps_poolud *p) {
  uint64_t v = 0;
  if (c->be->pool_get(c->b, p->h, PS_ATTR_RESERVED_CURRENT, &v) != PS_OK) v = 0;
  return v;
}

/* The reservations of every live pool at loc, read from the backend. */
static uint64_t pools_reserved(lua_State *L, ps_ctx *c, ps_location loc) {
  uint64_t sum = 0;
  lua_getiuservalue(L, PS_UP_CTX, PS_UV_OBJECTS);
  lua_pushnil(L);
  while (lua_next(L, -2)) {                        /* [objects, k, v] */
    lua_pop(L, 1);
    const ps_poolud *p = (const ps_poolud *)ps_toud(L, -1, PS_UV_POOL);
    if (p && p->live && p->h && p->props.location == loc) sum = add(sum, reserved(c, p));
  }
  lua_pop(L, 1);
  return sum;
}

/* What poolsh.malloc, pinned, register and vmm.create hold against a
 * limit. */
static uint64_t plain_held(const ps_ctx *c, int pinned) {
  return pinned ? add(add(c->lim.pinned_held, c->lim.registered_held), c->lim.vmm_pinned_held)
                : add(c->lim.malloc_held, c->lim.vmm_held);
}

/* Keeps a refusal's figures for ps_limit_fail; returns out of memory. */
static int refuse(ps_ctx *c, int pinned, uint64_t pools, uint64_t total) {
  c->lim.refused.on = 1;
  c->lim.refused.pinned = pinned;
  c->lim.refused.pools = pools;
  c->lim.refused.total = total;
  c->lim.refused.plain = pinned ? c->lim.pinned_held : c->lim.malloc_held;
  return PS_ERR_MEMORY_ALLOCATION;
}

/* Gives back pool allocation b that a limit refused: frees it on its
 * stream, waits for that stream (interruptible) so the free completes,
 * and trims the pool back to what it reserved before. The undo is part
 * of the refused allocation, which p:alloc reports once
 * (ps_obs_alloc_failed): its wait is quiet (the ledger learns which frees
 * it completed; nothing is recorded). If the free fails, b becomes live (its
 * finalizer frees it) and that raises. */
static void undo(lua_State *L, ps_ctx *c, ps_bufferud *b, uint64_t before,
                 ps_reuse_rule said) {
  ps_poolud *p = b->pool;
  ps_streamud *s = b->stream;
  char n[16];
  ps_streamname(n, sizeof n, s);
  int st = c->be->pool_free(c->b, b->addr, s->h);
  if (st != PS_OK) {
    b->live = 1;
    ps_obs_alloc(L, c, b, p, s, said);
    ps_fail(L, st, "(freeing b%d, over the limit, on stream %s)", b->id, n);
  }
  ps_wait_begin(L, c);
  ps_check(L, c->be->stream_sync(c->b, s->h),
           "(synchronizing stream %s to give back an allocation over the limit)", n);
  ps_check(L, c->be->pool_trim(c->b, p->h, before),
           "(trimming pool p%d back after an allocation over the limit)", p->id);
  ps_obs_waited(L, c, &(ps_what){ .op = PS_OP_STREAM_SYNC, .stream = s, .quiet = 1 });
}

/* p:alloc's backend call when a limit is set (b holds pool, stream and
 * size). When the pool's reservation grew and brings the total of its
 * location over the limit, the allocation is undone: nothing stays
 * reserved or counted, b stays closed, and the status is out of memory
 * (c->lim.refused says why). */
int ps_limit_pool_alloc(lua_State *L, ps_ctx *c, ps_bufferud *b, ps_alloc_note *note) {
  ps_poolud *p = b->pool;
  int pinned = p->props.location == PS_LOCATION_HOST;
  uint64_t limit = pinned ? c->lim.pinned : c->lim.device;
  c->lim.refused.on = 0;
  if (!limit) return c->be->pool_alloc(c->b, p->h, b->size, b->stream->h, &b->addr, note);
  uint64_t before = reserved(c, p);
  int st = c->be->pool_alloc(c->b, p->h, b->size, b->stream->h, &b->addr, note);
  uint64_t after = st == PS_OK ? reserved(c, p) : 0;
  if (after <= before) return st;
  uint64_t pools = pools_reserved(L, c, p->props.location);
  uint64_t total = add(pools, plain_held(c, pinned));
  if (total <= limit) return PS_OK;
  undo(L, c, b, before, note->rule);
  return refuse(c, pinned, pools > after - before ? pools - (after - before) : 0, total);
}

/* The bytes a Buffer of kind and size counts against a limit:
 * poolsh.malloc as cudaMalloc rounds it, poolsh.pinned as asked,
 * pageable memory nothing (until registered). */
uint64_t ps_limit_counted(ps_ctx *c, ps_kind kind, uint64_t size) {
  if (kind == PS_KIND_PINNED) return size;
  if (kind != PS_KIND_MALLOC) return 0;
  double g = 0;
  uint64_t unit = MALLOC_GRANULARITY;
  if (c->be->option_get && c->be->option_get(c->b, "malloc_granularity", &g) == PS_OK && g >= 1)
    unit = (uint64_t)g;
  uint64_t r = size + (unit - size % unit) % unit;
  return r < size ? UINT64_MAX : r;
}

/* Before poolsh.malloc (pinned 0) or poolsh.pinned and poolsh.register
 * (pinned 1) take bytes: PS_OK, or out of memory when that would bring
 * the total over the limit (c->lim.refused says why). */
int ps_limit_check(lua_State *L, ps_ctx *c, int pinned, uint64_t bytes) {
  uint64_t limit = pinned ? c->lim.pinned : c->lim.device;
  c->lim.refused.on = 0;
  if (!limit || !bytes) return PS_OK;
  uint64_t pools = pools_reserved(L, c, pinned ? PS_LOCATION_HOST : PS_LOCATION_DEVICE);
  uint64_t total = add(add(pools, plain_held(c, pinned)), bytes);
  return total <= limit ? PS_OK : refuse(c, pinned, pools, total);
}

static uint64_t *counter(ps_ctx *c, const ps_bufferud *b) {
  switch (b->kind) {
    case PS_KIND_MALLOC: return &c->lim.malloc_held;
    case PS_KIND_PINNED: return &c->lim.pinned_held;
    default: return &c->lim.registered_held;      /* a registered pageable buffer */
  }
}

/* b (not pool memory) now holds `held` bytes: counted, with a limit or
 * without (poolsh.device() shows them). */
void ps_limit_took(ps_ctx *c, ps_bufferud *b, uint64_t held) {
  uint64_t *n = counter(c, b);
  *n = add(*n, held);
  b->held = held;
}

/* b gave its counted bytes back (freed, or unregistered). */
void ps_limit_gone(ps_ctx *c, ps_bufferud *b) {
  uint64_t *n = counter(c, b);
  *n = *n > b->held ? *n - b->held : 0;
  b->held = 0;
}

/* poolsh.vmm.create's memory at a location (host: pinned 1) now holds
 * bytes more: counted, with a limit or without. */
void ps_limit_vmm_took(ps_ctx *c, int pinned, uint64_t bytes) {
  uint64_t *n = pinned ? &c->lim.vmm_pinned_held : &c->lim.vmm_held;
  *n = add(*n, bytes);
}

/* ... and gives bytes back: its physical memory really went (released,
 * and its last mapping unmapped). */
void ps_limit_vmm_gone(ps_ctx *c, int pinned, uint64_t bytes) {
  uint64_t *n = pinned ? &c->lim.vmm_pinned_held : &c->lim.vmm_held;
  *n = *n > bytes ? *n - bytes : 0;
}

/* Raises the last refusal: what (as "p2:alloc(64.00 MiB)") would bring
 * the memory this process holds over the limit. */
int ps_limit_fail(lua_State *L, ps_ctx *c, const char *what) {
  const ps_limits *l = &c->lim;
  const char *tot = ps_pushsize(L, l->refused.total);     /* each stays on the stack */
  const char *pools = ps_pushsize(L, l->refused.pools);
  const char *plain = ps_pushsize(L, l->refused.plain);
  uint64_t vmm = l->refused.pinned ? l->vmm_pinned_held : l->vmm_held;
  /* poolsh.vmm's part is named when it holds some, or is what was refused */
  const char *v = vmm || strncmp(what, "poolsh.vmm", 10) == 0
                      ? lua_pushfstring(L, ", poolsh.vmm %s", ps_pushsize(L, vmm)) : "";
  if (!l->refused.pinned)
    return ps_fail(L, PS_ERR_MEMORY_ALLOCATION, "under poolsh --limit %s: %s would bring the "
                   "device memory this process holds to %s (pools %s reserved, poolsh.malloc "
                   "%s%s)", ps_pushsize(L, l->device), what, tot, pools, plain, v);
  const char *lim = ps_pushsize(L, l->pinned);
  return ps_fail(L, PS_ERR_MEMORY_ALLOCATION, "under poolsh --pinned-limit %s: %s would bring "
                 "the pinned host memory this process holds to %s (host pools %s reserved, "
                 "poolsh.pinned %s, registered %s%s)", lim, what, tot, pools, plain,
                 ps_pushsize(L, l->registered_held), v);
}

/* Sets poolsh.device()'s limit and pinned_limit (nil when none) and held
 * and pinned_held (what this process holds against each) into the table
 * on top. */
void ps_limit_push(lua_State *L, ps_ctx *c) {
  uint64_t held = add(pools_reserved(L, c, PS_LOCATION_DEVICE), plain_held(c, 0));
  uint64_t pinned = add(pools_reserved(L, c, PS_LOCATION_HOST), plain_held(c, 1));
  if (c->lim.device) lua_pushinteger(L, (lua_Integer)c->lim.device), lua_setfield(L, -2, "limit");
  if (c->lim.pinned)
    lua_pushinteger(L, (lua_Integer)c->lim.pinned), lua_setfield(L, -2, "pinned_limit");
  lua_pushinteger(L, (lua_Integer)held);
  lua_setfield(L, -2, "held");
  lua_pushinteger(L, (lua_Integer)pinned);
  lua_setfield(L, -2, "pinned_held");
}
