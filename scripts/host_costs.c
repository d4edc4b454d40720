/*
 * host_costs.c: what the pieces of a recorded event cost on this host,
 * for docs/performance.md: the clocks the recorder can stamp events with,
 * the driver query it avoids, and lua_getinfo with the options it uses.
 * Each figure is ns per call, the mean over a loop, three times over.
 *
 * Build (development machine) and run (GPU machine, .gpu carried):
 *   gcc -O2 scripts/host_costs.c -o build/host_costs -I/usr/local/cuda/include \
 *       $(pkg-config --cflags lua5.4) -L/usr/local/cuda/lib64 -lcudart_static \
 *       -ldl -lpthread -lrt -llua5.4
 *   source .gpu/env.sh; ./build/host_costs
 */
#include <stdio.h>
#include <time.h>

#include <cuda_runtime.h>
#include <lauxlib.h>
#include <lualib.h>
#include <x86intrin.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static volatile double sink;

static void clocks(void) {
  enum { N = 2000000 };
  struct timespec ts;
  double t0 = now_ns();
  for (int i = 0; i < N; i++) clock_gettime(CLOCK_MONOTONIC, &ts), sink += (double)ts.tv_nsec;
  double t1 = now_ns();
  for (int i = 0; i < N; i++) sink += (double)__rdtsc();
  double t2 = now_ns();
  printf("clock_gettime(CLOCK_MONOTONIC) %6.1f ns   rdtsc %6.1f ns\n", (t1 - t0) / N, (t2 - t1) / N);
}

static void driver(cudaMemPool_t p, cudaStream_t s) {
  enum { N = 200000 };
  void *d;
  unsigned long long v;
  double t0 = now_ns();
  for (int i = 0; i < N; i++) cudaMallocFromPoolAsync(&d, 1 << 20, p, s), cudaFreeAsync(d, s);
  double t1 = now_ns();
  for (int i = 0; i < N; i++) cudaMemPoolGetAttribute(p, cudaMemPoolAttrReservedMemCurrent, &v), sink += (double)v;
  double t2 = now_ns();
  printf("alloc+free pair %6.1f ns   cudaMemPoolGetAttribute %6.1f ns\n", (t1 - t0) / N, (t2 - t1) / N);
}

static const char *what;   /* lua_getinfo's options; "-": no call at all */

static int probe(lua_State *L) {
  lua_Debug ar;
  if (*what == '-' || !lua_getstack(L, 1, &ar)) return 0;
  lua_getinfo(L, what, &ar);
  if (*what == 'f') lua_pop(L, 1);
  return 0;
}

static void getinfo(lua_State *L) {
  static const char *const options[] = {"-", "l", "fl", "Sl"};
  for (int k = 0; k < 4; k++) {
    what = options[k];
    double t0 = now_ns();
    if (luaL_dostring(L, "for i = 1, 2000000 do probe() end") != LUA_OK) return;
    printf("a C call from Lua, lua_getinfo \"%s\": %6.1f ns\n", what, (now_ns() - t0) / 2e6);
  }
}

int main(void) {
  cudaStream_t s;
  cudaMemPool_t p;
  struct cudaMemPoolProps props = {0};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  unsigned long long keep = ~0ull;
  if (cudaStreamCreate(&s) != cudaSuccess || cudaMemPoolCreate(&p, &props) != cudaSuccess) {
    fprintf(stderr, "host_costs: no CUDA device\n");
    return 1;
  }
  cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
  lua_State *L = luaL_newstate();
  lua_register(L, "probe", probe);
  for (int round = 0; round < 3; round++) {
    clocks();
    driver(p, s);
    getinfo(L);
  }
  lua_close(L);
  cudaStreamSynchronize(s);
  cudaMemPoolDestroy(p);
  return 0;
}
