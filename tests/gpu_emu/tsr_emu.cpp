/* SPDX-License-Identifier: BSD-3-Clause */
// Host emulation of the CUDA subset src/gpu uses, for tests/gpu_emu/run.sh (see there).
// The fibers switch with _setjmp/_longjmp between stacks (below); glibc's fortified longjmp
// rejects a jump to another stack's frame, so this file is not fortified.
#undef _FORTIFY_SOURCE
#include "tsr_emu.h"
#include <chrono>
#include <csetjmp>
#include <mutex>
#include <unordered_map>
#include <ucontext.h>

thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
int warpSize = 32;
int tsr_emu_sms = 2;

/* The threads of a block are fibers run round-robin on the calling thread: each runs until it
   waits at __syncthreads or at a warp-level exchange, then the scheduler releases a warp whose
   lanes all wait, or the block when every thread waits. Deterministic and cheap; a barrier
   that not every thread reaches is reported as a deadlock.
   A fiber is made once (ucontext: its own 256 KiB stack) and kept for every later block and
   launch: it runs the body of the current block, marks itself done and waits to be resumed for
   the next one. Switches are _setjmp/_longjmp, which save and restore registers only:
   swapcontext also sets the signal mask, a system call per switch, and with a context made
   per thread per block those were 80 % of the emulator's time (test_reduce: 110 s a run). */
enum { RUNNABLE, AT_BLOCK_BARRIER, AT_WARP_BARRIER, DONE };
struct fiber {
  jmp_buf env;
  int state;
  std::vector<char> stack;
};
static std::vector<fiber> fibers;
static jmp_buf scheduler, boot;
static int cur;
static std::function<void()> *cur_body;
static std::vector<uint64_t> slots;

/* Saves the running fiber and resumes the scheduler. */
static void to_scheduler() {
  if (_setjmp(fibers[cur].env) == 0) _longjmp(scheduler, 1);
}

static void fiber_main() {
  const int me = cur;
  /* Made: back to make_fibers until the scheduler first resumes this fiber. */
  if (_setjmp(fibers[me].env) == 0) _longjmp(boot, 1);
  for (;;) {
    (*cur_body)();
    fibers[cur].state = DONE;
    to_scheduler();
  }
}

/* Makes fibers up to n (each once per process). */
static void make_fibers(unsigned n) {
  if (fibers.size() >= n) return;
  fibers.reserve(1024); /* a fiber's jmp_buf must not move: no reallocation after the first */
  while (fibers.size() < n) {
    fibers.emplace_back();
    fiber &f = fibers.back();
    f.state = DONE;
    f.stack.resize(256 << 10);
    ucontext_t uc;
    getcontext(&uc);
    uc.uc_stack.ss_sp = f.stack.data();
    uc.uc_stack.ss_size = f.stack.size();
    uc.uc_link = nullptr; /* never returns */
    makecontext(&uc, fiber_main, 0);
    cur = (int)fibers.size() - 1;
    if (_setjmp(boot) == 0) setcontext(&uc);
  }
}

static void wait_as(int state) {
  fibers[cur].state = state;
  to_scheduler();
}

void __syncthreads() {
  wait_as(AT_BLOCK_BARRIER);
}

static uint64_t shfl_bits(uint64_t v, unsigned delta, int width) {
  int lane = cur % warpSize, w = cur / warpSize;
  if (width <= 0 || width > warpSize || (width & (width - 1))) {
    fprintf(stderr, "tsr_emu: bad shuffle width %d\n", width);
    abort();
  }
  slots[cur] = v;
  wait_as(AT_WARP_BARRIER);
  uint64_t r = v;
  if ((lane % width) + (int)delta < width) r = slots[w * warpSize + lane + (int)delta];
  wait_as(AT_WARP_BARRIER);
  return r;
}
double tsr_emu_shfl_d(double v, unsigned delta, int width) {
  uint64_t b;
  memcpy(&b, &v, 8);
  b = shfl_bits(b, delta, width);
  memcpy(&v, &b, 8);
  return v;
}
long long tsr_emu_shfl_ll(long long v, unsigned delta, int width) {
  return (long long)shfl_bits((uint64_t)v, delta, width);
}

