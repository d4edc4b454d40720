/*
 * device.c: the device as a whole (count, info, sync, clock) and the
 * stream-ordered primitives: copy, fill, verify, touch, spin; plus the
 * backend's own options (the sim's device profile).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bindings.h"
#include "limit.h"
#include "clock.h"

static int dev_count(lua_State *L) {
  ps_ctx *c = ps_context(L);
  int n = 0;
  ps_check(L, c->be->device_count(c->b, &n), "(counting devices)");
  lua_pushinteger(L, n);
  return 1;
}

/* poolsh.device([i]) -> {index, name, total, free, cc, pools_supported,
 * driver, driver_api, runtime_api, held, pinned_held[, limit][, pinned_limit]}. */
static int dev_info(lua_State *L) {
  ps_ctx *c = ps_context(L);
  lua_Integer i = luaL_optinteger(L, 1, c->device);
  luaL_argcheck(L, i >= 0 && i < 1 << 20, 1, "device index out of range");
  ps_device_info d;
  memset(&d, 0, sizeof d);
  ps_check(L, c->be->device_info(c->b, (int)i, &d), "(reading device %d)", (int)i);
  lua_createtable(L, 0, 13);
  lua_pushinteger(L, i);
  lua_setfield(L, -2, "index");
  ps_pushdefaults(L);                  /* the name a sim profile gives, else the backend's */
  if (lua_getfield(L, -1, "device_name") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushstring(L, d.name);
  }
  lua_remove(L, -2);
  lua_setfield(L, -2, "name");
  lua_pushinteger(L, (lua_Integer)d.total);
  lua_setfield(L, -2, "total");
  lua_pushinteger(L, (lua_Integer)d.free);
  lua_setfield(L, -2, "free");
  lua_pushfstring(L, "%d.%d", d.cc_major, d.cc_minor);
  lua_setfield(L, -2, "cc");
  lua_pushboolean(L, d.pools_supported);
  lua_setfield(L, -2, "pools_supported");
  lua_pushstring(L, d.driver);
  lua_setfield(L, -2, "driver");
  lua_pushinteger(L, d.driver_api);
  lua_setfield(L, -2, "driver_api");
  lua_pushinteger(L, d.runtime_api);
  lua_setfield(L, -2, "runtime_api");
  ps_limit_push(L, c);
  return 1;
}

static int dev_sync(lua_State *L) {
  ps_ctx *c = ps_context(L);
  ps_wait_begin(L, c);
  ps_check(L, c->be->device_sync(c->b), "(synchronizing the device)");
  ps_obs_waited(L, c, &(ps_what){ .op = PS_OP_DEVICE_SYNC });
  return 0;
}

/* The longest spin or sleep one call may ask for, in ms (about 31 years). */
#define MAX_WAIT_MS 1e12
/* Why the sim refused a valid spin or sleep within that limit: its
 * virtual clock (int64 ns) ends at 2^62 ns (src/sim/sim_model.h). */
static const char *wait_refused(int status) {
  return status == PS_ERR_CLOCK_END ? "; the virtual clock ends at 2^62 ns, about 146 years" : "";
}

/* A duration for spin or sleep: ps_checkduration, at most MAX_WAIT_MS. */
static double check_wait(lua_State *L, int arg) {
  double ms = ps_checkduration(L, arg);
  luaL_argcheck(L, ms <= MAX_WAIT_MS, arg, "duration above the limit of 1e12 ms per call");
  return ms;
}

static int dev_sleep(lua_State *L) {
  double ms = check_wait(L, 1);
  ps_ctx *c = ps_context(L);
  int st = c->be->sleep(c->b, ms);
  ps_check(L, st, "(sleeping %.*f ms%s)", ms == (double)(int64_t)ms ? 0 : 3, ms,
           wait_refused(st));
  return 0;
}

static int dev_now(lua_State *L) {
  ps_ctx *c = ps_context(L);
  lua_pushnumber(L, c->be->now(c->b));
  return 1;
}

