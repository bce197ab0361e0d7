/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtessera_scalapack against a float64 reference: pdgemm_ / psgemm_ on random matrices
 * distributed with BLACS grids (row- and column-major) of every shape that fits the ranks,
 * both descriptor kinds (9 entries; 11 with first blocks IMB/INB), ragged sizes, submatrix
 * offsets, per-matrix block sizes and source processes, leading dimensions with gaps, every
 * transpose, beta = 0 with NaN in C, alpha = 0 with NaN in A and B; elements outside sub(C)
 * must be untouched. Also the reference error codes (reported through PB_Cabort, which this
 * program defines, as the PBLAS testers do) and the paths in the library's counters.
 *
 * The layout of the test is computed independently of the library: element by element,
 * the owner and local index of each global row and column are counted out.
 *
 * bench/mpi_count.c, linked into this program, counts the MPI calls the library makes (its
 * PMPI wrappers take the library's MPI_ calls), for the messages of one call (test_messages).
 */
#define _XOPEN_SOURCE 700
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/scalapack.h"
#include "tsr_test.h"

/* BLACS (C interface, from ScaLAPACK). */
extern void Cblacs_pinfo(int *rank, int *nprocs);
extern void Cblacs_get(int ctxt, int what, int *val);
extern void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int ctxt);

static int world_rank, world_size;

/* bench/mpi_count.c: point-to-point and collective MPI calls of this process so far. */
void tsr_mpi_count_read(uint64_t *p2p, uint64_t *coll);

/* The PBLAS error handler: recorded here instead of aborting. */
static int last_info, last_ctxt;
static char last_rout[16];
__attribute__((visibility("default"))) void PB_Cabort(int ctxt, char *rout, int info);
void PB_Cabort(int ctxt, char *rout, int info) {
  last_ctxt = ctxt;
  last_info = info;
  snprintf(last_rout, sizeof last_rout, "%s", rout);
}

