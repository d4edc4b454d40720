/*
 * main.c: the poolsh host, a lua.c-compatible command line with poolsh
 * preloaded: poolsh [options] [script [args]]. The REPL's printing and
 * completion are Lua (poolsh.repl); this file reads lines, runs chunks,
 * turns Ctrl-C into an interruption of the running statement (or of the
 * line being typed) and ends every run through one exit path (finish).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#include "poolsh.h"
#include "atomic_file.h"

#if defined(POOLSH_LIBEDIT)
#include <editline/readline.h>
#define HAVE_LINE_EDITING 1
#elif defined(POOLSH_READLINE)
#include <readline/history.h>
#include <readline/readline.h>
#define HAVE_LINE_EDITING 1
#endif

#define POOLSH_VERSION "poolsh 0.1.0"   /* as poolsh.version (src/init.c) */

#define PROMPT "poolsh> "
#define PROMPT2 "   ...> "

static const char *progname = "poolsh";

/* The one state of this process, for the signal handlers and completion. */
static lua_State *globalL = NULL;
static volatile sig_atomic_t *interrupt_flag = NULL;
/* Lua code runs under docall: a signal stops it through a hook. */
static volatile sig_atomic_t running = 0;
/* Ctrl-C at the prompt: the line being typed is dropped. */
static volatile sig_atomic_t prompt_interrupt = 0;
/* SIGTERM or SIGHUP: the run ends through the normal exit path; SIGPIPE
 * with standard output's reader gone too, quietly. */
static volatile sig_atomic_t end_signal = 0;
/* The errno of the first failed write of print to standard output. */
static int stdout_errno = 0;
/* Errors at the REPL print their message only (POOLSH_TRACEBACK=1: all). */
static int brief_errors = 0;

/* ---- the allocator ---------------------------------------------------- */

/* Freed blocks of up to SMALL_MAX bytes wait on per-size free lists and
 * are reused last-in first-out, so the userdata that each p:alloc creates
 * recycles warm memory instead of going through malloc and free. */
#define SMALL_STEP 16
#define SMALL_MAX 256

typedef struct small_heap {
  void *free[SMALL_MAX / SMALL_STEP + 1];
} small_heap;

static int small_class(size_t n) {
  return n == 0 || n > SMALL_MAX ? -1 : (int)((n + SMALL_STEP - 1) / SMALL_STEP);
}

/* lua_Alloc: Lua's contract (nsize 0 frees; a shrink never fails). */
static void *l_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  small_heap *h = (small_heap *)ud;
  int oc = ptr ? small_class(osize) : -1;
  int nc = small_class(nsize);
  if (nsize == 0) {
    if (oc >= 0) {
      *(void **)ptr = h->free[oc];
      h->free[oc] = ptr;
    } else {
      free(ptr);
    }
    return NULL;
  }
  if (oc >= 0 && oc == nc) return ptr;
  if (oc < 0 && nc < 0) return realloc(ptr, nsize);
  void *n = NULL;
  if (nc >= 0 && (n = h->free[nc]) != NULL) h->free[nc] = *(void **)n;
  else n = malloc(nc >= 0 ? (size_t)nc * SMALL_STEP : nsize);
  if (n == NULL) return (ptr && nsize <= osize) ? ptr : NULL;
  if (ptr) {
    memcpy(n, ptr, osize < nsize ? osize : nsize);
    l_alloc(ud, ptr, osize, 0);
  }
  return n;
}

/* What luaL_newstate would set: a panic message and a warning function
 * (warnings start off; "@on" and "@off" switch them, like lua.c's). */
static int panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr, "PANIC: unprotected error in call to Lua API (%s)\n",
          msg ? msg : "error object is not a string");
  return 0;
}

typedef struct warn_state {
  int on, cont;
} warn_state;

static void warnf(void *ud, const char *msg, int tocont) {
  warn_state *w = (warn_state *)ud;
  if (!w->cont && msg[0] == '@') {
    if (strcmp(msg, "@on") == 0) w->on = 1;
    else if (strcmp(msg, "@off") == 0) w->on = 0;
    return;
  }
  if (w->on) {
    if (!w->cont) fputs("Lua warning: ", stderr);
    fputs(msg, stderr);
    if (!tocont) fputc('\n', stderr);
    fflush(stderr);
  }
  w->cont = tocont;
}

static void small_heap_release(small_heap *h) {
  for (int c = 0; c <= SMALL_MAX / SMALL_STEP; c++)
    while (h->free[c]) {
      void *next = *(void **)h->free[c];
      free(h->free[c]);
      h->free[c] = next;
    }
}

/* ---- messages and errors (as lua.c) ------------------------------------- */

static int find_lua_dir(char *out, size_t size, int use_env);

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Prints the commands, one word each: the modules in poolsh/cmd/ of the
 * Lua library poolsh finds (the one list `poolsh help` reads too),
 * sorted, folded at 80 columns under "Commands:". */
static void print_commands(FILE *f) {
  char dir[PATH_MAX + 96], *names[64];
  int n = 0;
  if (!find_lua_dir(dir, sizeof dir - 16, 1)) return;
  strcat(dir, "/poolsh/cmd");
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while (n < 64 && (e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len > 4 && strcmp(e->d_name + len - 4, ".lua") == 0 &&
        strspn(e->d_name, "abcdefghijklmnopqrstuvwxyz0123456789_") == len - 4 &&
        (names[n] = strndup(e->d_name, len - 4)) != NULL)
      n++;
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], by_name);
  int col = fprintf(f, "Commands:");
  for (int i = 0; i < n; i++) {
    int w = (int)strlen(names[i]) + (i + 1 < n ? 1 : 0);
    if (col + 1 + w > 78) col = fprintf(f, "\n         ");
    col += fprintf(f, " %s%s", names[i], i + 1 < n ? "," : "");
    free(names[i]);
  }
  fprintf(f, "\n  (poolsh COMMAND --help for one; poolsh help for what poolsh can do)\n");
}

static void print_usage(FILE *f) {
  fprintf(f,
    "usage: %s [options] [script [args]]\n"
    "       %s [options] COMMAND [args]\n",
    progname, progname);
  print_commands(f);
  fprintf(f,
    "Available options are:\n"
    "  -e stat            execute string 'stat'\n"
    "  -i                 enter interactive mode after executing 'script'\n"
    "  -l mod             require library 'mod' into global 'mod'\n"
    "  -l g=mod           require library 'mod' into global 'g'\n"
    "  -v                 show poolsh's and Lua's versions\n"
    "  --version          ... and the device poolsh uses, and why\n"
    "  -E                 ignore environment variables\n"
    "  -W                 turn warnings on (always on in poolsh)\n"
    "  --backend=NAME     auto, cuda or sim (also POOLSH_BACKEND)\n"
    "  --device=N         CUDA device index (also POOLSH_DEVICE)\n"
    "  --sim-memory=SIZE  size of the simulated device, e.g. 16GiB\n"
    "  --sim-devices=N    devices the sim models, 1 to 16 (also POOLSH_SIM_DEVICES)\n"
    "  --profile=FILE     the sim's device profile (also POOLSH_PROFILE)\n"
    "  --limit=SIZE       cap what this process takes from the device: all\n"
    "                     pools' reservations and poolsh.malloc (POOLSH_LIMIT)\n"
    "  --pinned-limit=SIZE  cap pinned host memory (POOLSH_PINNED_LIMIT)\n"
    "  --trace=FILE       record the whole run; save it to FILE at exit\n"
    "                     (.json, .csv, .pickle or .html)\n"
    "  --serve=SOCKET     serve poolsh.connect clients on a Unix-domain socket\n"
    "  --view[=PORT]      serve the live memory-map picture on a local page (its\n"
    "                     URL on stderr); after a script, until Enter or Ctrl-C\n"
    "  -h, --help         show this help\n"
    "  --                 stop handling options\n"
    "  -                  stop handling options and execute stdin\n");
}

