/*
 * test_two_states.c: two lua_States open poolsh.core at once, on the sim,
 * and share nothing (conventions.md: no per-state data in C globals).
 * Their calls interleave; each state's ids start at 1, its clock, memory,
 * pools, pending frees, recording and settings are its own; closing one
 * leaves the other working, and a state opened after starts afresh.
 * Prints TAP; exits non-zero on any failure.
 */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "poolsh.h"

static int tests, failures;

/* Reports one check as a TAP line. */
static void check(int ok, const char *what) {
  tests++;
  if (!ok) failures++;
  printf("%s %d - %s\n", ok ? "ok" : "not ok", tests, what);
}

/* A state with the standard libraries and poolsh.core as global core,
 * configured for the sim with sim_memory bytes of device memory. */
static lua_State *open_state(long long sim_memory) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "poolsh.core", luaopen_poolsh_core, 0);
  lua_setglobal(L, "core");
  char code[128];
  snprintf(code, sizeof code, "core.configure{backend = 'sim', sim_memory = %lld}", sim_memory);
  if (luaL_dostring(L, code) != LUA_OK) {
    printf("# configure: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  return L;
}

/* Runs code in L; an error counts as a failed check named what. */
static void run(lua_State *L, const char *what, const char *code) {
  if (luaL_dostring(L, code) == LUA_OK) return;
  check(0, what);
  printf("# %s\n", lua_tostring(L, -1));
  lua_pop(L, 1);
}

/* The integer value of expression expr in L; -1 on error or non-integer. */
static long long get(lua_State *L, const char *expr) {
  char code[256];
  snprintf(code, sizeof code, "return %s", expr);
  long long v = -1;
  if (luaL_dostring(L, code) != LUA_OK) {
    printf("# %s: %s\n", expr, lua_tostring(L, -1));
  } else if (lua_isinteger(L, -1)) {
    v = (long long)lua_tointeger(L, -1);
  } else if (lua_isboolean(L, -1)) {
    v = lua_toboolean(L, -1);
  }
  lua_settop(L, 0);
  return v;
}

/* The message of the error code raises in L, in buf ("" if none). */
static const char *error_of(lua_State *L, const char *code, char *buf, size_t n) {
  buf[0] = '\0';
  if (luaL_dostring(L, code) != LUA_OK) snprintf(buf, n, "%s", lua_tostring(L, -1));
  lua_settop(L, 0);
  return buf;
}

#define MiB (1LL << 20)

int main(void) {
  char msg[256];
  lua_State *A = open_state(1024 * MiB);
  lua_State *B = open_state(2048 * MiB);

  /* Each state opens its own device, with its own configuration. */
  check(get(A, "core.device().total") == 1024 * MiB, "A's sim has A's sim_memory");
  check(strstr(error_of(A, "core.configure{backend = 'sim'}", msg, sizeof msg),
               "already open") != NULL, "A, open, refuses configure");
  check(get(B, "core.device().total") == 2048 * MiB, "B's sim has B's sim_memory");

  /* Interleaved creation: ids count per state, from 1. */
  run(A, "A creates", "s = core.stream(); p = core.pool{}; b = p:alloc(1 << 20, s)");
  run(B, "B creates", "s = core.stream(); p = core.pool{}; q = core.pool{}; "
                      "b = p:alloc(4 << 20, s); c = q:alloc(1 << 20, s)");
  run(A, "A creates more", "e = core.event(); t = core.stream()");
  check(get(A, "s.id") == 1 && get(B, "s.id") == 1, "stream ids start at 1 in each");
  check(get(A, "p.id") == 1 && get(B, "p.id") == 1 && get(B, "q.id") == 2,
        "pool ids start at 1 in each");
  check(get(A, "b.id") == 1 && get(B, "b.id") == 1 && get(B, "c.id") == 2,
        "buffer ids start at 1 in each");
  check(get(A, "t.id") == 2 && get(A, "e.id") == 1, "A's next ids follow A's own");
  check(get(A, "#core.core.objects()") == 1 && get(B, "#core.core.objects()") == 2,
        "each state lists only its own pools");

  /* Memory: each buffer holds what its own state wrote. */
  run(A, "A fills", "core.fill(b, 0xaa, s)");
  run(B, "B fills", "core.fill(b, 0xbb, s); core.fill(c, 0xcc, s)");
  run(A, "A writes", "b:write(0, 'A')");
  check(get(A, "core.verify(b, 0xaa, s) == false and b:read(0, 2) == 'A\\xaa'") == 1,
        "A's buffer has A's bytes");
  check(get(B, "core.verify(b, 0xbb, s) and core.verify(c, 0xcc, s)") == 1,
        "B's buffers have B's bytes");
  check(get(A, "p:stats().used") == 1 * MiB && get(B, "p:stats().used") == 4 * MiB &&
        get(B, "q:stats().used") == 1 * MiB, "pool counters are per state");
  check(get(A, "select(2, core.core.live())") == 1 && get(B, "select(2, core.core.live())") == 2,
        "each state's ledger holds its own live buffers");

  /* Clocks: time spent in A does not pass in B. */
  run(B, "B reads its clock", "t0 = core.now()");
  run(A, "A spins and syncs", "core.spin(s, 500); s:sync()");
  check(get(A, "core.now() >= 500") == 1, "A's clock moved 500 ms");
  check(get(B, "core.now() - t0 < 1") == 1, "B's clock did not");

  /* Pending frees, recording and settings are per state. */
  run(A, "A frees", "core.spin(s, 10); b:free()");
  check(get(A, "select(2, core.core.pending())") == 1, "A has a pending free");
  check(get(B, "select(2, core.core.pending())") == 0, "B has none");
  run(B, "B records", "core.core.trace_start(); core.option('report_rules', 0)");
  check(get(B, "core.core.trace_recording()") == 1 && get(A, "core.core.trace_recording()") == 0,
        "only B records");
  check(get(B, "core.option('report_rules')") == 0 && get(A, "core.option('report_rules')") == 1,
        "a sim option set in B is B's");
  run(A, "A syncs", "s:sync()");
  check(get(A, "select(2, core.core.pending())") == 0 && get(A, "p:stats().used") == 0,
        "A's free completes on A's sync");

  /* Closing A, with a stream and an event still live, leaves B working. */
  lua_close(A);
  run(B, "B works on after A closed",
      "c:free(); b:write(1, 'B'); d = p:alloc(1 << 20, s); core.fill(d, 0xdd, s); "
      "s:sync(); core.core.trace_stop()");
  check(get(B, "b:read(0, 3) == '\\xbbB\\xbb' and core.verify(d, 0xdd, s)") == 1,
        "B's memory survives A's close");
  check(get(B, "d.id") == 3 && get(B, "#core.core.trace_events() > 0") == 1,
        "B's ids and record go on");
  check(get(B, "p:stats().used") == 5 * MiB && get(B, "q:stats().used") == 0,
        "B's counters go on");

  /* A state opened now starts afresh beside B. */
  lua_State *C = open_state(512 * MiB);
  run(C, "C creates", "s = core.stream(); b = core.pool{}:alloc(64, s); s:sync()");
  check(get(C, "s.id") == 1 && get(C, "b.id") == 1 && get(C, "core.now() < 500") == 1,
        "a third state starts at id 1 and time 0");
  check(get(C, "core.device().total") == 512 * MiB, "with its own configuration");
  run(C, "C frees", "b:free(); s:sync()");
  lua_close(C);

  run(B, "B frees", "b:free(); d:free(); s:sync()");
  check(get(B, "select(2, core.core.live())") == 0 && get(B, "p:stats().used") == 0,
        "B ends with nothing live");
  lua_close(B);

  printf("1..%d\n", tests);
  printf("test_two_states: %s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