static void run_block(unsigned nt) {
  for (;;) {
    for (unsigned t = 0; t < nt; t++) {
      if (fibers[t].state != RUNNABLE) continue;
      cur = (int)t;
      threadIdx =
          dim3(t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y));
      if (_setjmp(scheduler) == 0) _longjmp(fibers[t].env, 1);
    }
    unsigned done = 0, at_block = 0;
    bool released = false;
    for (unsigned t = 0; t < nt; t++) {
      done += fibers[t].state == DONE;
      at_block += fibers[t].state == AT_BLOCK_BARRIER;
    }
    if (done == nt) return;
    for (unsigned w = 0; w < nt / (unsigned)warpSize; w++) {
      bool all = true;
      for (int l = 0; l < warpSize; l++)
        all = all && fibers[w * warpSize + l].state == AT_WARP_BARRIER;
      if (all) {
        for (int l = 0; l < warpSize; l++)
          fibers[w * warpSize + l].state = RUNNABLE;
        released = true;
      }
    }
    if (!released && at_block == nt) {
      for (unsigned t = 0; t < nt; t++)
        fibers[t].state = RUNNABLE;
      released = true;
    }
    if (!released) {
      fprintf(stderr, "tsr_emu: deadlock in block (%u,%u): %u done, %u at __syncthreads of %u\n",
              blockIdx.x, blockIdx.y, done, at_block, nt);
      abort();
    }
  }
}

/* Counts of kernel launches, copies (cudaMemcpyAsync, cudaMemcpy2DAsync) and host waits
   (stream and event synchronizations) since the start, for tests that assert what one backend
   call does (tests/gpu_emu/test_emu_complex.c reads them through tsr_emu_counts). */
static size_t count_launches, count_copies, count_syncs, count_pinned;
extern "C" void tsr_emu_counts(size_t out[3]) {
  out[0] = count_launches;
  out[1] = count_copies;
  out[2] = count_syncs;
}
/* The same and the pinned host allocations (cudaMallocHost), for the distributed tests
   (tests/test_dist_pipeline.c: no pinned allocation in a call after the first). */
extern "C" void tsr_emu_counts_ex(size_t out[4]) {
  tsr_emu_counts(out);
  out[3] = count_pinned;
}

void tsr_emu_launch(dim3 grid, dim3 block, std::function<void()> body) {
  static int init = 0;
  count_launches++;
  if (!init) {
    const char *w = getenv("TSR_EMU_WARP");
    if (w) warpSize = atoi(w);
    init = 1;
  }
  unsigned nt = block.x * block.y * block.z;
  if (nt == 0 || nt > 1024 || nt % (unsigned)warpSize) {
    fprintf(stderr, "tsr_emu: bad block of %u threads\n", nt);
    abort();
  }
  if (grid.x == 0 || grid.y == 0 || grid.y > 65535 || grid.z == 0) {
    fprintf(stderr, "tsr_emu: bad grid %u x %u\n", grid.x, grid.y);
    abort();
  }
  blockDim = block;
  gridDim = grid;
  cur_body = &body;
  make_fibers(nt);
  slots.assign(nt, 0);
  for (unsigned z = 0; z < grid.z; z++)
    for (unsigned y = 0; y < grid.y; y++)
      for (unsigned x = 0; x < grid.x; x++) {
        blockIdx = dim3(x, y, z);
        for (unsigned t = 0; t < nt; t++)
          fibers[t].state = RUNNABLE;
        run_block(nt);
      }
}

static const size_t total_mem = (size_t)4 << 30;
cudaError_t cudaGetDeviceCount(int *n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int) {
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "emulated GPU");
  p->major = 9;
  p->minor = 0;
  p->totalGlobalMem = total_mem;
  const char *w = getenv("TSR_EMU_WARP");
  p->warpSize = w ? atoi(w) : 32;
  p->multiProcessorCount = tsr_emu_sms;
  p->concurrentManagedAccess = 1;
  return cudaSuccess;
}
static int current_device = 0;
cudaError_t cudaSetDevice(int d) {
  current_device = d;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d) {
  *d = current_device;
  return cudaSuccess;
}
/* Fault injection (tests/test_gpu_fault.c): with TSR_EMU_FAULT_AFTER=N the N-th
   synchronizing call (stream or event synchronize, copy, event query) reports an illegal
   address, and from then on every call does, as a lost CUDA context would. */
