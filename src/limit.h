/*
 * limit.h: poolsh --limit and --pinned-limit (limit.c), checked by the
 * bindings; the limits and what is held live in the context (ps_limits).
 */
#ifndef POOLSH_LIMIT_H
#define POOLSH_LIMIT_H

#include "object.h"

void ps_limit_configure(lua_State *L, ps_ctx *c, int t);
int ps_limit_pool_alloc(lua_State *L, ps_ctx *c, ps_bufferud *b, ps_alloc_note *note);
uint64_t ps_limit_counted(ps_ctx *c, ps_kind kind, uint64_t size);
int ps_limit_check(lua_State *L, ps_ctx *c, int pinned, uint64_t bytes);
void ps_limit_took(ps_ctx *c, ps_bufferud *b, uint64_t held);
void ps_limit_gone(ps_ctx *c, ps_bufferud *b);
void ps_limit_vmm_took(ps_ctx *c, int pinned, uint64_t bytes);
void ps_limit_vmm_gone(ps_ctx *c, int pinned, uint64_t bytes);
int ps_limit_fail(lua_State *L, ps_ctx *c, const char *what);
void ps_limit_push(lua_State *L, ps_ctx *c);

#endif
