/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU GEMM registry (BLIS's config/<arch> and "context" idea): a table of
 * microarchitectures (CPUID vendor, family, model) giving the kernel (by name, from the kernel
 * table of kernels/gemm_kernels.c, rows in kernels/<isa>/) and the cache blocks (KC, MC, NC) that
 * suit each, and the configuration of a call.
 *
 * A call's configuration, first match wins:
 *  1. the call's own configuration, from its tuning object (tsr__gemm_tuning.config:
 *     tessera-tune, benchmarks, tests);
 *  2. the wisdom file's entry for this CPU model, dtype and thread count (gemm_wisdom.c),
 *     unless TSR_CPU_KERNEL asks for another ISA or the call's tuning says no_wisdom;
 *  3. the registry's row for this microarchitecture: rows exist only for CPUs the blocks were
 *     measured on (a row may give other blocks for calls on several threads);
 *  4. the rule for a CPU with no measured row, or an ISA forced with TSR_CPU_KERNEL that is
 *     not the row's (tsr__gemm_rule_blocks): the widest-ISA kernel this CPU and build run, for
 *     both dtypes, with cache blocks derived from the cache sizes the CPU reports (cpuinfo.c),
 *     never copied from another CPU's row.
 * TSR_CPU_GEMM_BLOCKS="kc,mc,nc" then replaces the cache blocks of 2-4 (tuning by hand; each
 * value rounded down to the register block, 0 keeps the chosen one).
 *
 * The choice itself is a pure function of the CPU's identity, ISAs and caches
 * (tsr__gemm_choose), so tests run it on CPUs they do not have.
 *
 * TSR_CPU_KERNEL = auto (default) | an ISA of the kernel table, by its folder's name (portable,
 * avx2, avx512: kernels/<isa>/). An ISA that the CPU or this
 * build lacks is not an error: the best available kernel runs instead (a binary must keep
 * working when moved to an older CPU); tsr__gemm_config_get tells which one.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "omp/gemm/gemm_tune.h"
#include "omp/omp_internal.h"

/* ---------------------------------------------------------------- microarchitectures -- */

/*
 * The registry. A row matches the CPUID vendor, displayed family and a model range, and
 * applies only when its kernels' ISA is available (a hypervisor may hide AVX-512). Only CPUs
 * whose kernels and blocks were measured against the anchors have a row, with the
 * measurements beside it; every other CPU gets the rule below (tsr__gemm_rule_blocks).
 * blocks_mt, where not all 0, are the blocks of calls on several threads. A block of 0 takes
 * the rule's value.
 */
typedef struct tsr__gemm_uarch {
  const char *name;   /* "zen5" */
  const char *vendor; /* CPUID vendor string */
  int family, model_lo, model_hi;
  const char *kernel[2];   /* f32, f64 */
  int64_t blocks[2][3];    /* f32, f64: kc, mc, nc (one thread) */
  int64_t blocks_mt[2][3]; /* f32, f64: kc, mc, nc on several threads (all 0: blocks) */
  int grain;               /* work units per thread */
  /* The sup-path (small, unpacked: BLIS's term) rule (tsr__gemm_config.sup_bytes): op(A) and C of
     at most this many bytes run unpacked; 0 (rows that did not measure it): the rule, the CPU's L2
     size. */
  int64_t sup_bytes;
} tsr__gemm_uarch;

