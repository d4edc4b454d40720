/*
 * fuzz_vmm.c: the operation fuzzer of the sim's VMM model (src/sim/sim_vmm.c
 * behind backend.h). An input is a program of 4-byte steps (op, a, b, c)
 * over four reservation slots and four handle slots: reserve, create, map,
 * unmap, set_access, release, free, and fills, writes, reads and copies
 * through the mapped addresses. Each step must return PS_OK or one of the
 * codes the contract names; a map succeeds only of a whole handle from
 * offset 0 (as on the H200); a shadow model of the handles checks the
 * device's free memory after every step (a handle counts until released
 * and unmapped), and bytes written through one mapping must read back
 * through another mapping of the same handle. The backend is closed at the
 * end (the sanitizer build finds what it leaks). Each input: at most 2 s.
 * Usage: fuzz_vmm [--seed S] [--seconds T | --inputs N] [--tmpdir D] [--replay FILE]
 */
#include "backend.h"
#include "fuzzlib.h"

#define INPUT_MAX (1u << 14)
#define G ((uint64_t)2 << 20)
#define SLOTS 4

typedef struct { ps_vmm_handle *h; uint64_t size; int loc, live, maps; } hslot;
typedef struct { uint64_t off, size, hoff; int hs; } mslot;
typedef struct { ps_addr addr; uint64_t size; int live; mslot m[64]; int nm; } rslot;

static const ps_backend *be = &ps_backend_sim;

/* Whether st is one of the codes a VMM step may give. */
static int allowed(int st) {
  return st == PS_OK || st == PS_ERR_INVALID_VALUE || st == PS_ERR_NOT_SUPPORTED ||
         st == PS_ERR_MEMORY_ALLOCATION || st == PS_ERR_ILLEGAL_ADDRESS ||
         st == PS_ERR_INVALID_DEVICE;
}

/* The device bytes the shadow model holds: handles not gone. */
static uint64_t held(const hslot *hs) {
  uint64_t n = 0;
  for (int i = 0; i < SLOTS; i++)
    if (hs[i].h && hs[i].loc == PS_LOCATION_DEVICE && (hs[i].live || hs[i].maps)) n += hs[i].size;
  return n;
}

