/*
 * vmm.c: poolsh.Range and poolsh.Memory, CUDA's virtual memory management
 * (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess,
 * cuMemUnmap, cuMemRelease, cuMemAddressFree), and the poolsh.vmm table.
 * The two types share this file (docs/architecture.md says why: a
 * Range's mappings hold Memories, and neither is used without the other).
 *
 * A Range keeps its mappings in its first user value, a table by offset of
 * {size, memory, memory_offset, access}, which holds each mapped Memory
 * alive; its second user value is a weak-keyed table of the Buffers
 * r:buffer made, which end (read as freed) when their bytes are unmapped
 * or lose the context device's "rw" access, so no view ever reaches bytes
 * the GPU would fault on. Every Range and Memory also sits in the
 * registry's weak table of VMM objects, which poolsh.core.reset() ends.
 */
#include <stdio.h>
#include <string.h>

#include "bindings.h"
#include "limit.h"
#include "names.h"

#define PS_RANGE "poolsh.Range"
#define PS_MEMORY "poolsh.Memory"
#define VMM_STATE "poolsh.vmm.state"

typedef struct vmm_range {
  ps_addr addr;
  uint64_t size;
  int id, live;
} vmm_range;

typedef struct vmm_memory {
  ps_vmm_handle *h;
  uint64_t size;
  ps_location location;
  int device, id, live;
  int maps;                  /* the mappings of it that Ranges hold */
  uint64_t held;             /* bytes counted in ps_limits until the memory goes */
} vmm_memory;

enum { UV_MAPS = 1, UV_VIEWS = 2 };

static const char *const access_names[] = {"none", "read", "rw", NULL};
static const ps_access access_codes[] = {PS_ACCESS_NONE, PS_ACCESS_READ, PS_ACCESS_RW};

static const char *access_name(ps_access a) {
  return a == PS_ACCESS_RW ? "rw" : a == PS_ACCESS_READ ? "read" : "none";
}

/* Pushes the registry's VMM state {objects = weak-keyed set, r = last
 * Range id, m = last Memory id}, made on first use. */
static void push_state(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, VMM_STATE) == LUA_TTABLE) return;
  lua_pop(L, 1);
  lua_createtable(L, 0, 3);
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "objects");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, VMM_STATE);
}

/* The next id of kind key ("r" or "m"), and the object at idx joins the
 * registry's set of VMM objects. */
static int next_id(lua_State *L, int idx, const char *key) {
  idx = lua_absindex(L, idx);
  push_state(L);
  lua_getfield(L, -1, key);
  int id = (int)lua_tointeger(L, -1) + 1;
  lua_pop(L, 1);
  lua_pushinteger(L, id);
  lua_setfield(L, -2, key);
  lua_getfield(L, -1, "objects");
  lua_pushvalue(L, idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 2);
  return id;
}

static vmm_range *torange(lua_State *L, int arg) {
  return (vmm_range *)luaL_checkudata(L, arg, PS_RANGE);
}
static vmm_memory *tomemory(lua_State *L, int arg) {
  return (vmm_memory *)luaL_checkudata(L, arg, PS_MEMORY);
}

/* The Range at arg, refusing a freed one. */
static vmm_range *checkrange(lua_State *L, int arg) {
  vmm_range *r = torange(L, arg);
  if (!r->live) luaL_error(L, "attempt to use a freed poolsh.Range (r%d)", r->id);
  return r;
}

/* The Memory at arg, refusing a released one. */
static vmm_memory *checkmemory(lua_State *L, int arg) {
  vmm_memory *m = tomemory(L, arg);
  if (!m->live) luaL_error(L, "attempt to use a released poolsh.Memory (m%d)", m->id);
  return m;
}

/* Raises when the backend has no VMM operations (a cuda build without
 * them). */
static ps_ctx *vmm_context(lua_State *L, const void *op, const char *what) {
  ps_ctx *c = ps_context(L);
  if (!op) ps_fail(L, PS_ERR_NOT_SUPPORTED, "(%s: the %s backend has no VMM operations)", what,
                   c->be->name);
  return c;
}

/* Reports one VMM call to the observation layer. */
static void report(lua_State *L, ps_ctx *c, ps_op op, int range, int memory, ps_addr addr,
                   uint64_t size, uint64_t memory_offset, int location, int device, int access) {
  ps_obs_vmm(L, c, &(ps_vmm_what){ .op = op, .range = range, .memory = memory, .addr = addr,
                                  .size = size, .memory_offset = memory_offset,
                                  .location = location, .device = device, .access = access });
}