/* The measured Zen 4 row (Genoa, family 0x19 model 0x11; Raphael, Phoenix and Bergamo share the
   core: models 0x10-0x1F, 0x60-0xAF): AVX-512 on 256-bit pipes, 32 KiB 8-way L1d, 1 MiB L2,
   32 MiB L3. f64 (issue 10): KC 256, MC 224 gave 0.92x the anchors against 0.77x with the
   analytical model's KC 104. f32 (issue 31, the CBLAS drop-in, best of 3, against the best of
   Debian OpenBLAS 0.3.21, OpenBLAS 0.3.34 and BLIS 0.9): the AVX2 kernel with model blocks
   ran at 0.80-0.96x (128^3-2048^3); tessera-tune chose the AVX-512 kernel with KC 1024,
   MC 56 on one thread (64^3 0.89x, 128^3 1.05x, 512^3 1.05x, 2048^3 1.03x) and KC 512 on
   two (128^3 1.08x, 512^3 1.07x, 2048^3 1.02x, 4096x4096x256 1.02x). This row against the
   old one on the same CPU model (bench_gemm, one thread, process-CPU-time ratio to the best
   anchor, two alternating runs each on a loaded 2-core VM): sgemm 128^3 0.79-0.97 -> 1.00-1.02,
   512^3 0.78-0.82 -> 1.01-1.05, 2048^3 0.95-0.96 -> 1.05, 4096x4096x256 1.03-1.05 -> 1.05-1.07.
   NC 2048, not 4096 (issue 48: HPCC's DGEMM, one n = 4081 product, column-major, lda odd, was
   0.93x the best anchor): a B block of KC x 4096 (8 MiB f64 at KC 256, 16 MiB f32 at KC 1024)
   shares the L3 with the A blocks and C; half of it does not. EPYC family 25 model 17 (2 vCPUs,
   KVM), bench_gemm, GFLOP/s NC 4096 -> 2048, two alternating runs each: dgemm 4081^3 (HPCC's
   call) 51.8-52.6 -> 53.9-54.5 against OpenBLAS's 55.5; dgemm 4096^3 54.0, 53.9 -> 55.3, 55.3,
   two threads 102.6, 102.5 -> 106.6, 104.5; sgemm 4096^3 108.8, 109.5 -> 111.8, 112.8, two
   threads 218.5, 206.3 -> 221.1, 221.5; 4096x4096x256 and x64 on two threads equal or better;
   HPL's rank-192/256 updates (k within one KC) within the noise (0.94-1.00 either way). */
#define TSR__GEMM_ZEN4_ROW(lo, hi)                                                                 \
  {                                                                                                \
    "zen4", "AuthenticAMD", 0x19, lo, hi, {"avx512-14x32", "avx512-14x16"},                        \
        {{1024, 56, 2048}, {256, 224, 2048}}, {{512, 56, 2048}, {0, 0, 0}}, 4, 0                   \
  }