/* poolsh.wallclock() -> seconds on the host's monotonic clock, real time
 * on both backends (poolsh.now() is the virtual clock on sim). */
static int dev_wallclock(lua_State *L) {
  lua_pushnumber(L, ps_clock_s());
  return 1;
}

/* The stream for a primitive on the buffer at barg: the Stream at sarg,
 * else the buffer's own stream, else the default stream. */
static ps_streamud *work_stream(lua_State *L, int barg, int sarg, char *name, size_t n) {
  ps_streamud *s = NULL;
  if (!lua_isnoneornil(L, sarg)) s = ps_checkstream(L, sarg);
  else if ((s = ((ps_bufferud *)lua_touserdata(L, barg))->stream) == NULL || !s->live) {
    ps_pushdefaultstream(L);
    s = (ps_streamud *)lua_touserdata(L, -1);
    lua_pop(L, 1);                      /* kept alive by the defaults table */
  }
  ps_streamname(name, n, s);
  return s;
}

/* A buffer kernels can reach: not unregistered pageable memory. */
static ps_bufferud *check_device_visible(lua_State *L, int arg, const char *what) {
  ps_bufferud *b = ps_checkbuffer(L, arg);
  if (b->kind == PS_KIND_PAGEABLE && !b->registered)
    luaL_error(L, "poolsh.%s: b%d is pageable memory, which kernels cannot reach: "
               "poolsh.register it first", what, b->id);
  return b;
}

static int check_byte(lua_State *L, int arg) {
  lua_Integer v = luaL_checkinteger(L, arg);
  luaL_argcheck(L, v >= 0 && v <= 255, arg, "byte must be in 0..255");
  return (int)v;
}

/* poolsh.fill(buf, byte [, stream]). */
static int dev_fill(lua_State *L) {
  ps_bufferud *b = check_device_visible(L, 1, "fill");
  int byte = check_byte(L, 2);
  char n[16];
  ps_ctx *c = ps_context(L);
  ps_streamud *s = work_stream(L, 1, 3, n, sizeof n);
  ps_check_reach(L, c, b, s, "poolsh.fill");
  ps_check(L, c->be->fill(c->b, b->addr, b->size, byte, s->h), "(filling b%d on stream %s)", b->id, n);
  ps_obs_enqueued(L, c, &(ps_what){ .op = PS_OP_FILL, .stream = s, .buffer = b, .size = b->size });
  return 0;
}

/* poolsh.verify(buf, byte [, stream]) -> true | false, first_bad_offset. */
static int dev_verify(lua_State *L) {
  ps_bufferud *b = check_device_visible(L, 1, "verify");
  int byte = check_byte(L, 2);
  char n[16];
  ps_ctx *c = ps_context(L);
  ps_streamud *s = work_stream(L, 1, 3, n, sizeof n);
  ps_check_reach(L, c, b, s, "poolsh.verify");
  int64_t bad = -1;
  ps_wait_begin(L, c);               /* the host waits for s: a synchronisation */
  ps_check(L, c->be->verify(c->b, b->addr, b->size, byte, s->h, &bad),
           "(verifying b%d on stream %s)", b->id, n);
  ps_obs_waited(L, c, &(ps_what){ .op = PS_OP_VERIFY, .stream = s, .buffer = b, .size = b->size });
  lua_pushboolean(L, bad < 0);
  if (bad < 0) return 1;
  lua_pushinteger(L, (lua_Integer)bad);
  return 2;
}

/* poolsh.touch(buf [, stream]): reads and writes every byte. */
static int dev_touch(lua_State *L) {
  ps_bufferud *b = check_device_visible(L, 1, "touch");
  char n[16];
  ps_ctx *c = ps_context(L);
  ps_streamud *s = work_stream(L, 1, 2, n, sizeof n);
  ps_check_reach(L, c, b, s, "poolsh.touch");
  ps_check(L, c->be->touch(c->b, b->addr, b->size, s->h), "(touching b%d on stream %s)", b->id, n);
  ps_obs_enqueued(L, c, &(ps_what){ .op = PS_OP_TOUCH, .stream = s, .buffer = b, .size = b->size });
  return 0;
}