static void message(const char *pname, const char *msg) {
  if (pname) fprintf(stderr, "%s: ", pname);
  fprintf(stderr, "%s\n", msg);
  fflush(stderr);
}

static int report(lua_State *L, int status) {
  if (status != LUA_OK && end_signal == SIGPIPE) {   /* the reader left: end quietly */
    lua_pop(L, 1);
  } else if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    message(progname, msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
  }
  return status;
}

/* An error at the prompt, on a terminal: its message folded at words to
 * the terminal's width (poolsh.words), not cut at the edge. Returns
 * status. */
static int fold_error(lua_State *L, int status) {
  if (status == LUA_OK || !isatty(2) || !lua_isstring(L, -1)) return status;
  static const char code[] = "return require('poolsh.words').wrap(...)";
  if (luaL_loadbuffer(L, code, sizeof code - 1, "=(poolsh)") != LUA_OK) { lua_pop(L, 1); return status; }
  lua_pushvalue(L, -2);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_isstring(L, -1)) lua_replace(L, -2);
  else lua_pop(L, 1);
  return status;
}

/* Message handler: adds a traceback to the error; at the REPL
 * (brief_errors) keeps it for poolsh.repl.traceback() instead. */
static int msghandler(lua_State *L) { return poolsh_msghandler(L, brief_errors); }

/* ---- Ctrl-C --------------------------------------------------------------- */

/* Stops Lua code with "interrupted!", unless a poolsh wait took the
 * interrupt first (it cleared the flag and raised its own message, which
 * this hook, run when the message handler is called, must not replace). */
static void lstop(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  if (interrupt_flag && !*interrupt_flag) return;
  luaL_error(L, "interrupted!");
}

/* Stops Lua code at its next instruction and poolsh's waits at their next
 * poll; a second Ctrl-C during the same statement ends the process. */
