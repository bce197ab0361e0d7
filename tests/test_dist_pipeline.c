/* SPDX-License-Identifier: BSD-3-Clause */
/* The data movement of SUMMA's pipeline, counted (tsr_dist_stats), on the CPU and on a GPU
   (the emulator of tests/gpu_emu runs it with TSR_TEST_DEVICE=cuda, staged and
   device-to-device): a 1 x 1 grid copies no byte and runs one GEMM; on a P x Q grid a rank
   copies to the host exactly the panels it roots and to the device exactly the panels it
   receives (no whole-matrix copy), and the host never waits for the GPU inside the panel loop
   when staging; a repeated call allocates its plan once and no pinned memory (the grid's
   staging object, src/mpi/staging.h). Transposed operands (the block-cyclic exchange on the
   device) copy nothing between host and device on one rank, and on more ranks only the
   messages to other ranks, one copy each way a call. Also: the distributed random fill
   gives the same bits on every device and grid, equal to the row-major Philox stream. Every
   product is checked against a float64 reference. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "test_dist_util.h"

/* The emulator's own counts (tests/gpu_emu/tsr_emu.cpp): kernel launches, copies, stream and
   event waits, pinned allocations since the start; absent (NULL) outside the emulator. */
void tsr_emu_counts_ex(size_t out[4]) __attribute__((weak));

typedef struct emu_counts {
  size_t launches, copies, syncs, pinned;
} emu_counts;

static emu_counts emu_read(void) {
  size_t c[4] = {0, 0, 0, 0};
  if (tsr_emu_counts_ex) tsr_emu_counts_ex(c);
  return (emu_counts){c[0], c[1], c[2], c[3]};
}

static emu_counts emu_since(emu_counts a) {
  emu_counts b = emu_read();
  return (emu_counts){b.launches - a.launches, b.copies - a.copies, b.syncs - a.syncs,
                      b.pinned - a.pinned};
}

static int staging_env(void) {
  const char *v = getenv("TSR_DIST_GPU_STAGING");
  if (v && strcmp(v, "1") == 0) return 1;
  if (v && strcmp(v, "0") == 0) return 0;
  return !tsr_dist_gpu_aware();
}

/* Runs C = op(A) op(B) on grid g (comm of the grid's ranks: MPI_COMM_WORLD or SELF) and
   checks the counts against the model. */
