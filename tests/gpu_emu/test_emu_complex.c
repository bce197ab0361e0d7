/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU backend's complex kernels on the host emulator (tests/gpu_emu/run.sh, test
 * "emu_complex"), called through the backend table itself (src/core/internal.h), below the
 * core's checks, so they are proved whatever the array API routes today:
 *  - GEMM, c64 and c128: every pair of operations N, T, C (conjugate transpose) and R (conj
 *    without transpose, CBLAS's row-major ConjNoTrans), complex alpha and beta, beta = 0 with
 *    NaN in C (C must not be read), alpha = 0 and k = 0, odd sizes, both tile configurations'
 *    edges and split-K, unaligned leading dimensions; against a float64-complex reference
 *    computed here with C99 complex arithmetic on random inputs, purely imaginary ones and
 *    conjugate-sensitive ones (where a lost or doubled conjugation changes the product);
 *  - what one complex GEMM costs: one kernel launch, no copy, no host wait (tsr_emu_counts);
 *  - the elementwise kernels (+ - * /, neg, conj, exp, log, sqrt, tanh, abs into the real dtype,
 * fill, conversions real -> complex and complex -> complex, sum and mean) against C99 complex
 * arithmetic, and the random arrays against the CPU's Philox fill (parts 2i and 2i + 1 of the part
 * stream);
 *  - the vendor path of a build without cuBLAS (the emulator's) refuses with
 *    TSR_ERR_UNSUPPORTED, and a conj without transpose runs natively even when the vendor path
 *    is asked for.
 * Each failure prints the case. Exits 77 when the backend has no device (never passes then).
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

extern const struct tsr__backend_ops tsr__gpu_backend;
void tsr_emu_counts(size_t out[3]);

static tsr_device gpu = {TSR_DEVICE_CUDA, 0};
static int failures, checks;

/* ---------------------------------------------------------------- inputs ------------ */

static uint64_t rng_state;
static double uniform(void) { /* [-1, 1) */
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) * 0x1.0p-52 - 1.0;
}

/* Input kinds: general complex, purely imaginary, purely real. */
enum { GENERAL, IMAGINARY, REAL };

static void fill(double complex *x, size_t n, int kind) {
  for (size_t i = 0; i < n; i++) {
    double re = uniform(), im = uniform();
    x[i] = kind == IMAGINARY ? im * I : kind == REAL ? re : re + im * I;
  }
}

/* ---------------------------------------------------------------- device ------------ */

static void *dev_alloc(size_t bytes) {
  void *p = NULL;
  unsigned granted = 0;
  if (tsr__gpu_backend.alloc(gpu, bytes ? bytes : 1, 0, &p, &granted) != TSR_OK) {
    fprintf(stderr, "device alloc of %zu bytes: %s\n", bytes, tsr_last_error());
    exit(1);
  }
  return p;
}

/* n complex values to the device as dtype (c64 rounds to float). */
static void *to_device(const double complex *x, size_t n, tsr_dtype dt) {
  size_t es = dt == TSR_C64 ? 8 : 16;
  unsigned char *h = malloc(n * es + 1);
  for (size_t i = 0; i < n; i++) {
    if (dt == TSR_C64) {
      float v[2] = {(float)creal(x[i]), (float)cimag(x[i])};
      memcpy(h + i * es, v, es);
    } else {
      double v[2] = {creal(x[i]), cimag(x[i])};
      memcpy(h + i * es, v, es);
    }
  }
  void *d = dev_alloc(n * es);
  if (tsr__gpu_backend.memcpy_h2d(gpu, d, h, n * es) != TSR_OK) exit(1);
  free(h);
  return d;
}

static void from_device(double complex *x, const void *d, size_t n, tsr_dtype dt) {
  size_t es = dt == TSR_C64 ? 8 : 16;
  unsigned char *h = malloc(n * es + 1);
  if (tsr__gpu_backend.memcpy_d2h(gpu, h, d, n * es) != TSR_OK) exit(1);
  for (size_t i = 0; i < n; i++) {
    if (dt == TSR_C64) {
      float v[2];
      memcpy(v, h + i * es, es);
      x[i] = (double)v[0] + (double)v[1] * I;
    } else {
      double v[2];
      memcpy(v, h + i * es, es);
      x[i] = v[0] + v[1] * I;
    }
  }
  free(h);
}

