/*
 * pool.c: poolsh.Pool, a CUDA stream-ordered memory pool (cudaMemPool_t):
 * its settings as fields, its four usage counters, trim, alloc, destroy.
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bindings.h"
#include "naming.h"
#include "limit.h"
#include "render.h"
#include "share.h"

/* The pool settings readable and writable as fields: ps_setting_names. */
#define settings ps_setting_names
static const ps_pool_attr setting_attr[] = {
  PS_ATTR_RELEASE_THRESHOLD, PS_ATTR_FOLLOW_EVENT_DEPS, PS_ATTR_OPPORTUNISTIC,
  PS_ATTR_INTERNAL_DEPS
};


/* A Pool's fields: its settings (read from the backend), then these.
 * mt.fields in Lua, pool_index here. */
static const char *const pool_fields[] = {
  "location", "device", "max_size", "id", "name", "live", "default", "ipc", "imported",
  "exporter", NULL
};
#define NSETTINGS 4

static int setting_index(lua_State *L, int idx) {
  return ps_field(L, idx, settings);
}

/* A release threshold: a size, or "max" / math.huge for UINT64_MAX. */
static uint64_t check_threshold(lua_State *L, int arg) {
  uint64_t v = 0;
  if (lua_type(L, arg) == LUA_TNUMBER && lua_tonumber(L, arg) == HUGE_VAL) return UINT64_MAX;
  if (lua_type(L, arg) == LUA_TNUMBER && lua_tonumber(L, arg) < 0)
    luaL_error(L, "poolsh.Pool: release_threshold: size must not be negative");
  if (lua_type(L, arg) == LUA_TSTRING && strcmp(lua_tostring(L, arg), "max") == 0)
    return UINT64_MAX;
  const char *err = ps_tosize(L, arg, &v);
  if (err) luaL_error(L, "poolsh.Pool: release_threshold: %s", err);
  return v;
}

/* Writes setting i from the value at arg (a size or a boolean). */
static void set_setting(lua_State *L, ps_poolud *p, int i, int arg) {
  ps_ctx *c = ps_context(L);
  uint64_t v;
  if (i == 0) {
    v = check_threshold(L, arg);
  } else {
    if (!lua_isboolean(L, arg))
      luaL_error(L, "poolsh.Pool: %s must be a boolean, got %s", settings[i], luaL_typename(L, arg));
    v = (uint64_t)lua_toboolean(L, arg);
  }
  if (!p->live)          /* a size parser written in Lua may have destroyed it */
    luaL_error(L, "attempt to use a destroyed poolsh.Pool (p%d)", p->id);
  ps_check(L, c->be->pool_set(c->b, p->h, setting_attr[i], v), "(setting %s of pool p%d%s)",
           settings[i], p->id, p->imported ? ": an imported pool's memory is its exporter's" : "");
  ps_obs_pool_set(L, c, &(ps_what){ .op = PS_OP_SET, .pool = p, .setting = i, .value = v });
}

/* An imported pool's attributes cannot be read (the driver answers
 * cudaErrorInvalidValue, measured): its counters read 0 here, as it holds
 * nothing of its own; its settings raise, saying why. */
static uint64_t get_attr(lua_State *L, ps_poolud *p, ps_pool_attr a) {
  ps_ctx *c = ps_context(L);
  uint64_t v = 0;
  if (p->imported && a >= PS_ATTR_RESERVED_CURRENT) return 0;
  ps_check(L, c->be->pool_get(c->b, p->h, a, &v), "(reading pool p%d%s)", p->id,
           p->imported ? ": an imported pool's settings are its exporter's" : "");
  return v;
}

static int pool_index(lua_State *L);

/* __index of a Pool's methods table: the fields of the Pool bound as
 * upvalue 3 (upvalues 1 and 2 are pool_index's: context and methods). */
static int pool_field(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(3));
  lua_replace(L, 1);
  return pool_index(L);
}

static int pool_alloc_own(lua_State *L);

