/*
 * views.h: what the observation layer shows the views, the binding
 * inspect.c behind poolsh.core.blocks, live, pending, recent, counts,
 * releases, peak_push/peak_pop and stream_state. Each pushes tables of
 * codes, ids and numbers (views.c, ledger.c); the binding checks the
 * arguments, raises the errors and asks Lua for any words (render.h).
 */
#ifndef POOLSH_VIEWS_H
#define POOLSH_VIEWS_H

#include "context.h"

/* Pushes pool p's extents as an array of {addr, size, buffer, stream,
 * pending} sorted by address (all: the done ones too, marked done; at
 * most max, the lowest, when max >= 0), then the pool's lowest address
 * seen (its base) and how many extents there are in all. */
void ps_view_blocks(lua_State *L, ps_ctx *c, const ps_poolud *p, int all, lua_Integer max);

/* Push the oldest live buffers, {buffer, kind, size, addr, pool, stream,
 * src}, or the pending frees, {buffer, size, addr, pool, stream}, at most
 * max (max < 0: all); return how many there are in all (ledger.c). */
lua_Integer ps_ledger_push_live(lua_State *L, ps_ctx *c, lua_Integer max);
lua_Integer ps_ledger_push_pending(lua_State *L, ps_ctx *c, lua_Integer max);

/* Pushes the allocations numbered after since (at most the last 64):
 * {buffer, size, pool, stream, reused, reused_from, rule, sources,
 * source_pid, source_buffer, why_fresh}, why_fresh as codes (ledger.c's
 * ps_push_why: render it with poolsh.render.why_fresh); then the number
 * of the latest. */
void ps_view_recent(lua_State *L, ps_ctx *c, lua_Integer since);

/* Pushes {pools = {[id] = counts}, total = counts} (poolsh.core.counts). */
void ps_view_counts(lua_State *L, ps_ctx *c);

/* Pushes the releases numbered after since (at most the last 64), then
 * the number of the latest (poolsh.core.releases). */
void ps_view_releases(lua_State *L, ps_ctx *c, lua_Integer since);

/* A peak scope begins; 0 when there was no memory for it. */
int ps_view_peak_push(ps_ctx *c);
/* The innermost peak scope ends: pushes its peaks {pools = {[id] =
 * peak}, total = peak}; 0 (nothing pushed) when none is open. */
int ps_view_peak_pop(lua_State *L, ps_ctx *c);

/* Stream s's operations queued and known complete. */
void ps_view_stream_position(const ps_streamud *s, uint64_t *ops, uint64_t *done);

#endif
