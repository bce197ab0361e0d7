/*
 * The CPU GEMM registry (BLIS's config/<arch> and "context" idea): every micro-kernel with its
 * register block, a table of microarchitectures (CPUID vendor, family, model) giving the
 * kernel and the cache blocks (KC, MC, NC) that suit each, and the configuration of a call.
 *
 * A call's configuration, first match wins:
 *  1. an override installed by tessera-tune or a benchmark (tsr__gemm_config_override);
 *  2. the wisdom file's entry for this CPU model, dtype and thread count (gemm_wisdom.c),
 *     unless TSR_CPU_KERNEL asks for another ISA;
 *  3. the registry's entry for this microarchitecture;
 *  4. for a CPU the registry does not know, or an ISA forced with TSR_CPU_KERNEL that is not
 *     the registry's choice: the best kernel of that ISA with blocks from the analytical model
 *     of Low, Igual, Smith and Quintana-Orti, "Analytical Modeling Is Enough for
 *     High-Performance BLIS", ACM TOMS 43(2), 2016, on this machine's cache geometry.
 * TSR_CPU_GEMM_BLOCKS="kc,mc,nc" then replaces the cache blocks of 2-4 (tuning by hand; each
 * value rounded down to the register block, 0 keeps the chosen one).
 *
 * TSR_CPU_KERNEL = auto (default) | portable | avx2 | avx512. An ISA that the CPU or this
 * build lacks is not an error: the best available kernel runs instead (a binary must keep
 * working when moved to an older CPU); tsr__gemm_config_get tells which one.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omp/gemm_tune.h"
#include "omp/omp_internal.h"

/* ---------------------------------------------------------------- kernels ------------- */

/* Every micro-kernel, best first per dtype within an ISA. */
static const tsr__gemm_kernel tsr__gemm_kernels[] = {
#if defined(TSR__GEMM_X86)
    {"avx512-14x32", "avx512", TSR_F32, TSR__GEMM_AVX512_MR, TSR__GEMM_AVX512_NR_F32,
     tsr__gemm_ukr_avx512_f32, NULL, tsr__gemm_pack_a_avx512_f32, tsr__gemm_pack_b_avx512_f32, NULL,
     NULL, tsr__gemm_ukr_avx512_f32_stream, NULL, tsr__gemm_small_avx512_f32,
     tsr__gemm_small_avx512_f32_edge, NULL},
    {"avx512-14x16", "avx512", TSR_F64, TSR__GEMM_AVX512_MR, TSR__GEMM_AVX512_NR_F64, NULL,
     tsr__gemm_ukr_avx512_f64, NULL, NULL, tsr__gemm_pack_a_avx512_f64, tsr__gemm_pack_b_avx512_f64,
     NULL, tsr__gemm_ukr_avx512_f64_stream, tsr__gemm_small_avx512_f64, NULL,
     tsr__gemm_small_avx512_f64_edge},
    {"avx2-6x16", "avx2", TSR_F32, TSR__GEMM_AVX2_MR, TSR__GEMM_AVX2_NR_F32, tsr__gemm_ukr_avx2_f32,
     NULL, tsr__gemm_pack_a_f32, tsr__gemm_pack_b_f32, NULL, NULL, tsr__gemm_ukr_avx2_f32_stream,
     NULL, tsr__gemm_small_avx2_f32, tsr__gemm_small_avx2_f32_edge, NULL},
    {"avx2-6x8", "avx2", TSR_F64, TSR__GEMM_AVX2_MR, TSR__GEMM_AVX2_NR_F64, NULL,
     tsr__gemm_ukr_avx2_f64, NULL, NULL, tsr__gemm_pack_a_f64, tsr__gemm_pack_b_f64, NULL,
     tsr__gemm_ukr_avx2_f64_stream, tsr__gemm_small_avx2_f64, NULL, tsr__gemm_small_avx2_f64_edge},
#endif
    {"portable-4x8", "portable", TSR_F32, TSR__GEMM_PORTABLE_MR, TSR__GEMM_PORTABLE_NR_F32,
     tsr__gemm_ukr_portable_f32, NULL, tsr__gemm_pack_a_f32, tsr__gemm_pack_b_f32, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL},
    {"portable-4x4", "portable", TSR_F64, TSR__GEMM_PORTABLE_MR, TSR__GEMM_PORTABLE_NR_F64, NULL,
     tsr__gemm_ukr_portable_f64, NULL, NULL, tsr__gemm_pack_a_f64, tsr__gemm_pack_b_f64, NULL, NULL,
     NULL, NULL, NULL},
};
enum { TSR__GEMM_NKERNELS = sizeof tsr__gemm_kernels / sizeof tsr__gemm_kernels[0] };

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