static void laction(int sig) {
  signal(sig, SIG_DFL);
  if (interrupt_flag) *interrupt_flag = 1;
  lua_sethook(globalL, lstop, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* Raises at every instruction, so a pcall in the script cannot keep it
 * running: the run is ending. */
static void lend(lua_State *L, lua_Debug *ar) {
  (void)ar;
  luaL_error(L, "%s", end_signal == SIGHUP ? "hangup: the terminal closed"
                    : end_signal == SIGPIPE ? "standard output closed" : "terminated");
}

/* A signal that ends the process at once (a second SIGTERM, Ctrl-C while
 * --trace is saved): the temporaries of saves under way are removed (the
 * files they would replace stay as they were), then the signal kills. */
static void on_fatal_signal(int sig) {
  ps_atomic_unlink_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* SIGTERM, SIGHUP: stops what runs (Lua code, poolsh's waits) or the
 * prompt, so that poolsh ends through its exit path (the leak report,
 * --trace saved). A second one ends the process at once. */
static void on_end_signal(int sig) {
  signal(sig, on_fatal_signal);
  end_signal = sig;
  if (interrupt_flag) *interrupt_flag = 1;
  if (running) lua_sethook(globalL, lend, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* SIGPIPE: a write to a pipe nobody reads fails with EPIPE instead of
 * killing poolsh (a handled signal, unlike an ignored one, is reset for
 * the programs poolsh starts). When that pipe is standard output
 * (poolsh ... | head -1), the run ends as for SIGTERM, through the exit
 * path (leak report, --trace saved), quietly, with status 141. */
static void on_sigpipe(int sig) {
  (void)sig;
  struct pollfd p = {.fd = 1, .events = POLLOUT, .revents = 0};
  if (end_signal || poll(&p, 1, 0) != 1 || !(p.revents & (POLLERR | POLLHUP))) return;
  end_signal = SIGPIPE;
  if (interrupt_flag) *interrupt_flag = 1;
  if (running) lua_sethook(globalL, lend, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* print, as Lua's, but a failed write to standard output is remembered
 * (stdout_errno) for the check at exit, which says it and fails. */
static int host_print(lua_State *L) {
  int n = lua_gettop(L);
  errno = 0;
  for (int i = 1; i <= n; i++) {
    size_t len;
    const char *s = luaL_tolstring(L, i, &len);
    if ((i > 1 && fputc('\t', stdout) == EOF) || fwrite(s, 1, len, stdout) != len)
      if (!stdout_errno) stdout_errno = errno ? errno : EIO;
    lua_pop(L, 1);
  }
  if ((fputc('\n', stdout) == EOF || fflush(stdout) != 0) && !stdout_errno)
    stdout_errno = errno ? errno : EIO;
  return 0;
}

/* At exit: what is left for standard output is written and it is closed;
 * 0 when that or an earlier write failed (said in one line, unless the
 * reader went away: then quietly, end_signal set to SIGPIPE). */
static int close_stdout(void) {
  int e = 0;
  errno = 0;
  if (fflush(stdout) != 0) e = errno ? errno : EIO;
  else if (ferror(stdout)) e = stdout_errno;
  if (ferror(stdout) && !e) {   /* a write that was not print's: ask again */
    errno = 0;
    e = write(fileno(stdout), "", 0) < 0 ? errno : -1;   /* -1: the reason is gone */
  }
  errno = 0;
  if (fclose(stdout) != 0 && !e && errno != EBADF) e = errno ? errno : EIO;
  if (!e) return 1;
  if (e == EPIPE) end_signal = SIGPIPE;
  else fprintf(stderr, "%s: cannot write to standard output: %s\n", progname,
               e > 0 ? strerror(e) : "a write failed");
  return 0;
}

/* Installs handler for sig, interrupting system calls (no SA_RESTART). */
static void set_handler(int sig, void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

/* When poolsh.view serves, lets it publish the picture while the code
 * about to run runs (its count hook, lua/poolsh/view.lua's arm). */
static void arm_view(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.view.arm") != LUA_TFUNCTION) lua_pop(L, 1);
  else if (lua_pcall(L, 0, 0, 0) != LUA_OK) lua_pop(L, 1);
}

/* Runs the function on the stack with narg arguments, interruptibly. */
static int docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  if (interrupt_flag) *interrupt_flag = end_signal != 0;
  struct sigaction old;
  sigaction(SIGINT, NULL, &old);
  signal(SIGINT, laction);
  running = 1;
  arm_view(L);
  if (end_signal) lua_sethook(L, lend, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
  int status = lua_pcall(L, narg, nres, base);
  running = 0;
  sigaction(SIGINT, &old, NULL);
  lua_sethook(L, NULL, 0, 0);
  if (interrupt_flag) *interrupt_flag = 0;
  lua_remove(L, base);
  return status;
}

static int dochunk(lua_State *L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
}

static int dostring(lua_State *L, const char *s, const char *name) {
  return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* -l [g=]mod: require mod into global g (default: mod). */
static int dolibrary(lua_State *L, char *spec) {
  char *eq = strchr(spec, '=');
  const char *glob = spec, *mod = spec;
  if (eq) { *eq = '\0'; mod = eq + 1; }
  lua_getglobal(L, "require");
  lua_pushstring(L, mod);
  int status = docall(L, 1, 1);
  if (status == LUA_OK) lua_setglobal(L, glob);
  return report(L, status);
}

/* ---- finding the Lua library ---------------------------------------------- */

static int file_exists(const char *path) {
  FILE *f = fopen(path, "r");
  if (f) fclose(f);
  return f != NULL;
}

/* Finds poolsh's lua/ directory: POOLSH_LUA_DIR (when use_env), else
 * beside the executable (install: ../share/lua/5.4; build tree: ./lua).
 * Writes it to out and returns 1; 0 when there is none. */
static int find_lua_dir(char *out, size_t size, int use_env) {
  char exe[PATH_MAX], cand[PATH_MAX + 64], probe[PATH_MAX + 96];
  const char *env = use_env ? getenv("POOLSH_LUA_DIR") : NULL;
  if (env && *env) {
    snprintf(out, size, "%s", env);
    return 1;
  }
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash) *slash = '\0';
  static const char *const rel[] = {"/../share/lua/5.4", "/lua"};
  for (int i = 0; i < 2; i++) {
    snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
    snprintf(probe, sizeof probe, "%s/poolsh/init.lua", cand);
    if (file_exists(probe)) {
      snprintf(out, size, "%s", cand);
      return 1;
    }
  }
  return 0;
}

/* Puts poolsh's lua/ (find_lua_dir) first on package.path. */
static void add_lua_dir(lua_State *L, int use_env) {
  char found[PATH_MAX + 64];
  if (!find_lua_dir(found, sizeof found, use_env)) return;
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s", found, found, lua_tostring(L, -1));
  lua_setfield(L, -3, "path");
  lua_pop(L, 2);
}

/* Keeps only the absolute entries of package[field] (path or cpath): a
 * relative one ("./?.lua", "?.so", the defaults' "./?/init.lua") is
 * searched in the current directory, where whoever can write there would
 * choose the code poolsh runs. */
static void drop_relative(lua_State *L, const char *field) {
  luaL_Buffer b;
  lua_getglobal(L, "package");
  lua_getfield(L, -1, field);
  const char *p = lua_tostring(L, -1);
  if (!p) { lua_pop(L, 2); return; }
  luaL_buffinit(L, &b);
  int n = 0;
  while (*p) {
    size_t len = strcspn(p, ";");
    if (p[0] == '/') {
      if (n++) luaL_addchar(&b, ';');
      luaL_addlstring(&b, p, len);
    }
    p += len + (p[len] == ';');
  }
  luaL_pushresult(&b);                     /* [package, old, new] */
  lua_setfield(L, -3, field);
  lua_pop(L, 2);
}

/* The current directory is not searched for modules (package.path and
 * cpath keep their absolute entries only) unless POOLSH_CWD_MODULES=1
 * (docs/cli.md). */
static void safe_paths(lua_State *L, int use_env) {
  const char *keep = use_env ? getenv("POOLSH_CWD_MODULES") : NULL;
  if (keep && strcmp(keep, "1") == 0) return;
  drop_relative(L, "path");
  drop_relative(L, "cpath");
}

/* poolsh script.lua: the script's own directory (absolute) is searched
 * for Lua modules, as Python puts a script's directory on sys.path, but
 * by a searcher added after all others (package.path and cpath), so that
 * it cannot replace poolsh's or the system's modules. */
static void add_script_dir(lua_State *L, const char *script) {
  static const char code[] =
    "local dir = ... local path = dir .. '/?.lua;' .. dir .. '/?/init.lua' "
    "local searchers = package.searchers "
    "searchers[#searchers + 1] = function(name) "
    "  local file, err = package.searchpath(name, path) "
    "  if not file then return '\\n\\t' .. err:gsub('^\\n\\t', '') end "
    "  local f, e = loadfile(file) "
    "  if not f then error((\"error loading module '%s' from file '%s':\\n\\t%s\"):format(name, file, e), 0) end "
    "  return f, file "
    "end";
  char dir[PATH_MAX], real[PATH_MAX];
  const char *slash = strrchr(script, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == script) snprintf(dir, sizeof dir, "/");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - script), script);
  if (!realpath(dir, real) || strchr(real, ';') || strchr(real, '?')) return;
  int status = luaL_loadbuffer(L, code, sizeof code - 1, "=(script directory)");
  if (status == LUA_OK) {
    lua_pushstring(L, real);
    status = lua_pcall(L, 1, 0, 0);
  }
  report(L, status);
}

/* ---- the REPL ------------------------------------------------------------- */

#ifdef HAVE_LINE_EDITING
static char history_path[PATH_MAX];

static char *complete_one(const char *text, int state);

/* Completes the word under the cursor with poolsh.repl.complete. */
static char **complete(const char *text, int start, int end) {
  (void)start; (void)end;
  rl_attempted_completion_over = 1;
  return rl_completion_matches(text, complete_one);
}

/* Yields the state-th candidate from the Lua completer. */
static char *complete_one(const char *text, int state) {
  lua_State *L = globalL;
  int top = lua_gettop(L);
  char *out = NULL;
  lua_getglobal(L, "poolsh");
  if (lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, "repl") == LUA_TTABLE &&
      lua_getfield(L, -1, "complete") == LUA_TFUNCTION) {
    lua_pushstring(L, text);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TTABLE &&
        lua_rawgeti(L, -1, state + 1) == LUA_TSTRING)
      out = strdup(lua_tostring(L, -1));
  }
  lua_settop(L, top);
  return out;
}

static void init_editing(int use_env) {
  const char *h = use_env ? getenv("POOLSH_HISTORY") : NULL;
  const char *home = getenv("HOME");
  if (h && *h) snprintf(history_path, sizeof history_path, "%s", h);
  else if (home) snprintf(history_path, sizeof history_path, "%s/.poolsh_history", home);
  rl_readline_name = "poolsh";
  rl_catch_signals = 0;   /* the host handles them: before the library starts */
  rl_attempted_completion_function = complete;
  rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{(,+-*/%^~#[]";
  using_history();
  stifle_history(1000);
  if (history_path[0]) read_history(history_path);
}

static char *line_read;
static int line_done;

static void on_line(char *line) {
  line_read = line;
  line_done = 1;
  rl_callback_handler_remove();
}

/* Drops the line being typed and gives the terminal back; after Ctrl-C,
 * shows ^C (raw mode: the terminal did not echo it) and ends the line. */
static void abandon_line(void) {
  if (prompt_interrupt) {
    fputs("^C", stdout);   /* before readline's cleanup returns the cursor */
    fflush(stdout);
  }
#if defined(POOLSH_READLINE)
  rl_free_line_state();
#if RL_READLINE_VERSION >= 0x0700
  rl_callback_sigcleanup();
#endif
  rl_cleanup_after_signal();
  rl_replace_line("", 0);
#endif
  rl_callback_handler_remove();
  if (prompt_interrupt) {
    fputc('\n', stdout);
    fflush(stdout);
  }
}

/* Reads a line through the library's callback interface, waiting in
 * pselect so that a signal (Ctrl-C, SIGTERM, SIGHUP) ends the wait without
 * a race: NULL at end of input or when a signal came. Input that is not a
 * terminal is read as before, with readline(). */
static char *read_line(const char *prompt) {
  if (!isatty(fileno(rl_instream ? rl_instream : stdin)))
    return end_signal ? NULL : readline(prompt);
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &old);
  line_read = NULL;
  line_done = 0;
  rl_callback_handler_install(prompt, on_line);
  while (!line_done) {
    if (prompt_interrupt || end_signal) { abandon_line(); break; }
    int fd = fileno(rl_instream ? rl_instream : stdin);
    fd_set in;
    FD_ZERO(&in);
    FD_SET(fd, &in);
    int r = pselect(fd + 1, &in, NULL, NULL, NULL, &old), n = 0;
    if (r > 0 && (ioctl(fd, FIONREAD, &n) != 0 || n == 0)) {   /* hung up, or end */
      r = -1;
      errno = EIO;
    }
    if (r > 0) rl_callback_read_char();
    else if (r < 0 && errno != EINTR) { abandon_line(); break; }
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return line_read;
}

static void save_line(const char *line) {
  if (!line[0]) return;
  add_history(line);
  if (history_path[0]) write_history(history_path);
}
#else
static void init_editing(int use_env) { (void)use_env; }

/* NULL at end of input, or when a signal interrupted the read. */
static char *read_line(const char *prompt) {
  char *line = NULL;
  size_t cap = 0;
  fputs(prompt, stdout);
  fflush(stdout);
  if (prompt_interrupt || end_signal || getline(&line, &cap, stdin) < 0) {
    if (prompt_interrupt) fputc('\n', stdout);   /* after the ^C the terminal echoed */
    clearerr(stdin);
    free(line);
    return NULL;
  }
  line[strcspn(line, "\n")] = '\0';
  return line;
}

static void save_line(const char *line) { (void)line; }
#endif

/* loadline's results besides a load status. */
#define LINE_END (-1)       /* end of input, or SIGTERM/SIGHUP */
#define LINE_DROPPED (-2)   /* Ctrl-C: the statement typed so far is dropped */

/* The first line's prompt: poolsh.repl.prompt when it is a string (a
 * lesson sets its own), else PROMPT; continuation lines get PROMPT2. */
static const char *prompt_text(lua_State *L, int first) {
  static char custom[128];
  const char *p = first ? PROMPT : PROMPT2;
  int top = lua_gettop(L);
  if (first && lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.repl") == LUA_TTABLE &&
      lua_getfield(L, -1, "prompt") == LUA_TSTRING) {
    snprintf(custom, sizeof custom, "%s", lua_tostring(L, -1));
    p = custom;
  }
  lua_settop(L, top);
  return p;
}

/* Reads a line and pushes it; 0 at end of input or on a signal. */
static int pushline(lua_State *L, int first) {
  char *b = read_line(prompt_text(L, first));
  if (b == NULL) return 0;
  lua_pushstring(L, b);
  free(b);
  return 1;
}

static int incomplete(lua_State *L, int status) {
  if (status == LUA_ERRSYNTAX) {
    size_t lmsg;
    const char *msg = lua_tolstring(L, -1, &lmsg);
    if (lmsg >= 5 && strcmp(msg + lmsg - 5, "<eof>") == 0) {
      lua_pop(L, 1);
      return 1;
    }
  }
  return 0;
}

/* Compiles "return <line>" so expressions print their values. */
static int addreturn(lua_State *L) {
  const char *line = lua_tostring(L, -1);
  const char *retline = lua_pushfstring(L, "return %s;", line);
  int status = luaL_loadbuffer(L, retline, strlen(retline), "=stdin");
  if (status == LUA_OK) lua_remove(L, -2);
  else lua_pop(L, 2);
  return status;
}

/* Keeps reading lines while the chunk is incomplete. */
static int multiline(lua_State *L) {
  for (;;) {
    size_t len;
    const char *line = lua_tolstring(L, 1, &len);
    int status = luaL_loadbuffer(L, line, len, "=stdin");
    if (!incomplete(L, status)) return status;
    if (!pushline(L, 0)) return prompt_interrupt ? LINE_DROPPED : LINE_END;
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);
  }
}

/* Reads a whole statement; leaves its compiled chunk on the stack, or
 * returns LINE_END or LINE_DROPPED. */
static int loadline(lua_State *L) {
  lua_settop(L, 0);
  prompt_interrupt = 0;
  if (!pushline(L, 1)) return prompt_interrupt ? LINE_DROPPED : LINE_END;
  int status = addreturn(L);
  if (status != LUA_OK) status = multiline(L);
  if (status == LINE_END || status == LINE_DROPPED) {
    lua_settop(L, 0);
    return status;
  }
  save_line(lua_tostring(L, 1));
  if (status == LUA_OK) poolsh_set_statement(L, 1);
  lua_remove(L, 1);
  return status;
}

/* Prints the statement's results through poolsh.repl.print. */
static void print_results(lua_State *L) {
  int n = lua_gettop(L);
  if (n == 0) return;
  lua_getglobal(L, "poolsh");
  if (lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, "repl") == LUA_TTABLE &&
      lua_getfield(L, -1, "print") == LUA_TFUNCTION) {
    lua_insert(L, 1);
    lua_settop(L, n + 1);
    if (docall(L, n, 0) != LUA_OK) report(L, LUA_ERRRUN);
  } else {
    lua_settop(L, n);
    lua_getglobal(L, "print");
    lua_insert(L, 1);
    if (lua_pcall(L, n, 0, 0) != LUA_OK) report(L, LUA_ERRRUN);
  }
}

static void on_prompt_sigint(int sig) {
  (void)sig;
  prompt_interrupt = 1;
}

/* Errors print their message alone unless POOLSH_TRACEBACK=1; the REPL
 * keeps poolsh.repl in the registry for the message handler. */
static void init_errors(lua_State *L, int use_env) {
  const char *tb = use_env ? getenv("POOLSH_TRACEBACK") : NULL;
  brief_errors = !(tb && strcmp(tb, "1") == 0);
  lua_getglobal(L, "poolsh");
  if (lua_type(L, -1) == LUA_TTABLE) lua_getfield(L, -1, "repl");
  else lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "poolsh.repl");
  lua_pop(L, 1);
}

/* The REPL: Ctrl-C at the prompt drops what was typed of the statement
 * and prompts again; while a statement runs it interrupts it (docall). */
static void doREPL(lua_State *L, int use_env) {
  const char *oldprogname = progname;
  progname = NULL;
  init_editing(use_env);
  init_errors(L, use_env);
  lua_pushboolean(L, isatty(1));
  lua_setglobal(L, "_POOLSH_TTY");
  dostring(L, "poolsh.live.color = _POOLSH_TTY; _POOLSH_TTY = nil; poolsh.watch(true) "
              "if help == nil then help = require('poolsh.help').help end",
           "=(poolsh)");
  set_handler(SIGINT, on_prompt_sigint);
  int status;
  while (!end_signal && (status = loadline(L)) != LINE_END) {
    if (status == LINE_DROPPED) continue;
    if (status == LUA_OK) status = docall(L, 0, LUA_MULTRET);
    if (status == LUA_OK) print_results(L);
    else report(L, fold_error(L, status));
    lua_getglobal(L, "poolsh");
    if (!end_signal && lua_type(L, -1) == LUA_TTABLE &&
        lua_getfield(L, -1, "repl") == LUA_TTABLE &&
        lua_getfield(L, -1, "after") == LUA_TFUNCTION)
      lua_pcall(L, 0, 0, 0);
    lua_settop(L, 0);
    poolsh_set_statement(L, 0);
  }
  signal(SIGINT, SIG_DFL);
  brief_errors = 0;
  lua_settop(L, 0);
  fputc('\n', stdout);
  fflush(stdout);
  progname = oldprogname;
}

/* ---- command line ----------------------------------------------------------- */

typedef struct options {
  int interactive, version, no_env, warnings, stdin_script, has_e;
  int script;                 /* index of the script in argv, 0 if none */
  int command;                /* index of a command's name in argv, 0 if none */
  int status;                 /* a command's exit status */
  const char *backend, *device, *sim_memory, *sim_devices, *trace, *profile;
  const char *limit, *pinned_limit;   /* else POOLSH_LIMIT, POOLSH_PINNED_LIMIT */
  const char *serve;          /* --serve SOCKET */
  const char *view;           /* --view[=PORT]: "0" for any free port */
} options;

/* The options that configure the device or the run: before a script, or
 * anywhere among a command's arguments; "--name=value" or "--name value". */
static const struct { const char *name; size_t off; } GLOBAL_OPTS[] = {
  {"--backend", offsetof(options, backend)},
  {"--device", offsetof(options, device)},
  {"--sim-memory", offsetof(options, sim_memory)},
  {"--sim-devices", offsetof(options, sim_devices)},
  {"--trace", offsetof(options, trace)},
  {"--profile", offsetof(options, profile)},
  {"--limit", offsetof(options, limit)},
  {"--pinned-limit", offsetof(options, pinned_limit)},
};
#define NGLOBAL_OPTS (sizeof GLOBAL_OPTS / sizeof GLOBAL_OPTS[0])

/* Whether a is a global option whose value is the next argument. */
static int global_takes_next(const char *a) {
  for (size_t k = 0; k < NGLOBAL_OPTS; k++)
    if (strcmp(a, GLOBAL_OPTS[k].name) == 0) return 1;
  return 0;
}

/* Takes argv[*i] when it is a global option (its value may be argv[*i +
 * 1]); 1 when taken, -1 when its value is missing, 0 when it is not one. */
static int global_option(int argc, char **argv, int *i, options *o) {
  const char *a = argv[*i];
  for (size_t k = 0; k < NGLOBAL_OPTS; k++) {
    size_t n = strlen(GLOBAL_OPTS[k].name);
    const char **field = (const char **)((char *)o + GLOBAL_OPTS[k].off);
    if (strncmp(a, GLOBAL_OPTS[k].name, n) != 0) continue;
    if (a[n] == '=') { *field = a + n + 1; return 1; }
    if (a[n] != '\0') continue;
    if (*i + 1 >= argc) {
      fprintf(stderr, "%s: '%s' needs a value\n", progname, a);
      print_usage(stderr);
      return -1;
    }
    *field = argv[++*i];
    return 1;
  }
  return 0;
}

/* Scans argv like lua.c; returns 0, or 1 on a bad option (usage printed). */
static int collect(int argc, char **argv, options *o) {
  int i;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-') break;
    if (strcmp(a, "--") == 0) { i++; break; }
    if (strcmp(a, "-") == 0) { o->stdin_script = 1; break; }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { print_usage(stdout); exit(0); }
    int g = global_option(argc, argv, &i, o);
    if (g < 0) return 1;
    if (g > 0) continue;
    if (strncmp(a, "--serve", 7) == 0 && (a[7] == '=' || a[7] == '\0')) {
      if (a[7] == '=') o->serve = a + 8;
      else if (++i < argc) o->serve = argv[i];
      else {
        fprintf(stderr, "%s: '--serve' needs a value\n", progname);
        print_usage(stderr);
        return 1;
      }
      continue;
    }
    if (strcmp(a, "--view") == 0 || strncmp(a, "--view=", 7) == 0) {
      o->view = a[6] ? a + 7 : "0";
      continue;
    }
    if (strcmp(a, "-i") == 0) o->interactive = o->version = 1;
    else if (strcmp(a, "-v") == 0) o->version = o->version ? o->version : 1;
    else if (strcmp(a, "--version") == 0) o->version = 2;
    else if (strcmp(a, "-E") == 0) o->no_env = 1;
    else if (strcmp(a, "-W") == 0) o->warnings = 1;
    else if (strcmp(a, "-e") == 0 || strcmp(a, "-l") == 0) {
      if (++i >= argc) {
        fprintf(stderr, "%s: '%s' needs argument\n", progname, a);
        print_usage(stderr);
        return 1;
      }
      o->has_e |= a[1] == 'e';
    } else if (strncmp(a, "-e", 2) == 0 || strncmp(a, "-l", 2) == 0) {
      o->has_e |= a[1] == 'e';   /* -estat, -lmod */
    } else {
      fprintf(stderr, "%s: unrecognized option '%s'\n", progname, a);
      print_usage(stderr);
      return 1;
    }
  }
  o->script = (i < argc && !o->stdin_script) ? i : 0;
  if (o->serve && (o->script || o->stdin_script || o->interactive)) {
    fprintf(stderr, "%s: --serve runs what clients send: it takes no script and no -i\n",
            progname);
    return 1;
  }
  return 0;
}

/* Runs -e and -l in order. */
static int runargs(lua_State *L, char **argv, int n) {
  for (int i = 1; i < n; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || strcmp(a, "--") == 0 || strcmp(a, "-") == 0) break;
    if (global_takes_next(a) || strcmp(a, "--serve") == 0) { i++; continue; }
    int opt = (a[1] == 'e' || a[1] == 'l') ? a[1] : 0;
    if (!opt) continue;
    char *extra = (char *)(a[2] ? a + 2 : argv[++i]);
    if (opt == 'e' ? dostring(L, extra, "=(command line)") : dolibrary(L, extra))
      return 0;
  }
  return 1;
}

/* arg table: arg[0] = script, negatives before it, script args after. */
static void createargtable(lua_State *L, char **argv, int argc, int script) {
  if (script == 0) script = argc;
  lua_createtable(L, argc - script, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

static int pushargs(lua_State *L) {
  if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
  int n = (int)luaL_len(L, -1);
  luaL_checkstack(L, n + 3, "too many arguments to script");
  for (int i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
  lua_remove(L, -n - 1);
  return n;
}

static int handle_script(lua_State *L, const char *fname) {
  int status = luaL_loadfile(L, fname);
  if (status == LUA_OK) {
    int n = pushargs(L);
    status = docall(L, n, 0);
  }
  return report(L, status);
}

/* poolsh.program: this executable's absolute path, so commands can start
 * more poolsh processes. */
static int set_program(lua_State *L) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 1;
  exe[n] = '\0';
  lua_getglobal(L, "poolsh");
  lua_pushstring(L, exe);
  lua_setfield(L, -2, "program");
  lua_pop(L, 1);
  lua_pushstring(L, exe);              /* poolsh.spawn runs this program */
  lua_setfield(L, LUA_REGISTRYINDEX, "poolsh.host");
  return 1;
}

/* --profile FILE, else POOLSH_PROFILE: the sim's device profile, loaded
 * before anything runs. Named on the command line, it must meet the sim. */
static int load_profile(lua_State *L, const options *o) {
  static const char code[] =
    "local prog, path, explicit = ... "
    "local function say(e) io.stderr:write(prog, ': ', tostring(e), '\\n') return false end "
    "if poolsh.backend() ~= 'sim' then "
    "  if explicit then return say(('--profile applies to the sim backend, not %s')"
    "    :format(poolsh.backend())) end "
    "  return true "
    "end "
    "local ok, e = pcall(require('poolsh.profile').load, path) "
    "return ok or say(e)";
  const char *path = o->profile ? o->profile : (o->no_env ? NULL : getenv("POOLSH_PROFILE"));
  if (!path || !*path) return 1;
  int status = luaL_loadbuffer(L, code, sizeof code - 1, "=(--profile)");
  if (status == LUA_OK) {
    lua_pushstring(L, progname);
    lua_pushstring(L, path);
    lua_pushboolean(L, o->profile != NULL);
    status = docall(L, 3, 1);
  }
  if (report(L, status) != LUA_OK) return 0;
  int ok = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return ok;
}

/* Loads poolsh into global `poolsh`, configures the backend from the
 * command line and opens the device. Returns 1 on success (errors are
 * reported). */
static int load_poolsh(lua_State *L, const options *o) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_poolsh_core);
  lua_setfield(L, -2, "poolsh.core");
  lua_pop(L, 1);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "poolsh");
  if (report(L, docall(L, 1, 1)) != LUA_OK) return 0;
  lua_setglobal(L, "poolsh");
  interrupt_flag = poolsh_interrupt_flag(L);
  static const char configure[] =   /* a bad value names its option, without a traceback */
    "local opts, names = ... local ok, e = pcall(poolsh.configure, opts) "
    "if ok then return nil end e = tostring(e) "
    "local key, rest = e:match('^poolsh%.configure: ([%w_]+): (.*)$') "
    "return key and names[key] and (names[key] .. ': ' .. rest) or e";
  if (report(L, luaL_loadbuffer(L, configure, sizeof configure - 1, "=(poolsh)")) != LUA_OK) return 0;
  lua_createtable(L, 0, 5);
  const char *backend = o->backend ? o->backend : (o->no_env ? "auto" : NULL);
  if (backend) { lua_pushstring(L, backend); lua_setfield(L, -2, "backend"); }
  if (o->no_env && !o->device) { lua_pushinteger(L, 0); lua_setfield(L, -2, "device"); }
  if (o->device) {
    char *end;
    long d = strtol(o->device, &end, 10);
    if (*end || end == o->device) lua_pushstring(L, o->device);   /* refused, as given */
    else lua_pushinteger(L, d);
    lua_setfield(L, -2, "device");
  }
  if (o->sim_memory) { lua_pushstring(L, o->sim_memory); lua_setfield(L, -2, "sim_memory"); }
  const char *sim_devices = o->sim_devices ? o->sim_devices
                                           : (o->no_env ? NULL : getenv("POOLSH_SIM_DEVICES"));
  if (sim_devices && *sim_devices) {
    lua_pushstring(L, sim_devices);
    lua_setfield(L, -2, "sim_devices");
  }
  const char *limit = o->limit ? o->limit : (o->no_env ? NULL : getenv("POOLSH_LIMIT"));
  const char *pinned = o->pinned_limit ? o->pinned_limit
                                       : (o->no_env ? NULL : getenv("POOLSH_PINNED_LIMIT"));
  if (limit && *limit) { lua_pushstring(L, limit); lua_setfield(L, -2, "limit"); }
  if (pinned && *pinned) { lua_pushstring(L, pinned); lua_setfield(L, -2, "pinned_limit"); }
  lua_createtable(L, 0, 4);                /* where each value came from */
  lua_pushstring(L, o->sim_devices ? "--sim-devices" : "POOLSH_SIM_DEVICES");
  lua_setfield(L, -2, "sim_devices");
  lua_pushstring(L, o->sim_memory ? "--sim-memory" : "sim_memory");
  lua_setfield(L, -2, "sim_memory");
  lua_pushstring(L, o->limit ? "--limit" : "POOLSH_LIMIT");
  lua_setfield(L, -2, "limit");
  lua_pushstring(L, o->pinned_limit ? "--pinned-limit" : "POOLSH_PINNED_LIMIT");
  lua_setfield(L, -2, "pinned_limit");
  if (report(L, docall(L, 2, 1)) != LUA_OK) return 0;
  int bad = lua_isstring(L, -1);
  if (bad) message(progname, lua_tostring(L, -1));
  lua_pop(L, 1);
  if (bad) return 0;
  if (!set_program(L) || !load_profile(L, o)) return 0;
  /* the leak report at exit says where buffers were allocated */
  return dostring(L, "poolsh.sources(true)", "=(poolsh)") == LUA_OK;
}

/* LUA_INIT_5_4 or LUA_INIT: a chunk or @file run before anything else. */
static int handle_luainit(lua_State *L) {
  const char *name = "=LUA_INIT_5_4";
  const char *init = getenv(name + 1);
  if (init == NULL) {
    name = "=LUA_INIT";
    init = getenv(name + 1);
  }
  if (init == NULL) return LUA_OK;
  if (init[0] == '@') return dochunk(L, luaL_loadfile(L, init + 1));
  return dostring(L, init, name);
}

/* Whether argv[i] names a command: a word (no '/' or '.') for which a
 * module poolsh.cmd.<word> is on package.path. */
static int is_command(lua_State *L, const char *word) {
  if (strpbrk(word, "/.") || !*word) return 0;
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchpath");
  lua_pushfstring(L, "poolsh.cmd.%s", word);
  lua_getfield(L, -3, "path");
  int found = lua_pcall(L, 2, 1, 0) == LUA_OK && lua_isstring(L, -1);
  lua_pop(L, 2);
  return found;
}

/* A command's arguments: everything after its name, less the global
 * options, which apply as if given before it. Pushes the list; 0 on a
 * bad option (reported). */
static int command_args(lua_State *L, int argc, char **argv, options *o) {
  lua_newtable(L);
  int n = 0;
  for (int i = o->command + 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      while (++i < argc) { lua_pushstring(L, argv[i]); lua_rawseti(L, -2, ++n); }
      break;
    }
    int g = global_option(argc, argv, &i, o);
    if (g < 0) return 0;
    if (g > 0) continue;
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

/* Runs require("poolsh.cmd.<name>")(args) with args on the stack top,
 * colours on when standard output is a terminal;
 * its result is the exit status (nil or true: 0, false: 1), or "repl":
 * the REPL follows (o->status -1; `poolsh learn`). An error the
 * command raises is said in one line, without a traceback (folded at the
 * terminal's width when standard error is one): status 1. */
static int run_command(lua_State *L, const char *name, options *o) {
  static const char code[] =
    "local prog, name, args, tty, errtty = ... "
    "poolsh.live.color = tty "
    "local ok, r = pcall(require('poolsh.cmd.' .. name), args) "
    "if not ok then "
    "  local msg = prog .. ': ' .. tostring(r) "
    "  io.stderr:write(errtty and require('poolsh.words').wrap(msg) or msg, '\\n') return 1 "
    "end "
    "if r == 'repl' then return -1 end "
    "if r == nil or r == true then return 0 elseif r == false then return 1 end "
    "r = math.tointeger(r) or 1 "
    "return (r >= 0 and r <= 255) and r or 1";
  int status = luaL_loadbuffer(L, code, sizeof code - 1, "=(command)");
  if (status == LUA_OK) {
    lua_pushstring(L, progname);
    lua_pushstring(L, name);
    lua_pushvalue(L, -4);
    lua_pushboolean(L, isatty(1));
    lua_pushboolean(L, isatty(2));
    status = docall(L, 5, 1);
    if (status == LUA_OK) o->status = (int)lua_tointeger(L, -1);
  }
  return report(L, status);
}

/* --trace FILE: saves what was recorded, whatever way the run ended, and
 * says where in one line; a failure is said in one line too. */
static int save_trace(lua_State *L, const char *path) {
  static const char code[] =
    "local prog, path = ... local t = poolsh and poolsh.trace "
    "if not t then return true end "
    "t.stop() "
    "local ok, e, n = pcall(t.save, path) "
    "if not ok then io.stderr:write(prog, ': --trace: ', tostring(e), '\\n') return false end "
    "n = n or t.count() "
    "io.stderr:write(('poolsh: trace saved to %s (%d event%s)\\n'):format(path, n, n == 1 and '' or 's')) "
    "return true";
  int status = luaL_loadbuffer(L, code, sizeof code - 1, "=(--trace)");
  if (status == LUA_OK) {
    lua_pushstring(L, progname);
    lua_pushstring(L, path);
    status = lua_pcall(L, 2, 1, 0);
    if (status == LUA_OK && !lua_toboolean(L, -1)) status = LUA_ERRRUN;
    else report(L, status);
  }
  lua_settop(L, 0);
  return status;
}

/* Buffers still live at exit: reported (with where they were allocated)
 * before lua_close frees them. */
static void leak_report(lua_State *L) {
  lua_getglobal(L, "poolsh");
  if (lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, "live") == LUA_TTABLE &&
      lua_getfield(L, -1, "report_leaks") == LUA_TFUNCTION)
    report(L, lua_pcall(L, 0, 0, 0));
  lua_settop(L, 0);
}

/* The --trace file and whether poolsh loaded (exit reports may run). */
static const char *trace_path = NULL;
static int poolsh_loaded = 0;

/* The one exit path, whatever ended the run (the end of the script or
 * the REPL, an error, os.exit, SIGTERM, SIGHUP): the leak report, then
 * --trace saved. Runs once; 0 when saving failed. */
static int finish(lua_State *L) {
  static int done = 0;
  if (done || !poolsh_loaded) return 1;
  done = 1;
  running = 0;
  struct sigaction was;               /* Ctrl-C now ends poolsh, saves undone, */
  sigaction(SIGINT, NULL, &was);      /* unless it is ignored (started with &) */
  if (was.sa_handler != SIG_IGN) signal(SIGINT, on_fatal_signal);
  lua_sethook(L, NULL, 0, 0);
  if (interrupt_flag) *interrupt_flag = 0;
  leak_report(L);   /* first: saving the trace runs the collector */
  return !trace_path || save_trace(L, trace_path) == LUA_OK;
}

/* The exit status once the state is closed: standard output written and
 * closed (a failure there fails a successful run), and 141 (128 +
 * SIGPIPE, as a shell reports a filter SIGPIPE killed) when standard
 * output's reader went away. */
static int final_status(int status) {
  if (!close_stdout() && status == EXIT_SUCCESS) status = EXIT_FAILURE;
  return end_signal == SIGPIPE ? 128 + SIGPIPE : status;
}

/* os.exit([code [, close]]) in the host: ends through finish() and always
 * closes the state, so finalizers run before the device context goes. */
static int host_exit(lua_State *L) {
  int status;
  if (lua_isboolean(L, 1)) status = lua_toboolean(L, 1) ? EXIT_SUCCESS : EXIT_FAILURE;
  else status = (int)luaL_optinteger(L, 1, EXIT_SUCCESS);
  if (!finish(L) && status == EXIT_SUCCESS) status = EXIT_FAILURE;
  interrupt_flag = NULL;
  lua_close(L);
  exit(final_status(status));
  return 0;
}

/* --trace FILE, checked before anything runs: an extension
 * poolsh.export.save knows, in a directory that exists and is writable.
 * Returns 1 when fine; else says why in one line. */
static int check_trace_path(lua_State *L, const char *path) {
  static const char code[] =
    "local path = ... local ext = path:match('%.([%w_]+)$') "
    "local formats = require('poolsh.export').formats "
    "for _, f in ipairs(formats) do if ext and ext:lower() == f then return nil end end "
    "return ('unsupported extension %s (supported: .%s)')"
    "  :format(ext and (\"'.\" .. ext .. \"'\") or 'none', table.concat(formats, ', .'))";
  char why[PATH_MAX + 64] = "";
  int status = luaL_loadbuffer(L, code, sizeof code - 1, "=(--trace)");
  if (status == LUA_OK) {
    lua_pushstring(L, path);
    status = docall(L, 1, 1);
  }
  if (status != LUA_OK) return report(L, status) == LUA_OK;
  if (lua_isstring(L, -1)) snprintf(why, sizeof why, "%s", lua_tostring(L, -1));
  lua_pop(L, 1);
  if (!why[0]) {
    char dir[PATH_MAX];
    struct stat st;
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
      snprintf(why, sizeof why, "no directory %s", dir);
    else if (access(dir, W_OK | X_OK) != 0)
      snprintf(why, sizeof why, "directory %s is not writable", dir);
    else if (stat(path, &st) == 0 && (S_ISDIR(st.st_mode) || access(path, W_OK) != 0))
      snprintf(why, sizeof why, "%s cannot be written", path);
  }
  if (!why[0]) {   /* the save's own temporary beside path can be made */
    ps_atomic probe;
    int e = ps_atomic_open(&probe, path);
    if (e) snprintf(why, sizeof why, "%s cannot be written: %s", path, ps_atomic_strerror(e));
    else ps_atomic_abort(&probe);
  }
  if (!why[0]) return 1;
  fprintf(stderr, "%s: --trace %s: %s\n", progname, path, why);
  fflush(stderr);
  return 0;
}

/* Whether poolsh.spawn started this process (poolsh.parent is set). */
static int spawned(lua_State *L) {
  int top = lua_gettop(L);
  lua_getglobal(L, "poolsh");
  int yes = lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, "parent") == LUA_TUSERDATA;
  lua_settop(L, top);
  return yes;
}

