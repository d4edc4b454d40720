/*
 * auxlib.c: the floor's helpers (auxlib.h): sizes, durations, devices,
 * socket paths, tokens, option tables, and the text of values in
 * messages. Lua and libc only.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "auxlib.h"
#include "render.h"

/* ---- sizes, durations, options ----------------------------------------- */

/* Calls the Lua parser `name` (installed by poolsh/init.lua) on the string
 * at idx: returns NULL and sets *v, or returns the parser's complaint. */
static const char *parse_with(lua_State *L, int idx, const char *name, lua_Number *v) {
  idx = lua_absindex(L, idx);
  lua_getiuservalue(L, PS_UP_CTX, PS_UV_PARSERS);
  if (lua_getfield(L, -1, name) != LUA_TFUNCTION) {
    lua_pop(L, 2);
    return "unit strings need require \"poolsh\"";
  }
  lua_pushvalue(L, idx);
  lua_call(L, 1, 2);
  if (lua_isnil(L, -2)) {               /* [parsers, nil, msg] */
    lua_copy(L, -1, -3);
    lua_pop(L, 2);                       /* the message stays on the stack */
    return lua_tostring(L, -1);
  }
  *v = lua_tonumber(L, -2);
  lua_pop(L, 3);
  return NULL;
}

/* Converts the size at idx: a non-negative integer or a unit string
 * ("4 KiB"). Returns NULL, or what is wrong with it. */
const char *ps_tosize(lua_State *L, int idx, uint64_t *out) {
  lua_Integer n;
  int t = lua_type(L, idx);
  if (t == LUA_TNUMBER) {
    if (lua_isinteger(L, idx)) n = lua_tointeger(L, idx);
    else {
      lua_Number f = lua_tonumber(L, idx);
      if (f != floor(f)) return "size must be an integer number of bytes";
      if (!lua_numbertointeger(f, &n)) return "size too large";
    }
  } else if (t == LUA_TSTRING) {
    lua_Number f = 0;
    const char *err = parse_with(L, idx, "size", &f);
    if (err) return err;
    if (!lua_numbertointeger(f, &n)) return "size too large";
  } else {
    return lua_pushfstring(L, "size expected (integer or string), got %s", luaL_typename(L, idx));
  }
  if (n < 0) return "size must not be negative";
  *out = (uint64_t)n;
  return NULL;
}
/* The size at arg, or an argument error saying what is wrong with it. */
uint64_t ps_checksize(lua_State *L, int arg) {
  uint64_t n = 0;
  const char *err = ps_tosize(L, arg, &n);
  if (err) luaL_argerror(L, arg, err);
  return n;
}
/* Like ps_checksize; none or nil at arg is def. */
uint64_t ps_optsize(lua_State *L, int arg, uint64_t def) {
  return lua_isnoneornil(L, arg) ? def : ps_checksize(L, arg);
}

/* Field key of the table at t as a size (def when nil); errors name
 * what and key. */
uint64_t ps_fieldsize(lua_State *L, int t, const char *key, const char *what, uint64_t def) {
  uint64_t n = def;
  if (lua_getfield(L, t, key) != LUA_TNIL) {
    const char *err = ps_tosize(L, -1, &n);
    if (err) luaL_error(L, "%s: %s: %s", what, key, err);
  }
  lua_pop(L, 1);
  return n;
}

/* A socket name or path at arg: the whole Lua string, or an argument
 * error when it holds a NUL byte (C would cut it there: another path). */
const char *ps_checksockpath(lua_State *L, int arg) {
  size_t len;
  const char *s = luaL_checklstring(L, arg, &len);
  if (strlen(s) != len) luaL_argerror(L, arg, "the socket path holds a NUL byte");
  return s;
}

/* Reads a token's decimal number: no sign, no leading zero, at most max,
 * ending at `stop`. 1, the number in *v and *q past the stop; or 0. */
int ps_token_number(const char **q, const char *end, char stop, unsigned long long max,
                    unsigned long long *v) {
  const char *p = *q;
  unsigned long long x = 0;
  if (p >= end || *p < '1' || *p > '9') return 0;
  for (; p < end && *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (x > (max - d) / 10) return 0;
    x = x * 10 + d;
  }
  if (p >= end || *p != stop) return 0;
  *q = p + 1, *v = x;
  return 1;
}

/* Reads exactly 2n lower-case hex digits from q up to end into n bytes:
 * 1, or 0 when there are more, fewer or other characters. */
int ps_token_hex(const char *q, const char *end, uint8_t *d, int n) {
  if (end - q != 2 * (ptrdiff_t)n) return 0;
  for (int i = 0; i < 2 * n; i++) {
    char ch = q[i];
    int h = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (h < 0) return 0;
    d[i / 2] = (uint8_t)(i % 2 ? d[i / 2] * 16 + h : h);
  }
  return 1;
}

