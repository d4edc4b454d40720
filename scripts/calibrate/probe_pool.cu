// probe_pool.cu — measure the behaviour of CUDA stream-ordered memory pools
// (cudaMallocFromPoolAsync / cudaFreeAsync) on a real GPU, to calibrate
// poolsh's simulated device.
//
// Self-contained, CUDA runtime API only.  Output: lines `key = value`
// (bytes, µs, GB/s, booleans as true/false, CUDA error names), grouped by
// experiment; lines starting with '#' are comments/headers.
//
// Build: nvcc -O2 -arch=native -o probe_pool probe_pool.cu
// Run:   ./probe_pool
//
// All streams are created cudaStreamNonBlocking (no implicit sync with the
// legacy default stream).  Every experiment uses a fresh pool (device
// location, pinned) unless it is about the default pool; reservations are
// read with cudaMemPoolGetAttribute, which itself is not a sync point.

#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <unistd.h>

// ------------------------------------------------------------------ helpers
static int g_errors = 0;
static int g_dev = 0;

static bool ck(cudaError_t e, const char *what, int line) {
  if (e != cudaSuccess) {
    printf("# CUDA ERROR (line %d): %s -> %s: %s\n", line, what,
           cudaGetErrorName(e), cudaGetErrorString(e));
    fflush(stdout);
    g_errors++;
    (void)cudaGetLastError();
    return false;
  }
  return true;
}
#define CK(x) ck((x), #x, __LINE__)

static const size_t KiB = 1024, MiB = 1024 * 1024, GiB = 1024 * 1024 * 1024;
static const uint64_t U64MAX = ~0ull;

static double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch())
      .count();
}
static void sleep_us(double us) { usleep((useconds_t)us); }

static double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static double pct(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t i = (size_t)(p * (v.size() - 1));
  return v[i];
}

static const char *tf(bool b) { return b ? "true" : "false"; }
static long long off(const void *p, const void *base) {
  return (long long)((const char *)p - (const char *)base);
}

static void hdr(const char *s) {
  printf("\n# ==== %s\n", s);
  fflush(stdout);
}

static uint64_t attr(cudaMemPool_t pool, cudaMemPoolAttr a) {
  uint64_t v = 0;
  if (!CK(cudaMemPoolGetAttribute(pool, a, &v))) return (uint64_t)-1;
  return v;
}
static uint64_t reserved(cudaMemPool_t p) {
  return attr(p, cudaMemPoolAttrReservedMemCurrent);
}
static uint64_t used(cudaMemPool_t p) {
  return attr(p, cudaMemPoolAttrUsedMemCurrent);
}
static int attr_i(cudaMemPool_t pool, cudaMemPoolAttr a) {
  int v = -1;
  CK(cudaMemPoolGetAttribute(pool, a, &v));
  return v;
}
static void set_threshold(cudaMemPool_t p, uint64_t t) {
  CK(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &t));
}
static void set_reuse(cudaMemPool_t p, int follow, int opportunistic,
                      int internal) {
  if (follow >= 0)
    CK(cudaMemPoolSetAttribute(p, cudaMemPoolReuseFollowEventDependencies,
                               &follow));
  if (opportunistic >= 0)
    CK(cudaMemPoolSetAttribute(p, cudaMemPoolReuseAllowOpportunistic,
                               &opportunistic));
  if (internal >= 0)
    CK(cudaMemPoolSetAttribute(p, cudaMemPoolReuseAllowInternalDependencies,
                               &internal));
}

static cudaMemPool_t make_pool(size_t maxSize = 0, bool host = false,
                               cudaError_t *err = nullptr) {
  cudaMemPoolProps props;
  memset(&props, 0, sizeof(props));
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  if (host) {
    props.location.type = cudaMemLocationTypeHost;
    props.location.id = 0;
  } else {
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = g_dev;
  }
  props.maxSize = maxSize;
  cudaMemPool_t pool = nullptr;
  cudaError_t e = cudaMemPoolCreate(&pool, &props);
  if (err) {
    *err = e;
    (void)cudaGetLastError();
  } else {
    CK(e);
  }
  return e == cudaSuccess ? pool : nullptr;
}
static void destroy_pool(cudaMemPool_t p) {
  CK(cudaDeviceSynchronize());
  if (p) CK(cudaMemPoolDestroy(p));
}

// Allocate, return pointer (nullptr on error, error printed).
static void *palloc(cudaMemPool_t pool, size_t n, cudaStream_t s) {
  void *p = nullptr;
  if (!CK(cudaMallocFromPoolAsync(&p, n, pool, s))) return nullptr;
  return p;
}
static void pfree(void *p, cudaStream_t s) {
  if (p) CK(cudaFreeAsync(p, s));
}

// ------------------------------------------------------------------ kernels
__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0 = gtimer();
  while (gtimer() - t0 < ns) {
  }
}
__global__ void empty_kernel() {}
__global__ void fill_kernel(uint4 *p, size_t n, unsigned v) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  uint4 w = make_uint4(v, v, v, v);
  for (; i < n; i += stride) p[i] = w;
}

static cudaStream_t s1, s2, s3;  // s3 = "other" idle stream

static void spin(cudaStream_t s, double ms) {
  spin_kernel<<<1, 1, 0, s>>>((unsigned long long)(ms * 1e6));
  CK(cudaGetLastError());
}

// ================================================================ header
static void exp_header() {
  hdr("header: device / driver / runtime");
  int drv = 0, rt = 0;
  CK(cudaDriverGetVersion(&drv));
  CK(cudaRuntimeGetVersion(&rt));
  cudaDeviceProp pr;
  CK(cudaGetDeviceProperties(&pr, g_dev));
  printf("gpu.name = %s\n", pr.name);
  printf("gpu.cc = %d.%d\n", pr.major, pr.minor);
  printf("gpu.total_mem = %zu\n", pr.totalGlobalMem);
  printf("gpu.sm_count = %d\n", pr.multiProcessorCount);
  printf("gpu.l2_bytes = %d\n", pr.l2CacheSize);
  printf("gpu.mem_bus_width_bits = %d\n", pr.memoryBusWidth);
  printf("driver.version = %d\n", drv);
  printf("runtime.version = %d\n", rt);
  int v = -1;
  CK(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, g_dev));
  printf("gpu.mempools_supported = %d\n", v);
  CK(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolSupportedHandleTypes,
                            g_dev));
  printf("gpu.mempool_handle_types = %d\n", v);
  CK(cudaDeviceGetAttribute(&v, cudaDevAttrPageableMemoryAccess, g_dev));
  printf("gpu.pageable_memory_access = %d\n", v);
  CK(cudaDeviceGetAttribute(&v, cudaDevAttrAsyncEngineCount, g_dev));
  printf("gpu.async_engines = %d\n", v);
}

// ================================================================ exp 11
static void exp11_mem(const char *when) {
  size_t fr = 0, tot = 0;
  CK(cudaMemGetInfo(&fr, &tot));
  printf("e11.%s.free = %zu\n", when, fr);
  printf("e11.%s.total = %zu\n", when, tot);
}

