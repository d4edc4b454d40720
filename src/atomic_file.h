/*
 * atomic_file.h: the one way poolsh writes a file (atomic_file.c). The
 * bytes go to a temporary file created exclusively beside the target;
 * commit flushes, syncs and closes it, checking each step, then renames
 * it over the target, so the target is either the old file or the whole
 * new one, and a symlink at the target's path is replaced, never followed.
 */
#ifndef POOLSH_ATOMIC_FILE_H
#define POOLSH_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include "lua.h"

/* A write in progress: f is NULL once committed or aborted. */
typedef struct ps_atomic {
  FILE *f;          /* the temporary, open for writing */
  char *path;       /* the target */
  char *tmp;        /* the temporary's path */
  int err;          /* errno of the first failed write, 0: none */
  mode_t mode;      /* the file's mode once committed (0600 until then) */
} ps_atomic;

/* Errors of ps_atomic_open besides errno values. */
#define PS_ATOMIC_NOT_REGULAR (-1)   /* the target exists and is no regular file */

/* Creates the temporary for path (a zeroed a). 0, or an errno value (or
 * PS_ATOMIC_NOT_REGULAR) with nothing created and a left zeroed. */
int ps_atomic_open(ps_atomic *a, const char *path);
/* Writes n bytes; 0, or the errno of this or an earlier failed write
 * (the first failure sticks: commit refuses). */
int ps_atomic_write(ps_atomic *a, const void *p, size_t n);
/* Flushes, syncs, closes and renames the temporary over the target: 0, or
 * the errno of the first step that failed, the temporary removed and the
 * target untouched. Either way a is closed. */
int ps_atomic_commit(ps_atomic *a);
/* Removes the temporary; the target is untouched. Idempotent. */
void ps_atomic_abort(ps_atomic *a);
/* Removes every temporary still being written in this process: for a
 * signal handler about to end it (async-signal-safe: unlink only). */
void ps_atomic_unlink_all(void);
/* The text of an error ps_atomic_* returned. */
const char *ps_atomic_strerror(int e);

/* poolsh.core.open_atomic (atomic_file.c): the file handle Lua writes
 * through. Sets it into the module table at index 1 (init.c walks it). */
int poolsh_open_atomic_file(lua_State *L);

#endif
