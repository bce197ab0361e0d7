/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU GEMM, the kernels' room (src/omp/gemm/kernels/): the micro-kernels and the sup (small,
 * unpacked: BLIS's term) kernels of every ISA, both precisions, all four transpose combinations,
 * alpha/beta special cases, padded leading dimensions, sizes around the register blocks (MR, NR),
 * streaming stores, general strides, no access outside the matrices (guard pages), and the ISA
 * packing routines against the portable ones, against a float64 reference on random inputs. Calls
 * the backend entry tsr__omp_gemm directly (linked against the static library).
 *
 * The kernel under test comes from TSR_CPU_KERNEL (portable, avx2, avx512; CTest runs the
 * program once per value). A kernel the CPU lacks makes the program exit 77 (skipped). The
 * shared helpers (the reference check, the tuning object) are gemm_test.h.
 */
#include "gemm_test.h"

/* Sizes 1, primes, and just under/at/over MR and NR, in every dimension. */
static void check_sup_shapes(void) {
  tg_set_threads(2);
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *kr = tg_cfg_of(tg_dtypes[d], 2).ker;
    const int64_t s[] = {1,
                         2,
                         3,
                         5,
                         13,
                         31,
                         kr->mr - 1,
                         kr->mr,
                         kr->mr + 1,
                         kr->nr - 1,
                         kr->nr,
                         kr->nr + 1,
                         2 * kr->mr + 3,
                         2 * kr->nr + 1,
                         67};
    const int ns = (int)(sizeof s / sizeof s[0]);
    for (int i = 0; i < ns; ++i) {
      if (s[i] < 1) continue;
      tg_check_all_trans(tg_dtypes[d], s[i], s[i], s[i], 100 + (uint64_t)i);
      tg_check_all_trans(tg_dtypes[d], s[i], 7, 3, 200 + (uint64_t)i);
      tg_check_all_trans(tg_dtypes[d], 5, s[i], 11, 300 + (uint64_t)i);
      tg_check_all_trans(tg_dtypes[d], 3, 4, s[i], 400 + (uint64_t)i);
      tg_check_all_trans(tg_dtypes[d], s[i], s[(i + 5) % ns], s[(i + 9) % ns], 500 + (uint64_t)i);
    }
  }
}

/* Those shapes through the packed path and (on one thread, where the kernel has one) the
   sup path. */
static void test_sup_shapes(void **state) {
  (void)state;
  tg_tuning.sup_mnk = 0;
  check_sup_shapes();
  tg_tuning.sup_mnk = -1;
  check_sup_shapes();
}

/* No access outside the matrices: A, B and C exactly sized, with an inaccessible page right
   after their last element (then right before their first), every transpose, no padding, shapes
   with partial micro-panels and tiles in every dimension, through the packed path, the sup
   path and its k blocks, on 1 and 2 threads. A masked load or store that covers one lane too
   many, or a packing loop that reads a full micro-panel past the last row, faults here (in the
   other tests it lands in the allocation's slack). */
static void test_guard_pages(void **state) {
  (void)state;
  for (int d = 0; d < 2; ++d)
    for (int t = 1; t <= 2; ++t) {
      tg_set_threads(t);
      const tsr__gemm_kernel *kr = tg_cfg_of(tg_dtypes[d], t).ker;
      const int64_t mr = kr->mr, nr = kr->nr;
      const int64_t shapes[][3] = {
          {1, 1, 1},           {mr + 1, nr - 1, 17}, {2 * mr - 1, 3, 29},
          {3, 2 * nr + 5, 31}, {mr + 5, nr + 7, 70}, {2 * mr + 3, 2 * nr + 1, 300},
          {2, 2 * nr + 3, 37}, {mr + 2, 2, 19}}; /* the last two: short dot products */
      for (int path = 0; path < 3; ++path) {
        /* 0: packed; 1: sup, one k block; 2: sup, k blocks of 7. */
        tg_tuning.sup_mnk = path == 0 ? 0 : INT64_MAX;
        tg_tuning.sup_kblock = path == 2 ? 7 : 0;
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
          for (int tr = 0; tr < 4; ++tr)
            for (int gd = 1; gd <= 2; ++gd) {
              gemm_case gc = {.dtype = tg_dtypes[d],
                              .ta = tr & 1,
                              .tb = tr >> 1,
                              .m = shapes[i][0],
                              .n = shapes[i][1],
                              .k = shapes[i][2],
                              .alpha = 1.25,
                              .beta = tr == 1 ? 0.0 : -0.5,
                              .path = TSR_GEMM_NATIVE,
                              .guard = gd};
              tg_check(gc, 1200 + (uint64_t)(i * 16 + (size_t)tr * 4 + (size_t)gd));
            }
      }
    }
  tg_tuning.sup_mnk = -1;
  tg_tuning.sup_kblock = 0;
}

