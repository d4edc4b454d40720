/*
 * kernels.h: launch wrappers for poolsh's device kernels (kernels.cu).
 *
 * Each wrapper enqueues work on stream s and returns the launch status as a
 * cudaError_t value (0 when queued). Nothing here waits for the device.
 * Addresses may be device memory or host memory the device can reach
 * (pinned, registered, host pools).
 */
#ifndef POOLSH_CUDA_KERNELS_H
#define POOLSH_CUDA_KERNELS_H

#include <stdint.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets n bytes at p to byte. */
int psk_fill(void *p, uint64_t n, unsigned char byte, cudaStream_t s);

/* Reads every byte at p and writes it back unchanged. */
int psk_touch(void *p, uint64_t n, cudaStream_t s);

/* Sets *first (device memory) to the smallest offset whose byte differs
 * from byte, or leaves it alone when none does; the caller sets *first to
 * ~0 before. */
int psk_verify(const void *p, uint64_t n, unsigned char byte,
               unsigned long long *first, cudaStream_t s);

/* Keeps one thread busy on s until ns nanoseconds of %globaltimer pass. */
int psk_spin(uint64_t ns, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