/* poolsh WORD where WORD is neither a command nor a file: says so in one
 * line, with the commands closest to it ("did you mean 'learn'?"), and
 * returns 0. A name with '/' or ending in .lua is a script's: lua.c's
 * "cannot open" stays (1: go on). */
static int check_word(lua_State *L, const char *word) {
  static const char code[] = "return require('poolsh.help').not_a_command(...)";
  int status = luaL_loadbuffer(L, code, sizeof code - 1, "=(poolsh)");
  if (status == LUA_OK) {
    lua_pushstring(L, word);
    status = docall(L, 1, 1);
  }
  if (report(L, status) != LUA_OK) return 0;
  int bad = lua_isstring(L, -1);
  if (bad) message(progname, lua_tostring(L, -1));
  lua_pop(L, 1);
  return !bad;
}

/* Says, once (docs/cli.md: once per user and reason, remembered in the
 * state directory), that poolsh runs on its simulated GPU because no GPU
 * can be used, in a learner's words; the CUDA error behind it is in
 * `poolsh help` and --version. Nothing when the sim was chosen. Folded at
 * the terminal's width on a terminal, one line in a pipe or a log. */
static void device_notice(lua_State *L) {
  dostring(L, isatty(2) ? "local n = require('poolsh.help').notice_once() "
                          "if n then io.stderr:write(require('poolsh.words').wrap(n), '\\n') end"
                        : "local n = require('poolsh.help').notice_once() "
                          "if n then io.stderr:write(n, '\\n') end",
           "=(poolsh)");
}

