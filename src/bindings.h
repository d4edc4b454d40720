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
int poolsh_open_vmm(lua_State *L);
int poolsh_open_view(lua_State *L);
/* vmm.c: poolsh.core.reset() ends every Range and Memory. */
void ps_vmm_reset(lua_State *L);

/* buffer.c */
/* A Buffer metatable's integer keys: its freed twin (live ones), its
 * live twin (freed ones), the Pool and the Stream it holds (pool
 * Buffers'); a Pool's own metatable keeps its cache of those at
 * MT_POOL_CACHE. */
enum { MT_FREED = 1, MT_LIVE, MT_POOL, MT_STREAM, MT_POOL_CACHE = 1 };
ps_bufferud *ps_newbuffer(lua_State *L, ps_ctx *c, ps_kind kind, uint64_t size, int mt);
void ps_push_buffer_mt(lua_State *L, int pool, int stream, int cache);
ps_bufferud *ps_buffer_import(lua_State *L, ps_ctx *c, ps_poolud *p, int token, int stream);
int ps_buffer_release(ps_ctx *c, ps_bufferud *b, ps_stream *s, int deferred);

#endif
