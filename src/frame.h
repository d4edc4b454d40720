/*
 * frame.h: the decoder of poolsh.Process's channel frames (process.c,
 * docs/processes.md), declared for the fuzz target tests/c/fuzz_frame.c:
 * the production path, fed bytes.
 */
#ifndef POOLSH_FRAME_H
#define POOLSH_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

/* Decodes a frame's body (after its 4-byte length: kind, sequence, count,
 * values). On success pushes the values and returns their count, *kind
 * and *seq set; on bytes that are not a well-formed frame of a known kind
 * pushes nothing and returns -1. Raises only for memory. */
int ps_frame_decode(lua_State *L, const char *body, size_t len, char *kind, uint32_t *seq);

#endif