static const tsr__gemm_uarch tsr__gemm_uarchs[] = {
    /* AMD Zen 5 (Turin, Granite Ridge), family 0x1A: full-width 512-bit FMA pipes, 48 KiB
       12-way L1d, 1 MiB L2, 32 MiB L3. Measured on an EPYC (family 26 model 2, 2 cores; one
       thread, process CPU time, medians of 3-5 interleaved runs): the AVX-512 kernels run at
       90-97% of peak, the AVX2 ones at 55-60%. Up to k = 1024 every KC in 128-512 and MC in
       2-36 micro-panels lies within +-5% (the noise of the shared machine). For large k a deep
       KC wins: fewer passes over C, whose rows are a page apart (4 KiB pages: the walks, not
       the bandwidth, cost), while the B micro-panel streams from L2 fast enough:
       dgemm 2048^3 KC 256/512/768/1024: 82.5/94.9/96.8/100.7 GFLOP/s; sgemm 189/204/208/214.
       MC 224 beats 112-168 (dgemm 2048^3 with KC 1024: 100.7 vs 90.4), and NC 2048 beats 4096
       once the B panel (KC x NC) would fill the L3 (4096x4096x1024: dgemm 103.3 vs 98.9,
       sgemm 228.9 vs 221.5). OpenBLAS 0.3.21/0.3.34 forced to their Skylake-X kernels reach
       100 (dgemm) and 219 (sgemm) GFLOP/s on the same 2048^3.
       Since slices of k <= 256 run along C's rows (gemm_macro.c), a pass over C costs little
       and dgemm takes KC 256 with MC 448 (the A block, 896 KiB, in L2): one thread 2048^3
       110-111 vs 101-104 GFLOP/s with KC 1024 / MC 224, 4096^3 108-109 vs 102; 2 threads and
       k <= 256 within the noise. sgemm: 4096^3 with KC 256 / MC 448 228 vs 228-233, kept.
       sgemm MC 112 (A block 448 KiB) rather than 224 (896 KiB, which with the 128 KiB B
       micro-panel filled the L2): 4096^3 0.97-1.00x AVX-512 OpenBLAS vs 0.96-0.98x (one
       thread, three alternating bench_gemm runs), other cases unchanged.
       Since the kernels fetch C's tile late in the k loop (gemm.h, TSR__GEMM_KLOOP), a pass
       over C costs little for deep slices too, and sgemm takes KC 512: one thread, interleaved
       in one process, 4096^3 240-244 -> 246-251 GFLOP/s, 2048^3 249 -> 251-253, 1024x4096x4096
       236 -> 241; two threads 4096^3 481 -> 495; 4096x4096x1024, 1000^3, 768^3 unchanged.
       dgemm keeps KC 256 (KC 384-512: 4096^3 110 vs 118). */
    {"zen5",
     "AuthenticAMD",
     0x1A,
     0x00,
     0xFF,
     {"avx512-14x32", "avx512-14x16"},
     {{512, 112, 2048}, {256, 448, 2048}},
     {{0, 0, 0}, {0, 0, 0}},
     4,
     0},
    TSR__GEMM_ZEN4_ROW(0x10, 0x1F),
    TSR__GEMM_ZEN4_ROW(0x60, 0xAF),
    /* Intel Sapphire Rapids (family 6, model 0x8F) and Emerald Rapids (0xCF, the same Golden
       Cove core: 48 KiB L1d, 2 MiB L2, a mesh L3). Issue 10 measured Sapphire Rapids with the
       kernels of then (KC 216/176, MC = 4*MR beat the analytical model's 1302/2114 rows,
       49 -> 53-55 GFLOP/s dgemm 2048^3, 96 -> 111 sgemm). Issue 31 measured Emerald Rapids
       (family 6 model 0xCF, 2 vCPUs under KVM; one thread, 7-9 rounds interleaved in one
       process, median of the per-round ratio to OpenBLAS 0.3.34, its SkylakeX kernels):
       - The old blocks left large products short: dgemm 2048^3 0.77, sgemm 0.87.
         Deep KC, as on Zen 4/5 (the kernels fetch C's tile late, so fewer passes over C pay),
         lifts them: dgemm KC 512, MC 224: 0.89-0.97; sgemm KC 1024, MC 56: 0.97-0.98.
       - NC 1024 (f32) and 512 (f64), not 4096: shallow slices (k <= 256) walk C along its
         rows and stream every B micro-panel of the block once per A micro-panel; a 4096-wide
         block of B (4 MiB f32, 8 MiB f64 at k = 256) does not fit the 2 MiB L2 and comes from
         the slower L3 each time; 1 MiB (half the L2) does. 4096x4096x256: sgemm 0.95 -> 1.10,
         dgemm 0.85 -> 1.08 (NC 1024: 0.90); SUMMA's local multiply in ScaLAPACK's layout
         (column-major C, ldc 4096, beta 1: row-major 2048x4096x256) dgemm 0.79 -> 0.89,
         sgemm 0.97. Deep slices lose nothing (NC only sets how often A is repacked there):
         dgemm 2048^3 NC 512 0.97 vs NC 1024 0.90.
       - 1000^3 and 1024^3 within +-4 % of the old blocks either way (the shared VM's noise:
         single runs swing 0.6-1.3). Two threads, 2048^3, the old row: dgemm 0.97, sgemm 0.99;
         this row (bench_gemm --threads 2 --best, the CBLAS drop-in): dgemm 1.04, sgemm 1.08,
         4096x4096x256 1.21 / 1.08.
       - The sup path (no packing) only up to 96 KiB of op(A) and C, not the L2's 2 MiB: with
         a 2 MiB L2 the rule sent products up to 512^3 f64 there, where packing pays. Sup path
         against packed (ratio to OpenBLAS, medians of 9 interleaved rounds): dgemm 96^3 0.93
         vs 0.78 (sup kept), 128^3 1.10 vs 1.19, 192^3 1.02 vs 1.17, 256^3 0.93 vs 1.15,
         384^3 0.83 vs 1.06, 512^3 0.91 vs 1.07; sgemm 128^3 1.24 vs 1.10 (sup kept), 192^3
         1.06 vs 1.06, 256^3 0.98 vs 1.05, 384^3 0.87 vs 1.04, 512^3 0.79 vs 1.04.
       - The "-pb" kernels (the same register blocks with a B prefetch, gemm_ukr_avx512.c):
         the B micro-panel of these deep KC no longer fits the L1.
       Sapphire Rapids takes the same row (same core and L2), not re-measured. */
    {"spr",
     "GenuineIntel",
     6,
     0x8F,
     0x8F,
     {"avx512-14x32-pb", "avx512-14x16-pb"},
     {{1024, 56, 1024}, {512, 224, 512}},
     {{0, 0, 0}, {0, 0, 0}},
     4,
     96 * 1024},
    {"spr",
     "GenuineIntel",
     6,
     0xCF,
     0xCF,
     {"avx512-14x32-pb", "avx512-14x16-pb"},
     {{1024, 56, 1024}, {512, 224, 512}},
     {{0, 0, 0}, {0, 0, 0}},
     4,
     96 * 1024},
};
enum { TSR__GEMM_NUARCHS = sizeof tsr__gemm_uarchs / sizeof tsr__gemm_uarchs[0] };

