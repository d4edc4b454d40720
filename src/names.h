/*
 * names.h: the codes C and Lua share and their names (names.c, read by
 * Lua as poolsh.core.names): kinds of memory, pool settings, reuse
 * rules, and what poolsh does (the recorder's ops). One table each.
 */
#ifndef POOLSH_NAMES_H
#define POOLSH_NAMES_H

#include "lua.h"
#include "backend.h"

/* What poolsh does, as the recorder names it (docs/trace.md). */
typedef enum {
  PS_OP_ALLOC, PS_OP_ALLOC_FAILED, PS_OP_FREE, PS_OP_FREE_COMPLETED, PS_OP_RESERVE,
  PS_OP_RELEASE, PS_OP_COPY, PS_OP_FILL, PS_OP_TOUCH, PS_OP_VERIFY, PS_OP_SPIN,
  PS_OP_RECORD, PS_OP_WAIT, PS_OP_STREAM_SYNC, PS_OP_EVENT_SYNC, PS_OP_DEVICE_SYNC,
  PS_OP_TRIM, PS_OP_SET, PS_OP_POOL_CREATE, PS_OP_POOL_DESTROY, PS_OP_STREAM_CREATE,
  PS_OP_STREAM_DESTROY, PS_OP_READ, PS_OP_WRITE, PS_OP_ALLOC_RETRY,
  PS_OP_VMM_RESERVE, PS_OP_VMM_CREATE, PS_OP_VMM_MAP, PS_OP_VMM_UNMAP, PS_OP_VMM_SET_ACCESS,
  PS_OP_VMM_RELEASE, PS_OP_VMM_FREE, PS_OP_COUNT
} ps_op;

extern const char *const ps_op_names[PS_OP_COUNT];

/* names.c: one table for each name Lua and C share (poolsh.core.names). */
extern const char *const ps_kind_names[];      /* by ps_kind */
extern const char *const ps_setting_names[];   /* a pool's settable fields, then NULL */
extern const char *const ps_rule_names[];      /* by ps_reuse_rule; NULL: none */
int poolsh_open_names(lua_State *L);

#endif
