/*
 * report.h: what a binding reports to the observation layer (ps_what),
 * shared by the entry points (observe.h) and the observers behind them
 * (observer.h).
 */
#ifndef POOLSH_REPORT_H
#define POOLSH_REPORT_H

#include "context.h"

/* One reported event. Only the fields its op uses are set; the rest are
 * zero (a designated initializer leaves them so). */
typedef struct ps_what {
  ps_op op;
  ps_streamud *stream;       /* the stream it went on or waited for */
  ps_eventud *event;
  ps_poolud *pool;
  const ps_bufferud *buffer;
  const ps_bufferud *other;  /* a copy's source */
  uint64_t offset, size;     /* the bytes of buffer it touched; trim: what it keeps */
  uint64_t value;            /* set: the value written */
  int setting;               /* set: the index in ps_setting_names, PS_SET_RESET_HIGH or
                                PS_SET_ACCESS */
  double dur;                /* ms of device work when known (spin) */
  int collected;             /* done by a finalizer */
  int quiet;                 /* a wait inside another report (a limit's undo):
                                the ledger learns what it completed; nothing is
                                recorded or counted as a release */
} ps_what;

#define PS_SET_RESET_HIGH 4
/* set: a device's access to the pool; value is PS_ACCESS_VALUE(dev, access). */
#define PS_SET_ACCESS 5
#define PS_ACCESS_VALUE(dev, a) ((uint64_t)(uint32_t)(dev) << 8 | (uint64_t)(a))

#endif
