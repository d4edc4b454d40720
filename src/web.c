/* web.c: poolsh's host in a browser page (docs/web.md), the roof as
 * main.c is for the terminal. The page's JavaScript calls
 * poolsh_web_init() once, then poolsh_web_line() for each line typed; a
 * line runs as a line at main.c's REPL does: an incomplete statement waits
 * for the next line, `=expr` and expressions print their values, an error
 * prints its message alone (its traceback kept for poolsh.repl.traceback),
 * and after each statement poolsh.repl.after() prints the live lines.
 * Built with emscripten's Asyncify: while a statement runs, a count hook
 * gives the browser its turn every 50 ms, so Ctrl-C
 * (poolsh_web_interrupt) can stop a loop without losing the page. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <emscripten.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"
#include "poolsh.h"

int luaopen_cjson(lua_State *L);

#define YIELD_MS 50.0       /* the most the page waits for its turn */
#define HOOK_COUNT 10000    /* instructions between two looks at the clock */

#define PICTURE_MS 400.0    /* the picture's refresh during a long statement */

static lua_State *L;
static volatile sig_atomic_t *interrupt_flag;   /* the core's: its waits poll it */
static char *pending;       /* the lines of an incomplete statement */
static double last_yield;
static double last_picture; /* when the hook last refreshed the picture */
static lua_Integer picture_version = -1;   /* the version the page drew last */

/* Pushes poolsh.web.picture's snapshot when its version differs from
 * since (and sets picture_version), else nothing; 1 when pushed. Never
 * raises: a failure pushes nothing. Uses no hook, so never yields. */
static int push_picture(lua_State *L, lua_Integer since) {
  int top = lua_gettop(L);
  if (lua_getglobal(L, "require") != LUA_TFUNCTION) goto none;
  lua_pushliteral(L, "poolsh.web.picture");
  if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) goto none;
  lua_getfield(L, -1, "version");
  if (lua_pcall(L, 0, 1, 0) != LUA_OK || !lua_isinteger(L, -1)) goto none;
  lua_Integer v = lua_tointeger(L, -1);
  if (v == since) goto none;
  lua_pop(L, 1);
  lua_getfield(L, -1, "snapshot");
  if (lua_pcall(L, 0, 1, 0) != LUA_OK || lua_type(L, -1) != LUA_TSTRING) goto none;
  lua_remove(L, -2);
  picture_version = v;
  return 1;
none:
  lua_settop(L, top);
  return 0;
}

/* During a long statement: hands the page the picture when it changed,
 * from the hook, before the browser's turn (Module.onPicture). */
static void picture_from_hook(lua_State *L) {
  if (!push_picture(L, picture_version)) return;
  EM_ASM({ if (Module.onPicture) Module.onPicture(UTF8ToString($0)); }, lua_tostring(L, -1));
  lua_pop(L, 1);
}

/* Message handler: the message alone, its traceback kept for
 * poolsh.repl.traceback(), as main.c's at the REPL. */
static int msghandler(lua_State *L) { return poolsh_msghandler(L, 1); }

/* The count hook: every YIELD_MS lets the browser run (key events,
 * painting); raises "interrupted!" once Ctrl-C set the flag, unless a
 * poolsh wait took it first (and cleared it). */
static void yield_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  double now = emscripten_get_now();
  if (now - last_yield >= YIELD_MS) {
    if (now - last_picture >= PICTURE_MS) {
      picture_from_hook(L);
      last_picture = emscripten_get_now();
    }
    fflush(stdout);          /* what was written shows while the loop runs */
    emscripten_sleep(0);
    last_yield = emscripten_get_now();
  }
  if (interrupt_flag && *interrupt_flag) luaL_error(L, "interrupted!");
}