/* "device" or "host" at field location of the options at arg. */
static ps_location opt_location(lua_State *L, int arg, const char *what) {
  ps_location loc = PS_LOCATION_DEVICE;
  if (!lua_isnoneornil(L, arg) && lua_getfield(L, arg, "location") != LUA_TNIL) {
    const char *s = lua_tostring(L, -1);
    if (lua_type(L, -1) == LUA_TSTRING && strcmp(s, "host") == 0) loc = PS_LOCATION_HOST;
    else if (lua_type(L, -1) != LUA_TSTRING || strcmp(s, "device") != 0)
      luaL_error(L, "%s: location must be \"device\" or \"host\", got %s", what,
                 ps_shown(L, -1));
  }
  if (!lua_isnoneornil(L, arg)) lua_pop(L, 1);
  return loc;
}

/* Field device of the options at arg, else def. */
static int opt_device(lua_State *L, int arg, const char *what, int def) {
  if (lua_isnoneornil(L, arg)) return def;
  if (lua_getfield(L, arg, "device") != LUA_TNIL) def = ps_todevice(L, -1, what);
  lua_pop(L, 1);
  return def;
}

/* ---- poolsh.vmm ---- */

/* poolsh.vmm.granularity([{location=, device=, recommended=}]) -> bytes.
 * A device index that does not exist is refused here: the driver would
 * answer it with success. */
static int vmm_granularity(lua_State *L) {
  static const char *const opts[] = {"location", "device", "recommended", NULL};
  ps_checkoptions(L, 1, "poolsh.vmm.granularity", opts);
  ps_ctx *c = vmm_context(L, ps_context(L)->be->vmm_granularity, "poolsh.vmm.granularity");
  ps_location loc = opt_location(L, 1, "poolsh.vmm.granularity");
  int dev = opt_device(L, 1, "poolsh.vmm.granularity", loc == PS_LOCATION_HOST ? 0 : c->device);
  int rec = ps_optfield_bool(L, 1, "recommended", 0);
  if (loc == PS_LOCATION_DEVICE) {   /* the H200's driver answers any device index */
    int n = 0;
    ps_check(L, c->be->device_count(c->b, &n), "(counting devices)");
    if (dev >= n)
      return luaL_error(L, "poolsh.vmm.granularity: device %d does not exist "
                        "(poolsh.device_count() is %d)", dev, n);
  }
  uint64_t g = 0;
  ps_check(L, c->be->vmm_granularity(c->b, loc, dev, rec, &g),
           "(the VMM granularity of %s %d)", loc == PS_LOCATION_HOST ? "host node" : "device",
           dev);
  lua_pushinteger(L, (lua_Integer)g);
  return 1;
}

/* poolsh.vmm.reserve(size [, {align=}]) -> a Range (cuMemAddressReserve). */
static int vmm_reserve(lua_State *L) {
  static const char *const opts[] = {"align", NULL};
  uint64_t size = ps_checksize(L, 1);
  ps_checkoptions(L, 2, "poolsh.vmm.reserve", opts);
  uint64_t align = lua_isnoneornil(L, 2) ? 0 : ps_fieldsize(L, 2, "align", "poolsh.vmm.reserve", 0);
  ps_ctx *c = vmm_context(L, ps_context(L)->be->vmm_reserve, "poolsh.vmm.reserve");
  lua_settop(L, 2);
  vmm_range *r = (vmm_range *)lua_newuserdatauv(L, sizeof *r, 2);   /* 3: closed */
  memset(r, 0, sizeof *r);
  luaL_setmetatable(L, PS_RANGE);
  lua_newtable(L);
  lua_setiuservalue(L, 3, UV_MAPS);
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setiuservalue(L, 3, UV_VIEWS);
  r->id = next_id(L, 3, "r");
  ps_check(L, c->be->vmm_reserve(c->b, size, align, &r->addr), "(reserving %s of addresses%s)",
           ps_pushsize(L, size), align ? " aligned" : "");
  r->size = size;
  r->live = 1;
  report(L, c, PS_OP_VMM_RESERVE, r->id, -1, r->addr, size, 0, -1, -1, -1);
  lua_settop(L, 3);
  return 1;
}