/* Gives the Pool at ud a metatable of its own, a copy of poolsh.Pool's
 * whose __index is a table of the methods: p:alloc(...) then costs no
 * metamethod call. Fields fall through to pool_field, bound to this Pool.
 * The metatable keeps, at MT_POOL_CACHE, a weak-valued table of the
 * metatables of this Pool's Buffers by stream (ps_push_buffer_mt); this
 * Pool's alloc has it as upvalue 3 (ps_push_buffer_mt). Pools are few; the alloc+free hot
 * path goes through p:alloc. */
static void set_pool_metatable(lua_State *L, int ud) {
  lua_getiuservalue(L, PS_UP_CTX, PS_UV_POOL);   /* [shared] */
  lua_createtable(L, 1, 12);                      /* [shared, mt] */
  ps_copytable(L, -2);
  lua_createtable(L, 1, 1);                       /* [shared, mt, cache] */
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_rawseti(L, -2, MT_POOL_CACHE);              /* [shared, mt] */
  lua_getfield(L, -1, "methods");                 /* [shared, mt, methods] */
  lua_createtable(L, 0, 8);                       /* [.., methods, index] */
  ps_copytable(L, -2);
  lua_pushvalue(L, PS_UP_CTX);                    /* index.alloc: this Pool's */
  lua_pushvalue(L, -3);
  lua_rawgeti(L, -5, MT_POOL_CACHE);
  lua_pushvalue(L, ud);                           /* a kept p.alloc keeps p alive */
  lua_pushcclosure(L, pool_alloc_own, 4);
  lua_setfield(L, -2, "alloc");
  lua_createtable(L, 0, 1);                       /* [.., methods, index, imt] */
  lua_pushvalue(L, PS_UP_CTX);
  lua_pushvalue(L, -4);
  lua_pushvalue(L, ud);
  lua_pushcclosure(L, pool_field, 3);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);                        /* [shared, mt, methods, index] */
  lua_setfield(L, -3, "__index");
  lua_pop(L, 1);                                  /* [shared, mt] */
  lua_setmetatable(L, ud);
  lua_pop(L, 1);
}

/* Pushes a new Pool userdata (closed) with its metatable. */
static ps_poolud *new_poolud(lua_State *L) {
  ps_poolud *p = (ps_poolud *)ps_newobject(L, PS_UV_POOL, 0);
  set_pool_metatable(L, lua_gettop(L));
  p->id = ps_nextid(L, PS_ID_POOL);
  return p;
}

/* apply_settings(opts, pool): writes the settings opts gives (its upvalue:
 * the context). */
static int apply_settings(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 2);
  for (int i = 0; i < NSETTINGS; i++) {
    if (lua_getfield(L, 1, settings[i]) != LUA_TNIL) set_setting(L, p, i, lua_gettop(L));
    lua_settop(L, 2);
  }
  return 0;
}

static int pool_release(lua_State *L, ps_poolud *p, int from_gc);

/* poolsh.pool{location=, device=, max_size=, release_threshold=,
 * follow_event_dependencies=, opportunistic=, internal_dependencies=}. */
static int pool_new(lua_State *L) {
  static const char *const opts[] = {
    "location", "device", "max_size", "release_threshold",
    "follow_event_dependencies", "opportunistic", "internal_dependencies", "name", "ipc", NULL
  };
  static const char *const locations[] = {"device", "host", NULL};
  ps_checkoptions(L, 1, "poolsh.pool", opts);
  lua_settop(L, 1);
  ps_ctx *c = ps_context(L);
  ps_pool_props props = {PS_LOCATION_DEVICE, c->device, 0, 0};
  if (!lua_isnoneornil(L, 1)) {
    if (lua_getfield(L, 1, "location") != LUA_TNIL) {
      const char *loc = lua_tostring(L, -1);
      if (loc && strcmp(loc, locations[1]) == 0) props.location = PS_LOCATION_HOST;
      else if (!loc || strcmp(loc, locations[0]) != 0)
        luaL_error(L, "poolsh.pool: location must be \"device\" or \"host\", got '%s'",
                   ps_shown(L, -1));
    }
    if (lua_getfield(L, 1, "device") != LUA_TNIL)
      props.device = ps_todevice(L, lua_gettop(L), "poolsh.pool");
    ps_optname(L, 1);                             /* checked before the pool is made */
    props.ipc = ps_optfield_bool(L, 1, "ipc", 0);
    lua_settop(L, 1);
    props.max_size = ps_fieldsize(L, 1, "max_size", "poolsh.pool", 0);
  }
  ps_poolud *p = new_poolud(L);
  p->props = props;
  int st = c->be->pool_create(c->b, &props, &p->h);
  if (st != PS_OK)
    ps_fail(L, st, "(creating %spool p%d on %s %d%s%s)", props.ipc ? "IPC " : "", p->id,
            props.location == PS_LOCATION_HOST ? "host" : "device", props.device,
            props.max_size ? ", max_size " : "",
            props.max_size ? ps_pushsize(L, props.max_size) : "");
  p->live = 1;
  ps_obs_pool_created(L, c, p);
  if (lua_isnoneornil(L, 1)) return 1;
  if (lua_getfield(L, 1, "name") != LUA_TNIL) ps_setname(L, PS_ID_POOL, p->id, -1);
  lua_settop(L, 2);
  lua_pushvalue(L, PS_UP_CTX);                    /* [opts, p, ctx] */
  lua_pushcclosure(L, apply_settings, 1);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) {          /* [opts, p, err] */
    pool_release(L, p, 0);                        /* no half-made pool stays live */
    return lua_error(L);
  }
  return 1;
}