/* ---------------------------------------------------------------- the rule ------------ */

static int64_t tsr__round_down(int64_t x, int64_t m) {
  return x / m * m;
}

/*
 * Cache blocks for a CPU without a measured row, from the sizes of its caches (S = element
 * size; NR x KC is the packed B micro-panel, MR x KC an A micro-panel):
 *  - KC: the B micro-panel fills the L1 data cache, KC = L1 / (NR * S), a multiple of 8 in
 *    [128, 512]. The measured rows all run a B micro-panel of 0.5-4x the L1 (Zen 4/5 f64
 *    KC 256, Zen 5 f32 512, Zen 4 f32 512-1024): streaming it from L2 costs the x86 kernels
 *    little, fewer passes over C save more, and the analytical model of Low et al. (ACM TOMS
 *    43(2), 2016), which keeps A's and B's micro-panels together in L1, gave KC 104 for f64
 *    on Zen 4 at 0.77x the anchors.
 *  - MC: the packed A block (MC x KC) takes half of the L2, MC = L2 / (2 * KC * S), a
 *    multiple of MR (at least MR): the other half holds the B micro-panel and C's tiles.
 *  - NC: the packed B panel (KC x NC) takes an eighth of the L3 (shared with the other cores,
 *    the A blocks and C), NC = L3 / (8 * KC * S), a multiple of NR in [NR, 4096]. Every
 *    measured row prefers it to a quarter: Zen 4 and Zen 5 (32 MiB) run NC 2048 at KC 256 f64
 *    (4096: 2-4 % slower at 4096^3 and HPCC's 4081^3), Emerald Rapids smaller still.
 * On this rule an unseen Zen 4 gets f64 KC 256 / MC 252 (its measured row: 256 / 224) and
 * f32 on the AVX-512 kernel KC 256 / MC 504, which ran within the noise of the measured
 * 1024 / 56 (sgemm 1024^3 and 2048^3, one thread, CPU-time ratio to OpenBLAS 1.04-1.08 vs
 * 1.04-1.15; the AVX2 kernel 0.95-1.01). Reported sizes of 0 fall back to cpuinfo.c's
 * defaults before they reach here.
 */
void tsr__gemm_rule_blocks(const tsr__gemm_kernel *k, const tsr__cpu_cache cache[3],
                           int64_t blk[3]) {
  const int64_t s = tsr__dtype_size(k->dtype), mr = k->mr, nr = k->nr;
  int64_t kc = tsr__round_down(cache[0].size / (nr * s), 8);
  if (kc < 128) kc = 128;
  if (kc > 512) kc = 512;
  int64_t mc = tsr__round_down(cache[1].size / (2 * kc * s), mr);
  if (mc < mr) mc = mr;
  int64_t nc = cache[2].size / (8 * kc * s);
  if (nc > 4096) nc = 4096;
  nc = tsr__round_down(nc, nr);
  if (nc < nr) nc = nr;
  blk[0] = kc;
  blk[1] = mc;
  blk[2] = nc;
}