/* poolsh.spin(stream, duration): keeps the stream busy that long. The
 * duration is parsed first: a Lua parser may destroy the stream. */
static int dev_spin(lua_State *L) {
  double ms = check_wait(L, 2);
  ps_streamud *s = ps_optstream(L, 1);
  ps_ctx *c = ps_context(L);
  char n[16];
  int st = c->be->spin(c->b, s->h, ms);
  ps_check(L, st, "(spinning stream %s%s)", ps_streamname(n, sizeof n, s), wait_refused(st));
  ps_obs_enqueued(L, c, &(ps_what){ .op = PS_OP_SPIN, .stream = s, .dur = ms });
  return 0;
}

/* Refuses a copy whose source and destination ranges overlap: CUDA leaves
 * it undefined. */
static void check_overlap(lua_State *L, const ps_bufferud *dst, uint64_t doff,
                          const ps_bufferud *src, uint64_t soff, uint64_t n) {
  ps_addr d = dst->addr + doff, s = src->addr + soff;
  if (n > 0 && d < s + n && s < d + n)
    luaL_error(L, "poolsh.copy: source and destination overlap (%I bytes from offset %I of b%d "
               "to offset %I of b%d): copy through a second buffer", (lua_Integer)n,
               (lua_Integer)soff, src->id, (lua_Integer)doff, dst->id);
}

/* poolsh.copy(dst, src [, {stream=, bytes=, dst_offset=, src_offset=}]).
 * Both buffers are checked again after the options are read: a size
 * parser or an __index written in Lua may free them. */
static int dev_copy(lua_State *L) {
  static const char *const opts[] = {"stream", "bytes", "dst_offset", "src_offset", NULL};
  ps_bufferud *dst = ps_checkbuffer(L, 1);
  ps_bufferud *src = ps_checkbuffer(L, 2);
  ps_checkoptions(L, 3, "poolsh.copy", opts);
  lua_settop(L, 3);
  uint64_t doff = 0, soff = 0, n;
  if (!lua_isnil(L, 3)) {
    doff = ps_fieldsize(L, 3, "dst_offset", "poolsh.copy", 0);
    soff = ps_fieldsize(L, 3, "src_offset", "poolsh.copy", 0);
    lua_getfield(L, 3, "stream");                            /* [.., stream?] */
  } else {
    lua_pushnil(L);
  }
  if (soff > src->size || doff > dst->size)
    return luaL_error(L, "poolsh.copy: offset beyond the end of b%d", soff > src->size ? src->id : dst->id);
  n = src->size - soff;
  if (!lua_isnil(L, 3)) n = ps_fieldsize(L, 3, "bytes", "poolsh.copy", n);
  dst = ps_checkbuffer(L, 1);
  src = ps_checkbuffer(L, 2);
  if (n > src->size - soff || n > dst->size - doff)
    return luaL_error(L, "poolsh.copy: %I bytes out of bounds (b%d: %I bytes from offset %I, "
                      "b%d: %I bytes from offset %I)", (lua_Integer)n,
                      src->id, (lua_Integer)src->size, (lua_Integer)soff,
                      dst->id, (lua_Integer)dst->size, (lua_Integer)doff);
  check_overlap(L, dst, doff, src, soff, n);
  char name[16];
  ps_ctx *c = ps_context(L);
  ps_streamud *s = work_stream(L, dst->kind == PS_KIND_POOL ? 1 : 2, 4, name, sizeof name);
  ps_check(L, c->be->copy(c->b, dst->addr + doff, src->addr + soff, n, s->h),
           "(copying %llu bytes from b%d to b%d on stream %s)", (unsigned long long)n,
           src->id, dst->id, name);
  ps_obs_enqueued(L, c, &(ps_what){ .op = PS_OP_COPY, .stream = s, .buffer = dst, .other = src,
                                    .offset = doff, .size = n });
  return 0;
}

