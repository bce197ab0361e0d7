/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A short tour of Tessera: create arrays, compute with broadcasting, reduce, take views and
 * multiply matrices, on the default device (TSR_DEVICE=cpu|cuda|hip picks another).
 *
 * Every Tessera call returns a tsr_status; on failure tsr_last_error() says which function
 * failed and why. Arrays are reference-counted: release each one you created.
 */
#include <stdio.h>

#include <tessera.h>

/* On failure: print the reason and jump to the clean-up at the end of main. */
#define CHECK(call)                                                                                \
  do {                                                                                             \
    tsr_status st_ = (call);                                                                       \
    if (st_ != TSR_OK) {                                                                           \
      fprintf(stderr, "%s failed: %s: %s\n", #call, tsr_status_name(st_), tsr_last_error());       \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

/* Prints an array of any dtype, device and layout (up to 2-D): tsr_astype gives a
   contiguous float64 copy, tsr_array_read copies it to the host. */
static tsr_status print_array(const char *label, const tsr_array *a) {
  tsr_array_props info;
  tsr_array *f = NULL;
  double values[64];
  tsr_status st = tsr_array_info(a, &info);
  if (st == TSR_OK && info.size > 64) {
    printf("%s  (%lld elements, too many to print)\n", label, (long long)info.size);
    return TSR_OK;
  }
  if (st == TSR_OK) st = tsr_astype(a, TSR_F64, &f);
  if (st == TSR_OK) st = tsr_array_read(f, values, (size_t)info.size * sizeof(double));
  tsr_array_release(f);
  if (st != TSR_OK) return st;

  printf("%s  (%s, shape (", label, tsr_dtype_name(info.dtype));
  for (int i = 0; i < info.ndim; i++)
    printf("%s%lld", i ? ", " : "", (long long)info.shape[i]);
  printf("%s))\n", info.ndim == 1 ? "," : "");
  int64_t cols = info.ndim >= 1 ? info.shape[info.ndim - 1] : 1;
  int decimals = (info.dtype == TSR_F32 || info.dtype == TSR_F64) ? 4 : 0;
  for (int64_t i = 0; i < info.size; i++)
    printf("%s%10.*f%s", i % cols == 0 ? "    " : "", decimals, values[i],
           (i + 1) % cols == 0 ? "\n" : "");
  return TSR_OK;
}

int main(void) {
  int failed = 1;
  tsr_array *A = NULL, *x = NULL, *col = NULL, *R = NULL, *sum = NULL, *scaled = NULL;
  tsr_array *e = NULL, *total = NULL, *colmean = NULL, *rowmax = NULL, *best = NULL;
  tsr_array *At = NULL, *every_other = NULL, *gram = NULL, *Ax = NULL, *c12 = NULL;
  /* Released together at the end (tsr_array_release(NULL) is a no-op). */
  tsr_array **const owned[] = {&A,       &x,      &col,  &R,  &sum,         &scaled, &e,  &total,
                               &colmean, &rowmax, &best, &At, &every_other, &gram,   &Ax, &c12};

  /* 1. Pick a device: TSR_DEVICE, else the first GPU, else the CPU. */
  tsr_device dev;
  char name[32];
  CHECK(tsr_device_default(&dev));
  CHECK(tsr_device_string(dev, name, sizeof name));
  printf("Tessera tutorial on device %s\n\n", name);

  /* 2. Create arrays: from host data (row-major), arange, random numbers. */
  const double a_host[6] = {1, 2, 3, 4, 5, 6};
  const int64_t shape23[2] = {2, 3};
  CHECK(tsr_from_host(2, shape23, TSR_F64, dev, a_host, &A));
  CHECK(tsr_arange(0, 3, 1, TSR_F64, dev, &x));
  CHECK(tsr_random_uniform(2, shape23, TSR_F64, dev, /*seed=*/42, 0.0, 1.0, &R));
  CHECK(print_array("A = from_host([[1,2,3],[4,5,6]])", A));
  CHECK(print_array("x = arange(0, 3, 1)", x));
  CHECK(print_array("R = random_uniform(seed 42, [0, 1))", R));

  /* 3. Elementwise operators broadcast like NumPy: a (3,) row meets every row of a (2,3)
        matrix, a (2,1) column meets every column. */
  const int64_t shape21[2] = {2, 1};
  const double c_host[2] = {10, 100};
  CHECK(tsr_from_host(2, shape21, TSR_F64, dev, c_host, &col));
  CHECK(tsr_add(A, x, &sum));
  CHECK(tsr_mul(A, col, &scaled));
  CHECK(print_array("A + x  (x added to each row)", sum));
  CHECK(print_array("A * [[10],[100]]  (each row scaled)", scaled));

  /* 4. Unary operators. */
  CHECK(tsr_exp(R, &e));
  CHECK(print_array("exp(R)", e));

  /* 5. Reductions: over everything, or along one axis. */
  CHECK(tsr_sum(A, TSR_AXIS_ALL, 0, &total));
  CHECK(tsr_mean(A, 0, 0, &colmean));
  CHECK(tsr_max(A, 1, 0, &rowmax));
  CHECK(tsr_argmax(R, TSR_AXIS_ALL, 0, &best));
  CHECK(print_array("sum(A)", total));
  CHECK(print_array("mean(A, axis 0)", colmean));
  CHECK(print_array("max(A, axis 1)", rowmax));
  CHECK(print_array("argmax(R) (flat index)", best));

  /* 6. Views share memory with their base: a transpose, and every other column. */
  CHECK(tsr_transpose(A, NULL, &At));
  CHECK(tsr_slice(A, 1, 0, TSR_SLICE_END, 2, &every_other));
  CHECK(print_array("A^T  (a view)", At));
  CHECK(print_array("A[:, ::2]  (a view)", every_other));

  /* 7. Matrix multiplication (NumPy matmul): matrix @ matrix, matrix @ vector. */
  CHECK(tsr_matmul(A, At, &gram));
  CHECK(tsr_matmul(A, x, &Ax));
  CHECK(print_array("A @ A^T", gram));
  CHECK(print_array("A @ x", Ax));

  /* 8. Results come back to the host with tsr_array_read; check two of them. */
  double g[4], t;
  CHECK(tsr_array_read(gram, g, sizeof g));
  CHECK(tsr_array_read(total, &t, sizeof t));
  if (t != 21 || g[0] != 14 || g[1] != 32 || g[2] != 32 || g[3] != 77) {
    fprintf(stderr, "unexpected results: sum %g, A @ A^T [[%g, %g], [%g, %g]]\n", t, g[0], g[1],
            g[2], g[3]);
    goto done;
  }

  /* 9. Mistakes come back as statuses with a message, never as a crash. */
  tsr_status st = tsr_matmul(A, A, &c12);
  printf("\nA @ A is refused: %s: %s\n", tsr_status_name(st), tsr_last_error());
  if (st != TSR_ERR_SHAPE) goto done;
  failed = 0;

done:
  for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
    tsr_array_release(*owned[i]);
  return failed;
}