static void check_grid(tsr_grid *g, int64_t m, int64_t n, int64_t k, int64_t nb, tsr_dtype dt,
                       uint64_t seed) {
  tsr_grid_props gp;
  TSR_ASSERT_OK(tsr_grid_info(g, &gp));
  dist_gemm_problem pr = dist_gemm_problem_make(g, m, n, k, nb, dt, 0, 0, 1.5, 0.0, seed);
  tsr_dist_stats st[2];
  emu_counts emu[2];
  for (int rep = 0; rep < 2; rep++) { /* the second call reuses the plan */
    const emu_counts e0 = emu_read();
    TSR_ASSERT_OK(
        tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.5, pr.A, pr.B, 0.0, pr.C, NULL, &st[rep]));
    emu[rep] = emu_since(e0);
  }
  /* No pinned allocation in a call after the first (the staging object keeps its buffers). */
  DIST_ASSERT(emu[1].pinned == 0);
  const double err = dist_rel_error(pr.C, pr.ref);
  assert_true(err <= tsr_test_tol(dt, k));
  tsr_dmatrix_props cp;
  TSR_ASSERT_OK(tsr_dmatrix_info(pr.C, &cp));
  const int64_t es = dt == TSR_F32 ? 4 : 8;
  const int64_t mloc = cp.local_rows, nloc = cp.local_cols;
  /* The k columns of A this rank's process column owns, the k rows of B its process row owns. */
  const int64_t own_a = tsr_numroc(k, nb, gp.mycol, 0, gp.npcol);
  const int64_t own_b = tsr_numroc(k, nb, gp.myrow, 0, gp.nprow);
  const int gpu = dist_dev.kind != TSR_DEVICE_CPU, staged = gpu && staging_env();
  uint64_t d2h = 0, h2d = 0;
  if (staged && gp.npcol > 1) {
    d2h += (uint64_t)(mloc * own_a * es);
    h2d += (uint64_t)(mloc * (k - own_a) * es);
  }
  if (staged && gp.nprow > 1) {
    d2h += (uint64_t)(own_b * nloc * es);
    h2d += (uint64_t)((k - own_b) * nloc * es);
  }
  for (int rep = 0; rep < 2; rep++) {
    const tsr_dist_stats *s = &st[rep];
    if (s->d2h_bytes != d2h || s->h2d_bytes != h2d)
      print_error("rank %d grid %dx%d: d2h %llu (model %llu), h2d %llu (model %llu)\n", gp.rank,
                  gp.nprow, gp.npcol, (unsigned long long)s->d2h_bytes, (unsigned long long)d2h,
                  (unsigned long long)s->h2d_bytes, (unsigned long long)h2d);
    DIST_ASSERT(s->d2h_bytes == d2h && s->h2d_bytes == h2d);
    DIST_ASSERT(s->staging == staged);
    /* No host synchronization inside the panel loop on the staged path (and on the CPU). */
    if (staged || !gpu) DIST_ASSERT(s->host_syncs_in_loop == 0);
    if (gp.size == 1) {
      DIST_ASSERT(s->panels == 1 && s->gemm_calls == 1 && s->panel_width == k);
      DIST_ASSERT(s->d2h_copies == 0 && s->h2d_copies == 0);
    }
    if (gpu) {
      /* One GEMM a step; the GPU time of the loop is measured. */
      DIST_ASSERT(s->gemm_calls == (uint64_t)s->panels);
      DIST_ASSERT(s->gpu_seconds >= 0.0);
      /* One D2H a step this rank roots at most per operand: never a whole-block copy. */
      DIST_ASSERT(s->d2h_copies <= 2 * (uint64_t)s->panels);
    }
  }
  dist_gemm_problem_free(&pr);
}