static int all_ranks(int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

/* One dimension of a distributed matrix: for each global index, its owner and its local
   index on the owner, counted out one element at a time. */
typedef struct dimmap {
  int *owner;     /* -1: replicated */
  int64_t *local; /* local index on the owner (on every process when replicated) */
  int64_t nloc;   /* local length on this process */
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

static void free_dim(dimmap *d) {
  free(d->owner);
  free(d->local);
}

/* A distributed M x N matrix with its descriptor and local array (double storage; converted
   for single precision calls). */
typedef struct dmat {
  int desc[11];
  int64_t m, n, lld;
  dimmap r, c;
  double *loc;
} dmat;

typedef struct layout {
  int kind;     /* 9 or 11 entries */
  int imb, inb; /* first blocks (11-entry kind only; the 9-entry kind has imb = mb) */
  int mb, nb;
  int rsrc, csrc;
  int gap; /* LLD = max(1, local rows) + gap */
} layout;

static bool mine(const dmat *x, int64_t i, int64_t j, int myrow, int mycol) {
  return (x->r.owner[i] < 0 || x->r.owner[i] == myrow) &&
         (x->c.owner[j] < 0 || x->c.owner[j] == mycol);
}

static dmat make(int ctxt, int64_t m, int64_t n, const layout *l, const double *global, int p,
                 int q, int myrow, int mycol) {
  dmat x;
  x.m = m;
  x.n = n;
  int imb = l->kind == 11 ? l->imb : l->mb, inb = l->kind == 11 ? l->inb : l->nb;
  x.r = map_dim(m, imb, l->mb, l->rsrc, p, myrow);
  x.c = map_dim(n, inb, l->nb, l->csrc, q, mycol);
  x.lld = (x.r.nloc > 1 ? x.r.nloc : 1) + l->gap;
  x.loc = malloc((size_t)(x.lld * (x.c.nloc > 0 ? x.c.nloc : 1)) * sizeof *x.loc);
  for (int64_t e = 0; e < x.lld * (x.c.nloc > 0 ? x.c.nloc : 1); e++)
    x.loc[e] = -777.0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++)
      if (mine(&x, i, j, myrow, mycol))
        x.loc[x.r.local[i] + x.c.local[j] * x.lld] = global[i + j * m];
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

static void free_mat(dmat *x) {
  free_dim(&x->r);
  free_dim(&x->c);
  free(x->loc);
}

static double *random_global(int64_t m, int64_t n, unsigned seed) {
  double *g = malloc((size_t)(m * n + 1) * sizeof *g);
  srand48(seed);
  for (int64_t e = 0; e < m * n; e++)
    g[e] = 2.0 * drand48() - 1.0;
  return g;
}

typedef struct gemm_case {
  char ta, tb;
  int m, n, k;
  int ia, ja, ib, jb, ic, jc; /* 1-based */
  layout la, lb, lc;
  double alpha, beta;
  int nan_c, nan_ab; /* beta = 0 with NaN in sub(C); alpha = 0 with NaN in sub(A), sub(B) */
  int exact;         /* whole matrices of exactly the submatrices' sizes (else a margin) */
} gemm_case;

/* Runs one case on one grid; returns 1 when every local element is right on this rank. */
static int run_case(int ctxt, const gemm_case *t, int single, unsigned seed) {
  int p, q, myrow, mycol;
  Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
  bool nta = t->ta == 'N' || t->ta == 'n', ntb = t->tb == 'N' || t->tb == 'n';
  int ar = nta ? t->m : t->k, ac = nta ? t->k : t->m, br = ntb ? t->k : t->n,
      bc = ntb ? t->n : t->k;
  /* Whole matrices a few rows and columns bigger than the submatrices. */
  int e = t->exact ? 0 : 1;
  int64_t MA = t->ia - 1 + ar + 2 * e, NA = t->ja - 1 + ac + e, MB = t->ib - 1 + br + e,
          NB = t->jb - 1 + bc + 3 * e, MC = t->ic - 1 + t->m + 2 * e, NC = t->jc - 1 + t->n + e;
  double *ga = random_global(MA, NA, seed), *gb = random_global(MB, NB, seed + 1),
         *gc = random_global(MC, NC, seed + 2);
  if (t->nan_c)
    for (int j = 0; j < t->n; j++)
      for (int i = 0; i < t->m; i++)
        gc[(t->ic - 1 + i) + (t->jc - 1 + j) * MC] = NAN;
  if (t->nan_ab) {
    for (int j = 0; j < ac; j++)
      for (int i = 0; i < ar; i++)
        ga[(t->ia - 1 + i) + (t->ja - 1 + j) * MA] = NAN;
    for (int j = 0; j < bc; j++)
      for (int i = 0; i < br; i++)
        gb[(t->ib - 1 + i) + (t->jb - 1 + j) * MB] = NAN;
  }
  dmat A = make(ctxt, MA, NA, &t->la, ga, p, q, myrow, mycol);
  dmat B = make(ctxt, MB, NB, &t->lb, gb, p, q, myrow, mycol);
  dmat C = make(ctxt, MC, NC, &t->lc, gc, p, q, myrow, mycol);
  /* The reference, in float64 from the values the call sees (rounded to float for single). */
  double *ref = malloc((size_t)(MC * NC) * sizeof *ref);
  for (int64_t x = 0; x < MC * NC; x++)
    ref[x] = single ? (double)(float)gc[x] : gc[x];
  for (int j = 0; j < t->n; j++)
    for (int i = 0; i < t->m; i++) {
      double s = 0.0;
      if (t->alpha != 0.0)
        for (int l = 0; l < t->k; l++) {
          double x = nta ? ga[(t->ia - 1 + i) + (t->ja - 1 + l) * MA]
                         : ga[(t->ia - 1 + l) + (t->ja - 1 + i) * MA];
          double y = ntb ? gb[(t->ib - 1 + l) + (t->jb - 1 + j) * MB]
                         : gb[(t->ib - 1 + j) + (t->jb - 1 + l) * MB];
          if (single) x = (float)x, y = (float)y;
          s += x * y;
        }
      double *r = &ref[(t->ic - 1 + i) + (t->jc - 1 + j) * MC];
      *r = t->alpha * s + (t->beta == 0.0 ? 0.0 : t->beta * *r);
    }
  int m = t->m, n = t->n, k = t->k;
  if (!single) {
    pdgemm_(&t->ta, &t->tb, &m, &n, &k, &t->alpha, A.loc, &t->ia, &t->ja, A.desc, B.loc, &t->ib,
            &t->jb, B.desc, &t->beta, C.loc, &t->ic, &t->jc, C.desc);
  } else {
    size_t na = (size_t)(A.lld * (A.c.nloc > 0 ? A.c.nloc : 1)),
           nb = (size_t)(B.lld * (B.c.nloc > 0 ? B.c.nloc : 1)),
           nc = (size_t)(C.lld * (C.c.nloc > 0 ? C.c.nloc : 1));
    float *fa = malloc(na * sizeof *fa), *fb = malloc(nb * sizeof *fb),
          *fc = malloc(nc * sizeof *fc);
    for (size_t e = 0; e < na; e++)
      fa[e] = (float)A.loc[e];
    for (size_t e = 0; e < nb; e++)
      fb[e] = (float)B.loc[e];
    for (size_t e = 0; e < nc; e++)
      fc[e] = (float)C.loc[e];
    float alpha = (float)t->alpha, beta = (float)t->beta;
    psgemm_(&t->ta, &t->tb, &m, &n, &k, &alpha, fa, &t->ia, &t->ja, A.desc, fb, &t->ib, &t->jb,
            B.desc, &beta, fc, &t->ic, &t->jc, C.desc);
    for (size_t e = 0; e < nc; e++)
      C.loc[e] = fc[e];
    free(fa), free(fb), free(fc);
  }
  double tol = (single ? 2e-6 : 4e-15) * (t->k + 2) * 4.0;
  int ok = 1;
  for (int64_t j = 0; j < NC && ok; j++)
    for (int64_t i = 0; i < MC && ok; i++) {
      if (!mine(&C, i, j, myrow, mycol)) continue;
      double got = C.loc[C.r.local[i] + C.c.local[j] * C.lld], want = ref[i + j * MC];
      bool inside =
          i >= t->ic - 1 && i < t->ic - 1 + t->m && j >= t->jc - 1 && j < t->jc - 1 + t->n;
      if (!inside) {
        /* Untouched, bit for bit (NaN stays NaN outside sub(C)). */
        if (!(got == want || (isnan(got) && isnan(want)))) ok = 0;
      } else if (!(fabs(got - want) <= tol * (1.0 + fabs(want)))) {
        ok = 0;
      }
      if (!ok)
        print_message(
            "rank %d grid %dx%d case %c%c m%d n%d k%d: C(%lld,%lld) = %.17g, want %.17g\n",
            world_rank, p, q, t->ta, t->tb, t->m, t->n, t->k, (long long)i + 1, (long long)j + 1,
            got, want);
    }
  free_mat(&A), free_mat(&B), free_mat(&C);
  free(ga), free(gb), free(gc), free(ref);
  return ok;
}

static const layout L44 = {9, 4, 4, 4, 4, 0, 0, 0};
/* The same blocks as an 11-entry descriptor (first blocks IMB/INB = MB/NB). */
static const layout L44_DESC11 = {11, 4, 4, 4, 4, 0, 0, 0};

static const gemm_case cases[] = {
    /* Aligned, tight: SUMMA in place. */
    {'N', 'N', 24, 20, 16, 1, 1, 1, 1, 1, 1, L44_DESC11, L44, L44, 1.5, -0.5, 0, 0, 1},
    /* Ragged sizes, offsets, different blocks per matrix, 11-entry descriptors, gaps. */
    {'N',
     'T',
     23,
     17,
     19,
     3,
     2,
     2,
     5,
     4,
     1,
     {11, 2, 3, 3, 4, 0, 0, 2},
     {9, 5, 5, 5, 5, 0, 0, 1},
     {11, 5, 1, 2, 3, 0, 0, 3},
     -1.0,
     0.75,
     0,
     0},
    {'T',
     'N',
     13,
     29,
     11,
     5,
     7,
     1,
     2,
     6,
     3,
     {9, 3, 3, 3, 3, 0, 0, 0},
     {11, 1, 6, 4, 2, 0, 0, 0},
     {9, 2, 2, 2, 5, 0, 0, 4},
     0.5,
     2.0,
     0,
     0},
    {'C',
     'T',
     31,
     9,
     27,
     2,
     2,
     4,
     1,
     1,
     8,
     {11, 7, 2, 6, 3, 0, 0, 0},
     {9, 4, 4, 4, 4, 0, 0, 0},
     {11, 3, 3, 5, 2, 0, 0, 1},
     1.0,
     1.0,
     0,
     0},
    /* Source processes (adjusted to the grid below). */
    {'N',
     'N',
     21,
     26,
     18,
     1,
     4,
     3,
     1,
     2,
     2,
     {9, 3, 3, 3, 3, 1, 1, 0},
     {11, 2, 4, 4, 3, 1, 0, 0},
     {9, 4, 4, 4, 2, 0, 1, 2},
     -2.0,
     0.25,
     0,
     0},
    /* Replicated dimensions (RSRC or CSRC = -1): every process row (column) holds a copy,
       and every copy of sub(C) must be updated. */
    {'N',
     'T',
     14,
     11,
     9,
     2,
     1,
     1,
     3,
     2,
     2,
     {9, 3, 3, 3, 3, -1, 0, 0},
     {11, 2, 2, 3, 3, 0, -1, 1},
     {9, 4, 4, 4, 4, -1, -1, 0},
     0.75,
     -1.25,
     0,
     0},
    {'T',
     'N',
     10,
     13,
     12,
     1,
     1,
     1,
     1,
     3,
     1,
     {11, 2, 3, 4, 3, 0, -1, 0},
     {9, 2, 2, 2, 2, -1, -1, 0},
     {11, 3, 2, 3, 3, 1, -1, 2},
     1.0,
     0.0,
     1,
     0},
    /* beta = 0 with NaN in C; alpha = 0 with NaN in A and B (C = beta C). */
    {'N', 'N', 15, 14, 13, 1, 1, 2, 2, 3, 3, L44, L44, {9, 3, 3, 3, 3, 0, 0, 0}, 1.25, 0.0, 1, 0},
    {'T', 'T', 12, 10, 9, 2, 2, 1, 1, 1, 1, L44, L44, L44, 0.0, -1.5, 0, 1},
    {'N', 'N', 16, 12, 8, 1, 1, 1, 1, 1, 1, L44, L44, L44, 0.0, 0.0, 1, 1},
    /* beta = 0 with NaN in C on the in-place SUMMA path. */
    {'N', 'N', 16, 12, 8, 1, 1, 1, 1, 1, 1, L44_DESC11, L44, L44, 1.25, 0.0, 1, 0, 1},
    /* Zero sizes and a one-element product. */
    {'N', 'N', 0, 5, 3, 1, 1, 1, 1, 1, 1, L44, L44, L44, 1.0, 2.0, 0, 0},
    {'N', 'T', 6, 0, 3, 1, 1, 1, 1, 1, 1, L44, L44, L44, 1.0, 2.0, 0, 0},
    {'T', 'N', 6, 5, 0, 1, 1, 1, 1, 1, 1, L44, L44, L44, 1.0, 2.0, 0, 0},
    {'N', 'N', 1, 1, 1, 2, 3, 4, 5, 6, 7, L44, L44, L44, 3.0, 0.5, 0, 0},
};

/* The grids (P x Q, order) that fit the ranks; ranks outside a grid wait. */
static void test_products(void **state) {
  (void)state;
  static const struct {
    int p, q;
    const char *order;
  } grids[] = {{1, 1, "R"}, {1, 2, "R"}, {2, 1, "C"}, {2, 2, "R"}, {2, 2, "C"}, {1, 4, "C"}};
  int nfail = 0, ncase = 0;
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
    if (grids[gi].p * grids[gi].q > world_size) continue;
    int ctxt;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, grids[gi].order, grids[gi].p, grids[gi].q);
    int p, q, myrow, mycol;
    Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
    int ok = 1;
    if (p > 0) {
      for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int single = 0; single < 2; single++) {
          gemm_case t = cases[ci];
          layout *ls[3] = {&t.la, &t.lb, &t.lc};
          for (int x = 0; x < 3; x++) {
            ls[x]->rsrc %= p;
            ls[x]->csrc %= q;
          }
          ok &= run_case(ctxt, &t, single, 1000u + (unsigned)(ci * 7 + gi));
          ncase++;
        }
      Cblacs_gridexit(ctxt);
    }
    if (!all_ranks(ok)) nfail++;
  }
  assert_int_equal(nfail, 0);
  assert_true(ncase > 0 || world_rank >= 1);
}