/* A duration in ms: a number, or a string with units ("200 us"). */
double ps_checkduration(lua_State *L, int arg) {
  lua_Number ms = 0;
  if (lua_type(L, arg) == LUA_TNUMBER) ms = lua_tonumber(L, arg);
  else if (lua_type(L, arg) == LUA_TSTRING) {
    const char *err = parse_with(L, arg, "duration", &ms);
    if (err) luaL_argerror(L, arg, err);
  } else return luaL_typeerror(L, arg, "duration (ms or string)");
  if (!(ms >= 0) || isinf(ms)) luaL_argerror(L, arg, "duration must be >= 0 and finite");
  return ms;
}

/* Pushes the value at idx as text for a message (luaL_tolstring), cut to
 * PS_SHOWN_MAX bytes with "..." when longer; returns it. */
const char *ps_shown(lua_State *L, int idx) {
  size_t n;
  const char *s = luaL_tolstring(L, idx, &n);
  if (n <= PS_SHOWN_MAX) return s;
  lua_pushfstring(L, "%s...", lua_pushlstring(L, s, PS_SHOWN_MAX));
  lua_replace(L, -3);
  lua_pop(L, 1);
  return lua_tostring(L, -1);
}

/* A device index at idx: an integer in [0, 1024); raises naming what. */
int ps_todevice(lua_State *L, int idx, const char *what) {
  int isint = 0;
  lua_Integer d = lua_tointegerx(L, idx, &isint);
  if (!isint || lua_type(L, idx) != LUA_TNUMBER || d < 0 || d >= 1024)
    luaL_error(L, "%s: device must be a device index (an integer from 0), got %s", what,
               ps_shown(L, idx));
  return (int)d;
}

/* Refuses keys of the options table at arg that are not in allowed. */
void ps_checkoptions(lua_State *L, int arg, const char *what,
                     const char *const allowed[]) {
  if (lua_isnoneornil(L, arg)) return;
  luaL_checktype(L, arg, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    lua_pop(L, 1);
    int ok = 0;
    if (lua_type(L, -1) == LUA_TSTRING)
      for (int i = 0; allowed[i]; i++)
        if (strcmp(allowed[i], lua_tostring(L, -1)) == 0) ok = 1;
    if (!ok) {
      lua_pushvalue(L, -1);
      luaL_error(L, "%s: unknown option '%s'", what, ps_shown(L, -1));
    }
  }
}

/* A boolean field of an options table (nil: def). */
int ps_optfield_bool(lua_State *L, int arg, const char *key, int def) {
  if (lua_isnoneornil(L, arg)) return def;
  int t = lua_getfield(L, arg, key);
  int v = def;
  if (t == LUA_TBOOLEAN) v = lua_toboolean(L, -1);
  else if (t != LUA_TNIL)
    luaL_error(L, "option '%s' must be a boolean, got %s", key, luaL_typename(L, -1));
  lua_pop(L, 1);
  return v;
}
/* ---- tables and classes ------------------------------------------------ */

/* Copies the entries of the table at src into the table on top. */
void ps_copytable(lua_State *L, int src) {
  src = lua_absindex(L, src);
  lua_pushnil(L);
  while (lua_next(L, src)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
}

/* Sets l's functions into the table on top, each with the context upvalue. */
void ps_setfuncs(lua_State *L, const luaL_Reg *l) {
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  luaL_setfuncs(L, l, 1);
}

/* The index of the string at idx in fields (NULL-ended), or -1 (also
 * for a key that is not a string: other keys read nil). */
int ps_field(lua_State *L, int idx, const char *const fields[]) {
  if (lua_type(L, idx) != LUA_TSTRING) return -1;
  const char *k = lua_tostring(L, idx);
  for (int i = 0; fields[i]; i++)
    if (strcmp(fields[i], k) == 0) return i;
  return -1;
}

/* __index helper: the method named by arg 2, from upvalue 2; else nil. */
int ps_method(lua_State *L) {
  lua_pushvalue(L, 2);
  return lua_rawget(L, PS_UP_METHODS) != LUA_TNIL;
}

/* Pushes bytes as text for a message, as poolsh.fmt writes it
 * ("64.00 MiB", "100 B": lua/poolsh/render/size.lua, the one source),
 * and returns it. Raises what the renderer raises. */
const char *ps_pushsize(lua_State *L, uint64_t bytes) {
  if (bytes <= (uint64_t)LUA_MAXINTEGER) lua_pushinteger(L, (lua_Integer)bytes);
  else lua_pushnumber(L, (lua_Number)bytes);       /* a saturated total: 16.00 EiB */
  ps_render(L, "poolsh.render.size", 1);
  return lua_tostring(L, -1);
}