/* poolsh.vmm.create(size [, {location=, device=}]) -> a Memory (cuMemCreate). */
static int vmm_create(lua_State *L) {
  static const char *const opts[] = {"location", "device", NULL};
  uint64_t size = ps_checksize(L, 1);
  ps_checkoptions(L, 2, "poolsh.vmm.create", opts);
  ps_ctx *c = vmm_context(L, ps_context(L)->be->vmm_create, "poolsh.vmm.create");
  ps_location loc = opt_location(L, 2, "poolsh.vmm.create");
  int dev = opt_device(L, 2, "poolsh.vmm.create", loc == PS_LOCATION_HOST ? 0 : c->device);
  lua_settop(L, 2);
  vmm_memory *m = (vmm_memory *)lua_newuserdatauv(L, sizeof *m, 0);   /* 3: closed */
  memset(m, 0, sizeof *m);
  luaL_setmetatable(L, PS_MEMORY);
  m->id = next_id(L, 3, "m");
  int st = PS_ERR_MEMORY_ALLOCATION, host = loc == PS_LOCATION_HOST;
  for (int try = 0; try < 2 && st == PS_ERR_MEMORY_ALLOCATION; try++) {
    if (try) lua_gc(L, LUA_GCCOLLECT);   /* released Memories' finalizers give memory back */
    st = c->limited ? ps_limit_check(L, c, host, size) : PS_OK;
    if (st == PS_OK) st = c->be->vmm_create(c->b, loc, dev, size, &m->h);
  }
  if (st != PS_OK && c->limited && c->lim.refused.on)
    ps_limit_fail(L, c, lua_pushfstring(L, "poolsh.vmm.create(%s%s)", ps_pushsize(L, size),
                                        host ? ", host" : ""));
  ps_check(L, st, "(creating %s of %s memory on %s %d)", ps_pushsize(L, size),
           loc == PS_LOCATION_HOST ? "host" : "device",
           loc == PS_LOCATION_HOST ? "node" : "device", dev);
  m->size = size, m->location = loc, m->device = dev;
  m->held = size;
  ps_limit_vmm_took(c, host, size);
  m->live = 1;
  report(L, c, PS_OP_VMM_CREATE, -1, m->id, 0, size, 0, loc, dev, -1);
  lua_settop(L, 3);
  return 1;
}

/* poolsh.vmm.ranges() -> the live Ranges, by id (the live view and
 * poolsh.map read them). */
static int vmm_ranges(lua_State *L) {
  push_state(L);
  lua_getfield(L, -1, "objects");
  int t = lua_gettop(L);
  lua_newtable(L);
  int out = t + 1, n = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    vmm_range *r = (vmm_range *)luaL_testudata(L, -1, PS_RANGE);
    if (!r || !r->live) continue;
    int i = ++n;                         /* insertion by id: ranges are few */
    while (i > 1) {
      lua_rawgeti(L, out, i - 1);
      if (((vmm_range *)lua_touserdata(L, -1))->id < r->id) { lua_pop(L, 1); break; }
      lua_rawseti(L, out, i);
      i--;
    }
    lua_pushvalue(L, -1);
    lua_rawseti(L, out, i);
  }
  lua_settop(L, out);
  return 1;
}

/* ---- mappings ---- */

/* Pushes r's mappings table (user value 1); its index. */
static int push_maps(lua_State *L, int rarg) {
  lua_getiuservalue(L, rarg, UV_MAPS);
  return lua_gettop(L);
}

/* Reads mapping entry at idx: its size and the context device's access. */
static uint64_t entry_size(lua_State *L, int idx) {
  lua_getfield(L, idx, "size");
  uint64_t n = (uint64_t)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return n;
}

/* Ends r's views that overlap [off, off + n): they read as freed. */
static void end_views(lua_State *L, int rarg, const vmm_range *r, uint64_t off, uint64_t n) {
  lua_getiuservalue(L, rarg, UV_VIEWS);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    ps_bufferud *b = (ps_bufferud *)lua_touserdata(L, -1);
    if (b && b->live && b->addr - r->addr < off + n && off < b->addr - r->addr + b->size)
      b->live = 0;
  }
  lua_pop(L, 1);
}

/* Once m is released and its last mapping unmapped, its physical memory
 * has gone (cuMemRelease's rule): it stops counting against the limits. */
static void memory_gone(ps_ctx *c, vmm_memory *m) {
  if (m->live || m->maps > 0 || !m->held) return;
  ps_limit_vmm_gone(c, m->location == PS_LOCATION_HOST, m->held);
  m->held = 0;
}

/* The mapping entry on top was unmapped: its Memory has one mapping less. */
static void entry_unmapped(lua_State *L, ps_ctx *c) {
  lua_getfield(L, -1, "memory");
  vmm_memory *m = (vmm_memory *)luaL_testudata(L, -1, PS_MEMORY);
  lua_pop(L, 1);
  if (!m) return;
  if (m->maps > 0) m->maps--;
  memory_gone(c, m);
}

/* Refuses [off, off + size) past r's end with the GPU's answer to bytes
 * outside any reservation (cudaErrorInvalidValue), before the backend,
 * which takes the bytes of any reservation, a neighbouring range's too,
 * that r's own records would then not hold (its views could reach
 * unmapped bytes). */