// ================================================================ exp 1
static void exp1_granularity() {
  hdr("e1: reservation granularity and used accounting (fresh pool, one alloc)");
  struct {
    const char *name;
    size_t n;
  } sizes[] = {
      {"1B", 1},
      {"512B", 512},
      {"1000B", 1000},
      {"4KiB", 4 * KiB},
      {"1MiB", MiB},
      {"2MiB", 2 * MiB},
      {"2MiB+1", 2 * MiB + 1},
      {"3MiB", 3 * MiB},
      {"4MiB", 4 * MiB},
      {"16MiB", 16 * MiB},
      {"16MiB+1", 16 * MiB + 1},
      {"20MiB+1", 20 * MiB + 1},
      {"31MiB", 31 * MiB},
      {"32MiB", 32 * MiB},
      {"32MiB+1", 32 * MiB + 1},
      {"33MiB", 33 * MiB},
      {"64MiB+1", 64 * MiB + 1},
      {"100MiB", 100 * MiB},
      {"1GiB+1", GiB + 1},
  };
  for (auto &sz : sizes) {
    cudaMemPool_t pool = make_pool();
    if (!pool) continue;
    void *p = palloc(pool, sz.n, s1);
    printf("e1.single.%s.request = %zu\n", sz.name, sz.n);
    printf("e1.single.%s.reserved = %llu\n", sz.name,
           (unsigned long long)reserved(pool));
    printf("e1.single.%s.used = %llu\n", sz.name,
           (unsigned long long)used(pool));
    if (p) printf("e1.single.%s.addr_mod_2MiB = %llu\n", sz.name,
                  (unsigned long long)((uintptr_t)p % (2 * MiB)));
    pfree(p, s1);
    CK(cudaStreamSynchronize(s1));
    destroy_pool(pool);
  }

  // Many small allocations: when does reserved grow?
  struct {
    const char *name;
    size_t n;
    int count;
  } many[] = {{"many_1KiB", KiB, 4096},
              {"many_1MiB", MiB, 40},
              {"many_512B", 512, 8192},
              {"many_3MiB", 3 * MiB, 24},
              {"many_40MiB", 40 * MiB, 6}};
  for (auto &m : many) {
    cudaMemPool_t pool = make_pool();
    if (!pool) continue;
    std::vector<void *> ptrs;
    uint64_t last = 0;
    int changes = 0;
    for (int i = 1; i <= m.count; i++) {
      void *p = palloc(pool, m.n, s1);
      if (!p) break;
      ptrs.push_back(p);
      uint64_t r = reserved(pool);
      if (r != last) {
        changes++;
        if (changes <= 40)
          printf("e1.%s.reserved_changed_at_n_%d = %llu\n", m.name, i,
                 (unsigned long long)r);
        last = r;
      }
    }
    printf("e1.%s.count = %zu\n", m.name, ptrs.size());
    printf("e1.%s.reserved_changes = %d\n", m.name, changes);
    printf("e1.%s.final_reserved = %llu\n", m.name,
           (unsigned long long)reserved(pool));
    printf("e1.%s.final_used = %llu\n", m.name, (unsigned long long)used(pool));
    if (ptrs.size() >= 4) {
      for (int i = 1; i < 4; i++)
        printf("e1.%s.offset_of_%d = %lld\n", m.name, i, off(ptrs[i], ptrs[0]));
      // stride stats
      long long mn = 1LL << 62, mx = -(1LL << 62);
      for (size_t i = 1; i < ptrs.size(); i++) {
        long long d = off(ptrs[i], ptrs[i - 1]);
        mn = std::min(mn, d);
        mx = std::max(mx, d);
      }
      printf("e1.%s.consecutive_delta_min = %lld\n", m.name, mn);
      printf("e1.%s.consecutive_delta_max = %lld\n", m.name, mx);
    }
    for (void *p : ptrs) pfree(p, s1);
    CK(cudaStreamSynchronize(s1));
    destroy_pool(pool);
  }
}

// ================================================================ exp 2
static void exp2_placement() {
  hdr("e2: alignment and placement (offsets from the first allocation)");
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      size_t sz[] = {KiB, KiB, 3000, MiB, 1, 4 * MiB, KiB};
      std::vector<void *> p;
      for (size_t n : sz) p.push_back(palloc(pool, n, s1));
      for (size_t i = 0; i < p.size(); i++)
        printf("e2.seq.%zu.size_%zu.offset = %lld\n", i, sz[i], off(p[i], p[0]));
      printf("e2.seq.first_addr_mod_2MiB = %llu\n",
             (unsigned long long)((uintptr_t)p[0] % (2 * MiB)));
      printf("e2.seq.reserved = %llu\n", (unsigned long long)reserved(pool));
      printf("e2.seq.used = %llu\n", (unsigned long long)used(pool));
      pfree(p[1], s1);
      void *a = palloc(pool, 512, s1);
      void *b = palloc(pool, KiB, s1);
      printf("e2.seq.after_free_2nd.alloc_512B.offset = %lld\n", off(a, p[0]));
      printf("e2.seq.after_free_2nd.alloc_1KiB.offset = %lld\n", off(b, p[0]));
      printf("e2.seq.after_free_2nd.used = %llu\n",
             (unsigned long long)used(pool));
      pfree(a, s1);
      pfree(b, s1);
      for (size_t i = 0; i < p.size(); i++)
        if (i != 1) pfree(p[i], s1);
      CK(cudaStreamSynchronize(s1));
      destroy_pool(pool);
    }
  }
  // Best fit vs first fit, variant 1: fresh pool, holes from separate allocs
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      set_threshold(pool, U64MAX);
      void *A = palloc(pool, MiB, s1), *B = palloc(pool, MiB, s1),
           *C = palloc(pool, 4 * MiB, s1), *D = palloc(pool, MiB, s1);
      printf("e2.fit_v1.B.offset = %lld\n", off(B, A));
      printf("e2.fit_v1.C.offset = %lld\n", off(C, A));
      printf("e2.fit_v1.D.offset = %lld\n", off(D, A));
      printf("e2.fit_v1.reserved = %llu\n", (unsigned long long)reserved(pool));
      pfree(A, s1);
      pfree(C, s1);
      void *X = palloc(pool, MiB, s1);
      printf("e2.fit_v1.new_1MiB.offset = %lld\n", off(X, A));
      printf("e2.fit_v1.new_1MiB.took = %s\n",
             X == A ? "A" : (X == C ? "C" : "other"));
      void *Y = palloc(pool, MiB, s1);
      printf("e2.fit_v1.next_1MiB.offset = %lld\n", off(Y, A));
      printf("e2.fit_v1.reserved_after = %llu\n",
             (unsigned long long)reserved(pool));
      pfree(X, s1);
      pfree(Y, s1);
      pfree(B, s1);
      pfree(D, s1);
      CK(cudaStreamSynchronize(s1));
      destroy_pool(pool);
    }
  }
  // Variant 2: carve the holes inside one 32 MiB chunk (filled completely)
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      set_threshold(pool, U64MAX);
      void *big = palloc(pool, 32 * MiB, s1);
      pfree(big, s1);
      void *A = palloc(pool, MiB, s1), *B = palloc(pool, MiB, s1),
           *C = palloc(pool, 4 * MiB, s1), *D = palloc(pool, MiB, s1),
           *E = palloc(pool, 25 * MiB, s1);
      printf("e2.fit_v2.A.offset_from_chunk = %lld\n", off(A, big));
      printf("e2.fit_v2.B.offset_from_chunk = %lld\n", off(B, big));
      printf("e2.fit_v2.C.offset_from_chunk = %lld\n", off(C, big));
      printf("e2.fit_v2.D.offset_from_chunk = %lld\n", off(D, big));
      printf("e2.fit_v2.E.offset_from_chunk = %lld\n", off(E, big));
      printf("e2.fit_v2.reserved = %llu\n", (unsigned long long)reserved(pool));
      pfree(A, s1);
      pfree(C, s1);
      void *X = palloc(pool, MiB, s1);
      printf("e2.fit_v2.new_1MiB.offset_from_chunk = %lld\n", off(X, big));
      printf("e2.fit_v2.new_1MiB.took = %s\n",
             X == A ? "A" : (X == C ? "C" : "other"));
      void *Y = palloc(pool, MiB, s1);
      printf("e2.fit_v2.next_1MiB.offset_from_chunk = %lld\n", off(Y, big));
      printf("e2.fit_v2.reserved_after = %llu\n",
             (unsigned long long)reserved(pool));
      // reverse order of hole creation: free the 4 MiB hole first
      pfree(X, s1);
      pfree(Y, s1);
      pfree(B, s1);
      pfree(D, s1);
      pfree(E, s1);
      CK(cudaStreamSynchronize(s1));
      destroy_pool(pool);
    }
  }
  // Variant 3: like v2 but the big hole comes first in address order
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      set_threshold(pool, U64MAX);
      void *big = palloc(pool, 32 * MiB, s1);
      pfree(big, s1);
      void *C = palloc(pool, 4 * MiB, s1), *B = palloc(pool, MiB, s1),
           *A = palloc(pool, MiB, s1), *D = palloc(pool, MiB, s1),
           *E = palloc(pool, 25 * MiB, s1);
      printf("e2.fit_v3.C.offset_from_chunk = %lld\n", off(C, big));
      printf("e2.fit_v3.A.offset_from_chunk = %lld\n", off(A, big));
      printf("e2.fit_v3.E.offset_from_chunk = %lld\n", off(E, big));
      pfree(C, s1);
      pfree(A, s1);
      void *X = palloc(pool, MiB, s1);
      printf("e2.fit_v3.new_1MiB.offset_from_chunk = %lld\n", off(X, big));
      printf("e2.fit_v3.new_1MiB.took = %s\n",
             X == A ? "A(1MiB hole, higher addr)"
                    : (X == C ? "C(4MiB hole, lower addr)" : "other"));
      pfree(X, s1);
      pfree(B, s1);
      pfree(D, s1);
      pfree(E, s1);
      CK(cudaStreamSynchronize(s1));
      destroy_pool(pool);
    }
  }
  // Splitting
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      set_threshold(pool, U64MAX);
      void *a = palloc(pool, 4 * MiB, s1);
      pfree(a, s1);
      void *b = palloc(pool, MiB, s1);
      void *c = palloc(pool, MiB, s1);
      printf("e2.split.first_1MiB.offset = %lld\n", off(b, a));
      printf("e2.split.first_1MiB.same_addr = %s\n", tf(b == a));
      printf("e2.split.second_1MiB.offset = %lld\n", off(c, a));
      printf("e2.split.reserved = %llu\n", (unsigned long long)reserved(pool));
      pfree(b, s1);
      pfree(c, s1);
      CK(cudaStreamSynchronize(s1));
      destroy_pool(pool);
    }
  }
  // Coalescing
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      set_threshold(pool, U64MAX);
      void *A = palloc(pool, MiB, s1), *B = palloc(pool, MiB, s1);
      printf("e2.coalesce.B.offset = %lld\n", off(B, A));
      printf("e2.coalesce.reserved_before = %llu\n",
             (unsigned long long)reserved(pool));
      pfree(A, s1);
      pfree(B, s1);
      void *C = palloc(pool, 2 * MiB, s1);
      printf("e2.coalesce.new_2MiB.offset = %lld\n", off(C, A));
      printf("e2.coalesce.new_2MiB.equals_A = %s\n", tf(C == A));
      printf("e2.coalesce.reserved_after = %llu\n",
             (unsigned long long)reserved(pool));
      pfree(C, s1);
      // the same with the frees in reverse order, separated by a sync
      void *P = palloc(pool, MiB, s1), *Q = palloc(pool, MiB, s1);
      pfree(Q, s1);
      CK(cudaStreamSynchronize(s1));
      pfree(P, s1);
      CK(cudaStreamSynchronize(s1));
      void *R = palloc(pool, 2 * MiB, s1);
      printf("e2.coalesce_rev.P.offset = %lld\n", off(P, A));
      printf("e2.coalesce_rev.Q.offset = %lld\n", off(Q, A));
      printf("e2.coalesce_rev.new_2MiB.offset = %lld\n", off(R, A));
      printf("e2.coalesce_rev.new_2MiB.equals_P = %s\n", tf(R == P));
      pfree(R, s1);
      CK(cudaStreamSynchronize(s1));
      destroy_pool(pool);
    }
  }
  // Large vs small sharing chunks
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      set_threshold(pool, U64MAX);
      size_t sz[] = {KiB, 32 * MiB, KiB, 64 * MiB, KiB, 40 * MiB};
      std::vector<void *> p;
      for (size_t i = 0; i < 6; i++) {
        p.push_back(palloc(pool, sz[i], s1));
        printf("e2.mixed.%zu.size_%zu.offset = %lld\n", i, sz[i],
               off(p[i], p[0]));
        printf("e2.mixed.%zu.reserved = %llu\n", i,
               (unsigned long long)reserved(pool));
      }
      for (void *q : p) pfree(q, s1);
      CK(cudaStreamSynchronize(s1));
      destroy_pool(pool);
    }
    pool = make_pool();
    if (pool) {
      set_threshold(pool, U64MAX);
      void *big = palloc(pool, 32 * MiB, s1);
      pfree(big, s1);
      void *sm = palloc(pool, KiB, s1);
      printf("e2.small_in_freed_large.offset = %lld\n", off(sm, big));
      printf("e2.small_in_freed_large.inside = %s\n",
             tf((char *)sm >= (char *)big && (char *)sm < (char *)big + 32 * MiB));
      printf("e2.small_in_freed_large.reserved = %llu\n",
             (unsigned long long)reserved(pool));
      void *big2 = palloc(pool, 32 * MiB, s1);
      printf("e2.small_in_freed_large.realloc_32MiB.offset = %lld\n",
             off(big2, big));
      printf("e2.small_in_freed_large.realloc_32MiB.reserved = %llu\n",
             (unsigned long long)reserved(pool));
      pfree(sm, s1);
      pfree(big2, s1);
      CK(cudaStreamSynchronize(s1));
      destroy_pool(pool);
    }
  }
}

