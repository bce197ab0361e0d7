/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dispatcher's table of schedules (src/mpi/dist_gemm.c, internal: linked statically), on
 * one rank without communication: its rows, and the row and replicas that
 * tsr__dist_schedule_pick takes, against the rule tsr_dist_gemm_choose() documents
 * (tessera/dist.h), recomputed here from the documented formulas over shapes, grids of 1 to 64
 * ranks and every option (algorithm, replicas, memory_per_rank). The memory limit is judged
 * with the public estimate tsr_dist_gemm_memory_25d(), which the documentation names as the
 * one compared.
 */
#include <math.h>
#include <string.h>

#include "tsr_test.h"

#include "mpi/mpi_internal.h"

static void test_rows(void **state) {
  (void)state;
  size_t n = 0;
  const tsr__dist_schedule *rows = tsr__dist_schedules(&n);
  assert_int_equal(n, 2);
  /* SUMMA first: the row that applies to every call; names as tessera-gemm's JSON spells them */
  assert_string_equal(rows[0].name, "summa");
  assert_int_equal(rows[0].algorithm, TSR_DIST_GEMM_SUMMA);
  assert_string_equal(rows[1].name, "2.5d");
  assert_int_equal(rows[1].algorithm, TSR_DIST_GEMM_2_5D);
  for (size_t i = 0; i < n; i++)
    assert_true(rows[i].cost && rows[i].run);
}

typedef struct choice {
  tsr_status st;
  tsr_dist_algorithm alg;
  int c;
} choice;

static int exact_sqrt(int v) {
  for (int q = 1; q * q <= v; q++)
    if (q * q == v) return q;
  return 0;
}

/* dist.h: (mk / P_r)(1 - 1/Q) + (kn / Q)(1 - 1/P_r) + 2000 words for each of 2 rounds a panel */
static double summa_cost(double m, double n, double k, int64_t panels, int pr, int pc) {
  double w = m * k / pr * (1.0 - 1.0 / pc) + k * n / pc * (1.0 - 1.0 / pr);
  return w + 2000.0 * 2.0 * (double)panels;
}

/* dist.h: (mk + kn)(1 - 1/q) / (q c) + (mk + kn + c mn) / P, plus 2000 words for each of
   2 rounds a panel of a layer and 2 + c for the slicing and the reduction */
static double cost_25d(double m, double n, double k, int64_t panels, int p, int c) {
  int q = exact_sqrt(p / c);
  double w = (m * k + k * n) * (1.0 - 1.0 / q) / ((double)q * c) + (m * k + k * n + c * m * n) / p;
  return w + 2000.0 * (2.0 * (double)((panels + c - 1) / c) + 2.0 + c);
}

static choice reference(double m, double n, double k, int64_t kb, int pr, int pc, size_t es,
                        const tsr_dist_gemm_options *o) {
  const int p = pr * pc;
  const int64_t panels = ((int64_t)k + kb - 1) / kb;
  choice r = {TSR_OK, TSR_DIST_GEMM_SUMMA, 1};
  if (o->algorithm == TSR_DIST_GEMM_SUMMA) return r;
  if (o->algorithm == TSR_DIST_GEMM_2_5D && o->replicas > 0) {
    const int c = o->replicas;
    if (c == 1) return r;
    if (p % c != 0 || !exact_sqrt(p / c)) r.st = TSR_ERR_INVALID_ARGUMENT;
    r.alg = TSR_DIST_GEMM_2_5D;
    r.c = c;
    return r;
  }
  double best = o->algorithm == TSR_DIST_GEMM_AUTO ? summa_cost(m, n, k, panels, pr, pc) : INFINITY;
  const tsr_dtype dt = es == 4 ? TSR_F32 : es == 8 ? TSR_F64 : TSR_C128;
  for (int c = 2; c <= p && c <= (panels > 1 ? panels : 1); c++) {
    if (p % c != 0 || !exact_sqrt(p / c)) continue;
    int64_t bytes = 0;
    TSR_ASSERT_OK(
        tsr_dist_gemm_memory_25d((int64_t)m, (int64_t)n, (int64_t)k, kb, p, c, dt, &bytes));
    if (o->memory_per_rank > 0 && bytes > o->memory_per_rank) continue;
    const double v = cost_25d(m, n, k, panels, p, c);
    if (v < best) {
      best = v;
      r.alg = TSR_DIST_GEMM_2_5D;
      r.c = c;
    }
  }
  return r;
}

