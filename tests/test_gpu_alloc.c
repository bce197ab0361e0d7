/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU allocator's two modes (src/gpu/runtime.cu), seen through the host emulator's log of
 * cudaMalloc and cudaFree (tsr_emu_alloc_stats, tests/gpu_emu/tsr_emu.cpp). Emulator only:
 * tests/gpu_emu/run.sh builds it and runs it twice, with TSR_GPU_ALLOC_CACHE=0 and =1.
 *  - cache on (default): a request gets one cudaMalloc of its size class (powers of two from
 *    512 B to 1 MiB, multiples of 2 MiB above); a freed block stays cached and serves the next
 *    request of its class without a cudaMalloc; tsr_device_trim gives it back.
 *  - TSR_GPU_ALLOC_CACHE=0: every allocation, scratch buffers included, is one cudaMalloc of
 *    exactly the bytes asked for (1 for an empty array) and every free one cudaFree, which is
 *    what lets compute-sanitizer memcheck see overruns (scripts/gpu_session.sh sanitize).
 * Data written to every size class reads back unchanged, and a reduction and a split-K GEMM
 * (both use scratch) match float64 references, in both modes; nothing is left allocated.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_test.h"

/* The emulator's log: cudaMalloc calls, cudaFree calls of those blocks, the size of the last
   cudaMalloc, the bytes cudaMalloc'ed and not yet freed. */
void tsr_emu_alloc_stats(size_t out[4]);
enum { MALLOCS, FREES, LAST, LIVE };

static tsr_device gpu;
static int exact;

/* The documented size classes of the caching allocator. */
static size_t size_class(size_t bytes) {
  if (bytes <= 512) return 512;
  if (bytes <= ((size_t)1 << 20)) {
    size_t c = 512;
    while (c < bytes)
      c <<= 1;
    return c;
  }
  size_t q = (size_t)2 << 20;
  return (bytes + q - 1) / q * q;
}

static void stats(size_t s[4]) {
  tsr_emu_alloc_stats(s);
}

/* One array of `count` elements of `dtype`: the cudaMalloc it costs, the data it holds, its
   free, its reuse and the trim, in the mode under test. */
static void check_one(int64_t count, tsr_dtype dtype, uint64_t seed) {
  size_t es = 0;
  TSR_ASSERT_OK(tsr_dtype_size(dtype, &es));
  size_t bytes = (size_t)count * es;
  size_t want = exact ? (bytes ? bytes : 1) : size_class(bytes);
  TSR_ASSERT_OK(tsr_device_trim(gpu)); /* an empty cache: the next request is a cudaMalloc */
  size_t s0[4], s1[4], s2[4], s3[4], s4[4];
  stats(s0);
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_empty(1, &count, dtype, gpu, &a));
  stats(s1);
  if (s1[MALLOCS] != s0[MALLOCS] + 1 || s1[LAST] != want)
    print_error("%lld elements (%zu bytes): %zu cudaMalloc, last of %zu bytes (want 1 of %zu)\n",
                (long long)count, bytes, s1[MALLOCS] - s0[MALLOCS], s1[LAST], want);
  assert_int_equal(s1[MALLOCS], s0[MALLOCS] + 1);
  assert_int_equal(s1[LAST], want);
  assert_int_equal(s1[LIVE], s0[LIVE] + want);

  /* Random bytes written and read back: the whole block is the array's. */
  if (bytes > 0) {
    unsigned char *in = malloc(bytes), *out = malloc(bytes);
    assert_non_null(in);
    assert_non_null(out);
    uint64_t x = seed;
    for (size_t i = 0; i < bytes; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      in[i] = (unsigned char)(x >> 56);
    }
    memset(out, 0, bytes);
    TSR_ASSERT_OK(tsr_array_write(a, in, bytes));
    TSR_ASSERT_OK(tsr_array_read(a, out, bytes));
    assert_memory_equal(in, out, bytes);
    free(in);
    free(out);
  }

  TSR_ASSERT_OK(tsr_array_release(a));
  stats(s2);
  if (exact) { /* freed at once */
    assert_int_equal(s2[FREES], s1[FREES] + 1);
    assert_int_equal(s2[LIVE], s0[LIVE]);
  } else { /* kept for reuse */
    assert_int_equal(s2[FREES], s1[FREES]);
    assert_int_equal(s2[LIVE], s1[LIVE]);
  }
  /* The same request again: a new cudaMalloc only without the cache. */
  TSR_ASSERT_OK(tsr_empty(1, &count, dtype, gpu, &a));
  stats(s3);
  assert_int_equal(s3[MALLOCS], s2[MALLOCS] + (exact ? 1 : 0));
  if (exact) assert_int_equal(s3[LAST], want);
  TSR_ASSERT_OK(tsr_array_release(a));
  TSR_ASSERT_OK(tsr_device_trim(gpu));
  stats(s4);
  assert_int_equal(s4[LIVE], s0[LIVE]);
  assert_int_equal(s4[FREES] - s0[FREES], s4[MALLOCS] - s0[MALLOCS]);
}