/* The sup path's wide strips (gemm_sup_impl.h, TSR__SUP_NVW: AVX-512 takes op(B) in place in
   strips of 4 vectors, tiles of at most 6 rows): every tile height 1-7, strips of 3 and 4
   vectors with a full or a masked last vector, a wide strip followed by a narrow remainder,
   both strides of op(A), alpha 1 and not, beta 0 and not, guard pages after and before each
   operand. Where the kernel has no wide strips the same cases run its narrow tiles. */
static void test_sup_wide_tiles(void **state) {
  (void)state;
  tg_set_threads(1);
  tg_tuning.sup_mnk = INT64_MAX;
  tg_tuning.sup_kblock = 0;
  for (int d = 0; d < 2; ++d) {
    const int64_t l =
        tg_cfg_of(tg_dtypes[d], 1).ker->nr / 2; /* lanes of a vector (NR = 2 vectors) */
    const int64_t ns[] = {2 * l + 1, 3 * l, 4 * l - 1, 4 * l, 5 * l + 1, 10 * l + 3};
    for (int64_t m = 1; m <= 7; ++m)
      for (size_t i = 0; i < sizeof ns / sizeof ns[0]; ++i)
        for (int t = 0; t < 4; ++t) {
          gemm_case gc = {.dtype = tg_dtypes[d],
                          .ta = t & 1,
                          .tb = false,
                          .m = m,
                          .n = ns[i],
                          .k = t < 2 ? 9 : 1,
                          .alpha = t == 1 ? 1.0 : 1.25,
                          .beta = t == 2 ? 0.0 : -0.5,
                          .path = TSR_GEMM_NATIVE,
                          .guard = 1 + (int)((i + (size_t)m) % 2)};
          tg_check(gc, 3100 + (uint64_t)(m * 64 + (int64_t)i * 4 + t));
        }
  }
  tg_tuning.sup_mnk = -1;
}

/* Streaming (non-temporal) stores of C (tsr__gemm_stream_c), with the size threshold at 0 so
   that small cases take the path: full and edge tiles, every transpose, 1-3 threads, C
   starting as NaN (never read); and the cases that must not stream. */
static void test_streaming_stores(void **state) {
  (void)state;
  tg_tuning.stream_min_bytes = 0;
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dt = tg_dtypes[d];
    const int64_t line = dt == TSR_F32 ? 16 : 8; /* elements per 64 bytes */
    for (int t = 1; t <= 3; ++t) {
      tg_set_threads(t);
      const tsr__gemm_config cf = tg_cfg_of(dt, t);
      const int mr = cf.ker->mr, nr = cf.ker->nr;
      const int has =
          (dt == TSR_F32 ? cf.ker->ukr_stream_f32 != NULL : cf.ker->ukr_stream_f64 != NULL) ? 1
                                                                                            : -1;
      const int64_t shapes[][3] = {{3 * mr + 5, 4 * nr + 7, cf.kc},
                                   {mr, nr, 1},
                                   {2 * mr, 5 * nr, 37},
                                   {131, 3 * nr + 1, 64}};
      for (int sh = 0; sh < 4; ++sh) {
        const int64_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
        const int64_t ldc = (n + line - 1) / line * line;
        for (int tr = 0; tr < 4; ++tr) {
          gemm_case gc = {.dtype = dt,
                          .ta = tr & 1,
                          .tb = tr >> 1,
                          .m = m,
                          .n = n,
                          .k = k,
                          .alpha = tr == 3 ? -0.75 : 1.0,
                          .beta = 0.0,
                          .pad_a = tr,
                          .pad_c = ldc - n,
                          .nan_c = true,
                          .path = TSR_GEMM_NATIVE,
                          .align_c = true,
                          .expect_stream = has};
          tg_check(gc, 12000 + (uint64_t)(d * 1000 + t * 100 + sh * 10 + tr));
        }
        /* Not streamed: beta != 0 (C is read), C or its rows misaligned, k over KC (C is
           written once per slice). */
        gemm_case no = {.dtype = dt,
                        .m = m,
                        .n = n,
                        .k = k,
                        .alpha = 1.0,
                        .beta = 0.5,
                        .pad_c = ldc - n,
                        .path = TSR_GEMM_NATIVE,
                        .align_c = true,
                        .expect_stream = -1};
        tg_check(no, 13000 + (uint64_t)(d * 1000 + t * 100 + sh));
        no.beta = 0.0;
        no.align_c = false;
        tg_check(no, 13500 + (uint64_t)(d * 1000 + t * 100 + sh));
        no.align_c = true;
        no.pad_c = ldc - n + 1;
        tg_check(no, 14000 + (uint64_t)(d * 1000 + t * 100 + sh));
        no.pad_c = ldc - n;
        no.k = cf.kc + 1;
        tg_check(no, 14500 + (uint64_t)(d * 1000 + t * 100 + sh));
      }
    }
  }
  /* The default threshold (the last-level cache): a small C is not streamed. */
  tg_tuning.stream_min_bytes = -1;
  tg_set_threads(2);
  tg_check((gemm_case){.dtype = TSR_F32,
                       .m = 64,
                       .n = 64,
                       .k = 64,
                       .alpha = 1.0,
                       .path = TSR_GEMM_NATIVE,
                       .align_c = true,
                       .expect_stream = -1},
           15000);
}

