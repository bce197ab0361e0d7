/* SPDX-License-Identifier: BSD-3-Clause */
// A C++ user program with tessera.h only (no MPI): a GEMM checked against a double loop, and the
// library's version against the headers'.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <tessera.h>

int main() {
  const int64_t m = 29, k = 17, n = 13;
  int64_t sa[2] = {m, k}, sb[2] = {k, n};
  tsr_array *a = nullptr, *b = nullptr, *c = nullptr;
  std::vector<double> ha(m * k), hb(k * n), hc(m * n);
  if (tsr_random_uniform(2, sa, TSR_F64, TSR_CPU, 3, -1, 1, &a) != TSR_OK ||
      tsr_random_uniform(2, sb, TSR_F64, TSR_CPU, 4, -1, 1, &b) != TSR_OK ||
      tsr_matmul(a, b, &c) != TSR_OK ||
      tsr_array_read(a, ha.data(), ha.size() * sizeof(double)) != TSR_OK ||
      tsr_array_read(b, hb.data(), hb.size() * sizeof(double)) != TSR_OK ||
      tsr_array_read(c, hc.data(), hc.size() * sizeof(double)) != TSR_OK) {
    std::fprintf(stderr, "consumer_cxx: %s\n", tsr_last_error());
    return 1;
  }
  double err = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t p = 0; p < k; p++)
        s += ha[i * k + p] * hb[p * n + j];
      err = std::fmax(err, std::fabs(s - hc[i * n + j]));
    }
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
  int major = -1, minor = -1, patch = -1;
  const char *version = nullptr;
  tsr_version(&major, &minor, &patch, &version);
  if (std::strcmp(version, TSR_VERSION_STRING) != 0 || major != TSR_VERSION_MAJOR ||
      minor != TSR_VERSION_MINOR || patch != TSR_VERSION_PATCH) {
    std::fprintf(stderr, "consumer_cxx: library %s, headers %s\n", version, TSR_VERSION_STRING);
    return 1;
  }
  std::printf("consumer_cxx: Tessera %s, max abs error %.3g\n", version, err);
  return err < 1e-12 ? 0 : 1;
}
