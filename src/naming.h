/*
 * naming.h: the names given to objects (naming.c): o.name, the name=
 * option, and the labels messages show. kind is PS_ID_*.
 */
#ifndef POOLSH_NAMING_H
#define POOLSH_NAMING_H

#include "context.h"

void ps_checkname(lua_State *L, int idx);
int ps_optname(lua_State *L, int arg);
void ps_setname(lua_State *L, int kind, int id, int idx);
void ps_pushname(lua_State *L, int kind, int id);
const char *ps_pushlabel(lua_State *L, int kind, int id);
int ps_newindex_name(lua_State *L, int kind, int id, const char *tname);
int poolsh_open_naming(lua_State *L);

#endif