/* Blocks kept within sane bounds and rounded to the register block (gemm_tune.h). */
void tsr__gemm_blocks_fix(const tsr__gemm_kernel *k, int64_t *kc, int64_t *mc, int64_t *nc,
                          int *grain) {
  if (*grain < 1 || *grain > 16) *grain = 4;
  if (*kc < 8) *kc = 8;
  if (*kc > 4096) *kc = 4096;
  *kc = tsr__round_down(*kc, 4);
  if (*mc < k->mr) *mc = k->mr;
  if (*mc > 65536) *mc = 65536;
  *mc = tsr__round_down(*mc, k->mr);
  if (*nc < k->nr) *nc = k->nr;
  if (*nc > 65536) *nc = 65536;
  *nc = tsr__round_down(*nc, k->nr);
}

/* ---------------------------------------------------------------- selection ----------- */

/* The registered kernel of an ISA for dtype (the first, best one), when cpu runs that ISA (the
   portable one always: every CPU runs it). */
static const tsr__gemm_kernel *tsr__gemm_kernel_for(const tsr__gemm_cpu *cpu, const char *isa,
                                                    tsr_dtype dtype) {
  const bool ok = strcmp(isa, "portable") == 0 || (cpu->isas & tsr__gemm_isa_bit(isa)) != 0;
  return ok ? tsr__gemm_kernel_first(isa, dtype) : NULL;
}

static const tsr__gemm_uarch *tsr__gemm_uarch_match(const tsr__gemm_cpu *cpu) {
  for (int i = 0; i < TSR__GEMM_NUARCHS; ++i) {
    const tsr__gemm_uarch *u = &tsr__gemm_uarchs[i];
    if (strcmp(u->vendor, cpu->vendor) != 0 || u->family != cpu->family ||
        cpu->model < u->model_lo || cpu->model > u->model_hi)
      continue;
    bool ok = true;
    for (int d = 0; d < 2; ++d) {
      const tsr_dtype dt = d == 0 ? TSR_F32 : TSR_F64;
      const tsr__gemm_kernel *k = tsr__gemm_kernel_find(u->kernel[d], dt);
      if (!k || tsr__gemm_kernel_for(cpu, k->isa, dt) == NULL) ok = false;
    }
    if (ok) return u;
  }
  return NULL;
}

bool tsr__gemm_choose(const tsr__gemm_cpu *cpu, const char *want, tsr__gemm_choice *out) {
  if (!want || strcmp(want, "auto") == 0) want = "";
  const tsr__gemm_uarch *u = tsr__gemm_uarch_match(cpu);
  bool met = true;
  out->uarch = u ? u->name : "unknown";
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dtype = d == 0 ? TSR_F32 : TSR_F64;
    const tsr__gemm_kernel *k = u ? tsr__gemm_kernel_find(u->kernel[d], dtype) : NULL;
    if (want[0] && k && strcmp(k->isa, want) != 0) k = NULL; /* another ISA was asked for */
    const bool row = k != NULL;
    if (!row) {
      if (want[0]) k = tsr__gemm_kernel_for(cpu, want, dtype);
      if (want[0] && !k) met = false;
      /* The widest ISA this CPU runs (the table's order), at last the portable one. */
      for (int i = 0; !k && tsr__gemm_isa_name(i); ++i)
        k = tsr__gemm_kernel_for(cpu, tsr__gemm_isa_name(i), dtype);
      if (!k) k = tsr__gemm_kernel_first("portable", dtype);
    }
    int64_t rule[3];
    tsr__gemm_rule_blocks(k, cpu->cache, rule);
    for (int t = 0; t < 2; ++t) {
      int64_t blk[3] = {0, 0, 0};
      if (row) {
        const int64_t *mt = u->blocks_mt[d];
        memcpy(blk, t == 1 && (mt[0] || mt[1] || mt[2]) ? mt : u->blocks[d], sizeof blk);
      }
      for (int i = 0; i < 3; ++i)
        if (blk[i] <= 0) blk[i] = rule[i];
      int grain = row ? u->grain : 4;
      tsr__gemm_blocks_fix(k, &blk[0], &blk[1], &blk[2], &grain);
      /* The sup-path rule: the row's, else the L2 (256 KiB when the CPU reports none). */
      int64_t sup = row && u->sup_bytes > 0 ? u->sup_bytes : cpu->cache[1].size;
      if (sup <= 0) sup = 256 << 10;
      out->cfg[d][t] = (tsr__gemm_config){.ker = k,
                                          .kc = blk[0],
                                          .mc = blk[1],
                                          .nc = blk[2],
                                          .grain = grain,
                                          .source = row ? "registry" : "rule",
                                          .sup_bytes = sup};
    }
    /* Shallow products whose C rows share an L1 set (tsr__gemm_config_shallow): a kernel whose
       MR rows fit the set's ways, the widest ISA's that cpu runs, with the rule's blocks. */
    out->shallow[d] = (tsr__gemm_config){.ker = NULL};
    const int64_t ways = cpu->cache[0].ways;
    for (int i = 0; !want[0] && ways > 0 && k->mr > ways && tsr__gemm_isa_name(i); ++i) {
      const tsr__gemm_kernel *n = tsr__gemm_kernel_for(cpu, tsr__gemm_isa_name(i), dtype);
      if (!n || n->mr > ways) continue;
      int64_t blk[3];
      int grain = out->cfg[d][0].grain;
      tsr__gemm_rule_blocks(n, cpu->cache, blk);
      tsr__gemm_blocks_fix(n, &blk[0], &blk[1], &blk[2], &grain);
      out->shallow[d] = (tsr__gemm_config){.ker = n,
                                           .kc = blk[0],
                                           .mc = blk[1],
                                           .nc = blk[2],
                                           .grain = grain,
                                           .source = "shallow",
                                           .sup_bytes = out->cfg[d][0].sup_bytes};
      break;
    }
  }
  return met;
}