static void test_counts_one_by_one(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_SELF, 1, 1, &g));
  check_grid(g, 70, 50, 90, 16, TSR_F64, 11);
  check_grid(g, 33, 65, 40, 8, TSR_F32, 12);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* C = op(A) op(B) with transposed operands on grid g, twice: the product, and what moved. On
   one rank the transposes are device-to-device copies (no host copy, no pinned memory, no wait
   for the device besides SUMMA's end); on more ranks a call copies at most one message each
   way per transposed operand, and the second call allocates no pinned memory. */
static void check_transposed(tsr_grid *g, int ta, int tb, tsr_dtype dt, uint64_t seed) {
  tsr_grid_props gp;
  TSR_ASSERT_OK(tsr_grid_info(g, &gp));
  const int64_t m = 61, n = 47, k = 83, nb = 8;
  dist_gemm_problem pr = dist_gemm_problem_make(g, m, n, k, nb, dt, ta, tb, 1.25, 0.5, seed);
  tsr_dist_stats st[2];
  emu_counts emu[2];
  for (int rep = 0; rep < 2; rep++) {
    const emu_counts e0 = emu_read();
    TSR_ASSERT_OK(tsr_dist_gemm_ex(ta ? TSR_TRANS : TSR_NO_TRANS, tb ? TSR_TRANS : TSR_NO_TRANS,
                                   1.25, pr.A, pr.B, rep ? 0.0 : 0.5, pr.C, NULL, &st[rep]));
    emu[rep] = emu_since(e0);
    /* The second call (beta 0, the buffers reused): alpha op(A) op(B) = ref - 0.5 c0. */
    if (rep == 1)
      for (int64_t i = 0; i < m * n; i++)
        pr.ref[i] -= 0.5 * pr.c0[i];
    assert_true(dist_rel_error(pr.C, pr.ref) <= tsr_test_tol(dt, k));
  }
  const int gpu = dist_dev.kind != TSR_DEVICE_CPU, staged = gpu && staging_env();
  const uint64_t ops = (uint64_t)(ta != 0) + (uint64_t)(tb != 0);
  for (int rep = 0; rep < 2; rep++) {
    const tsr_dist_stats *s = &st[rep];
    if (dist_rank == 0 && seed % 4 == 0)
      printf("transposed ta=%d tb=%d grid %dx%d call %d: d2h %llu h2d %llu copies, %llu host "
             "syncs; emulator: %zu launches, %zu copies, %zu syncs, %zu pinned\n",
             ta, tb, gp.nprow, gp.npcol, rep, (unsigned long long)s->d2h_copies,
             (unsigned long long)s->h2d_copies, (unsigned long long)s->host_syncs,
             emu[rep].launches, emu[rep].copies, emu[rep].syncs, emu[rep].pinned);
    if (gp.size == 1) {
      /* One rank: no byte between host and device, no pinned memory. */
      DIST_ASSERT(s->d2h_copies == 0 && s->h2d_copies == 0 && s->d2h_bytes == 0 &&
                  s->h2d_bytes == 0);
      DIST_ASSERT(emu[rep].pinned == 0);
      /* On the emulator: no copy of any kind (the rectangles' list travels in the kernels'
         parameters), no wait but SUMMA's. */
      if (tsr_emu_counts_ex) DIST_ASSERT(emu[rep].copies == 0 && emu[rep].syncs <= 2);
      /* SUMMA's one wait at its end and its timing: nothing for the transposes. */
      if (gpu) DIST_ASSERT(s->host_syncs <= 2);
    } else if (!staged) {
      DIST_ASSERT(s->d2h_bytes == 0 && s->h2d_bytes == 0);
    }
  }
  /* Transposes: at most one D2H and one H2D copy per transposed operand beyond SUMMA's panels
     (one D2H per step per operand it roots, one H2D per step per operand it receives). */
  if (staged)
    DIST_ASSERT(st[1].d2h_copies <= 2 * (uint64_t)st[1].panels + ops &&
                st[1].h2d_copies <= 2 * (uint64_t)st[1].panels + ops);
  DIST_ASSERT(emu[1].pinned == 0);
  dist_gemm_problem_free(&pr);
}

static void test_transposed_counts(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_SELF, 1, 1, &g));
  uint64_t seed = 200;
  for (int t = 1; t < 4; t++) {
    check_transposed(g, t & 1, t >> 1, TSR_F64, seed++);
    check_transposed(g, t & 1, t >> 1, TSR_F32, seed++);
  }
  TSR_ASSERT_OK(tsr_grid_free(g));
  for (int gi = 0; gi < DIST_NGRIDS; gi++) {
    if (!dist_grid_fits(gi) || dist_grids[gi][0] == 0) continue;
    TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, dist_grids[gi][0], dist_grids[gi][1], &g));
    for (int t = 1; t < 4; t++)
      check_transposed(g, t & 1, t >> 1, t == 2 ? TSR_F32 : TSR_F64, seed++);
    TSR_ASSERT_OK(tsr_grid_free(g));
  }
}

static void test_counts_grids(void **state) {
  (void)state;
  for (int gi = 0; gi < DIST_NGRIDS; gi++) {
    if (!dist_grid_fits(gi) || dist_grids[gi][0] == 0) continue;
    tsr_grid *g = NULL;
    TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, dist_grids[gi][0], dist_grids[gi][1], &g));
    check_grid(g, 70, 50, 90, 16, TSR_F64, 20 + (uint64_t)gi);
    /* Ragged: k not a multiple of the block, a block wider than some local parts. */
    check_grid(g, 41, 37, 53, 7, TSR_F32, 30 + (uint64_t)gi);
    TSR_ASSERT_OK(tsr_grid_free(g));
  }
}

/* Wide steps on a square grid (GPU default 1024 columns; forced here with panel_width so the
   CPU runs it too): fewer steps, the same product and the same bytes. */
