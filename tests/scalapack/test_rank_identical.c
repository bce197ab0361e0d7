/*
 * Rank-identical replicated results of pdgemm_ (issue 48). A ScaLAPACK program whose result
 * depends on ranks agreeing (replicated scalars, convergence tests) needs every rank that holds
 * a replicated element of C to hold the same bits. Here every rank runs the CPU GEMM its own
 * way: another micro-kernel (TSR_CPU_KERNEL), another k block (TSR_CPU_GEMM_BLOCKS) and another
 * thread count, as ranks on different CPUs or with different settings would. Then pdgemm_
 * computes products whose C is replicated over the whole grid, over process rows only or over
 * process columns only (RSRC and/or CSRC = -1), with A and B distributed or replicated, and
 * every element held by several ranks must have the same bits on all of them (and be right
 * against a float64 reference).
 *
 * The guard is armed: the same local product computed by each rank with its own settings
 * (tsr_gemm_host) differs between ranks, so a pdgemm_ that computed a replicated element on
 * each rank instead of once would fail here.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "tessera/scalapack.h"
#include "tsr_test.h"

extern void Cblacs_get(int ctxt, int what, int *val);
extern void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int ctxt);

static int world_rank, world_size;

/* Each rank's own way of running the CPU GEMM. */
static const struct {
  const char *kernel, *blocks;
  int threads;
} configs[4] = {
    {"auto", NULL, 1}, {"portable", "40,0,0", 2}, {"avx2", "72,0,0", 1}, {"auto", "136,0,0", 3}};

static int all_ranks(int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

/* One dimension of a block-cyclic layout, counted independently of the library: the owner
   and local index of global index g (src -1: replicated, every process holds all of it). */
static int owner_of(int g, int nb, int src, int nprocs) {
  return src < 0 ? -1 : (src + g / nb) % nprocs;
}
static int local_of(int g, int nb, int src, int nprocs) {
  return src < 0 ? g : (g / (nb * nprocs)) * nb + g % nb;
}
static int count_of(int n, int nb, int me, int src, int nprocs) {
  int c = 0;
  for (int g = 0; g < n; g++) {
    int o = owner_of(g, nb, src, nprocs);
    if (o < 0 || o == me) c++;
  }
  return c;
}

typedef struct operand {
  int rsrc, csrc;
} operand;

typedef struct dist {
  int m, n, nb, rsrc, csrc, mloc, nloc, lld, desc[9];
  double *local;
} dist;

/* The local part of the row-major m x n matrix x in a layout with nb x nb blocks. */
static dist make_dist(const double *x, int m, int n, int nb, operand o, int ctxt, int p, int q,
                      int myrow, int mycol) {
  dist d;
  d.m = m, d.n = n, d.nb = nb, d.rsrc = o.rsrc, d.csrc = o.csrc;
  d.mloc = count_of(m, nb, myrow, o.rsrc, p);
  d.nloc = count_of(n, nb, mycol, o.csrc, q);
  d.lld = d.mloc > 1 ? d.mloc : 1;
  int desc[9] = {1, ctxt, m, n, nb, nb, o.rsrc, o.csrc, d.lld};
  memcpy(d.desc, desc, sizeof desc);
  d.local = calloc((size_t)d.lld * (size_t)(d.nloc > 0 ? d.nloc : 1), sizeof *d.local);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int ro = owner_of(i, nb, o.rsrc, p), co = owner_of(j, nb, o.csrc, q);
      if ((ro < 0 || ro == myrow) && (co < 0 || co == mycol))
        d.local[local_of(i, nb, o.rsrc, p) + (size_t)local_of(j, nb, o.csrc, q) * d.lld] =
            x[(size_t)i * n + j];
    }
  return d;
}

