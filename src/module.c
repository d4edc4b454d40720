/*
 * module.c: the shared object stock lua5.4 loads for require "poolsh.core"
 * (build/lib/poolsh/core.so). luaopen_poolsh_core itself lives in init.c,
 * linked in whole from the static core library.
 */
#include "poolsh.h"

/* Keeps the entry point referenced from this object. */
int (*const poolsh_module_entry)(lua_State *L) = luaopen_poolsh_core;
