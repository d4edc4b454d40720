// Probe: the facts poolsh's peer access and IPC
// pools rely on that probe_peer.cu and probe_ipc.cu did not measure. Each
// case runs in its own process (a fault poisons the CUDA context):
// probe_peer_ipc_rules CASE. Peer cases need two GPUs; ipc_* cases fork.
// Build: nvcc -O2 -arch=sm_90 -o probe_peer_ipc_rules scripts/calibrate/probe_peer_ipc_rules.cu
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>

#define SAY(...) (printf(__VA_ARGS__), fflush(stdout))
static const char *name(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : cudaGetErrorName(e); }
#define TRY(who, call) do { cudaError_t e_ = (call); SAY("  %s %-66s -> %s\n", who, #call, name(e_)); } while (0)

__global__ void fill(unsigned char *p, size_t n, unsigned char v) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = v;
}
__global__ void sum(const unsigned char *p, size_t n, unsigned long long *out) {
  unsigned long long s = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += p[i];
  atomicAdd(out, s);
}

static const size_t N = 8 << 20;

static cudaMemPool_t make_pool(int dev, int ipc, int host) {
  cudaMemPoolProps pr; memset(&pr, 0, sizeof pr);
  pr.allocType = cudaMemAllocationTypePinned;
  pr.handleTypes = ipc ? cudaMemHandleTypePosixFileDescriptor : cudaMemHandleTypeNone;
  pr.location.type = host ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  pr.location.id = host ? 0 : dev;
  cudaMemPool_t p = nullptr; cudaError_t e = cudaMemPoolCreate(&p, &pr);
  SAY("  pool (%s %d%s) -> %s\n", host ? "host" : "device", dev, ipc ? ", ipc" : "", name(e));
  return p;
}
static const char *flags(cudaMemAccessFlags f) {
  return f == cudaMemAccessFlagsProtNone ? "none" : f == cudaMemAccessFlagsProtRead ? "read" : "rw";
}
static void access_of(const char *what, cudaMemPool_t p, int dev) {
  cudaMemLocation loc = { cudaMemLocationTypeDevice, dev };
  cudaMemAccessFlags f = cudaMemAccessFlagsProtNone;
  cudaError_t e = cudaMemPoolGetAccess(&f, p, &loc);
  SAY("  access of device %d to %s -> %s (%s)\n", dev, what, flags(f), name(e));
}
static cudaError_t set_access(cudaMemPool_t p, int dev, cudaMemAccessFlags f) {
  cudaMemAccessDesc d; d.location.type = cudaMemLocationTypeDevice; d.location.id = dev; d.flags = f;
  return cudaMemPoolSetAccess(p, &d, 1);
}
static unsigned long long read_sum(int dev, const void *b, size_t n) {
  cudaSetDevice(dev);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  unsigned long long *out; cudaMalloc(&out, sizeof *out); cudaMemset(out, 0, sizeof *out);
  sum<<<64, 256, 0, s>>>((const unsigned char *)b, n, out);
  cudaError_t launch = cudaGetLastError(), sync = cudaStreamSynchronize(s);
  unsigned long long h = 0; cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost);
  SAY("  kernel read on device %d: launch %s, sync %s, sum %llu\n", dev, name(launch), name(sync), h);
  return h;
}
static unsigned long long attr(cudaMemPool_t p, cudaMemPoolAttr a) {
  unsigned long long v = 0; cudaMemPoolGetAttribute(p, a, &v); return v;
}