static void test_panel_width(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_grid_props gp;
  TSR_ASSERT_OK(tsr_grid_info(g, &gp));
  const int64_t m = 45, n = 39, k = 101, nb = 6;
  dist_gemm_problem pr = dist_gemm_problem_make(g, m, n, k, nb, TSR_F64, 0, 0, 1.0, 0.5, 5);
  tsr_dist_gemm_options opt;
  memset(&opt, 0, sizeof opt);
  opt.panel_width = 3 * nb + 1; /* rounded down to 3 blocks */
  tsr_dist_stats s;
  TSR_ASSERT_OK(tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, pr.A, pr.B, 0.5, pr.C, &opt, &s));
  assert_true(dist_rel_error(pr.C, pr.ref) <= tsr_test_tol(TSR_F64, k));
  const int64_t nkb = (k + nb - 1) / nb;
  if (gp.size == 1)
    DIST_ASSERT(s.panels == 1);
  else if (gp.nprow == gp.npcol)
    DIST_ASSERT(s.panels < nkb && s.panel_width == 3 * nb);
  else
    DIST_ASSERT(s.panels == nkb && s.panel_width == nb);
  dist_gemm_problem_free(&pr);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* On the CPU a step is one local GEMM (no column chunks, no repacked A panel), and the
   broadcasts in flight are tested from inside it (the CPU GEMM's progress hook): a rank of a
   grid with more than one rank makes progress calls in every step that has the next step's
   panels in flight (all but the last); a 1 x 1 grid has none. TSR_SUMMA_CHUNK_FLOPS still cuts
   steps into chunks. Local multiplies beyond any L2 (the packed path, in units of work). */
static void test_cpu_progress(void **state) {
  (void)state;
  if (dist_dev.kind != TSR_DEVICE_CPU) skip(); /* the hook is the CPU GEMM's */
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_grid_props gp;
  TSR_ASSERT_OK(tsr_grid_info(g, &gp));
  const int64_t m = 1200, n = 1100, k = 400, nb = 100;
  for (int chunked = 0; chunked < 2; chunked++) {
    if (chunked) setenv("TSR_SUMMA_CHUNK_FLOPS", "1", 1); /* 256-column chunks */
    dist_gemm_problem pr = dist_gemm_problem_make(g, m, n, k, nb, TSR_F64, 0, 0, 1.0, 0.5, 60);
    tsr_dist_stats s;
    TSR_ASSERT_OK(
        tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, pr.A, pr.B, 0.5, pr.C, NULL, &s));
    if (chunked) unsetenv("TSR_SUMMA_CHUNK_FLOPS");
    assert_true(dist_rel_error(pr.C, pr.ref) <= tsr_test_tol(TSR_F64, k));
    tsr_dmatrix_props cp;
    TSR_ASSERT_OK(tsr_dmatrix_info(pr.C, &cp));
    const uint64_t steps = (uint64_t)s.panels;
    if (gp.size == 1) {
      DIST_ASSERT(s.gemm_calls == 1 && s.progress_calls == 0);
    } else if (!chunked) {
      DIST_ASSERT(s.gemm_calls == steps);
      DIST_ASSERT(s.progress_calls >= steps - 1);
    } else {
      /* ceil(local columns / 256) chunks a step. */
      const uint64_t chunks = (uint64_t)((cp.local_cols + 255) / 256);
      DIST_ASSERT(s.gemm_calls == steps * (chunks ? chunks : 1) && s.progress_calls >= steps - 1);
    }
    dist_gemm_problem_free(&pr);
  }
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* SUMMA on each panel broadcast (MPI_Ibcast, the pipelined ring and tree, AUTO) on every grid
   of the rank count: the same product, and a ring or tree with segments smaller than a panel
   (AUTO takes MPI_Ibcast for these host panels, below TSR_BCAST_MPI_BELOW, and the ring or the
   tree for device panels, which never reach MPI_Ibcast). */
static void test_bcast_algorithms(void **state) {
  (void)state;
  const tsr_dist_bcast algos[] = {TSR_DIST_BCAST_MPI, TSR_DIST_BCAST_RING, TSR_DIST_BCAST_TREE,
                                  TSR_DIST_BCAST_AUTO};
  for (int gi = 0; gi < DIST_NGRIDS; gi++) {
    if (!dist_grid_fits(gi)) continue;
    tsr_grid *g = NULL;
    TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, dist_grids[gi][0], dist_grids[gi][1], &g));
    for (int a = 0; a < 4; a++) {
      const tsr_dtype dt = a % 2 ? TSR_F32 : TSR_F64;
      const int64_t m = 300, n = 260, k = 170, nb = 40; /* panels of 48-96 KiB */
      dist_gemm_problem pr = dist_gemm_problem_make(g, m, n, k, nb, dt, 0, 0, 0.5, 2.0, 40 + a);
      tsr_dist_gemm_options opt;
      memset(&opt, 0, sizeof opt);
      opt.bcast = algos[a];
      tsr_dist_stats s;
      TSR_ASSERT_OK(
          tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 0.5, pr.A, pr.B, 2.0, pr.C, &opt, &s));
      const double err = dist_rel_error(pr.C, pr.ref);
      if (err > tsr_test_tol(dt, k))
        print_error("bcast %d grid %dx%d: error %g\n", (int)algos[a], dist_grids[gi][0],
                    dist_grids[gi][1], err);
      assert_true(err <= tsr_test_tol(dt, k));
      dist_gemm_problem_free(&pr);
    }
    TSR_ASSERT_OK(tsr_grid_free(g));
  }
}