const tsr__gemm_kernel *tsr__gemm_kernel_find(const char *name, tsr_dtype dtype) {
  for (int i = 0; i < TSR__GEMM_NKERNELS; ++i) {
    const tsr__gemm_kernel *k = &tsr__gemm_kernels[i];
    if (k->dtype == dtype && strcmp(k->name, name) == 0) return k;
  }
  return NULL;
}

int tsr__gemm_kernel_list(tsr_dtype dtype, const tsr__gemm_kernel **out, int max) {
  int n = 0;
  for (int i = 0; i < TSR__GEMM_NKERNELS && n < max; ++i) {
    const tsr__gemm_kernel *k = &tsr__gemm_kernels[i];
    if (k->dtype == dtype && tsr__gemm_isa_available(k->isa)) out[n++] = k;
  }
  return n;
}

/* The first (best) available kernel of an ISA for dtype, or NULL. */
static const tsr__gemm_kernel *tsr__gemm_kernel_of_isa(const char *isa, tsr_dtype dtype) {
  if (!tsr__gemm_isa_available(isa)) return NULL;
  for (int i = 0; i < TSR__GEMM_NKERNELS; ++i) {
    const tsr__gemm_kernel *k = &tsr__gemm_kernels[i];
    if (k->dtype == dtype && strcmp(k->isa, isa) == 0) return k;
  }
  return NULL;
}

/* ---------------------------------------------------------------- microarchitectures -- */

/*
 * The registry. A row matches the CPUID vendor, displayed family and a model range, and
 * applies only when its kernels' ISA is available (a hypervisor may hide AVX-512). Blocks of
 * 0 mean "the analytical model's value". Provenance of each row's blocks is given beside it:
 * "measured" rows were timed against the anchors on that CPU; the others follow the vendor's
 * published tuning (BLIS config/<arch>) or the model, and await a machine to measure on
 * (tessera-tune measures them on any machine).
 */