/* The values the device holds (c64: rounded to float), for the reference. */
static void round_to(double complex *x, size_t n, tsr_dtype dt) {
  if (dt != TSR_C64) return;
  for (size_t i = 0; i < n; i++)
    x[i] = (double)(float)creal(x[i]) + (double)(float)cimag(x[i]) * I;
}

/* ---------------------------------------------------------------- GEMM -------------- */

/* Operations: N, T, C (conjugate transpose), R (conjugate, no transpose). */
static const char op_names[4] = {'N', 'T', 'C', 'R'};
static bool op_trans(int op) {
  return op == 1 || op == 2;
}
static bool op_conj(int op) {
  return op >= 2;
}

/* op(X)(i, p) of a row-major X with leading dimension ld. */
static double complex op_at(const double complex *x, int64_t ld, int op, int64_t i, int64_t p) {
  double complex v = op_trans(op) ? x[p * ld + i] : x[i * ld + p];
  return op_conj(op) ? conj(v) : v;
}

typedef struct gemm_case {
  tsr_dtype dt;
  int opa, opb;
  int64_t m, n, k, pad; /* pad: extra columns of every leading dimension */
  double complex alpha, beta;
  int kind_a, kind_b;
  tsr_gemm_path path;
  int count_launches; /* > 0: assert the launches, no copies and no syncs of the call */
} gemm_case;