/* beta == 0 never reads C (NaN must not propagate); alpha == 0 and k == 0 never read A/B. */
static void test_alpha_beta_special(void **state) {
  (void)state;
  tg_set_threads(2);
  for (int d = 0; d < 2; ++d) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = (t >> 1) & 1;
      /* beta = 0 over NaN C, small and threaded sizes. */
      tg_check((gemm_case){.dtype = tg_dtypes[d],
                           .ta = ta,
                           .tb = tb,
                           .m = 37,
                           .n = 41,
                           .k = 29,
                           .alpha = 1.5,
                           .beta = 0.0,
                           .pad_c = 2,
                           .nan_c = true,
                           .path = TSR_GEMM_NATIVE},
               2000 + (uint64_t)t);
      tg_check((gemm_case){.dtype = tg_dtypes[d],
                           .ta = ta,
                           .tb = tb,
                           .m = 90,
                           .n = 80,
                           .k = 70,
                           .alpha = -1.0,
                           .beta = 0.0,
                           .nan_c = true,
                           .path = TSR_GEMM_NATIVE},
               2010 + (uint64_t)t);
      /* alpha = 0 with NaN A and B: C = beta*C. */
      tg_check((gemm_case){.dtype = tg_dtypes[d],
                           .ta = ta,
                           .tb = tb,
                           .m = 33,
                           .n = 17,
                           .k = 8,
                           .alpha = 0.0,
                           .beta = -2.0,
                           .pad_c = 1,
                           .nan_ab = true,
                           .path = TSR_GEMM_NATIVE},
               2020 + (uint64_t)t);
      /* alpha = 0 and beta = 0 over NaN C: zeros. */
      tg_check((gemm_case){.dtype = tg_dtypes[d],
                           .ta = ta,
                           .tb = tb,
                           .m = 9,
                           .n = 70,
                           .k = 8,
                           .alpha = 0.0,
                           .beta = 0.0,
                           .nan_c = true,
                           .nan_ab = true,
                           .path = TSR_GEMM_NATIVE},
               2030 + (uint64_t)t);
    }
    /* k == 0: C = beta*C, and beta = 0 writes zeros over NaN. */
    tg_check((gemm_case){.dtype = tg_dtypes[d],
                         .m = 6,
                         .n = 5,
                         .k = 0,
                         .alpha = 1.0,
                         .beta = 3.0,
                         .pad_c = 2,
                         .path = TSR_GEMM_NATIVE},
             2040);
    tg_check((gemm_case){.dtype = tg_dtypes[d],
                         .m = 6,
                         .n = 5,
                         .k = 0,
                         .alpha = 1.0,
                         .beta = 0.0,
                         .nan_c = true,
                         .path = TSR_GEMM_NATIVE},
             2041);
    /* m == 0 or n == 0: nothing to do (the padding check covers n == 0). */
    tg_check((gemm_case){.dtype = tg_dtypes[d],
                         .m = 0,
                         .n = 5,
                         .k = 3,
                         .alpha = 1.0,
                         .beta = 1.0,
                         .path = TSR_GEMM_NATIVE},
             2050);
    tg_check((gemm_case){.dtype = tg_dtypes[d],
                         .m = 4,
                         .n = 0,
                         .k = 3,
                         .alpha = 1.0,
                         .beta = 1.0,
                         .pad_c = 3,
                         .path = TSR_GEMM_NATIVE},
             2051);
  }
}

/* The micro-kernel itself with a non-unit column stride of C (the driver always passes
   unit stride; the contract allows any). */
