/*
 * poolsh.h: what the hosts (main.c, module.c) need of the core: the
 * module's open function and the flag Ctrl-C sets. The rest is layered
 * below (docs/architecture.md): auxlib.h, context.h, observe.h,
 * object.h, bindings.h.
 */
#ifndef POOLSH_H
#define POOLSH_H

#include <signal.h>
#include "lua.h"

/* The flag the host's SIGINT handler sets to stop a wait (Ctrl-C). */
volatile sig_atomic_t *poolsh_interrupt_flag(lua_State *L);
int luaopen_poolsh_core(lua_State *L);

#endif