static void check_inside(lua_State *L, const vmm_range *r, uint64_t off, uint64_t size,
                         const char *what) {
  if (off > r->size || size > r->size - off)
    ps_fail(L, PS_ERR_INVALID_VALUE, "(r%d:%s: bytes [%llu, %llu) out of bounds of r%d, %llu bytes)",
            r->id, what, (unsigned long long)off, (unsigned long long)off + size, r->id,
            (unsigned long long)r->size);
}

/* r:map(offset, m [, memory_offset [, size]]) -> r (cuMemMap). */
static int range_map(lua_State *L) {
  vmm_range *r = checkrange(L, 1);
  uint64_t off = ps_checksize(L, 2);
  vmm_memory *m = checkmemory(L, 3);
  uint64_t moff = ps_optsize(L, 4, 0);
  uint64_t size = ps_optsize(L, 5, moff <= m->size ? m->size - moff : 0);
  ps_ctx *c = vmm_context(L, ps_context(L)->be->vmm_map, "r:map");
  checkrange(L, 1), checkmemory(L, 3);   /* a size parser written in Lua may have ended them */
  check_inside(L, r, off, size, "map");
  ps_check(L, c->be->vmm_map(c->b, r->addr + off, size, moff, m->h),
           "(mapping %s of m%d from offset %llu at r%d + %llu)", ps_pushsize(L, size), m->id,
           (unsigned long long)moff, r->id, (unsigned long long)off);
  int t = push_maps(L, 1);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)size);
  lua_setfield(L, -2, "size");
  lua_pushvalue(L, 3);
  lua_setfield(L, -2, "memory");
  lua_pushinteger(L, (lua_Integer)moff);
  lua_setfield(L, -2, "memory_offset");
  lua_newtable(L);                      /* access by device: none until set_access */
  lua_setfield(L, -2, "access");
  lua_rawseti(L, t, (lua_Integer)off);
  m->maps++;
  report(L, c, PS_OP_VMM_MAP, r->id, m->id, r->addr + off, size, moff, -1, -1, -1);
  lua_settop(L, 1);
  return 1;
}

/* r:unmap(offset, size) -> r (cuMemUnmap of whole mappings). */
static int range_unmap(lua_State *L) {
  vmm_range *r = checkrange(L, 1);
  uint64_t off = ps_checksize(L, 2), size = ps_checksize(L, 3);
  ps_ctx *c = vmm_context(L, ps_context(L)->be->vmm_unmap, "r:unmap");
  checkrange(L, 1);
  check_inside(L, r, off, size, "unmap");
  ps_check(L, c->be->vmm_unmap(c->b, r->addr + off, size), "(unmapping r%d + %llu, %s)", r->id,
           (unsigned long long)off, ps_pushsize(L, size));
  int t = push_maps(L, 1);
  lua_pushnil(L);
  while (lua_next(L, t)) {               /* clearing fields while traversing is allowed */
    lua_Integer o = lua_tointeger(L, -2);
    if ((uint64_t)o >= off && (uint64_t)o - off < size) entry_unmapped(L, c);
    lua_pop(L, 1);
    if ((uint64_t)o >= off && (uint64_t)o - off < size) {
      lua_pushvalue(L, -1);
      lua_pushnil(L);
      lua_rawset(L, t);
    }
  }
  end_views(L, 1, r, off, size);
  report(L, c, PS_OP_VMM_UNMAP, r->id, -1, r->addr + off, size, 0, -1, -1, -1);
  lua_settop(L, 1);
  return 1;
}