/* poolsh.default_pool([dev]) -> the device's default pool (one Pool per
 * device and state). */
static int pool_default(lua_State *L) {
  ps_ctx *c = ps_context(L);
  int dev = lua_isnoneornil(L, 1) ? c->device : ps_todevice(L, 1, "poolsh.default_pool");
  ps_pushdefaults(L);
  lua_getfield(L, -1, "pools");
  lua_remove(L, -2);
  if (lua_rawgeti(L, -1, dev) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  ps_poolud *p = new_poolud(L);
  p->is_default = 1;
  p->props.device = (int)dev;
  ps_check(L, c->be->pool_default(c->b, (int)dev, &p->h),
           "(getting the default pool of device %d)", (int)dev);
  p->live = 1;
  ps_obs_pool_created(L, c, p);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, dev);
  return 1;
}

/* Destroys the pool once (never the default pool). Blocks still allocated
 * from it stay valid until freed: CUDA's rule for cudaMemPoolDestroy.
 * Returns the backend's status; the Pool is dead either way. */
static int pool_release(lua_State *L, ps_poolud *p, int from_gc) {
  if (!p->live || p->is_default) return PS_OK;
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  if (c->b) ps_obs_pool_destroying(L, c, p, from_gc);
  ps_share_stop(p->share);              /* the socket goes; the ledger stays for its buffers */
  int st = (c->b && p->h) ? c->be->pool_destroy(c->b, p->h) : PS_OK;
  p->live = 0;
  p->h = NULL;
  return st;
}

/* __close: destroys the pool (its buffers may outlive it). */
static int pool_close(lua_State *L) {
  ps_poolud *p = (ps_poolud *)ps_toud(L, 1, PS_UV_POOL);
  if (p == NULL) return luaL_typeerror(L, 1, PS_POOL);      /* called by hand */
  if (pool_release(L, p, 1) != PS_OK)
    lua_warning(L, "poolsh: destroying a pool failed", 0);
  return 0;
}

/* __gc: destroys the pool, then frees its export ledger: no buffer of it
 * is left (each keeps its Pool alive). */
static int pool_gc(lua_State *L) {
  pool_close(L);
  ps_poolud *p = (ps_poolud *)lua_touserdata(L, 1);
  ps_share_free(p->share);
  p->share = NULL;
  return 0;
}

/* p:export(path): serves IPC pool p to other poolsh processes at a
 * Unix-domain socket at path until p is destroyed or poolsh closes. */
static int pool_export(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  const char *path = ps_checksockpath(L, 2);
  ps_ctx *c = ps_context(L);
  if (p->imported)
    return luaL_error(L, "p%d is imported: only its exporter can export it", p->id);
  if (!p->props.ipc)
    return luaL_error(L, "p%d was not created with ipc = true: only an IPC pool can be exported",
                      p->id);
  if (p->share && ps_share_path(p->share))
    return luaL_error(L, "p%d is already exported at %s", p->id, ps_share_path(p->share));
  if (!p->share && !(p->share = ps_share_new(p->id)))
    return luaL_error(L, "p%d: cannot make its export ledger (out of memory)", p->id);
  int fd = -1;
  ps_check(L, c->be->pool_export(c->b, p->h, &fd), "(exporting pool p%d)", p->id);
  char err[256];
  if (ps_share_serve(p->share, path, fd, err, sizeof err) != 0) {
    close(fd);
    return luaL_error(L, "p%d:export: %s", p->id, err);
  }
  lua_settop(L, 1);
  return 1;
}