static cudaError_t sticky_error = cudaSuccess;
static cudaError_t fault_point() {
  static int countdown = -2;
  if (sticky_error != cudaSuccess) return sticky_error;
  if (countdown == -2) {
    const char *e = getenv("TSR_EMU_FAULT_AFTER");
    countdown = e ? atoi(e) : -1;
  }
  if (countdown > 0 && --countdown == 0) sticky_error = (cudaError_t)cudaErrorIllegalAddress;
  return sticky_error;
}
cudaError_t cudaGetLastError() {
  return sticky_error;
}
cudaError_t cudaPeekAtLastError() {
  return sticky_error;
}
const char *cudaGetErrorString(cudaError_t e) {
  return e == 2                         ? "out of memory"
         : e == cudaErrorIllegalAddress ? "an illegal memory access was encountered"
                                        : "error";
}
const char *cudaGetErrorName(cudaError_t e) {
  return e == 2                         ? "cudaErrorMemoryAllocation"
         : e == cudaErrorIllegalAddress ? "cudaErrorIllegalAddress"
                                        : "cudaError";
}
static cudaError_t emu_alloc(void **p, size_t n) {
  if (n > total_mem) return cudaErrorMemoryAllocation;
  /* garbage-filled, like real device memory */
  void *q = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!q) return cudaErrorMemoryAllocation;
  memset(q, 0xA5, n);
  *p = q;
  return cudaSuccess;
}
/* The device allocations' log (tests/test_gpu_alloc.c reads it through tsr_emu_alloc_stats):
   the size cudaMalloc was asked for, per live block. */
static std::mutex alloc_lock;
static std::unordered_map<void *, size_t> alloc_live;
static size_t alloc_calls, free_calls, alloc_last, alloc_live_bytes;
extern "C" void tsr_emu_alloc_stats(size_t out[4]) {
  std::lock_guard<std::mutex> g(alloc_lock);
  out[0] = alloc_calls;
  out[1] = free_calls;
  out[2] = alloc_last;
  out[3] = alloc_live_bytes;
}
cudaError_t cudaMalloc(void **p, size_t n) {
  cudaError_t e = emu_alloc(p, n);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> g(alloc_lock);
  alloc_calls++;
  alloc_last = n;
  alloc_live_bytes += n;
  alloc_live[*p] = n;
  return cudaSuccess;
}
cudaError_t cudaMallocManaged(void **p, size_t n, int) {
  return emu_alloc(p, n);
}
cudaError_t cudaMallocHost(void **p, size_t n) {
  count_pinned++;
  return emu_alloc(p, n);
}
cudaError_t cudaFree(void *p) {
  {
    std::lock_guard<std::mutex> g(alloc_lock);
    auto it = alloc_live.find(p);
    if (it != alloc_live.end()) {
      free_calls++;
      alloc_live_bytes -= it->second;
      alloc_live.erase(it);
    }
  }
  free(p);
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void *p) {
  free(p);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t) {
  count_copies++;
  if (cudaError_t e = fault_point()) return e;
  memmove(d, s, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void *d, size_t dpitch, const void *s, size_t spitch, size_t width,
                              size_t rows, cudaMemcpyKind, cudaStream_t) {
  count_copies++;
  if (cudaError_t e = fault_point()) return e;
  for (size_t r = 0; r < rows; r++)
    memmove((char *)d + r * dpitch, (const char *)s + r * spitch, width);
  return cudaSuccess;
}
/* Every stream runs in issue order at once (work is done when queued), so waits are no-ops. */
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, int) {
  *s = (cudaStream_t)0x1;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t) {
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) {
  return fault_point();
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
  count_syncs++;
  return fault_point();
}
struct tsr_emu_event {
  double t;
};
cudaError_t cudaEventCreate(cudaEvent_t *e) {
  *e = new tsr_emu_event{0};
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  e->t = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) {
  count_syncs++;
  return fault_point();
}
cudaError_t cudaEventQuery(cudaEvent_t) {
  return fault_point();
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  *ms = (float)((b->t - a->t) * 1e3);
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