/* A deterministic generator for the random cases (run_case reseeds drand48). */
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
  /* Source processes -1 (replicated) to 3, reduced to the grid by the caller. */
  l.rsrc = rand_in(st, 0, 5) == 0 ? -1 : rand_in(st, 0, 3);
  l.csrc = rand_in(st, 0, 5) == 0 ? -1 : rand_in(st, 0, 3);
  l.gap = rand_in(st, 0, 2);
  return l;
}

/* Random transposes, sizes, offsets, blocks, first blocks, sources (replicated included),
   leading dimensions and scalars, on every grid that fits: whatever path each call takes
   (the ctest variants force TSR_SCALAPACK_PATH=direct and =redistribute), every element of
   C is right and every element outside sub(C) untouched. */
static void test_random_layouts(void **state) {
  (void)state;
  static const struct {
    int p, q;
    const char *order;
  } grids[] = {{1, 1, "R"}, {1, 2, "R"}, {2, 1, "C"}, {2, 2, "R"}, {2, 2, "C"},
               {1, 3, "R"}, {3, 1, "R"}, {1, 4, "C"}, {4, 1, "R"}};
  static const char ops[3] = {'N', 'T', 'C'};
  int nfail = 0;
  unsigned st = 20261128u;
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
    if (grids[gi].p * grids[gi].q > world_size) continue;
    int ctxt;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, grids[gi].order, grids[gi].p, grids[gi].q);
    int p, q, myrow, mycol;
    Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
    int ok = 1;
    for (int ci = 0; ci < 24; ci++) {
      gemm_case t;
      memset(&t, 0, sizeof t);
      t.ta = ops[rand_in(&st, 0, 2)];
      t.tb = ops[rand_in(&st, 0, 2)];
      t.m = rand_in(&st, 1, 37);
      t.n = rand_in(&st, 1, 37);
      t.k = rand_in(&st, 1, 37);
      t.ia = rand_in(&st, 1, 5), t.ja = rand_in(&st, 1, 5);
      t.ib = rand_in(&st, 1, 5), t.jb = rand_in(&st, 1, 5);
      t.ic = rand_in(&st, 1, 5), t.jc = rand_in(&st, 1, 5);
      t.la = random_layout(&st), t.lb = random_layout(&st), t.lc = random_layout(&st);
      t.alpha = (rand_in(&st, 1, 8) - 4.5) / 2.0;
      t.beta = rand_in(&st, 0, 3) == 0 ? 0.0 : (rand_in(&st, 0, 8) - 4.0) / 4.0;
      t.nan_c = t.beta == 0.0;
      int single = rand_in(&st, 0, 3) == 0;
      if (p <= 0) continue; /* outside this grid: draw the same cases, run none */
      layout *ls[3] = {&t.la, &t.lb, &t.lc};
      for (int x = 0; x < 3; x++) {
        if (ls[x]->rsrc >= 0) ls[x]->rsrc %= p;
        if (ls[x]->csrc >= 0) ls[x]->csrc %= q;
      }
      ok &= run_case(ctxt, &t, single, 5000u + (unsigned)(ci * 13 + gi));
    }
    if (p > 0) Cblacs_gridexit(ctxt);
    if (!all_ranks(ok)) nfail++;
  }
  assert_int_equal(nfail, 0);
}