/* Runs the function on the stack with narg arguments, interruptibly. */
static int docall(int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  if (interrupt_flag) *interrupt_flag = 0;
  last_yield = last_picture = emscripten_get_now();
  lua_sethook(L, yield_hook, LUA_MASKCOUNT, HOOK_COUNT);
  int status = lua_pcall(L, narg, nres, base);
  lua_sethook(L, NULL, 0, 0);
  if (interrupt_flag) *interrupt_flag = 0;
  lua_remove(L, base);
  return status;
}

/* Prints the error on the stack (if status says one), as the REPL does. */
static int report(int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
    fflush(stderr);
    lua_pop(L, 1);
  }
  return status;
}

static int dostring(const char *s, const char *name) {
  int status = luaL_loadbuffer(L, s, strlen(s), name);
  if (status == LUA_OK) status = docall(0, 0);
  return report(status);
}

/* Pushes poolsh.repl[field] when it is a function; 0 (nothing pushed)
 * otherwise. */
static int push_repl(const char *field) {
  int top = lua_gettop(L);
  if (lua_getglobal(L, "poolsh") == LUA_TTABLE && lua_getfield(L, -1, "repl") == LUA_TTABLE &&
      lua_getfield(L, -1, field) == LUA_TFUNCTION) {
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    return 1;
  }
  lua_settop(L, top);
  return 0;
}

/* The next name of a directory read by web_dir (upvalues: the names,
 * the index of the last one given), nil at the end. */
static int dir_next(lua_State *L) {
  lua_Integer i = lua_tointeger(L, lua_upvalueindex(2)) + 1;
  lua_pushinteger(L, i);
  lua_replace(L, lua_upvalueindex(2));
  lua_rawgeti(L, lua_upvalueindex(1), i);
  return 1;
}

/* lfs.dir(path): an iterator over the names in path (read at once), the
 * one LuaFileSystem function poolsh's Lua uses (help lists the commands
 * with it) and which Lua alone cannot do; io.popen("ls") is refused here. */
static int web_dir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  DIR *d = opendir(path);
  if (!d) return luaL_error(L, "cannot open %s: %s", path, strerror(errno));
  lua_newtable(L);
  lua_Integer n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    lua_pushstring(L, e->d_name);
    lua_rawseti(L, -2, ++n);
  }
  closedir(d);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, dir_next, 2);
  return 1;
}

/* The page's "lfs": dir only. */
static int open_lfs(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, web_dir);
  lua_setfield(L, -2, "dir");
  return 1;
}

/* The value of key in the browser's localStorage as a malloc'd string,
 * or NULL (none, or storage refused). */
EM_JS(char *, storage_get, (const char *key), {
  try {
    const v = localStorage.getItem(UTF8ToString(key));
    if (v === null) return 0;
    const n = lengthBytesUTF8(v) + 1, p = _malloc(n);
    if (p) stringToUTF8(v, p, n);
    return p;
  } catch (e) {
    return 0;
  }
});

/* Sets key to value in localStorage (value NULL: removes it); 1 when
 * stored, 0 when the browser refused (full, or storage off). */
EM_JS(int, storage_set, (const char *key, const char *value), {
  try {
    if (value) localStorage.setItem(UTF8ToString(key), UTF8ToString(value));
    else localStorage.removeItem(UTF8ToString(key));
    return 1;
  } catch (e) {
    return 0;
  }
});

/* storage.get(key) -> the string kept under key in this browser, or nil. */
static int web_storage_get(lua_State *L) {
  char *v = storage_get(luaL_checkstring(L, 1));
  if (!v) return 0;
  lua_pushstring(L, v);
  free(v);
  return 1;
}

/* storage.set(key, value or nil) -> true, or false when the browser
 * refused. */
static int web_storage_set(lua_State *L) {
  const char *key = luaL_checkstring(L, 1);
  const char *value = luaL_optstring(L, 2, NULL);
  lua_pushboolean(L, storage_set(key, value));
  return 1;
}

/* "poolsh.web.storage": the browser's localStorage for the page's Lua
 * (learn's progress). */
