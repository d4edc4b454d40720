/*
 * sim_peek.c: stream_peek, the query observers make (the ledger's
 * inference, poolsh.show): whether s's work is done at the host's time,
 * without the query's host cost, so no clock moves and no work lands.
 */
#include "sim_internal.h"

int sim_stream_peek(void *ctx, ps_stream *s, int *idle);

int sim_stream_peek(void *ctx, ps_stream *s, int *idle) {
  sim_ctx *c = ctx;
  ps_stream *r = sim_stream_resolve(c, s);
  if (!r || !idle) return r ? PS_ERR_INVALID_VALUE : PS_ERR_INVALID_RESOURCE;
  *idle = sim_stream_done_time(c, r) <= c->host_now;
  return PS_OK;
}