// ================================================================ exp 3
enum Trigger {
  T_NONE,
  T_STREAMQUERY,
  T_EVENTQUERY,
  T_STREAMSYNC,
  T_EVENTSYNC,
  T_DEVICESYNC,
  T_OTHERSTREAMSYNC,
  T_CUDAFREE,
  T_CUDAMALLOC,
  T_MEMCPY,
  T_POOLALLOC_S2,
  T_LAUNCH,
  T_OTHERSTREAMQUERY,
  T_COUNT
};
static const char *trig_name[] = {
    "nothing",          "cudaStreamQuery_s",      "cudaEventQuery_e",
    "cudaStreamSynchronize_s", "cudaEventSynchronize_e", "cudaDeviceSynchronize",
    "cudaStreamSynchronize_other", "cudaFree", "cudaMalloc_1MiB",
    "cudaMemcpy_H2D_sync", "poolAlloc_s2_1MiB_noreuse", "kernel_launch_s",
    "cudaStreamQuery_other"};

static void exp3_release() {
  hdr("e3: release at synchronisation (threshold 0), 64 MiB alloc+free on s; "
      "free completed on GPU (host slept 10 ms) before the trigger");
  for (int t = 0; t < T_COUNT; t++) {
    cudaMemPool_t pool = make_pool();
    if (!pool) continue;
    const char *n = trig_name[t];
    void *pre = nullptr;
    if (t == T_CUDAFREE) CK(cudaMalloc(&pre, MiB));
    int hbuf[4] = {1, 2, 3, 4};
    void *dbuf = nullptr;
    if (t == T_MEMCPY) CK(cudaMalloc(&dbuf, 4096));
    if (t == T_POOLALLOC_S2) set_reuse(pool, 0, 0, 0);
    CK(cudaDeviceSynchronize());
    cudaEvent_t e;
    CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    void *p = palloc(pool, 64 * MiB, s1);
    uint64_t r_alloc = reserved(pool);
    pfree(p, s1);
    CK(cudaEventRecord(e, s1));
    sleep_us(10000);
    uint64_t r_before = reserved(pool);
    void *extra = nullptr;
    cudaError_t rc = cudaSuccess;
    double t0 = now_us();
    switch (t) {
      case T_NONE: break;
      case T_STREAMQUERY: rc = cudaStreamQuery(s1); break;
      case T_EVENTQUERY: rc = cudaEventQuery(e); break;
      case T_STREAMSYNC: rc = cudaStreamSynchronize(s1); break;
      case T_EVENTSYNC: rc = cudaEventSynchronize(e); break;
      case T_DEVICESYNC: rc = cudaDeviceSynchronize(); break;
      case T_OTHERSTREAMSYNC: rc = cudaStreamSynchronize(s3); break;
      case T_CUDAFREE: rc = cudaFree(pre); pre = nullptr; break;
      case T_CUDAMALLOC: rc = cudaMalloc(&extra, MiB); break;
      case T_MEMCPY: rc = cudaMemcpy(dbuf, hbuf, sizeof(hbuf), cudaMemcpyHostToDevice); break;
      case T_POOLALLOC_S2: rc = cudaMallocFromPoolAsync(&extra, MiB, pool, s2); break;
      case T_LAUNCH: empty_kernel<<<1, 1, 0, s1>>>(); rc = cudaGetLastError(); break;
      case T_OTHERSTREAMQUERY: rc = cudaStreamQuery(s3); break;
    }
    double dt = now_us() - t0;
    uint64_t r_after = reserved(pool);
    sleep_us(20000);
    uint64_t r_later = reserved(pool);
    printf("e3.%s.rc = %s\n", n, cudaGetErrorName(rc));
    printf("e3.%s.reserved_after_alloc = %llu\n", n, (unsigned long long)r_alloc);
    printf("e3.%s.reserved_before = %llu\n", n, (unsigned long long)r_before);
    printf("e3.%s.reserved_after = %llu\n", n, (unsigned long long)r_after);
    printf("e3.%s.reserved_after_20ms_more = %llu\n", n,
           (unsigned long long)r_later);
    printf("e3.%s.released = %s\n", n, tf(r_after < r_before));
    printf("e3.%s.call_us = %.1f\n", n, dt);
    if (t == T_POOLALLOC_S2 && extra) {
      printf("e3.%s.new_alloc_offset_from_freed = %lld\n", n, off(extra, p));
      pfree(extra, s2);
      extra = nullptr;
    }
    if (extra) CK(cudaFree(extra));
    if (pre) CK(cudaFree(pre));
    if (dbuf) CK(cudaFree(dbuf));
    CK(cudaEventDestroy(e));
    destroy_pool(pool);
  }

  hdr("e3.pending: free on s queued behind a 50 ms spin kernel");
  const char *pn[] = {"other_stream_sync", "device_sync", "stream_sync_s",
                      "event_sync_e", "stream_query_s"};
  for (int k = 0; k < 5; k++) {
    cudaMemPool_t pool = make_pool();
    if (!pool) continue;
    CK(cudaDeviceSynchronize());
    cudaEvent_t e;
    CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    void *p = palloc(pool, 64 * MiB, s1);
    spin(s1, 50);
    pfree(p, s1);
    CK(cudaEventRecord(e, s1));
    uint64_t r0 = reserved(pool);
    double t0 = now_us();
    cudaError_t rc = cudaSuccess;
    switch (k) {
      case 0: rc = cudaStreamSynchronize(s3); break;
      case 1: rc = cudaDeviceSynchronize(); break;
      case 2: rc = cudaStreamSynchronize(s1); break;
      case 3: rc = cudaEventSynchronize(e); break;
      case 4: rc = cudaStreamQuery(s1); break;
    }
    double dt = now_us() - t0;
    uint64_t r1 = reserved(pool);
    printf("e3.pending.%s.rc = %s\n", pn[k], cudaGetErrorName(rc));
    printf("e3.pending.%s.reserved_before = %llu\n", pn[k], (unsigned long long)r0);
    printf("e3.pending.%s.reserved_after = %llu\n", pn[k], (unsigned long long)r1);
    printf("e3.pending.%s.call_us = %.1f\n", pn[k], dt);
    // let the spin finish without any sync, then look again
    sleep_us(80000);
    printf("e3.pending.%s.reserved_after_80ms_nosync = %llu\n", pn[k],
           (unsigned long long)reserved(pool));
    if (k == 0 || k == 4) {
      CK(cudaStreamSynchronize(s3));
      printf("e3.pending.%s.reserved_after_second_other_stream_sync = %llu\n",
             pn[k], (unsigned long long)reserved(pool));
      CK(cudaStreamQuery(s1));
      printf("e3.pending.%s.reserved_after_stream_query_s = %llu\n", pn[k],
             (unsigned long long)reserved(pool));
      CK(cudaStreamSynchronize(s1));
      printf("e3.pending.%s.reserved_after_stream_sync_s = %llu\n", pn[k],
             (unsigned long long)reserved(pool));
    }
    CK(cudaEventDestroy(e));
    destroy_pool(pool);
  }
  // Does a release also happen for memory of a pool that is not involved in
  // the synchronised stream?  (free on s1, sync s2 that has done work)
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      void *p = palloc(pool, 64 * MiB, s1);
      pfree(p, s1);
      sleep_us(10000);
      empty_kernel<<<1, 1, 0, s2>>>();
      CK(cudaGetLastError());
      CK(cudaStreamSynchronize(s2));
      printf("e3.sync_busy_other_stream.reserved_after = %llu\n",
             (unsigned long long)reserved(pool));
      destroy_pool(pool);
    }
  }
}

