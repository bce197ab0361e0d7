/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Philox4x32-10 (src/core/philox.h) against the known-answer vectors of Random123
 * (kat_vectors, Salmon et al., SC 2011), tsr__rng_fill_host against the per-element mapping,
 * and the statistics of the uniform and normal values. Links the static library for the
 * internal (hidden) symbols.
 */
#include "tsr_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/philox.h"

static void check_kat(const uint32_t ctr[4], const uint32_t key[2], const uint32_t want[4]) {
  uint32_t out[4];
  tsr__philox4x32_10(ctr, key, out);
  for (int i = 0; i < 4; i++) {
    if (out[i] != want[i])
      print_error("word %d: got %08x, want %08x\n", i, (unsigned)out[i], (unsigned)want[i]);
    assert_int_equal(out[i], want[i]);
  }
}

static void test_known_answers(void **state) {
  (void)state;
  const uint32_t zero_ctr[4] = {0, 0, 0, 0}, zero_key[2] = {0, 0};
  const uint32_t zero_want[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
  check_kat(zero_ctr, zero_key, zero_want);
  const uint32_t ff_ctr[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
  const uint32_t ff_key[2] = {0xffffffffu, 0xffffffffu};
  const uint32_t ff_want[4] = {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu};
  check_kat(ff_ctr, ff_key, ff_want);
  /* The digits of pi. */
  const uint32_t pi_ctr[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
  const uint32_t pi_key[2] = {0xa4093822u, 0x299f31d0u};
  const uint32_t pi_want[4] = {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u};
  check_kat(pi_ctr, pi_key, pi_want);
}

/* The block fill hands out the same bits as the per-element functions, for any offset
   (unaligned, large, and wrapping past 2^64) and for sizes on both sides of the OpenMP
   threshold. */
static void test_fill_matches_per_element(void **state) {
  (void)state;
  const uint64_t offsets[] = {0, 1, 2, 3, 5, 1000003, (1ull << 40) + 3, UINT64_MAX - 6};
  const int64_t sizes[] = {1, 2, 3, 7, 101, 40001};
  const uint64_t seed = 0x0123456789abcdefull;
  float *f = malloc(40001 * sizeof(float)), *fr = malloc(40001 * sizeof(float));
  double *d = malloc(40001 * sizeof(double)), *dr = malloc(40001 * sizeof(double));
  assert_true(f && fr && d && dr);
  /* The last two uniform ranges are so narrow that most values round to `high` and take the
     half-open clamp of the mapping. */
  const struct {
    int dist;
    double p0, p1;
  } params[] = {{TSR__RNG_UNIFORM, -3.0, 7.0},
                {TSR__RNG_NORMAL, 1.5, 0.25},
                {TSR__RNG_UNIFORM, 1e8, 1e8 + 1.0},
                {TSR__RNG_UNIFORM, 1.0, 1.0 + 0x1.0p-50}};
  for (size_t pi = 0; pi < sizeof params / sizeof params[0]; pi++) {
    int dist = params[pi].dist;
    double p0 = params[pi].p0, p1 = params[pi].p1;
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        uint64_t off = offsets[o];
        for (int64_t i = 0; i < n; i++) {
          fr[i] = tsr__philox_f32(seed, off + (uint64_t)i, dist, p0, p1);
          dr[i] = tsr__philox_f64(seed, off + (uint64_t)i, dist, p0, p1);
        }
        memset(f, 0, (size_t)n * sizeof(float));
        memset(d, 0, (size_t)n * sizeof(double));
        tsr__rng_fill_host(f, TSR_F32, n, seed, off, (tsr__rng_dist)dist, p0, p1);
        tsr__rng_fill_host(d, TSR_F64, n, seed, off, (tsr__rng_dist)dist, p0, p1);
        if (memcmp(f, fr, (size_t)n * sizeof(float)) != 0 ||
            memcmp(d, dr, (size_t)n * sizeof(double)) != 0) {
          print_error("mismatch: dist %d [%g, %g] offset %llu n %lld\n", dist, p0, p1,
                      (unsigned long long)off, (long long)n);
          fail();
        }
      }
  }
  /* A fill split in two pieces equals the fill in one. */
  tsr__rng_fill_host(d, TSR_F64, 1000, 7, 0, TSR__RNG_NORMAL, 0.0, 1.0);
  tsr__rng_fill_host(dr, TSR_F64, 333, 7, 0, TSR__RNG_NORMAL, 0.0, 1.0);
  tsr__rng_fill_host(dr + 333, TSR_F64, 667, 7, 333, TSR__RNG_NORMAL, 0.0, 1.0);
  assert_memory_equal(d, dr, 1000 * sizeof(double));
  /* Different seeds, different values. */
  tsr__rng_fill_host(dr, TSR_F64, 1000, 8, 0, TSR__RNG_NORMAL, 0.0, 1.0);
  int same = 0;
  for (int i = 0; i < 1000; i++)
    same += d[i] == dr[i];
  assert_true(same < 5);
  free(f);
  free(fr);
  free(d);
  free(dr);
}

#define NS 100000

static void moments(const double *x, int n, double *mean, double *var) {
  double m = 0, v = 0;
  for (int i = 0; i < n; i++)
    m += x[i];
  m /= n;
  for (int i = 0; i < n; i++)
    v += (x[i] - m) * (x[i] - m);
  *mean = m;
  *var = v / (n - 1);
}

static void test_uniform_statistics(void **state) {
  (void)state;
  const double lo = -2.0, hi = 3.0;
  double *x = malloc(NS * sizeof(double));
  float *f = malloc(NS * sizeof(float));
  assert_true(x && f);
  for (int dt = 0; dt < 2; dt++) {
    if (dt == 0) {
      tsr__rng_fill_host(f, TSR_F32, NS, 42, 0, TSR__RNG_UNIFORM, lo, hi);
      for (int i = 0; i < NS; i++)
        x[i] = f[i];
    } else {
      tsr__rng_fill_host(x, TSR_F64, NS, 42, 0, TSR__RNG_UNIFORM, lo, hi);
    }
    int bins[100] = {0};
    for (int i = 0; i < NS; i++) {
      assert_true(x[i] >= lo && x[i] < hi);
      int b = (int)((x[i] - lo) / (hi - lo) * 100);
      bins[b < 100 ? b : 99]++;
    }
    double mean, var;
    moments(x, NS, &mean, &var);
    /* Expected 0.5 and 25/12; standard errors about 0.0046 and 0.0059. */
    assert_true(fabs(mean - 0.5) < 0.025);
    assert_true(fabs(var - 25.0 / 12.0) < 0.03);
    /* Chi-square with 99 degrees of freedom: mean 99, sd 14. */
    double chi2 = 0, e = NS / 100.0;
    for (int b = 0; b < 100; b++)
      chi2 += (bins[b] - e) * (bins[b] - e) / e;
    assert_true(chi2 < 99 + 5 * 14);
  }
  /* f64 values carry 53 random bits: the low bits of u = (x - lo) / (hi - lo) vary. */
  tsr__rng_fill_host(x, TSR_F64, 1000, 3, 0, TSR__RNG_UNIFORM, 0.0, 1.0);
  int low_bits = 0;
  for (int i = 0; i < 1000; i++)
    low_bits += fmod(ldexp(x[i], 40), 1.0) != 0.0;
  assert_true(low_bits > 900);
  /* Half-open even where rounding reaches `high`. */
  tsr__rng_fill_host(x, TSR_F64, 1000, 5, 0, TSR__RNG_UNIFORM, 1.0, 1.0 + 0x1.0p-50);
  tsr__rng_fill_host(f, TSR_F32, 1000, 5, 0, TSR__RNG_UNIFORM, 1.0, 1.0 + 0x1.0p-22);
  for (int i = 0; i < 1000; i++) {
    assert_true(x[i] >= 1.0 && x[i] < 1.0 + 0x1.0p-50);
    assert_true(f[i] >= 1.0f && f[i] < 1.0f + 0x1.0p-22f);
  }
  free(x);
  free(f);
}

static void test_normal_statistics(void **state) {
  (void)state;
  const double mu = 1.5, sigma = 2.0;
  double *x = malloc(NS * sizeof(double));
  float *f = malloc(NS * sizeof(float));
  assert_true(x && f);
  for (int dt = 0; dt < 2; dt++) {
    if (dt == 0) {
      tsr__rng_fill_host(f, TSR_F32, NS, 1234, 17, TSR__RNG_NORMAL, mu, sigma);
      for (int i = 0; i < NS; i++)
        x[i] = f[i];
    } else {
      tsr__rng_fill_host(x, TSR_F64, NS, 1234, 17, TSR__RNG_NORMAL, mu, sigma);
    }
    double mean, var;
    moments(x, NS, &mean, &var);
    /* Standard errors: mean 0.0063, stddev 0.0045, P(|z| < 1) 0.0015. */
    assert_true(fabs(mean - mu) < 0.035);
    assert_true(fabs(sqrt(var) - sigma) < 0.025);
    int within = 0;
    for (int i = 0; i < NS; i++) {
      assert_true(isfinite(x[i]));
      within += fabs(x[i] - mu) < sigma;
    }
    assert_true(fabs((double)within / NS - 0.682689) < 0.008);
  }
  free(x);
  free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_known_answers),
      cmocka_unit_test(test_fill_matches_per_element),
      cmocka_unit_test(test_uniform_statistics),
      cmocka_unit_test(test_normal_statistics),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
