/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lists the devices this build and machine have, and runs the same matmul on each one,
 * checking every result against the CPU's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <tessera.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    tsr_status st_ = (call);                                                                       \
    if (st_ != TSR_OK) {                                                                           \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, tsr_status_name(st_),                 \
              tsr_last_error());                                                                   \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

enum { M = 300, K = 200, N = 250 };

static void matmul_on(tsr_device dev, double *out) {
  int64_t sa[2] = {M, K}, sb[2] = {K, N};
  tsr_array *a = NULL, *b = NULL, *c = NULL;
  /* Philox gives the same matrices on every device for the same seed. */
  CHECK(tsr_random_uniform(2, sa, TSR_F64, dev, 7, -1, 1, &a));
  CHECK(tsr_random_uniform(2, sb, TSR_F64, dev, 8, -1, 1, &b));
  CHECK(tsr_matmul(a, b, &c));
  CHECK(tsr_array_read(c, out, sizeof(double) * M * N));
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
}

int main(void) {
  static double ref[M * N], got[M * N];
  matmul_on(TSR_CPU, ref);
  const tsr_device_kind kinds[] = {TSR_DEVICE_CPU, TSR_DEVICE_CUDA, TSR_DEVICE_HIP};
  int failures = 0;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    int count = 0;
    CHECK(tsr_device_count(kinds[k], &count));
    for (int i = 0; i < count; i++) {
      tsr_device dev = {kinds[k], i};
      tsr_device_props props;
      char name[32];
      CHECK(tsr_device_get_props(dev, &props));
      CHECK(tsr_device_string(dev, name, sizeof name));
      matmul_on(dev, got);
      double num = 0, den = 0;
      for (int j = 0; j < M * N; j++) {
        num += (got[j] - ref[j]) * (got[j] - ref[j]);
        den += ref[j] * ref[j];
      }
      double rel = sqrt(num / den);
      printf("%-8s %-40s %8.1f GiB  matmul %dx%dx%d  rel. diff vs cpu %.2e\n", name, props.name,
             (double)props.total_memory / 1073741824.0, M, K, N, rel);
      if (!(rel < 1e-12)) failures++;
    }
  }
  return failures ? 1 : 0;
}