// ================================================================ exp 4
static void exp4_threshold() {
  hdr("e4: release threshold partial (8 x 16 MiB, free all, sync)");
  uint64_t ths[] = {40 * MiB, 33 * MiB, 32 * MiB, 17 * MiB, 16 * MiB, 1};
  for (uint64_t th : ths) {
    cudaMemPool_t pool = make_pool();
    if (!pool) continue;
    set_threshold(pool, th);
    unsigned long long T = th;
    std::vector<void *> p;
    for (int i = 0; i < 8; i++) p.push_back(palloc(pool, 16 * MiB, s1));
    if (T == 40 * MiB)
      for (int i = 1; i < 8; i++)
        printf("e4.th_%llu.alloc_%d.offset = %lld\n", T, i, off(p[i], p[0]));
    printf("e4.th_%llu.reserved_allocated = %llu\n", T,
           (unsigned long long)reserved(pool));
    for (void *q : p) pfree(q, s1);
    sleep_us(5000);
    printf("e4.th_%llu.reserved_freed_nosync = %llu\n", T,
           (unsigned long long)reserved(pool));
    CK(cudaStreamSynchronize(s1));
    printf("e4.th_%llu.reserved_after_sync = %llu\n", T,
           (unsigned long long)reserved(pool));
    // which chunks stay: allocate 16 MiB until reserved grows
    uint64_t r = reserved(pool);
    std::vector<void *> q;
    for (int k = 0; k < 4; k++) {
      void *x = palloc(pool, 16 * MiB, s1);
      q.push_back(x);
      int idx = -1;
      for (int i = 0; i < 8; i++)
        if (p[i] == x) idx = i;
      printf("e4.th_%llu.realloc_%d.matches_index = %d\n", T, k, idx);
      printf("e4.th_%llu.realloc_%d.offset = %lld\n", T, k, off(x, p[0]));
      uint64_t r2 = reserved(pool);
      printf("e4.th_%llu.realloc_%d.reserved = %llu\n", T, k,
             (unsigned long long)r2);
      if (r2 > r) break;
    }
    for (void *x : q) pfree(x, s1);
    CK(cudaStreamSynchronize(s1));
    destroy_pool(pool);
  }
  // release order with distinct chunk sizes: 16, 32, 48 MiB (threshold 50 MiB)
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      set_threshold(pool, 50 * MiB);
      void *a = palloc(pool, 16 * MiB, s1), *b = palloc(pool, 32 * MiB, s1),
           *c = palloc(pool, 48 * MiB, s1);
      printf("e4.order.reserved_allocated = %llu\n",
             (unsigned long long)reserved(pool));
      pfree(a, s1);
      pfree(b, s1);
      pfree(c, s1);
      CK(cudaStreamSynchronize(s1));
      printf("e4.order_16_32_48_th50.reserved_after_sync = %llu\n",
             (unsigned long long)reserved(pool));
      destroy_pool(pool);
    }
  }
  hdr("e4.mixed: live 1 KiB block + frees elsewhere, threshold 0");
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      void *k = palloc(pool, KiB, s1);
      void *x = palloc(pool, MiB, s1);
      std::vector<void *> p;
      for (int i = 0; i < 4; i++) p.push_back(palloc(pool, 16 * MiB, s1));
      printf("e4.mixed.x.offset = %lld\n", off(x, k));
      printf("e4.mixed.reserved_allocated = %llu\n",
             (unsigned long long)reserved(pool));
      pfree(x, s1);
      for (void *q : p) pfree(q, s1);
      CK(cudaStreamSynchronize(s1));
      printf("e4.mixed.reserved_after_sync = %llu\n",
             (unsigned long long)reserved(pool));
      printf("e4.mixed.used_after_sync = %llu\n", (unsigned long long)used(pool));
      pfree(k, s1);
      CK(cudaStreamSynchronize(s1));
      printf("e4.mixed.reserved_after_freeing_live = %llu\n",
             (unsigned long long)reserved(pool));
      destroy_pool(pool);
    }
    // live 1 KiB block inside a freed 32 MiB chunk
    pool = make_pool();
    if (pool) {
      void *big = palloc(pool, 32 * MiB, s1);
      pfree(big, s1);
      void *k = palloc(pool, KiB, s1);
      printf("e4.live_in_big.offset = %lld\n", off(k, big));
      CK(cudaStreamSynchronize(s1));
      printf("e4.live_in_big.reserved_after_sync = %llu\n",
             (unsigned long long)reserved(pool));
      pfree(k, s1);
      CK(cudaStreamSynchronize(s1));
      printf("e4.live_in_big.reserved_after_free_sync = %llu\n",
             (unsigned long long)reserved(pool));
      destroy_pool(pool);
    }
  }
}

