/*
 * auxlib.h: the floor (as Lua's lauxlib.h): argument, size, duration,
 * option-table, token and message helpers. Lua and libc only: nothing
 * here knows the device context or a bound type.
 *
 * Every C function poolsh exports to Lua gets the context userdata as
 * upvalue 1 (its layout is context.h's); a type's meta functions also
 * get their methods table as upvalue 2.
 */
#ifndef POOLSH_AUXLIB_H
#define POOLSH_AUXLIB_H

#include <stddef.h>
#include <stdint.h>
#include "lua.h"
#include "lauxlib.h"

/* The context userdata's name in the registry (ps_setfuncs reads it). */
#define PS_CONTEXT "poolsh.Context"
#define PS_UP_CTX lua_upvalueindex(1)
#define PS_UP_METHODS lua_upvalueindex(2)
/* The context's user value 1: the unit parsers that poolsh/init.lua
 * installs (poolsh.core.set_parsers); context.h numbers the rest. */
#define PS_UV_PARSERS 1

/* Long values in messages are cut to this many bytes, then "...". */
#define PS_SHOWN_MAX 64

/* Sizes: a non-negative integer or a unit string ("4 KiB"). */
const char *ps_tosize(lua_State *L, int idx, uint64_t *out);
uint64_t ps_checksize(lua_State *L, int arg);
uint64_t ps_optsize(lua_State *L, int arg, uint64_t def);
uint64_t ps_fieldsize(lua_State *L, int t, const char *key, const char *what, uint64_t def);
const char *ps_pushsize(lua_State *L, uint64_t bytes);
double ps_checkduration(lua_State *L, int arg);
int ps_todevice(lua_State *L, int idx, const char *what);
const char *ps_checksockpath(lua_State *L, int arg);
const char *ps_shown(lua_State *L, int idx);

/* IPC tokens' fields (buffer and event tokens). */
int ps_token_number(const char **q, const char *end, char stop, unsigned long long max,
                    unsigned long long *v);
int ps_token_hex(const char *q, const char *end, uint8_t *d, int n);

/* Option tables and classes' fields. */
void ps_checkoptions(lua_State *L, int arg, const char *what,
                     const char *const allowed[]);
int ps_optfield_bool(lua_State *L, int arg, const char *key, int def);
void ps_copytable(lua_State *L, int src);
void ps_setfuncs(lua_State *L, const luaL_Reg *l);
int ps_field(lua_State *L, int idx, const char *const fields[]);
int ps_method(lua_State *L);

#endif
