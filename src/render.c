/*
 * render.c: C hands codes and numbers to a Lua renderer (render.h).
 */
#include "lauxlib.h"
#include "render.h"

#define KEPT_REQUIRE "poolsh.require"

void ps_render_keep_require(lua_State *L) {
  if (lua_getglobal(L, "require") == LUA_TFUNCTION)
    lua_setfield(L, LUA_REGISTRYINDEX, KEPT_REQUIRE);
  else
    lua_pop(L, 1);
}

/* Pushes the renderer: the loaded module, else what the kept require
 * loads (a protected call). Returns 0, or 1 with the reason pushed. */
static int push_renderer(lua_State *L, const char *module) {
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, module);
  lua_remove(L, -2);
  if (lua_isfunction(L, -1)) return 0;
  lua_pop(L, 1);
  if (lua_getfield(L, LUA_REGISTRYINDEX, KEPT_REQUIRE) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    lua_pushliteral(L, "no require was there when poolsh.core opened");
    return 1;
  }
  lua_pushstring(L, module);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) return 1;
  if (lua_isfunction(L, -1)) return 0;
  lua_pop(L, 1);
  lua_pushliteral(L, "it does not return a function");
  return 1;
}

void ps_render(lua_State *L, const char *module, int nargs) {
  int base = lua_gettop(L) - nargs;
  int failed = push_renderer(L, module);        /* [args, fn] or [args, reason] */
  if (!failed) {
    lua_insert(L, base + 1);                    /* [fn, args] */
    failed = lua_pcall(L, nargs, 1, 0) != LUA_OK;
    if (!failed && lua_type(L, -1) != LUA_TSTRING) {
      const char *type = luaL_typename(L, -1);
      lua_pop(L, 1);
      lua_pushfstring(L, "it returned a %s, not a string", type);
      failed = 1;
    }
  }
  if (failed) {                                 /* [..., reason]: said, not raised */
    const char *why = lua_tostring(L, -1);
    lua_pushfstring(L, "(%s failed: %s)", module, why ? why : "an error that is not a string");
    lua_replace(L, base + 1);
  }
  lua_settop(L, base + 1);
}