/* poolsh.import_pool(path [, timeout_ms]) -> the Pool another poolsh
 * process serves at path (p:export). */
static int pool_import(lua_State *L) {
  const char *path = ps_checksockpath(L, 1);
  double timeout = lua_isnoneornil(L, 2) ? 10000 : ps_checkduration(L, 2);
  ps_ctx *c = ps_context(L);
  ps_poolud *p = new_poolud(L);
  p->imported = 1;
  p->props.ipc = 1;
  int fd = -1;
  char err[300];
  int r = ps_share_connect(path, timeout, &c->interrupt, &fd, &p->share, err, sizeof err);
  if (r == PS_SHARE_INTERRUPTED) {
    c->interrupt = 0;
    return luaL_error(L, "poolsh.import_pool: %s", err);
  }
  if (r != 0) return luaL_error(L, "poolsh.import_pool: %s", err);
  int st = c->be->pool_import(c->b, fd, &p->h);
  close(fd);
  ps_check(L, st, "(importing pid %d's pool p%d from %s as p%d)", ps_share_pid(p->share),
           ps_share_pool(p->share), path, p->id);
  p->props.device = c->device;
  p->live = 1;
  ps_obs_pool_created(L, c, p);
  return 1;
}

/* ip:import(token [, stream]) -> Buffer: a block exported by another
 * process (b:export) mapped here, in imported pool ip. */
static int pool_import_buffer(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  ps_buffer_import(L, ps_context(L), p, 2, 3);
  return 1;
}

static int pool_destroy(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  if (p->is_default) return luaL_error(L, "the default pool cannot be destroyed");
  ps_context(L);
  ps_check(L, pool_release(L, p, 0), "(destroying pool p%d)", p->id);
  return 0;
}

/* Gives the table on top the metatable of poolsh.stats (how counters
 * print: sizes as sizes) when that module is loaded; values unchanged. */
static void stats_meta(lua_State *L) {
  int top = lua_gettop(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);    /* [st, loaded] */
  if (lua_getfield(L, -1, "poolsh.stats") == LUA_TTABLE &&       /* [st, loaded, mod] */
      lua_getfield(L, -1, "meta") == LUA_TTABLE)                 /* [st, loaded, mod, mt] */
    lua_setmetatable(L, top);
  lua_settop(L, top);
}

/* p:stats([{estimates = false}]) -> the driver's four counters (reserved,
 * used, reserved_high, used_high), the ledger's live, pending and
 * pending_count, and the free space estimate (free, largest_free,
 * free_estimated) unless estimates is false: the first estimate makes the
 * ledger keep the pool's block edges from then on. */
static int pool_stats(lua_State *L) {
  static const char *const opts[] = {"estimates", NULL};
  ps_poolud *p = ps_checkpool(L, 1);
  ps_checkoptions(L, 2, "p:stats", opts);
  int estimates = ps_optfield_bool(L, 2, "estimates", 1);
  static const char *const names[] = {"reserved", "reserved_high", "used", "used_high"};
  static const ps_pool_attr attrs[] = {PS_ATTR_RESERVED_CURRENT, PS_ATTR_RESERVED_HIGH,
                                       PS_ATTR_USED_CURRENT, PS_ATTR_USED_HIGH};
  lua_createtable(L, 0, 10);
  uint64_t reserved = 0;
  for (int i = 0; i < 4; i++) {
    uint64_t v = get_attr(L, p, attrs[i]);
    if (i == 0) reserved = v;
    lua_pushinteger(L, (lua_Integer)v);
    lua_setfield(L, -2, names[i]);
  }
  ps_obs_pool_view(L, ps_context(L), p, reserved, estimates);
  stats_meta(L);
  return 1;
}

