/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtessera_scalapack's complex entries against a float64-complex reference: pzgemm_ and
 * pcgemm_ on random complex matrices distributed with BLACS grids of every shape that fits
 * the ranks, both descriptor kinds, ragged sizes, submatrix offsets, per-matrix blocks, first
 * blocks and source processes (replicated included), leading dimensions with gaps, every
 * operation 'N', 'T', 'C' (a missing or extra conjugation changes the result: the inputs have
 * imaginary parts, some purely imaginary), complex alpha and beta (beta = 0 with NaN in C);
 * elements outside sub(C) must be untouched. Also the error codes under the routine's name and
 * the counters of the complex entries.
 *
 * The layout is counted out element by element, independently of the library.
 */
#define _XOPEN_SOURCE 700
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/scalapack.h"
#include "tsr_test.h"

extern void Cblacs_get(int ctxt, int what, int *val);
extern void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int ctxt);

static int world_rank, world_size;

static int last_info;
static char last_rout[16];
__attribute__((visibility("default"))) void PB_Cabort(int ctxt, char *rout, int info);
void PB_Cabort(int ctxt, char *rout, int info) {
  (void)ctxt;
  last_info = info;
  snprintf(last_rout, sizeof last_rout, "%s", rout);
}

static int all_ranks(int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

/* Owner and local index of each global index of one dimension, counted out. */
typedef struct dimmap {
  int *owner; /* -1: replicated */
  int64_t *local;
  int64_t nloc;
} dimmap;

static dimmap map_dim(int64_t n, int64_t ib, int64_t b, int src, int nprocs, int me) {
  dimmap d;
  d.owner = malloc((size_t)(n + 1) * sizeof *d.owner);
  d.local = malloc((size_t)(n + 1) * sizeof *d.local);
  int64_t *count = calloc((size_t)nprocs, sizeof *count);
  for (int64_t g = 0; g < n; g++) {
    int64_t blk = g < ib ? 0 : 1 + (g - ib) / b;
    int o = src < 0 ? -1 : (int)((src + blk) % nprocs);
    d.owner[g] = o;
    d.local[g] = o < 0 ? g : count[o]++;
  }
  d.nloc = src < 0 ? n : count[me];
  free(count);
  return d;
}

typedef struct layout {
  int kind, imb, inb, mb, nb, rsrc, csrc, gap;
} layout;

/* A distributed complex matrix: local array of (re, im) doubles. */
typedef struct zmat {
  int desc[11];
  int64_t m, n, lld;
  dimmap r, c;
  double *loc; /* 2 * lld * max(1, nloc) */
} zmat;

static bool mine(const zmat *x, int64_t i, int64_t j, int myrow, int mycol) {
  return (x->r.owner[i] < 0 || x->r.owner[i] == myrow) &&
         (x->c.owner[j] < 0 || x->c.owner[j] == mycol);
}

static int64_t nloc_elems(const zmat *x) {
  return x->lld * (x->c.nloc > 0 ? x->c.nloc : 1);
}

static zmat make(int ctxt, int64_t m, int64_t n, const layout *l, const double *global, int p,
                 int q, int myrow, int mycol) {
  zmat x;
  x.m = m;
  x.n = n;
  int imb = l->kind == 11 ? l->imb : l->mb, inb = l->kind == 11 ? l->inb : l->nb;
  x.r = map_dim(m, imb, l->mb, l->rsrc, p, myrow);
  x.c = map_dim(n, inb, l->nb, l->csrc, q, mycol);
  x.lld = (x.r.nloc > 1 ? x.r.nloc : 1) + l->gap;
  x.loc = malloc((size_t)(2 * nloc_elems(&x)) * sizeof *x.loc);
  for (int64_t e = 0; e < 2 * nloc_elems(&x); e++)
    x.loc[e] = -777.0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++)
      if (mine(&x, i, j, myrow, mycol)) {
        int64_t at = x.r.local[i] + x.c.local[j] * x.lld;
        x.loc[2 * at] = global[2 * (i + j * m)];
        x.loc[2 * at + 1] = global[2 * (i + j * m) + 1];
      }
  if (l->kind == 9) {
    int d[9] = {1, ctxt, (int)m, (int)n, l->mb, l->nb, l->rsrc, l->csrc, (int)x.lld};
    memcpy(x.desc, d, sizeof d);
  } else {
    int d[11] = {2,     ctxt,  (int)m,  (int)n,  l->imb,    l->inb,
                 l->mb, l->nb, l->rsrc, l->csrc, (int)x.lld};
    memcpy(x.desc, d, sizeof d);
  }
  return x;
}

