/*
 * atomic_file.c: the floor's one primitive for the files poolsh writes
 * (traces, exports, reports, profiles, golden files, learn's progress):
 * a temporary created exclusively (mkostemp: O_CREAT|O_EXCL, mode 0600,
 * an unpredictable name) in the target's directory, every write checked,
 * then fflush, fsync, fclose checked and rename over the target. A failed
 * or interrupted save removes the temporary and leaves the target as it
 * was; a symlink planted at the target's path is replaced, not followed.
 * Lua sees it as poolsh.core.open_atomic(path) -> a poolsh.AtomicFile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lua.h"
#include "lauxlib.h"
#include "atomic_file.h"

#define ATOMIC_FILE "poolsh.AtomicFile"

/* The temporaries being written in this process, so that a signal that
 * ends it at once can remove them (ps_atomic_unlink_all). A slot is set
 * after its string is complete and cleared before the string is freed. */
#define LIVE_MAX 32
static char *volatile live[LIVE_MAX];

static void live_add(char *tmp) {
  for (int i = 0; i < LIVE_MAX; i++)
    if (!live[i]) { live[i] = tmp; return; }
}

static void live_remove(const char *tmp) {
  for (int i = 0; i < LIVE_MAX; i++)
    if (live[i] == tmp) live[i] = NULL;
}

void ps_atomic_unlink_all(void) {
  for (int i = 0; i < LIVE_MAX; i++) {
    char *p = live[i];
    if (p) unlink(p);
  }
}

/* The process's umask, read without changing it where /proc allows
 * (umask() itself can only be read by setting it). */
static mode_t current_umask(void) {
  FILE *f = fopen("/proc/self/status", "re");
  if (f) {
    char line[128];
    unsigned int m;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "Umask: %o", &m) == 1) {
        fclose(f);
        return (mode_t)m & 0777;
      }
    fclose(f);
  }
  mode_t m = umask(022);
  umask(m);
  return m;
}

/* The mode the new file gets: an existing regular file's own permission
 * bits (a private trace stays private), else 0644 less the umask. Sets
 * *why when the target must not be replaced. */
static mode_t target_mode(const char *path, int *why) {
  struct stat st, to;
  *why = 0;
  if (lstat(path, &st) != 0) {
    if (errno != ENOENT) *why = errno;
    return 0644 & ~current_umask();
  }
  if (S_ISREG(st.st_mode)) return st.st_mode & 0777;
  if (S_ISDIR(st.st_mode)) *why = EISDIR;
  else if (!S_ISLNK(st.st_mode)) *why = PS_ATOMIC_NOT_REGULAR;   /* a device, a fifo */
  else if (stat(path, &to) == 0 && !S_ISREG(to.st_mode))
    *why = S_ISDIR(to.st_mode) ? EISDIR : PS_ATOMIC_NOT_REGULAR;  /* /dev/stdout */
  return 0644 & ~current_umask();
}

/* The directory part of path ("." when none), malloc'd; NULL: no memory. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  return strndup(path, (size_t)(slash - path));
}

/* Whether dir is in /dev or /proc, where names are devices and a
 * process's files (/dev/stdout), never a place to put a saved file. */
static int special_dir(const char *dir) {
  char *real = realpath(dir, NULL);
  if (!real) return 0;   /* the mkostemp beside it will say why */
  int special = strncmp(real, "/dev", 4) == 0 && (real[4] == '\0' || real[4] == '/');
  special |= strncmp(real, "/proc", 5) == 0 && (real[5] == '\0' || real[5] == '/');
  free(real);
  return special;
}

int ps_atomic_open(ps_atomic *a, const char *path) {
  memset(a, 0, sizeof *a);
  size_t len = strlen(path);
  if (len == 0) return ENOENT;
  if (path[len - 1] == '/') return EISDIR;
  int why;
  mode_t mode = target_mode(path, &why);
  if (why) return why;
  char *dir = dir_of(path);
  if (!dir) return ENOMEM;
  if (special_dir(dir)) {
    free(dir);
    return PS_ATOMIC_NOT_REGULAR;
  }
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(dir) + strlen(base) + 16;
  char *tmp = malloc(n);
  char *copy = strdup(path);
  if (!tmp || !copy) {
    free(dir), free(tmp), free(copy);
    return ENOMEM;
  }
  /* ".NAME.XXXXXX", NAME cut so the whole stays within NAME_MAX */
  snprintf(tmp, n, "%s/.%.*s.XXXXXX", dir, 200, base);
  free(dir);
  /* no signal between creating the temporary and listing it: one that
   * ends poolsh there would leave the temporary behind */
  sigset_t all, was;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &was);
  int fd = mkostemp(tmp, O_CLOEXEC);
  int e = errno;
  if (fd >= 0) live_add(tmp);
  sigprocmask(SIG_SETMASK, &was, NULL);
  if (fd < 0) {
    free(tmp), free(copy);
    return e;
  }
  FILE *f = fdopen(fd, "wb");
  if (!f) {
    e = errno;
    close(fd);
    unlink(tmp);
    live_remove(tmp);
    free(tmp), free(copy);
    return e;
  }
  a->f = f, a->path = copy, a->tmp = tmp, a->mode = mode;
  return 0;
}

