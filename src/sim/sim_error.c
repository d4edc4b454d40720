/*
 * sim_error.c: the statuses the sim returns, with the CUDA error name and
 * text of each (the sim's own reasons for refusing an IPC import are named
 * cudaErrorInvalidValue, with their own text). Below every model file:
 * sim.c reports errors through it, sim_fault.c arms faults by name.
 */
#include <string.h>

#include "sim_model.h"

/* One status: its code, CUDA error name and text. */
typedef struct err { int code; const char *name, *text; } err;
static const err ERRS[] = {
  { PS_OK, "cudaSuccess", "no error" },
  { PS_ERR_INVALID_VALUE, "cudaErrorInvalidValue", "invalid argument" },
  { PS_ERR_CLOCK_END, "cudaErrorInvalidValue", "invalid argument" },
  { SIM_ERR_IPC_SEGMENT, "cudaErrorInvalidValue",
    "invalid argument: not a sim IPC pool's shared segment" },
  { SIM_ERR_IPC_UNSEALED, "cudaErrorInvalidValue",
    "invalid argument: the pool's shared segment is not sealed against resizing" },
  { SIM_ERR_IPC_SHORT, "cudaErrorInvalidValue",
    "invalid argument: the pool's shared segment is shorter than its header says" },
  { SIM_ERR_IPC_EV_OWNER, "cudaErrorInvalidValue",
    "invalid argument: the IPC event's shared-memory object belongs to another user" },
  { SIM_ERR_IPC_EV_OBJECT, "cudaErrorInvalidValue",
    "invalid argument: the IPC event's shared-memory object is not mode 0600 or not an event" },
  { PS_ERR_MEMORY_ALLOCATION, "cudaErrorMemoryAllocation", "out of memory" },
  { PS_ERR_INSUFFICIENT_DRIVER, "cudaErrorInsufficientDriver",
    "CUDA driver version is insufficient for CUDA runtime version" },
  { PS_ERR_NO_DEVICE, "cudaErrorNoDevice", "no CUDA-capable device is detected" },
  { PS_ERR_INVALID_DEVICE, "cudaErrorInvalidDevice", "invalid device ordinal" },
  { PS_ERR_PEER_UNSUPPORTED, "cudaErrorPeerAccessUnsupported",
    "peer access is not supported between these two devices" },
  { PS_ERR_PEER_ALREADY_ENABLED, "cudaErrorPeerAccessAlreadyEnabled",
    "peer access is already enabled" },
  { PS_ERR_INVALID_RESOURCE, "cudaErrorInvalidResourceHandle", "invalid resource handle" },
  { PS_ERR_NOT_READY, "cudaErrorNotReady", "device not ready" },
  { PS_ERR_ILLEGAL_ADDRESS, "cudaErrorIllegalAddress",
    "an illegal memory access was encountered" },
  { PS_ERR_ALREADY_REGISTERED, "cudaErrorHostMemoryAlreadyRegistered",
    "part or all of the requested memory range is already mapped" },
  { PS_ERR_NOT_REGISTERED, "cudaErrorHostMemoryNotRegistered",
    "pointer does not correspond to a registered memory region" },
  { PS_ERR_NOT_SUPPORTED, "cudaErrorNotSupported", "operation not supported" },
  { PS_INTERRUPTED, "interrupted", "interrupted by the user" },
};

/* The entry of a status, NULL when the sim has none. */
static const err *find_err(int code) {
  for (size_t i = 0; i < sizeof ERRS / sizeof ERRS[0]; i++)
    if (ERRS[i].code == code) return &ERRS[i];
  return NULL;
}

/* Only positive codes have names to look up: PS_OK and PS_INTERRUPTED are
 * not errors a fault can be armed with. */
int sim_error_code(const char *name) {
  for (size_t i = 0; name && i < sizeof ERRS / sizeof ERRS[0]; i++)
    if (ERRS[i].code > 0 && strcmp(ERRS[i].name, name) == 0) return ERRS[i].code;
  return PS_OK;
}

const char *sim_error_name(int st) {
  const err *e = find_err(st);
  return e ? e->name : "cudaErrorUnknown";
}

const char *sim_error_string(int st) {
  const err *e = find_err(st);
  return e ? e->text : "unknown error";
}