static const char *run(const unsigned char *b, size_t n) {
  void *ctx;
  ps_config cfg = { .sim_memory = 64 * G };
  if (be->open(&cfg, &ctx) != PS_OK) return "the sim did not open";
  hslot hs[SLOTS] = {{0}};
  rslot *rs = calloc(SLOTS, sizeof *rs);
  const char *why = NULL;
  ps_device_info info;
  be->device_info(ctx, 0, &info);
  uint64_t total = info.total;
  for (size_t i = 0; i + 4 <= n && !why; i += 4) {
    int op = b[i] % 10, a = b[i + 1], x = b[i + 2], c = b[i + 3], st = PS_OK;
    rslot *r = &rs[a % SLOTS];
    hslot *h = &hs[c % SLOTS];
    uint64_t off = (uint64_t)(x % 16) * G + ((c & 0x80) ? 4096 : 0);
    uint64_t size = (uint64_t)(x / 16 % 4 + 1) * G;
    if (r->live && off >= r->size) off %= r->size;   /* within its range: the model is per range */
    switch (op) {
      case 0:
        if (r->live) break;
        st = be->vmm_reserve(ctx, (uint64_t)(x % 16 + 1) * G + ((c & 0x40) ? 512 : 0),
                             (c & 1) ? G << (c >> 1 & 3) : 0, &r->addr);
        if (st == PS_OK) r->live = 1, r->size = (uint64_t)(x % 16 + 1) * G, r->nm = 0;
        break;
      case 1: {
        if (h->h) break;
        int loc = (a & 3) == 0 ? PS_LOCATION_HOST : PS_LOCATION_DEVICE;
        uint64_t s = (uint64_t)(x % 8 + 1) * G * ((a & 0x80) ? 64 : 1);
        st = be->vmm_create(ctx, loc, 0, s, &h->h);
        if (st == PS_OK) h->size = s, h->loc = loc, h->live = 1, h->maps = 0;
        else h->h = NULL;
        break;
      }
      case 2: {
        if (!r->live || !h->h || !h->live || r->nm >= 64) break;
        uint64_t hoff = (uint64_t)(a / SLOTS % 3) * G + ((a & 0x80) ? 65536 : 0);
        if (c & 0x40) hoff = 0, size = h->size;        /* the whole handle, as the GPU demands */
        st = be->vmm_map(ctx, r->addr + off, size, hoff, h->h);
        if (st == PS_OK && (hoff != 0 || size != h->size))
          why = fz_why("mapping %llu bytes of a %llu-byte handle from offset %llu succeeded",
                       (unsigned long long)size, (unsigned long long)h->size, (unsigned long long)hoff);
        else if (st == PS_OK) {
          r->m[r->nm++] = (mslot){ off, size, hoff, (int)(h - hs) };
          h->maps++;
        }
        break;
      }
      case 3:
        if (!r->live) break;
        st = be->vmm_unmap(ctx, r->addr + off, size);
        if (st == PS_OK)
          for (int k = 0; k < r->nm; k++)
            if (r->m[k].off >= off && r->m[k].off - off < size) {
              hslot *o = &hs[r->m[k].hs];
              if (--o->maps == 0 && !o->live) o->h = NULL;
              r->m[k--] = r->m[--r->nm];
            }
        break;
      case 4: {
        if (!r->live) break;
        static const ps_access acc[] = { PS_ACCESS_NONE, PS_ACCESS_READ, PS_ACCESS_RW, 2 };
        st = be->vmm_set_access(ctx, r->addr + off, size, (a & 0x40) ? 3 : 0, acc[a % 4]);
        break;
      }
      case 5:
        if (!h->h || !h->live) break;
        st = be->vmm_release(ctx, h->h);
        if (st != PS_OK) { why = fz_why("releasing a live handle gave %d", st); break; }
        h->live = 0;
        if (h->maps == 0) h->h = NULL;
        break;
      case 6:
        if (!r->live) break;
        st = be->vmm_free(ctx, r->addr, r->size);
        if ((st == PS_OK) != (r->nm == 0))
          why = fz_why("freeing a range with %d mappings gave %d", r->nm, st);
        if (st == PS_OK) r->live = 0;
        break;
      case 7:
        if (!r->live) break;
        st = be->fill(ctx, r->addr + off, size - (size_t)(c & 7), c, NULL);
        break;
      case 8: {                          /* write through one mapping, read through another */
        if (!r->live || r->nm == 0) break;
        mslot *m = &r->m[a % r->nm];
        unsigned char w[64], got[64];
        for (int k = 0; k < 64; k++) w[k] = (unsigned char)(x + k);
        st = be->write(ctx, PS_KIND_VMM, r->addr + m->off + 100, w, 64, NULL);
        if (st != PS_OK) break;
        st = be->read(ctx, PS_KIND_VMM, r->addr + m->off + 100, got, 64, NULL);
        if (st == PS_OK && memcmp(w, got, 64) != 0) why = "bytes written did not read back";
        uint64_t at = m->hoff + 100;     /* the handle's byte written first */
        for (int q = 0; q < SLOTS && !why && st == PS_OK; q++)
          for (int k = 0; k < rs[q].nm && !why; k++) {
            mslot *o = &rs[q].m[k];
            if (o->hs != m->hs || at < o->hoff || at + 64 > o->hoff + o->size) continue;
            int s2 = be->read(ctx, PS_KIND_VMM, rs[q].addr + o->off + (at - o->hoff), got, 64, NULL);
            if (s2 == PS_OK && memcmp(w, got, 64) != 0)
              why = "another mapping of the handle shows other bytes";
          }
        break;
      }
      default: {
        rslot *r2 = &rs[c % SLOTS];
        if (!r->live || !r2->live) break;
        st = be->copy(ctx, r->addr + off, r2->addr + (uint64_t)(a % 8) * G, 4096 + x, NULL);
        break;
      }
    }
    if (!why && !allowed(st)) why = fz_why("step %zu (op %d) gave %d", i / 4, op, st);
    if (!why) {
      be->device_sync(ctx);
      be->device_info(ctx, 0, &info);
      uint64_t want = total - held(hs);
      if (info.free != want)
        why = fz_why("step %zu (op %d): device free %llu, the model says %llu", i / 4, op,
                     (unsigned long long)info.free, (unsigned long long)want);
    }
  }
  be->close(ctx);
  free(rs);
  return why;
}

int main(int argc, char **argv) {
  static const unsigned char p0[] = { 0, 0, 15, 0,  1, 1, 1, 0,  2, 0, 0, 0x40,  4, 0, 0, 0,
                                      7, 0, 0, 9,  8, 0, 0, 0,  3, 0, 0, 0,  5, 0, 0, 0,
                                      6, 0, 0, 0 };
  static const unsigned char p1[] = { 0, 1, 7, 0,  1, 1, 2, 1,  2, 1, 0, 0x41,  2, 1, 4, 0x41,
                                      4, 2, 0, 0,  4, 2, 4, 0,  8, 1, 0, 0,  9, 1, 0, 1,
                                      5, 0, 0, 1,  3, 1, 16, 0, 3, 1, 0, 0,  6, 1, 0, 0 };
  fz_input corpus[] = {
    { (unsigned char *)p0, sizeof p0 }, { (unsigned char *)p1, sizeof p1 },
  };
  return fz_run("vmm", argc, argv, corpus, sizeof corpus / sizeof *corpus, run, 2.0, INPUT_MAX);
}
