/*
 * bindings.h: each bound type's open function, which the roof (init.c)
 * walks, and what buffer.c gives the one binding above it (pool.c: IPC
 * imports and new pool buffers) and the roof (reset's frees).
 */
#ifndef POOLSH_BINDINGS_H
#define POOLSH_BINDINGS_H

#include "object.h"

int poolsh_open_stream(lua_State *L);
int poolsh_open_event(lua_State *L);
int poolsh_open_pool(lua_State *L);
int poolsh_open_buffer(lua_State *L);
int poolsh_open_device(lua_State *L);
int poolsh_open_bench(lua_State *L);
int poolsh_open_process(lua_State *L);
int poolsh_open_inspect(lua_State *L);

/* buffer.c */
ps_bufferud *ps_newbuffer(lua_State *L, ps_ctx *c, ps_kind kind, uint64_t size);
ps_bufferud *ps_buffer_import(lua_State *L, ps_ctx *c, ps_poolud *p, int token, int stream);
int ps_buffer_release(ps_ctx *c, ps_bufferud *b, ps_stream *s, int deferred);

#endif