// ================================================================ exp 5
static void exp5_trim() {
  hdr("e5: cudaMemPoolTrimTo after 8 x 16 MiB freed+synced, threshold max");
  uint64_t keeps[] = {0, 10 * MiB, 33 * MiB, 48 * MiB};
  for (uint64_t keep : keeps) {
    cudaMemPool_t pool = make_pool();
    if (!pool) continue;
    set_threshold(pool, U64MAX);
    std::vector<void *> p;
    for (int i = 0; i < 8; i++) p.push_back(palloc(pool, 16 * MiB, s1));
    for (void *q : p) pfree(q, s1);
    CK(cudaStreamSynchronize(s1));
    printf("e5.keep_%llu.reserved_before = %llu\n", (unsigned long long)keep,
           (unsigned long long)reserved(pool));
    double t0 = now_us();
    CK(cudaMemPoolTrimTo(pool, keep));
    double dt = now_us() - t0;
    printf("e5.keep_%llu.reserved_after = %llu\n", (unsigned long long)keep,
           (unsigned long long)reserved(pool));
    printf("e5.keep_%llu.trim_us = %.1f\n", (unsigned long long)keep, dt);
    destroy_pool(pool);
  }
  // sequential in one pool
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      set_threshold(pool, U64MAX);
      std::vector<void *> p;
      for (int i = 0; i < 8; i++) p.push_back(palloc(pool, 16 * MiB, s1));
      for (void *q : p) pfree(q, s1);
      CK(cudaStreamSynchronize(s1));
      uint64_t ks[] = {100 * MiB, 33 * MiB, 10 * MiB, 0};
      for (uint64_t k : ks) {
        CK(cudaMemPoolTrimTo(pool, k));
        printf("e5.sequential.trim_%llu.reserved = %llu\n",
               (unsigned long long)k, (unsigned long long)reserved(pool));
      }
      destroy_pool(pool);
    }
  }
  // trim with a live block, with a completed-but-unsynced free, with a pending free
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      set_threshold(pool, U64MAX);
      void *live = palloc(pool, 16 * MiB, s1);
      void *f1 = palloc(pool, 16 * MiB, s1);
      void *f2 = palloc(pool, 16 * MiB, s1);
      pfree(f1, s1);
      sleep_us(10000);  // f1's free completed on the GPU, no host sync
      printf("e5.live_and_unsynced.reserved_before = %llu\n",
             (unsigned long long)reserved(pool));
      CK(cudaMemPoolTrimTo(pool, 0));
      printf("e5.unsynced_completed_free.reserved_after_trim0 = %llu\n",
             (unsigned long long)reserved(pool));
      spin(s1, 50);
      pfree(f2, s1);
      CK(cudaMemPoolTrimTo(pool, 0));
      printf("e5.pending_free.reserved_after_trim0 = %llu\n",
             (unsigned long long)reserved(pool));
      CK(cudaStreamSynchronize(s1));
      CK(cudaMemPoolTrimTo(pool, 0));
      printf("e5.after_sync.reserved_after_trim0 = %llu (live 16 MiB stays)\n",
             (unsigned long long)reserved(pool));
      pfree(live, s1);
      CK(cudaStreamSynchronize(s1));
      destroy_pool(pool);
    }
  }
}

// ================================================================ exp 6
struct ReuseCfg {
  const char *name;
  int follow, opp, internal;  // -1 = leave default
  double spin_ms;             // spin on s1 before the free (0 = none)
  int mode;  // 0 = nothing, 1 = host sleep, 2 = event wait s2<-s1,
             // 3 = cudaStreamSynchronize(s1)
  double sleep_ms;
  uint64_t threshold;  // 0 = leave default
};
static void reuse_test(const ReuseCfg &c) {
  cudaMemPool_t pool = make_pool();
  if (!pool) return;
  if (c.threshold) set_threshold(pool, c.threshold);
  set_reuse(pool, c.follow, c.opp, c.internal);
  CK(cudaDeviceSynchronize());
  cudaEvent_t e;
  CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  void *p1 = palloc(pool, 16 * MiB, s1);
  if (c.spin_ms > 0) spin(s1, c.spin_ms);
  pfree(p1, s1);
  if (c.mode == 1) sleep_us(c.sleep_ms * 1000);
  if (c.mode == 2) {
    CK(cudaEventRecord(e, s1));
    CK(cudaStreamWaitEvent(s2, e, 0));
  }
  if (c.mode == 3) CK(cudaStreamSynchronize(s1));
  void *p2 = nullptr;
  cudaError_t rc = cudaMallocFromPoolAsync(&p2, 16 * MiB, pool, s2);
  (void)cudaGetLastError();
  cudaError_t q2 = cudaStreamQuery(s2);
  (void)cudaGetLastError();
  cudaError_t q1 = cudaStreamQuery(s1);
  (void)cudaGetLastError();
  printf("e6.%s.alloc_rc = %s\n", c.name, cudaGetErrorName(rc));
  printf("e6.%s.reused = %s\n", c.name, tf(rc == cudaSuccess && p2 == p1));
  printf("e6.%s.reserved = %llu\n", c.name, (unsigned long long)reserved(pool));
  printf("e6.%s.s1_query_after = %s\n", c.name, cudaGetErrorName(q1));
  printf("e6.%s.s2_query_after = %s\n", c.name, cudaGetErrorName(q2));
  if (p2) pfree(p2, s2);
  CK(cudaEventDestroy(e));
  destroy_pool(pool);
}

