/*
 * names.c: the one table of each name C and Lua share. Lua reads them as
 * poolsh.core.names (kinds, settings, rules, ops).
 */
#include "names.h"

const char *const ps_kind_names[] = {"pool", "malloc", "pinned", "pageable", "vmm", NULL};

/* A pool's settings, in ps_pool_attr's order of PS_ATTR_RELEASE_THRESHOLD.. */
const char *const ps_setting_names[] = {
  "release_threshold", "follow_event_dependencies", "opportunistic",
  "internal_dependencies", NULL
};

/* By ps_reuse_rule (docs/explain.md); NULL for none and unknown. */
const char *const ps_rule_names[] = {
  NULL, "stream order", "event dependency", "host synchronisation", "opportunistic",
  "internal dependency", NULL
};

const char *const ps_op_names[PS_OP_COUNT] = {
  "alloc", "alloc_failed", "free", "free_completed", "reserve", "release", "copy",
  "fill", "touch", "verify", "spin", "record", "wait", "stream_sync", "event_sync",
  "device_sync", "trim", "set", "pool_create", "pool_destroy", "stream_create",
  "stream_destroy", "read", "write", "alloc_retry", "vmm_reserve", "vmm_create", "vmm_map",
  "vmm_unmap", "vmm_set_access", "vmm_release", "vmm_free"
};

/* Sets t[name] = array of names[0..n) (n < 0: up to the first NULL). */
static void set_names(lua_State *L, const char *name, const char *const *names, int n) {
  lua_newtable(L);
  for (int i = 0; n < 0 ? names[i] != NULL : i < n; i++) {
    lua_pushstring(L, names[i] ? names[i] : "");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, name);
}

/* poolsh.core.names = {kinds, settings, rules (by rule number, "" for
 * none), ops}. */
int poolsh_open_names(lua_State *L) {
  lua_settop(L, 2);
  lua_newtable(L);
  set_names(L, "kinds", ps_kind_names, -1);
  set_names(L, "settings", ps_setting_names, -1);
  set_names(L, "rules", ps_rule_names, PS_RULE_UNKNOWN);
  set_names(L, "ops", ps_op_names, PS_OP_COUNT);
  lua_setfield(L, 2, "names");          /* a view: the table of views */
  return 0;
}
