/*
 * fuzz_view.c: the input fuzzer of the view server's request reader
 * (ps_vserve_route in vserve.c, what `poolsh --view` makes of the header
 * a client sends). Each input is a header, copied into a buffer of its
 * exact size (so a read past it is the sanitizer's to see). It must be
 * answered with a known code; a file or the snapshot only when the
 * request line names the token and the Host this server's.
 * Usage: fuzz_view [--seed S] [--seconds T | --inputs N] [--tmpdir D] [--replay FILE]
 */
#define _GNU_SOURCE
#include "fuzzlib.h"
#include "vserve.h"

#define TOKEN "0123456789abcdef0123456789abcdef"
#define PORT 8123
#define INPUT_MAX (PS_VSERVE_HEADER_MAX + 64)

static const char *const CORPUS[] = {
  "GET /" TOKEN "/ HTTP/1.1\r\nHost: 127.0.0.1:8123\r\nUser-Agent: x\r\n\r\n",
  "GET /" TOKEN "/picture.js HTTP/1.1\r\nHost: localhost:8123\r\nAccept: */*\r\n\r\n",
  "GET /" TOKEN "/picture.css HTTP/1.0\r\nhost:127.0.0.1:8123\r\n\r\n",
  "GET /" TOKEN "/state.json?v=12 HTTP/1.1\r\nHost: 127.0.0.1:8123\r\nReferer: x\r\n\r\n",
  "GET /" TOKEN "/state.json HTTP/1.1\r\nConnection: keep-alive\r\nHost:  127.0.0.1:8123 \r\n\r\n",
};

static const char *decode(const unsigned char *b, size_t n) {
  char *req = malloc(n ? n : 1);
  if (!req) return "malloc";
  memcpy(req, b, n);
  int what = -2;
  long long since = -2;
  int r = ps_vserve_route(req, n, TOKEN, PORT, &what, &since);
  const char *why = NULL;
  if (r < PS_VROUTE_FILE || r > PS_VROUTE_METHOD) why = fz_why("unknown route %d", r);
  else if (r == PS_VROUTE_FILE && (what < 0 || what >= PS_VSERVE_NFILES))
    why = fz_why("file %d out of range", what);
  else if (r == PS_VROUTE_STATE && since < -1) why = fz_why("since %lld", since);
  else if ((r == PS_VROUTE_FILE || r == PS_VROUTE_STATE) &&
           (n < 5 + PS_VSERVE_TOKEN_HEX || memcmp(req, "GET /" TOKEN "/", 5 + PS_VSERVE_TOKEN_HEX + 1) != 0))
    why = "served a request whose line does not name the token";
  else if ((r == PS_VROUTE_FILE || r == PS_VROUTE_STATE) &&
           !memmem(req, n, "127.0.0.1:8123", 14) && !memmem(req, n, "localhost:8123", 14) &&
           !memmem(req, n, "LOCALHOST:8123", 14) && !memmem(req, n, ":8123", 5))
    why = "served a request without this server's Host";
  if (!why && r != PS_VROUTE_FILE && r != PS_VROUTE_STATE) fz_refused();
  free(req);
  return why;
}

int main(int argc, char **argv) {
  size_t n = sizeof CORPUS / sizeof *CORPUS;
  fz_input corpus[sizeof CORPUS / sizeof *CORPUS];
  for (size_t i = 0; i < n; i++) corpus[i] = (fz_input){ (unsigned char *)CORPUS[i], strlen(CORPUS[i]) };
  return fz_run("view", argc, argv, corpus, n, decode, 2.0, INPUT_MAX);
}