static void exp6_reuse() {
  hdr("e6: cross-stream reuse (16 MiB on s1 freed on s1, then 16 MiB on s2)");
  ReuseCfg cfgs[] = {
      {"a_defaults_pending", -1, -1, -1, 50, 0, 0, 0},
      {"a2_defaults_pending_threshold_max", -1, -1, -1, 50, 0, 0, U64MAX},
      {"b_defaults_idle_hostsleep100", -1, -1, -1, 0, 1, 100, 0},
      {"b2_defaults_idle_nosleep", -1, -1, -1, 0, 0, 0, 0},
      {"c_opp0_idle_hostsleep100", -1, 0, -1, 0, 1, 100, 0},
      {"c2_opp0_int0_idle_hostsleep100", -1, 0, 0, 0, 1, 100, 0},
      {"d_event_pending", -1, -1, -1, 50, 2, 0, 0},
      {"d2_event_pending_follow0", 0, -1, -1, 50, 2, 0, 0},
      {"d3_event_pending_follow0_int0", 0, -1, 0, 50, 2, 0, 0},
      {"d4_event_pending_opp0_int0", -1, 0, 0, 50, 2, 0, 0},
      {"e_all0_streamsync_s1", 0, 0, 0, 50, 3, 0, U64MAX},
      {"e2_all0_hostsleep_nosync", 0, 0, 0, 0, 1, 100, U64MAX},
      {"g_spin20_hostsleep25", -1, -1, -1, 20, 1, 25, 0},
      {"g_spin20_hostsleep18", -1, -1, -1, 20, 1, 18, 0},
      {"g_spin20_hostsleep20.2", -1, -1, -1, 20, 1, 20.2, 0},
      {"g_spin20_hostsleep21", -1, -1, -1, 20, 1, 21, 0},
      {"g_spin20_hostsleep22", -1, -1, -1, 20, 1, 22, 0},
      {"g_spin20_hostsleep30", -1, -1, -1, 20, 1, 30, 0},
  };
  for (auto &c : cfgs) reuse_test(c);

  // f) internal dependency with a pool at its max size
  hdr("e6.f: internal dependencies at max_size (pool maxSize 32 MiB)");
  for (int internal = 1; internal >= 0; internal--) {
    const char *n = internal ? "f_internal1" : "f_internal0";
    cudaMemPool_t pool = make_pool(32 * MiB);
    if (!pool) continue;
    set_reuse(pool, -1, -1, internal);
    std::vector<void *> p;
    cudaError_t last = cudaSuccess;
    for (int i = 0; i < 8; i++) {
      void *x = nullptr;
      last = cudaMallocFromPoolAsync(&x, 16 * MiB, pool, s1);
      (void)cudaGetLastError();
      if (last != cudaSuccess) break;
      p.push_back(x);
    }
    printf("e6.%s.filled_count_16MiB = %zu\n", n, p.size());
    printf("e6.%s.fill_stop_rc = %s\n", n, cudaGetErrorName(last));
    printf("e6.%s.reserved_full = %llu\n", n, (unsigned long long)reserved(pool));
    if (p.empty()) {
      destroy_pool(pool);
      continue;
    }
    CK(cudaStreamSynchronize(s1));
    spin(s1, 200);
    void *victim = p.back();
    p.pop_back();
    pfree(victim, s1);
    void *x = nullptr;
    double t0 = now_us();
    cudaError_t rc = cudaMallocFromPoolAsync(&x, 16 * MiB, pool, s2);
    double dt = now_us() - t0;
    (void)cudaGetLastError();
    cudaError_t q2 = cudaStreamQuery(s2);
    (void)cudaGetLastError();
    printf("e6.%s.alloc_rc = %s\n", n, cudaGetErrorName(rc));
    printf("e6.%s.alloc_call_us = %.1f\n", n, dt);
    printf("e6.%s.reused_victim = %s\n", n, tf(rc == cudaSuccess && x == victim));
    printf("e6.%s.s2_query_right_after = %s\n", n, cudaGetErrorName(q2));
    t0 = now_us();
    CK(cudaStreamSynchronize(s2));
    printf("e6.%s.s2_sync_wait_us = %.1f\n", n, now_us() - t0);
    cudaError_t q1 = cudaStreamQuery(s1);
    (void)cudaGetLastError();
    printf("e6.%s.s1_query_after_s2_sync = %s\n", n, cudaGetErrorName(q1));
    if (rc == cudaSuccess && x) pfree(x, s2);
    for (void *y : p) pfree(y, s1);
    destroy_pool(pool);
  }
  // f2) same without maxSize: does the pool ever insert a dependency when it
  // could grow instead?  (covered by a_defaults_pending: s2_query_after)
}

// ================================================================ exp 7
static void exp7_maxsize() {
  hdr("e7: max_size");
  struct {
    const char *name;
    size_t max;
  } ms[] = {{"1MiB", MiB}, {"3MiB", 3 * MiB}, {"64MiB", 64 * MiB},
            {"64MiB+1", 64 * MiB + 1}, {"33MiB", 33 * MiB}};
  for (auto &m : ms) {
    cudaError_t ce;
    cudaMemPool_t pool = make_pool(m.max, false, &ce);
    printf("e7.max_%s.create_rc = %s\n", m.name, cudaGetErrorName(ce));
    if (!pool) continue;
    // single allocations of increasing size (each freed before the next)
    size_t tries[] = {KiB, MiB, 2 * MiB, 3 * MiB, 4 * MiB, 32 * MiB,
                      33 * MiB, 34 * MiB, 64 * MiB, 64 * MiB + 1, 66 * MiB};
    for (size_t t : tries) {
      if (t > m.max + 4 * MiB && t != 64 * MiB) continue;
      void *x = nullptr;
      cudaError_t rc = cudaMallocFromPoolAsync(&x, t, pool, s1);
      (void)cudaGetLastError();
      printf("e7.max_%s.single_%zu.rc = %s\n", m.name, t, cudaGetErrorName(rc));
      if (rc == cudaSuccess) {
        printf("e7.max_%s.single_%zu.reserved = %llu\n", m.name, t,
               (unsigned long long)reserved(pool));
        pfree(x, s1);
      }
      CK(cudaStreamSynchronize(s1));
      CK(cudaMemPoolTrimTo(pool, 0));
    }
    // full allocation then 1 more byte
    {
      void *x = nullptr, *y = nullptr;
      cudaError_t rc = cudaMallocFromPoolAsync(&x, m.max, pool, s1);
      (void)cudaGetLastError();
      cudaError_t rc2 = cudaMallocFromPoolAsync(&y, 1, pool, s1);
      (void)cudaGetLastError();
      printf("e7.max_%s.alloc_max.rc = %s\n", m.name, cudaGetErrorName(rc));
      printf("e7.max_%s.then_1B.rc = %s\n", m.name, cudaGetErrorName(rc2));
      printf("e7.max_%s.then.reserved = %llu\n", m.name,
             (unsigned long long)reserved(pool));
      if (rc == cudaSuccess) pfree(x, s1);
      if (rc2 == cudaSuccess) pfree(y, s1);
      CK(cudaStreamSynchronize(s1));
      CK(cudaMemPoolTrimTo(pool, 0));
    }
    // fill with 1 MiB blocks and with 1 KiB blocks
    size_t units[] = {MiB, KiB};
    for (size_t u : units) {
      std::vector<void *> p;
      cudaError_t last = cudaSuccess;
      for (int i = 0; i < 100000; i++) {
        void *x = nullptr;
        last = cudaMallocFromPoolAsync(&x, u, pool, s1);
        (void)cudaGetLastError();
        if (last != cudaSuccess) break;
        p.push_back(x);
      }
      printf("e7.max_%s.fill_%zu.count = %zu\n", m.name, u, p.size());
      printf("e7.max_%s.fill_%zu.stop_rc = %s\n", m.name, u,
             cudaGetErrorName(last));
      printf("e7.max_%s.fill_%zu.reserved = %llu\n", m.name, u,
             (unsigned long long)reserved(pool));
      printf("e7.max_%s.fill_%zu.used = %llu\n", m.name, u,
             (unsigned long long)used(pool));
      for (void *x : p) pfree(x, s1);
      CK(cudaStreamSynchronize(s1));
      CK(cudaMemPoolTrimTo(pool, 0));
    }
    destroy_pool(pool);
  }
}

// ================================================================ exp 8
static void exp8_host() {
  hdr("e8: host-location pools (cudaMemLocationTypeHost, id 0)");
  cudaError_t ce;
  cudaMemPool_t pool = make_pool(0, true, &ce);
  printf("e8.host_pool.create_rc = %s\n", cudaGetErrorName(ce));
  printf("e8.host_pool.supported = %s\n", tf(ce == cudaSuccess));
  if (!pool) return;
  cudaMemLocation loc;
  loc.type = cudaMemLocationTypeDevice;
  loc.id = g_dev;
  cudaMemAccessFlags fl = cudaMemAccessFlagsProtNone;
  cudaError_t ae = cudaMemPoolGetAccess(&fl, pool, &loc);
  (void)cudaGetLastError();
  printf("e8.host_pool.device_access_rc = %s\n", cudaGetErrorName(ae));
  printf("e8.host_pool.device_access_flags = %d\n", (int)fl);
  size_t sz[] = {KiB, MiB, 3 * MiB, 32 * MiB + 1};
  const char *nm[] = {"1KiB", "1MiB", "3MiB", "32MiB+1"};
  destroy_pool(pool);
  for (int i = 0; i < 4; i++) {
    pool = make_pool(0, true, &ce);
    if (!pool) break;
    void *x = nullptr;
    cudaError_t rc = cudaMallocFromPoolAsync(&x, sz[i], pool, s1);
    (void)cudaGetLastError();
    printf("e8.host_pool.%s.alloc_rc = %s\n", nm[i], cudaGetErrorName(rc));
    printf("e8.host_pool.%s.reserved = %llu\n", nm[i],
           (unsigned long long)reserved(pool));
    printf("e8.host_pool.%s.used = %llu\n", nm[i], (unsigned long long)used(pool));
    if (rc == cudaSuccess) {
      cudaPointerAttributes pa;
      if (CK(cudaPointerGetAttributes(&pa, x)))
        printf("e8.host_pool.%s.ptr_type = %d\n", nm[i], (int)pa.type);
      pfree(x, s1);
    }
    CK(cudaStreamSynchronize(s1));
    destroy_pool(pool);
  }
  // 1 KiB many to see chunk growth
  pool = make_pool(0, true, &ce);
  if (pool) {
    uint64_t last = 0;
    std::vector<void *> p;
    for (int i = 1; i <= 4096; i++) {
      void *x = nullptr;
      if (cudaMallocFromPoolAsync(&x, KiB, pool, s1) != cudaSuccess) {
        (void)cudaGetLastError();
        break;
      }
      p.push_back(x);
      uint64_t r = reserved(pool);
      if (r != last) {
        printf("e8.host_pool.many_1KiB.reserved_changed_at_n_%d = %llu\n", i,
               (unsigned long long)r);
        last = r;
      }
    }
    for (void *x : p) pfree(x, s1);
    CK(cudaStreamSynchronize(s1));
    destroy_pool(pool);
  }
}

