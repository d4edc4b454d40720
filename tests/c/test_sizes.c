/*
 * test_sizes.c: byte sizes in messages have one format, poolsh.fmt
 * (lua/poolsh/units.lua). The bindings get it through ps_pushsize
 * (lua/poolsh/render/size.lua); ps_fmtsize, the C copy the observation
 * layer still calls, must agree with it for every size class: 0, 1,
 * 1023, 1024, each 2^k - 1, 2^k and 2^k + 1, and 2^64 - 1.
 */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "auxlib.h"
#include "poolsh.h"

static int failures, checked;

static void check(lua_State *L, uint64_t n) {
  char c[64];
  ps_fmtsize(c, sizeof c, n);
  const char *pushed = ps_pushsize(L, n);
  lua_getglobal(L, "fmt");
  if (n <= (uint64_t)LUA_MAXINTEGER) lua_pushinteger(L, (lua_Integer)n);
  else lua_pushnumber(L, (lua_Number)n);
  lua_call(L, 1, 1);
  const char *lua = lua_tostring(L, -1);
  checked++;
  if (!lua || strcmp(c, lua) != 0 || strcmp(pushed, lua) != 0) {
    printf("not ok - %llu: ps_fmtsize '%s', ps_pushsize '%s', poolsh.fmt '%s'\n",
           (unsigned long long)n, c, pushed, lua ? lua : "(nil)");
    failures++;
  }
  lua_pop(L, 2);
}

int main(void) {
  /* the repository's lua/ from this file's path: tests/c/test_sizes.c */
  char root[4096];
  snprintf(root, sizeof root, "%s", __FILE__);
  for (int i = 0; i < 3; i++) {
    char *slash = strrchr(root, '/');
    if (slash) *slash = '\0'; else snprintf(root, sizeof root, ".");
  }
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua", root, root);
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
  luaL_requiref(L, "poolsh.core", luaopen_poolsh_core, 0);
  lua_pop(L, 1);
  if (luaL_dostring(L, "fmt = require('poolsh.units').fmt") != LUA_OK) {
    printf("not ok - loading poolsh.units: %s\n", lua_tostring(L, -1));
    return 1;
  }
  check(L, 0), check(L, 1), check(L, 1023), check(L, 1024);
  for (int k = 1; k < 64; k++) {
    uint64_t p = (uint64_t)1 << k;
    check(L, p - 1), check(L, p), check(L, p + 1);
  }
  check(L, UINT64_MAX);
  lua_close(L);
  printf("%s - %d sizes, %d disagree\n", failures ? "not ok" : "ok", checked, failures);
  return failures != 0;
}