/* Sets TSR_SCALAPACK_PATH to `path` (NULL: unset); returns the value it had (to free). */
static char *set_path(const char *path) {
  const char *was = getenv("TSR_SCALAPACK_PATH");
  char *saved = was ? strdup(was) : NULL;
  if (path)
    setenv("TSR_SCALAPACK_PATH", path, 1);
  else
    unsetenv("TSR_SCALAPACK_PATH");
  return saved;
}

/* The path of each call, as TSR_SCALAPACK_PATH forces it and as the rule decides: SUMMA in
   place, the redistribution, the direct path; the counters say which ran, and none failed. */
static void test_paths(void **state) {
  (void)state;
  int ctxt;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "R", 1, world_size >= 2 ? 2 : 1);
  int p, q, myrow, mycol;
  Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
  int ok = 1;
  char *saved = set_path("redistribute");
  if (p > 0) {
    tsr_scalapack_stats s0, s1, s2, s3;
    tsr_scalapack_get_stats(&s0);
    ok &= run_case(ctxt, &cases[1], 0, 8);
    tsr_scalapack_get_stats(&s1);
    ok &= s1.redistribute == s0.redistribute + 1 && s1.direct == s0.direct;
    setenv("TSR_SCALAPACK_PATH", "direct", 1);
    ok &= run_case(ctxt, &cases[0], 0, 7);
    ok &= run_case(ctxt, &cases[1], 0, 8);
    tsr_scalapack_get_stats(&s2);
    ok &= s2.direct == s1.direct + 2 && s2.summa == s1.summa && s2.redistribute == s1.redistribute;
    /* auto: a small product with a transposed operand takes the direct path. */
    setenv("TSR_SCALAPACK_PATH", "auto", 1);
    ok &= run_case(ctxt, &cases[1], 0, 8);
    tsr_scalapack_get_stats(&s3);
    ok &= s3.direct == s2.direct + 1 && s3.failed == 0;
    ok &= s3.pdgemm == s0.pdgemm + 4 && s3.seconds > 0.0;
    if (q > 1) ok &= s3.bytes_sent > s0.bytes_sent && s3.bytes_received > s0.bytes_received;
    Cblacs_gridexit(ctxt);
  }
  free(set_path(saved));
  free(saved);
  assert_true(all_ranks(ok));
}