static void run_gemm(const gemm_case *c) {
  checks++;
  const int64_t ra = op_trans(c->opa) ? c->k : c->m, ca = op_trans(c->opa) ? c->m : c->k;
  const int64_t rb = op_trans(c->opb) ? c->n : c->k, cb = op_trans(c->opb) ? c->k : c->n;
  const int64_t lda = ca + c->pad, ldb = cb + c->pad, ldc = c->n + c->pad;
  const size_t na = (size_t)(ra * lda), nb = (size_t)(rb * ldb), nc = (size_t)(c->m * ldc);
  double complex *a = malloc((na + 1) * sizeof *a), *b = malloc((nb + 1) * sizeof *b);
  double complex *c0 = malloc((nc + 1) * sizeof *c0), *got = malloc((nc + 1) * sizeof *got);
  fill(a, na, c->kind_a);
  fill(b, nb, c->kind_b);
  const bool beta0 = c->beta == 0;
  fill(c0, nc, GENERAL);
  if (beta0)
    for (size_t i = 0; i < nc; i++)
      c0[i] = NAN + NAN * I; /* must not be read */
  round_to(a, na, c->dt);
  round_to(b, nb, c->dt);
  round_to(c0, nc, c->dt);
  void *da = to_device(a, na, c->dt), *db = to_device(b, nb, c->dt), *dc = to_device(c0, nc, c->dt);

  tsr__gemm_args g =
      tsr__gemm_args_host(c->dt, op_trans(c->opa), op_trans(c->opb), c->m, c->n, c->k,
                          creal(c->alpha), da, lda, db, ldb, creal(c->beta), dc, ldc, c->path);
  g.conj_a = op_conj(c->opa);
  g.conj_b = op_conj(c->opb);
  g.alpha_im = cimag(c->alpha);
  g.beta_im = cimag(c->beta);
  size_t before[3], after[3];
  tsr_emu_counts(before);
  tsr_status st = tsr__gpu_backend.gemm(gpu, &g);
  tsr_emu_counts(after);
  char what[200];
  snprintf(what, sizeof what,
           "%s %c%c %lldx%lldx%lld pad %lld alpha (%g,%g) beta (%g,%g) kinds %d%d path %d",
           tsr_dtype_name(c->dt), op_names[c->opa], op_names[c->opb], (long long)c->m,
           (long long)c->n, (long long)c->k, (long long)c->pad, creal(c->alpha), cimag(c->alpha),
           creal(c->beta), cimag(c->beta), c->kind_a, c->kind_b, (int)c->path);
  if (st != TSR_OK) {
    printf("FAIL %s: status %d: %s\n", what, (int)st, tsr_last_error());
    failures++;
    goto done;
  }
  /* The sync-debug mode (TSR_GPU_SYNC_DEBUG=1, gpu_emu_warp64) waits after every launch. */
  const char *sync_debug = getenv("TSR_GPU_SYNC_DEBUG");
  const size_t waits = sync_debug && strcmp(sync_debug, "0") != 0 ? (size_t)c->count_launches : 0;
  if (c->count_launches > 0 && (after[0] - before[0] != (size_t)c->count_launches ||
                                after[1] != before[1] || after[2] - before[2] != waits)) {
    printf("FAIL %s: %zu launches (want %d), %zu copies (want 0), %zu host waits (want %zu)\n",
           what, after[0] - before[0], c->count_launches, after[1] - before[1],
           after[2] - before[2], waits);
    failures++;
  }
  from_device(got, dc, nc, c->dt);
  /* Reference in float64 complex; error relative to sum |alpha| |a| |b| + |beta| |c|. */
  double worst = 0.0;
  for (int64_t i = 0; i < c->m; i++)
    for (int64_t j = 0; j < c->n; j++) {
      double complex s = 0;
      double mag = 0.0;
      for (int64_t p = 0; p < c->k; p++) {
        double complex x = op_at(a, lda, c->opa, i, p), y = op_at(b, ldb, c->opb, p, j);
        s += x * y;
        mag += cabs(x) * cabs(y);
      }
      double complex ref = c->alpha * s;
      mag *= cabs(c->alpha);
      if (!beta0) {
        ref += c->beta * c0[i * ldc + j];
        mag += cabs(c->beta) * cabs(c0[i * ldc + j]);
      }
      double complex v = got[i * ldc + j];
      double err = cabs(v - ref) / fmax(mag, 1e-300);
      if (!isfinite(creal(v)) || !isfinite(cimag(v))) err = INFINITY;
      if (err > worst) worst = err;
    }
  /* The padding columns of C are untouched. */
  for (int64_t i = 0; i < c->m; i++)
    for (int64_t j = c->n; j < ldc; j++)
      if (memcmp(&got[i * ldc + j], &c0[i * ldc + j], sizeof got[0]) != 0 &&
          !(beta0 && isnan(creal(got[i * ldc + j])))) {
        printf("FAIL %s: C(%lld, %lld) outside the matrix was written\n", what, (long long)i,
               (long long)j);
        failures++;
        goto done;
      }
  const double eps = c->dt == TSR_C64 ? 0x1.0p-24 : 0x1.0p-53;
  const double tol = 8.0 * eps * sqrt((double)c->k + 1.0) + 4.0 * eps;
  if (!(worst <= tol)) {
    printf("FAIL %s: relative error %g > %g\n", what, worst, tol);
    failures++;
  }
done:
  tsr__gpu_backend.free(gpu, da, na * (c->dt == TSR_C64 ? 8 : 16), 0);
  tsr__gpu_backend.free(gpu, db, nb * (c->dt == TSR_C64 ? 8 : 16), 0);
  tsr__gpu_backend.free(gpu, dc, nc * (c->dt == TSR_C64 ? 8 : 16), 0);
  free(a);
  free(b);
  free(c0);
  free(got);
}

static void test_gemm(void) {
  /* Odd edges of both configurations (c64 64x64 tiles, c128 64x32), a shape of many tiles,
     split-K on the emulator's 2 SMs (few tiles, k >= 512). */
  static const int64_t sizes[][3] = {
      {1, 1, 1}, {17, 33, 5}, {67, 45, 29}, {130, 70, 19}, {20, 24, 700}};
  static const double complex ab[][2] = {
      {1.0, 0.0}, {0.5 - 1.5 * I, 0.0}, {-1.25 + 0.75 * I, 2.0 - 0.5 * I}, {1.0 * I, -1.0 * I}};
  const int quick = getenv("TSR_EMU_QUICK") != NULL;
  int rot = 0;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = d ? TSR_C128 : TSR_C64;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int opa = 0; opa < 4; opa++)
        for (int opb = 0; opb < 4; opb++) {
          /* Quick: the split-K shape only with a few operation pairs. */
          if (quick && sizes[s][2] >= 512 && (opa + opb) % 3 != 0) continue;
          rot++;
          for (size_t c = 0; c < sizeof ab / sizeof ab[0]; c++) {
            if (quick && c != (size_t)rot % 4) continue;
            gemm_case gc = {dt,
                            opa,
                            opb,
                            sizes[s][0],
                            sizes[s][1],
                            sizes[s][2],
                            (int64_t)(s + c) % 3,
                            ab[c][0],
                            ab[c][1],
                            GENERAL,
                            GENERAL,
                            TSR_GEMM_NATIVE,
                            0};
            run_gemm(&gc);
          }
        }
  }
  /* Conjugate-sensitive: purely imaginary A times real B (and the reverse) with every
     conjugation; a product whose value flips sign under a lost conjugation. */
  for (int d = 0; d < 2; d++)
    for (int opa = 0; opa < 4; opa++)
      for (int opb = 0; opb < 4; opb++)
        for (int kinds = 0; kinds < 3; kinds++) {
          static const int ka[3] = {IMAGINARY, REAL, IMAGINARY},
                           kb[3] = {REAL, IMAGINARY, IMAGINARY};
          gemm_case gc = {
              d ? TSR_C128 : TSR_C64, opa, opb, 35, 19, 13, 1, 1.0, 0.0, ka[kinds], kb[kinds],
              TSR_GEMM_NATIVE,        0};
          run_gemm(&gc);
        }
}