// ================================================================ exp 9
static void exp9_default_pool() {
  hdr("e9: default pool attributes");
  cudaMemPool_t dp = nullptr, cur = nullptr;
  if (!CK(cudaDeviceGetDefaultMemPool(&dp, g_dev))) return;
  CK(cudaDeviceGetMemPool(&cur, g_dev));
  printf("e9.default.is_current = %s\n", tf(dp == cur));
  printf("e9.default.release_threshold = %llu\n",
         (unsigned long long)attr(dp, cudaMemPoolAttrReleaseThreshold));
  printf("e9.default.follow_event_dependencies = %d\n",
         attr_i(dp, cudaMemPoolReuseFollowEventDependencies));
  printf("e9.default.allow_opportunistic = %d\n",
         attr_i(dp, cudaMemPoolReuseAllowOpportunistic));
  printf("e9.default.allow_internal_dependencies = %d\n",
         attr_i(dp, cudaMemPoolReuseAllowInternalDependencies));
  printf("e9.default.reserved = %llu\n", (unsigned long long)reserved(dp));
  printf("e9.default.used = %llu\n", (unsigned long long)used(dp));
  // fresh explicit pool defaults, for comparison
  cudaMemPool_t p = make_pool();
  if (p) {
    printf("e9.fresh.release_threshold = %llu\n",
           (unsigned long long)attr(p, cudaMemPoolAttrReleaseThreshold));
    printf("e9.fresh.follow_event_dependencies = %d\n",
           attr_i(p, cudaMemPoolReuseFollowEventDependencies));
    printf("e9.fresh.allow_opportunistic = %d\n",
           attr_i(p, cudaMemPoolReuseAllowOpportunistic));
    printf("e9.fresh.allow_internal_dependencies = %d\n",
           attr_i(p, cudaMemPoolReuseAllowInternalDependencies));
    destroy_pool(p);
  }
  // cudaMallocAsync (default pool) single 1 KiB: reserved
  void *x = nullptr;
  if (CK(cudaMallocAsync(&x, KiB, s1))) {
    printf("e9.default.after_mallocasync_1KiB.reserved = %llu\n",
           (unsigned long long)reserved(dp));
    CK(cudaFreeAsync(x, s1));
    CK(cudaStreamSynchronize(s1));
    printf("e9.default.after_free_sync.reserved = %llu\n",
           (unsigned long long)reserved(dp));
  }
}