/* r:set_access(offset, size [, {device=, access=}]) -> r (cuMemSetAccess). */
static int range_set_access(lua_State *L) {
  static const char *const opts[] = {"device", "access", NULL};
  vmm_range *r = checkrange(L, 1);
  uint64_t off = ps_checksize(L, 2), size = ps_checksize(L, 3);
  ps_checkoptions(L, 4, "r:set_access", opts);
  ps_ctx *c = vmm_context(L, ps_context(L)->be->vmm_set_access, "r:set_access");
  int dev = opt_device(L, 4, "r:set_access", c->device);
  ps_access a = PS_ACCESS_RW;
  if (!lua_isnoneornil(L, 4) && lua_getfield(L, 4, "access") != LUA_TNIL) {
    int i = -1;
    if (lua_type(L, -1) == LUA_TSTRING)
      for (int k = 0; access_names[k]; k++)
        if (strcmp(access_names[k], lua_tostring(L, -1)) == 0) i = k;
    if (i < 0)
      luaL_error(L, "r:set_access: access must be \"rw\", \"read\" or \"none\", got %s",
                 ps_shown(L, -1));
    a = access_codes[i];
  }
  lua_settop(L, 4);
  checkrange(L, 1);
  check_inside(L, r, off, size, "set_access");
  ps_check(L, c->be->vmm_set_access(c->b, r->addr + off, size, dev, a),
           "(setting device %d's access to r%d + %llu, %s, to \"%s\")", dev, r->id,
           (unsigned long long)off, ps_pushsize(L, size), access_name(a));
  int t = push_maps(L, 1);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_Integer o = lua_tointeger(L, -2);
    if ((uint64_t)o >= off && (uint64_t)o - off < size) {
      lua_getfield(L, -1, "access");
      lua_pushstring(L, access_name(a));
      lua_rawseti(L, -2, dev + 1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  if (dev == c->device && a != PS_ACCESS_RW) end_views(L, 1, r, off, size);
  report(L, c, PS_OP_VMM_SET_ACCESS, r->id, -1, r->addr + off, size, 0, -1, dev, a);
  lua_settop(L, 1);
  return 1;
}

/* The access device dev has to the mapping entry on top ("none" when
 * never set); pushes nothing. */
static const char *entry_access(lua_State *L, int dev) {
  lua_getfield(L, -1, "access");
  lua_rawgeti(L, -1, dev + 1);
  const char *s = lua_isstring(L, -1) ? lua_tostring(L, -1) : "none";
  lua_pop(L, 2);
  return s;   /* an interned constant of access_names, kept by the entry */
}

/* r:buffer(offset, size) -> a Buffer view of mapped bytes the context's
 * device may read and write; anything else is refused before the GPU
 * could fault. */
static int range_buffer(lua_State *L) {
  vmm_range *r = checkrange(L, 1);
  uint64_t off = ps_checksize(L, 2), size = ps_checksize(L, 3);
  ps_ctx *c = ps_context(L);
  checkrange(L, 1);
  luaL_argcheck(L, size > 0, 3, "size must be at least 1 byte");
  if (off > r->size || size > r->size - off) {
    char end[24];                        /* past LUA_MAXINTEGER when both are huge */
    snprintf(end, sizeof end, "%llu", (unsigned long long)off + size);
    return luaL_error(L, "r%d:buffer: bytes [%I, %s) out of bounds of r%d (%I bytes)", r->id,
                      (lua_Integer)off, end, r->id, (lua_Integer)r->size);
  }
  /* walk the mappings that cover [off, off + size), in order */
  int t = push_maps(L, 1);
  uint64_t at = off;
  while (at < off + size) {
    uint64_t found = UINT64_MAX, fsize = 0;
    const char *acc = "none";
    lua_pushnil(L);
    while (lua_next(L, t)) {
      uint64_t o = (uint64_t)lua_tointeger(L, -2), n = entry_size(L, -1);
      if (o <= at && at - o < n) found = o, fsize = n, acc = entry_access(L, c->device);
      lua_pop(L, 1);
    }
    if (found == UINT64_MAX)
      return luaL_error(L, "r%d:buffer: byte %I of r%d is not mapped: r:map it first", r->id,
                        (lua_Integer)at, r->id);
    if (strcmp(acc, "rw") != 0)
      return luaL_error(L, "r%d:buffer: the mapping at offset %I has access \"%s\" for device "
                        "%d: r:set_access(%I, %I) grants \"rw\"", r->id, (lua_Integer)found,
                        acc, c->device, (lua_Integer)found, (lua_Integer)fsize);
    at = found + fsize;
  }
  ps_bufferud *b = ps_newbuffer(L, c, PS_KIND_VMM, size, 0);
  b->addr = r->addr + off;
  b->live = 1;
  lua_getiuservalue(L, 1, UV_VIEWS);
  lua_pushvalue(L, -2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  return 1;
}

/* The registry's reach hook, key "poolsh.vmm.reach" (object.c's
 * ps_check_reach calls it before a kernel touches a view): for view b
 * (light userdata) and device dev, nothing when dev has "rw" access to
 * every mapping under b's bytes, else what dev lacks and what grants it
 * (two strings). A view no live Range knows of: nothing (it was ended). */
static int vmm_reach(lua_State *L) {
  const ps_bufferud *b = (const ps_bufferud *)lua_touserdata(L, 1);
  int dev = (int)lua_tointeger(L, 2);
  lua_settop(L, 2);
  push_state(L);
  lua_getfield(L, 3, "objects");                 /* 4 */
  lua_pushnil(L);
  while (lua_next(L, 4)) {
    lua_pop(L, 1);
    vmm_range *r = (vmm_range *)luaL_testudata(L, -1, PS_RANGE);
    if (!r || !r->live || b->addr < r->addr || b->addr - r->addr >= r->size) continue;
    int ri = lua_gettop(L), found = 0;
    lua_getiuservalue(L, ri, UV_VIEWS);
    lua_pushnil(L);
    while (!found && lua_next(L, -2)) {
      found = lua_touserdata(L, -2) == b;
      lua_pop(L, 1);
    }
    if (!found) { lua_settop(L, ri); continue; }
    uint64_t off = b->addr - r->addr;
    int t = push_maps(L, ri);
    lua_pushnil(L);
    while (lua_next(L, t)) {
      uint64_t o = (uint64_t)lua_tointeger(L, -2), n = entry_size(L, -1);
      const char *acc = entry_access(L, dev);
      if (o < off + b->size && off < o + n && strcmp(acc, "rw") != 0) {
        lua_pushfstring(L, "access \"%s\" to b%d's bytes in r%d's mapping at offset %I", acc,
                        b->id, r->id, (lua_Integer)o);
        lua_pushfstring(L, "r%d:set_access(%I, %I, {device = %d}) grants it", r->id,
                        (lua_Integer)o, (lua_Integer)n, dev);
        return 2;
      }
      lua_pop(L, 1);
    }
    return 0;
  }
  return 0;
}

/* r:mappings() -> {{offset, size, memory, memory_offset, access}, ...} by
 * offset; access is the context device's. */
static int range_mappings(lua_State *L) {
  checkrange(L, 1);
  ps_ctx *c = ps_context(L);
  int t = push_maps(L, 1);
  lua_newtable(L);
  int out = t + 1, n = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_Integer o = lua_tointeger(L, -2);
    lua_createtable(L, 0, 5);
    lua_pushinteger(L, o);
    lua_setfield(L, -2, "offset");
    for (int k = 0; k < 3; k++) {
      static const char *const keys[] = {"size", "memory", "memory_offset"};
      lua_getfield(L, -2, keys[k]);
      lua_setfield(L, -2, keys[k]);
    }
    lua_pushvalue(L, -2);
    lua_pushstring(L, entry_access(L, c->device));
    lua_setfield(L, -3, "access");
    lua_pop(L, 1);
    /* insertion sort by offset: mappings are few */
    int i = ++n;
    while (i > 1) {
      lua_rawgeti(L, out, i - 1);
      lua_getfield(L, -1, "offset");
      lua_Integer prev = lua_tointeger(L, -1);
      lua_pop(L, 1);
      if (prev < o) { lua_pop(L, 1); break; }
      lua_rawseti(L, out, i);
      i--;
    }
    lua_rawseti(L, out, i);
    lua_pop(L, 1);
  }
  lua_settop(L, out);
  return 1;
}

/* Frees r: with unmap_all (close, __gc) unmaps each mapping left first,
 * else the backend refuses while mappings remain. Returns the status
 * (raises nothing itself); r ends on PS_OK. */
static int range_end(lua_State *L, int rarg, ps_ctx *c, vmm_range *r, int unmap_all) {
  if (!r->live || !c->b || !c->be->vmm_free) return PS_OK;
  int st = PS_OK;
  if (unmap_all && c->be->vmm_unmap) {      /* each mapping on its own: no holes asked */
    int t = push_maps(L, rarg);
    lua_pushnil(L);
    while (lua_next(L, t)) {
      uint64_t off = (uint64_t)lua_tointeger(L, -2), n = entry_size(L, -1);
      st = c->be->vmm_unmap(c->b, r->addr + off, n);
      if (st != PS_OK) { lua_settop(L, t - 1); return st; }
      entry_unmapped(L, c);
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      lua_pushnil(L);
      lua_rawset(L, t);                     /* clearing a field while traversing is allowed */
      end_views(L, rarg, r, off, n);
      report(L, c, PS_OP_VMM_UNMAP, r->id, -1, r->addr + off, n, 0, -1, -1, -1);
    }
    lua_settop(L, t - 1);
  }
  st = c->be->vmm_free(c->b, r->addr, r->size);
  if (st != PS_OK) return st;
  r->live = 0;
  report(L, c, PS_OP_VMM_FREE, r->id, -1, r->addr, r->size, 0, -1, -1, -1);
  return PS_OK;
}

/* r:free(): cuMemAddressFree; refused, naming the mappings, while any remain. */
static int range_free(lua_State *L) {
  vmm_range *r = checkrange(L, 1);
  ps_ctx *c = vmm_context(L, ps_context(L)->be->vmm_free, "r:free");
  int st = range_end(L, 1, c, r, 0);
  if (st == PS_OK) return 0;
  lua_settop(L, 1);
  range_mappings(L);                     /* [r, maps, list] */
  lua_replace(L, 2);                     /* 2: the list */
  lua_settop(L, 2);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_Integer n = luaL_len(L, 2);
  for (lua_Integer i = 1; i <= n && i <= 8; i++) {
    lua_rawgeti(L, 2, i);
    lua_getfield(L, -1, "offset");
    lua_getfield(L, -2, "memory");
    vmm_memory *m = (vmm_memory *)lua_touserdata(L, -1);
    lua_pushfstring(L, "%s%I (m%d)", i > 1 ? ", " : "", lua_tointeger(L, -2), m ? m->id : 0);
    lua_replace(L, -4);
    lua_pop(L, 2);
    luaL_addvalue(&b);
  }
  if (n > 8) luaL_addstring(&b, ", ...");
  luaL_pushresult(&b);
  return ps_fail(L, st, "(freeing r%d: %d mapping%s remain%s at offset%s %s: r:unmap them first, "
                 "or r:close() unmaps and frees)", r->id, (int)n, n == 1 ? "" : "s",
                 n == 1 ? "s" : "", n == 1 ? "" : "s", lua_tostring(L, -1));
}

/* r:close() and __close: unmaps what is left, then frees; raises on
 * failure. */
static int range_close(lua_State *L) {
  vmm_range *r = torange(L, 1);
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  if (!r->live || !c->b) return 0;
  int st = range_end(L, 1, c, r, 1);
  if (st != PS_OK) ps_fail(L, st, "(closing r%d)", r->id);
  return 0;
}

/* __gc: like close, problems become warnings. */
static int range_gc(lua_State *L) {
  vmm_range *r = torange(L, 1);
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  if (!r->live || !c->b) return 0;
  int st = range_end(L, 1, c, r, 1);
  if (st != PS_OK) {
    char msg[160];
    snprintf(msg, sizeof msg, "poolsh: freeing range r%d: %s", r->id, c->be->error_name(st));
    lua_warning(L, msg, 0);
  }
  return 0;
}

static const char *const range_fields[] = {"addr", "size", "id", "live", NULL};

static int range_index(lua_State *L) {
  if (ps_method(L)) return 1;
  vmm_range *r = torange(L, 1);
  switch (ps_field(L, 2, range_fields)) {
    case 0: lua_pushinteger(L, (lua_Integer)r->addr); break;
    case 1: lua_pushinteger(L, (lua_Integer)r->size); break;
    case 2: lua_pushinteger(L, r->id); break;
    case 3: lua_pushboolean(L, r->live); break;
    default: lua_pushnil(L); break;
  }
  return 1;
}

static int range_tostring(lua_State *L) {
  vmm_range *r = torange(L, 1);
  lua_pushfstring(L, "poolsh.Range r%d (%s of addresses%s)", r->id, ps_pushsize(L, r->size),
                  r->live ? "" : ", freed");
  return 1;
}

static int range_lt(lua_State *L) {
  lua_pushboolean(L, torange(L, 1)->id < torange(L, 2)->id);
  return 1;
}

/* ---- Memory ---- */

/* Releases m once (cuMemRelease); the status. */
static int memory_end(lua_State *L, ps_ctx *c, vmm_memory *m) {
  if (!m->live || !c->b || !c->be->vmm_release) return PS_OK;
  int st = c->be->vmm_release(c->b, m->h);
  if (st != PS_OK) return st;
  m->live = 0;
  m->h = NULL;
  memory_gone(c, m);
  report(L, c, PS_OP_VMM_RELEASE, -1, m->id, 0, m->size, 0, m->location, m->device, -1);
  return PS_OK;
}

/* m:release(): allowed while mapped (the memory goes with its last
 * mapping); twice: the usual "released" error. */
static int memory_release(lua_State *L) {
  vmm_memory *m = checkmemory(L, 1);
  ps_ctx *c = ps_context(L);
  ps_check(L, memory_end(L, c, m), "(releasing m%d)", m->id);
  return 0;
}

/* __close: like release, raising on failure; a released Memory: nothing. */
static int memory_close(lua_State *L) {
  vmm_memory *m = tomemory(L, 1);
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  ps_check(L, memory_end(L, c, m), "(releasing m%d)", m->id);
  return 0;
}

static int memory_gc(lua_State *L) {
  vmm_memory *m = tomemory(L, 1);
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, PS_UP_CTX);
  int st = memory_end(L, c, m);
  if (st != PS_OK) {
    char msg[160];
    snprintf(msg, sizeof msg, "poolsh: releasing memory m%d: %s", m->id, c->be->error_name(st));
    lua_warning(L, msg, 0);
  }
  return 0;
}

static const char *const memory_fields[] = {"size", "location", "device", "id", "live", NULL};

static int memory_index(lua_State *L) {
  if (ps_method(L)) return 1;
  vmm_memory *m = tomemory(L, 1);
  switch (ps_field(L, 2, memory_fields)) {
    case 0: lua_pushinteger(L, (lua_Integer)m->size); break;
    case 1: lua_pushstring(L, m->location == PS_LOCATION_HOST ? "host" : "device"); break;
    case 2: lua_pushinteger(L, m->device); break;
    case 3: lua_pushinteger(L, m->id); break;
    case 4: lua_pushboolean(L, m->live); break;
    default: lua_pushnil(L); break;
  }
  return 1;
}

static int memory_tostring(lua_State *L) {
  vmm_memory *m = tomemory(L, 1);
  lua_pushfstring(L, "poolsh.Memory m%d (%s of %s memory, %s %d%s)", m->id,
                  ps_pushsize(L, m->size), m->location == PS_LOCATION_HOST ? "host" : "device",
                  m->location == PS_LOCATION_HOST ? "node" : "device", m->device,
                  m->live ? "" : ", released");
  return 1;
}

/* ---- reset ---- */

/* poolsh.core.reset(): every Range and Memory ends without a backend call
 * (the backend is closed next, which frees what they held), and their
 * views with them. */
void ps_vmm_reset(lua_State *L) {
  push_state(L);
  lua_getfield(L, -1, "objects");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    vmm_range *r = (vmm_range *)luaL_testudata(L, -1, PS_RANGE);
    vmm_memory *m = (vmm_memory *)luaL_testudata(L, -1, PS_MEMORY);
    if (r && r->live) {
      end_views(L, lua_gettop(L), r, 0, r->size);
      r->live = 0;
    }
    if (m) m->live = 0, m->h = NULL, m->maps = 0, m->held = 0;
  }
  lua_pop(L, 2);
  ps_ctx *c = ps_context(L);            /* the closing backend takes all their memory */
  c->lim.vmm_held = c->lim.vmm_pinned_held = 0;
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, VMM_STATE);   /* ids start at 1 again */
}