static void free_mat(zmat *x) {
  free(x->r.owner), free(x->r.local), free(x->c.owner), free(x->c.local), free(x->loc);
}

/* kind 0: both parts random; 1: purely imaginary; 2: purely real. */
static double *random_global(int64_t m, int64_t n, unsigned seed, int kind) {
  double *g = malloc((size_t)(2 * m * n + 2) * sizeof *g);
  srand48(seed);
  for (int64_t e = 0; e < m * n; e++) {
    double re = 2.0 * drand48() - 1.0, im = 2.0 * drand48() - 1.0;
    g[2 * e] = kind == 1 ? 0.0 : re;
    g[2 * e + 1] = kind == 2 ? 0.0 : im;
  }
  return g;
}

typedef struct zcase {
  char ta, tb;
  int m, n, k;
  int ia, ja, ib, jb, ic, jc;
  layout la, lb, lc;
  double alpha[2], beta[2];
  int kind_a, kind_b; /* random_global's kinds */
  int nan_c;          /* beta = 0 with NaN in sub(C) */
} zcase;

/* op(X)(i, l) of a global column-major complex X (rows mx) with offsets (xi, xj). */
static void opget(const double *g, int64_t mx, char t, int xi, int xj, int i, int l, double *re,
                  double *im) {
  bool n = t == 'N' || t == 'n';
  int64_t at =
      n ? (xi - 1 + i) + (int64_t)(xj - 1 + l) * mx : (xi - 1 + l) + (int64_t)(xj - 1 + i) * mx;
  *re = g[2 * at];
  *im = g[2 * at + 1];
  if (t == 'C' || t == 'c') *im = -*im;
}