static int peer_case(const char *c) {
  int n = 0; cudaGetDeviceCount(&n);
  if (n < 2) { SAY("  needs two devices (%d)\n", n); return 0; }
  cudaSetDevice(0);
  cudaStream_t s0; cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking);
  cudaSetDevice(1);
  cudaStream_t s1; cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaSetDevice(0);
  if (!strcmp(c, "alloc_other")) {        // a pool on device 0, a stream of device 1
    cudaMemPool_t p = make_pool(0, 0, 0);
    void *b = nullptr;
    TRY("cur 0", cudaMallocFromPoolAsync(&b, N, p, s1));
    TRY("cur 0", cudaStreamSynchronize(s1));
    SAY("  reserved %llu used %llu\n", attr(p, cudaMemPoolAttrReservedMemCurrent), attr(p, cudaMemPoolAttrUsedMemCurrent));
    if (b) { fill<<<64, 256, 0, s0>>>((unsigned char *)b, N, 2); TRY("cur 0", cudaStreamSynchronize(s0)); read_sum(0, b, N); }
    cudaSetDevice(1);
    void *b2 = nullptr;
    TRY("cur 1", cudaMallocFromPoolAsync(&b2, N, p, s1));
    TRY("cur 1", cudaFreeAsync(b2, s1));
    TRY("cur 1", cudaStreamSynchronize(s1));
    cudaSetDevice(0);
    if (b) { TRY("cur 0", cudaFreeAsync(b, s1)); TRY("cur 0", cudaStreamSynchronize(s1)); }
    SAY("  after frees: reserved %llu used %llu\n", attr(p, cudaMemPoolAttrReservedMemCurrent), attr(p, cudaMemPoolAttrUsedMemCurrent));
    void *b3 = nullptr;   // reuse across devices' streams: freed on s1 (dev 1), allocated on s0
    TRY("cur 0", cudaMallocFromPoolAsync(&b3, N, p, s0));
    SAY("  b3 %s b\n", b3 == b ? "==" : "!=");
  }
  if (!strcmp(c, "events")) {
    cudaEvent_t e0; cudaEventCreateWithFlags(&e0, cudaEventDisableTiming);   // on device 0
    TRY("cur 0", cudaEventRecord(e0, s1));
    cudaSetDevice(1);
    TRY("cur 1", cudaEventRecord(e0, s1));
    TRY("cur 1", cudaEventRecord(e0, s0));
    cudaSetDevice(0);
    TRY("cur 0", cudaEventRecord(e0, s0));
    TRY("cur 0", cudaStreamWaitEvent(s1, e0, 0));
    TRY("cur 0", cudaStreamSynchronize(s1));
    TRY("cur 0", cudaEventSynchronize(e0));
  }
  if (!strcmp(c, "copies")) {
    cudaMemPool_t p = make_pool(0, 0, 0);
    unsigned char *b = nullptr; cudaMallocFromPoolAsync((void **)&b, N, p, s0);
    fill<<<64, 256, 0, s0>>>(b, N, 1); cudaStreamSynchronize(s0);
    cudaSetDevice(1); unsigned char *d1 = nullptr; cudaMalloc(&d1, N); cudaSetDevice(0);
    unsigned char *d0 = nullptr; cudaMalloc(&d0, N);
    unsigned char *h = nullptr; cudaMallocHost(&h, N);
    SAY("  no access set:\n");
    TRY("cur 0", cudaMemcpyAsync(d1, b, N, cudaMemcpyDefault, s1));
    TRY("cur 0", cudaStreamSynchronize(s1));
    TRY("cur 0", cudaMemcpyAsync(h, b, N, cudaMemcpyDefault, s1));
    TRY("cur 0", cudaStreamSynchronize(s1));
    TRY("cur 0", cudaMemcpyAsync(b, h, N, cudaMemcpyDefault, s1));
    TRY("cur 0", cudaStreamSynchronize(s1));
    TRY("cur 0", cudaMemcpyAsync(d1, b, N, cudaMemcpyDefault, s0));
    TRY("cur 0", cudaStreamSynchronize(s0));
    TRY("cur 0", cudaMemcpyAsync(d0, d1, N, cudaMemcpyDefault, s1));
    TRY("cur 0", cudaStreamSynchronize(s1));
    TRY("cur 0", cudaMemsetAsync(b, 3, N, s1));
    TRY("cur 0", cudaStreamSynchronize(s1));
    SAY("  device 1 given rw:\n");
    TRY("cur 0", set_access(p, 1, cudaMemAccessFlagsProtReadWrite));
    TRY("cur 0", cudaMemcpyAsync(d1, b, N, cudaMemcpyDefault, s1));
    TRY("cur 0", cudaStreamSynchronize(s1));
    TRY("cur 0", cudaMemcpyAsync(h, b, N, cudaMemcpyDefault, s1));
    TRY("cur 0", cudaStreamSynchronize(s1));
    SAY("  host got %d\n", h[N - 1]);
  }
  if (!strcmp(c, "malloc_none")) {          // device 1 reads cudaMalloc'd memory of device 0
    unsigned char *d0 = nullptr; cudaMalloc(&d0, N); cudaMemset(d0, 1, N); cudaDeviceSynchronize();
    read_sum(1, d0, N);
  }
  if (!strcmp(c, "malloc_peer")) {
    unsigned char *d0 = nullptr; cudaMalloc(&d0, N); cudaMemset(d0, 1, N); cudaDeviceSynchronize();
    cudaSetDevice(1);
    TRY("cur 1", cudaDeviceEnablePeerAccess(0, 0));
    TRY("cur 1", cudaDeviceEnablePeerAccess(0, 0));
    TRY("cur 1", cudaDeviceEnablePeerAccess(1, 0));
    TRY("cur 1", cudaDeviceEnablePeerAccess(7, 0));
    read_sum(1, d0, N);
    cudaSetDevice(1);
    TRY("cur 1", cudaDeviceDisablePeerAccess(0));
    TRY("cur 1", cudaDeviceDisablePeerAccess(0));
  }
  if (!strcmp(c, "pools")) {
    cudaMemPool_t d0; cudaDeviceGetDefaultMemPool(&d0, 0);
    TRY("cur 0", set_access(d0, 1, cudaMemAccessFlagsProtReadWrite));
    access_of("default pool 0", d0, 1);
    TRY("cur 0", set_access(d0, 1, cudaMemAccessFlagsProtNone));
    cudaMemPool_t h = make_pool(0, 0, 1);
    access_of("a host pool", h, 0); access_of("a host pool", h, 1);
    cudaMemPool_t p1 = make_pool(1, 0, 0);   // created while device 0 is current
    access_of("a pool of device 1", p1, 1); access_of("a pool of device 1", p1, 0);
    access_of("a pool of device 1", p1, 9);
    void *b = nullptr; TRY("cur 0", cudaMallocFromPoolAsync(&b, N, p1, s1));
    TRY("cur 0", cudaStreamSynchronize(s1));
  }
  return 0;
}

