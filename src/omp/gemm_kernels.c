/*
 * The GEMM micro-kernel registry (BLIS "context"): every kernel with its register block
 * (MR, NR) and cache blocks (KC, MC, NC), CPU feature detection, and the run-time choice.
 *
 * Selection: TSR_CPU_KERNEL = auto (default) | portable | avx2 | avx512. An ISA that the CPU
 * or this build lacks is not an error: the best available kernel runs instead (a binary must
 * keep working when moved to an older CPU); tsr__omp_gemm_kernel_name() tells which one.
 *
 * Block sizes follow the analytical model of Low, Igual, Smith and Quintana-Orti, "Analytical
 * Modeling Is Enough for High-Performance BLIS", ACM TOMS 43(2), 2016, from the cache
 * geometry of this machine (sysconf, else /sys/devices/system/cpu/cpu0/cache, else defaults):
 *  - KC: the macro-kernel keeps one B micro-panel (KC x NR) in L1 while the A micro-panels
 *    (MR x KC) stream through it from L2. With W1 ways of N1*L bytes, A gets
 *    C_A = floor((W1 - 1) / (1 + NR/MR)) ways (B gets NR/MR times as many, one way is left for
 *    C), and KC = C_A * N1 * L / (MR * S).
 *  - MC: the packed A block (MC x KC) lives in L2 next to one B micro-panel and C:
 *    MC = (W2 - 1 - ceil(KC*NR*S / (N2*L))) * N2 * L / (KC * S).
 *    Measured exception: the AVX-512 kernels run faster with MC = 4*MR (56 rows) than with the
 *    model's MC (1302 rows f64, 2114 f32 on a 2 MiB L2). Single thread, Sapphire Rapids,
 *    GFLOP/s model-MC -> 56 rows: dgemm 2048^3 49 -> 53-55, 4096x4096x256 43 -> 55,
 *    4096x4096x64 36 -> 56; sgemm 2048^3 96 -> 111, 4096x4096x256 91 -> 111 (MC 28..84 all
 *    within noise of 56). A probable cause (no hardware counters in the VM to confirm it):
 *    walking a tall column of C tiles touches one page per C row (a row of a large C is
 *    >= 4 KiB), which a short row block keeps inside the TLB, and the small A block stays near
 *    L1 while the B micro-panels stream from L2. The AVX2 kernels measured best
 *    with the model's MC (dgemm 34 vs 31 at 96 rows), so the cap is per kernel (mc_cap_mr).
 *  - NC: the packed B panel (KC x NC) lives in L3 beside the A blocks of all cores:
 *    NC = (W3 - 1 - ceil(MC*KC*S / (N3*L))) * N3 * L / (KC * S), capped at 4096 because the L3
 *    is shared with other processes and a larger panel only saves re-packing of A.
 * The driver then splits k and n into equal slices/blocks no larger than these.
 * TSR_CPU_GEMM_BLOCKS="kc,mc,nc" overrides the three cache blocks (tuning; rounded to the
 * register block; 0 keeps the model's value).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "omp/gemm.h"

/* The registry, best first per dtype. Cache blocks are filled in once by tsr__gemm_init. */
static tsr__gemm_kernel tsr__gemm_kernels[] = {
#if defined(TSR__GEMM_X86)
    {"avx512 14x32", "avx512", TSR_F32, TSR__GEMM_AVX512_MR, TSR__GEMM_AVX512_NR_F32, 4, 0, 0, 0,
     tsr__gemm_ukr_avx512_f32, NULL},
    {"avx512 14x16", "avx512", TSR_F64, TSR__GEMM_AVX512_MR, TSR__GEMM_AVX512_NR_F64, 4, 0, 0, 0,
     NULL, tsr__gemm_ukr_avx512_f64},
    {"avx2 6x16", "avx2", TSR_F32, TSR__GEMM_AVX2_MR, TSR__GEMM_AVX2_NR_F32, 0, 0, 0, 0,
     tsr__gemm_ukr_avx2_f32, NULL},
    {"avx2 6x8", "avx2", TSR_F64, TSR__GEMM_AVX2_MR, TSR__GEMM_AVX2_NR_F64, 0, 0, 0, 0, NULL,
     tsr__gemm_ukr_avx2_f64},
#endif
    {"portable 4x8", "portable", TSR_F32, TSR__GEMM_PORTABLE_MR, TSR__GEMM_PORTABLE_NR_F32, 0, 0, 0,
     0, tsr__gemm_ukr_portable_f32, NULL},
    {"portable 4x4", "portable", TSR_F64, TSR__GEMM_PORTABLE_MR, TSR__GEMM_PORTABLE_NR_F64, 0, 0, 0,
     0, NULL, tsr__gemm_ukr_portable_f64},
};
enum { TSR__GEMM_NKERNELS = sizeof tsr__gemm_kernels / sizeof tsr__gemm_kernels[0] };

