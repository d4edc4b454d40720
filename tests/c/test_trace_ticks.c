/*
 * test_trace_ticks.c: the recorder's tick stamps. A backend with ticks
 * (the cuda one: the CPU's time-stamp counter) has its events stamped
 * with ticks and converted to ms when Lua reads them. Here the sim gets
 * ticks made from its virtual clock (3 ticks a ns plus an offset), so
 * every converted time must equal poolsh.now() at the event exactly.
 */
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lualib.h>

#include "context.h"
#include "poolsh.h"

static long ticks_read;

static uint64_t sim_ticks(void *ctx) {
  ticks_read++;
  return (uint64_t)(ps_backend_sim.now(ctx) * 3e6) + 1000003;
}

static ps_backend ticking;

/* The Lua side: each check compares an event's t with the clock read
 * right before the call; on the sim the call costs virtual time, so the
 * time is the clock before the call plus nothing the event did first. */
static const char *const script =
  "local core = require 'poolsh.core'\n"
  "local failures = 0\n"
  "local function check(ok, what)\n"
  "  if not ok then failures = failures + 1; io.stderr:write('FAIL: ', what, '\\n') end\n"
  "end\n"
  "local p, s = core.pool{release_threshold = 0}, core.stream()\n"
  "core.core.trace_start()\n"
  "local before, after = {}, {}\n"
  "for i = 1, 5 do\n"
  "  before[#before + 1] = core.now(); local b = p:alloc(1 << 20, s); after[#after + 1] = core.now()\n"
  "  core.spin(s, 0.5 * i)\n"
  "  before[#before + 1] = core.now(); b:free(); after[#after + 1] = core.now()\n"
  "end\n"
  "local mid = core.core.trace_events()\n"       /* settles while recording */
  "before[#before + 1] = core.now(); s:sync(); after[#after + 1] = core.now()\n"
  "core.core.trace_stop()\n"
  "core.spin(s, 3); s:sync()\n"             /* not recorded: time passes */
  "core.core.trace_start()\n"
  "before[#before + 1] = core.now(); local b = p:alloc(4096, s); after[#after + 1] = core.now()\n"
  "before[#before + 1] = core.now(); b:free(); after[#after + 1] = core.now()\n"
  "core.core.trace_stop()\n"
  "local ev, k, last = core.core.trace_events(), 0, -1\n"
  "check(#mid > 0 and mid[#mid].t == ev[#mid].t, 'times read while recording stay')\n"
  "for _, e in ipairs(ev) do\n"
  "  check(e.t >= last, 'times never go back: ' .. e.seq)\n"
  "  last = e.t\n"
  "  if e.op == 'alloc' or e.op == 'free' or e.op == 'stream_sync' then\n"
  "    k = k + 1\n"
  "    check(e.t >= before[k] - 1e-9 and e.t <= after[k] + 1e-9,\n"
  "          string.format('%s %d at %.9f, called between %.9f and %.9f', e.op, e.seq, e.t, before[k], after[k]))\n"
  "  end\n"
  "end\n"
  "check(k == #before, 'every timed call recorded: ' .. k .. ' of ' .. #before)\n"
  "events_seen = #ev\n"
  "core.core.trace_clear()\n"
  "core.core.trace_start(); local t0 = core.now(); p:alloc(64, s):free(); core.core.trace_stop()\n"
  "ev = core.core.trace_events()\n"
  "check(#ev >= 2 and ev[1].t >= t0 - 1e-9, 'after clear, times start again from the clock')\n"
  "return failures\n";

int main(void) {
  setenv("POOLSH_BACKEND", "sim", 1);
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "poolsh.core", luaopen_poolsh_core, 0);
  lua_getfield(L, -1, "device");
  lua_call(L, 0, 0);                        /* opens the backend */
  lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, PS_CONTEXT);
  ps_ctx *c = (ps_ctx *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!c || c->be != &ps_backend_sim) {
    fprintf(stderr, "test_trace_ticks: the sim backend did not open\n");
    return 1;
  }
  ticking = ps_backend_sim;
  ticking.ticks = sim_ticks;
  c->be = &ticking;
  int failures = 1;
  if (luaL_dostring(L, script) != LUA_OK)
    fprintf(stderr, "test_trace_ticks: %s\n", lua_tostring(L, -1));
  else
    failures = (int)lua_tointeger(L, -1);
  lua_getglobal(L, "events_seen");
  long events = (long)lua_tointeger(L, -1);
  if (ticks_read < events) {         /* each event stamped with ticks */
    fprintf(stderr, "FAIL: %ld tick reads for %ld events\n", ticks_read, events);
    failures++;
  }
  c->be = &ps_backend_sim;
  lua_close(L);
  printf("test_trace_ticks: %s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
