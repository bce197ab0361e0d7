/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A scientific C code's GEMM, served by Tessera without a code change: the Gram matrix
 * G = X^T X of a column-major 600 x 250 matrix X (samples x features) through the Fortran BLAS
 * dgemm_, as codes have called it for decades. Linking with -ltessera_blas (or running the
 * unchanged binary with LD_PRELOAD=libtessera_blas.so) is all it takes; the product runs on
 * the CPU with Tessera's OpenMP GEMM, or on a GPU when the problem is large enough
 * (TSR_BLAS_GPU_MIN_FLOPS) and TSR_DEVICE allows it.
 *
 * The result is checked against plain loops; the library's counters say where the call ran.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* An existing code would keep its own `extern void dgemm_(...);` declaration; this header
   has the same one, and the drop-in's counters. */
#include <tessera/blas.h>

int main(void) {
  const int rows = 600, cols = 250;
  double *x = malloc(sizeof(double) * (size_t)rows * cols);
  double *g = malloc(sizeof(double) * (size_t)cols * cols);
  if (x == NULL || g == NULL) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  /* Features with different scales and some correlation, column-major (x[i + j*rows]). */
  unsigned s = 12345u;
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      s = s * 1103515245u + 12345u;
      double noise = (double)(s >> 8) / 16777216.0 - 0.5;
      x[i + (size_t)j * rows] = (1.0 + 0.01 * j) * noise + 0.1 * sin(0.01 * i * (j % 7));
    }

  /* G (cols x cols) = 1.0 * X^T X + 0.0 * G: beta = 0, so G's initial contents are ignored. */
  const char transa = 'T', transb = 'N';
  const double one = 1.0, zero = 0.0;
  dgemm_(&transa, &transb, &cols, &cols, &rows, &one, x, &rows, x, &rows, &zero, g, &cols);

  double max_err = 0.0, max_ref = 0.0;
  for (int a = 0; a < cols; ++a)
    for (int b = 0; b < cols; ++b) {
      double ref = 0.0;
      for (int i = 0; i < rows; ++i)
        ref += x[i + (size_t)a * rows] * x[i + (size_t)b * rows];
      double err = fabs(g[a + (size_t)b * cols] - ref);
      if (err > max_err) max_err = err;
      if (fabs(ref) > max_ref) max_ref = fabs(ref);
    }
  tsr_blas_stats st;
  tsr_blas_get_stats(&st);
  printf("G = X^T X, X %d x %d: max |G - reference| = %.3g (max |G| = %.3g)\n", rows, cols, max_err,
         max_ref);
  printf("dgemm_ calls served by Tessera: %llu (cpu %llu, gpu %llu)\n",
         (unsigned long long)st.dgemm, (unsigned long long)st.cpu, (unsigned long long)st.gpu);
  int ok = max_err <= 1e-12 * max_ref * rows && st.dgemm == 1 && st.cpu + st.gpu == 1;
  printf("%s\n", ok ? "OK" : "FAILED");
  free(x);
  free(g);
  return ok ? 0 : 1;
}
