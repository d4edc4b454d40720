// Probe: IPC memory pools between two processes on one GPU (what
// poolsh's sim must reproduce). The parent exports a pool and a block; a
// forked child imports them. probe_ipc [noaccess]
// Build: nvcc -O2 -arch=sm_90 -o probe_ipc scripts/calibrate/probe_ipc.cu
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>

#define SAY(...) (printf(__VA_ARGS__), fflush(stdout))
static const char *name(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : cudaGetErrorName(e); }
#define TRY(who, call) do { cudaError_t e_ = (call); SAY("%s %-62s -> %s\n", who, #call, name(e_)); } while (0)

struct msg { cudaMemPoolPtrExportData data; cudaIpcEventHandle_t ready; int ok; };

__global__ void fill(unsigned char *p, size_t n, unsigned char v) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = v;
}
__global__ void sum(const unsigned char *p, size_t n, unsigned long long *out) {
  unsigned long long s = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += p[i];
  atomicAdd(out, s);
}

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
static unsigned long long attr(cudaMemPool_t p, cudaMemPoolAttr a) {
  unsigned long long v = 0; cudaMemPoolGetAttribute(p, a, &v); return v;
}

static const size_t N = 8 << 20;

static int importer(int sock, int noaccess) {
  msg m; int fd = recv_fd(sock, &m);
  cudaSetDevice(0);
  cudaMemPool_t ip;
  TRY("importer", cudaMemPoolImportFromShareableHandle(&ip, (void *)(uintptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0));
  cudaMemLocation loc = { cudaMemLocationTypeDevice, 0 };
  cudaMemAccessFlags f = cudaMemAccessFlagsProtNone;
  TRY("importer", cudaMemPoolGetAccess(&f, ip, &loc));
  SAY("importer access of device 0 -> %d (0 none, 1 read, 3 rw)\n", (int)f);
  void *p = nullptr;
  TRY("importer", cudaMemPoolImportPointer(&p, ip, &m.data));
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t ready; TRY("importer", cudaIpcOpenEventHandle(&ready, m.ready));
  TRY("importer", cudaStreamWaitEvent(s, ready, 0));
  if (!noaccess) {
    cudaMemAccessDesc d; d.location = loc; d.flags = cudaMemAccessFlagsProtReadWrite;
    TRY("importer", cudaMemPoolSetAccess(ip, &d, 1));
  }
  unsigned long long *out; cudaMalloc(&out, sizeof *out); cudaMemset(out, 0, sizeof *out);
  sum<<<64, 256, 0, s>>>((const unsigned char *)p, N, out);
  TRY("importer", cudaStreamSynchronize(s));
  unsigned long long h = 0; cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost);
  SAY("importer sum %llu (expected %llu)\n", h, 7ull * N);
  void *q = nullptr;
  TRY("importer", cudaMallocFromPoolAsync(&q, 4096, ip, s));
  SAY("importer pool reserved %llu used %llu\n", attr(ip, cudaMemPoolAttrReservedMemCurrent), attr(ip, cudaMemPoolAttrUsedMemCurrent));
  TRY("importer", cudaMemPoolTrimTo(ip, 0));
  unsigned long long zero = 0;
  TRY("importer", cudaMemPoolSetAttribute(ip, cudaMemPoolAttrReleaseThreshold, &zero));
  TRY("importer", cudaFreeAsync(p, s));
  TRY("importer", cudaStreamSynchronize(s));
  SAY("importer after its free: reserved %llu used %llu\n", attr(ip, cudaMemPoolAttrReservedMemCurrent), attr(ip, cudaMemPoolAttrUsedMemCurrent));
  int done = 1; write(sock, &done, sizeof done);
  return 0;
}

int main(int argc, char **argv) {
  int noaccess = argc > 1 && !strcmp(argv[1], "noaccess");
  int sv[2]; socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  pid_t pid = fork();
  if (pid == 0) { close(sv[0]); return importer(sv[1], noaccess); }
  close(sv[1]);
  cudaSetDevice(0);
  cudaMemPoolProps pr; memset(&pr, 0, sizeof pr);
  pr.allocType = cudaMemAllocationTypePinned; pr.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  pr.location.type = cudaMemLocationTypeDevice; pr.location.id = 0;
  cudaMemPool_t pool; TRY("exporter", cudaMemPoolCreate(&pool, &pr));
  unsigned long long zero = 0;
  TRY("exporter", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &zero));
  int fd = -1;
  TRY("exporter", cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  void *p = nullptr; TRY("exporter", cudaMallocFromPoolAsync(&p, N, pool, s));
  fill<<<64, 256, 0, s>>>((unsigned char *)p, N, 7);
  cudaEvent_t ready; TRY("exporter", cudaEventCreateWithFlags(&ready, cudaEventInterprocess | cudaEventDisableTiming));
  TRY("exporter", cudaEventRecord(ready, s));
  msg m; memset(&m, 0, sizeof m);
  TRY("exporter", cudaMemPoolExportPointer(&m.data, p));
  TRY("exporter", cudaIpcGetEventHandle(&m.ready, ready));
  send_fd(sv[0], fd, &m);
  int done = 0; read(sv[0], &done, sizeof done);
  SAY("exporter pool reserved %llu used %llu (the importer has freed)\n", attr(pool, cudaMemPoolAttrReservedMemCurrent), attr(pool, cudaMemPoolAttrUsedMemCurrent));
  TRY("exporter", cudaFreeAsync(p, s));
  TRY("exporter", cudaStreamSynchronize(s));
  SAY("exporter after its free and a sync at threshold 0: reserved %llu used %llu\n", attr(pool, cudaMemPoolAttrReservedMemCurrent), attr(pool, cudaMemPoolAttrUsedMemCurrent));
  TRY("exporter", cudaMemPoolTrimTo(pool, 0));
  SAY("exporter after trim(0): reserved %llu\n", attr(pool, cudaMemPoolAttrReservedMemCurrent));
  int st = 0; waitpid(pid, &st, 0);
  SAY("importer exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}
