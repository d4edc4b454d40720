/*
 * poolsh.h: what the hosts (main.c, module.c, web.c) need of the core:
 * the module's open function, the flag Ctrl-C sets, and the message
 * handler and statement naming of their REPLs. The rest is layered
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
/* The message handler's body: a traceback added, or with brief (a
 * REPL) kept in poolsh.repl.last_traceback and the message alone. */
int poolsh_msghandler(lua_State *L, int brief);
/* Names the statement the REPL runs (its text at idx; 0: none). */
void poolsh_set_statement(lua_State *L, int idx);

#endif