static void test_ukr_general_stride(void **state) {
  (void)state;
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *kr = tg_cfg_of(tg_dtypes[d], 1).ker;
    const int mr = kr->mr, nr = kr->nr;
    const int64_t k = 19, rs = 1, cs = mr + 2; /* C stored column-major with padding */
    double *ha = malloc(sizeof(double) * (size_t)(mr * k));
    double *hb = malloc(sizeof(double) * (size_t)(nr * k));
    double *hc = malloc(sizeof(double) * (size_t)(cs * nr));
    void *ap = NULL, *bp = NULL, *cp = NULL;
    assert_non_null(ha);
    assert_non_null(hb);
    assert_non_null(hc);
    TSR_ASSERT_OK(tsr__host_alloc((size_t)(mr * k) * 8, &ap));
    TSR_ASSERT_OK(tsr__host_alloc((size_t)(nr * k) * 8, &bp));
    TSR_ASSERT_OK(tsr__host_alloc((size_t)(cs * nr) * 8, &cp));
    tsr_test_fill_random(ha, (size_t)(mr * k), 3000);
    tsr_test_fill_random(hb, (size_t)(nr * k), 3001);
    tsr_test_fill_random(hc, (size_t)(cs * nr), 3002);
    for (int beta_zero = 0; beta_zero < 2; ++beta_zero) {
      const double alpha = 0.5, beta = beta_zero ? 0.0 : -1.25;
      for (int64_t i = 0; i < mr * k; ++i)
        tg_store(tg_dtypes[d], ap, (size_t)i, ha[i]);
      for (int64_t i = 0; i < nr * k; ++i)
        tg_store(tg_dtypes[d], bp, (size_t)i, hb[i]);
      for (int64_t i = 0; i < cs * nr; ++i)
        tg_store(tg_dtypes[d], cp, (size_t)i, hc[i]);
      if (tg_dtypes[d] == TSR_F32)
        kr->ukr_f32(k, (float)alpha, ap, bp, (float)beta, cp, rs, cs);
      else
        kr->ukr_f64(k, alpha, ap, bp, beta, cp, rs, cs);
      /* Elementwise bound (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
         sec. 3.1): a k-term dot product in precision u has |error| <= gamma_k * sum|a||b|,
         gamma_k = k*u/(1-k*u); scaling by alpha and adding beta*C add two more roundings,
         so |C - C_exact| <= gamma_(k+2) * (|alpha| sum_p |a_ip b_pj| + |beta c_ij|).
         The worst ratio of error to that bound must not exceed 1. */
      const double u = tg_dtypes[d] == TSR_F32 ? 0x1p-24 : 0x1p-53;
      const double gam = (double)(k + 2) * u / (1 - (double)(k + 2) * u);
      double maxerr = 0;
      for (int i = 0; i < mr; ++i)
        for (int j = 0; j < nr; ++j) {
          double s = 0, sabs = 0;
          for (int64_t p = 0; p < k; ++p) {
            const double x = tg_load(tg_dtypes[d], ap, (size_t)(p * mr + i)),
                         y = tg_load(tg_dtypes[d], bp, (size_t)(p * nr + j));
            s += x * y;
            sabs += fabs(x * y);
          }
          const double c0 = hc[i * rs + j * cs];
          const double c0r = tg_dtypes[d] == TSR_F32 ? (double)(float)c0 : c0;
          const double want = alpha * s + (beta_zero ? 0.0 : beta * c0r);
          const double bound =
              gam * (fabs(alpha) * sabs + (beta_zero ? 0.0 : fabs(beta * c0r))) + 0x1p-1000;
          const double e =
              fabs(tg_load(tg_dtypes[d], cp, (size_t)(i * rs + j * cs)) - want) / bound;
          if (e > maxerr) maxerr = e;
        }
      /* Padding rows mr..cs-1 of each column are untouched. */
      for (int j = 0; j < nr; ++j)
        for (int64_t i = mr; i < cs; ++i) {
          const double orig =
              tg_dtypes[d] == TSR_F32 ? (double)(float)hc[i + j * cs] : hc[i + j * cs];
          assert_true(tg_load(tg_dtypes[d], cp, (size_t)(i + j * cs)) == orig);
        }
      if (!(maxerr <= 1.0))
        fail_msg("micro-kernel %s with column stride %lld: error %.3g x the rounding bound",
                 kr->name, (long long)cs, maxerr);
    }
    free(ha);
    free(hb);
    free(hc);
    tsr__host_free(ap);
    tsr__host_free(bp);
    tsr__host_free(cp);
  }
}

/* Every kernel's packing routines (the ISA-specific ones: in-register transposes, masked k
   tails, overlapping stores) against the portable routines (kernels/portable/gemm_pack_portable.c),
   element for element: op(A) and op(B) stored both ways, every partial micro-panel height and
   width, k from 1 past two vector chunks, padded leading dimensions, random values; and nothing
   written past the packed block (a sentinel after it). op(B) stored transposed also into panels of
   NR/2 columns (one vector: the sup path's narrow strips). The portable routines define the
   layout (gemm_pack_portable.c). */
