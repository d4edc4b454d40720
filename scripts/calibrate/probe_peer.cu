// Probe: peer access to stream-ordered pools on a machine with two
// GPUs (what poolsh's sim must reproduce). Each case runs in its own process
// (a faulting kernel poisons the context): probe_peer CASE.
// Build: nvcc -O2 -arch=sm_90 -o probe_peer scripts/calibrate/probe_peer.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define SAY(...) (printf(__VA_ARGS__), fflush(stdout))
static const char *name(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : cudaGetErrorName(e); }
#define TRY(call) do { cudaError_t e_ = (call); SAY("  %-58s -> %s\n", #call, name(e_)); } while (0)

__global__ void fill(unsigned char *p, size_t n, unsigned char v) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = v;
}
__global__ void sum(const unsigned char *p, size_t n, unsigned long long *out) {
  unsigned long long s = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += p[i];
  atomicAdd(out, s);
}

static const char *flags(cudaMemAccessFlags f) {
  return f == cudaMemAccessFlagsProtNone ? "none" : f == cudaMemAccessFlagsProtRead ? "read" :
         f == cudaMemAccessFlagsProtReadWrite ? "rw" : "?";
}

static cudaMemPool_t make_pool(int dev) {
  cudaMemPoolProps pr; memset(&pr, 0, sizeof pr);
  pr.allocType = cudaMemAllocationTypePinned; pr.handleTypes = cudaMemHandleTypeNone;
  pr.location.type = cudaMemLocationTypeDevice; pr.location.id = dev;
  cudaMemPool_t p; cudaError_t e = cudaMemPoolCreate(&p, &pr);
  SAY("  pool on device %d -> %s\n", dev, name(e));
  return p;
}

static void access_of(cudaMemPool_t p, int dev) {
  cudaMemLocation loc = { cudaMemLocationTypeDevice, dev };
  cudaMemAccessFlags f = cudaMemAccessFlagsProtNone;
  cudaError_t e = cudaMemPoolGetAccess(&f, p, &loc);
  SAY("  access of device %d -> %s (%s)\n", dev, flags(f), name(e));
}

static cudaError_t set_access(cudaMemPool_t p, int dev, cudaMemAccessFlags f) {
  cudaMemAccessDesc d; d.location.type = cudaMemLocationTypeDevice; d.location.id = dev; d.flags = f;
  return cudaMemPoolSetAccess(p, &d, 1);
}

// A kernel on device `on` writes v into b (n bytes), then reads it back on device 0.
static void touch_from(int on, unsigned char *b, size_t n, int write) {
  cudaSetDevice(on);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  unsigned long long *out; cudaMalloc(&out, sizeof *out); cudaMemset(out, 0, sizeof *out);
  if (write) fill<<<64, 256, 0, s>>>(b, n, 3); else sum<<<64, 256, 0, s>>>(b, n, out);
  cudaError_t launch = cudaGetLastError();
  cudaError_t sync = cudaStreamSynchronize(s);
  unsigned long long h = 0; cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost);
  SAY("  kernel %s on device %d: launch %s, sync %s%s%llu\n", write ? "write" : "read", on, name(launch),
      name(sync), write ? "" : ", sum ", write ? 0ull : h);
}

int main(int argc, char **argv) {
  const char *c = argc > 1 ? argv[1] : "facts";
  int n = 0; cudaGetDeviceCount(&n);
  SAY("case %s: %d devices\n", c, n);
  if (n < 2) return 0;
  size_t N = 8 << 20;
  if (!strcmp(c, "facts")) {
    int a01 = 0, a10 = 0; cudaDeviceCanAccessPeer(&a01, 0, 1); cudaDeviceCanAccessPeer(&a10, 1, 0);
    SAY("  canAccessPeer 0->1 %d, 1->0 %d\n", a01, a10);
    cudaSetDevice(0);
    cudaMemPool_t p = make_pool(0);
    access_of(p, 0); access_of(p, 1);
    cudaMemPool_t d0; cudaDeviceGetDefaultMemPool(&d0, 0); SAY("  default pool of device 0:\n"); access_of(d0, 1);
    SAY("  revoke the resident device's access:\n");
    TRY(set_access(p, 0, cudaMemAccessFlagsProtNone));
    TRY(set_access(p, 0, cudaMemAccessFlagsProtRead));
    access_of(p, 0);
    SAY("  enable peer access 1->0, then the pool's access from device 1:\n");
    cudaSetDevice(1); TRY(cudaDeviceEnablePeerAccess(0, 0)); cudaSetDevice(0);
    access_of(p, 1);
    TRY(set_access(p, 1, cudaMemAccessFlagsProtRead)); access_of(p, 1);
    TRY(set_access(p, 1, cudaMemAccessFlagsProtReadWrite)); access_of(p, 1);
    TRY(set_access(p, 1, cudaMemAccessFlagsProtNone)); access_of(p, 1);
    TRY(set_access(p, 7, cudaMemAccessFlagsProtReadWrite));
    TRY(set_access(p, -1, cudaMemAccessFlagsProtReadWrite));
    return 0;
  }
  cudaSetDevice(0);
  cudaMemPool_t p = make_pool(0);
  cudaStream_t s0; cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking);
  unsigned char *b = nullptr;
  SAY("  alloc %zu B: %s\n", N, name(cudaMallocFromPoolAsync((void **)&b, N, p, s0)));
  fill<<<64, 256, 0, s0>>>(b, N, 1); cudaStreamSynchronize(s0);
  if (!strcmp(c, "none")) touch_from(1, b, N, 0);                 // no access set, no peer enable
  if (!strcmp(c, "peer_only")) { cudaSetDevice(1); TRY(cudaDeviceEnablePeerAccess(0, 0)); touch_from(1, b, N, 0); }
  if (!strcmp(c, "rw_past")) { TRY(set_access(p, 1, cudaMemAccessFlagsProtReadWrite)); touch_from(1, b, N, 1); touch_from(1, b, N, 0); }
  if (!strcmp(c, "rw_future")) {
    TRY(set_access(p, 1, cudaMemAccessFlagsProtReadWrite));
    cudaSetDevice(0); unsigned char *b2; TRY(cudaMallocFromPoolAsync((void **)&b2, N, p, s0)); cudaStreamSynchronize(s0);
    touch_from(1, b2, N, 1);
  }
  if (!strcmp(c, "read_write")) { TRY(set_access(p, 1, cudaMemAccessFlagsProtRead)); touch_from(1, b, N, 0); touch_from(1, b, N, 1); }
  if (!strcmp(c, "revoked")) { TRY(set_access(p, 1, cudaMemAccessFlagsProtReadWrite)); TRY(set_access(p, 1, cudaMemAccessFlagsProtNone)); touch_from(1, b, N, 0); }
  if (!strcmp(c, "copy_none")) {
    cudaSetDevice(1); unsigned char *d1; cudaMalloc(&d1, N);
    cudaStream_t s1; cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    TRY(cudaMemcpyAsync(d1, b, N, cudaMemcpyDeviceToDevice, s1)); TRY(cudaStreamSynchronize(s1));
    TRY(cudaMemcpyPeerAsync(d1, 1, b, 0, N, s1)); TRY(cudaStreamSynchronize(s1));
  }
  return 0;
}
