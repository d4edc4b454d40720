/*
 * fuzz_frame.c: the input fuzzer of poolsh.Process's frame decoder
 * (ps_frame_decode in process.c, the path every frame read from a channel
 * takes). Valid frames of each kind decode; mutated ones decode or are
 * refused as malformed; each within 2 s and 256 MiB of Lua memory; a
 * decoded frame's values are what Lua can hold (no nil or NaN key).
 * Usage: fuzz_frame [--seed S] [--seconds T | --inputs N] [--tmpdir D] [--replay FILE]
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "frame.h"
#include "fuzzlib.h"

#define MEM_MAX (256u << 20)
#define INPUT_MAX (1u << 16)

static size_t used;

/* Lua's allocator, counting: past MEM_MAX it refuses (Lua raises "not
 * enough memory"), which the target reports as a failure. */
static void *alloc(void *ud, void *p, size_t osize, size_t nsize) {
  (void)ud;
  if (p) used -= osize;
  if (nsize == 0) { free(p); return NULL; }
  if (used + nsize > MEM_MAX) { if (p) used += osize; return NULL; }
  void *q = realloc(p, nsize);
  used += q ? nsize : (p ? osize : 0);
  return q;
}

static int decode_protected(lua_State *L) {
  const char *b = lua_touserdata(L, 1);
  size_t n = (size_t)lua_tointeger(L, 2);
  lua_settop(L, 0);
  char kind;
  uint32_t seq;
  int k = ps_frame_decode(L, b, n, &kind, &seq);
  if (k >= 0 && lua_gettop(L) != k) return luaL_error(L, "pushed %d values, said %d", lua_gettop(L), k);
  lua_pushinteger(L, k);
  return 1;
}

static const char *decode(const unsigned char *b, size_t n) {
  used = 0;
  lua_State *L = lua_newstate(alloc, NULL);
  if (!L) return "no Lua state";
  lua_pushcfunction(L, decode_protected);
  lua_pushlightuserdata(L, (void *)b);
  lua_pushinteger(L, (lua_Integer)n);
  const char *why = NULL;
  if (lua_pcall(L, 2, 1, 0) != LUA_OK) why = fz_why("raised: %s", lua_tostring(L, -1));
  else if (lua_tointeger(L, -1) < 0) fz_refused();
  lua_close(L);
  return why;
}

/* A frame body: kind, sequence, count, then the values' bytes. */
static fz_input body(char kind, uint32_t seq, uint32_t count, const char *vals, size_t n) {
  fz_input in = { malloc(9 + n), 9 + n };
  in.b[0] = (unsigned char)kind;
  for (int i = 0; i < 4; i++) in.b[1 + i] = (unsigned char)(seq >> (24 - 8 * i));
  for (int i = 0; i < 4; i++) in.b[5 + i] = (unsigned char)(count >> (24 - 8 * i));
  memcpy(in.b + 9, vals, n);
  return in;
}

#define V(s) s, sizeof s - 1

int main(int argc, char **argv) {
  fz_input corpus[] = {
    body('M', 0, 0, V("")),
    body('M', 0, 1, V("n")),
    body('M', 0, 3, V("tf" "i\0\0\0\0\0\0\0\x07")),
    body('M', 0, 1, V("d\x40\x09\x21\xfb\x54\x44\x2d\x18")),
    body('M', 0, 1, V("s\0\0\0\x05hello")),
    body('E', 7, 2, V("s\0\0\0\x08return 1" "T\0\0\0\x02" "s\0\0\0\x01" "a" "i\0\0\0\0\0\0\0\x01"
                      "i\0\0\0\0\0\0\0\x02" "T\0\0\0\x01" "s\0\0\0\x01x" "f")),
    body('R', 7, 2, V("n" "s\0\0\0\x03\0\x01\x02")),
    body('X', 9, 1, V("s\0\0\0\x04" "boom")),
    body('M', 0, 1, V("T\0\0\0\x01" "t" "T\0\0\0\x01" "t" "T\0\0\0\x01" "t" "T\0\0\0\0")),
  };
  int r = fz_run("frame", argc, argv, corpus, sizeof corpus / sizeof *corpus, decode, 2.0, INPUT_MAX);
  for (size_t i = 0; i < sizeof corpus / sizeof *corpus; i++) free(corpus[i].b);
  return r;
}