/* The messages of one call on the direct path (issue 48). The trailing update of a blocked
   reduction, C -= Y X^T (PDLARFB, PDLATRD) with k = NB inside one block, needs both panels
   from the one process column that holds k (or process row, in the 'T','N' form); they travel
   in one broadcast along the process rows (columns), where a broadcast of each operand makes
   two: one collective a call on a 1 x Q or P x 1 grid (on P x 1 only the transposed operand's
   gather), two on a 2 x 2 grid, no point-to-point message (once the grid and the workspace
   are set up, by a first call). When Y starts in another process column the two panels come
   from two roots and go in one gather. So does the inner product of two distributed vectors
   (w = v^T c, m = n = 1, k over the process rows in blocks of 1: ScaLAPACK's tridiagonal
   reduction tester makes 31,736 such calls on 2 x 2): one gather of both where there were
   two. Every product is checked against the float64 reference, also where the panels are over
   the size sent as one message (then two collectives). */
static void test_messages(void **state) {
  (void)state;
  if (world_size < 2) skip();
  char *saved = set_path("direct");
  const struct { int p, q; } grids[] = {{1, world_size}, {world_size, 1}, {2, world_size / 2}};
  int ok = 1;
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
    if (gi == 2 && grids[2].q < 2) continue; /* 2 x 1 is the P x 1 grid above */
    int ctxt, p, q, myrow, mycol;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "R", grids[gi].p, grids[gi].q);
    Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
    for (int v = 0; v < 8; v++) {
      bool tn = v & 1, shifted = v & 2, big = v & 4;
      int nb = big || shifted ? 16 : 2, n0 = big ? 1100 : 48;
      layout l = {9, nb, nb, nb, nb, 0, 0, 0}, ly = l;
      if (shifted) {
        /* Y's k in process column (row) 1, X's in 0. */
        if (tn)
          ly.rsrc = 1 % p;
        else
          ly.csrc = 1 % q;
      }
      gemm_case t = {'N',    'T', n0, n0 - nb, nb,   1,   1, nb + 1, 1, 1,
                     nb + 1, ly,  l,  l,       -1.0, 1.0, 0, 0,      1};
      if (tn) {
        gemm_case u = {'T', 'N', n0 - nb, n0, nb,   1,   nb + 1, 1, 1, nb + 1,
                       1,   l,   ly,      l,  -1.0, 1.0, 0,      0, 1};
        t = u;
      }
      /* Once to set up (the grid's communicators, the workspace, agreed), then counted. */
      int right = run_case(ctxt, &t, 0, 900u + (unsigned)(gi * 16 + v));
      uint64_t p0, c0, p1, c1;
      tsr_mpi_count_read(&p0, &c0);
      right &= run_case(ctxt, &t, 0, 950u + (unsigned)(gi * 16 + v));
      tsr_mpi_count_read(&p1, &c1);
      long long most[2] = {(long long)(p1 - p0), (long long)(c1 - c0)}, all[2];
      MPI_Allreduce(most, all, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
      long long want = p > 1 && q > 1 ? 2 : 1;
      /* Over the one-message size (1100 x 16 on a 1 x Q or P x 1 grid): one more. */
      long long most_coll = want + (big ? 1 : 0);
      bool counted = all[0] == 0 && all[1] <= most_coll && (big || all[1] == want);
      if (!right || !counted) {
        if (world_rank == 0)
          print_error("%d x %d grid, %c%c update, n %d NB %d%s: %lld point-to-point and %lld "
                      "collective calls (want 0 and %lld)%s\n",
                      p, q, t.ta, t.tb, n0, nb, shifted ? ", Y from another process" : "", all[0],
                      all[1], want, right ? "" : "; wrong result");
        ok = 0;
      }
    }
    Cblacs_gridexit(ctxt);
  }
  free(set_path(saved));
  free(saved);
  assert_true(all_ranks(ok));
}

