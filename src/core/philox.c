/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host fill with the Philox4x32-10 values of src/core/philox.h. The per-element functions
 * there compute a whole Philox block for each element; here each block is computed once and
 * its words are handed out to the 4 (f32) or 2 (f64) elements it serves, with exactly the
 * arithmetic of tsr__philox_f32/f64 so that the values are bit-identical (test_philox checks
 * that for every distribution, for ranges where the half-open clamp of the uniform values
 * matters, and for unaligned offsets). A change of the mapping in philox.h must be made here
 * too; the test fails until it is.
 */
#include "core/internal.h"
#include "core/philox.h"

/* Below this many blocks, starting threads costs more than it saves. */
#define RNG_PARALLEL_BLOCKS 4096

/* tsr__philox_box_muller split in two: the radius and angle, computed once for the pair of
   elements (cos and sin) that share them, with the same operations in the same order. */
static inline void tsr__rng_polar(double u1, double u2, double *r, double *theta) {
  *r = sqrt(TSR__DMUL(-2.0, log(u1)));
  *theta = TSR__DMUL(6.283185307179586476925286766559, u2);
}

static void tsr__rng_fill_f32(float *dst, int64_t n, uint64_t seed, uint64_t offset,
                              tsr__rng_dist dist, double p0, double p1) {
  /* Element i (0 <= i < n) has index offset+i, block (offset+i)/4 (modulo 2^62, which is
     what (index >> 2) gives when offset+i wraps), lane (offset+i)%4. */
  const int64_t head = (int64_t)(offset & 3u);
  const int64_t nblocks = (head + n + 3) / 4;
  const uint64_t first = offset >> 2;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (nblocks >= RNG_PARALLEL_BLOCKS)
#endif
  for (int64_t j = 0; j < nblocks; j++) {
    uint32_t w[4];
    tsr__philox_block(seed, (first + (uint64_t)j) & (UINT64_MAX >> 2), w);
    int64_t base = 4 * j - head; /* element of lane 0 */
    if (dist == TSR__RNG_UNIFORM) {
      for (int lane = 0; lane < 4; lane++) {
        int64_t i = base + lane;
        if (i < 0 || i >= n) continue;
        double u = (double)(w[lane] >> 8) * 0x1.0p-24;
        float v = (float)TSR__DADD(p0, TSR__DMUL(p1 - p0, u));
        dst[i] = (double)v < p1 ? v : nextafterf((float)p1, (float)p0);
      }
    } else {
      for (int pair = 0; pair < 4; pair += 2) {
        if (base + pair + 1 < 0 || base + pair >= n) continue;
        double u1 = (double)((w[pair] >> 8) + 1u) * 0x1.0p-24;
        double u2 = (double)(w[pair + 1] >> 8) * 0x1.0p-24;
        double r, theta;
        tsr__rng_polar(u1, u2, &r, &theta);
        if (base + pair >= 0)
          dst[base + pair] = (float)TSR__DADD(p0, TSR__DMUL(p1, TSR__DMUL(r, cos(theta))));
        if (base + pair + 1 < n)
          dst[base + pair + 1] = (float)TSR__DADD(p0, TSR__DMUL(p1, TSR__DMUL(r, sin(theta))));
      }
    }
  }
}

static void tsr__rng_fill_f64(double *dst, int64_t n, uint64_t seed, uint64_t offset,
                              tsr__rng_dist dist, double p0, double p1) {
  const int64_t head = (int64_t)(offset & 1u);
  const int64_t nblocks = (head + n + 1) / 2;
  const uint64_t first = offset >> 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (nblocks >= RNG_PARALLEL_BLOCKS)
#endif
  for (int64_t j = 0; j < nblocks; j++) {
    uint32_t w[4];
    tsr__philox_block(seed, (first + (uint64_t)j) & (UINT64_MAX >> 1), w);
    int64_t base = 2 * j - head;
    if (dist == TSR__RNG_UNIFORM) {
      for (int half = 0; half < 2; half++) {
        int64_t i = base + half;
        if (i < 0 || i >= n) continue;
        double u = tsr__philox_u53(w[2 * half], w[2 * half + 1]);
        double v = TSR__DADD(p0, TSR__DMUL(p1 - p0, u));
        dst[i] = v < p1 ? v : nextafter(p1, p0);
      }
    } else {
      double u1 = TSR__DADD(tsr__philox_u53(w[0], w[1]), 0x1.0p-53);
      double u2 = tsr__philox_u53(w[2], w[3]);
      double r, theta;
      tsr__rng_polar(u1, u2, &r, &theta);
      if (base >= 0) dst[base] = TSR__DADD(p0, TSR__DMUL(p1, TSR__DMUL(r, cos(theta))));
      if (base + 1 < n) dst[base + 1] = TSR__DADD(p0, TSR__DMUL(p1, TSR__DMUL(r, sin(theta))));
    }
  }
}

void tsr__rng_fill_host(void *dst, tsr_dtype dtype, int64_t n, uint64_t seed, uint64_t offset,
                        tsr__rng_dist dist, double p0, double p1) {
  if (!dst || n <= 0) return;
  /* A complex element i is the pair of its part dtype's values of indices 2i, 2i + 1: the real
     stream of 2n values from index 2 offset (the GPU kernel uses the same rule). */
  if (dtype == TSR_C64) {
    tsr__rng_fill_f32((float *)dst, 2 * n, seed, 2 * offset, dist, p0, p1);
  } else if (dtype == TSR_C128) {
    tsr__rng_fill_f64((double *)dst, 2 * n, seed, 2 * offset, dist, p0, p1);
  } else if (dtype == TSR_F32) {
    tsr__rng_fill_f32((float *)dst, n, seed, offset, dist, p0, p1);
  } else if (dtype == TSR_F64) {
    tsr__rng_fill_f64((double *)dst, n, seed, offset, dist, p0, p1);
  }
}