typedef struct tsr__gemm_uarch {
  const char *name;   /* "zen5" */
  const char *vendor; /* CPUID vendor string */
  int family, model_lo, model_hi;
  const char *kernel[2]; /* f32, f64 */
  int64_t blocks[2][3];  /* f32, f64: kc, mc, nc */
  int grain;             /* work units per thread */
} tsr__gemm_uarch;

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
     4},
    /* AMD Zen 4 (Genoa, Raphael), family 0x19 models 0x10-0x1F and 0x60-0xAF: AVX-512 on
       256-bit pipes. The f64 blocks were measured on a Genoa EPYC (issue 10: KC 256, MC 224
       gave 0.92x the anchors against 0.77x with the model's); the AVX2 kernel matched the
       anchors for f32 there. */
    {"zen4",
     "AuthenticAMD",
     0x19,
     0x10,
     0x1F,
     {"avx2-6x16", "avx512-14x16"},
     {{0, 0, 0}, {256, 224, 4096}},
     4},
    {"zen4",
     "AuthenticAMD",
     0x19,
     0x60,
     0xAF,
     {"avx2-6x16", "avx512-14x16"},
     {{0, 0, 0}, {256, 224, 4096}},
     4},
    /* AMD Zen 3 (family 0x19, other models) and Zen / Zen 2 (0x17): AVX2, 32 KiB L1d,
       512 KiB L2; model blocks. */
    {"zen3",
     "AuthenticAMD",
     0x19,
     0x00,
     0xFF,
     {"avx2-6x16", "avx2-6x8"},
     {{0, 0, 0}, {0, 0, 0}},
     4},
    {"zen2",
     "AuthenticAMD",
     0x17,
     0x00,
     0xFF,
     {"avx2-6x16", "avx2-6x8"},
     {{0, 0, 0}, {0, 0, 0}},
     4},
    /* Intel Sapphire Rapids / Emerald Rapids / Granite Rapids (family 6, models 0x8F, 0xCF,
       0xAD, 0xAE): measured on Sapphire Rapids (the earlier tuning: MC = 4*MR beat the
       model's 1302/2114 rows, 49 -> 53-55 GFLOP/s dgemm 2048^3, 96 -> 111 sgemm). */
    {"spr",
     "GenuineIntel",
     6,
     0x8F,
     0x8F,
     {"avx512-14x32", "avx512-14x16"},
     {{216, 56, 4096}, {176, 56, 4096}},
     4},
    {"spr",
     "GenuineIntel",
     6,
     0xCF,
     0xCF,
     {"avx512-14x32", "avx512-14x16"},
     {{216, 56, 4096}, {176, 56, 4096}},
     4},
    {"spr",
     "GenuineIntel",
     6,
     0xAD,
     0xAE,
     {"avx512-14x32", "avx512-14x16"},
     {{216, 56, 4096}, {176, 56, 4096}},
     4},
    /* Intel Ice Lake server/client (0x6A, 0x6C, 0x7D, 0x7E): 48 KiB L1d; SPR's short MC. */
    {"icl",
     "GenuineIntel",
     6,
     0x6A,
     0x6C,
     {"avx512-14x32", "avx512-14x16"},
     {{0, 56, 0}, {0, 56, 0}},
     4},
    {"icl",
     "GenuineIntel",
     6,
     0x7D,
     0x7E,
     {"avx512-14x32", "avx512-14x16"},
     {{0, 56, 0}, {0, 56, 0}},
     4},
    /* Intel Skylake-X / Cascade Lake / Cooper Lake (0x55): 32 KiB L1d, 1 MiB L2. */
    {"skx",
     "GenuineIntel",
     6,
     0x55,
     0x55,
     {"avx512-14x32", "avx512-14x16"},
     {{0, 56, 0}, {0, 56, 0}},
     4},
};
enum { TSR__GEMM_NUARCHS = sizeof tsr__gemm_uarchs / sizeof tsr__gemm_uarchs[0] };

/* ---------------------------------------------------------------- the model ----------- */

static int64_t tsr__round_down(int64_t x, int64_t m) {
  return x / m * m;
}

/*
 * Low et al. 2016 (S = element size):
 *  - KC: one B micro-panel (KC x NR) stays in L1 while the A micro-panels (MR x KC) stream
 *    through it from L2. With W1 ways of N1*L bytes, A gets C_A = floor((W1 - 1) / (1 +
 *    NR/MR)) ways and KC = C_A * N1 * L / (MR * S).
 *  - MC: the packed A block (MC x KC) lives in L2 next to one B micro-panel:
 *    MC = (W2 - 1 - ceil(KC*NR*S / (N2*L))) * N2 * L / (KC * S).
 *  - NC: the packed B panel (KC x NC) lives in L3 beside the A blocks:
 *    NC = (W3 - 1 - ceil(MC*KC*S / (N3*L))) * N3 * L / (KC * S), capped at 4096 because the
 *    L3 is shared with other processes and a larger panel only saves re-packing of A.
 */