static void test_packing_matches_portable(void **state) {
  (void)state;
  int tested = 0;
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *ks[8];
    const int nk = tsr__gemm_kernel_list(tg_dtypes[d], ks, 8);
    const bool f32 = tg_dtypes[d] == TSR_F32;
    const size_t es = f32 ? 4 : 8;
    for (int i = 0; i < nk; ++i) {
      if (!tg_isa_under_test(ks[i])) continue;
      ++tested;
      const int mr = ks[i]->mr, nr = ks[i]->nr;
      const int64_t rows[] = {1,          mr - 1, mr,     mr + 1, 2 * mr,
                              3 * mr + 2, nr / 2, nr - 1, nr,     nr + 3};
      const int64_t ks_[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 33, 40};
      for (size_t ir = 0; ir < sizeof rows / sizeof rows[0]; ++ir)
        for (size_t ik = 0; ik < sizeof ks_ / sizeof ks_[0]; ++ik)
          for (int side = 0; side < 3; ++side) /* A (MR panels), B (NR panels), B (NR / 2) */
            for (int tr = 0; tr < 2; ++tr) {
              const int wb = side == 2 ? nr / 2 : nr; /* B's panel width */
              const int64_t len = rows[ir], kc = ks_[ik], step = side ? wb : mr;
              if (len < 1 || (side == 2 && !tr)) continue;
              /* Stored as (len x kc) when the packed rows are contiguous (A not transposed,
                 B transposed), else (kc x len); leading dimension 3 past the width. */
              const bool rows_contig = side == 0 ? !tr : tr;
              const int64_t ld = (rows_contig ? kc : len) + 3;
              const int64_t stored = (rows_contig ? len : kc) * ld;
              const int64_t packed = (len + step - 1) / step * step * kc;
              char *src = malloc((size_t)stored * es);
              /* 64-byte aligned, as the driver's buffers (the AVX-512 copies store aligned). */
              const size_t pbytes = ((size_t)(packed + 16) * es + 63) / 64 * 64;
              char *want = aligned_alloc(64, pbytes);
              char *got = aligned_alloc(64, pbytes);
              assert_non_null(src);
              assert_non_null(want);
              assert_non_null(got);
              double *vals = malloc((size_t)stored * sizeof *vals);
              assert_non_null(vals);
              tsr_test_fill_random(vals, (size_t)stored,
                                   9500 + (uint64_t)(ir * 977 + ik * 31 + side * 7 + tr));
              for (int64_t e = 0; e < stored; ++e)
                tg_store(tg_dtypes[d], src, (size_t)e, vals[e]);
              free(vals);
              /* The same sentinel bytes past the packed block in both, and garbage inside
                 `got` (every element must be written, padding as zeros). */
              memset(want, 0x5A, (size_t)(packed + 16) * es);
              memset(got, 0x5A, (size_t)(packed + 16) * es);
              if (f32) {
                const float *s = (const float *)(const void *)src;
                if (side == 0) {
                  tsr__gemm_pack_a_f32(mr, len, kc, s, ld, tr, (float *)(void *)want);
                  ks[i]->pack_a_f32(mr, len, kc, s, ld, tr, (float *)(void *)got);
                } else {
                  tsr__gemm_pack_b_f32(wb, kc, len, s, ld, tr, (float *)(void *)want);
                  ks[i]->pack_b_f32(wb, kc, len, s, ld, tr, (float *)(void *)got);
                }
              } else {
                const double *s = (const double *)(const void *)src;
                if (side == 0) {
                  tsr__gemm_pack_a_f64(mr, len, kc, s, ld, tr, (double *)(void *)want);
                  ks[i]->pack_a_f64(mr, len, kc, s, ld, tr, (double *)(void *)got);
                } else {
                  tsr__gemm_pack_b_f64(wb, kc, len, s, ld, tr, (double *)(void *)want);
                  ks[i]->pack_b_f64(wb, kc, len, s, ld, tr, (double *)(void *)got);
                }
              }
              if (memcmp(want, got, (size_t)(packed + 16) * es) != 0) {
                int64_t e = 0;
                while (memcmp(want + e * es, got + e * es, es) == 0)
                  ++e;
                fail_msg("%s pack_%c (%s, panels of %d) %s: %lld x %lld: element %lld of %lld "
                         "differs%s",
                         ks[i]->name, side ? 'b' : 'a', tr ? "transposed" : "as stored", step,
                         f32 ? "f32" : "f64", (long long)len, (long long)kc, (long long)e,
                         (long long)packed, e >= packed ? " (written past the packed block)" : "");
              }
              free(src);
              free(want);
              free(got);
            }
    }
  }
  assert_true(tested > 0);
}

/* The sup path (no packing) of every kernel this CPU runs that has one: every row
   count of a tile up to 2*MR+3, masked last vectors (n around one and two vectors), k from 1
   to past L1, all transposes, beta 0 / 1 / 0.5, padded leading dimensions, NaN C with beta 0;
   and the driver's choice of path. */
