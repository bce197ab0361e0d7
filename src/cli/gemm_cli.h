/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tessera-gemm internals: the options, the job's state, and the steps that run() chains
 * (tessera_gemm.c). Files: gemm_options.c (table-driven parser, usage), gemm_guard.c (paths,
 * temporary-file cleanup on signals, memory check), gemm_report.c (text and JSON reports).
 */
#ifndef TESSERA_GEMM_CLI_H
#define TESSERA_GEMM_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "tessera.h"
#include "tessera/dist.h"

/* Exit codes (documented in usage() and README.md). */
enum {
  EXIT_OK = 0,
  EXIT_RUNTIME = 1,   /* unreadable input, unwritable output, disk full, out of memory, ... */
  EXIT_USAGE = 2,     /* bad option, grid, command lines that differ between ranks */
  EXIT_VERIFY = 3,    /* the product is wrong: nothing written */
  EXIT_UNVERIFIED = 4 /* written, but not (fully) verified: NaN/Inf in the inputs, or rows of
                         the product that may overflow the dtype */
};

/* Default problem when no input is given: documented in usage(). */
#define DEFAULT_SIZE 2048
#define DEFAULT_BLOCK 256
#define DEFAULT_SEED 42
/* The gathered serial float64 comparison runs when m * n * k is at most this. */
#define SERIAL_CHECK_LIMIT (INT64_C(1) << 27)

typedef struct options {
  const char *a_path, *b_path, *c_path, *out_path, *json_path;
  int64_t m, n, k;
  int have_m, have_n, have_k;
  int64_t seed;
  const char *dtype; /* --dtype: "f64" (default), "f32", "c64" or "c128" (tsr_dtype_parse) */
  int dtype_given;
  int transa, transb; /* tsr_trans: 0 n, 1 t (the flag alone), 2 c (conjugate transpose) */
  int p, q;
  int64_t block;
  const char *device;
  int64_t repeat, warmup;
  int verify;
  int progress;
  int help;
  double alpha, alpha_im; /* --alpha RE[,IM] (the parser writes both, in this order) */
  double beta, beta_im;   /* --beta RE[,IM] */
  int64_t max_memory; /* --max-memory / --memory-per-rank; 0: MemAvailable / ranks on the node */
  int algorithm;      /* tsr_dist_algorithm: 0 summa, 1 2.5d, 2 auto (the table's order) */
  int64_t replicas;   /* --replicas c for 2.5d; 0: the library chooses */
  int replicas_given;
  int bcast; /* tsr_dist_bcast: 0 auto, 1 mpi, 2 ring, 3 tree (the table's order) */
} options;

extern int g_rank, g_size;

/* beta != 0 (either part): C0 is read. */
static inline int has_beta(const options *o) {
  return o->beta != 0.0 || o->beta_im != 0.0;
}

/* Whether the job's dtype is complex (c64, c128). */
static inline int dtype_complex(tsr_dtype dt) {
  return dt == TSR_C64 || dt == TSR_C128;
}

/* Bytes of one element (the dtype rows, tsr_dtype_size); 8 for an invalid dtype. */
static inline size_t elem_size(tsr_dtype dt) {
  size_t es = 8;
  return tsr_dtype_size(dt, &es) == TSR_OK ? es : 8;
}

/* "N", "T" or "C" for a --transa/--transb value. */
static inline const char *trans_name(int t) {
  return t == 2 ? "C" : t ? "T" : "N";
}

/* Prints from rank 0 only. */
void say(FILE *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void usage(FILE *f);

/* Parses argv into o; on a usage error writes the message and returns 0. */
int parse_options(int argc, char **argv, options *o, char *msg, size_t cap);

/* Every rank passes its exit code (0 when fine) and message; all return the code of the lowest
   rank that failed, and rank 0 prints that rank's message (" (rank r)" appended when some
   ranks succeeded): tsr_dist_agree, the library's rule. Collective. */
int agree(int code, const char *msg);

/* The message of the job's failure (or of its exit-4 warning), for the JSON report: the text
   agree() and lib_fail() printed, or note_message() recorded; "" while the run is fine. */
void note_message(const char *msg);
const char *job_message(void);

/* The output and JSON paths, checked on every rank (and agreed) before any work (the inputs
   are checked when tsr_dmatrix_npy_open opens them, once per rank). */
int check_paths(const options *o, char *msg, size_t cap);

/* Arms removal of the temporary file of `out_path` (written with rank 0's pid `pid0`) on
   SIGINT, SIGTERM and SIGHUP; the signal is then re-raised with its default action. */
void guard_temp_file(const char *out_path, long pid0);

/* Bytes available to this rank: MemAvailable of /proc/meminfo over the ranks on the node
   (0 when unknown). */
int64_t memory_available(int ranks_on_node);

/* Measured and estimated figures of a run, for the reports. */
typedef struct results {
  double t_read, t_compute, t_comm, t_local, t_write, gflops;
  tsr_dist_verify_result check;
  double serial_err, serial_tol;
  int64_t serial_skipped;
  int serial_done, verified, passed, written;
  uint64_t bytes_sent, bytes_received, bytes_redistributed;
  int algorithm, replicas;                    /* the schedule that ran (tsr_dist_stats) */
  uint64_t bcast_mpi, bcast_ring, bcast_tree; /* panel broadcasts by algorithm, max over ranks */
  /* Device work of the last timed run, maximum over the ranks (tsr_dist_stats). */
  uint64_t h2d_bytes, h2d_copies, d2h_bytes, d2h_copies, host_syncs, host_syncs_in_loop, copy_waits,
      gemm_calls, gemm_vendor_calls, progress_calls;
  int64_t panels, panel_width;
  int staging, gpu;    /* staging: any rank staged GPU panels through the host; gpu: on a GPU */
  double t_gpu;        /* GPU seconds of the panel loop (events), median over runs, max rank */
  int64_t *peak_rss;   /* per rank, bytes (rank 0) */
  int64_t *mem_needed; /* per rank, bytes (rank 0) */
} results;

/* One rank's host and device, gathered on rank 0 for the reports (plain chars and integers:
   gathered as bytes). */
typedef struct rank_desc {
  char host[MPI_MAX_PROCESSOR_NAME + 1]; /* MPI_Get_processor_name */
  char device[32];                       /* "cpu", "cuda:0", "hip:1" */
  char name[128];                        /* tsr_device_props.name (GPU, or the CPU model) */
  char arch[32];                         /* tsr_device_props.arch */
  int64_t memory;                        /* tsr_device_props.total_memory, bytes */
  int local_rank, local_size, threads;
} rank_desc;

typedef struct job_info {
  tsr_dtype dtype;
  int64_t m, n, k;
  int nprow, npcol;
  const rank_desc *ranks; /* g_size entries (rank 0), or NULL */
  long long started;      /* time(NULL) on rank 0 when the job began */
  const char *advice;     /* g_size binding advices of advice_len chars ("" when none), or NULL */
  int advice_len;
} job_info;

/* The --algorithm spelling of a tsr_dist_algorithm: "summa", "2.5d" or "auto". */
const char *algorithm_name(int a);
void print_results(const options *o, tsr_dtype dtype, const results *r);
/* Writes the JSON report on rank 0 (atomically); returns 0 or EXIT_RUNTIME (agreed). */
int write_json(const options *o, const job_info *ji, const results *r, int code);

#endif /* TESSERA_GEMM_CLI_H */
