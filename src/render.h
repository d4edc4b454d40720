/*
 * render.h: the one way C asks Lua for words. The observation layer
 * reports codes, ids and numbers; a binding that must show them as text
 * (b.why_fresh, an out-of-memory message) calls the renderer named, a
 * Lua module under lua/poolsh/render/ that returns one function.
 */
#ifndef POOLSH_RENDER_H
#define POOLSH_RENDER_H

#include "lua.h"

/* Calls require(module)(v1, ..., vn) on the nargs values on top of the
 * stack, which it replaces with the function's one result. Raises what
 * require or the renderer raises. */
void ps_render(lua_State *L, const char *module, int nargs);

#endif