/* This machine as tsr__gemm_choose sees it. */
static void tsr__gemm_host(tsr__gemm_cpu *cpu) {
  const tsr__cpu_facts *f = tsr__cpu_facts_get();
  snprintf(cpu->vendor, sizeof cpu->vendor, "%s", f->vendor);
  cpu->family = f->family;
  cpu->model = f->model;
  cpu->isas = 0;
  for (int i = 0; tsr__gemm_isa_name(i); ++i)
    if (tsr__gemm_isa_available(tsr__gemm_isa_name(i)))
      cpu->isas |= tsr__gemm_isa_bit(tsr__gemm_isa_name(i));
  memcpy(cpu->cache, f->cache, sizeof cpu->cache);
}

/* The registry's (or the rule's) configuration per dtype and 1 / several threads, and the
   environment's requests; fixed at the first call (tsr__gemm_registry_reload re-reads them). */
static tsr__gemm_choice tsr__gemm_defaults;
static char tsr__gemm_isa_want[16];     /* TSR_CPU_KERNEL ("" = auto) */
static int64_t tsr__gemm_env_blocks[3]; /* TSR_CPU_GEMM_BLOCKS (0 = keep) */
static bool tsr__gemm_env_met = true;
static pthread_once_t tsr__gemm_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tsr__gemm_lock = PTHREAD_MUTEX_INITIALIZER;
/* The configuration of one-thread calls without a tuning object, per dtype, with the tiny
   lane's bound (tsr__gemm_serial_get): the answer of every small call, so it is worked out
   once (a call of 16^3 takes ~100 ns; the wisdom look-up and the checks below cost several of
   them). Tagged with 1 + the wisdom's generation; 0 (tsr__gemm_registry_reload) or another
   generation: work it out again. The reloads are for the tuner and the tests, between calls,
   as are the defaults they rewrite. */
tsr__gemm_serial tsr__gemm_serials[2];
atomic_uint tsr__gemm_serial_tag[2];
static void tsr__gemm_config_work_out(tsr_dtype dtype, int nt, const tsr__gemm_tuning *t,
                                      tsr__gemm_config *out);

static int tsr__dt_index(tsr_dtype dtype) {
  return dtype == TSR_F32 ? 0 : 1;
}