// ================================================================ exp 10
static void exp10_timing() {
  hdr("e10: timings (medians; host-timed with steady_clock unless noted)");
  // alloc/free pair in a warmed pool
  {
    cudaMemPool_t pool = make_pool();
    if (pool) {
      set_threshold(pool, U64MAX);
      size_t sizes[] = {KiB, MiB, 64 * MiB};
      const char *nm[] = {"1KiB", "1MiB", "64MiB"};
      for (int s = 0; s < 3; s++) {
        void *w = palloc(pool, sizes[s], s1);
        pfree(w, s1);
        CK(cudaStreamSynchronize(s1));
        std::vector<double> pair, a, f;
        for (int i = 0; i < 5000; i++) {
          void *x = nullptr;
          double t0 = now_us();
          cudaMallocFromPoolAsync(&x, sizes[s], pool, s1);
          double t1 = now_us();
          cudaFreeAsync(x, s1);
          double t2 = now_us();
          pair.push_back(t2 - t0);
          a.push_back(t1 - t0);
          f.push_back(t2 - t1);
          if (i % 1000 == 999) CK(cudaStreamSynchronize(s1));
        }
        CK(cudaGetLastError());
        printf("e10.pool_alloc_free_pair_%s_us = %.3f\n", nm[s], median(pair));
        printf("e10.pool_alloc_free_pair_%s_p90_us = %.3f\n", nm[s], pct(pair, 0.9));
        printf("e10.pool_alloc_%s_us = %.3f\n", nm[s], median(a));
        printf("e10.pool_free_%s_us = %.3f\n", nm[s], median(f));
      }
      CK(cudaStreamSynchronize(s1));
      destroy_pool(pool);
    }
  }
  // cudaMalloc + cudaFree
  {
    size_t sizes[] = {MiB, 64 * MiB};
    const char *nm[] = {"1MiB", "64MiB"};
    for (int s = 0; s < 2; s++) {
      std::vector<double> a, f;
      for (int i = 0; i < 200; i++) {
        void *x = nullptr;
        double t0 = now_us();
        CK(cudaMalloc(&x, sizes[s]));
        double t1 = now_us();
        CK(cudaFree(x));
        double t2 = now_us();
        a.push_back(t1 - t0);
        f.push_back(t2 - t1);
      }
      printf("e10.cudaMalloc_%s_us = %.3f\n", nm[s], median(a));
      printf("e10.cudaFree_%s_us = %.3f\n", nm[s], median(f));
    }
  }
  // kernel launch host cost
  {
    for (int i = 0; i < 100; i++) empty_kernel<<<1, 1, 0, s1>>>();
    CK(cudaStreamSynchronize(s1));
    std::vector<double> l;
    for (int i = 0; i < 10000; i++) {
      double t0 = now_us();
      empty_kernel<<<1, 1, 0, s1>>>();
      l.push_back(now_us() - t0);
      if (i % 500 == 499) CK(cudaStreamSynchronize(s1));
    }
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s1));
    printf("e10.launch_host_us = %.3f\n", median(l));
    printf("e10.launch_host_p90_us = %.3f\n", pct(l, 0.9));
    // event-timed single empty kernel
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> k, rt;
    for (int i = 0; i < 300; i++) {
      double t0 = now_us();
      CK(cudaEventRecord(e0, s1));
      empty_kernel<<<1, 1, 0, s1>>>();
      CK(cudaEventRecord(e1, s1));
      CK(cudaEventSynchronize(e1));
      rt.push_back(now_us() - t0);
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      k.push_back(ms * 1000.0);
    }
    printf("e10.empty_kernel_event_us = %.3f\n", median(k));
    printf("e10.empty_kernel_roundtrip_host_us = %.3f\n", median(rt));
    // back-to-back throughput
    CK(cudaEventRecord(e0, s1));
    for (int i = 0; i < 1000; i++) empty_kernel<<<1, 1, 0, s1>>>();
    CK(cudaEventRecord(e1, s1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("e10.empty_kernel_back_to_back_per_kernel_us = %.3f\n", ms);  // ms*1000/1000
    // spin kernel accuracy
    CK(cudaEventRecord(e0, s1));
    spin(s1, 10);
    CK(cudaEventRecord(e1, s1));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("e10.spin_10ms_event_us = %.1f\n", ms * 1000.0);
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
  }
  // idle stream sync
  {
    CK(cudaStreamSynchronize(s3));
    std::vector<double> v, q;
    for (int i = 0; i < 10000; i++) {
      double t0 = now_us();
      cudaStreamSynchronize(s3);
      v.push_back(now_us() - t0);
    }
    for (int i = 0; i < 10000; i++) {
      double t0 = now_us();
      cudaStreamQuery(s3);
      q.push_back(now_us() - t0);
    }
    printf("e10.stream_sync_idle_us = %.3f\n", median(v));
    printf("e10.stream_query_idle_us = %.3f\n", median(q));
  }
  // bandwidths
  {
    const size_t N = 256 * MiB;
    void *hp = nullptr, *d1 = nullptr, *d2 = nullptr;
    char *hg = (char *)malloc(N);
    bool ok = CK(cudaMallocHost(&hp, N)) & CK(cudaMalloc(&d1, N)) &
              CK(cudaMalloc(&d2, N)) && hg;
    if (ok) {
      memset(hg, 1, N);
      memset(hp, 1, N);
      CK(cudaMemset(d1, 0, N));
      CK(cudaMemset(d2, 0, N));
      CK(cudaDeviceSynchronize());
      cudaEvent_t e0, e1;
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      struct {
        const char *name;
        void *dst;
        const void *src;
        cudaMemcpyKind kind;
      } cs[] = {{"pinned_h2d", d1, hp, cudaMemcpyHostToDevice},
                {"pinned_d2h", hp, d1, cudaMemcpyDeviceToHost},
                {"pageable_h2d", d1, hg, cudaMemcpyHostToDevice},
                {"pageable_d2h", hg, d1, cudaMemcpyDeviceToHost},
                {"d2d", d2, d1, cudaMemcpyDeviceToDevice}};
      for (auto &c : cs) {
        std::vector<double> ev, ho;
        for (int r = 0; r < 6; r++) {
          double t0 = now_us();
          CK(cudaEventRecord(e0, s1));
          CK(cudaMemcpyAsync(c.dst, c.src, N, c.kind, s1));
          CK(cudaEventRecord(e1, s1));
          CK(cudaEventSynchronize(e1));
          double t1 = now_us();
          float ms = 0;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          if (r == 0) continue;  // warm-up
          ev.push_back(N / (ms * 1e-3) / 1e9);
          ho.push_back(N / ((t1 - t0) * 1e-6) / 1e9);
        }
        printf("e10.bw_%s_256MiB_GBps = %.2f\n", c.name, median(ev));
        printf("e10.bw_%s_256MiB_host_timed_GBps = %.2f\n", c.name, median(ho));
      }
      // small-copy latency
      {
        std::vector<double> lat, lat2;
        for (int i = 0; i < 500; i++) {
          double t0 = now_us();
          CK(cudaMemcpy(d1, hp, 4, cudaMemcpyHostToDevice));
          lat.push_back(now_us() - t0);
          t0 = now_us();
          CK(cudaMemcpyAsync(d1, hp, 4096, cudaMemcpyHostToDevice, s1));
          CK(cudaStreamSynchronize(s1));
          lat2.push_back(now_us() - t0);
        }
        printf("e10.memcpy_sync_4B_h2d_pinned_us = %.3f\n", median(lat));
        printf("e10.memcpyasync_4KiB_h2d_pinned_plus_sync_us = %.3f\n",
               median(lat2));
      }
      CK(cudaEventDestroy(e0));
      CK(cudaEventDestroy(e1));
    }
    if (hp) CK(cudaFreeHost(hp));
    if (d1) CK(cudaFree(d1));
    if (d2) CK(cudaFree(d2));
    free(hg);
  }
  // fill kernel and memset on 1 GiB
  {
    const size_t N = GiB;
    void *d = nullptr;
    if (CK(cudaMalloc(&d, N))) {
      cudaDeviceProp pr;
      CK(cudaGetDeviceProperties(&pr, g_dev));
      int blocks = pr.multiProcessorCount * 8;
      cudaEvent_t e0, e1;
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      std::vector<double> fk, ms_;
      for (int r = 0; r < 6; r++) {
        CK(cudaEventRecord(e0, s1));
        fill_kernel<<<blocks, 256, 0, s1>>>((uint4 *)d, N / sizeof(uint4), r);
        CK(cudaEventRecord(e1, s1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r) fk.push_back(N / (ms * 1e-3) / 1e9);
        CK(cudaEventRecord(e0, s1));
        CK(cudaMemsetAsync(d, r, N, s1));
        CK(cudaEventRecord(e1, s1));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r) ms_.push_back(N / (ms * 1e-3) / 1e9);
      }
      printf("e10.bw_fill_kernel_1GiB_GBps = %.2f\n", median(fk));
      printf("e10.bw_memsetasync_1GiB_GBps = %.2f\n", median(ms_));
      CK(cudaEventDestroy(e0));
      CK(cudaEventDestroy(e1));
      CK(cudaFree(d));
    }
  }
  // first (mapping) allocation vs reused one
  {
    size_t sizes[] = {MiB, 64 * MiB, GiB};
    const char *nm[] = {"1MiB", "64MiB", "1GiB"};
    for (int s = 0; s < 3; s++) {
      std::vector<double> first, reuse, release, create;
      for (int r = 0; r < 5; r++) {
        double t0 = now_us();
        cudaMemPool_t pool = make_pool();
        create.push_back(now_us() - t0);
        if (!pool) break;
        void *x = nullptr;
        t0 = now_us();
        CK(cudaMallocFromPoolAsync(&x, sizes[s], pool, s1));
        first.push_back(now_us() - t0);
        pfree(x, s1);
        CK(cudaStreamSynchronize(s1));  // threshold 0: released here
        // second cycle with threshold max: reuse
        set_threshold(pool, U64MAX);
        CK(cudaMallocFromPoolAsync(&x, sizes[s], pool, s1));
        pfree(x, s1);
        CK(cudaStreamSynchronize(s1));
        t0 = now_us();
        CK(cudaMallocFromPoolAsync(&x, sizes[s], pool, s1));
        reuse.push_back(now_us() - t0);
        pfree(x, s1);
        CK(cudaStreamSynchronize(s1));
        t0 = now_us();
        CK(cudaMemPoolTrimTo(pool, 0));
        release.push_back(now_us() - t0);
        destroy_pool(pool);
      }
      printf("e10.first_alloc_map_%s_us = %.1f\n", nm[s], median(first));
      printf("e10.reused_alloc_%s_us = %.3f\n", nm[s], median(reuse));
      printf("e10.trim_release_%s_us = %.1f\n", nm[s], median(release));
      printf("e10.pool_create_us = %.1f\n", median(create));
    }
    // release cost at a synchronisation (threshold 0): sync time with a
    // release of 1 GiB vs without
    std::vector<double> with, without;
    for (int r = 0; r < 5; r++) {
      cudaMemPool_t pool = make_pool();
      if (!pool) break;
      void *x = palloc(pool, GiB, s1);
      pfree(x, s1);
      sleep_us(5000);
      double t0 = now_us();
      CK(cudaStreamSynchronize(s1));
      with.push_back(now_us() - t0);
      t0 = now_us();
      CK(cudaStreamSynchronize(s1));
      without.push_back(now_us() - t0);
      destroy_pool(pool);
    }
    printf("e10.stream_sync_releasing_1GiB_us = %.1f\n", median(with));
    printf("e10.stream_sync_nothing_to_release_us = %.1f\n", median(without));
  }
}

// ================================================================ main
int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  double t_start = now_us();
  CK(cudaSetDevice(g_dev));
  CK(cudaFree(0));  // create the context
  exp_header();
  hdr("e11: memory sizes at start");
  exp11_mem("start");
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
  // warm up kernels (module load)
  empty_kernel<<<1, 1, 0, s1>>>();
  spin(s1, 0.01);
  CK(cudaDeviceSynchronize());

  exp9_default_pool();  // first, before anything touches the default pool
  exp1_granularity();
  exp2_placement();
  exp3_release();
  exp4_threshold();
  exp5_trim();
  exp6_reuse();
  exp7_maxsize();
  exp10_timing();
  exp8_host();  // last: least-tested path

  hdr("e11: memory sizes at end");
  exp11_mem("end");
  printf("\n# ==== summary\n");
  printf("probe.cuda_errors = %d\n", g_errors);
  printf("probe.total_seconds = %.2f\n", (now_us() - t_start) * 1e-6);
  return 0;
}