/* This rank's elements of C as a whole m x n row-major matrix, `held` marking them. */
static void spread(const dist *c, int p, int q, int myrow, int mycol, double *whole,
                   unsigned char *held) {
  for (int i = 0; i < c->m; i++)
    for (int j = 0; j < c->n; j++) {
      int ro = owner_of(i, c->nb, c->rsrc, p), co = owner_of(j, c->nb, c->csrc, q);
      bool mine = (ro < 0 || ro == myrow) && (co < 0 || co == mycol);
      held[(size_t)i * c->n + j] = mine;
      whole[(size_t)i * c->n + j] = mine ? c->local[local_of(i, c->nb, c->rsrc, p) +
                                                    (size_t)local_of(j, c->nb, c->csrc, q) * c->lld]
                                         : 0.0;
    }
}

/* Elements held by more than one rank whose bits differ on some of them, over all ranks'
   m x n buffers (gathered). */
static long long differing(const double *all, const unsigned char *held, size_t mn) {
  long long bad = 0;
  for (size_t e = 0; e < mn; e++) {
    int first = -1;
    for (int r = 0; r < world_size; r++) {
      if (!held[(size_t)r * mn + e]) continue;
      if (first < 0)
        first = r;
      else if (memcmp(&all[(size_t)r * mn + e], &all[(size_t)first * mn + e], sizeof(double))) {
        bad++;
        break;
      }
    }
  }
  return bad;
}

/* Gathers every rank's m x n buffer and mask and counts the replicated elements that differ. */
static long long differing_across_ranks(const double *whole, const unsigned char *held, size_t mn) {
  double *all = malloc(mn * (size_t)world_size * sizeof *all);
  unsigned char *allheld = malloc(mn * (size_t)world_size);
  MPI_Allgather(whole, (int)mn, MPI_DOUBLE, all, (int)mn, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Allgather(held, (int)mn, MPI_UNSIGNED_CHAR, allheld, (int)mn, MPI_UNSIGNED_CHAR,
                MPI_COMM_WORLD);
  long long bad = differing(all, allheld, mn);
  free(all);
  free(allheld);
  return bad;
}

/* op(A) of M x K doubles (2.4 MB) is over the sup path's limit (the L2 cache), so a
   whole-matrix local GEMM takes the blocked path, where the k block matters too. */
enum { M = 192, N = 48, K = 1536, NB = 16 };

/* The premise: the same product, run locally by every rank with its own settings, differs
   between ranks in some bits. */
static void test_settings_change_local_bits(void **state) {
  (void)state;
  if (world_size < 2) skip();
  double *a = malloc((size_t)M * K * sizeof *a), *b = malloc((size_t)K * N * sizeof *b);
  double *c = malloc((size_t)M * N * sizeof *c);
  unsigned char *held = malloc((size_t)M * N);
  tsr_test_fill_random(a, (size_t)M * K, 11);
  tsr_test_fill_random(b, (size_t)K * N, 12);
  TSR_ASSERT_OK(
      tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_NO_TRANS, M, N, K, 1.0, a, K, b, N, 0.0, c, N));
  memset(held, 1, (size_t)M * N);
  long long bad = differing_across_ranks(c, held, (size_t)M * N);
  if (world_rank == 0)
    printf("local products with each rank's settings: %lld of %d elements differ between ranks\n",
           bad, M * N);
  if (bad == 0 && world_rank == 0)
    print_error("the ranks' settings no longer change the local GEMM's bits: the test below "
                "cannot tell a replicated element computed once from one computed on every rank; "
                "give the ranks settings that do\n");
  assert_true(bad > 0);
  free(a), free(b), free(c), free(held);
}

/* C replicated (over the grid, rows or columns) through pdgemm_: the same bits on every rank
   that holds an element, and right. */
