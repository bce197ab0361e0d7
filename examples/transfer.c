/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Moves an array CPU -> GPU -> CPU, computing on the GPU in between, and checks the round
 * trip. Without a GPU it says so and exits 77 (reported as skipped by CTest).
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

int main(void) {
  tsr_device gpu;
  if (tsr_device_parse("cuda", &gpu) != TSR_OK && tsr_device_parse("hip", &gpu) != TSR_OK) {
    printf("transfer: no GPU in this build or machine (%s): skipped\n", tsr_last_error());
    return 77;
  }
  enum { N = 1 << 20 };
  int64_t n = N;
  float *host = malloc(sizeof(float) * N), *back = malloc(sizeof(float) * N);
  for (int i = 0; i < N; i++)
    host[i] = (float)i / N - 0.5f;

  tsr_array *cpu = NULL, *dev = NULL, *sq = NULL, *home = NULL;
  CHECK(tsr_from_host(1, &n, TSR_F32, TSR_CPU, host, &cpu));
  CHECK(tsr_array_to(cpu, gpu, &dev));     /* CPU -> GPU */
  CHECK(tsr_mul(dev, dev, &sq));           /* runs on the GPU's stream */
  CHECK(tsr_array_to(sq, TSR_CPU, &home)); /* GPU -> CPU (synchronizes) */
  CHECK(tsr_array_read(home, back, sizeof(float) * N));

  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += back[i] != host[i] * host[i];
  printf("transfer: %d elements CPU -> GPU -> CPU, %d mismatches\n", N, bad);
  tsr_array_release(cpu);
  tsr_array_release(dev);
  tsr_array_release(sq);
  tsr_array_release(home);
  free(host);
  free(back);
  return bad ? 1 : 0;
}