static int open_storage(lua_State *L) {
  static const luaL_Reg funcs[] = {{"get", web_storage_get}, {"set", web_storage_set}, {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}

/* The page's Lua state: the standard libraries, poolsh on the sim with
 * its Lua library from the module's files (/lua), cjson, lfs.dir, the
 * browser's storage (poolsh.web.storage), the REPL's
 * settings (colour, watch, help) and the page's refusals (poolsh.web).
 * cols: the terminal's width. 0 when all of it loaded. */
EMSCRIPTEN_KEEPALIVE int poolsh_web_init(int cols) {
  if (L) return 0;
  L = luaL_newstate();
  if (!L) return 1;
  luaL_openlibs(L);
  lua_gc(L, LUA_GCGEN, 0, 0);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_poolsh_core);
  lua_setfield(L, -2, "poolsh.core");
  lua_pushcfunction(L, luaopen_cjson);
  lua_setfield(L, -2, "cjson");
  lua_pushcfunction(L, open_lfs);
  lua_setfield(L, -2, "lfs");
  lua_pushcfunction(L, open_storage);
  lua_setfield(L, -2, "poolsh.web.storage");
  lua_pop(L, 1);
  umask(022);                /* emscripten starts at 0777: saved files would be unreadable */
  mkdir("/storage", 0700);   /* files mirrored in localStorage (poolsh.web) */
  lua_pushinteger(L, cols);
  lua_setglobal(L, "_POOLSH_COLUMNS");
  int status = dostring(
      "package.path = '/lua/?.lua;/lua/?/init.lua' package.cpath = '' "
      "poolsh = require('poolsh') require('poolsh.web').start(_POOLSH_COLUMNS) "
      "_POOLSH_COLUMNS = nil",
      "=(poolsh)");
  if (status != LUA_OK) return 1;
  interrupt_flag = poolsh_interrupt_flag(L);
  lua_getglobal(L, "poolsh");
  lua_getfield(L, -1, "repl");
  lua_setfield(L, LUA_REGISTRYINDEX, "poolsh.repl");
  lua_pop(L, 1);
  return 0;
}

/* Compiles the statement at index 1 and pushes the chunk or the error.
 * A first line is tried as "return <it>;" first (a leading '=' is
 * "return"), so an expression prints its value. */
static int compile(int first) {
  size_t len;
  const char *text = lua_tolstring(L, 1, &len);
  if (first) {
    const char *ret = lua_pushfstring(L, "return %s;", text[0] == '=' ? text + 1 : text);
    if (luaL_loadbuffer(L, ret, strlen(ret), "=stdin") == LUA_OK) {
      lua_remove(L, -2);
      return LUA_OK;
    }
    lua_pop(L, 2);
  }
  return luaL_loadbuffer(L, text, len, "=stdin");
}

/* 1 when the error on the stack says the chunk ended too soon (it is
 * popped); 0 otherwise. */
static int incomplete(int status) {
  size_t len;
  const char *msg = lua_tolstring(L, -1, &len);
  if (status != LUA_ERRSYNTAX || len < 5 || strcmp(msg + len - 5, "<eof>") != 0) return 0;
  lua_pop(L, 1);
  return 1;
}

/* Pushes the statement so far: the pending lines, then line. */
static void push_statement(const char *line) {
  if (pending) lua_pushfstring(L, "%s\n%s", pending, line);
  else lua_pushstring(L, line);
  free(pending);
  pending = NULL;
}

/* Runs the compiled statement on the stack and prints its results
 * through poolsh.repl.print, or its error. */
static void run_statement(void) {
  int status = docall(0, LUA_MULTRET);
  if (status != LUA_OK) {
    report(status);
  } else if (lua_gettop(L) > 0 && push_repl("print")) {
    lua_insert(L, 1);
    report(docall(lua_gettop(L) - 1, 0));
  }
  lua_settop(L, 0);
}

/* One line typed: 1 when the statement is incomplete (the page shows the
 * continuation prompt), 0 once it ran (or failed to compile), 2 when the
 * page has no Lua state. The live lines follow every statement. */
EMSCRIPTEN_KEEPALIVE int poolsh_web_line(const char *line) {
  if (!L) return 2;
  lua_settop(L, 0);
  int first = pending == NULL;
  push_statement(line);
  int status = compile(first);
  if (incomplete(status)) {
    pending = strdup(lua_tostring(L, 1));
    lua_settop(L, 0);
    return pending ? 1 : 0;
  }
  poolsh_set_statement(L, 1);
  lua_remove(L, 1);
  if (status == LUA_OK) run_statement();
  else report(status);
  lua_settop(L, 0);
  if (push_repl("after")) report(docall(0, 0));
  poolsh_set_statement(L, 0);
  lua_settop(L, 0);
  fflush(stdout);
  return 0;
}

/* Drops the lines of an incomplete statement (Ctrl-C at the prompt). */
EMSCRIPTEN_KEEPALIVE void poolsh_web_drop(void) {
  free(pending);
  pending = NULL;
}

/* The completions of word from poolsh.repl.complete, one a line; "" when
 * there are none. Valid until the next call. */
EMSCRIPTEN_KEEPALIVE const char *poolsh_web_complete(const char *word) {
  static char *out;
  free(out);
  out = NULL;
  if (!L || !push_repl("complete")) return "";
  int top = lua_gettop(L) - 1;
  lua_pushstring(L, word);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1)) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (lua_Integer i = 1, n = luaL_len(L, top + 1); i <= n; i++) {
      if (lua_geti(L, top + 1, i) == LUA_TSTRING) {
        if (i > 1) luaL_addchar(&b, '\n');
        luaL_addvalue(&b);
      } else {
        lua_pop(L, 1);
      }
    }
    luaL_pushresult(&b);
    out = strdup(lua_tostring(L, -1));
  }
  lua_settop(L, top);
  return out ? out : "";
}

