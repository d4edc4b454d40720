/*
 * sim_peek.c: the queries observers make (the ledger's inference,
 * poolsh.show, the recorder), without a query's host cost, so no clock
 * moves and no work lands.
 */
#include "sim_model.h"

int sim_stream_peek(void *ctx, ps_stream *s, int *idle);
int sim_stream_last_span(void *ctx, ps_stream *s, double *queued_ms, double *start_ms,
                         double *end_ms);

/* Whether s's work is done at the host's time. */
int sim_stream_peek(void *ctx, ps_stream *s, int *idle) {
  sim_ctx *c = ctx;
  ps_stream *r = sim_stream_resolve(c, s);
  if (!r || !idle) return r ? PS_ERR_INVALID_VALUE : PS_ERR_INVALID_RESOURCE;
  *idle = sim_stream_done_time(c, r) <= c->host_now;
  return PS_OK;
}

/* When the last op enqueued on s was queued, starts and ends on the
 * virtual clock; PS_ERR_NOT_READY when nothing was enqueued on s yet. */
int sim_stream_last_span(void *ctx, ps_stream *s, double *queued_ms, double *start_ms,
                         double *end_ms) {
  sim_ctx *c = ctx;
  ps_stream *r = sim_stream_resolve(c, s);
  if (!r || !queued_ms || !start_ms || !end_ms)
    return r ? PS_ERR_INVALID_VALUE : PS_ERR_INVALID_RESOURCE;
  if (r->span_start < 0) return PS_ERR_NOT_READY;
  *queued_ms = (double)r->span_queued / 1e6;
  *start_ms = (double)r->span_start / 1e6;
  *end_ms = (double)r->span_end / 1e6;
  return PS_OK;
}