/* One case: pick against the reference; returns 1 when 2.5D was taken. */
static int check_one(int p, int pr, double m, double n, double k, int64_t kb, size_t es,
                     const tsr_dist_gemm_options *o) {
  const tsr__dist_shape d = {.m = m,
                             .n = n,
                             .k = k,
                             .panels = ((int64_t)k + kb - 1) / kb,
                             .kb = kb,
                             .pr = pr,
                             .pc = p / pr,
                             .size = p,
                             .es = es,
                             .replicas = o->algorithm == TSR_DIST_GEMM_2_5D ? o->replicas : 0,
                             .memory_per_rank = o->memory_per_rank};
  const choice want = reference(m, n, k, kb, pr, p / pr, es, o);
  const tsr__dist_schedule *row = NULL;
  int c = 0;
  const tsr_status st = tsr__dist_schedule_pick(&d, o, &row, &c);
  if (st != want.st || (st == TSR_OK && (row->algorithm != want.alg || c != want.c)))
    fail_msg("P = %d (%d x %d), m %g n %g k %g kb %lld, algorithm %d replicas %d memory %lld: "
             "got %s %d replicas, want %s %d",
             p, pr, p / pr, m, n, k, (long long)kb, (int)o->algorithm, o->replicas,
             (long long)o->memory_per_rank, tsr_status_name(st), st ? 0 : c,
             tsr_status_name(want.st), want.c);
  if (st != TSR_OK) assert_non_null(strstr(tsr_last_error(), "replicas do not split"));
  return st == TSR_OK && row->algorithm == TSR_DIST_GEMM_2_5D;
}

static void test_pick(void **state) {
  (void)state;
  static const double sizes[] = {1, 7, 512, 20000, 1e6};
  static const int64_t kbs[] = {1, 256};
  static const int64_t mems[] = {0, 64, 100000000};
  static const size_t ess[] = {4, 8, 16};
  long cases = 0, twod = 0;
  for (int p = 1; p <= 36; p++)
    for (int pr = 1; pr <= p; pr++)
      for (int i = 0; p % pr == 0 && i < 5 * 5 * 5 * 2; i++) {
        const double m = sizes[i % 5], n = sizes[i / 5 % 5], k = sizes[i / 25 % 5];
        const int64_t kb = kbs[i / 125];
        for (int alg = 0; alg < 3; alg++)
          for (int rep = 0; rep <= 9; rep += alg == TSR_DIST_GEMM_2_5D ? 1 : 9)
            for (int mem = 0; mem < 3; mem++) {
              tsr_dist_gemm_options o;
              memset(&o, 0, sizeof o);
              o.algorithm = (tsr_dist_algorithm)alg;
              o.replicas = rep;
              o.memory_per_rank = mems[mem];
              twod += check_one(p, pr, m, n, k, kb, ess[i % 3], &o);
              cases++;
            }
      }
  /* the sweep reaches both rows */
  assert_true(twod > 0 && twod < cases);
  /* no options: SUMMA */
  const tsr__dist_shape d = {
      .m = 8, .n = 8, .k = 4096, .panels = 256, .kb = 16, .pr = 2, .pc = 2, .size = 4, .es = 8};
  const tsr__dist_schedule *row = NULL;
  int c = 0;
  TSR_ASSERT_OK(tsr__dist_schedule_pick(&d, NULL, &row, &c));
  assert_true(row->algorithm == TSR_DIST_GEMM_SUMMA && c == 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_rows), cmocka_unit_test(test_pick)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
