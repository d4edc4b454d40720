/*
 * sim_fault.h: fault injection's functions (sim_fault.c). Each backend
 * operation of SIM_FAULT_OPS (sim_model.h) counts its calls; an armed
 * fault makes chosen calls fail (docs/sim.md, Fault injection).
 */
#ifndef POOLSH_SIM_FAULT_H
#define POOLSH_SIM_FAULT_H

#include "sim_model.h"

/* Each op's name, as the "fault.*" options and poolsh.profile spell it. */
extern const char *const sim_fault_names[SIM_F_N];

void sim_faults_init(sim_faults *f);
void sim_faults_free(sim_faults *f);
/* The status of call `call` of op: PS_OK, or the error of a fault due. */
int sim_fault_due(sim_ctx *c, int op, uint64_t call);
/* Counts a call of op; PS_OK, or the error it must fail with. O(1) while
 * no fault is armed. */
static inline int sim_fault_check(sim_ctx *c, int op) {
  uint64_t call = ++c->faults.calls[op];
  return c->faults.n ? sim_fault_due(c, op, call) : PS_OK;
}
/* The "fault.*" options (docs/sim.md, Fault injection). */
int sim_fault_option_get(sim_ctx *c, const char *key, double *v);
int sim_fault_option_set(sim_ctx *c, const char *key, double v);

#endif