static int run_case(int ctxt, const zcase *t, int single, unsigned seed) {
  int p, q, myrow, mycol;
  Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
  bool nta = t->ta == 'N', ntb = t->tb == 'N';
  int ar = nta ? t->m : t->k, ac = nta ? t->k : t->m, br = ntb ? t->k : t->n,
      bc = ntb ? t->n : t->k;
  int64_t MA = t->ia - 1 + ar + 2, NA = t->ja - 1 + ac + 1, MB = t->ib - 1 + br + 1,
          NB = t->jb - 1 + bc + 3, MC = t->ic - 1 + t->m + 2, NC = t->jc - 1 + t->n + 1;
  double *ga = random_global(MA, NA, seed, t->kind_a),
         *gb = random_global(MB, NB, seed + 1, t->kind_b), *gc = random_global(MC, NC, seed + 2, 0);
  if (single) /* the values the single call sees */
    for (double *g[3] = {ga, gb, gc}, **x = g; x < g + 3; x++) {
      int64_t len = x == g ? MA * NA : x == g + 1 ? MB * NB : MC * NC;
      for (int64_t e = 0; e < 2 * len; e++)
        (*x)[e] = (float)(*x)[e];
    }
  if (t->nan_c)
    for (int j = 0; j < t->n; j++)
      for (int i = 0; i < t->m; i++)
        gc[2 * ((t->ic - 1 + i) + (int64_t)(t->jc - 1 + j) * MC)] = NAN;
  zmat A = make(ctxt, MA, NA, &t->la, ga, p, q, myrow, mycol);
  zmat B = make(ctxt, MB, NB, &t->lb, gb, p, q, myrow, mycol);
  zmat C = make(ctxt, MC, NC, &t->lc, gc, p, q, myrow, mycol);
  double *ref = malloc((size_t)(2 * MC * NC) * sizeof *ref);
  memcpy(ref, gc, (size_t)(2 * MC * NC) * sizeof *ref);
  bool beta0 = t->beta[0] == 0.0 && t->beta[1] == 0.0;
  for (int j = 0; j < t->n; j++)
    for (int i = 0; i < t->m; i++) {
      double sr = 0.0, si = 0.0;
      for (int l = 0; l < t->k; l++) {
        double xr, xi, yr, yi;
        opget(ga, MA, t->ta, t->ia, t->ja, i, l, &xr, &xi);
        opget(gb, MB, t->tb, t->ib, t->jb, l, j, &yr, &yi);
        sr += xr * yr - xi * yi;
        si += xr * yi + xi * yr;
      }
      double *r = &ref[2 * ((t->ic - 1 + i) + (int64_t)(t->jc - 1 + j) * MC)];
      double cr = beta0 ? 0.0 : t->beta[0] * r[0] - t->beta[1] * r[1];
      double ci = beta0 ? 0.0 : t->beta[0] * r[1] + t->beta[1] * r[0];
      r[0] = t->alpha[0] * sr - t->alpha[1] * si + cr;
      r[1] = t->alpha[0] * si + t->alpha[1] * sr + ci;
    }
  int m = t->m, n = t->n, k = t->k;
  if (!single) {
    pzgemm_(&t->ta, &t->tb, &m, &n, &k, t->alpha, A.loc, &t->ia, &t->ja, A.desc, B.loc, &t->ib,
            &t->jb, B.desc, t->beta, C.loc, &t->ic, &t->jc, C.desc);
  } else {
    int64_t na = 2 * nloc_elems(&A), nb = 2 * nloc_elems(&B), nc = 2 * nloc_elems(&C);
    float *fa = malloc((size_t)na * sizeof *fa), *fb = malloc((size_t)nb * sizeof *fb),
          *fc = malloc((size_t)nc * sizeof *fc);
    for (int64_t e = 0; e < na; e++)
      fa[e] = (float)A.loc[e];
    for (int64_t e = 0; e < nb; e++)
      fb[e] = (float)B.loc[e];
    for (int64_t e = 0; e < nc; e++)
      fc[e] = (float)C.loc[e];
    float alpha[2] = {(float)t->alpha[0], (float)t->alpha[1]},
          beta[2] = {(float)t->beta[0], (float)t->beta[1]};
    pcgemm_(&t->ta, &t->tb, &m, &n, &k, alpha, fa, &t->ia, &t->ja, A.desc, fb, &t->ib, &t->jb,
            B.desc, beta, fc, &t->ic, &t->jc, C.desc);
    for (int64_t e = 0; e < nc; e++)
      C.loc[e] = fc[e];
    free(fa), free(fb), free(fc);
  }
  double tol = (single ? 4e-6 : 8e-15) * (t->k + 2) * 4.0;
  int ok = 1;
  for (int64_t j = 0; j < NC && ok; j++)
    for (int64_t i = 0; i < MC && ok; i++) {
      if (!mine(&C, i, j, myrow, mycol)) continue;
      int64_t at = C.r.local[i] + C.c.local[j] * C.lld;
      const double *got = &C.loc[2 * at], *want = &ref[2 * (i + j * MC)];
      bool inside =
          i >= t->ic - 1 && i < t->ic - 1 + t->m && j >= t->jc - 1 && j < t->jc - 1 + t->n;
      for (int h = 0; h < 2 && ok; h++) {
        if (!inside) {
          if (!(got[h] == want[h] || (isnan(got[h]) && isnan(want[h])))) ok = 0;
        } else if (!(fabs(got[h] - want[h]) <= tol * (1.0 + fabs(want[h])))) {
          ok = 0;
        }
      }
      if (!ok)
        print_message("rank %d grid %dx%d %s %c%c m%d n%d k%d: C(%lld,%lld) = (%.17g, %.17g), "
                      "want (%.17g, %.17g)\n",
                      world_rank, p, q, single ? "PCGEMM" : "PZGEMM", t->ta, t->tb, t->m, t->n,
                      t->k, (long long)i + 1, (long long)j + 1, got[0], got[1], want[0], want[1]);
    }
  free_mat(&A), free_mat(&B), free_mat(&C);
  free(ga), free(gb), free(gc), free(ref);
  return ok;
}

static unsigned rand_next(unsigned *st) {
  *st = *st * 1103515245u + 12345u;
  return (*st >> 8) & 0xffffffu;
}

static int rand_in(unsigned *st, int lo, int hi) {
  return lo + (int)(rand_next(st) % (unsigned)(hi - lo + 1));
}

static layout random_layout(unsigned *st) {
  layout l;
  l.kind = rand_in(st, 0, 1) ? 11 : 9;
  l.mb = rand_in(st, 1, 7);
  l.nb = rand_in(st, 1, 7);
  l.imb = l.kind == 11 ? rand_in(st, 1, 7) : l.mb;
  l.inb = l.kind == 11 ? rand_in(st, 1, 7) : l.nb;
  l.rsrc = rand_in(st, 0, 5) == 0 ? -1 : rand_in(st, 0, 3);
  l.csrc = rand_in(st, 0, 5) == 0 ? -1 : rand_in(st, 0, 3);
  l.gap = rand_in(st, 0, 2);
  return l;
}

