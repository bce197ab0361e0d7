/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Logistic regression trained with Tessera array ops on the UCI Wine data (data/wine.npy,
 * 178 wines x 13 measurements; data/wine_labels.npy, cultivar 0/1/2): cultivar 0 against the
 * rest, full-batch gradient descent on the mean cross-entropy. Prints loss and accuracy.
 *
 *   logreg [wine.npy] [wine_labels.npy] [device]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <tessera.h>

/* Every call is checked; on failure print Tessera's message and leave. */
#define CHECK(call)                                                                                \
  do {                                                                                             \
    tsr_status st_ = (call);                                                                       \
    if (st_ != TSR_OK) {                                                                           \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, tsr_status_name(st_),                 \
              tsr_last_error());                                                                   \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* Replaces *x by the result of an op (dropping the old reference). */
static void set(tsr_array **x, tsr_array *value) {
  tsr_array_release(*x);
  *x = value;
}

static tsr_array *scalar(double v, tsr_device dev) {
  tsr_array *s = NULL;
  CHECK(tsr_full(0, NULL, TSR_F64, dev, v, &s));
  return s;
}

int main(int argc, char **argv) {
  const char *xpath = argc > 1 ? argv[1] : "data/wine.npy";
  const char *ypath = argc > 2 ? argv[2] : "data/wine_labels.npy";
  tsr_device dev;
  if (argc > 3)
    CHECK(tsr_device_parse(argv[3], &dev));
  else
    CHECK(tsr_device_default(&dev));

  tsr_array *x = NULL, *labels = NULL;
  CHECK(tsr_npy_load(xpath, dev, &x));
  CHECK(tsr_npy_load(ypath, TSR_CPU, &labels));
  tsr_array_props xi, li;
  CHECK(tsr_array_info(x, &xi));
  CHECK(tsr_array_info(labels, &li));
  if (xi.ndim != 2 || li.ndim != 1 || li.shape[0] != xi.shape[0] || li.dtype != TSR_I64) {
    fprintf(stderr, "logreg: expected X (n x d) and int64 labels (n)\n");
    return 1;
  }
  const int64_t n = xi.shape[0], d = xi.shape[1];

  /* Targets: 1 for cultivar 0, else 0. */
  int64_t *lab = malloc((size_t)n * sizeof *lab);
  double *yh = malloc((size_t)n * sizeof *yh);
  CHECK(tsr_array_read(labels, lab, (size_t)n * sizeof *lab));
  for (int64_t i = 0; i < n; i++)
    yh[i] = lab[i] == 0 ? 1.0 : 0.0;
  tsr_array *y = NULL;
  CHECK(tsr_from_host(1, &n, TSR_F64, dev, yh, &y));

  /* Standardize the features: (X - mean) / std, column by column (broadcasting). */
  tsr_array *mu = NULL, *xc = NULL, *sq = NULL, *var = NULL, *sd = NULL, *xs = NULL;
  CHECK(tsr_mean(x, 0, 1, &mu));
  CHECK(tsr_sub(x, mu, &xc));
  CHECK(tsr_mul(xc, xc, &sq));
  CHECK(tsr_mean(sq, 0, 1, &var));
  CHECK(tsr_sqrt(var, &sd));
  CHECK(tsr_div(xc, sd, &xs));

  tsr_array *xt = NULL; /* X^T as a view, for the gradient */
  CHECK(tsr_transpose(xs, NULL, &xt));
  tsr_array *w = NULL, *b = scalar(0.0, dev), *one = scalar(1.0, dev);
  CHECK(tsr_zeros(1, &d, TSR_F64, dev, &w));
  const double lr = 0.5;
  tsr_array *lr_s = scalar(lr, dev), *lr_n = scalar(lr / (double)n, dev);
  double *p_host = malloc((size_t)n * sizeof *p_host);

  for (int epoch = 0; epoch <= 200; epoch++) {
    tsr_array *z = NULL, *p = NULL, *r = NULL, *g = NULL, *gb = NULL, *t = NULL;
    CHECK(tsr_matmul(xs, w, &z)); /* (n,d) @ (d,) -> (n,) */
    CHECK(tsr_add(z, b, &t));
    set(&z, t);
    CHECK(tsr_sigmoid(z, &p));
    CHECK(tsr_sub(p, y, &r)); /* dLoss/dz */
    CHECK(tsr_matmul(xt, r, &g));
    CHECK(tsr_mean(r, TSR_AXIS_ALL, 0, &gb));
    CHECK(tsr_mul(g, lr_n, &t));
    set(&g, t);
    CHECK(tsr_sub(w, g, &t));
    set(&w, t);
    CHECK(tsr_mul(gb, lr_s, &t));
    set(&gb, t);
    CHECK(tsr_sub(b, gb, &t));
    set(&b, t);

    if (epoch % 50 == 0 || epoch == 200) {
      /* Cross-entropy -mean(y log p + (1-y) log(1-p)) with Tessera ops; accuracy on host. */
      tsr_array *lp = NULL, *q = NULL, *lq = NULL, *yq = NULL, *a1 = NULL, *a2 = NULL, *s = NULL,
                *loss = NULL;
      CHECK(tsr_log(p, &lp));
      CHECK(tsr_sub(one, p, &q));
      CHECK(tsr_log(q, &lq));
      CHECK(tsr_sub(one, y, &yq));
      CHECK(tsr_mul(y, lp, &a1));
      CHECK(tsr_mul(yq, lq, &a2));
      CHECK(tsr_add(a1, a2, &s));
      CHECK(tsr_mean(s, TSR_AXIS_ALL, 0, &loss));
      double lv;
      CHECK(tsr_array_read(loss, &lv, sizeof lv));
      CHECK(tsr_array_read(p, p_host, (size_t)n * sizeof *p_host));
      int64_t correct = 0;
      for (int64_t i = 0; i < n; i++)
        correct += (p_host[i] > 0.5) == (yh[i] > 0.5);
      printf("epoch %3d  loss %.5f  accuracy %.4f\n", epoch, -lv, (double)correct / (double)n);
      if (epoch == 200 && (double)correct / (double)n < 0.95) {
        fprintf(stderr, "logreg: accuracy below 0.95\n");
        return 1;
      }
      tsr_array *all[] = {lp, q, lq, yq, a1, a2, s, loss};
      for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        tsr_array_release(all[i]);
    }
    tsr_array_release(z);
    tsr_array_release(p);
    tsr_array_release(r);
    tsr_array_release(g);
    tsr_array_release(gb);
  }
  tsr_array *all[] = {x, labels, y, mu, xc, sq, var, sd, xs, xt, w, b, one, lr_s, lr_n};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    tsr_array_release(all[i]);
  free(lab);
  free(yh);
  free(p_host);
  return 0;
}
