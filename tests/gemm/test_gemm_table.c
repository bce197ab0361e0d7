/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU GEMM, the kernel table itself (src/omp/gemm/kernels/gemm_kernels.c): one row per ISA
 * folder of src/omp/gemm/kernels/ (TSR_GEMM_ISA_FOLDERS, the folder names CMake found, comma
 * separated), named after its folder, and every kernel of every row checked field by field:
 * the required fields present (micro-kernel and packers of its dtype, register block, the
 * row's availability predicate), those of the other dtype absent, names unique and saying the
 * ISA and register block, MR x NR within the macro-kernel's edge tile (TSR__GEMM_MAX_TILE) and
 * NR even (the ISA packers' and sup path's half-width panels), f32 and f64 covered by every
 * ISA that has kernels; the look-ups (tsr__gemm_isa_name, _bit, _available, tsr__gemm_kernel_*)
 * agree with the rows; and, for the ISAs this CPU runs, each kernel's packers give the
 * portable packers' layout for its own MR and NR. Runs once, whatever TSR_CPU_KERNEL says.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_test.h"

#include "core/env.h"
#include "omp/gemm/gemm_tune.h"
#include "omp/gemm/kernels/kernels.h"

#ifndef TSR_GEMM_ISA_FOLDERS
#error "TSR_GEMM_ISA_FOLDERS: the ISA folders, comma separated (tests/gemm.cmake)"
#endif

/* The i-th folder name of TSR_GEMM_ISA_FOLDERS into buf; false past the last. */
static bool folder_at(int i, char *buf, size_t size) {
  const char *p = TSR_GEMM_ISA_FOLDERS;
  for (; i > 0 && p; --i) {
    p = strchr(p, ',');
    if (p) ++p;
  }
  if (!p || !*p) return false;
  const size_t n = strcspn(p, ",");
  snprintf(buf, size, "%.*s", (int)n, p);
  return n > 0;
}

/* One row per folder, in the folders' order, named after it. */
static void test_rows_are_the_folders(void **state) {
  (void)state;
  char name[64];
  int n = 0;
  while (folder_at(n, name, sizeof name)) {
    assert_true(n < tsr__gemm_nisas);
    assert_non_null(tsr__gemm_isas[n]);
    assert_non_null(tsr__gemm_isas[n]->name);
    assert_string_equal(tsr__gemm_isas[n]->name, name);
    ++n;
  }
  assert_int_equal(n, tsr__gemm_nisas);
  /* The portable ISA is every build's and every CPU's fallback. */
  assert_true(tsr__gemm_isa_available("portable"));
}

/* TSR_CPU_KERNEL's accepted values (src/core/env.c, which cannot see this table) are "auto" and
   the rows' names, in any order: a new ISA folder is selectable by its name, and the README's
   row (checked against env.c by tests/test_env.c) lists it. */
static void test_cpu_kernel_values_are_the_rows(void **state) {
  (void)state;
  const tsr__env_var *row = &tsr__env_table()[TSR__ENV_CPU_KERNEL];
  assert_string_equal(row->name, "TSR_CPU_KERNEL");
  assert_int_equal(row->kind, TSR__ENV_CHOICE);
  int values = 0, auto_seen = 0;
  for (const char *p = row->values; *p;) {
    const size_t n = strcspn(p, "|");
    int found = n == 4 && strncmp(p, "auto", 4) == 0;
    auto_seen += found;
    for (int i = 0; i < tsr__gemm_nisas && !found; i++)
      found = strlen(tsr__gemm_isas[i]->name) == n && strncmp(p, tsr__gemm_isas[i]->name, n) == 0;
    if (!found)
      print_error("TSR_CPU_KERNEL accepts '%.*s', which is no row of the kernel table\n", (int)n,
                  p);
    assert_true(found);
    values++;
    p += n + (p[n] == '|');
  }
  assert_int_equal(auto_seen, 1);
  if (values != tsr__gemm_nisas + 1)
    print_error("TSR_CPU_KERNEL accepts \"%s\"; the kernel table has %d rows: name each in "
                "src/core/env.c and the README's row\n",
                row->values, tsr__gemm_nisas);
  assert_int_equal(values, tsr__gemm_nisas + 1);
}

/* The fields of one kernel of ISA row r. */
static void check_kernel(const tsr__gemm_isa *r, const tsr__gemm_kernel *k) {
  assert_non_null(k->name);
  assert_non_null(k->isa);
  assert_string_equal(k->isa, r->name);
  /* "<isa>-<MR>x<NR>" and at most a suffix: the name says its ISA and register block. */
  char want[64];
  snprintf(want, sizeof want, "%s-%dx%d", r->name, k->mr, k->nr);
  if (strncmp(k->name, want, strlen(want)) != 0 ||
      (k->name[strlen(want)] != '\0' && k->name[strlen(want)] != '-'))
    fail_msg("kernel %s: the name does not start %s", k->name, want);
  assert_null(strchr(k->name, ' ')); /* wisdom files store the name as one word */
  assert_true(k->dtype == TSR_F32 || k->dtype == TSR_F64);
  assert_true(k->mr > 0 && k->nr > 0);
  assert_true(k->mr * k->nr <= TSR__GEMM_MAX_TILE);
  assert_int_equal(k->nr % 2, 0);
  const bool f32 = k->dtype == TSR_F32;
  /* The dtype's micro-kernel and packers; nothing of the other dtype. */
  assert_true(f32 ? k->ukr_f32 != NULL : k->ukr_f64 != NULL);
  assert_true(f32 ? k->pack_a_f32 && k->pack_b_f32 : k->pack_a_f64 && k->pack_b_f64);
  if (f32) {
    assert_null(k->ukr_f64);
    assert_null(k->pack_a_f64);
    assert_null(k->pack_b_f64);
    assert_null(k->ukr_stream_f64);
    assert_null(k->edge_f64);
  } else {
    assert_null(k->ukr_f32);
    assert_null(k->pack_a_f32);
    assert_null(k->pack_b_f32);
    assert_null(k->ukr_stream_f32);
    assert_null(k->edge_f32);
  }
  /* The sup path's in-place entry exactly with the sup path. */
  assert_true((k->sup == NULL) == (k->sup_inplace == NULL));
  /* The look-ups find it. */
  assert_ptr_equal(tsr__gemm_kernel_find(k->name, k->dtype), k);
}

/* Every row and kernel: fields, unique names and ranks, dtype coverage, the look-ups. */
static void test_every_row(void **state) {
  (void)state;
  int kernels = 0, max_tile = 0;
  for (int i = 0; i < tsr__gemm_nisas; ++i) {
    const tsr__gemm_isa *r = tsr__gemm_isas[i];
    assert_non_null(r->available);
    assert_true(r->nkernels >= 0);
    assert_true(r->nkernels == 0 || r->kernels != NULL);
    for (int o = 0; o < i; ++o) {
      assert_string_not_equal(tsr__gemm_isas[o]->name, r->name);
      if (tsr__gemm_isas[o]->rank == r->rank)
        fail_msg("ISAs %s and %s have the same rank %d: the rule's preference is ambiguous",
                 tsr__gemm_isas[o]->name, r->name, r->rank);
    }
    /* An ISA with kernels serves both dtypes (the choice is per dtype, by ISA). */
    if (r->nkernels > 0) {
      assert_non_null(tsr__gemm_kernel_first(r->name, TSR_F32));
      assert_non_null(tsr__gemm_kernel_first(r->name, TSR_F64));
    } else {
      assert_false(tsr__gemm_isa_available(r->name));
    }
    const unsigned bit = tsr__gemm_isa_bit(r->name);
    assert_true(bit != 0 && (bit & (bit - 1)) == 0);
    for (int o = 0; o < i; ++o)
      assert_true((tsr__gemm_isa_bit(tsr__gemm_isas[o]->name) & bit) == 0);
    for (int j = 0; j < r->nkernels; ++j) {
      const tsr__gemm_kernel *k = &r->kernels[j];
      check_kernel(r, k);
      ++kernels;
      if (k->mr * k->nr > max_tile) max_tile = k->mr * k->nr;
      /* Names unique over the whole table (the wisdom file names a kernel by it). */
      for (int o = 0; o <= i; ++o)
        for (int q = 0; q < (o == i ? j : tsr__gemm_isas[o]->nkernels); ++q)
          assert_string_not_equal(tsr__gemm_isas[o]->kernels[q].name, k->name);
    }
  }
  assert_true(kernels >= 2);
  assert_int_equal(tsr__gemm_max_tile(), max_tile);
  assert_int_equal(tsr__gemm_isa_bit("no-such-isa"), 0);
  assert_false(tsr__gemm_isa_available("no-such-isa"));
  assert_null(tsr__gemm_kernel_first("no-such-isa", TSR_F32));
}

/* tsr__gemm_isa_name: every ISA once, by descending rank; tsr__gemm_kernel_list: the kernels of
   the ISAs this CPU runs in that order, each row's in its own order. */
static void test_order(void **state) {
  (void)state;
  int n = 0, last_rank = 0;
  for (const char *name; (name = tsr__gemm_isa_name(n)) != NULL; ++n) {
    const tsr__gemm_isa *r = NULL;
    for (int i = 0; i < tsr__gemm_nisas; ++i)
      if (strcmp(tsr__gemm_isas[i]->name, name) == 0) r = tsr__gemm_isas[i];
    assert_non_null(r);
    if (n > 0) assert_true(r->rank < last_rank);
    last_rank = r->rank;
  }
  assert_int_equal(n, tsr__gemm_nisas);
  assert_null(tsr__gemm_isa_name(-1));
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dt = d ? TSR_F64 : TSR_F32;
    const tsr__gemm_kernel *got[64];
    const int ng = tsr__gemm_kernel_list(dt, got, 64);
    int nw = 0;
    for (int i = 0; tsr__gemm_isa_name(i); ++i) {
      const char *isa = tsr__gemm_isa_name(i);
      if (!tsr__gemm_isa_available(isa)) continue;
      for (int j = 0; j < tsr__gemm_nisas; ++j) {
        const tsr__gemm_isa *r = tsr__gemm_isas[j];
        if (strcmp(r->name, isa) != 0) continue;
        for (int q = 0; q < r->nkernels; ++q)
          if (r->kernels[q].dtype == dt) {
            assert_true(nw < ng);
            assert_ptr_equal(got[nw], &r->kernels[q]);
            ++nw;
          }
      }
    }
    assert_int_equal(nw, ng);
    assert_true(ng >= 1);
  }
}

