/* SPDX-License-Identifier: BSD-3-Clause */
/* A user program built against the installed Tessera (CMake package and pkg-config). */
#include <math.h>
#include <stdio.h>

#include <tessera.h>

int main(void) {
  const int64_t m = 37, k = 23, n = 19;
  tsr_array *a = NULL, *b = NULL, *c = NULL;
  double ha[37 * 23], hb[23 * 19], hc[37 * 19];
  int64_t sa[2] = {m, k}, sb[2] = {k, n};
  if (tsr_random_uniform(2, sa, TSR_F64, TSR_CPU, 1, -1, 1, &a) != TSR_OK ||
      tsr_random_uniform(2, sb, TSR_F64, TSR_CPU, 2, -1, 1, &b) != TSR_OK ||
      tsr_matmul(a, b, &c) != TSR_OK || tsr_array_read(a, ha, sizeof ha) != TSR_OK ||
      tsr_array_read(b, hb, sizeof hb) != TSR_OK || tsr_array_read(c, hc, sizeof hc) != TSR_OK) {
    fprintf(stderr, "consumer: %s\n", tsr_last_error());
    return 1;
  }
  double err = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t p = 0; p < k; p++)
        s += ha[i * k + p] * hb[p * n + j];
      err = fmax(err, fabs(s - hc[i * n + j]));
    }
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
  printf("consumer: Tessera %s, max abs error %.3g\n", TSR_VERSION_STRING, err);
  return err < 1e-12 ? 0 : 1;
}