/* Every pair of operations on every grid, random layouts and scalars (purely imaginary and
   purely real scalars and operands among them), both precisions. */
static void test_complex_products(void **state) {
  (void)state;
  static const struct {
    int p, q;
    const char *order;
  } grids[] = {{1, 1, "R"}, {1, 2, "R"}, {2, 1, "C"}, {2, 2, "R"}, {2, 2, "C"}, {1, 4, "C"}};
  static const char ops[3] = {'N', 'T', 'C'};
  static const double scalars[][2] = {
      {1.5, -0.5}, {0.0, 1.0}, {-0.75, 0.0}, {0.0, -2.0}, {0.5, 0.25}};
  int nfail = 0, ncase = 0;
  unsigned st = 5020261u;
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
    if (grids[gi].p * grids[gi].q > world_size) continue;
    int ctxt;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, grids[gi].order, grids[gi].p, grids[gi].q);
    int p, q, myrow, mycol;
    Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
    int ok = 1;
    for (int ci = 0; ci < 18; ci++) {
      zcase t;
      memset(&t, 0, sizeof t);
      t.ta = ops[ci % 3];
      t.tb = ops[(ci / 3) % 3];
      t.m = rand_in(&st, 1, 29);
      t.n = rand_in(&st, 1, 29);
      t.k = rand_in(&st, 1, 29);
      t.ia = rand_in(&st, 1, 4), t.ja = rand_in(&st, 1, 4);
      t.ib = rand_in(&st, 1, 4), t.jb = rand_in(&st, 1, 4);
      t.ic = rand_in(&st, 1, 4), t.jc = rand_in(&st, 1, 4);
      t.la = random_layout(&st), t.lb = random_layout(&st), t.lc = random_layout(&st);
      memcpy(t.alpha, scalars[rand_in(&st, 0, 4)], sizeof t.alpha);
      int bi = rand_in(&st, 0, 5);
      if (bi < 5) memcpy(t.beta, scalars[bi], sizeof t.beta); /* else beta = 0, NaN in C */
      t.nan_c = bi == 5;
      t.kind_a = rand_in(&st, 0, 2) == 0 ? 1 : 0; /* some purely imaginary A */
      t.kind_b = rand_in(&st, 0, 3) == 0 ? 1 : 0;
      int single = ci % 2;
      if (p <= 0) continue;
      layout *ls[3] = {&t.la, &t.lb, &t.lc};
      for (int x = 0; x < 3; x++) {
        if (ls[x]->rsrc >= 0) ls[x]->rsrc %= p;
        if (ls[x]->csrc >= 0) ls[x]->csrc %= q;
      }
      ok &= run_case(ctxt, &t, single, 7000u + (unsigned)(ci * 11 + gi));
      ncase++;
    }
    if (p > 0) Cblacs_gridexit(ctxt);
    if (!all_ranks(ok)) nfail++;
  }
  assert_int_equal(nfail, 0);
  assert_true(ncase > 0 || world_rank >= 1);
}

/* A product whose only imaginary parts are A's: op 'C' against 'T' differs by the sign of the
   whole product, so a conjugation left out (or made twice) fails; A^H B^H likewise with B. */
static void test_conjugation(void **state) {
  (void)state;
  int ctxt;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "R", 1, world_size >= 2 ? 2 : 1);
  int p, q, myrow, mycol;
  Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
  int ok = 1;
  if (p > 0) {
    layout l = {9, 3, 3, 3, 3, 0, 0, 1};
    zcase t = {'C', 'N', 9, 8, 7, 1, 1, 1, 1, 1, 1, l, l, l, {1.0, 0.0}, {0.0, 0.0}, 1, 2, 0};
    for (int single = 0; single < 2; single++) {
      ok &= run_case(ctxt, &t, single, 11);
      t.ta = 'N', t.tb = 'C', t.kind_a = 2, t.kind_b = 1;
      ok &= run_case(ctxt, &t, single, 12);
      t.ta = 'C', t.tb = 'C', t.kind_a = 1, t.kind_b = 1;
      ok &= run_case(ctxt, &t, single, 13);
      t.ta = 'C', t.tb = 'N', t.kind_a = 1, t.kind_b = 2;
    }
    Cblacs_gridexit(ctxt);
  }
  assert_true(all_ranks(ok));
}