/* --version: poolsh's and Lua's versions, then the device in use and why
 * (the CUDA error when poolsh fell back to the sim). */
static int print_version(lua_State *L) {
  return dostring(L, "io.stdout:write(require('poolsh.words').wrap("
                     "require('poolsh.help').device_line()), '\\n')", "=(poolsh)") == LUA_OK;
}

/* --view's end of a run that is not the REPL's, whether it succeeded or
 * failed (docs/view.md): the page keeps its last picture until Enter,
 * Ctrl-C or the end of standard input. When standard input was the
 * script (it has ended), Enter is read from the terminal, if there is
 * one and poolsh is in its foreground (else it ends at once). Leaves the stack as it found it; does nothing without --view. */
static void view_linger(lua_State *L, const options *o, int stdin_was_script) {
  if (!o->view) return;
  if (stdin_was_script) {
    int t = open("/dev/tty", O_RDONLY | O_CLOEXEC);
    if (t >= 0 && tcgetpgrp(t) == getpgrp()) dup2(t, 0);   /* a background job: no (SIGTTIN) */
    if (t >= 0) close(t);
  }
  int top = lua_gettop(L);
  dostring(L, "require('poolsh.view').linger()", "=(--view)");
  lua_settop(L, top);
}

/* The protected main: everything that can raise runs here. Leaves true
 * on success. */