static void test_sup_path(void **state) {
  (void)state;
  tg_set_threads(1);
  int tested = 0;
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *ks[8];
    const int nk = tsr__gemm_kernel_list(tg_dtypes[d], ks, 8);
    for (int i = 0; i < nk; ++i) {
      if (!tg_isa_under_test(ks[i])) continue;
      /* The library's own configuration: the last kernel's cf (below) ended with its
         iteration. */
      tg_tuning.config[tg_dtypes[d] == TSR_F32 ? 0 : 1] = NULL;
      const tsr__gemm_config def = tg_cfg_of(tg_dtypes[d], 1);
      const tsr__gemm_config cf = {ks[i],     def.kc,     def.mc,       def.nc,
                                   def.grain, "override", def.sup_bytes};
      tg_tuning.config[tg_dtypes[d] == TSR_F32 ? 0 : 1] = &cf;
      const int mr = ks[i]->mr, nr = ks[i]->nr, lanes = nr / 2;
      tsr__gemm_args probe = {
          .dtype = tg_dtypes[d], .m = 3, .n = 3, .k = 3, .alpha = 1, .tuning = &tg_tuning};
      tg_tuning.sup_mnk = INT64_MAX;
      assert_int_equal(tsr__gemm_sup_path(&probe, &cf), ks[i]->sup != NULL);
      if (ks[i]->sup == NULL) continue;
      ++tested;
      /* Row counts: the tile heights of op(A) = A (at most TSR__SUP_MRS rows a tile,
         gemm_sup_impl.h) and of A^T (up to MR), split into near-equal blocks. */
      const int64_t ms[] = {1, 2, mr - 1, mr, mr + 1, 2 * mr + 3, 4, 9, 20, 25};
      const int64_t ns[] = {1, lanes - 1, lanes, lanes + 1, nr - 1, nr, nr + 1, 2 * nr + 5};
      const int64_t kk[] = {1, 7, 301};
      for (int a = 0; a < 10; ++a)
        for (int b = 0; b < 8; ++b)
          for (int c = 0; c < 3; ++c)
            tg_check_all_trans(tg_dtypes[d], ms[a], ns[b], kk[c],
                               9000 + (uint64_t)(i * 1000 + a * 100 + b * 10 + c));
      for (int t = 0; t < 4; ++t)
        tg_check((gemm_case){.dtype = tg_dtypes[d],
                             .ta = t & 1,
                             .tb = (t >> 1) & 1,
                             .m = mr + 3,
                             .n = nr + lanes / 2 + 1,
                             .k = 17,
                             .alpha = -1.25,
                             .beta = 0.0,
                             .pad_c = 3,
                             .nan_c = true,
                             .path = TSR_GEMM_NATIVE},
                 9900 + (uint64_t)t);
      /* B's rows 4 KiB apart: the strips are packed (tsr__gemm_sup_pack_b), in place for
         one row block. */
      const int64_t ld4k = 4096 / (tg_dtypes[d] == TSR_F32 ? 4 : 8), n4 = 2 * nr + 5;
      for (int r = 0; r < 2; ++r) {
        const gemm_case gc = {.dtype = tg_dtypes[d],
                              .m = r ? 3 * mr + 2 : mr - 1,
                              .n = n4,
                              .k = 23,
                              .alpha = 0.5,
                              .beta = 1.0,
                              .pad_b = ld4k - n4,
                              .path = TSR_GEMM_NATIVE};
        tsr__gemm_args pa = {
            .dtype = tg_dtypes[d], .m = gc.m, .n = n4, .k = 23, .ldb = ld4k, .tuning = &tg_tuning};
        assert_int_equal(tsr__gemm_sup_pack_b(&pa, mr), r == 1);
        tg_check(gc, 9980 + (uint64_t)r);
      }
      /* k blocks (tsr__gemm_sup_kblock; in production when op(B) exceeds L2), forced to 7
         here: several passes over C with beta applied once, B in place with its next strips
         prefetched, or B^T's strips packed block by block; k short of, at, just past and far
         past one block. */
      tg_tuning.sup_kblock = 7;
      const int64_t kbs[] = {6, 7, 8, 301};
      for (int a = 0; a < 6; a += 2)
        for (int b = 1; b < 8; b += 2)
          for (int c = 0; c < 4; ++c)
            tg_check_all_trans(tg_dtypes[d], ms[a], ns[b], kbs[c],
                               9500 + (uint64_t)(i * 1000 + a * 100 + b * 10 + c));
      tg_tuning.sup_kblock = 0;
      /* The default k block: op(B) past L2, for one row block and for several. */
      {
        const int64_t es = (int64_t)tsr__dtype_size(tg_dtypes[d]), nb = 2 * nr + 5;
        const int64_t kl = (int64_t)tsr__cpu_facts_get()->cache[1].size / (nb * es) + 37;
        tsr__gemm_args pb = {
            .dtype = tg_dtypes[d], .m = 1, .n = nb, .k = kl, .ldb = nb, .tuning = &tg_tuning};
        assert_true(tsr__gemm_sup_kblock(&pb, mr) < kl);
        assert_true(tsr__gemm_sup_kblock(&pb, mr) >= 1);
        for (int r = 0; r < 2; ++r) {
          const int64_t mm = r ? 2 * mr + 1 : 1;
          const gemm_case gc = {.dtype = tg_dtypes[d],
                                .m = mm,
                                .n = nb,
                                .k = kl,
                                .alpha = -0.5,
                                .beta = 0.5,
                                .pad_b = 1,
                                .pad_c = 2,
                                .path = TSR_GEMM_NATIVE};
          tg_check(gc, 9990 + (uint64_t)r);
        }
      }
      /* On 2 and 3 threads (m*n*k above the serial threshold): units of column chunks, of
         row chunks, and a deep k. */
      for (int t = 2; t <= 3; ++t) {
        tg_set_threads(t);
        tg_check_all_trans(tg_dtypes[d], 70, 9 * nr + 5, 40, 9950 + (uint64_t)(i * 10 + t));
        tg_check_all_trans(tg_dtypes[d], 60 * mr + 1, nr + 3, 50, 9960 + (uint64_t)(i * 10 + t));
        tg_check_all_trans(tg_dtypes[d], 2 * mr + 1, 2 * nr - 1, 2000,
                           9970 + (uint64_t)(i * 10 + t));
      }
      tg_set_threads(1);
      /* The default rule: op(A) and C within L2, or a single NR-column strip. */
      tg_tuning.sup_mnk = -1;
      const int64_t big = 4096; /* 4096 x 4096 elements of A: 64 MiB f32 */
      probe = (tsr__gemm_args){
          .dtype = tg_dtypes[d], .m = 100, .n = 100, .k = 100, .alpha = 1, .tuning = &tg_tuning};
      assert_true(tsr__gemm_sup_path(&probe, &cf));
      probe.m = probe.k = big;
      assert_false(tsr__gemm_sup_path(&probe, &cf));
      probe.n = nr;
      assert_true(tsr__gemm_sup_path(&probe, &cf));
      probe = (tsr__gemm_args){
          .dtype = tg_dtypes[d], .m = big, .n = big, .k = 2, .alpha = 1, .tuning = &tg_tuning};
      assert_false(tsr__gemm_sup_path(&probe, &cf)); /* C of 64 MiB */
      /* op(A) = A^T past L1 with its rows 2 KiB or more apart (the broadcasts miss in a new
         page every k step): packed, unless C is one strip; rows closer, or op(A) within L1:
         unpacked, as op(A) = A is (cf's own bound permitting). */
      {
        const int64_t es = (int64_t)tsr__dtype_size(tg_dtypes[d]), far = 2048 / es;
        const int64_t l1k = (int64_t)tsr__cpu_facts_get()->cache[0].size / (far * es) + 1;
        probe = (tsr__gemm_args){.dtype = tg_dtypes[d],
                                 .m = far,
                                 .n = 2 * nr,
                                 .k = l1k,
                                 .trans_a = true,
                                 .lda = far,
                                 .alpha = 1,
                                 .tuning = &tg_tuning};
        const bool within = (double)(far * l1k * es) <= (double)cf.sup_bytes &&
                            (double)(far * 2 * nr * es) <= (double)cf.sup_bytes;
        assert_false(tsr__gemm_sup_path(&probe, &cf));
        probe.trans_a = false;
        probe.lda = l1k;
        assert_int_equal(tsr__gemm_sup_path(&probe, &cf), within);
        probe.trans_a = true;
        probe.lda = far;
        probe.n = nr; /* one strip: op(A) read once */
        assert_true(tsr__gemm_sup_path(&probe, &cf));
        probe.n = 2 * nr;
        probe.k = l1k - 2; /* within L1 */
        assert_int_equal(tsr__gemm_sup_path(&probe, &cf),
                         (double)(far * probe.k * es) <= (double)cf.sup_bytes && within);
      }
      /* op(B) past L2: k blocks, except for several row blocks with B's rows 4 KiB apart
         (one L1 set), which take op(B) in one block; the sup path either way. */
      {
        const int64_t es = (int64_t)tsr__dtype_size(tg_dtypes[d]), n4k = 4096 / es;
        const int64_t kl = (int64_t)tsr__cpu_facts_get()->cache[1].size / 4096 + 64;
        probe = (tsr__gemm_args){.dtype = tg_dtypes[d],
                                 .m = mr + 1,
                                 .n = n4k,
                                 .k = kl,
                                 .ldb = n4k,
                                 .alpha = 1,
                                 .tuning = &tg_tuning};
        assert_int_equal(tsr__gemm_sup_kblock(&probe, mr), kl);
        assert_true(tsr__gemm_sup_path(&probe, &cf));
        probe.m = mr;
        assert_true(tsr__gemm_sup_kblock(&probe, mr) < kl);
        probe.m = mr + 1;
        probe.ldb = n4k + 1;
        assert_true(tsr__gemm_sup_kblock(&probe, mr) < kl);
        probe.ldb = kl;
        probe.trans_b = true;
        probe.trans_a = true;
        assert_true(tsr__gemm_sup_kblock(&probe, mr) < kl);
        assert_true(tsr__gemm_sup_path(&probe, &cf));
        /* A * B^T runs as dot products (k >= TSR__GEMM_DOT_MIN_K), in blocks of
           TSR__GEMM_DOT_KB bytes of a row. */
        probe.trans_a = false;
        assert_true(tsr__gemm_sup_dot(&probe));
        assert_false(tsr__gemm_sup_pack_b(&probe, mr));
        probe.k = 3 * TSR__GEMM_DOT_KB / es + 5;
        assert_int_equal(tsr__gemm_sup_kblock(&probe, mr), TSR__GEMM_DOT_KB / es);
        probe.k = TSR__GEMM_DOT_MIN_K - 1;
        assert_false(tsr__gemm_sup_dot(&probe));
        assert_true(tsr__gemm_sup_pack_b(&probe, mr));
        /* Shorter k, from TSR__GEMM_DOT_SHORT_K: dot products where the strips would waste
           the vector or the packing would cost more than the product: op(B) = B^T of at most
           16 bytes of columns, C of at most 16 elements, or op(A) of up to 4 rows with k at
           least 16 per row. */
        tsr__gemm_args few = {.dtype = tg_dtypes[d],
                              .m = 1,
                              .n = 1,
                              .k = TSR__GEMM_DOT_SHORT_K,
                              .trans_b = true,
                              .lda = 5000,
                              .ldb = 5000,
                              .alpha = 1,
                              .tuning = &tg_tuning};
        assert_true(tsr__gemm_sup_dot(&few));
        few.k -= 1;
        assert_false(tsr__gemm_sup_dot(&few));
        few.k = 40;
        few.m = 1000;
        few.n = 16 / es;
        assert_true(tsr__gemm_sup_dot(&few));
        few.n += 1;
        assert_false(tsr__gemm_sup_dot(&few));
        few.m = 2;
        few.n = 1000;
        few.k = 32;
        assert_true(tsr__gemm_sup_dot(&few));
        few.k = 31;
        assert_false(tsr__gemm_sup_dot(&few));
        few.m = few.n = 4;
        assert_true(tsr__gemm_sup_dot(&few));
        few.trans_b = false; /* B in place: strips along its rows, never dot products */
        assert_false(tsr__gemm_sup_dot(&few));
      }
      /* The sup-path rule is the configuration's sup_bytes (the registry row's field, else
         L2): op(A) and C each within it take the sup path, one byte more does not. */
      {
        const int64_t es = (int64_t)tsr__dtype_size(tg_dtypes[d]), nn = 4 * nr;
        tsr__gemm_config lim = cf;
        lim.sup_bytes = 64 * nn * es; /* C of 64 x nn */
        tg_tuning.sup_mnk = -1;       /* the driver's own rule */
        probe = (tsr__gemm_args){
            .dtype = tg_dtypes[d], .m = 64, .n = nn, .k = nn, .alpha = 1, .tuning = &tg_tuning};
        assert_true(tsr__gemm_sup_path(&probe, &lim));
        lim.sup_bytes -= 1;
        assert_false(tsr__gemm_sup_path(&probe, &lim));
        probe.n = nr; /* one strip: whatever the bound */
        assert_true(tsr__gemm_sup_path(&probe, &lim));
        /* The default's rule: the registry row's own (Sapphire/Emerald Rapids: 96 KiB), else
           the L2 size. A call's configuration with no rule of its own takes the default's. */
        const int64_t l2 = (int64_t)tsr__cpu_facts_get()->cache[1].size > 0
                               ? (int64_t)tsr__cpu_facts_get()->cache[1].size
                               : 256 << 10;
        tsr__gemm_config base;
        tsr__gemm_config_default(tg_dtypes[d], 1, &base);
        const bool spr =
            strcmp(tsr__gemm_uarch_name(), "spr") == 0 && strcmp(base.source, "registry") == 0;
        assert_int_equal(def.sup_bytes, spr ? 96 << 10 : l2);
        tsr__gemm_config zero = cf, got;
        zero.sup_bytes = 0;
        tg_tuning.config[tg_dtypes[d] == TSR_F32 ? 0 : 1] = &zero;
        tsr__gemm_config_get(tg_dtypes[d], 1, &tg_tuning, &got);
        assert_int_equal(got.sup_bytes, def.sup_bytes);
        tg_tuning.config[tg_dtypes[d] == TSR_F32 ? 0 : 1] = &cf;
      }
      tg_tuning.sup_mnk = 0;
      probe = (tsr__gemm_args){
          .dtype = tg_dtypes[d], .m = 3, .n = 3, .k = 3, .alpha = 1, .tuning = &tg_tuning};
      assert_false(tsr__gemm_sup_path(&probe, &cf));
    }
    tg_tuning.config[tg_dtypes[d] == TSR_F32 ? 0 : 1] = NULL; /* the last cf ends here */
  }
  tg_tuning.sup_mnk = -1;
  tg_set_threads(2);
  if (tested == 0) skip();
}

int main(void) {
  const int rc = tg_setup();
  if (rc != 0) return rc;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sup_shapes),       cmocka_unit_test(test_guard_pages),
      cmocka_unit_test(test_sup_wide_tiles),   cmocka_unit_test(test_alpha_beta_special),
      cmocka_unit_test(test_streaming_stores), cmocka_unit_test(test_ukr_general_stride),
      cmocka_unit_test(test_sup_path),         cmocka_unit_test(test_packing_matches_portable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
