/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Gram matrix of a real data set: G = X X^T for the 178 wine samples x 13 features of
 * data/wine.npy (float64), computed with tsr_matmul and a transpose view, saved as .npy and
 * checked against a float64 reference computed here with plain loops.
 *
 * Usage: matmul [wine.npy [wine_gram.npy]]   (device: TSR_DEVICE, default the first GPU)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <tessera.h>

#ifndef TSR_EXAMPLE_DATA
#define TSR_EXAMPLE_DATA "data/wine.npy"
#endif

#define CHECK(call)                                                                                \
  do {                                                                                             \
    tsr_status st_ = (call);                                                                       \
    if (st_ != TSR_OK) {                                                                           \
      fprintf(stderr, "%s failed: %s: %s\n", #call, tsr_status_name(st_), tsr_last_error());       \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  const char *in_path = argc > 1 ? argv[1] : TSR_EXAMPLE_DATA;
  const char *out_path = argc > 2 ? argv[2] : "wine_gram.npy";
  int failed = 1;
  tsr_array *X = NULL, *Xt = NULL, *G = NULL;
  double *x = NULL, *g = NULL;

  tsr_device dev;
  char name[32];
  CHECK(tsr_device_default(&dev));
  CHECK(tsr_device_string(dev, name, sizeof name));

  /* Load the samples (one row per sample) straight onto the device. */
  CHECK(tsr_npy_load(in_path, dev, &X));
  tsr_array_props info;
  CHECK(tsr_array_info(X, &info));
  if (info.ndim != 2 || info.dtype != TSR_F64) {
    fprintf(stderr, "%s: expected a 2-D float64 matrix, got %d-D %s\n", in_path, info.ndim,
            tsr_dtype_name(info.dtype));
    goto done;
  }
  const int64_t m = info.shape[0], k = info.shape[1];
  printf("X: %lld samples x %lld features from %s, on %s\n", (long long)m, (long long)k, in_path,
         name);

  /* G = X X^T: the transpose is a view (no copy); matmul reads it through its strides. */
  CHECK(tsr_transpose(X, NULL, &Xt));
  CHECK(tsr_matmul(X, Xt, &G));
  CHECK(tsr_npy_save(out_path, G));
  printf("G = X X^T: %lld x %lld, saved to %s\n", (long long)m, (long long)m, out_path);

  /* The reference: the same product with plain loops on the host, in float64. */
  x = malloc((size_t)(m * k) * sizeof(double));
  g = malloc((size_t)(m * m) * sizeof(double));
  if (!x || !g) {
    fprintf(stderr, "out of host memory\n");
    goto done;
  }
  CHECK(tsr_array_read(X, x, (size_t)(m * k) * sizeof(double)));
  CHECK(tsr_array_read(G, g, (size_t)(m * m) * sizeof(double)));
  const double tol = 1e-12;
  double max_rel = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < m; j++) {
      double ref = 0;
      for (int64_t p = 0; p < k; p++)
        ref += x[i * k + p] * x[j * k + p];
      /* Wine features are positive, so no entry of G is near zero. */
      double rel = fabs(g[i * m + j] - ref) / fabs(ref);
      if (rel > max_rel) max_rel = rel;
      if (!(rel <= tol)) bad++; /* NaN counts as bad */
    }
  printf("max relative error vs float64 loops: %.3g (tolerance %.0e)\n", max_rel, tol);
  printf("G[0][0] = %.6f, G[0][1] = %.6f\n", g[0], g[1]);
  if (bad) {
    fprintf(stderr, "FAILED: %lld entries above tolerance\n", (long long)bad);
    goto done;
  }
  failed = 0;

done:
  free(x);
  free(g);
  tsr_array_release(G);
  tsr_array_release(Xt);
  tsr_array_release(X);
  return failed;
}