static int pmain(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  options *o = (options *)lua_touserdata(L, 3);
  int repl = o->interactive ||
             (!o->script && !o->stdin_script && !o->version && !o->has_e && !o->serve);
  luaL_checkversion(L);
  if (o->version || (repl && isatty(0)))
    fprintf(stdout, "%s (%s)\n", POOLSH_VERSION, LUA_COPYRIGHT);
  if (repl && isatty(0))
    fprintf(stdout, "help() shows what poolsh can do; Ctrl-D leaves.\n");
  if (o->no_env) {
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
  lua_register(L, "print", host_print);
  set_handler(SIGPIPE, on_sigpipe);
  safe_paths(L, !o->no_env);
  createargtable(L, argv, argc, o->script);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0);
  lua_warning(L, "@on", 0);   /* finalizers report problems as warnings */
  if (o->warnings) lua_warning(L, "@on", 0);
  lua_pushboolean(L, 0);
  if (o->version == 1 && !repl && !o->script && !o->stdin_script && !o->has_e) {
    lua_pushboolean(L, 1);
    return 1;
  }
  add_lua_dir(L, !o->no_env);
  lua_getglobal(L, "os");
  lua_pushcfunction(L, host_exit);
  lua_setfield(L, -2, "exit");
  lua_pop(L, 1);
  if (o->script && is_command(L, argv[o->script])) {
    o->command = o->script, o->script = 0;
    if (!command_args(L, argc, argv, o)) { lua_pushboolean(L, 0); return 1; }
    lua_setfield(L, LUA_REGISTRYINDEX, "poolsh.command_args");
  }
  if (o->trace && !check_trace_path(L, o->trace)) return 1;
  if (!load_poolsh(L, o)) return 1;
  poolsh_loaded = 1;
  if (o->version == 2 && !repl && !o->script && !o->stdin_script && !o->has_e) {
    lua_pushboolean(L, print_version(L));
    return 1;
  }
  if (o->script && !check_word(L, argv[o->script])) return 1;
  if (o->version == 2) print_version(L);
  else if (!o->command || strcmp(argv[o->command], "help") != 0) device_notice(L);
  trace_path = o->trace;
  set_handler(SIGTERM, on_end_signal);
  set_handler(SIGHUP, on_end_signal);
  if (o->trace) {             /* streams to a line format's file */
    int st = luaL_loadbuffer(L, "poolsh.trace.record_to(...)", 27, "=(poolsh)");
    if (st == LUA_OK) lua_pushstring(L, o->trace), st = docall(L, 1, 0);
    if (report(L, st) != LUA_OK) return 1;
  }
  if (o->view) {              /* --view[=PORT]: served from the start (docs/view.md) */
    static const char code[] = "return require('poolsh.view').from_cli(...)";
    int st = luaL_loadbuffer(L, code, sizeof code - 1, "=(--view)");
    if (st == LUA_OK) lua_pushstring(L, o->view), st = docall(L, 1, 1);
    if (report(L, st) != LUA_OK) return 1;
    if (!lua_toboolean(L, -1)) return 1;
    lua_pop(L, 1);
  }
  if (!o->no_env && handle_luainit(L) != LUA_OK) { view_linger(L, o, 0); return 1; }
  if (!runargs(L, argv, o->script ? o->script : argc)) { view_linger(L, o, 0); return 1; }
  if (o->script) add_script_dir(L, argv[o->script]);
  if (o->script && handle_script(L, argv[o->script]) != LUA_OK) { view_linger(L, o, 0); return 1; }
  if (o->serve || (repl && !o->interactive && !o->command && spawned(L))) {
    /* --serve SOCKET, or a child of poolsh.spawn() without a script */
    lua_getglobal(L, "poolsh");
    lua_getfield(L, -1, "serve");
    lua_remove(L, -2);
    if (o->serve) lua_pushstring(L, o->serve);
    if (report(L, docall(L, o->serve ? 1 : 0, 0)) != LUA_OK) return 1;
    lua_pushboolean(L, 1);
    return 1;
  }
  if (o->command) {
    lua_getfield(L, LUA_REGISTRYINDEX, "poolsh.command_args");
    if (run_command(L, argv[o->command], o) != LUA_OK) {
      view_linger(L, o, 0);
      lua_pushboolean(L, 0);
      return 1;
    }
    lua_settop(L, 0);
    if (o->status == -1) repl = 1, o->status = 0;
  }
  int from_stdin = o->stdin_script || (repl && !o->interactive && !isatty(0));
  if (from_stdin) {
    if (dochunk(L, luaL_loadfile(L, NULL)) != LUA_OK) { view_linger(L, o, 1); return 1; }
  } else if (repl) {
    doREPL(L, !o->no_env);
  }
  if (!(repl && isatty(0)))   /* --view after a script: the page stays till Enter */
    view_linger(L, o, from_stdin);
  lua_pushboolean(L, 1);
  return 1;
}