/* One call of t, counted after a first one (the grid's communicators, the workspace):
   point-to-point and collective MPI calls summed over the ranks; 1 when the products are
   right on this rank. */
static int counted_case(int ctxt, const gemm_case *t, int single, unsigned seed, long long sum[2]) {
  int right = run_case(ctxt, t, single, seed);
  uint64_t p0, c0, p1, c1;
  tsr_mpi_count_read(&p0, &c0);
  right &= run_case(ctxt, t, single, seed + 1);
  tsr_mpi_count_read(&p1, &c1);
  long long mine[2] = {(long long)(p1 - p0), (long long)(c1 - c0)};
  MPI_Allreduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return right;
}

/* The reduction variant (pgemm_direct.c): a small sub(C) on one process, both operands' k on
   the same owners along one grid dimension. The line that holds the operands multiplies and
   sums with one MPI_Reduce along k (none when one process holds all of k), then one message
   to C's owner when it is on another line; no other process makes any MPI call. Every
   product is checked against the float64 reference, and counted: the direct path before it
   made two or three collectives over both lines. */
static void test_k_reduction(void **state) {
  (void)state;
  if (world_size < 2) skip();
  char *saved = set_path(NULL); /* the rule's choice */
  const struct { int p, q; } grids[] = {{1, world_size}, {world_size, 1}, {2, world_size / 2}};
  int ok = 1;
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
    if (gi == 2 && grids[2].q < 2) continue;
    int ctxt, p, q, myrow, mycol;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "R", grids[gi].p, grids[gi].q);
    Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
    const layout l1 = {9, 1, 1, 1, 1, 0, 0, 0}, rows4 = {9, 4, 1, 4, 1, 0, 0, 0};
    const layout big = {9, 16, 16, 16, 16, 0, 0, 0}, far = {9, 16, 16, 16, 16, 1 % p, 1 % q, 1};
    const layout cols4 = {9, 1, 4, 1, 4, 0, 0, 0};
    /* C (1,1) and (2,2) in blocks of 1: on the line's process (0, 0), or at (1, 1). */
    const gemm_case cases[] = {
        /* w = V^T c, k over the process rows, C on the line */
        {'T', 'N', 1, 1, 37, 3, 1, 3, 1, 1, 1, l1, l1, l1, 1.0, 0.0, 1, 0, 1},
        /* the same, C on another line (and row) */
        {'T', 'N', 1, 1, 37, 3, 1, 3, 1, 2, 2, l1, l1, l1, -0.5, 0.0, 1, 0, 1},
        /* 2 x 3 of V^T Y with beta, k over the process columns ('N','T') */
        {'N', 'T', 2, 3, 29, 1, 2, 1, 2, 1, 1, rows4, rows4, big, 0.75, -1.25, 0, 0, 0},
        /* k over the process rows, 3 x 2, B's columns in blocks of 4 */
        {'T', 'N', 3, 2, 23, 2, 1, 2, 1, 1, 1, cols4, cols4, big, 1.5, 0.5, 0, 0, 0},
        /* all of k on one process (inside a block of 16): no reduction, C far off */
        {'T', 'N', 4, 5, 10, 3, 1, 3, 1, 1, 1, big, big, far, 1.0, 2.0, 0, 0, 0},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
      const gemm_case *t = &cases[ci];
      bool tn = t->ta == 'T';
      int npk = tn ? p : q;
      /* Where the operands' t and C lie (first blocks of 1, 4 or 16 from process 0). */
      int line = 0;
      int cr = ((t->ic - 1) / t->lc.mb + t->lc.rsrc) % p,
          cc = ((t->jc - 1) / t->lc.nb + t->lc.csrc) % q;
      int ck = tn ? cr : cc, cl = tn ? cc : cr;
      int kblock = tn ? t->la.mb - (t->ia - 1) : t->la.nb - (t->ja - 1); /* k in A's first */
      bool one_holder = npk == 1 || t->k <= kblock;
      long long want_coll = one_holder ? 0 : npk;
      int from = one_holder ? 0 : ck;
      long long want_p2p = from == ck && line == cl ? 0 : 2;
      for (int single = 0; single < 2; single++) {
        long long sum[2];
        int right =
            counted_case(ctxt, t, single, 1200u + (unsigned)(gi * 32 + ci * 2 + single), sum);
        if (!right || sum[0] != want_p2p || sum[1] != want_coll) {
          if (world_rank == 0)
            print_error("%d x %d grid, case %zu (%c%c %d x %d x %d)%s: %lld point-to-point and "
                        "%lld collective calls over the ranks (want %lld and %lld)%s\n",
                        p, q, ci, t->ta, t->tb, t->m, t->n, t->k, single ? " single" : "", sum[0],
                        sum[1], want_p2p, want_coll, right ? "" : "; wrong result");
          ok = 0;
        }
      }
    }
    Cblacs_gridexit(ctxt);
  }
  free(set_path(saved));
  free(saved);
  assert_true(all_ranks(ok));
}

