/*
 * render.c: C hands codes and numbers to a Lua renderer (render.h).
 */
#include "lauxlib.h"
#include "render.h"

void ps_render(lua_State *L, const char *module, int nargs) {
  lua_getglobal(L, "require");
  if (!lua_isfunction(L, -1)) luaL_error(L, "rendering %s needs require (the package library)", module);
  lua_pushstring(L, module);
  lua_call(L, 1, 1);                       /* [args..., renderer] */
  if (!lua_isfunction(L, -1)) luaL_error(L, "%s must return a function", module);
  lua_insert(L, -(nargs + 1));
  lua_call(L, nargs, 1);
}