/* ---- open ---- */

static const luaL_Reg range_methods[] = {
  {"map", range_map}, {"unmap", range_unmap}, {"set_access", range_set_access},
  {"buffer", range_buffer}, {"mappings", range_mappings}, {"free", range_free},
  {"close", range_close}, {NULL, NULL}
};
static const luaL_Reg range_meta[] = {
  {"__index", range_index}, {"__gc", range_gc}, {"__close", range_close},
  {"__tostring", range_tostring}, {"__lt", range_lt}, {NULL, NULL}
};
static const luaL_Reg memory_methods[] = {{"release", memory_release}, {NULL, NULL}};
static const luaL_Reg memory_meta[] = {
  {"__index", memory_index}, {"__gc", memory_gc}, {"__close", memory_close},
  {"__tostring", memory_tostring}, {NULL, NULL}
};
static const luaL_Reg vmm_funcs[] = {
  {"granularity", vmm_granularity}, {"reserve", vmm_reserve}, {"create", vmm_create},
  {"ranges", vmm_ranges}, {NULL, NULL}
};

/* A class whose meta functions get (context, methods) upvalues, as
 * ps_newclass gives the other types, without a context user value. */
static void new_class(lua_State *L, const char *tname, const luaL_Reg *methods,
                      const luaL_Reg *meta, const char *const fields[]) {
  luaL_newmetatable(L, tname);                  /* [mt] */
  lua_newtable(L);
  for (int i = 0; fields[i]; i++) {
    lua_pushstring(L, fields[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "fields");
  lua_newtable(L);                              /* [mt, methods] */
  ps_setfuncs(L, methods);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "methods");
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  lua_insert(L, -2);                            /* [mt, ctx, methods] */
  luaL_setfuncs(L, meta, 2);
  lua_pop(L, 1);
}

/* open(module, views): poolsh.Range, poolsh.Memory and module.vmm. */
int poolsh_open_vmm(lua_State *L) {
  new_class(L, PS_RANGE, range_methods, range_meta, range_fields);
  new_class(L, PS_MEMORY, memory_methods, memory_meta, memory_fields);
  lua_newtable(L);
  ps_setfuncs(L, vmm_funcs);
  lua_setfield(L, 1, "vmm");
  lua_pushcfunction(L, vmm_reach);
  lua_setfield(L, LUA_REGISTRYINDEX, "poolsh.vmm.reach");   /* object.c reads it */
  return 0;
}