/* p:reset_high(): both high-water marks back to the current values. */
static int pool_reset_high(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  ps_ctx *c = ps_context(L);
  ps_check(L, c->be->pool_set(c->b, p->h, PS_ATTR_RESERVED_HIGH, 0), "(resetting pool p%d)", p->id);
  ps_check(L, c->be->pool_set(c->b, p->h, PS_ATTR_USED_HIGH, 0), "(resetting pool p%d)", p->id);
  ps_obs_pool_set(L, c, &(ps_what){ .op = PS_OP_SET, .pool = p,
                                    .setting = PS_SET_RESET_HIGH });
  lua_settop(L, 1);
  return 1;
}

/* p:trim([keep]): gives reserved memory back until at most keep is held. */
static int pool_trim(lua_State *L) {
  uint64_t keep = ps_optsize(L, 2, 0);   /* first: a Lua parser may destroy the pool */
  ps_poolud *p = ps_checkpool(L, 1);
  ps_ctx *c = ps_context(L);
  ps_wait_begin(L, c);
  ps_check(L, c->be->pool_trim(c->b, p->h, keep), "(trimming pool p%d%s)", p->id,
           p->imported ? ": an imported pool's memory is its exporter's" : "");
  ps_obs_waited(L, c, &(ps_what){ .op = PS_OP_TRIM, .pool = p, .size = keep });
  lua_settop(L, 1);
  return 1;
}

/* Raises the failure of an allocation, naming size, pool and stream, or
 * the limit that refused it (limit.c). */
static int alloc_failed(lua_State *L, int st, uint64_t size, ps_poolud *p, ps_streamud *s) {
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  ps_obs_alloc_failed(L, c, p, s, size, st);
  ps_render(L, "poolsh.render.oom", 1);         /* the lines that explain it, or "" */
  const char *why = lua_tostring(L, -1);         /* stays on the stack, as sz */
  const char *sz = ps_pushsize(L, size);
  /* the pool and stream by the names shown everywhere else (naming.c) */
  ps_pushname(L, PS_ID_POOL, p->id);
  const char *pn = lua_tostring(L, -1);
  ps_pushname(L, PS_ID_STREAM, s->id);
  const char *sn = lua_tostring(L, -1);
  if (c->limited && c->lim.refused.on)           /* not the driver's lines, then */
    return ps_limit_fail(L, c, lua_pushfstring(L, "%s:alloc(%s)", pn, sz));
  if (p->imported)                              /* the GPU's answer, measured */
    return ps_fail(L, st, "allocating %s from pool %s on stream %s: %s is imported, and "
                   "an imported pool cannot allocate: only its exporter does",
                   sz, pn, sn, pn);
  return ps_fail(L, st, "allocating %s from pool %s on stream %s%s",   /* then why */
                 sz, pn, sn, why);
}

/* p:alloc(size [, stream]) -> Buffer. On out-of-memory, runs a full
 * collection (finalizers free unreachable buffers) and retries once.
 * The hot path of the alloc+free benchmark: few API calls. own: called
 * as a Pool's own alloc (upvalue 3: its cache of Buffer metatables, the
 * last stream's at index 1; upvalue 4: the Pool). */