static void tsr__gemm_registry_load(void) {
  (void)tsr__env_choice(TSR__ENV_CPU_KERNEL); /* warns on a name that is no ISA */
  const char *raw = tsr__env_text(TSR__ENV_CPU_KERNEL);
  /* An ISA of the table by its name (any case); a bad name still goes to tsr__gemm_choose,
     which falls back and reports it (false). */
  const char *want = raw && strcasecmp(raw, "auto") != 0 ? raw : "";
  for (int i = 0; want[0] && tsr__gemm_isa_name(i); ++i)
    if (strcasecmp(want, tsr__gemm_isa_name(i)) == 0) want = tsr__gemm_isa_name(i);
  snprintf(tsr__gemm_isa_want, sizeof tsr__gemm_isa_want, "%s", want);
  tsr__env_blocks(TSR__ENV_CPU_GEMM_BLOCKS, tsr__gemm_env_blocks); /* 0 keeps a value */
  tsr__gemm_cpu cpu;
  tsr__gemm_host(&cpu);
  tsr__gemm_env_met = tsr__gemm_choose(&cpu, want, &tsr__gemm_defaults);
}

static void tsr__gemm_once_fn(void) {
  tsr__gemm_registry_load();
}

bool tsr__gemm_registry_reload(void) {
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  pthread_mutex_lock(&tsr__gemm_lock);
  tsr__gemm_registry_load();
  atomic_store(&tsr__gemm_serial_tag[0], 0u);
  atomic_store(&tsr__gemm_serial_tag[1], 0u);
  const bool met = tsr__gemm_env_met;
  pthread_mutex_unlock(&tsr__gemm_lock);
  tsr__gemm_wisdom_reload();
  return met;
}

const char *tsr__gemm_uarch_name(void) {
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  return tsr__gemm_defaults.uarch;
}

void tsr__gemm_config_default(tsr_dtype dtype, int nt, tsr__gemm_config *out) {
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  *out = tsr__gemm_defaults.cfg[tsr__dt_index(dtype)][nt > 1];
}

/*
 * A shallow packed product (k up to TSR__GEMM_SHALLOW_K) spends its time on C: each tile's
 * MR rows are loaded, updated and stored after a few k steps. When C's rows lie a multiple of
 * the L1's set period apart (its size over its ways: 4 KiB on Zen 4 and 5 and Intel's cores,
 * so every leading dimension of 512 doubles or 1024 floats times an integer), all MR rows of a
 * tile fall in one L1 set; with more rows than ways (AVX-512's 14 against 8 or 12) the tile
 * evicts itself before its update. A kernel whose rows fit (AVX2's 6) then wins. Measured on
 * Zen 4 (EPYC family 25 model 17, 8-way 32 KiB L1), one thread, column-major C -= A B^T,
 * 1024 x 511 x k, ld 1024, 1536 or 2048, ratio to OpenBLAS 0.3.21 in the same run:
 * dgemm k = 2 0.75 -> 1.22-1.36, k = 4 0.71 -> 1.08, 8 0.77-0.80 -> 1.10-1.12, 16 0.82-0.88 ->
 * 1.08-1.13, 32 0.92 -> 1.05, 64 0.97 -> 1.04; k = 96-256 within 0.02 either way; sgemm k = 4
 * 1.07 -> 1.68, 16-48 1.01-1.03 -> 1.09-1.30. With ld 1032, 1100 or 1280 (rows over several
 * sets) the AVX-512 kernel stays ahead (dgemm k = 2: 0.92 against 0.69 for AVX2) and is kept.
 * These are the trailing updates of blocked factorizations and reductions with a small NB on
 * a power-of-two local leading dimension (ScaLAPACK's on a 1024-row block).
 */
enum { TSR__GEMM_SHALLOW_K = 64 };

bool tsr__gemm_config_shallow(const tsr__gemm_args *g, tsr__gemm_config *cfg) {
  if (g->k > TSR__GEMM_SHALLOW_K || strcmp(cfg->source, "override") == 0) return false;
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  const tsr__gemm_config *n = &tsr__gemm_defaults.shallow[tsr__dt_index(g->dtype)];
  const tsr__cpu_cache *l1 = &tsr__cpu_facts_get()->cache[0];
  if (n->ker == NULL || cfg->ker->mr <= n->ker->mr || l1->ways <= 0 || l1->size <= 0) return false;
  const int64_t period = l1->size / l1->ways;
  const int64_t row_bytes = g->ldc * (int64_t)tsr__dtype_size(g->dtype);
  if (period <= 0 || row_bytes % period != 0) return false;
  const int grain = cfg->grain;
  *cfg = *n;
  cfg->grain = grain;
  return true;
}