static void test_sizes(void **state) {
  (void)state;
  /* Around each class edge: empty, tiny, 512 B, the 1 MiB small limit, 2 MiB multiples. */
  const int64_t f32_counts[] = {0,      1,      127,    128,    129,    1000,
                                262143, 262144, 262145, 524288, 524289, 1000003};
  for (size_t i = 0; i < sizeof f32_counts / sizeof f32_counts[0]; i++)
    check_one(f32_counts[i], TSR_F32, 11 + i);
  const int64_t f64_counts[] = {1, 63, 64, 65, 131073, 786433};
  for (size_t i = 0; i < sizeof f64_counts / sizeof f64_counts[0]; i++)
    check_one(f64_counts[i], TSR_F64, 31 + i);
  check_one(3, TSR_I32, 41);
  check_one(12345, TSR_I64, 42);
}

/* A block larger than the request serves it in cache mode (within the documented slack), and
   goes back to the cache as its own class; without the cache there is no such lending. */
static void test_lending(void **state) {
  (void)state;
  TSR_ASSERT_OK(tsr_device_trim(gpu));
  size_t s0[4], s1[4], s2[4];
  stats(s0);
  int64_t big = 5 << 20, small = 4 << 20; /* bytes: 20 MiB and 16 MiB (f32) */
  tsr_array *a = NULL, *b = NULL;
  TSR_ASSERT_OK(tsr_empty(1, &big, TSR_F32, gpu, &a));
  TSR_ASSERT_OK(tsr_array_release(a));
  TSR_ASSERT_OK(tsr_empty(1, &small, TSR_F32, gpu, &b));
  stats(s1);
  if (exact) {
    assert_int_equal(s1[MALLOCS], s0[MALLOCS] + 2);
    assert_int_equal(s1[LAST], (size_t)small * 4);
    assert_int_equal(s1[LIVE], s0[LIVE] + (size_t)small * 4);
  } else {
    assert_int_equal(s1[MALLOCS], s0[MALLOCS] + 1); /* the 20 MiB block was lent */
    assert_int_equal(s1[LIVE], s0[LIVE] + (size_t)big * 4);
  }
  TSR_ASSERT_OK(tsr_array_release(b));
  TSR_ASSERT_OK(tsr_device_trim(gpu));
  stats(s2);
  assert_int_equal(s2[LIVE], s0[LIVE]);
  assert_int_equal(s2[FREES] - s0[FREES], s2[MALLOCS] - s0[MALLOCS]);
}

/* Operations that take scratch memory give the right answer and leave nothing behind: a sum
   split over blocks (partials in scratch) and a split-K GEMM (a workspace per split). */
static void test_scratch_users(void **state) {
  (void)state;
  TSR_ASSERT_OK(tsr_device_trim(gpu));
  size_t s0[4], s1[4];
  stats(s0);
  int64_t n = 1 << 18;
  double *hx = NULL;
  tsr_array *x = tsr_test_random_array(1, &n, TSR_F64, gpu, 7, &hx);
  tsr_array *sum = NULL;
  TSR_ASSERT_OK(tsr_sum(x, TSR_AXIS_ALL, 0, &sum));
  double got = 0, ref = 0, mag = 0;
  TSR_ASSERT_OK(tsr_array_read(sum, &got, sizeof got));
  for (int64_t i = 0; i < n; i++)
    ref += hx[i], mag += fabs(hx[i]);
  assert_true(fabs(got - ref) <= 1e-12 * mag);

  /* m = n = 8, k = 4096: few output tiles, a long k, so the native kernel splits k. */
  const int64_t m = 8, nn = 8, k = 4096;
  int64_t sa[2] = {m, k}, sb[2] = {k, nn}, sc[2] = {m, nn};
  double *ha = NULL, *hb = NULL;
  tsr_array *a = tsr_test_random_array(2, sa, TSR_F32, gpu, 8, &ha);
  tsr_array *b = tsr_test_random_array(2, sb, TSR_F32, gpu, 9, &hb);
  tsr_array *c = NULL;
  TSR_ASSERT_OK(tsr_empty(2, sc, TSR_F32, gpu, &c));
  TSR_ASSERT_OK(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c, TSR_GEMM_NATIVE));
  double *hc = tsr_test_read_f64(c);
  double *rc = tsr_test_ref_gemm(0, 0, m, nn, k, 1.0, ha, hb, 0.0, NULL);
  assert_true(tsr_test_rel_error(hc, rc, (size_t)(m * nn)) <= tsr_test_tol(TSR_F32, k));
  free(hx), free(ha), free(hb), free(hc), free(rc);
  tsr_array_release(x), tsr_array_release(sum);
  tsr_array_release(a), tsr_array_release(b), tsr_array_release(c);
  TSR_ASSERT_OK(tsr_device_trim(gpu));
  stats(s1);
  assert_int_equal(s1[LIVE], s0[LIVE]);
  assert_int_equal(s1[FREES] - s0[FREES], s1[MALLOCS] - s0[MALLOCS]);
  /* Four arrays, the sum's output and at least one scratch buffer came from cudaMalloc (in
     cache mode some may have been served by the cache instead). */
  if (exact) assert_true(s1[MALLOCS] - s0[MALLOCS] >= 6);
}

int main(void) {
  const char *mode = getenv("TSR_GPU_ALLOC_CACHE");
  exact = mode && strcmp(mode, "0") == 0;
  tsr_status st = tsr_device_parse("cuda", &gpu);
  if (st != TSR_OK) {
    fprintf(stderr, "tsr_device_parse(cuda): %s\n", tsr_last_error());
    return 1;
  }
  printf("allocator mode: %s\n", exact ? "exact (TSR_GPU_ALLOC_CACHE=0)" : "caching");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_lending),
      cmocka_unit_test(test_scratch_users),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