/* The first line's prompt: poolsh.repl.prompt when it is a string (a
 * lesson sets its own), else "poolsh> ". Valid until the next call. */
EMSCRIPTEN_KEEPALIVE const char *poolsh_web_prompt(void) {
  static char custom[128];
  snprintf(custom, sizeof custom, "poolsh> ");
  if (!L) return custom;
  int top = lua_gettop(L);
  if (lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.repl") == LUA_TTABLE &&
      lua_getfield(L, -1, "prompt") == LUA_TSTRING)
    snprintf(custom, sizeof custom, "%s", lua_tostring(L, -1));
  lua_settop(L, top);
  return custom;
}

/* Ctrl-C while a statement runs: the hook raises "interrupted!" when the
 * browser hands the turn back, and poolsh's waits stop at their next
 * poll. Called as a raw export (never through ccall: see docs/web.md). */
EMSCRIPTEN_KEEPALIVE void poolsh_web_interrupt(void) {
  if (interrupt_flag) *interrupt_flag = 1;
}

/* The terminal's new width: poolsh.live.width, at least 40. */
EMSCRIPTEN_KEEPALIVE void poolsh_web_resize(int cols) {
  if (!L) return;
  int top = lua_gettop(L);
  if (lua_getglobal(L, "poolsh") == LUA_TTABLE && lua_getfield(L, -1, "live") == LUA_TTABLE) {
    lua_pushinteger(L, cols < 40 ? 40 : cols);
    lua_setfield(L, -2, "width");
  }
  lua_settop(L, top);
}

/* The picture's snapshot (poolsh.web.picture.snapshot(), JSON) when its
 * version is not since, else "" (unchanged, or it could not be made).
 * Called only at the prompt, never while a statement is suspended.
 * Valid until the next call. */
EMSCRIPTEN_KEEPALIVE const char *poolsh_web_picture(int since) {
  static char *out;
  free(out);
  out = NULL;
  if (!L) return "";
  int top = lua_gettop(L);
  if (push_picture(L, since)) out = strdup(lua_tostring(L, -1));
  lua_settop(L, top);
  return out ? out : "";
}