/* Error codes under the complex routines' names, scalars read only after the checks, the
   complex alpha = 0 scaling and quick return, and the counters of the complex entries. */
static void test_complex_errors_and_counts(void **state) {
  (void)state;
  int ctxt;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "R", 1, 1);
  int p, q, myrow, mycol;
  Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
  if (p > 0) {
    double a[32], b[32], c[32];
    for (int e = 0; e < 32; e++)
      a[e] = b[e] = 1.0, c[e] = 5.0;
    int d9[9] = {1, ctxt, 4, 4, 2, 2, 0, 0, 4}, dbad[9] = {1, ctxt, 4, 4, 2, 2, 0, 0, 2};
    int one = 1, two = 2, four = 4;
    double alpha[2] = {1.0, 0.0}, beta[2] = {0.0, 0.0};
    tsr_scalapack_stats s0, s1;
    tsr_scalapack_get_stats(&s0);
    last_info = 0;
    pzgemm_("X", "N", &four, &four, &four, alpha, a, &one, &one, d9, b, &one, &one, d9, beta, c,
            &one, &one, d9);
    assert_int_equal(last_info, -1);
    assert_string_equal(last_rout, "PZGEMM");
    last_info = 0;
    pcgemm_("N", "C", &four, &four, &four, NULL, (float *)a, &two, &one, d9, (float *)b, &one, &one,
            d9, NULL, (float *)c, &one, &one, d9);
    assert_int_equal(last_info, -8);
    assert_string_equal(last_rout, "PCGEMM");
    last_info = 0;
    pzgemm_("C", "N", &four, &four, &four, alpha, a, &one, &one, d9, b, &one, &one, d9, beta, c,
            &one, &one, dbad);
    assert_int_equal(last_info, -1911);
    last_info = 0;
    pzgemm_("C", "T", &four, &four, &four, NULL, a, &one, &one, d9, b, &one, &one, d9, beta, c,
            &one, &one, d9);
    assert_int_equal(last_info, -6);
    for (int e = 0; e < 32; e++)
      assert_true(c[e] == 5.0);
    /* alpha = 0, beta = i: C = i C on sub(C) only (the 2 x 2 from (2, 2)): (e, -2e) becomes
       (2e, e) there. */
    double zero[2] = {0.0, 0.0}, imag[2] = {0.0, 1.0};
    for (int e = 0; e < 16; e++)
      c[2 * e] = e, c[2 * e + 1] = -2.0 * e;
    last_info = 0;
    pzgemm_("N", "N", &two, &two, &four, zero, a, &one, &one, d9, b, &one, &one, d9, imag, c, &two,
            &two, d9);
    assert_int_equal(last_info, 0);
    for (int e = 0; e < 16; e++) {
      int i = e % 4, j = e / 4;
      bool in = i >= 1 && i < 3 && j >= 1 && j < 3;
      assert_true(c[2 * e] == (in ? 2.0 * e : (double)e));
      assert_true(c[2 * e + 1] == (in ? (double)e : -2.0 * e));
    }
    /* alpha = 0, beta = 1 + 0i: quick return. */
    double unit[2] = {1.0, 0.0};
    pzgemm_("N", "N", &two, &two, &four, zero, a, &one, &one, d9, b, &one, &one, d9, unit, c, &two,
            &two, d9);
    tsr_scalapack_get_stats(&s1);
    assert_int_equal(s1.pzgemm, s0.pzgemm + 5);
    assert_int_equal(s1.pcgemm, s0.pcgemm + 1);
    assert_int_equal(s1.errors, s0.errors + 4);
    assert_int_equal(s1.scale, s0.scale + 1);
    assert_int_equal(s1.quick, s0.quick + 1);
    assert_int_equal(s1.pdgemm, s0.pdgemm);
    Cblacs_gridexit(ctxt);
  }
  assert_true(all_ranks(1));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_complex_products),
    cmocka_unit_test(test_conjugation),
    cmocka_unit_test(test_complex_errors_and_counts),
};

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  int fails = cmocka_run_group_tests(tests, NULL, NULL);
  int worst = 0;
  MPI_Allreduce(&fails, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst ? 1 : 0;
}