int ps_atomic_write(ps_atomic *a, const void *p, size_t n) {
  if (!a->f) return EBADF;
  if (a->err) return a->err;
  errno = 0;
  if (n && fwrite(p, 1, n, a->f) != n) a->err = errno ? errno : EIO;
  return a->err;
}

/* Frees what a holds and marks it closed. */
static void release(ps_atomic *a) {
  live_remove(a->tmp);
  free(a->path), free(a->tmp);
  a->f = NULL, a->path = a->tmp = NULL, a->err = 0;
}

void ps_atomic_abort(ps_atomic *a) {
  if (!a->f) return;
  fclose(a->f);
  unlink(a->tmp);
  release(a);
}

int ps_atomic_commit(ps_atomic *a) {
  if (!a->f) return EBADF;
  int e = a->err;
  errno = 0;
  if (!e && (fflush(a->f) != 0 || ferror(a->f))) e = errno ? errno : EIO;
  if (!e && fchmod(fileno(a->f), a->mode) != 0) e = errno;   /* readable once whole */
  if (!e && fsync(fileno(a->f)) != 0 && errno != EINVAL && errno != EROFS) e = errno;
  errno = 0;
  if (fclose(a->f) != 0 && !e) e = errno ? errno : EIO;
  if (!e && rename(a->tmp, a->path) != 0) e = errno;
  if (e) {
    unlink(a->tmp);
    release(a);
    return e;
  }
  char *dir = dir_of(a->path);   /* the rename itself survives a crash */
  int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  free(dir);
  release(a);
  return 0;
}

const char *ps_atomic_strerror(int e) {
  return e == PS_ATOMIC_NOT_REGULAR ? "not a regular file" : strerror(e);
}

/* ---- poolsh.AtomicFile ---------------------------------------------------- */

static ps_atomic *check_open(lua_State *L) {
  ps_atomic *a = (ps_atomic *)luaL_checkudata(L, 1, ATOMIC_FILE);
  if (!a->f) luaL_error(L, "attempt to use a closed " ATOMIC_FILE);
  return a;
}

/* poolsh.core.open_atomic(path) -> a poolsh.AtomicFile writing to a
 * temporary beside path. Created closed first, so an error leaves no
 * handle open. Raises naming path and why it cannot be written. */
static int open_atomic(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  ps_atomic *a = (ps_atomic *)lua_newuserdatauv(L, sizeof *a, 0);
  memset(a, 0, sizeof *a);
  luaL_setmetatable(L, ATOMIC_FILE);
  int e = ps_atomic_open(a, path);
  if (e) return luaL_error(L, "cannot open '%s' for writing: %s", path, ps_atomic_strerror(e));
  return 1;
}

/* f:write(...) -> f, as a file's write (strings and numbers); nil, the
 * error's text and its errno when a write failed (commit then raises). */
static int af_write(lua_State *L) {
  ps_atomic *a = check_open(L);
  int n = lua_gettop(L);
  for (int i = 2; i <= n; i++) {
    size_t len;
    char num[64];
    const char *s;
    if (lua_type(L, i) == LUA_TNUMBER) {
      len = (size_t)(lua_isinteger(L, i)
        ? snprintf(num, sizeof num, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, i))
        : snprintf(num, sizeof num, LUA_NUMBER_FMT, (LUAI_UACNUMBER)lua_tonumber(L, i)));
      s = num;
    } else {
      s = luaL_checklstring(L, i, &len);
    }
    int e = ps_atomic_write(a, s, len);
    if (e) {
      luaL_pushfail(L);
      lua_pushstring(L, strerror(e));
      lua_pushinteger(L, e);
      return 3;
    }
  }
  lua_settop(L, 1);
  return 1;
}

/* f:commit() -> path: the file is in place, whole. Raises naming the path
 * and the error (a failed write, flush, sync, close or rename); the
 * temporary is gone and whatever was at path is unchanged. */
static int af_commit(lua_State *L) {
  ps_atomic *a = check_open(L);
  lua_pushstring(L, a->path);
  int e = ps_atomic_commit(a);
  if (e) return luaL_error(L, "cannot write '%s': %s (nothing was replaced)",
                           lua_tostring(L, -1), strerror(e));
  return 1;
}

/* f:abort(), __gc, __close: removes the temporary, keeps the target.
 * Idempotent; never raises. */
static int af_abort(lua_State *L) {
  ps_atomic *a = (ps_atomic *)luaL_checkudata(L, 1, ATOMIC_FILE);
  ps_atomic_abort(a);
  return 0;
}

static int af_tostring(lua_State *L) {
  ps_atomic *a = (ps_atomic *)luaL_checkudata(L, 1, ATOMIC_FILE);
  if (a->f) lua_pushfstring(L, ATOMIC_FILE " (%s)", a->path);
  else lua_pushliteral(L, ATOMIC_FILE " (closed)");
  return 1;
}

/* Adds open_atomic to the table of views (arg 2); creates the metatable. */
int poolsh_open_atomic_file(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"write", af_write}, {"commit", af_commit}, {"abort", af_abort}, {NULL, NULL}
  };
  static const luaL_Reg meta[] = {
    {"__gc", af_abort}, {"__close", af_abort}, {"__tostring", af_tostring}, {NULL, NULL}
  };
  if (luaL_newmetatable(L, ATOMIC_FILE)) {
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, open_atomic);
  lua_setfield(L, 2, "open_atomic");    /* a view: the table of views */
  return 0;
}