/* Each packer of a kernel this CPU runs gives the portable layout for the kernel's MR (A) and
   NR (B), both storage orders, with a partial last panel and an odd k. */
static void test_packers_take_the_block(void **state) {
  (void)state;
  int tested = 0;
  for (int i = 0; i < tsr__gemm_nisas; ++i) {
    const tsr__gemm_isa *r = tsr__gemm_isas[i];
    if (!tsr__gemm_isa_available(r->name)) continue;
    for (int j = 0; j < r->nkernels; ++j) {
      const tsr__gemm_kernel *k = &r->kernels[j];
      const bool f32 = k->dtype == TSR_F32;
      const size_t es = f32 ? 4 : 8;
      for (int side = 0; side < 2; ++side)
        for (int tr = 0; tr < 2; ++tr) {
          const int step = side ? k->nr : k->mr;
          const int64_t len = 2 * step + 1, kc = 9, ld = 2 * step + kc + 3;
          const int64_t packed = (len + step - 1) / step * step * kc;
          double *src = malloc((size_t)(ld * ld) * sizeof(double));
          float *srcf = malloc((size_t)(ld * ld) * sizeof(float));
          char *want = aligned_alloc(64, ((size_t)packed * es + 63) / 64 * 64);
          char *got = aligned_alloc(64, ((size_t)packed * es + 63) / 64 * 64);
          assert_non_null(src);
          assert_non_null(srcf);
          assert_non_null(want);
          assert_non_null(got);
          tsr_test_fill_random(src, (size_t)(ld * ld),
                               4200 + (uint64_t)(i * 100 + j * 4 + side * 2 + tr));
          for (int64_t e = 0; e < ld * ld; ++e)
            srcf[e] = (float)src[e];
          memset(want, 0x5A, (size_t)packed * es);
          memset(got, 0x5A, (size_t)packed * es);
          if (f32 && side == 0) {
            tsr__gemm_pack_a_f32(k->mr, len, kc, srcf, ld, tr, (float *)(void *)want);
            k->pack_a_f32(k->mr, len, kc, srcf, ld, tr, (float *)(void *)got);
          } else if (f32) {
            tsr__gemm_pack_b_f32(k->nr, kc, len, srcf, ld, tr, (float *)(void *)want);
            k->pack_b_f32(k->nr, kc, len, srcf, ld, tr, (float *)(void *)got);
          } else if (side == 0) {
            tsr__gemm_pack_a_f64(k->mr, len, kc, src, ld, tr, (double *)(void *)want);
            k->pack_a_f64(k->mr, len, kc, src, ld, tr, (double *)(void *)got);
          } else {
            tsr__gemm_pack_b_f64(k->nr, kc, len, src, ld, tr, (double *)(void *)want);
            k->pack_b_f64(k->nr, kc, len, src, ld, tr, (double *)(void *)got);
          }
          if (memcmp(want, got, (size_t)packed * es) != 0)
            fail_msg("%s pack_%c (%s): not the portable layout", k->name, side ? 'b' : 'a',
                     tr ? "transposed" : "as stored");
          ++tested;
          free(src);
          free(srcf);
          free(want);
          free(got);
        }
    }
  }
  assert_true(tested > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_are_the_folders),
      cmocka_unit_test(test_cpu_kernel_values_are_the_rows),
      cmocka_unit_test(test_every_row),
      cmocka_unit_test(test_order),
      cmocka_unit_test(test_packers_take_the_block),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