struct msg { cudaMemPoolPtrExportData data; cudaIpcEventHandle_t ready; int ok; };
static void send_fd(int sock, int fd, const msg *m) {
  struct iovec io = { (void *)m, sizeof *m };
  char cbuf[CMSG_SPACE(sizeof(int))]; memset(cbuf, 0, sizeof cbuf);
  struct msghdr h; memset(&h, 0, sizeof h);
  h.msg_iov = &io; h.msg_iovlen = 1; h.msg_control = cbuf; h.msg_controllen = sizeof cbuf;
  struct cmsghdr *c = CMSG_FIRSTHDR(&h);
  c->cmsg_level = SOL_SOCKET; c->cmsg_type = SCM_RIGHTS; c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  sendmsg(sock, &h, 0);
}
static int recv_fd(int sock, msg *m) {
  struct iovec io = { m, sizeof *m };
  char cbuf[CMSG_SPACE(sizeof(int))];
  struct msghdr h; memset(&h, 0, sizeof h);
  h.msg_iov = &io; h.msg_iovlen = 1; h.msg_control = cbuf; h.msg_controllen = sizeof cbuf;
  if (recvmsg(sock, &h, 0) <= 0) return -1;
  int fd; memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&h)), sizeof fd);
  return fd;
}
static void step(int sock) { int x = 1; write(sock, &x, sizeof x); }
static void await(int sock) { int x = 0; read(sock, &x, sizeof x); }