static int alloc_on(lua_State *L, int own) {
  ps_ctx *c = ps_context(L);
  ps_poolud *p = (ps_poolud *)ps_toud(L, 1, PS_UV_POOL);
  if (p == NULL || !p->live) p = ps_checkpool(L, 1);
  int isint = 0;
  lua_Integer n = lua_tointegerx(L, 2, &isint);
  uint64_t size = (uint64_t)n;
  if (!isint || n <= 0 || lua_type(L, 2) != LUA_TNUMBER) {
    size = ps_checksize(L, 2);
    luaL_argcheck(L, size > 0, 2, "size must be at least 1 byte");
    p = ps_checkpool(L, 1);   /* a size parser written in Lua may destroy it */
  }
  ps_streamud *s = (ps_streamud *)ps_toud(L, 3, PS_UV_STREAM);
  if (s == NULL || !s->live) s = ps_optstream(L, 3);
  if (!own || lua_touserdata(L, lua_upvalueindex(4)) != p) {   /* another Pool's alloc */
    ps_push_buffer_mt(L, 1, 3, 0);
  } else if (lua_rawgeti(L, lua_upvalueindex(3), 1) != LUA_TTABLE || p->mt_stream != s) {
    lua_pop(L, 1);                                /* the last stream's is not at hand */
    ps_push_buffer_mt(L, 1, 3, lua_upvalueindex(3));
    lua_pushvalue(L, -1);
    lua_rawseti(L, lua_upvalueindex(3), 1);
    p->mt_stream = s;
  }
  ps_bufferud *b = ps_newbuffer(L, c, PS_KIND_POOL, size, -1);   /* [p, n, s, ..., mt, b] */
  b->stream = s;
  b->pool = p;
  ps_alloc_note note;                             /* the backend's word on reuse */
  int st = c->limited ? ps_limit_pool_alloc(L, c, b, &note)
                      : c->be->pool_alloc(c->b, p->h, size, s->h, &b->addr, &note);
  if (st == PS_ERR_MEMORY_ALLOCATION) {
    ps_obs_retry_begin(c, p);
    lua_gc(L, LUA_GCCOLLECT);   /* finalizers may run any code: check again */
    ps_free_deferred(L, c);     /* and memory they left (cudaMalloc'd) */
    p = ps_checkpool(L, 1);
    s = ps_checkstream(L, 3);
    st = c->limited ? ps_limit_pool_alloc(L, c, b, &note)
                    : c->be->pool_alloc(c->b, p->h, size, s->h, &b->addr, &note);
    ps_obs_retried(L, c, p, s, size);
  }
  if (st != PS_OK) return alloc_failed(L, st, size, p, s);
  b->live = 1;
  ps_obs_alloc(L, c, b, p, s, note.rule);
  return 1;
}

/* The shared p:alloc (poolsh.Pool's methods). */
static int pool_alloc(lua_State *L) { return alloc_on(L, 0); }

/* A Pool's own p:alloc, its cache of Buffer metatables at hand. */
static int pool_alloc_own(lua_State *L) { return alloc_on(L, 1); }

/* Access modes as Lua names them, by ps_access value order. */
static const char *const access_names[] = {"none", "read", "rw", NULL};
static const ps_access access_values[] = {PS_ACCESS_NONE, PS_ACCESS_READ, PS_ACCESS_RW};

/* A device index for the access calls: any int goes to the backend,
 * which answers cudaErrorInvalidDevice out of range (as the GPU does). */
static int check_access_device(lua_State *L, int arg) {
  lua_Integer d = luaL_checkinteger(L, arg);
  luaL_argcheck(L, d >= -(1 << 20) && d < 1 << 20, arg, "device index out of range");
  return (int)d;
}

static const char *access_name(ps_access a) {
  return a == PS_ACCESS_RW ? "rw" : a == PS_ACCESS_READ ? "read" : "none";
}

/* p:access(dev) -> "none" | "read" | "rw" (cudaMemPoolGetAccess). */
static int pool_access(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  int dev = check_access_device(L, 2);
  ps_ctx *c = ps_context(L);
  ps_access a = PS_ACCESS_NONE;
  ps_check(L, c->be->pool_get_access(c->b, p->h, dev, &a),
           "(reading the access of device %d to pool p%d)", dev, p->id);
  lua_pushstring(L, access_name(a));
  return 1;
}

/* p:set_access(dev, "rw" | "none" | "read") -> p (cudaMemPoolSetAccess):
 * the access covers every block of the pool, allocated before or after. */
static int pool_set_access(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  int dev = check_access_device(L, 2);
  ps_access a = access_values[luaL_checkoption(L, 3, NULL, access_names)];
  ps_ctx *c = ps_context(L);
  const char *why = "";
  if (a == PS_ACCESS_READ)
    why = ": CUDA supports only \"rw\" and \"none\" for pools";
  else if (p->props.location == PS_LOCATION_DEVICE && dev == p->props.device && a == PS_ACCESS_NONE)
    why = ": a pool's own device always has rw access";
  ps_check(L, c->be->pool_set_access(c->b, p->h, dev, a),
           "(setting the access of device %d to pool p%d to \"%s\"%s)", dev, p->id,
           access_name(a), why);
  ps_obs_pool_set(L, c, &(ps_what){ .op = PS_OP_SET, .pool = p, .setting = PS_SET_ACCESS,
                                    .value = PS_ACCESS_VALUE(dev, a) });
  lua_settop(L, 1);
  return 1;
}

