/*
 * fuzzlib.h: the C input fuzzers' loop (tests/c/fuzz_*.c), the same as
 * scripts/fuzz/lib.lua's: the arguments --seed S, --seconds T | --inputs
 * N, --tmpdir D, --replay FILE; a corpus of valid inputs, each decoded
 * first, then mutated ones; a failure saves the input under tmpdir,
 * prints how to replay it and exits 1. Header-only: each fuzzer is one
 * executable.
 */
#ifndef POOLSH_FUZZLIB_H
#define POOLSH_FUZZLIB_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct fz_input { unsigned char *b; size_t n; } fz_input;

/* The target: decodes one input; returns NULL when all went as it must
 * (decoded, or refused with a clear error), else why it failed (a static
 * or fz_why string). */
typedef const char *(*fz_decode)(const unsigned char *b, size_t n);

static char fz_whybuf[512];
static const char *fz_why(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(fz_whybuf, sizeof fz_whybuf, fmt, ap);
  va_end(ap);
  return fz_whybuf;
}

static uint64_t fz_state = 1;
static uint32_t fz_rand(void) {             /* xorshift64* */
  fz_state ^= fz_state >> 12, fz_state ^= fz_state << 25, fz_state ^= fz_state >> 27;
  return (uint32_t)((fz_state * 0x2545F4914F6CDD1DULL) >> 32);
}
static size_t fz_below(size_t n) { return n ? fz_rand() % n : 0; }

static const char *const fz_interesting[] = {
  "\0", "\377", "\177", "\200", "\0\0\0\0", "\377\377\377\377", "\377\377\377\177",
  "\0\0\0\200", "\0\0\0\t", "\0\0\1\0", "\4\0\0\0", "T", "s", "i", "d", "n", "E", "M", "R", "X",
};
static const size_t fz_interesting_len[] = {1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* One mutation of in (a new buffer of at most max bytes). */
static fz_input fz_mutate1(fz_input in, size_t max) {
  fz_input o = { malloc(max + 16), 0 };
  size_t n = in.n < max ? in.n : max;
  memcpy(o.b, in.b, n);
  o.n = n;
  switch (fz_below(7)) {
    case 0: if (o.n) o.b[fz_below(o.n)] ^= (unsigned char)(1u << fz_below(8)); break;
    case 1: if (o.n) o.b[fz_below(o.n)] = (unsigned char)fz_rand(); break;
    case 2: case 3: {                       /* insert / overwrite something interesting */
      size_t k = fz_below(sizeof fz_interesting_len / sizeof *fz_interesting_len);
      size_t len = fz_interesting_len[k], at = fz_below(o.n + 1);
      if (o.n + len > max) break;
      if (fz_below(2)) { memmove(o.b + at + len, o.b + at, o.n - at); o.n += len; }
      else if (at + len > o.n) o.n = at + len;
      memcpy(o.b + at, fz_interesting[k], len);
      break;
    }
    case 4: {                               /* delete a run */
      size_t at = fz_below(o.n + 1), len = fz_below(65);
      if (at + len > o.n) len = o.n - at;
      memmove(o.b + at, o.b + at + len, o.n - at - len);
      o.n -= len;
      break;
    }
    case 5: {                               /* duplicate a run */
      size_t at = fz_below(o.n + 1), len = 1 + fz_below(256);
      if (at + len > o.n) len = o.n - at;
      if (o.n + len > max) break;
      memmove(o.b + at + 2 * len, o.b + at + len, o.n - at - len);
      memcpy(o.b + at + len, o.b + at, len);
      o.n += len;
      break;
    }
    default: o.n = fz_below(o.n + 1);       /* truncate */
  }
  return o;
}

static fz_input fz_mutate(const fz_input *corpus, size_t ncorpus, size_t max) {
  fz_input cur = corpus[fz_below(ncorpus)];
  fz_input o = { malloc(cur.n + 1), cur.n };
  memcpy(o.b, cur.b, cur.n);
  for (size_t k = 1 + fz_below(4); k > 0; k--) {
    fz_input m = fz_mutate1(o, max);
    free(o.b);
    o = m;
  }
  return o;
}

static double fz_clock(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* Runs the target; returns the process's exit status. */
static int fz_run(const char *name, int argc, char **argv, const fz_input *corpus, size_t ncorpus,
                  fz_decode decode, double seconds_per_input, size_t max) {
  long seed = 1, inputs = -1;
  double seconds = -1;
  const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", *replay = NULL;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) { fprintf(stderr, "%s: %s needs a value\n", name, argv[i]); return 2; }
    if (strcmp(argv[i], "--seed") == 0) seed = atol(argv[++i]);
    else if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[++i]);
    else if (strcmp(argv[i], "--inputs") == 0) inputs = atol(argv[++i]);
    else if (strcmp(argv[i], "--tmpdir") == 0) tmpdir = argv[++i];
    else if (strcmp(argv[i], "--replay") == 0) replay = argv[++i];
    else { fprintf(stderr, "%s: unknown argument '%s'\n", name, argv[i]); return 2; }
  }
  if (seconds < 0 && inputs < 0) inputs = 2000;
  fz_state = 0x9E3779B97F4A7C15ULL ^ (uint64_t)seed;
  long n = 0, bad = 0;
  fz_input one = { NULL, 0 };
  double stop = seconds >= 0 ? fz_clock() + seconds : 0;
  for (;;) {
    int mutated = 0;
    if (replay) {
      if (n > 0) break;
      FILE *f = fopen(replay, "rb");
      if (!f) { perror(replay); return 2; }
      one.b = malloc(max + 1);
      one.n = fread(one.b, 1, max, f);
      fclose(f);
    } else if ((size_t)n < ncorpus) {
      one = corpus[n];
    } else {
      if (inputs >= 0 ? n - (long)ncorpus >= inputs : fz_clock() >= stop) break;
      one = fz_mutate(corpus, ncorpus, max);
      mutated = 1;
    }
    n++;
    double t0 = fz_clock();
    const char *why = decode(one.b, one.n);
    double took = fz_clock() - t0;
    if (!why && took > seconds_per_input)
      why = fz_why("took %.2f s, over the budget of %g s", took, seconds_per_input);
    if (!why && (size_t)n <= ncorpus && !replay && fz_whybuf[0] == '!')
      why = "a valid input of the corpus was refused";
    if (why) {
      char keep[600];
      snprintf(keep, sizeof keep, "%s/fuzz-%s-%ld.bin.failed", tmpdir, name, seed);
      FILE *f = fopen(keep, "wb");
      if (f) { fwrite(one.b, 1, one.n, f); fclose(f); }
      fprintf(stderr, "FUZZ FAILURE %s seed=%ld input=%ld: %s\n", name, seed, n, why);
      fprintf(stderr, "replay: %s --replay %s\n", argv[0], keep);
      return 1;
    }
    if (fz_whybuf[0] == '!') bad++;
    fz_whybuf[0] = 0;
    if (mutated || replay) free(one.b);
  }
  printf("fuzz %s seed %ld: %ld inputs, %ld decoded, %ld refused with a clear error\n", name, seed,
         n, n - bad, bad);
  return 0;
}

/* A target calls this when it refused an input with a clear error. */
static void fz_refused(void) { fz_whybuf[0] = '!', fz_whybuf[1] = 0; }

#endif
