/*
 * clock.h: the one host clock poolsh reads for real time: CLOCK_MONOTONIC
 * (never set back, unlike the wall clock). Deadlines, timeouts,
 * benchmarks, poolsh.wallclock() and the cuda backend's poolsh.now() all
 * read it here. The sim's poolsh.now() is its own virtual clock.
 */
#ifndef POOLSH_CLOCK_H
#define POOLSH_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on the monotonic clock since an unspecified start. */
static inline uint64_t ps_clock_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The same in milliseconds and in seconds. */
static inline double ps_clock_ms(void) {
  return (double)ps_clock_ns() / 1e6;
}

static inline double ps_clock_s(void) {
  return (double)ps_clock_ns() / 1e9;
}

#endif
