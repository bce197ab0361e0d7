/* SPDX-License-Identifier: BSD-3-Clause */
/* The strided N-d loop of the CPU backend: axis collapsing and the OpenMP split. */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "omp/omp_internal.h"

int tsr__omp_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void tsr__omp_loop_init(tsr__omp_loop *lp, int ndim, const int64_t *shape, int nops,
                        const int64_t *const strides[], const size_t elsize[]) {
  lp->nops = nops;
  for (int k = 0; k < nops; k++)
    lp->elsize[k] = elsize[k];
  lp->ndim = tsr__collapse_axes(ndim, shape, nops, strides, lp->shape, lp->strides, &lp->size);
}

void tsr__omp_loop_offsets(const tsr__omp_loop *lp, int64_t flat, int64_t off[]) {
  tsr__flat_offsets(lp->ndim, lp->shape, lp->nops, (const int64_t(*)[TSR_MAX_DIMS])lp->strides,
                    flat, off);
}

/*
 * Outputs much larger than the last-level cache are written with non-temporal (streaming)
 * stores: a plain store first reads the line it writes (read-for-ownership), so c = a + b
 * would move 4 arrays instead of 3. The kernel writes a small tile that stays in L1, and the
 * tile goes to memory with movntdq. Below the threshold the output is better left in cache
 * for whatever reads it next.
 */
#if defined(__SSE2__)
#include <emmintrin.h>
#define TSR__OMP_STREAM 1
#else
#define TSR__OMP_STREAM 0
#endif
#define TSR__OMP_TILE_BYTES 2048

#if TSR__OMP_STREAM
/* Last-level cache size in bytes (cpuinfo.c: the one reading of the cache geometry). */
static int64_t tsr__llc_bytes(void) {
  return tsr__cpu_facts_get()->cache[2].size;
}

/* dst 16-byte aligned, src 64-byte aligned. */
static void tsr__stream_copy(char *dst, const char *src, size_t bytes) {
  const size_t n16 = bytes / 16;
  __m128i *d = (__m128i *)(void *)dst;
  const __m128i *v = (const __m128i *)(const void *)src;
  for (size_t k = 0; k < n16; k++)
    _mm_stream_si128(d + k, _mm_load_si128(v + k));
  memcpy(dst + n16 * 16, src + n16 * 16, bytes - n16 * 16);
}

/* One run of n elements whose output (operand 0, stride 1) goes through an L1 tile. */
static void tsr__run_streamed(const tsr__omp_loop *lp, tsr__omp_kernel kernel, const void *param,
                              int64_t n, char *const p[], const int64_t s[]) {
  _Alignas(64) char tile[TSR__OMP_TILE_BYTES];
  const int64_t es0 = (int64_t)lp->elsize[0];
  /* Elements before the first 16-byte boundary of the output are stored plainly. */
  int64_t head = (int64_t)((16 - ((uintptr_t)p[0] & 15)) & 15) / es0;
  if (head > n) head = n;
  if (head > 0) kernel(head, p, s, param);
  const int64_t per_tile = TSR__OMP_TILE_BYTES / es0;
  char *q[TSR__OMP_MAX_OPS];
  q[0] = tile;
  for (int64_t done = head; done < n;) {
    const int64_t m = n - done < per_tile ? n - done : per_tile;
    for (int k = 1; k < lp->nops; k++)
      q[k] = p[k] + done * s[k] * (int64_t)lp->elsize[k];
    kernel(m, q, s, param);
    tsr__stream_copy(p[0] + done * es0, tile, (size_t)(m * es0));
    done += m;
  }
}
#endif

/* Elements [begin, end) in C order, one kernel call per run of the innermost axis. */
static void tsr__run_range(const tsr__omp_loop *lp, char *const base[], tsr__omp_kernel kernel,
                           const void *param, int64_t begin, int64_t end, bool stream) {
  const int nd = lp->ndim, nops = lp->nops;
  const int64_t inner = lp->shape[nd - 1];
  int64_t idx[TSR_MAX_DIMS], s[TSR__OMP_MAX_OPS];
  char *p[TSR__OMP_MAX_OPS];
  for (int k = 0; k < nops; k++)
    s[k] = lp->strides[k][nd - 1];
  int64_t rest = begin;
  for (int d = nd - 1; d >= 0; d--) {
    idx[d] = rest % lp->shape[d];
    rest /= lp->shape[d];
  }
  bool streamed = false;
  for (int64_t pos = begin; pos < end;) {
    for (int k = 0; k < nops; k++) {
      int64_t off = 0;
      for (int d = 0; d < nd; d++)
        off += idx[d] * lp->strides[k][d];
      p[k] = base[k] + off * (int64_t)lp->elsize[k];
    }
    int64_t len = inner - idx[nd - 1];
    if (len > end - pos) len = end - pos;
#if TSR__OMP_STREAM
    /* (An output not aligned to its element size, which only a borrowed buffer could give,
       could never reach a 16-byte boundary.) */
    if (stream && len * (int64_t)lp->elsize[0] >= TSR__OMP_TILE_BYTES &&
        (uintptr_t)p[0] % lp->elsize[0] == 0) {
      tsr__run_streamed(lp, kernel, param, len, p, s);
      streamed = true;
    } else {
      kernel(len, p, s, param);
    }
#else
    (void)stream;
    kernel(len, p, s, param);
#endif
    pos += len;
    idx[nd - 1] += len;
    for (int d = nd - 1; d > 0 && idx[d] == lp->shape[d]; d--) {
      idx[d] = 0;
      idx[d - 1]++;
    }
  }
#if TSR__OMP_STREAM
  if (streamed) _mm_sfence(); /* streaming stores are weakly ordered */
#else
  (void)streamed;
#endif
}

void tsr__omp_loop_run(const tsr__omp_loop *lp, char *const base[], tsr__omp_kernel kernel,
                       const void *param, int64_t work) {
  const int64_t size = lp->size;
  if (size == 0) return;
  bool stream = false;
#if TSR__OMP_STREAM
  if (lp->strides[0][lp->ndim - 1] == 1) {
    int64_t bytes_per_element = 0;
    for (int k = 0; k < lp->nops; k++)
      bytes_per_element += (int64_t)lp->elsize[k];
    stream = size > tsr__llc_bytes() / bytes_per_element;
  }
#endif
#ifdef _OPENMP
  const int nt = tsr__omp_threads();
  if (work > TSR__OMP_PAR_THRESHOLD && size > 1 && nt > 1) {
    /* A few chunks per thread, taken dynamically: on a shared machine a thread that loses
       its core for a while does not hold the others back. */
    /* Chunks of whole cache lines of f32 output, unless there are so few elements (each
       then a lot of work: a reduction's outputs) that every one counts. */
    int64_t chunk = (size + 4 * (int64_t)nt - 1) / (4 * (int64_t)nt);
    if (chunk >= 16) chunk = (chunk + 15) / 16 * 16;
    const int64_t nchunks = (size + chunk - 1) / chunk;
    TSR__OMP_PRAGMA(omp parallel for schedule(dynamic, 1))
    for (int64_t c = 0; c < nchunks; c++) {
      const int64_t end = (c + 1) * chunk < size ? (c + 1) * chunk : size;
      tsr__run_range(lp, base, kernel, param, c * chunk, end, stream);
    }
    return;
  }
#else
  (void)work;
#endif
  tsr__run_range(lp, base, kernel, param, 0, size, stream);
}