static void tsr__gemm_model(const tsr__gemm_kernel *k, int64_t blk[3]) {
  const tsr__cpu_facts *f = tsr__cpu_facts_get();
  const tsr__cpu_cache *l1 = &f->cache[0], *l2 = &f->cache[1], *l3 = &f->cache[2];
  const int64_t s = k->dtype == TSR_F32 ? 4 : 8, mr = k->mr, nr = k->nr;
  const int64_t way1 = l1->size / l1->ways;
  int64_t ca = (l1->ways - 1) * mr / (mr + nr);
  if (ca < 1) ca = 1;
  int64_t kc = tsr__round_down(ca * way1 / (mr * s), 8);
  if (kc < 64) kc = 64;
  if (kc > 1024) kc = 1024;
  const int64_t way2 = l2->size / l2->ways;
  const int64_t cb2 = (kc * nr * s + way2 - 1) / way2;
  int64_t ca2 = l2->ways - 1 - cb2;
  if (ca2 < 1) ca2 = 1;
  int64_t mc = tsr__round_down(ca2 * way2 / (kc * s), mr);
  if (mc < mr) mc = mr;
  const int64_t way3 = l3->size / l3->ways;
  const int64_t ca3 = (mc * kc * s + way3 - 1) / way3;
  int64_t cb3 = l3->ways - 1 - ca3;
  if (cb3 < 1) cb3 = 1;
  int64_t nc = cb3 * way3 / (kc * s);
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

/* The registry's (or the model's) configuration per dtype, and the environment's requests;
   fixed at the first call (tsr__gemm_registry_reload re-reads them). */
static tsr__gemm_config tsr__gemm_defaults[2];
static const tsr__gemm_uarch *tsr__gemm_uarch_sel;
static char tsr__gemm_isa_want[16];     /* TSR_CPU_KERNEL ("" = auto) */
static int64_t tsr__gemm_env_blocks[3]; /* TSR_CPU_GEMM_BLOCKS (0 = keep) */
static bool tsr__gemm_env_met = true;
static pthread_once_t tsr__gemm_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tsr__gemm_lock = PTHREAD_MUTEX_INITIALIZER;
/* Overrides (tessera-tune, benchmarks): per dtype; ker NULL = none. */
static tsr__gemm_config tsr__gemm_override[2];
static atomic_bool tsr__gemm_have_override[2];

static int tsr__dt_index(tsr_dtype dtype) {
  return dtype == TSR_F32 ? 0 : 1;
}

static const tsr__gemm_uarch *tsr__gemm_uarch_match(void) {
  const tsr__cpu_facts *f = tsr__cpu_facts_get();
  for (int i = 0; i < TSR__GEMM_NUARCHS; ++i) {
    const tsr__gemm_uarch *u = &tsr__gemm_uarchs[i];
    if (strcmp(u->vendor, f->vendor) != 0 || u->family != f->family || f->model < u->model_lo ||
        f->model > u->model_hi)
      continue;
    bool ok = true;
    for (int d = 0; d < 2; ++d) {
      const tsr__gemm_kernel *k = tsr__gemm_kernel_find(u->kernel[d], d == 0 ? TSR_F32 : TSR_F64);
      if (!k || !tsr__gemm_isa_available(k->isa)) ok = false;
    }
    if (ok) return u;
  }
  return NULL;
}

static void tsr__gemm_registry_load(void) {
  const char *want = getenv("TSR_CPU_KERNEL");
  if (!want || strcmp(want, "auto") == 0) want = "";
  snprintf(tsr__gemm_isa_want, sizeof tsr__gemm_isa_want, "%s", want);
  long long b[3] = {0, 0, 0};
  const char *env = getenv("TSR_CPU_GEMM_BLOCKS");
  if (!env || sscanf(env, "%lld,%lld,%lld", &b[0], &b[1], &b[2]) != 3) b[0] = b[1] = b[2] = 0;
  for (int i = 0; i < 3; ++i)
    tsr__gemm_env_blocks[i] = b[i] > 0 ? (int64_t)b[i] : 0;
  tsr__gemm_uarch_sel = tsr__gemm_uarch_match();
  tsr__gemm_env_met = true;
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dtype = d == 0 ? TSR_F32 : TSR_F64;
    tsr__gemm_config *c = &tsr__gemm_defaults[d];
    const tsr__gemm_kernel *k = NULL;
    const char *source = "model";
    int64_t blk[3] = {0, 0, 0};
    const tsr__gemm_uarch *u = tsr__gemm_uarch_sel;
    if (u) k = tsr__gemm_kernel_find(u->kernel[d], dtype);
    if (want[0] && k && strcmp(k->isa, want) != 0) k = NULL; /* another ISA was asked for */
    if (k) {
      source = "registry";
      memcpy(blk, u->blocks[d], sizeof blk);
    } else {
      if (want[0]) k = tsr__gemm_kernel_of_isa(want, dtype);
      if (want[0] && !k) tsr__gemm_env_met = false;
      for (const char *const *isa = (const char *const[]){"avx512", "avx2", "portable", NULL};
           !k && *isa; ++isa)
        k = tsr__gemm_kernel_of_isa(*isa, dtype);
    }
    int64_t model[3];
    tsr__gemm_model(k, model);
    for (int i = 0; i < 3; ++i)
      if (blk[i] <= 0) blk[i] = model[i];
    int grain = u && source[0] == 'r' ? u->grain : 4;
    tsr__gemm_blocks_fix(k, &blk[0], &blk[1], &blk[2], &grain);
    *c = (tsr__gemm_config){
        .ker = k, .kc = blk[0], .mc = blk[1], .nc = blk[2], .grain = grain, .source = source};
  }
}

