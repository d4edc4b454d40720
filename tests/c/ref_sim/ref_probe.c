/* ref_probe.c: what test_sim_diff asks the reference sim beside its ops. */
#include "sim_internal.h"

/* The base of the mapping that holds a (0 when none). */
ps_addr ref_probe_base(void *ctx, ps_addr a) {
  sim_map *m = sim_mem_find(&((sim_ctx *)ctx)->mem, a);
  return m ? m->base : 0;
}
