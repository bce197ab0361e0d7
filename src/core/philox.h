/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Philox4x32-10 counter-based random numbers (Salmon, Moraes, Dror, Shaw, "Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011), and the mapping from (seed, element index) to a
 * value. Included by C (src/core, src/omp) and by CUDA/HIP (src/gpu): the same bits on every
 * device. The arithmetic after the integer part uses explicitly rounded double operations
 * (TSR__DMUL/TSR__DADD) so nvcc cannot contract them into FMAs and change the last bit.
 *
 * Mapping, element index i (C order, plus the caller's offset), key = {seed_lo, seed_hi}:
 *   f32 uniform: block i/4, word i%4; u = (w >> 8) * 2^-24 in [0,1)
 *   f64 uniform: block i/2, words 2(i%2), 2(i%2)+1; u = 53 random bits * 2^-53
 *   value = low + (high - low) * u   (double, rounded to the dtype; a value that rounds to
 *   high is replaced by the largest value below high, so the interval stays half-open)
 *   normal: Box-Muller on the block's words; f32: (w0,w1) give elements 4b, 4b+1 and (w2,w3)
 *   elements 4b+2, 4b+3; f64: 53-bit u1 from (w0,w1), u2 from (w2,w3) give elements 2b, 2b+1.
 *   u1 is taken in (0,1] so log(u1) is finite; z = sqrt(-2 log u1) * {cos,sin}(2 pi u2).
 *   value = mean + stddev * z.
 * The uniform values are bit-identical on every device; the normal ones agree up to the last
 * bit of each device's log/sin/cos (the f32 ones are computed in double, so they almost
 * always agree exactly).
 */
#ifndef TSR_PHILOX_H
#define TSR_PHILOX_H

#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TSR__HD __host__ __device__
/* __dmul_rn/__dadd_rn are device-only: the host pass of nvcc/hipcc uses plain operations. */
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TSR__DMUL(a, b) __dmul_rn((a), (b))
#define TSR__DADD(a, b) __dadd_rn((a), (b))
#else
#define TSR__DMUL(a, b) ((a) * (b))
#define TSR__DADD(a, b) ((a) + (b))
#endif
#else
#include <math.h>
#define TSR__HD
#define TSR__DMUL(a, b) ((a) * (b))
#define TSR__DADD(a, b) ((a) + (b))
#endif

#define TSR__PHILOX_M0 0xD2511F53u
#define TSR__PHILOX_M1 0xCD9E8D57u
#define TSR__PHILOX_W0 0x9E3779B9u
#define TSR__PHILOX_W1 0xBB67AE85u

/* Distribution codes (same values as tsr__rng_dist in internal.h). */
#define TSR__PHILOX_UNIFORM 0
#define TSR__PHILOX_NORMAL 1

/* One Philox4x32-10 block: 10 rounds of the S-box on counter `ctr` under `key`. */
TSR__HD static inline void tsr__philox4x32_10(const uint32_t ctr_in[4], const uint32_t key_in[2],
                                              uint32_t out[4]) {
  uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
  uint32_t k0 = key_in[0], k1 = key_in[1];
  for (int round = 0; round < 10; round++) {
    if (round > 0) {
      k0 += TSR__PHILOX_W0;
      k1 += TSR__PHILOX_W1;
    }
    uint64_t p0 = (uint64_t)TSR__PHILOX_M0 * c0;
    uint64_t p1 = (uint64_t)TSR__PHILOX_M1 * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

TSR__HD static inline void tsr__philox_block(uint64_t seed, uint64_t block, uint32_t w[4]) {
  uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), 0u, 0u};
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  tsr__philox4x32_10(ctr, key, w);
}

/* 53 random bits from two words, scaled to [0, 1). */
TSR__HD static inline double tsr__philox_u53(uint32_t a, uint32_t b) {
  uint64_t bits = ((uint64_t)(a >> 5) << 26) | (uint64_t)(b >> 6);
  return (double)bits * 0x1.0p-53;
}

TSR__HD static inline double tsr__philox_box_muller(double u1, double u2, int second) {
  double r = sqrt(TSR__DMUL(-2.0, log(u1)));
  double theta = TSR__DMUL(6.283185307179586476925286766559, u2);
  return TSR__DMUL(r, second ? sin(theta) : cos(theta));
}

/* Element `lane` (0..3) of a block's four f32 values, from the block's words w: the one
   definition used per element (tsr__philox_f32) and per block (the GPU kernel computes a
   block once and writes its four elements). dist: TSR__PHILOX_UNIFORM (p0=low, p1=high) or
   TSR__PHILOX_NORMAL (p0=mean, p1=stddev). */
TSR__HD static inline float tsr__philox_f32_lane(const uint32_t w[4], unsigned lane, int dist,
                                                 double p0, double p1) {
  if (dist == TSR__PHILOX_UNIFORM) {
    double u = (double)(w[lane] >> 8) * 0x1.0p-24;
    float v = (float)TSR__DADD(p0, TSR__DMUL(p1 - p0, u));
    /* Rounding to float may reach `high`; the interval is half-open. */
    return (double)v < p1 ? v : nextafterf((float)p1, (float)p0);
  }
  unsigned pair = lane & 2u;
  double u1 = (double)((w[pair] >> 8) + 1u) * 0x1.0p-24;
  double u2 = (double)(w[pair + 1] >> 8) * 0x1.0p-24;
  double z = tsr__philox_box_muller(u1, u2, (int)(lane & 1u));
  return (float)TSR__DADD(p0, TSR__DMUL(p1, z));
}

/* Value of element `index` for f32 (four elements per Philox block). */
TSR__HD static inline float tsr__philox_f32(uint64_t seed, uint64_t index, int dist, double p0,
                                            double p1) {
  uint32_t w[4];
  tsr__philox_block(seed, index >> 2, w);
  return tsr__philox_f32_lane(w, (unsigned)(index & 3u), dist, p0, p1);
}

/* Element `half` (0, 1) of a block's two f64 values; arguments as tsr__philox_f32_lane. */
TSR__HD static inline double tsr__philox_f64_lane(const uint32_t w[4], unsigned half, int dist,
                                                  double p0, double p1) {
  if (dist == TSR__PHILOX_UNIFORM) {
    double u = tsr__philox_u53(w[2 * half], w[2 * half + 1]);
    double v = TSR__DADD(p0, TSR__DMUL(p1 - p0, u));
    return v < p1 ? v : nextafter(p1, p0);
  }
  double u1 = TSR__DADD(tsr__philox_u53(w[0], w[1]), 0x1.0p-53);
  double u2 = tsr__philox_u53(w[2], w[3]);
  double z = tsr__philox_box_muller(u1, u2, (int)half);
  return TSR__DADD(p0, TSR__DMUL(p1, z));
}

/* Value of element `index` for f64 (two elements per Philox block). */
TSR__HD static inline double tsr__philox_f64(uint64_t seed, uint64_t index, int dist, double p0,
                                             double p1) {
  uint32_t w[4];
  tsr__philox_block(seed, index >> 1, w);
  return tsr__philox_f64_lane(w, (unsigned)(index & 1u), dist, p0, p1);
}

#endif /* TSR_PHILOX_H */