/* poolsh.core.device_name(name): the sim's devices are shown under name
 * (a loaded profile's: poolsh/profile.lua). */
static int dev_name(lua_State *L) {
  luaL_checkstring(L, 1);
  ps_pushdefaults(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "device_name");
  return 0;
}

/* poolsh.core.option(name [, value]) -> the backend option's value. */
static int dev_option(lua_State *L) {
  const char *k = luaL_checkstring(L, 1);
  ps_ctx *c = ps_context(L);
  lua_settop(L, 2);
  const char *shown = ps_shown(L, 1);                 /* [k, v, shown] */
  if (!lua_isnil(L, 2))
    ps_check(L, c->be->option_set(c->b, k, luaL_checknumber(L, 2)),
             "(setting the %s option '%s')", c->be->name, shown);
  double v = 0;
  ps_check(L, c->be->option_get(c->b, k, &v), "(reading the %s option '%s')", c->be->name, shown);
  lua_Integer i;
  if (lua_numbertointeger(v, &i) && (double)i == v) lua_pushinteger(L, i);
  else lua_pushnumber(L, v);
  return 1;
}

/* poolsh.core.options() -> {name, ...} of the backend's options. */
static int dev_options(lua_State *L) {
  ps_ctx *c = ps_context(L);
  const char *names[128];
  int n = c->be->option_names(c->b, names, 128);
  if (n > 128) n = 128;
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* A device index for the peer calls: any int goes to the backend, which
 * answers cudaErrorInvalidDevice out of range. */
static int check_peer_device(lua_State *L, int arg) {
  lua_Integer d = luaL_checkinteger(L, arg);
  luaL_argcheck(L, d >= -(1 << 20) && d < 1 << 20, arg, "device index out of range");
  return (int)d;
}

/* poolsh.can_access_peer(dev, peer) -> boolean (cudaDeviceCanAccessPeer). */
static int dev_can_access_peer(lua_State *L) {
  int dev = check_peer_device(L, 1), peer = check_peer_device(L, 2);
  ps_ctx *c = ps_context(L);
  int can = 0;
  ps_check(L, c->be->device_can_access_peer(c->b, dev, peer, &can),
           "(asking whether device %d can access device %d)", dev, peer);
  lua_pushboolean(L, can);
  return 1;
}

/* poolsh.enable_peer_access(peer [, dev]): cudaDeviceEnablePeerAccess
 * from dev (default poolsh's device) to peer's cudaMalloc'd memory.
 * Pools are not affected: they have their own access (p:set_access). */
static int dev_enable_peer_access(lua_State *L) {
  int peer = check_peer_device(L, 1);
  ps_ctx *c = ps_context(L);
  int dev = lua_isnoneornil(L, 2) ? c->device : check_peer_device(L, 2);
  ps_check(L, c->be->device_enable_peer(c->b, dev, peer),
           "(enabling peer access from device %d to device %d)", dev, peer);
  return 0;
}

static const luaL_Reg dev_funcs[] = {
  {"can_access_peer", dev_can_access_peer}, {"enable_peer_access", dev_enable_peer_access},
  {"device_count", dev_count}, {"device", dev_info}, {"sync", dev_sync},
  {"sleep", dev_sleep}, {"now", dev_now}, {"wallclock", dev_wallclock}, {"fill", dev_fill}, {"verify", dev_verify},
  {"touch", dev_touch}, {"spin", dev_spin}, {"copy", dev_copy},
  {"option", dev_option}, {"options", dev_options}, {NULL, NULL}
};

static const luaL_Reg dev_views[] = {
  {"device_name", dev_name}, {NULL, NULL}
};

/* Sets the functions into the module (arg 1), the views into the table
 * of views (arg 2). */
int poolsh_open_device(lua_State *L) {
  lua_settop(L, 2);
  ps_setfuncs(L, dev_views);
  lua_pop(L, 1);
  ps_setfuncs(L, dev_funcs);
  return 0;
}