/* alpha = 0 (A and B not read: C = beta C) and k = 0, with beta 0 writing zeros over NaN. */
static void test_gemm_degenerate(void) {
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = d ? TSR_C128 : TSR_C64;
    gemm_case a0 = {dt, 0, 2, 31, 45, 20, 1, 0.0, 0.5 - 2.0 * I, GENERAL, GENERAL, TSR_GEMM_NATIVE,
                    1};
    run_gemm(&a0);
    gemm_case a0b0 = {dt, 2, 0, 31, 45, 20, 0, 0.0, 0.0, GENERAL, GENERAL, TSR_GEMM_NATIVE, 1};
    run_gemm(&a0b0);
    gemm_case k0 = {dt, 0, 0, 31, 45, 0, 0, 1.0 + I, 3.0 * I, GENERAL, GENERAL, TSR_GEMM_NATIVE, 1};
    run_gemm(&k0);
  }
}

/* One complex GEMM is one kernel launch, no copy and no host wait (the real path's rule: the
   job's 1 x 1 grid on a GPU is one GEMM with no host copies). */
static void test_gemm_counts(void) {
  for (int d = 0; d < 2; d++)
    for (int op = 0; op < 4; op++) {
      gemm_case gc = {d ? TSR_C128 : TSR_C64,
                      op,
                      3 - op,
                      96,
                      80,
                      112,
                      0,
                      1.0 - 0.5 * I,
                      0.25 * I,
                      GENERAL,
                      GENERAL,
                      TSR_GEMM_AUTO,
                      1};
      /* The backend sees NATIVE or VENDOR; AUTO is resolved by the core. */
      gc.path = TSR_GEMM_NATIVE;
      run_gemm(&gc);
    }
}

/* The emulator has no cuBLAS: the vendor path refuses (TSR_ERR_UNSUPPORTED, as a build
   without the library does), except for a conjugate without transpose, which has no vendor
   operation and always runs natively. */
static void test_gemm_vendor(void) {
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = d ? TSR_C128 : TSR_C64;
    void *x = dev_alloc(16 * 16 * 16);
    tsr__gemm_args g =
        tsr__gemm_args_host(dt, true, false, 4, 4, 4, 1.0, x, 4, x, 4, 0.0, x, 4, TSR_GEMM_VENDOR);
    g.conj_a = true;
    checks++;
    tsr_status st = tsr__gpu_backend.gemm(gpu, &g);
    if (TSR_HAVE_GPU_VENDOR_BLAS ? st != TSR_OK : st != TSR_ERR_UNSUPPORTED) {
      printf("FAIL %s vendor path CN: status %d (%s)\n", tsr_dtype_name(dt), (int)st,
             tsr_last_error());
      failures++;
    }
    tsr__gpu_backend.free(gpu, x, 16 * 16 * 16, 0);
    gemm_case gc = {dt, 3, 1, 23, 17, 9, 1, 0.5 + I, 0.0, GENERAL, GENERAL, TSR_GEMM_VENDOR, 1};
    run_gemm(&gc);
  }
}