static int pool_tostring(lua_State *L) {
  ps_poolud *p = (ps_poolud *)ps_checkud(L, 1, PS_UV_POOL, PS_POOL);
  const char *from = "";
  if (p->imported && p->share)
    from = lua_pushfstring(L, "imported from pid %d's p%d, ", ps_share_pid(p->share),
                           ps_share_pool(p->share));
  else if (p->props.ipc)
    from = "ipc, ";
  lua_pushfstring(L, "poolsh.Pool %s (%s%s%s %d%s)", ps_pushlabel(L, PS_ID_POOL, p->id), from,
                  p->is_default ? "default, " : "",
                  p->props.location == PS_LOCATION_HOST ? "host" : "device", p->props.device,
                  p->live ? "" : ", destroyed");
  return 1;
}

static int pool_index(lua_State *L) {
  if (ps_method(L)) return 1;
  ps_poolud *p = (ps_poolud *)ps_checkud(L, 1, PS_UV_POOL, PS_POOL);
  int i = setting_index(L, 2);
  if (i >= 0) {
    ps_checkpool(L, 1);
    uint64_t v = get_attr(L, p, setting_attr[i]);
    if (i > 0) lua_pushboolean(L, v != 0);
    else if (v > (uint64_t)LUA_MAXINTEGER) lua_pushnumber(L, HUGE_VAL);
    else lua_pushinteger(L, (lua_Integer)v);
    return 1;
  }
  switch (ps_field(L, 2, pool_fields)) {
    case 0: lua_pushstring(L, p->props.location == PS_LOCATION_HOST ? "host" : "device"); break;
    case 1: lua_pushinteger(L, p->props.device); break;
    case 2: lua_pushinteger(L, (lua_Integer)p->props.max_size); break;
    case 3: lua_pushinteger(L, p->id); break;
    case 4: ps_pushname(L, PS_ID_POOL, p->id); break;
    case 5: lua_pushboolean(L, p->live); break;
    case 6: lua_pushboolean(L, p->is_default); break;
    case 7: lua_pushboolean(L, p->props.ipc); break;
    case 8: lua_pushboolean(L, p->imported); break;
    case 9:                                      /* imported: "pid 1234's p1" */
      if (p->imported && p->share)
        lua_pushfstring(L, "pid %d's p%d", ps_share_pid(p->share), ps_share_pool(p->share));
      else lua_pushnil(L);
      break;
    default: lua_pushnil(L); break;              /* other keys read nil */
  }
  return 1;
}

static int pool_newindex(lua_State *L) {
  ps_poolud *p = ps_checkpool(L, 1);
  luaL_checkstring(L, 2);
  int i = setting_index(L, 2);
  if (i < 0) return ps_newindex_name(L, PS_ID_POOL, p->id, PS_POOL);
  set_setting(L, p, i, 3);
  return 0;
}

static const luaL_Reg pool_methods[] = {
  {"stats", pool_stats}, {"reset_high", pool_reset_high}, {"trim", pool_trim},
  {"alloc", pool_alloc}, {"destroy", pool_destroy}, {"access", pool_access},
  {"set_access", pool_set_access}, {"export", pool_export}, {"import", pool_import_buffer},
  {NULL, NULL}
};

static const luaL_Reg pool_meta[] = {
  {"__index", pool_index}, {"__newindex", pool_newindex}, {"__gc", pool_gc},
  {"__close", pool_close}, {"__tostring", pool_tostring}, {NULL, NULL}
};

static const luaL_Reg pool_funcs[] = {
  {"pool", pool_new}, {"default_pool", pool_default}, {"import_pool", pool_import},
  {NULL, NULL}
};

int poolsh_open_pool(lua_State *L) {
  ps_newclass(L, PS_UV_POOL, PS_POOL, pool_methods, pool_meta, settings);
  ps_addfields(L, PS_POOL, pool_fields);
  lua_settop(L, 1);
  ps_setfuncs(L, pool_funcs);
  return 0;
}