static void tsr__gemm_once_fn(void) {
  tsr__gemm_registry_load();
}

bool tsr__gemm_registry_reload(void) {
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  pthread_mutex_lock(&tsr__gemm_lock);
  tsr__gemm_registry_load();
  const bool met = tsr__gemm_env_met;
  pthread_mutex_unlock(&tsr__gemm_lock);
  tsr__gemm_wisdom_reload();
  return met;
}

const char *tsr__gemm_uarch_name(void) {
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  return tsr__gemm_uarch_sel ? tsr__gemm_uarch_sel->name : "unknown";
}

void tsr__gemm_config_default(tsr_dtype dtype, tsr__gemm_config *out) {
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  *out = tsr__gemm_defaults[tsr__dt_index(dtype)];
}

void tsr__gemm_config_override(tsr_dtype dtype, const tsr__gemm_config *cfg) {
  const int d = tsr__dt_index(dtype);
  atomic_store(&tsr__gemm_have_override[d], false);
  if (!cfg || !cfg->ker || cfg->ker->dtype != dtype) return;
  tsr__gemm_config c = *cfg;
  tsr__gemm_blocks_fix(c.ker, &c.kc, &c.mc, &c.nc, &c.grain);
  c.source = "override";
  tsr__gemm_override[d] = c;
  atomic_store(&tsr__gemm_have_override[d], true);
}

void tsr__gemm_config_get(tsr_dtype dtype, int nt, tsr__gemm_config *out) {
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  const int d = tsr__dt_index(dtype);
  if (atomic_load(&tsr__gemm_have_override[d])) {
    *out = tsr__gemm_override[d];
    return;
  }
  *out = tsr__gemm_defaults[d];
  tsr__gemm_config w;
  if (tsr__gemm_wisdom_lookup(dtype, nt, &w) &&
      (!tsr__gemm_isa_want[0] || strcmp(w.ker->isa, tsr__gemm_isa_want) == 0)) {
    tsr__gemm_blocks_fix(w.ker, &w.kc, &w.mc, &w.nc, &w.grain);
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
  if (dtype != TSR_F32 && dtype != TSR_F64) return "none";
  pthread_once(&tsr__gemm_once, tsr__gemm_once_fn);
  return tsr__gemm_defaults[tsr__dt_index(dtype)].ker->isa;
}

int tsr__gemm_max_tile(void) {
  int m = 0;
  for (int i = 0; i < TSR__GEMM_NKERNELS; ++i)
    if (tsr__gemm_kernels[i].mr * tsr__gemm_kernels[i].nr > m)
      m = tsr__gemm_kernels[i].mr * tsr__gemm_kernels[i].nr;
  return m;
}
