/*
 * share.h: sharing an IPC pool between poolsh processes (share.c): the
 * socket that passes the pool's file descriptor, and the export ledger.
 * Backend-neutral; used by pool.c and buffer.c.
 */
#ifndef POOLSH_SHARE_H
#define POOLSH_SHARE_H

#include <signal.h>
#include <stdint.h>
#include <stddef.h>

typedef struct ps_share ps_share;

enum { PS_SHARE_FAILED = -1, PS_SHARE_INTERRUPTED = -2 };

/* The exporter's ledger for pool pool_id (this process); NULL when the
 * system refuses. */
ps_share *ps_share_new(int pool_id);
/* Serves pool_fd (then owned by s) and the ledger at a Unix-domain socket
 * at name (a bare name: in the private directory, usock.h) from a thread,
 * to processes of this uid or root's only; 0, or -1 with the reason in
 * err. */
int ps_share_serve(ps_share *s, const char *name, int pool_fd, char *err, size_t n);
/* Stops serving and removes the socket file; the ledger stays. */
void ps_share_stop(ps_share *s);
void ps_share_free(ps_share *s);
/* Connects to name (resolved as ps_share_serve does), checks that the
 * server runs as this uid or root, and receives the pool's fd (the
 * caller's to close) and the exporter's ledger; waits at most timeout_ms,
 * polling *interrupt. 0, or PS_SHARE_FAILED / PS_SHARE_INTERRUPTED with
 * the reason in err. */
int ps_share_connect(const char *name, double timeout_ms, volatile sig_atomic_t *interrupt,
                     int *pool_fd, ps_share **out, char *err, size_t n);
/* The hello on connected socket fd (path names it in err): exactly two
 * fds, the ledger sealed, its size and header right. Every fd received is
 * closed unless 0 is returned. PS_SHARE_FAILED with the reason in err. */
int ps_share_receive(int fd, const char *path, int *pool_fd, ps_share **out, char *err, size_t n);
int ps_share_pid(const ps_share *s);        /* the exporter's pid */
int ps_share_pool(const ps_share *s);       /* the exporter's pool id */
const char *ps_share_path(const ps_share *s);   /* where it is served, or NULL */

/* The ledger. Slots are per exported buffer (by the exporter's id); the
 * slot of a freed buffer that no live process imports is reused. */
int ps_share_exported(ps_share *s, int buffer, uint64_t size);   /* slot, -1: full */
int ps_share_find(const ps_share *s, int buffer, uint64_t *size, int *freed);  /* -1: none */
int ps_share_buffer(const ps_share *s, int slot);
int ps_share_importers(ps_share *s, int slot);   /* live processes importing it */
/* The exporter's free: marks the entry freed, then counts the live
 * importers; when some remain, unmarks it and returns how many (the free
 * must be refused). ps_share_unfree undoes it if the free then fails. */
int ps_share_begin_free(ps_share *s, int slot);
void ps_share_unfree(ps_share *s, int slot);
int ps_share_import(ps_share *s, int slot, int delta);  /* this process: +1 / -1 */
/* An importer's +1 for buffer (at slot), then the re-check that the
 * exporter has not freed it: 0, -1 too many importing processes, -2 freed
 * (nothing counted then). */
int ps_share_claim(ps_share *s, int slot, int buffer);
int ps_share_held(const ps_share *s, int slot);   /* this process's imports of it */

#endif