/* The reference PBLAS error codes, through PB_Cabort; C untouched, nothing computed. */
static void test_errors(void **state) {
  (void)state;
  int ctxt;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "R", 1, 1);
  int p, q, myrow, mycol;
  Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
  if (p > 0) {
    double a[16], b[16], c[16];
    for (int e = 0; e < 16; e++)
      a[e] = b[e] = 1.0, c[e] = 5.0;
    int d9[9] = {1, ctxt, 4, 4, 2, 2, 0, 0, 4};
    int d11[11] = {2, ctxt, 4, 4, 2, 2, 2, 2, 0, 0, 4};
    int one = 1, two = 2, four = 4, three = 3, neg = -1;
    double alpha = 1.0, beta = 0.0;
    struct {
      const char *ta;
      int *m, *ia, *ic;
      int da[11], dc[11];
      int want;
    } bad[] = {
        {"X", &four, &one, &one, {0}, {0}, -1},
        {"N", &neg, &one, &one, {0}, {0}, -3},
        {"N", &four, &two, &one, {0}, {0}, -8},                            /* IA + M - 1 > M_A */
        {"N", &four, &one, &three, {0}, {0}, -17},                         /* IC out of range */
        {"N", &four, &one, &one, {7}, {0}, -1001},                         /* DTYPE of A */
        {"N", &four, &one, &one, {1, 0, 4, 4, 0}, {0}, -1005},             /* MB_A = 0: entry IMB */
        {"N", &four, &one, &one, {0}, {1, 1, 4, 4, 2, 2, 0, 0, 2}, -1911}, /* LLD_C < 4 */
        {"N", &four, &one, &one, {0}, {2, 1, 4, 4, 2, 2, 2, 2, 0, 3, 4}, -1910}, /* CSRC_C */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      int da[11] = {0}, dc[11] = {0};
      if (bad[i].da[0])
        memcpy(da, bad[i].da, sizeof da);
      else
        memcpy(da, d9, sizeof d9);
      memcpy(dc, bad[i].dc[0] ? bad[i].dc : d11, sizeof dc);
      if (bad[i].da[0]) da[1] = ctxt;
      if (bad[i].dc[0]) dc[1] = ctxt;
      if (bad[i].da[0] == 1) memcpy(da, (int[9]){1, ctxt, 4, 4, 0, 2, 0, 0, 4}, 9 * sizeof(int));
      tsr_scalapack_stats s0, s1;
      tsr_scalapack_get_stats(&s0);
      last_info = 0;
      pdgemm_(bad[i].ta, "N", bad[i].m, &four, &four, &alpha, a, bad[i].ia, &one, da, b, &one, &one,
              d9, &beta, c, bad[i].ic, &one, dc);
      tsr_scalapack_get_stats(&s1);
      assert_int_equal(last_info, bad[i].want);
      assert_string_equal(last_rout, "PDGEMM");
      assert_int_equal(s1.errors, s0.errors + 1);
      for (int e = 0; e < 16; e++)
        assert_true(c[e] == 5.0);
      /* The same with NULL ALPHA and BETA (issue 30): the arguments are checked before the
         scalars are read, so the same code, not a crash. */
      last_info = 0;
      pdgemm_(bad[i].ta, "N", bad[i].m, &four, &four, NULL, a, bad[i].ia, &one, da, b, &one, &one,
              d9, NULL, c, bad[i].ic, &one, dc);
      assert_int_equal(last_info, bad[i].want);
    }
    /* NULL ALPHA/BETA where the reference reads no scalar (M = 0, N = 0: quick return) is
       quiet; LLD_A = 1 is still -1011; where it would read one, its position (-6, -15). */
    {
      int zero = 0, dl[9] = {1, ctxt, 4, 4, 2, 2, 0, 0, 1};
      tsr_scalapack_stats s0, s1;
      tsr_scalapack_get_stats(&s0);
      last_info = 0;
      pdgemm_("N", "N", &zero, &four, &four, NULL, a, &one, &one, d9, b, &one, &one, d9, NULL, c,
              &one, &one, d11);
      pdgemm_("N", "N", &four, &zero, &four, NULL, a, &one, &one, d9, b, &one, &one, d9, NULL, c,
              &one, &one, d11);
      psgemm_("N", "N", &zero, &four, &four, NULL, (float *)a, &one, &one, d9, (float *)b, &one,
              &one, d9, NULL, (float *)c, &one, &one, d11);
      tsr_scalapack_get_stats(&s1);
      assert_int_equal(last_info, 0);
      assert_int_equal(s1.errors, s0.errors);
      assert_int_equal(s1.quick, s0.quick + 3);
      pdgemm_("N", "N", &four, &four, &four, NULL, a, &one, &one, dl, b, &one, &one, d9, NULL, c,
              &one, &one, d11);
      assert_int_equal(last_info, -1011);
      last_info = 0;
      pdgemm_("N", "N", &four, &four, &four, NULL, a, &one, &one, d9, b, &one, &one, d9, &beta, c,
              &one, &one, d11);
      assert_int_equal(last_info, -6);
      last_info = 0;
      pdgemm_("N", "N", &four, &four, &four, &alpha, a, &one, &one, d9, b, &one, &one, d9, NULL, c,
              &one, &one, d11);
      assert_int_equal(last_info, -15);
      last_info = 0;
      psgemm_("N", "N", &four, &four, &four, NULL, (float *)a, &one, &one, d9, (float *)b, &one,
              &one, d9, NULL, (float *)c, &one, &one, d11);
      assert_int_equal(last_info, -6);
      assert_string_equal(last_rout, "PSGEMM");
      for (int e = 0; e < 16; e++)
        assert_true(c[e] == 5.0);
    }
    /* A context that is not a grid: entry CTXT of DESCA. */
    int dbad[9] = {1, -12345, 4, 4, 2, 2, 0, 0, 4};
    last_info = 0;
    psgemm_("N", "N", &four, &four, &four, &(float){1.0f}, (float *)a, &one, &one, dbad, (float *)b,
            &one, &one, dbad, &(float){0.0f}, (float *)c, &one, &one, dbad);
    assert_int_equal(last_info, -1002);
    assert_string_equal(last_rout, "PSGEMM");
    Cblacs_gridexit(ctxt);
  }
  assert_true(all_ranks(1));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_products),    cmocka_unit_test(test_random_layouts),
    cmocka_unit_test(test_paths),       cmocka_unit_test(test_messages),
    cmocka_unit_test(test_k_reduction), cmocka_unit_test(test_errors),
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
