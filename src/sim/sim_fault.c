/*
 * sim_fault.c: fault injection. Each backend operation of SIM_FAULT_OPS
 * counts its calls; an armed fault makes chosen calls return a CUDA error
 * before the op changes anything. Reached through the "fault.*" options
 * (docs/sim.md, Fault injection); poolsh.profile arms them by name.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fault.h"

#define SIM_FAULT_NAME(name, params, args) #name,
const char *const sim_fault_names[SIM_F_N] = { SIM_FAULT_OPS(SIM_FAULT_NAME) };
#undef SIM_FAULT_NAME

#define PREFIX "fault."
#define LIMIT 1e18       /* call numbers and periods: whole numbers up to this */

/* Nothing armed; the next fault fails once. */
void sim_faults_init(sim_faults *f) {
  memset(f, 0, sizeof *f);
  f->count = f->every = 1;
}

void sim_faults_free(sim_faults *f) {
  free(f->v);
  f->v = NULL;
  f->n = f->cap = 0;
}

/* Every fault armed for this call counts it; the first armed gives the
 * error. Spent faults are dropped, the others keep their order. */
int sim_fault_due(sim_ctx *c, int op, uint64_t call) {
  sim_faults *f = &c->faults;
  int st = PS_OK;
  size_t kept = 0;
  for (size_t i = 0; i < f->n; i++) {
    sim_fault x = f->v[i];
    if (x.op == op && x.next == call) {
      if (st == PS_OK) st = x.status;
      x.left -= 1;
      x.next += x.every;
    }
    if (x.left > 0) f->v[kept++] = x;
  }
  f->n = kept;
  return st;
}

/* The op named by the n bytes at s, or -1. */
static int find_op(const char *s, size_t n) {
  for (int i = 0; i < SIM_F_N; i++)
    if (strlen(sim_fault_names[i]) == n && strncmp(sim_fault_names[i], s, n) == 0) return i;
  return -1;
}

/* An error's code from its name in the sim's table or its number (1 to
 * 99999, any cudaError_t); PS_OK for neither. */
static int error_code(const char *s) {
  size_t n = strspn(s, "0123456789");
  if (n == 0 || s[n] != '\0') return sim_error_code(s);
  return n <= 5 && s[0] != '0' ? atoi(s) : PS_OK;
}

/* Parses "<op>" or "<op>.<error>" (the key after "fault."): the op, and
 * the error's code or PS_OK when the key names none. -1: neither. */
static int parse_key(const char *k, int *status) {
  const char *dot = strchr(k, '.');
  int op = find_op(k, dot ? (size_t)(dot - k) : strlen(k));
  *status = PS_OK;
  if (op < 0 || !dot) return op;
  *status = error_code(dot + 1);
  return *status == PS_OK ? -1 : op;
}

static int whole(double v) { return v >= 1 && v <= LIMIT && v == floor(v); }

/* fault.count, fault.every: what the next fault armed takes; fault.clear:
 * how many are armed; fault.<op>: its calls so far; fault.<op>.<error>:
 * how many failures with that error are still to come (INFINITY: no end). */
int sim_fault_option_get(sim_ctx *c, const char *key, double *v) {
  const sim_faults *f = &c->faults;
  const char *k = key + strlen(PREFIX);
  if (!v) return PS_ERR_INVALID_VALUE;
  if (strcmp(k, "count") == 0) *v = f->count;
  else if (strcmp(k, "every") == 0) *v = f->every;
  else if (strcmp(k, "clear") == 0) *v = (double)f->n;
  else {
    int status, op = parse_key(k, &status);
    if (op < 0) return PS_ERR_INVALID_VALUE;
    if (status == PS_OK) {
      *v = (double)f->calls[op];
      return PS_OK;
    }
    *v = 0;
    for (size_t i = 0; i < f->n; i++)
      if (f->v[i].op == op && f->v[i].status == status) *v += f->v[i].left;
  }
  return PS_OK;
}

/* Arms a fault: call `call` of op fails with status, then every
 * f->every calls, f->count times in all; count and every go back to 1. */
static int arm(sim_faults *f, int op, int status, double call) {
  if (!whole(call) || (uint64_t)call <= f->calls[op]) return PS_ERR_INVALID_VALUE;
  if (!sim_reserve_one((void **)&f->v, &f->cap, f->n, sizeof *f->v, 4))
    return PS_ERR_MEMORY_ALLOCATION;
  f->v[f->n++] = (sim_fault){ op, status, (uint64_t)call, (uint64_t)f->every, f->count };
  f->count = f->every = 1;
  return PS_OK;
}

/* fault.count (a whole number >= 1, or INFINITY), fault.every (a whole
 * number >= 1), fault.clear (any value: disarms every fault),
 * fault.<op>.<error> = N: arms call N of op, which must be still to come.
 * fault.<op> is read-only. */
int sim_fault_option_set(sim_ctx *c, const char *key, double v) {
  sim_faults *f = &c->faults;
  const char *k = key + strlen(PREFIX);
  if (strcmp(k, "count") == 0) {
    if (!whole(v) && v != INFINITY) return PS_ERR_INVALID_VALUE;
    f->count = v;
  } else if (strcmp(k, "every") == 0) {
    if (!whole(v)) return PS_ERR_INVALID_VALUE;
    f->every = v;
  } else if (strcmp(k, "clear") == 0) {
    f->n = 0;
    f->count = f->every = 1;
  } else {
    int status, op = parse_key(k, &status);
    if (op < 0 || status == PS_OK) return PS_ERR_INVALID_VALUE;
    return arm(f, op, status, v);
  }
  return PS_OK;
}
