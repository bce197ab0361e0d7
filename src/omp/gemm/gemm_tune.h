/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU GEMM's tuning interface: what benchmarks (bench/bench_gemm.c), tessera-tune
 * (src/cli/tessera_tune.c) and the GEMM tests use to see and steer the kernel registry and the
 * wisdom file. Internal (tsr__ names, not exported from the shared library): programs that
 * include it link the static library, tessera_static.
 *
 * Including this header is enough: it brings tsr__gemm_args and tsr__omp_gemm (the CPU
 * backend's GEMM entry, core/internal.h and omp/gemm/gemm.h) and the host CPU's facts
 * (tsr__cpu_facts_get, omp/omp_internal.h) with it; tessera-tune includes nothing else
 * internal. A caller's settings travel with its calls (tsr__gemm_tuning below), never as
 * process-wide switches.
 */
#ifndef TSR_OMP_GEMM_TUNE_H
#define TSR_OMP_GEMM_TUNE_H

#include <stdatomic.h>

#include "omp/gemm/gemm.h"
#include "omp/omp_internal.h" /* tsr__cpu_cache */

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- tuning -------------- */

/*
 * A call's tuning (BLIS's runtime object, rntm_t): what a test, a benchmark or tessera-tune
 * changes for its own calls, passed in with each call (tsr__gemm_args.tuning) instead of
 * process-wide switches, so that concurrent callers and the library's own calls (the core,
 * the drop-ins) never see another caller's settings. NULL, or TSR__GEMM_TUNING_DEFAULT: the
 * library's own choices.
 */
typedef struct tsr__gemm_tuning {
  /* Per dtype (0 f32, 1 f64): run with this configuration (its kernel must be of that dtype;
     blocks are clamped by tsr__gemm_blocks_fix, source "override") instead of the registry's,
     the wisdom's or TSR_CPU_GEMM_BLOCKS'. NULL: the library's. */
  const tsr__gemm_config *config[2];
  /* The configuration without the wisdom file (benchmarks: with and without; tessera-tune
     while it measures). */
  bool no_wisdom;
  /* Always omp_get_max_threads() threads above the fixed size threshold, not the adaptive
     count (gemm_thread.c: a call runs multi-threaded only when the measured overhead of recent
     parallel calls is small against the time it saves): tests and tessera-tune, to run the
     thread count asked for. */
  bool fixed_threads;
  /* The caller first waits (at most 2 s) until every pool thread it asked for has joined, so
     that tests run the multi-threaded orderings whatever the machine's scheduling (else the
     caller starts at once and pool threads join while work remains). */
  bool full_team;
  /* C of more than this many bytes that is written once (beta == 0, k within one KC slice,
     rows 64-byte aligned) is stored with the kernel's streaming (non-temporal) micro-kernel;
     < 0: the last-level cache's size. Tests set 0 to run the streaming path on small C. */
  int64_t stream_min_bytes;
  /* Calls with m*n*k <= sup_mnk go through the kernel's sup path (small, unpacked: BLIS's
     term; gemm.h), where the kernel has one; < 0: the driver's own rule; 0: never (the packed
     path on small shapes too); a huge value: always. */
  int64_t sup_mnk;
  /* >= 1: the sup path's k block (tests run several blocks on small matrices); <= 0: the
     rule of tsr__gemm_sup_kblock. */
  int64_t sup_kblock;
} tsr__gemm_tuning;

/* The library's own choices, as an initializer: tsr__gemm_tuning t = TSR__GEMM_TUNING_DEFAULT; */
#define TSR__GEMM_TUNING_DEFAULT                                                                   \
  { .stream_min_bytes = -1, .sup_mnk = -1, .sup_kblock = 0 }

/* g's tuning, or the library's defaults when it has none. */
static inline const tsr__gemm_tuning *tsr__gemm_tuning_of(const tsr__gemm_args *g) {
  static const tsr__gemm_tuning dflt = TSR__GEMM_TUNING_DEFAULT;
  return g->tuning ? g->tuning : &dflt;
}

/* ---------------------------------------------------------------- kernels (gemm_kernels.c) */

/* The table has one row per folder of kernels/ (kernels/<isa>/gemm_isa_<isa>.c); an ISA is
   named by its folder ("portable", "avx2", "avx512"). */

/* Whether the CPU and this build support an ISA name. */
bool tsr__gemm_isa_available(const char *isa);

/* The i-th ISA of the table (0, 1, ...) in the rule's preference, the widest first (its row's
   rank): "avx512", "avx2", "portable"; NULL past the last. */
const char *tsr__gemm_isa_name(int i);

/* The bit of an ISA in tsr__gemm_cpu.isas; 0 for a name the table lacks. */
unsigned tsr__gemm_isa_bit(const char *isa);

/* The registered kernel called `name` ("avx512-14x16") for dtype, or NULL. */
const tsr__gemm_kernel *tsr__gemm_kernel_find(const char *name, tsr_dtype dtype);

/* The first (best) registered kernel of an ISA for dtype, whether or not this CPU runs it;
   NULL when the build has none. */
const tsr__gemm_kernel *tsr__gemm_kernel_first(const char *isa, tsr_dtype dtype);

/* The kernels for dtype that this CPU can run, best first; writes at most max, returns the
   count (at least 1: the portable kernel). */
int tsr__gemm_kernel_list(tsr_dtype dtype, const tsr__gemm_kernel **out, int max);

/* ---------------------------------------------------------------- registry ------------ */

/* The registry's name for this CPU's microarchitecture ("zen5", "spr", ...; "unknown"). */
const char *tsr__gemm_uarch_name(void);

/* The configuration without wisdom or overrides: the registry's (or the rule's) kernel and
   blocks for dtype on nt threads (rows may differ for nt = 1 and nt > 1), after
   TSR_CPU_KERNEL. */
void tsr__gemm_config_default(tsr_dtype dtype, int nt, tsr__gemm_config *out);

/* What the selection reads of a CPU (gemm_registry.c): the host's come from cpuinfo.c and
   tsr__gemm_isa_available; tests describe CPUs they do not have. */
typedef struct tsr__gemm_cpu {
  char vendor[13];         /* CPUID vendor ("AuthenticAMD", "GenuineIntel", "unknown") */
  int family, model;       /* CPUID displayed family and model */
  unsigned isas;           /* the ISAs this CPU and build run: tsr__gemm_isa_bit of each */
  tsr__cpu_cache cache[3]; /* L1 data, L2, L3 as the CPU reports them (per core for L1/L2) */
} tsr__gemm_cpu;

/* The registry's choice for one CPU: its row's name ("zen4"; "unknown" without a measured
   row) and the configuration per dtype (0 f32, 1 f64) for one thread [0] and several [1];
   source "registry" (the row) or "rule" (the rule below). */
typedef struct tsr__gemm_choice {
  const char *uarch;
  tsr__gemm_config cfg[2][2];
  /* Per dtype, the packed path's configuration for shallow products whose C rows share an L1
     set (tsr__gemm_config_shallow): the widest-ISA kernel cpu runs with MR at most the L1's
     ways, where the chosen kernel's MR exceeds them; ker NULL where there is none, or none is
     needed, or an ISA was asked for (TSR_CPU_KERNEL). Source "shallow". */
  tsr__gemm_config shallow[2];
} tsr__gemm_choice;

/*
 * The default configuration of cpu (no wisdom, overrides or TSR_CPU_GEMM_BLOCKS): the
 * measured registry row matching its vendor, family and model whose kernels it runs; else,
 * or for a dtype whose row kernel is not of the ISA `want` asks for ("portable", "avx2",
 * "avx512"; NULL, "" or "auto": none), the kernel of `want` if cpu runs it, else the widest
 * ISA's kernel cpu runs (tsr__gemm_isa_name's order: avx512, avx2, portable; the portable
 * kernel whatever cpu->isas says), for both dtypes, with the blocks of
 * tsr__gemm_rule_blocks on cpu->cache. Returns false when `want` named an ISA cpu does not
 * run (the widest one is chosen instead).
 */
bool tsr__gemm_choose(const tsr__gemm_cpu *cpu, const char *want, tsr__gemm_choice *out);

/* The rule's cache blocks for kernel k on caches L1, L2, L3 (bytes): kc = L1 / (NR * S) in
   [128, 512], a multiple of 8; mc = L2 / (2 * kc * S), a multiple of MR, >= MR; nc =
   L3 / (8 * kc * S), a multiple of NR in [NR, 4096] (S = element size). See gemm_registry.c for
   the measurements behind it. */
void tsr__gemm_rule_blocks(const tsr__gemm_kernel *k, const tsr__cpu_cache cache[3],
                           int64_t blk[3]);

/* Clamps blocks and grain to the registry's bounds (KC in [8, 4096], a multiple of 4; MC and NC
   in [MR, 65536] and [NR, 65536], multiples of k's MR and NR; grain in [1, 16], else 4): what
   a call's own configuration (tsr__gemm_tuning.config) gets, so tessera-tune records the
   configuration that runs. */
void tsr__gemm_blocks_fix(const tsr__gemm_kernel *k, int64_t *kc, int64_t *mc, int64_t *nc,
                          int *grain);

/* Re-reads TSR_CPU_KERNEL, TSR_CPU_GEMM_BLOCKS and the wisdom file (tests). Not safe while
   GEMMs run on other threads. Returns false when TSR_CPU_KERNEL asked for an ISA that is not
   available (the best available one is used). */
bool tsr__gemm_registry_reload(void);

/* Largest MR*NR of the registered kernels (must not exceed TSR__GEMM_MAX_TILE). */
int tsr__gemm_max_tile(void);

/* Whether a call g (trusted arguments, alpha != 0, k > 0) run with cfg stores the full tiles
   of C with cfg->ker's streaming micro-kernel: the kernel has one, beta == 0 and k <= KC (C is
   written once), C and its rows are 64-byte aligned, and C's m*n elements take more bytes than
   g's tuning's stream_min_bytes. The driver's own decision (gemm_driver.c), exposed for tests. */
bool tsr__gemm_stream_c(const tsr__gemm_args *g, const tsr__gemm_config *cfg);
/* Whether a call g (trusted arguments, alpha != 0, k > 0) run with cfg takes the
   sup path (on as many threads as the packed path would use): g's tuning's
   sup_mnk, else the driver's rule (op(A) and C fit in L2, or C has one NR-column strip;
   gemm_driver.c). The driver's own decision, exposed for tests. */
bool tsr__gemm_sup_path(const tsr__gemm_args *g, const tsr__gemm_config *cfg);
/* The sup path's k block for g (gemm.h), for a register block of mr rows: k when op(B) fits
   in L2, else TSR__GEMM_SUP_KB. Read NR columns at a time, row after row, an op(B) from
   memory touches a new page with each row and defeats the hardware prefetchers; in k blocks,
   with the lines TSR__SUP_PF_STRIPS strips ahead prefetched (gemm_sup_impl.h), each row is read
   front to back. Measured on Zen 5, one thread, bench_gemm against the sup path in one block
   (GFLOP/s): sgemm 1 x 4096 x 4096 3.1 -> 6.4-11.6, 14 x 4000 x 4000 33 -> 176-215,
   64 x 4000 x 4000 76-84 -> 218-235 (OpenBLAS 5-6, 64-70, 164-174). A block of 64 rows beat
   16, 32 and 256 from m = 8 up. The exception, in one block: several row blocks (m > mr) over B's
   rows a multiple of 4 KiB apart, where a block's rows share one L1 set (sgemm 64 x 4096 x 4096:
   139 in blocks, 154-166 in one). */
#define TSR__GEMM_SUP_KB 64
/* The k block of the sup path's dot products (A * B^T), in bytes of a row. */
#define TSR__GEMM_DOT_KB 4096
int64_t tsr__gemm_sup_kblock(const tsr__gemm_args *g, int mr);
/* tsr__gemm_sup_kblock's answer when op(B) fits in L2 and no tuning object forces a block
   (every call of the tiny lane, gemm_driver.c): k, or TSR__GEMM_DOT_KB bytes of a row for dot
   products. Inline: the tiny lane's calls take ~100 ns. */
static inline int64_t tsr__gemm_sup_kblock_fit(const tsr__gemm_args *g) {
  if (tsr__gemm_sup_dot(g))
    return tsr__min64(TSR__GEMM_DOT_KB / (g->dtype == TSR_F64 ? 8 : 4), g->k);
  return g->k;
}
/* The pool itself, tsr__gemm_pool_run, is declared in gemm.h (tests call it directly). */

/* ---------------------------------------------------------------- wisdom -------------- */

/*
 * Wisdom (FFTW's word): the configurations tessera-tune measured best on one machine, kept in
 * a text file so that later processes start with them. Format (version 1), one item a line,
 * '#' starts a comment line:
 *
 *   tessera-wisdom 1
 *   cpu <the /proc/cpuinfo model name, to the end of the line>
 *   entry <f32|f64> <threads> <kernel name> <kc> <mc> <nc> <grain>
 *   ...
 *
 * The file applies only on a CPU with the same model name; an entry applies to calls that run
 * on exactly that many threads. A file that cannot be read, does not parse, has another
 * version, another CPU's name, an unknown kernel or one this CPU cannot run, or blocks out of
 * range is ignored as a whole (the registry's defaults apply) and the reason is kept for
 * tessera-tune --show; it never stops a GEMM.
 */
#define TSR__GEMM_WISDOM_VERSION 1
#define TSR__GEMM_WISDOM_MAX 32

typedef struct tsr__gemm_wisdom_entry {
  tsr_dtype dtype;
  int threads;
  char kernel[32];
  int64_t kc, mc, nc;
  int grain;
} tsr__gemm_wisdom_entry;

typedef struct tsr__gemm_wisdom {
  char cpu[128];
  int n;
  tsr__gemm_wisdom_entry e[TSR__GEMM_WISDOM_MAX];
} tsr__gemm_wisdom;

/*
 * The wisdom file's path: $TSR_WISDOM if set and non-empty, else
 * $XDG_CACHE_HOME/tessera/wisdom, else $HOME/.cache/tessera/wisdom.
 * Returns TSR_OK; TSR_ERR_INVALID_ARGUMENT when none of these variables is set or the path
 * does not fit in size bytes.
 */
tsr_status tsr__gemm_wisdom_path(char *path, size_t size);

/*
 * Reads and validates a wisdom file for this CPU (see the format above). Messages name the
 * API context (tessera-tune sets its own name). Returns TSR_OK; TSR_ERR_IO (cannot open/read);
 * TSR_ERR_FORMAT (does not parse, wrong version, unknown or unavailable kernel, blocks out
 * of range); TSR_ERR_INCONSISTENT (written on another CPU model).
 */
tsr_status tsr__gemm_wisdom_read(const char *path, tsr__gemm_wisdom *w);

/*
 * Writes w to path (creating the parent directory, one level) through the library's checked
 * write path (tsr__save_file, core/fileio.c): path must be a regular file or a new name (a
 * symbolic link, FIFO, device, socket or directory is refused, never replaced), the text goes
 * to a temporary file beside it, every write checked, synced and renamed over path, so a
 * reader never sees a partial file. Returns TSR_OK; TSR_ERR_IO (a destination that is not a
 * regular file, cannot create, write, sync or rename; the temporary file is removed);
 * TSR_ERR_INVALID_ARGUMENT (an entry that would not read back).
 */
tsr_status tsr__gemm_wisdom_write(const char *path, const tsr__gemm_wisdom *w);

/* Seconds a writer waits for the lock of a wisdom file (PATH.lock) held by another. */
#define TSR__GEMM_WISDOM_LOCK_WAIT 30.0

/*
 * Checks, before any measuring, that path can be written as a wisdom file: creates its parent
 * directory (one level), applies tsr__check_output (a regular file or a new name in a
 * writable directory) and takes and drops its lock (PATH.lock can be created). Returns TSR_OK,
 * TSR_ERR_IO or TSR_ERR_INVALID_ARGUMENT with the reason.
 */
tsr_status tsr__gemm_wisdom_check_path(const char *path);

/*
 * Merges fresh entries into the wisdom file at path: under an exclusive lock on PATH.lock
 * (tsr__lock_beside, waiting at most TSR__GEMM_WISDOM_LOCK_WAIT s), reads the file as it is
 * now, keeps its entries for (dtype, threads) pairs that fresh does not have, adds fresh's
 * (fresh->cpu names the CPU) and writes the result with tsr__gemm_wisdom_write; a missing,
 * invalid or foreign file is replaced. Concurrent tuners therefore keep each other's entries.
 * *total (may be NULL) receives the number of entries written. Returns TSR_OK; TSR_ERR_IO
 * (lock or write failed); TSR_ERR_INVALID_ARGUMENT (more than TSR__GEMM_WISDOM_MAX entries,
 * an invalid entry); TSR_ERR_OUT_OF_MEMORY.
 */
tsr_status tsr__gemm_wisdom_update(const char *path, const tsr__gemm_wisdom *fresh, int *total);

/*
 * The library's use of wisdom: loaded on the first GEMM (tsr__gemm_wisdom_lookup) from
 * tsr__gemm_wisdom_path(). lookup returns true and the configuration when the loaded wisdom
 * has an entry for (dtype, nt). status writes what happened ("used: PATH (N entries)",
 * "ignored: REASON", "none: no file at PATH"; a call's tuning can skip it: no_wisdom).
 * The one exception to "the library never prints": when the user named the file with
 * TSR_WISDOM and it is ignored (missing, not a regular file, unreadable, malformed, another
 * CPU's), the load writes one line to stderr, once per process, with the reason
 * ("tessera: warning: TSR_WISDOM=PATH is ignored (REASON); ..."). The default path (under
 * XDG_CACHE_HOME or HOME) is never reported. TSR_WISDOM_WARN=0 silences the line, as does
 * tsr__gemm_wisdom_set_warn(false) (tessera-tune --show, which prints the reason itself).
 */
void tsr__gemm_wisdom_set_warn(bool on);
bool tsr__gemm_wisdom_lookup(tsr_dtype dtype, int nt, tsr__gemm_config *out);
void tsr__gemm_wisdom_status(char *buf, size_t size);
/* Re-reads the wisdom file (after tessera-tune wrote it, or TSR_WISDOM changed). */
void tsr__gemm_wisdom_reload(void);
/* A number that changes with every (re)load of the wisdom file: what was derived from it
   (tsr__gemm_serial_get's cached configuration) is stale when it moved. The function reads the
   file first if no call has; the variable is the number as it stands (0: never read). */
unsigned tsr__gemm_wisdom_generation(void); /* the variable: tsr__gemm_wisdom_gen (gemm.h) */

#ifdef __cplusplus
}
#endif
#endif /* TSR_OMP_GEMM_TUNE_H */
