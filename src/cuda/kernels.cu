/*
 * kernels.cu: the few kernels poolsh runs (fill, touch, verify, spin).
 *
 * Buffers are walked with grid-stride loops: an unaligned head of bytes,
 * a middle of 16-byte words, a tail of bytes. Launch wrappers return the
 * launch status; errors met while running surface at the next sync.
 */
#include "kernels.h"

namespace {

const unsigned kThreads = 256;
const uint64_t kMaxBlocks = 1024;

/* A buffer cut into head bytes, aligned 16-byte words and tail bytes. */
struct Split {
  unsigned char *base;
  uint64_t head, words, tail;
};

/* Guarantees head + 16 * words + tail == n and base + head 16-aligned. */
Split split(const void *p, uint64_t n) {
  Split s;
  s.base = (unsigned char *)p;
  uint64_t mis = (uint64_t)(uintptr_t)p & 15;
  s.head = mis ? 16 - mis : 0;
  if (s.head > n) s.head = n;
  s.words = (n - s.head) / 16;
  s.tail = n - s.head - 16 * s.words;
  return s;
}

/* Enough blocks for one word per thread, capped; at least one block so
 * head and tail bytes (fewer than 16 each) are covered. */
unsigned blocks_for(const Split &s) {
  uint64_t b = (s.words + kThreads - 1) / kThreads;
  if (b < 1) b = 1;
  if (b > kMaxBlocks) b = kMaxBlocks;
  return (unsigned)b;
}

__device__ uint64_t thread_index() {
  return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ uint64_t grid_stride() {
  return (uint64_t)gridDim.x * blockDim.x;
}

/* Offset of the first tail byte. */
__device__ uint64_t tail_start(const Split &s) {
  return s.head + 16 * s.words;
}

__global__ void fill_kernel(Split s, unsigned char b) {
  uint64_t i = thread_index();
  unsigned w = b * 0x01010101u;
  uint4 v = make_uint4(w, w, w, w);
  uint4 *mid = (uint4 *)(s.base + s.head);
  for (uint64_t k = i; k < s.words; k += grid_stride()) mid[k] = v;
  if (i < s.head) s.base[i] = b;
  if (i < s.tail) s.base[tail_start(s) + i] = b;
}

/* Volatile so that the compiler keeps every load and store. */
__global__ void touch_kernel(Split s) {
  uint64_t i = thread_index();
  volatile unsigned long long *mid =
      (volatile unsigned long long *)(s.base + s.head);
  volatile unsigned char *bytes = s.base;
  for (uint64_t k = i; k < 2 * s.words; k += grid_stride()) mid[k] = mid[k];
  if (i < s.head) bytes[i] = bytes[i];
  if (i < s.tail) bytes[tail_start(s) + i] = bytes[tail_start(s) + i];
}

/* Index of the first byte of x that is not b, or 16. */
__device__ int first_other(uint4 x, unsigned char b) {
  unsigned parts[4] = {x.x, x.y, x.z, x.w};
  for (int j = 0; j < 16; j++)
    if (((parts[j / 4] >> (8 * (j % 4))) & 0xff) != b) return j;
  return 16;
}

/* Each thread stops at its first mismatch: its later words lie further on. */
__global__ void verify_kernel(Split s, unsigned char b,
                              unsigned long long *first) {
  uint64_t i = thread_index();
  unsigned w = b * 0x01010101u;
  const uint4 *mid = (const uint4 *)(s.base + s.head);
  if (i < s.head && s.base[i] != b) atomicMin(first, i);
  for (uint64_t k = i; k < s.words; k += grid_stride()) {
    uint4 x = mid[k];
    if (x.x == w && x.y == w && x.z == w && x.w == w) continue;
    atomicMin(first, s.head + 16 * k + first_other(x, b));
    break;
  }
  if (i < s.tail && s.base[tail_start(s) + i] != b)
    atomicMin(first, tail_start(s) + i);
}

__device__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0 = globaltimer();
  while (globaltimer() - t0 < ns) __nanosleep(1000);
}

}  // namespace

extern "C" int psk_fill(void *p, uint64_t n, unsigned char byte,
                        cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  Split sp = split(p, n);
  (void)cudaGetLastError();  // a stale status is not this launch's
  fill_kernel<<<blocks_for(sp), kThreads, 0, s>>>(sp, byte);
  return cudaGetLastError();
}

extern "C" int psk_touch(void *p, uint64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  Split sp = split(p, n);
  (void)cudaGetLastError();  // a stale status is not this launch's
  touch_kernel<<<blocks_for(sp), kThreads, 0, s>>>(sp);
  return cudaGetLastError();
}

extern "C" int psk_verify(const void *p, uint64_t n, unsigned char byte,
                          unsigned long long *first, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  Split sp = split(p, n);
  (void)cudaGetLastError();  // a stale status is not this launch's
  verify_kernel<<<blocks_for(sp), kThreads, 0, s>>>(sp, byte, first);
  return cudaGetLastError();
}

extern "C" int psk_spin(uint64_t ns, cudaStream_t s) {
  (void)cudaGetLastError();  // a stale status is not this launch's
  spin_kernel<<<1, 1, 0, s>>>(ns);
  return cudaGetLastError();
}