static void run_case(int ctxt, int p, int q, int myrow, int mycol, operand oa, operand ob,
                     operand oc, const char *what, int *ok) {
  double *a = malloc((size_t)M * K * sizeof *a), *b = malloc((size_t)K * N * sizeof *b);
  double *c0 = malloc((size_t)M * N * sizeof *c0);
  tsr_test_fill_random(a, (size_t)M * K, 21);
  tsr_test_fill_random(b, (size_t)K * N, 22);
  tsr_test_fill_random(c0, (size_t)M * N, 23);
  const double alpha = 0.75, beta = -0.5;
  double *ref = tsr_test_ref_gemm(0, 0, M, N, K, alpha, a, b, beta, c0);
  dist da = make_dist(a, M, K, NB, oa, ctxt, p, q, myrow, mycol);
  dist db = make_dist(b, K, N, NB, ob, ctxt, p, q, myrow, mycol);
  dist dc = make_dist(c0, M, N, NB, oc, ctxt, p, q, myrow, mycol);
  const int m = M, n = N, k = K, one = 1;
  pdgemm_("N", "N", &m, &n, &k, &alpha, da.local, &one, &one, da.desc, db.local, &one, &one,
          db.desc, &beta, dc.local, &one, &one, dc.desc);
  double *whole = malloc((size_t)M * N * sizeof *whole);
  unsigned char *held = malloc((size_t)M * N);
  spread(&dc, p, q, myrow, mycol, whole, held);
  double err = 0.0, scale = 0.0;
  for (size_t e = 0; e < (size_t)M * N; e++)
    if (held[e]) {
      err = fmax(err, fabs(whole[e] - ref[e]));
      scale = fmax(scale, fabs(ref[e]));
    }
  bool right = err <= tsr_test_tol(TSR_F64, K) * (scale > 0 ? scale : 1.0);
  long long bad = differing_across_ranks(whole, held, (size_t)M * N);
  if (!all_ranks(right) || bad != 0) {
    if (world_rank == 0 || !right)
      print_error("%d x %d grid, %s: %lld replicated elements differ between ranks; rank %d's "
                  "error %g\n",
                  p, q, what, bad, world_rank, err / (scale > 0 ? scale : 1.0));
    *ok = 0;
  }
  free(a), free(b), free(c0), free(ref), free(whole), free(held);
  free(da.local), free(db.local), free(dc.local);
}

static void test_replicated_c(void **state) {
  (void)state;
  const struct {
    int p, q;
    const char *order;
  } grids[] = {{1, 0, "R"}, {0, 1, "R"}, {2, 0, "C"}};
  const operand dist0 = {0, 0}, all = {-1, -1}, rows = {-1, 0}, cols = {0, -1}, off = {1, 1};
  int ok = 1;
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
    int gp = grids[gi].p ? grids[gi].p : world_size, gq = grids[gi].q ? grids[gi].q : world_size;
    if (grids[gi].p == 2) gq = world_size / 2;
    if (gp * gq != world_size || gp < 1 || gq < 1) continue;
    int ctxt = 0, p = 0, q = 0, myrow = -1, mycol = -1;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, grids[gi].order, gp, gq);
    Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
    operand shifted = {off.rsrc % p, off.csrc % q};
    run_case(ctxt, p, q, myrow, mycol, dist0, dist0, all, "A, B distributed, C replicated", &ok);
    run_case(ctxt, p, q, myrow, mycol, all, all, all, "A, B and C replicated", &ok);
    run_case(ctxt, p, q, myrow, mycol, shifted, all, all, "A shifted, B and C replicated", &ok);
    run_case(ctxt, p, q, myrow, mycol, dist0, dist0, rows, "C replicated over process rows", &ok);
    run_case(ctxt, p, q, myrow, mycol, all, dist0, cols, "C replicated over process columns", &ok);
    Cblacs_gridexit(ctxt);
  }
  assert_true(all_ranks(ok));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  /* This rank's settings, before its first GEMM (TSR_CPU_GEMM_BLOCKS is read once). */
  const int cfg = world_rank % 4;
  setenv("TSR_CPU_KERNEL", configs[cfg].kernel, 1);
  if (configs[cfg].blocks) setenv("TSR_CPU_GEMM_BLOCKS", configs[cfg].blocks, 1);
#ifdef _OPENMP
  omp_set_num_threads(configs[cfg].threads);
#endif
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_settings_change_local_bits),
      cmocka_unit_test(test_replicated_c),
  };
  int fails = cmocka_run_group_tests(tests, NULL, NULL);
  int worst = 0;
  MPI_Allreduce(&fails, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst ? 1 : 0;
}