int main(int argc, char **argv) {
  if (argv[0] && argv[0][0]) progname = argv[0];
  options o;
  memset(&o, 0, sizeof o);
  if (collect(argc, argv, &o)) return EXIT_FAILURE;
  small_heap heap;
  warn_state warn = {0, 0};
  memset(&heap, 0, sizeof heap);
  lua_State *L = lua_newstate(l_alloc, &heap);
  if (L == NULL) {
    message(progname, "cannot create state: not enough memory");
    return EXIT_FAILURE;
  }
  lua_atpanic(L, panic);
  lua_setwarnf(L, warnf, &warn);
  globalL = L;
  lua_gc(L, LUA_GCSTOP);
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  lua_pushlightuserdata(L, &o);
  int status = lua_pcall(L, 3, 1, 0);
  int ok = lua_toboolean(L, -1);
  report(L, status);
  lua_settop(L, 0);
  if (!finish(L)) ok = 0;
  interrupt_flag = NULL;
  lua_close(L);   /* every finalizer runs before the device context goes */
  small_heap_release(&heap);
  int code = (ok && status == LUA_OK && o.command) ? o.status
           : (ok && status == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
  code = final_status(code);
  if (end_signal && end_signal != SIGPIPE) {   /* die of it, as the sender expects */
    signal(end_signal, SIG_DFL);
    raise(end_signal);
  }
  return code;
}