/* The selected kernel per dtype (index 0: f32, 1: f64). */
static _Atomic(const tsr__gemm_kernel *) tsr__gemm_selected[2];
static pthread_once_t tsr__gemm_once = PTHREAD_ONCE_INIT;

bool tsr__gemm_isa_available(const char *isa) {
  if (strcmp(isa, "portable") == 0) return true;
#if defined(TSR__GEMM_X86)
  __builtin_cpu_init();
  if (strcmp(isa, "avx2") == 0)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  /* The AVX-512 kernels use FMA through AVX512F only, but are compiled with -mfma too. */
  if (strcmp(isa, "avx512") == 0)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
  return false;
}

/* ---------------------------------------------------------------- cache geometry ------ */

typedef struct tsr__cache {
  int64_t size, ways, line; /* bytes, associativity, line bytes */
} tsr__cache;

static int64_t tsr__read_sys_int(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char buf[64] = {0};
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  if (n == 0) return -1;
  char *end = NULL;
  long long v = strtoll(buf, &end, 10);
  if (end == buf || v < 0) return -1;
  if (*end == 'K')
    v *= 1024;
  else if (*end == 'M')
    v *= 1024 * 1024;
  return (int64_t)v;
}

/* Data/unified cache of `level` (1..3) from /sys; false when absent. */
static bool tsr__cache_from_sys(int level, tsr__cache *c) {
  for (int idx = 0; idx < 10; ++idx) {
    char path[96], type[32] = {0};
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
    if (tsr__read_sys_int(path) != level) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    const size_t n = fread(type, 1, sizeof type - 1, f);
    fclose(f);
    if (n == 0 || strncmp(type, "Instruction", 11) == 0) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
    c->size = tsr__read_sys_int(path);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/ways_of_associativity",
             idx);
    c->ways = tsr__read_sys_int(path);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/coherency_line_size",
             idx);
    c->line = tsr__read_sys_int(path);
    return c->size > 0 && c->ways > 0 && c->line > 0;
  }
  return false;
}

static tsr__cache tsr__cache_get(int level) {
  /* Defaults when nothing can be read: a common desktop core. */
  static const tsr__cache defaults[3] = {
      {32 * 1024, 8, 64}, {512 * 1024, 8, 64}, {8 * 1024 * 1024, 16, 64}};
  tsr__cache c = {0, 0, 0};
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  static const int names[3][3] = {
      {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_ASSOC, _SC_LEVEL1_DCACHE_LINESIZE},
      {_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_ASSOC, _SC_LEVEL2_CACHE_LINESIZE},
      {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL3_CACHE_ASSOC, _SC_LEVEL3_CACHE_LINESIZE}};
  c.size = sysconf(names[level - 1][0]);
  c.ways = sysconf(names[level - 1][1]);
  c.line = sysconf(names[level - 1][2]);
#endif
  if (c.size <= 0 || c.ways <= 0 || c.line <= 0) {
    if (!tsr__cache_from_sys(level, &c)) c = defaults[level - 1];
  }
  /* Fully associative (ways 0xff in some reports) or odd values: treat as 16-way. */
  if (c.ways > 64 || c.size / (c.ways * c.line) < 1) c.ways = 16;
  return c;
}

/* ---------------------------------------------------------------- block sizes --------- */

static int64_t tsr__round_down(int64_t x, int64_t m) {
  return x / m * m;
}