const tsr__gemm_serial *tsr__gemm_serial_refresh(tsr_dtype dtype) {
  const int d = tsr__dt_index(dtype);
  const unsigned want = 1u + atomic_load_explicit(&tsr__gemm_wisdom_gen, memory_order_acquire);
  if (atomic_load_explicit(&tsr__gemm_serial_tag[d], memory_order_acquire) == want)
    return &tsr__gemm_serials[d];
  tsr__gemm_serial s;
  tsr__gemm_config_work_out(dtype, 1, NULL, &s.cfg);
  /* The wisdom may have been read for the first time just now: tag with what it is now. */
  const unsigned now = 1u + tsr__gemm_wisdom_generation();
  const tsr__cpu_facts *f = tsr__cpu_facts_get();
  double bound = (double)f->cache[1].size;
  if ((double)f->cache[2].size < bound) bound = (double)f->cache[2].size;
  s.tiny_bytes = s.cfg.ker->sup ? bound : 0.0;
  s.operand_bytes = (double)s.cfg.sup_bytes < bound ? (double)s.cfg.sup_bytes : 0.0;
  s.l1_bytes = (double)f->cache[0].size;
  /* Written once per tag: a thread that worked it out at the same time finds it done (callers
     of the fast path above read the entry only after the tag that publishes it). */
  pthread_mutex_lock(&tsr__gemm_lock);
  if (atomic_load_explicit(&tsr__gemm_serial_tag[d], memory_order_relaxed) != now) {
    tsr__gemm_serials[d] = s;
    atomic_store_explicit(&tsr__gemm_serial_tag[d], now, memory_order_release);
  }
  pthread_mutex_unlock(&tsr__gemm_lock);
  return &tsr__gemm_serials[d];
}

void tsr__gemm_config_get(tsr_dtype dtype, int nt, const tsr__gemm_tuning *t,
                          tsr__gemm_config *out) {
  if (t == NULL && nt == 1)
    *out = tsr__gemm_serial_get(dtype)->cfg;
  else
    tsr__gemm_config_work_out(dtype, nt, t, out);
}

static void tsr__gemm_config_work_out(tsr_dtype dtype, int nt, const tsr__gemm_tuning *t,
                                      tsr__gemm_config *out) {
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  const int d = tsr__dt_index(dtype);
  const tsr__gemm_config *own = t ? t->config[d] : NULL;
  if (own && own->ker && own->ker->dtype == dtype) { /* the call's own configuration */
    *out = *own;
    tsr__gemm_blocks_fix(out->ker, &out->kc, &out->mc, &out->nc, &out->grain);
    out->source = "override";
    /* A configuration with no sup-path rule of its own takes the default's. */
    if (out->sup_bytes <= 0) out->sup_bytes = tsr__gemm_defaults.cfg[d][nt > 1].sup_bytes;
    return;
  }
  *out = tsr__gemm_defaults.cfg[d][nt > 1];
  tsr__gemm_config w;
  if (!(t && t->no_wisdom) && tsr__gemm_wisdom_lookup(dtype, nt, &w) &&
      (!tsr__gemm_isa_want[0] || strcmp(w.ker->isa, tsr__gemm_isa_want) == 0)) {
    tsr__gemm_blocks_fix(w.ker, &w.kc, &w.mc, &w.nc, &w.grain);
    w.sup_bytes = out->sup_bytes; /* wisdom records no sup-path rule */
    *out = w;
  }
  const int64_t *e = tsr__gemm_env_blocks;
  if (e[0] || e[1] || e[2]) {
    if (e[0]) out->kc = e[0];
    if (e[1]) out->mc = e[1];
    if (e[2]) out->nc = e[2];
    tsr__gemm_blocks_fix(out->ker, &out->kc, &out->mc, &out->nc, &out->grain);
    out->source = "TSR_CPU_GEMM_BLOCKS";
  }
}

const char *tsr__omp_gemm_kernel_name(tsr_dtype dtype) {
  if (dtype == TSR_C64 || dtype == TSR_C128) /* 1m: the real dtype's kernel */
    dtype = dtype == TSR_C64 ? TSR_F32 : TSR_F64;
  if (dtype != TSR_F32 && dtype != TSR_F64) return "none";
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  return tsr__gemm_defaults.cfg[tsr__dt_index(dtype)][0].ker->isa;
}