// The importer of each ipc case; sock orders the two processes.
static int importer(const char *c, int sock) {
  msg m; int fd = recv_fd(sock, &m);
  cudaSetDevice(0);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaMemPool_t ip = nullptr;
  TRY("importer", cudaMemPoolImportFromShareableHandle(&ip, (void *)(uintptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0));
  cudaEvent_t ready; TRY("importer", cudaIpcOpenEventHandle(&ready, m.ready));
  void *p = nullptr;
  if (!strcmp(c, "ipc_exporter_first")) {
    TRY("importer", cudaMemPoolImportPointer(&p, ip, &m.data));
    TRY("importer", cudaStreamWaitEvent(s, ready, 0));
    read_sum(0, p, N);
    step(sock); await(sock);                       // the exporter frees and syncs
    read_sum(0, p, N);
    TRY("importer", cudaFreeAsync(p, s));
    TRY("importer", cudaStreamSynchronize(s));
    step(sock);
  }
  if (!strcmp(c, "ipc_after_free")) {
    TRY("importer", cudaMemPoolImportPointer(&p, ip, &m.data));
    void *p2 = nullptr;
    TRY("importer", cudaMemPoolImportPointer(&p2, ip, &m.data));
    SAY("  importer second import %s first\n", p2 == p ? "==" : "!=");
    TRY("importer", cudaStreamWaitEvent(s, ready, 0));
    TRY("importer", cudaFreeAsync(p, s));
    TRY("importer", cudaStreamSynchronize(s));
    if (p2 && p2 != p) { TRY("importer", cudaFreeAsync(p2, s)); TRY("importer", cudaStreamSynchronize(s)); }
    TRY("importer", cudaEventRecord(ready, s));
    cudaMemLocation loc = { cudaMemLocationTypeDevice, 0 };
    cudaMemAccessDesc d; d.location = loc; d.flags = cudaMemAccessFlagsProtReadWrite;
    TRY("importer", cudaMemPoolSetAccess(ip, &d, 1));
    SAY("  importer reads after its own free:\n");
    read_sum(0, p, N);
    step(sock);
  }
  if (!strcmp(c, "ipc_import_freed")) {
    await(sock);                                   // the exporter has freed
    TRY("importer", cudaMemPoolImportPointer(&p, ip, &m.data));
    step(sock);
  }
  if (!strcmp(c, "ipc_destroy")) {
    TRY("importer", cudaMemPoolImportPointer(&p, ip, &m.data));
    TRY("importer", cudaStreamWaitEvent(s, ready, 0));
    step(sock); await(sock);                       // the exporter destroyed its pool
    read_sum(0, p, N);
    TRY("importer", cudaFreeAsync(p, s));
    TRY("importer", cudaStreamSynchronize(s));
    TRY("importer", cudaMemPoolDestroy(ip));
    step(sock);
  }
  return 0;
}

static int ipc_case(const char *c) {
  int sv[2]; socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  pid_t pid = fork();
  if (pid == 0) { close(sv[0]); return importer(c, sv[1]); }
  close(sv[1]);
  int sock = sv[0];
  cudaSetDevice(0);
  cudaMemPool_t pool = make_pool(0, 1, 0);
  int fd = -1;
  TRY("exporter", cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  void *p = nullptr; TRY("exporter", cudaMallocFromPoolAsync(&p, N, pool, s));
  fill<<<64, 256, 0, s>>>((unsigned char *)p, N, 7);
  cudaEvent_t ready; cudaEventCreateWithFlags(&ready, cudaEventInterprocess | cudaEventDisableTiming);
  cudaEventRecord(ready, s);
  msg m; memset(&m, 0, sizeof m);
  TRY("exporter", cudaMemPoolExportPointer(&m.data, p));
  cudaIpcGetEventHandle(&m.ready, ready);
  send_fd(sock, fd, &m);
  if (!strcmp(c, "ipc_exporter_first")) {
    await(sock);
    TRY("exporter", cudaFreeAsync(p, s));
    TRY("exporter", cudaStreamSynchronize(s));
    SAY("  exporter reserved %llu used %llu after its free\n", attr(pool, cudaMemPoolAttrReservedMemCurrent), attr(pool, cudaMemPoolAttrUsedMemCurrent));
    void *q = nullptr; TRY("exporter", cudaMallocFromPoolAsync(&q, N, pool, s));
    SAY("  exporter's next block %s the exported one\n", q == p ? "==" : "!=");
    fill<<<64, 256, 0, s>>>((unsigned char *)q, N, 9); cudaStreamSynchronize(s);
    step(sock); await(sock);
    SAY("  exporter reserved %llu used %llu after the importer's free\n", attr(pool, cudaMemPoolAttrReservedMemCurrent), attr(pool, cudaMemPoolAttrUsedMemCurrent));
  }
  if (!strcmp(c, "ipc_after_free")) {
    await(sock);
    TRY("exporter", cudaFreeAsync(p, s));
    TRY("exporter", cudaStreamSynchronize(s));
  }
  if (!strcmp(c, "ipc_import_freed")) {
    TRY("exporter", cudaFreeAsync(p, s));
    TRY("exporter", cudaStreamSynchronize(s));
    step(sock); await(sock);
  }
  if (!strcmp(c, "ipc_destroy")) {
    await(sock);
    TRY("exporter", cudaMemPoolDestroy(pool));
    step(sock); await(sock);
    TRY("exporter", cudaFreeAsync(p, s));
    TRY("exporter", cudaStreamSynchronize(s));
  }
  int st = 0; waitpid(pid, &st, 0);
  SAY("  importer exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}

static int misc_case() {
  cudaSetDevice(0);
  cudaMemPool_t p = make_pool(0, 0, 0);
  int fd = -1;
  TRY("", cudaMemPoolExportToShareableHandle(&fd, p, cudaMemHandleTypePosixFileDescriptor, 0));
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  void *b = nullptr; cudaMallocFromPoolAsync(&b, N, p, s);
  cudaMemPoolPtrExportData d; TRY("", cudaMemPoolExportPointer(&d, b));
  cudaEvent_t e; 
  TRY("", cudaEventCreateWithFlags(&e, cudaEventInterprocess));
  cudaEvent_t plain; cudaEventCreateWithFlags(&plain, cudaEventDisableTiming);
  cudaIpcEventHandle_t h; TRY("", cudaIpcGetEventHandle(&h, plain));
  cudaMemPool_t ipcp = make_pool(0, 1, 0);
  void *c = nullptr; cudaMallocFromPoolAsync(&c, N, ipcp, s);
  cudaFreeAsync(c, s); cudaStreamSynchronize(s);
  TRY("", cudaMemPoolExportPointer(&d, c));
  cudaMemPool_t hp = make_pool(0, 1, 1);
  if (hp) TRY("", cudaMemPoolExportToShareableHandle(&fd, hp, cudaMemHandleTypePosixFileDescriptor, 0));
  return 0;
}

int main(int argc, char **argv) {
  const char *c = argc > 1 ? argv[1] : "misc";
  SAY("case %s\n", c);
  if (!strncmp(c, "ipc_", 4)) return ipc_case(c);
  if (!strcmp(c, "misc")) return misc_case();
  return peer_case(c);
}