/* Low et al. 2016; see the comment at the top. S = element size in bytes. */
static void tsr__gemm_model(tsr__gemm_kernel *k, const tsr__cache *l1, const tsr__cache *l2,
                            const tsr__cache *l3) {
  const int64_t s = k->dtype == TSR_F32 ? 4 : 8, mr = k->mr, nr = k->nr;
  /* L1: ways for the streamed A micro-panel. */
  const int64_t way1 = l1->size / l1->ways;
  int64_t ca = (l1->ways - 1) * mr / (mr + nr);
  if (ca < 1) ca = 1;
  int64_t kc = tsr__round_down(ca * way1 / (mr * s), 8);
  if (kc < 64) kc = 64;
  if (kc > 1024) kc = 1024;
  /* L2: the A block. */
  const int64_t way2 = l2->size / l2->ways;
  const int64_t cb2 = (kc * nr * s + way2 - 1) / way2;
  int64_t ca2 = l2->ways - 1 - cb2;
  if (ca2 < 1) ca2 = 1;
  int64_t mc = tsr__round_down(ca2 * way2 / (kc * s), mr);
  if (k->mc_cap_mr > 0 && mc > k->mc_cap_mr * mr) mc = k->mc_cap_mr * mr;
  if (mc < mr) mc = mr;
  /* L3: the B panel. */
  const int64_t way3 = l3->size / l3->ways;
  const int64_t ca3 = (mc * kc * s + way3 - 1) / way3;
  int64_t cb3 = l3->ways - 1 - ca3;
  if (cb3 < 1) cb3 = 1;
  int64_t nc = cb3 * way3 / (kc * s);
  if (nc > 4096) nc = 4096;
  nc = tsr__round_down(nc, nr);
  if (nc < nr) nc = nr;
  k->kc = kc;
  k->mc = mc;
  k->nc = nc;
}

static void tsr__gemm_init(void) {
  const tsr__cache l1 = tsr__cache_get(1), l2 = tsr__cache_get(2), l3 = tsr__cache_get(3);
  long long okc = 0, omc = 0, onc = 0;
  const char *env = getenv("TSR_CPU_GEMM_BLOCKS");
  if (env && sscanf(env, "%lld,%lld,%lld", &okc, &omc, &onc) != 3) okc = omc = onc = 0;
  for (int i = 0; i < TSR__GEMM_NKERNELS; ++i) {
    tsr__gemm_kernel *k = &tsr__gemm_kernels[i];
    tsr__gemm_model(k, &l1, &l2, &l3);
    /* Tuning overrides, kept within sane bounds. */
    if (okc >= 8 && okc <= 4096) k->kc = tsr__round_down(okc, 4);
    if (omc >= k->mr && omc <= 65536) k->mc = tsr__round_down(omc, k->mr);
    if (onc >= k->nr && onc <= 65536) k->nc = tsr__round_down(onc, k->nr);
  }
}

/* Selects the kernel for each dtype from TSR_CPU_KERNEL; true when the request was met. */
static bool tsr__gemm_select(void) {
  const char *want = getenv("TSR_CPU_KERNEL");
  if (want && (want[0] == '\0' || strcmp(want, "auto") == 0)) want = NULL;
  bool met = true;
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dtype = d == 0 ? TSR_F32 : TSR_F64;
    const tsr__gemm_kernel *best = NULL, *asked = NULL;
    for (int i = 0; i < TSR__GEMM_NKERNELS; ++i) {
      const tsr__gemm_kernel *k = &tsr__gemm_kernels[i];
      if (k->dtype != dtype || !tsr__gemm_isa_available(k->isa)) continue;
      if (!best) best = k;
      if (want && strcmp(want, k->isa) == 0) asked = k;
    }
    if (want && !asked) met = false;
    atomic_store(&tsr__gemm_selected[d], asked ? asked : best);
  }
  return met;
}

static void tsr__gemm_once_fn(void) {
  tsr__gemm_init();
  (void)tsr__gemm_select();
}

const tsr__gemm_kernel *tsr__gemm_kernel_get(tsr_dtype dtype) {
  if (dtype != TSR_F32 && dtype != TSR_F64) return NULL;
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  return atomic_load(&tsr__gemm_selected[dtype == TSR_F32 ? 0 : 1]);
}

bool tsr__gemm_kernel_reselect(void) {
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  return tsr__gemm_select();
}

const char *tsr__omp_gemm_kernel_name(tsr_dtype dtype) {
  const tsr__gemm_kernel *k = tsr__gemm_kernel_get(dtype);
  return k ? k->isa : "none";
}