/* The random fill gives element (i, j) the Philox value of index i * n + j on every device and
   grid: gathered from the test device on this grid, from the CPU on a 1 x 1 grid, and
   tsr_random_uniform of the whole matrix on the CPU agree bit for bit. */
static void test_fill_bits(void **state) {
  (void)state;
  const int64_t m = 37, n = 29, nb = 5;
  for (int d = 0; d < 2; d++) {
    const tsr_dtype dt = d ? TSR_F32 : TSR_F64;
    const size_t es = d ? 4 : 8;
    tsr_grid *g = NULL;
    TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
    tsr_dmatrix *A = NULL;
    TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, nb, nb + 2, dt, dist_dev, &A));
    TSR_ASSERT_OK(tsr_dmatrix_fill_random(A, 77, -2.0, 3.0));
    char *got = malloc((size_t)(m * n) * es);
    TSR_ASSERT_OK(tsr_dmatrix_gather(A, 0, got, TSR_ROW_MAJOR, 0));
    tsr_array *ref = NULL;
    int64_t shape[2] = {m, n};
    TSR_ASSERT_OK(tsr_random_uniform(2, shape, dt, TSR_CPU, 77, -2.0, 3.0, &ref));
    char *want = malloc((size_t)(m * n) * es);
    TSR_ASSERT_OK(tsr_array_read(ref, want, (size_t)(m * n) * es));
    int same = 1;
    if (dist_rank == 0) {
      same = memcmp(got, want, (size_t)(m * n) * es) == 0;
      /* And the values are not degenerate: spread over the range. */
      double lo = 1e9, hi = -1e9;
      for (int64_t i = 0; i < m * n; i++) {
        double v = d ? (double)((float *)got)[i] : ((double *)got)[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
      same = same && lo >= -2.0 && hi < 3.0 && hi - lo > 4.0;
    }
    MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
    assert_true(same);
    free(got);
    free(want);
    tsr_array_release(ref);
    tsr_dmatrix_free(A);
    TSR_ASSERT_OK(tsr_grid_free(g));
  }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_counts_one_by_one), cmocka_unit_test(test_counts_grids),
    cmocka_unit_test(test_transposed_counts), cmocka_unit_test(test_panel_width),
    cmocka_unit_test(test_bcast_algorithms),  cmocka_unit_test(test_fill_bits),
    cmocka_unit_test(test_cpu_progress),
};

DIST_TEST_MAIN(tests)