/* ---------------------------------------------------------------- elementwise ------- */

static size_t esize(tsr_dtype dt) {
  return dt == TSR_C128 ? 16 : dt == TSR_C64 || dt == TSR_F64 || dt == TSR_I64 ? 8 : 4;
}

static tsr__view view1(void *data, tsr_dtype dt, int64_t n) {
  tsr__view v;
  memset(&v, 0, sizeof v);
  v.data = data;
  v.dtype = dt;
  v.ndim = 1;
  v.shape[0] = n;
  v.strides[0] = 1;
  return v;
}

static void expect_close(const char *what, double complex got, double complex ref, double tol) {
  checks++;
  double err = cabs(got - ref) / fmax(cabs(ref), 1e-300);
  if (!(err <= tol) && !(got == ref)) {
    printf("FAIL %s: got (%.17g, %.17g), want (%.17g, %.17g), relative error %g > %g\n", what,
           creal(got), cimag(got), creal(ref), cimag(ref), err, tol);
    failures++;
  }
}

/* + - * / (contiguous, and with a transposed operand), neg, abs (to the real dtype), fill,
   the conversions real -> complex (imaginary 0) and complex -> complex, sum and mean. */
static void test_elementwise(void) {
  for (int d = 0; d < 2; d++) {
    const tsr_dtype dt = d ? TSR_C128 : TSR_C64, rt = d ? TSR_F64 : TSR_F32;
    const double eps = d ? 0x1.0p-53 : 0x1.0p-24;
    const int64_t n = 1001;
    double complex *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b),
                   *r = malloc(n * sizeof *r);
    fill(a, (size_t)n, GENERAL);
    fill(b, (size_t)n, GENERAL);
    a[3] = 0.75 * I; /* purely imaginary elements */
    b[5] = -0.5 * I;
    round_to(a, (size_t)n, dt);
    round_to(b, (size_t)n, dt);
    void *da = to_device(a, (size_t)n, dt), *db = to_device(b, (size_t)n, dt);
    void *dout = dev_alloc((size_t)n * 16);
    tsr__view va = view1(da, dt, n), vb = view1(db, dt, n), vo = view1(dout, dt, n);
    char what[96];
    for (int op = TSR_ADD; op <= TSR_DIV; op++) {
      if (tsr__gpu_backend.binary(gpu, (tsr_binary_op)op, &vo, &va, &vb) != TSR_OK) {
        printf("FAIL binary %d %s: %s\n", op, tsr_dtype_name(dt), tsr_last_error());
        failures++;
        continue;
      }
      from_device(r, dout, (size_t)n, dt);
      for (int64_t i = 0; i < n; i++) {
        double complex ref = op == TSR_ADD   ? a[i] + b[i]
                             : op == TSR_SUB ? a[i] - b[i]
                             : op == TSR_MUL ? a[i] * b[i]
                                             : a[i] / b[i];
        snprintf(what, sizeof what, "binary %d %s element %lld", op, tsr_dtype_name(dt),
                 (long long)i);
        expect_close(what, r[i], ref, 4 * eps);
      }
    }
    /* A transposed operand: out (13 x 7) = a^T + b, a viewed as 7 x 13 row-major. */
    {
      tsr__view o2 = vo, a2 = va, b2 = vb;
      o2.ndim = a2.ndim = b2.ndim = 2;
      o2.shape[0] = a2.shape[0] = b2.shape[0] = 13;
      o2.shape[1] = a2.shape[1] = b2.shape[1] = 7;
      o2.strides[0] = b2.strides[0] = 7;
      o2.strides[1] = b2.strides[1] = 1;
      a2.strides[0] = 1;
      a2.strides[1] = 13;
      checks++;
      if (tsr__gpu_backend.binary(gpu, TSR_MUL, &o2, &a2, &b2) != TSR_OK) {
        printf("FAIL strided mul: %s\n", tsr_last_error());
        failures++;
      } else {
        from_device(r, dout, 91, dt);
        for (int i = 0; i < 13; i++)
          for (int j = 0; j < 7; j++) {
            snprintf(what, sizeof what, "strided mul %s (%d, %d)", tsr_dtype_name(dt), i, j);
            expect_close(what, r[i * 7 + j], a[j * 13 + i] * b[i * 7 + j], 4 * eps);
          }
      }
    }
    /* neg, abs into the real dtype */
    if (tsr__gpu_backend.unary(gpu, TSR_NEG, &vo, &va) == TSR_OK) {
      from_device(r, dout, (size_t)n, dt);
      for (int64_t i = 0; i < n; i++) {
        snprintf(what, sizeof what, "neg %s %lld", tsr_dtype_name(dt), (long long)i);
        expect_close(what, r[i], -a[i], 0.0);
      }
    } else {
      printf("FAIL neg %s: %s\n", tsr_dtype_name(dt), tsr_last_error());
      failures++;
    }
    /* exp, log, sqrt, tanh against C99's principal values (a includes purely imaginary and
       negative real parts: the branch cut's sides). */
    for (int op = TSR_EXP; op <= TSR_TANH; op++) {
      if (tsr__gpu_backend.unary(gpu, (tsr_unary_op)op, &vo, &va) != TSR_OK) {
        printf("FAIL unary %d %s: %s\n", op, tsr_dtype_name(dt), tsr_last_error());
        failures++;
        continue;
      }
      from_device(r, dout, (size_t)n, dt);
      for (int64_t i = 0; i < n; i++) {
        double complex ref = op == TSR_EXP    ? cexp(a[i])
                             : op == TSR_LOG  ? clog(a[i])
                             : op == TSR_SQRT ? csqrt(a[i])
                                              : ctanh(a[i]);
        snprintf(what, sizeof what, "unary %d %s %lld", op, tsr_dtype_name(dt), (long long)i);
        expect_close(what, r[i], ref, 16 * eps);
      }
    }
#if TSR_NUM_UNARY_OPS > 8 /* conj, where tessera/ops.h has it */
    if (tsr__gpu_backend.unary(gpu, TSR_CONJ, &vo, &va) == TSR_OK) {
      from_device(r, dout, (size_t)n, dt);
      for (int64_t i = 0; i < n; i++) {
        snprintf(what, sizeof what, "conj %s %lld", tsr_dtype_name(dt), (long long)i);
        expect_close(what, r[i], conj(a[i]), 0.0);
      }
    } else {
      printf("FAIL conj %s: %s\n", tsr_dtype_name(dt), tsr_last_error());
      failures++;
    }
#endif
    {
      tsr__view vr = view1(dout, rt, n);
      if (tsr__gpu_backend.unary(gpu, TSR_ABS, &vr, &va) == TSR_OK) {
        unsigned char *h = malloc((size_t)n * 8);
        tsr__gpu_backend.memcpy_d2h(gpu, h, dout, (size_t)n * esize(rt));
        for (int64_t i = 0; i < n; i++) {
          double v;
          if (d) {
            memcpy(&v, h + i * 8, 8);
          } else {
            float f;
            memcpy(&f, h + i * 4, 4);
            v = f;
          }
          snprintf(what, sizeof what, "abs %s %lld", tsr_dtype_name(dt), (long long)i);
          expect_close(what, v, cabs(a[i]), 2 * eps);
        }
        free(h);
      } else {
        printf("FAIL abs %s: %s\n", tsr_dtype_name(dt), tsr_last_error());
        failures++;
      }
      /* abs into the complex dtype is refused with a status. */
      checks++;
      if (tsr__gpu_backend.unary(gpu, TSR_ABS, &vo, &va) != TSR_ERR_DTYPE) {
        printf("FAIL abs %s into %s accepted\n", tsr_dtype_name(dt), tsr_dtype_name(dt));
        failures++;
      }
      /* max of complex has no kernel: a status naming the dtype. */
      checks++;
      if (tsr__gpu_backend.binary(gpu, TSR_MAXIMUM, &vo, &va, &vb) != TSR_ERR_UNSUPPORTED ||
          !strstr(tsr_last_error(), tsr_dtype_name(dt))) {
        printf("FAIL maximum of %s: %s\n", tsr_dtype_name(dt), tsr_last_error());
        failures++;
      }
    }
    /* fill: (value, 0) */
    if (tsr__gpu_backend.fill(gpu, &vo, -2.25) == TSR_OK) {
      from_device(r, dout, (size_t)n, dt);
      for (int64_t i = 0; i < n; i++) {
        snprintf(what, sizeof what, "fill %s %lld", tsr_dtype_name(dt), (long long)i);
        expect_close(what, r[i], -2.25, 0.0);
      }
    } else {
      failures++;
    }
    /* conversions: f64 and i32 -> complex (imaginary 0), the other complex dtype -> this one */
    {
      double *x = malloc((size_t)n * 8);
      int32_t *xi = malloc((size_t)n * 4);
      for (int64_t i = 0; i < n; i++) {
        x[i] = creal(a[i]) * 100.0;
        xi[i] = (int32_t)(i * 7919 % 2001) - 1000;
      }
      void *dx = dev_alloc((size_t)n * 8), *dxi = dev_alloc((size_t)n * 4);
      tsr__gpu_backend.memcpy_h2d(gpu, dx, x, (size_t)n * 8);
      tsr__gpu_backend.memcpy_h2d(gpu, dxi, xi, (size_t)n * 4);
      tsr__view vx = view1(dx, TSR_F64, n), vxi = view1(dxi, TSR_I32, n);
      const tsr_dtype other = d ? TSR_C64 : TSR_C128;
      double complex *ao = malloc(n * sizeof *ao);
      memcpy(ao, a, n * sizeof *ao);
      round_to(ao, (size_t)n, other);
      void *dother = to_device(ao, (size_t)n, other);
      tsr__view vother = view1(dother, other, n);
      for (int c = 0; c < 3; c++) {
        const tsr__view *src = c == 0 ? &vx : c == 1 ? &vxi : &vother;
        checks++;
        if (tsr__gpu_backend.copy(gpu, &vo, src) != TSR_OK) {
          printf("FAIL copy %s -> %s: %s\n", tsr_dtype_name(src->dtype), tsr_dtype_name(dt),
                 tsr_last_error());
          failures++;
          continue;
        }
        from_device(r, dout, (size_t)n, dt);
        for (int64_t i = 0; i < n; i++) {
          double complex ref = c == 0 ? x[i] : c == 1 ? (double)xi[i] : ao[i];
          round_to(&ref, 1, dt);
          snprintf(what, sizeof what, "copy %s -> %s %lld", tsr_dtype_name(src->dtype),
                   tsr_dtype_name(dt), (long long)i);
          expect_close(what, r[i], ref, 0.0);
        }
      }
      tsr__gpu_backend.free(gpu, dx, (size_t)n * 8, 0);
      tsr__gpu_backend.free(gpu, dxi, (size_t)n * 4, 0);
      tsr__gpu_backend.free(gpu, dother, (size_t)n * esize(other), 0);
      free(x);
      free(xi);
      free(ao);
    }
    /* sum and mean: all of a (1-D), and the rows and columns of a as 7 x 143 */
    for (int mean = 0; mean < 2; mean++) {
      const tsr_reduce_op op = mean ? TSR_MEAN : TSR_SUM;
      tsr__view vs = view1(dout, dt, 1);
      vs.ndim = 0;
      checks++;
      if (tsr__gpu_backend.reduce(gpu, op, &vs, &va, 0) != TSR_OK) {
        printf("FAIL %s of %s: %s\n", mean ? "mean" : "sum", tsr_dtype_name(dt), tsr_last_error());
        failures++;
        continue;
      }
      double complex ref = 0, got;
      double mag = 0.0; /* sum |a_i|: the error of a sum in another order is relative to it */
      for (int64_t i = 0; i < n; i++) {
        ref += a[i];
        mag += cabs(a[i]);
      }
      if (mean) {
        ref /= (double)n;
        mag /= (double)n;
      }
      from_device(&got, dout, 1, dt);
      snprintf(what, sizeof what, "%s of %s", mean ? "mean" : "sum", tsr_dtype_name(dt));
      expect_close(what, got, ref, 4 * eps * sqrt((double)n) * mag / cabs(ref));
      for (int axis = 0; axis < 2; axis++) {
        tsr__view a2 = va, o2 = view1(dout, dt, axis ? 7 : 143);
        a2.ndim = 2;
        a2.shape[0] = 7;
        a2.shape[1] = 143;
        a2.strides[0] = 143;
        a2.strides[1] = 1;
        if (tsr__gpu_backend.reduce(gpu, op, &o2, &a2, axis) != TSR_OK) {
          failures++;
          continue;
        }
        from_device(r, dout, (size_t)o2.shape[0], dt);
        for (int64_t o = 0; o < o2.shape[0]; o++) {
          double complex s2 = 0;
          const int64_t len = axis ? 143 : 7;
          for (int64_t j = 0; j < len; j++)
            s2 += axis ? a[o * 143 + j] : a[j * 143 + o];
          if (mean) s2 /= (double)len;
          snprintf(what, sizeof what, "%s of %s axis %d output %lld", mean ? "mean" : "sum",
                   tsr_dtype_name(dt), axis, (long long)o);
          expect_close(what, r[o], s2, 8 * eps * sqrt((double)len));
        }
      }
    }
    tsr__gpu_backend.free(gpu, da, (size_t)n * esize(dt), 0);
    tsr__gpu_backend.free(gpu, db, (size_t)n * esize(dt), 0);
    tsr__gpu_backend.free(gpu, dout, (size_t)n * 16, 0);
    free(a);
    free(b);
    free(r);
  }
}

