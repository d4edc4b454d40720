/*
 * view.c: the binding of `poolsh --view`'s server (vserve.c): the
 * internal entries lua/poolsh/view.lua builds poolsh.view on. One server
 * per Lua state, held by a userdata in the registry whose finalizer stops
 * it, so closing the state stops the thread and closes the socket.
 *
 *   core.view_start(port, page, js, css) -> url   (raises why it cannot)
 *   core.view_url() -> url | nil
 *   core.view_publish(json, version)
 *   core.view_stop() -> whether one was serving
 *   core.view_wait() -> "line" | "end" | "interrupted": waits for a line
 *                       on standard input, Ctrl-C or its end
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bindings.h"
#include "usock.h"
#include "vserve.h"

#define VIEW_KEY "poolsh.view.server"     /* the registry's holder */
#define VIEW_MT "poolsh.ViewServer"

typedef struct view_ud { ps_vserve *s; } view_ud;

/* The running server, or NULL. */
static ps_vserve *running(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, VIEW_KEY);
  view_ud *u = (view_ud *)luaL_testudata(L, -1, VIEW_MT);
  lua_pop(L, 1);
  return u ? u->s : NULL;
}

/* __gc and view_stop's work: stops the server once (idempotent). */
static int view_gc(lua_State *L) {
  view_ud *u = (view_ud *)luaL_checkudata(L, 1, VIEW_MT);
  ps_vserve_stop(u->s);
  u->s = NULL;
  return 0;
}

static void push_url(lua_State *L, ps_vserve *s) {
  lua_pushfstring(L, "http://127.0.0.1:%d/%s/", ps_vserve_port(s), ps_vserve_token(s));
}

/* A string argument at most PS_VSERVE_BODY_MAX bytes long. */
static const char *check_body(lua_State *L, int i, const char *what, size_t *len) {
  const char *b = luaL_checklstring(L, i, len);
  if (*len > PS_VSERVE_BODY_MAX)
    luaL_error(L, "poolsh.view: %s is %d MiB, over the %d MiB the view serves", what,
               (int)(*len >> 20), (int)(PS_VSERVE_BODY_MAX >> 20));
  return b;
}

/* core.view_start(port, page, js, css) -> the URL; raises when one is
 * already serving or the server cannot start. */
static int view_start(lua_State *L) {
  lua_Integer port = luaL_checkinteger(L, 1);
  const char *bodies[PS_VSERVE_NFILES];
  size_t lens[PS_VSERVE_NFILES];
  static const char *const what[PS_VSERVE_NFILES] = {"view.html", "picture.js", "picture.css"};
  for (int i = 0; i < PS_VSERVE_NFILES; i++) bodies[i] = check_body(L, 2 + i, what[i], &lens[i]);
#ifdef __EMSCRIPTEN__
  return luaL_error(L, "poolsh.view: not in the browser (the playground draws the picture itself)");
#endif
  if (running(L)) return luaL_error(L, "poolsh.view: already serving");
  if (port < 0 || port > 65535)
    return luaL_error(L, "poolsh.view: port %I is not a TCP port (0 to 65535; 0: any free one)",
                      port);
  view_ud *u = (view_ud *)lua_newuserdatauv(L, sizeof *u, 0);
  u->s = NULL;
  if (luaL_newmetatable(L, VIEW_MT)) {
    lua_pushcfunction(L, view_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  char err[256];
  u->s = ps_vserve_start((int)port, bodies, lens, err, sizeof err);
  if (!u->s) return luaL_error(L, "poolsh.view: %s", err);
  lua_setfield(L, LUA_REGISTRYINDEX, VIEW_KEY);
  push_url(L, u->s);
  return 1;
}

/* core.view_url() -> the URL being served, or nil. */
static int view_url(lua_State *L) {
  ps_vserve *s = running(L);
  if (!s) return 0;
  push_url(L, s);
  return 1;
}

/* core.view_publish(json, version): state.json serves json from now on;
 * nothing when no server runs. */
static int view_publish(lua_State *L) {
  size_t len;
  const char *json = check_body(L, 1, "the snapshot", &len);
  lua_Integer v = luaL_checkinteger(L, 2);
  ps_vserve *s = running(L);
  if (s && ps_vserve_publish(s, json, len, (long long)v) != 0)
    return luaL_error(L, "poolsh.view: not enough memory for the snapshot");
  return 0;
}

/* core.view_stop() -> true when a server was stopped (thread joined,
 * socket closed), false when none ran. */
static int view_stop(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, VIEW_KEY);
  view_ud *u = (view_ud *)luaL_testudata(L, -1, VIEW_MT);
  int was = u && u->s;
  if (u) ps_vserve_stop(u->s), u->s = NULL;
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, VIEW_KEY);
  lua_pushboolean(L, was);
  return 1;
}

/* core.view_wait() -> "line" when a line (or anything) came on standard
 * input, "end" at its end, "interrupted" on Ctrl-C (the host's flag). */
static int view_wait(lua_State *L) {
  volatile sig_atomic_t *intr = &((ps_ctx *)lua_touserdata(L, PS_UP_CTX))->interrupt;
  int r = ps_usock_wait(0, POLLIN, -1, intr);
  if (r == PS_USOCK_INTERRUPTED) {
    *intr = 0;
    lua_pushliteral(L, "interrupted");
    return 1;
  }
  char buf[256];
  ssize_t n = r == PS_USOCK_OK ? read(0, buf, sizeof buf) : 0;
  lua_pushstring(L, n > 0 ? "line" : "end");
  return 1;
}

static const luaL_Reg view_funcs[] = {
  {"view_start", view_start}, {"view_url", view_url}, {"view_publish", view_publish},
  {"view_stop", view_stop}, {"view_wait", view_wait}, {NULL, NULL}
};

/* Adds the entries to the internal views (poolsh.core). */
int poolsh_open_view(lua_State *L) {
  lua_settop(L, 2);
  ps_setfuncs(L, view_funcs);
  return 0;
}
