/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the CPU GEMM tests share (test_gemm_frame.c, test_gemm_kernels.c, test_gemm_config.c;
 * defined once, in gemm_test.c): one case's run through the backend entry tsr__omp_gemm against
 * a float64 reference, the program's tuning object, and the programs' common start. The
 * programs link the static library (they call internals) and run once per micro-kernel,
 * TSR_CPU_KERNEL naming it (tests/gemm.cmake).
 */
#ifndef TSR_TESTS_GEMM_TEST_H
#define TSR_TESTS_GEMM_TEST_H

#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tsr_test.h"

#include "omp/gemm/gemm_tune.h"
#include "omp/gemm/kernels/kernels.h"
#include "omp/omp_internal.h"
#include "tsr_test_gemm.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

/* The program's tuning of the CPU GEMM, passed with every call it makes through the backend
   entry (tsr__gemm_args.tuning) and to the configuration and pool queries; tg_setup asks for
   the thread count set (no adaptive count) and full teams, so the multi-threaded orderings
   run whatever the machine's load. */
extern tsr__gemm_tuning tg_tuning;

/* f32 and f64, the dtypes every test runs. */
extern const tsr_dtype tg_dtypes[2];

/* omp_set_num_threads where OpenMP is built. */
void tg_set_threads(int t);

/* The configuration (kernel and blocks) a call of dt on t threads runs with. */
tsr__gemm_config tg_cfg_of(tsr_dtype dt, int t);

/* Element i of a dt array, written from / read as a double. */
void tg_store(tsr_dtype dt, void *p, size_t i, double v);
double tg_load(tsr_dtype dt, const void *p, size_t i);

/* One GEMM case: operands, alpha/beta, padding, NaNs, path, alignment, what must happen. */
typedef struct gemm_case {
  tsr_dtype dtype;
  bool ta, tb;
  int64_t m, n, k;
  double alpha, beta;
  int64_t pad_a, pad_b, pad_c; /* leading dimension minus the stored width */
  bool nan_c;                  /* C starts as NaN (only with beta == 0) */
  bool nan_ab;                 /* A and B are NaN (only with alpha == 0 or k == 0) */
  tsr_gemm_path path;
  bool align_c;      /* C starts on a 64-byte boundary (else one element past one) */
  int expect_stream; /* 1: the call must use streaming stores, -1: must not, 0: unchecked */
  int guard;         /* A, B, C exactly sized, an inaccessible page right after (1) or right
                        before (2) each: any access outside the matrices faults */
} gemm_case;

/* Runs one case through tsr__omp_gemm (with tg_tuning) and checks it against the reference.
   Returns the status of the call (checks only on TSR_OK). */
tsr_status tg_run_case(const gemm_case *gc, uint64_t seed);

/* tg_run_case, asserting TSR_OK. */
void tg_check(gemm_case gc, uint64_t seed);

/* All four transpose combinations of one shape, with padded leading dimensions on two of
   them and alpha/beta varied (beta 0, 1 and 0.5: the micro-kernels' three C updates). */
void tg_check_all_trans(tsr_dtype dt, int64_t m, int64_t n, int64_t k, uint64_t seed);

/* Whether this run tests kernel k's ISA (CTest runs the program once per ISA, naming it in
   TSR_CPU_KERNEL; unset or auto: every one). */
bool tg_isa_under_test(const tsr__gemm_kernel *k);

/* The programs' common start: the kernel TSR_CPU_KERNEL names is available and selected, the
   tuning set (fixed thread counts, full teams), the configurations printed. Returns 0 to go
   on, else main's exit status (TSR_TEST_SKIP: the CPU or the build lacks the kernel). */
int tg_setup(void);

#endif /* TSR_TESTS_GEMM_TEST_H */
