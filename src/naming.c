/*
 * naming.c: the names users give objects (s.name = "copies"). A name is
 * kept by kind and id in one table of the context's defaults, so it
 * outlives its object: traces and exports name what is gone too. An
 * object without one is shown as its kind's letter and id ("s3").
 */
#include <string.h>

#include "naming.h"

#define PS_NAME_MAX 64

static const char *const kind_keys[] = {"pool", "stream", "event", "buffer", NULL};
static const char kind_letters[] = {'p', 's', 'e', 'b'};

/* Pushes the names table of kind (a PS_ID_*), made on first use. */
static void push_names(lua_State *L, int kind) {
  ps_pushdefaults(L);                                   /* [defaults] */
  if (lua_getfield(L, -1, "names") != LUA_TTABLE) {     /* [defaults, names?] */
    lua_pop(L, 1);
    lua_createtable(L, 0, 4);
    for (int i = 0; kind_keys[i]; i++) {
      lua_newtable(L);
      lua_setfield(L, -2, kind_keys[i]);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "names");
  }
  lua_getfield(L, -1, kind_keys[kind]);                 /* [defaults, names, t] */
  lua_replace(L, -3);
  lua_pop(L, 1);
}

/* Raises unless the value at idx can name an object: a string of 1 to
 * 64 bytes with no control characters. */
void ps_checkname(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  size_t n = 0;
  const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &n) : NULL;
  if (!s) luaL_error(L, "poolsh: a name must be a string, got %s", luaL_typename(L, idx));
  if (n == 0 || n > PS_NAME_MAX)
    luaL_error(L, "poolsh: a name must have 1 to %d bytes, got %d ('%s')", PS_NAME_MAX, (int)n,
               ps_shown(L, idx));
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 32 || s[i] == 127)
      luaL_error(L, "poolsh: a name must not hold control characters ('%s')", ps_shown(L, idx));
}

/* Names object kind/id after the value at idx (checked as ps_checkname). */
void ps_setname(lua_State *L, int kind, int id, int idx) {
  idx = lua_absindex(L, idx);
  ps_checkname(L, idx);
  push_names(L, kind);
  lua_pushvalue(L, idx);
  lua_rawseti(L, -2, id);
  lua_pop(L, 1);
}

/* Pushes the name of object kind/id: the one it was given, else "s3"
 * (the legacy default stream: "default"). */
void ps_pushname(lua_State *L, int kind, int id) {
  push_names(L, kind);
  if (lua_rawgeti(L, -1, id) == LUA_TSTRING) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 2);
  if (kind == PS_ID_STREAM && id == 0) lua_pushliteral(L, "default");
  else lua_pushfstring(L, "%c%d", kind_letters[kind], id);
}

/* Pushes how tostring shows object kind/id: its name, followed by its id
 * when it was given one ("copies (s2)"); returns it. */
const char *ps_pushlabel(lua_State *L, int kind, int id) {
  push_names(L, kind);
  int named = lua_rawgeti(L, -1, id) == LUA_TSTRING;
  lua_pop(L, 2);
  if (!named) {
    ps_pushname(L, kind, id);
    return lua_tostring(L, -1);
  }
  ps_pushname(L, kind, id);
  if (kind == PS_ID_STREAM && id == 0) lua_pushfstring(L, "%s (default)", lua_tostring(L, -1));
  else lua_pushfstring(L, "%s (%c%d)", lua_tostring(L, -1), kind_letters[kind], id);
  lua_remove(L, -2);
  return lua_tostring(L, -1);
}

/* __newindex of the types whose only settable field is name: t[k] = v
 * for the object of kind/id (tname for the message). */
int ps_newindex_name(lua_State *L, int kind, int id, const char *tname) {
  if (lua_type(L, 2) != LUA_TSTRING || strcmp(lua_tostring(L, 2), "name") != 0)
    return luaL_error(L, "%s has no settable field '%s'", tname, ps_shown(L, 2));
  ps_setname(L, kind, id, 3);
  return 0;
}

/* A kind's index from its key at arg ("pool", "stream", "event", "buffer"). */
static int check_kind(lua_State *L, int arg) {
  return luaL_checkoption(L, arg, NULL, kind_keys);
}

/* The value of option "name" in the options table at arg, checked, pushed
 * (nil when absent); returns its index. */
int ps_optname(lua_State *L, int arg) {
  if (lua_isnoneornil(L, arg)) lua_pushnil(L);
  else if (lua_getfield(L, arg, "name") != LUA_TNIL) ps_checkname(L, -1);
  return lua_gettop(L);
}

/* poolsh.core.object_name(kind, id) -> the name shown for that object. */
static int naming_name(lua_State *L) {
  int kind = check_kind(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  luaL_argcheck(L, id >= 0 && id <= INT32_MAX, 2, "object id out of range");
  ps_pushname(L, kind, (int)id);
  return 1;
}

/* poolsh.core.object_names() -> {pool = {[id] = name}, stream = ..., event
 * = ..., buffer = ...}: a copy of every name given so far. */
static int naming_all(lua_State *L) {
  lua_createtable(L, 0, 4);
  for (int k = 0; kind_keys[k]; k++) {
    push_names(L, k);                                   /* [out, names] */
    lua_newtable(L);                                    /* [out, names, copy] */
    ps_copytable(L, -2);
    lua_setfield(L, -3, kind_keys[k]);
    lua_pop(L, 1);
  }
  return 1;
}

/* poolsh.core.object_given(kind, id) -> the name that object was given,
 * or nil when it has none (it is shown as "s3"). */
static int naming_given(lua_State *L) {
  int kind = check_kind(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  luaL_argcheck(L, id >= 0 && id <= INT32_MAX, 2, "object id out of range");
  push_names(L, kind);
  if (lua_rawgeti(L, -1, (int)id) != LUA_TSTRING) lua_pushnil(L);
  return 1;
}

static const luaL_Reg naming_funcs[] = {
  {"object_name", naming_name}, {"object_names", naming_all}, {"object_given", naming_given},
  {NULL, NULL}
};

/* Sets the views into the table of views (arg 2). */
int poolsh_open_naming(lua_State *L) {
  lua_settop(L, 2);
  ps_setfuncs(L, naming_funcs);
  return 0;
}