/* Random complex arrays: element i's real and imaginary parts are indices 2i and 2i + 1 of
   the part dtype's stream (the CPU's fill, tsr__rng_fill_host, of 2n parts from 2 offset):
   the same bits for uniform, within a few ulps for normal (the devices' log/sin/cos). */
static void test_random(void) {
  for (int d = 0; d < 2; d++) {
    const tsr_dtype dt = d ? TSR_C128 : TSR_C64, rt = d ? TSR_F64 : TSR_F32;
    static const int64_t sizes[] = {1, 6, 1027};
    static const uint64_t offsets[] = {0, 1, 7};
    for (int s = 0; s < 3; s++)
      for (int dist = 0; dist < 2; dist++) {
        const int64_t n = sizes[s];
        const uint64_t seed = 0xC0FFEEull + (uint64_t)s, off = offsets[s];
        const size_t bytes = (size_t)n * esize(dt);
        void *dd = dev_alloc(bytes);
        unsigned char *got = malloc(bytes), *want = malloc(bytes);
        tsr__view v = view1(dd, dt, n);
        checks++;
        if (tsr__gpu_backend.rng(gpu, &v, seed, off, (tsr__rng_dist)dist, dist ? 1.5 : -2.0,
                                 dist ? 2.0 : 3.0) != TSR_OK) {
          printf("FAIL rng %s: %s\n", tsr_dtype_name(dt), tsr_last_error());
          failures++;
        } else {
          tsr__gpu_backend.memcpy_d2h(gpu, got, dd, bytes);
          tsr__rng_fill_host(want, rt, 2 * n, seed, 2 * off, (tsr__rng_dist)dist, dist ? 1.5 : -2.0,
                             dist ? 2.0 : 3.0);
          if (dist == 0 && memcmp(got, want, bytes) != 0) {
            printf("FAIL uniform %s n=%lld offset %llu: not the CPU's bits\n", tsr_dtype_name(dt),
                   (long long)n, (unsigned long long)off);
            failures++;
          }
          for (int64_t i = 0; dist == 1 && i < 2 * n; i++) {
            double x = d ? ((double *)got)[i] : ((float *)got)[i];
            double y = d ? ((double *)want)[i] : ((float *)want)[i];
            if (!(fabs(x - y) <= (d ? 1e-13 : 1e-6) * fmax(1.0, fabs(y)))) {
              printf("FAIL normal %s part %lld: %g vs %g\n", tsr_dtype_name(dt), (long long)i, x,
                     y);
              failures++;
              break;
            }
          }
        }
        tsr__gpu_backend.free(gpu, dd, bytes, 0);
        free(got);
        free(want);
      }
  }
}

int main(void) {
  int n = 0;
  if (tsr_device_parse("cuda", &gpu) != TSR_OK || tsr__gpu_backend.device_count(&n) != TSR_OK ||
      n < 1) {
    printf("skipped: no (emulated) cuda device: %s\n", tsr_last_error());
    return 77;
  }
  rng_state = 0x5eed;
  test_gemm();
  test_gemm_degenerate();
  test_gemm_counts();
  test_gemm_vendor();
  test_elementwise();
  test_random();
  printf("emu_complex: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
