/*
 * render.h: the one way C asks Lua for words. The observation layer
 * reports codes, ids and numbers; a binding that must show them as text
 * (b.why_fresh, an out-of-memory message) calls the renderer named, a
 * Lua module under lua/poolsh/render/ that returns one function.
 */
#ifndef POOLSH_RENDER_H
#define POOLSH_RENDER_H

#include "lua.h"

/* Calls the renderer module (require(module), the require there was
 * when poolsh.core opened, so a script that replaces require changes no
 * message) on the nargs values on top of the stack, which it replaces
 * with the renderer's string. A renderer that is missing, raises, yields
 * or returns no string raises nothing: its result is then
 * "(MODULE failed: REASON)", so the error being worded still shows. */
void ps_render(lua_State *L, const char *module, int nargs);

/* Keeps the global require for ps_render (poolsh.core's open calls it). */
void ps_render_keep_require(lua_State *L);

#endif
