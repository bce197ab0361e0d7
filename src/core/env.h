/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one environment reader: every TSR_* variable the library, the drop-ins and the tools
 * read (and OMP_WAIT_POLICY, which the GEMM pool interprets itself) is a row of one table
 * (src/core/env.c) with its type, default, purpose and what a bad value gets, and is read
 * only through the functions below. The README's table of environment variables is checked
 * against this table by tests/test_env.c (same names, same defaults).
 *
 * A bad value is never ignored silently. A row marked `error` makes the reader fail
 * (TSR_ERR_INVALID_ARGUMENT, the message names the public function called, the variable and
 * the value, and what is accepted); every other row keeps its default and writes one line to
 * stderr, once per variable and process:
 *   tessera: warning: TSR_X="VALUE" is not ACCEPTED; the default D is used
 * Values are read on each call (tests and tools change them); callers that read once say so.
 * tsr__env_choice answers a repeated read of an unchanged variable from a per-thread memory of
 * where its entry sits in environ (src/core/env.c, tsr__env_memo): the same answer as a new
 * read whatever setenv, putenv (a changed putenv'd buffer included) or unsetenv did in between
 * (clearenv too, but for the one case env.c names), for ~30 instructions instead of a scan of
 * the environment (TSR_GEMM is read by every tsr_gemm call).
 *
 * Part of the drop-ins' internal interface (src/core/dropin.h): libtessera_blas and
 * libtessera_scalapack read their variables through libtessera's reader.
 */
#ifndef TSR_CORE_ENV_H
#define TSR_CORE_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The variables, in the README's order. */
typedef enum tsr__env_id {
  TSR__ENV_DEVICE,
  TSR__ENV_GEMM,
  TSR__ENV_GPU_SYNC_DEBUG,
  TSR__ENV_ERROR_TRACE,
  TSR__ENV_GPU_CACHE_LIMIT,
  TSR__ENV_GPU_ALLOC_CACHE,
  TSR__ENV_SUMMA_CHUNK_FLOPS,
  TSR__ENV_DIST_GPU_STAGING,
  TSR__ENV_SUMMA_LOOKAHEAD,
  TSR__ENV_BCAST_ALPHA_BETA,
  TSR__ENV_BCAST_SEND_WINDOW,
  TSR__ENV_BCAST_MPI_BELOW,
  TSR__ENV_BCAST_OVERSUBSCRIBED, /* alias: TSR_BCAST_SHARED_CORES */
  TSR__ENV_CPU_KERNEL,
  TSR__ENV_CPU_GEMM_BLOCKS,
  TSR__ENV_WISDOM,
  TSR__ENV_WISDOM_WARN,
  TSR__ENV_BLAS_GPU_MIN_FLOPS,
  TSR__ENV_BLAS_VERBOSE,
  TSR__ENV_SCALAPACK_PATH,
  TSR__ENV_SCALAPACK_REPORT,
  TSR__ENV_SMPI_GPU,
  TSR__ENV_SMPI_GPU_F32,
  TSR__ENV_SMPI_GPU_F64,
  TSR__ENV_SMPI_GPU_HALF,
  TSR__ENV_SMPI_GPU_LAUNCH,
  TSR__ENV_SMPI_GPU_STAGING,
  TSR__ENV_SMPI_PCIE_BW,
  TSR__ENV_SMPI_MEMORY_BW,
  TSR__ENV_SMPI_HBM_BW,
  TSR__ENV_SMPI_GPU_POLL,
  TSR__ENV_OMP_WAIT_POLICY,
  TSR__ENV_COUNT
} tsr__env_id;

typedef enum tsr__env_kind {
  TSR__ENV_CHOICE, /* one of `values` ("a|b|c", compared without case); the reader gives its index
                    */
  TSR__ENV_NUMBER, /* a decimal or exponent number in [min, max] */
  TSR__ENV_BLOCKS, /* three integers >= 0, "kc,mc,nc" */
  TSR__ENV_TEXT    /* any non-empty text (a path, a device name checked by its reader) */
} tsr__env_kind;

/* One row. `def` is the default as the README writes it ("" = unset: the effect column says
   what unset means). */
typedef struct tsr__env_var {
  const char *name;
  tsr__env_kind kind;
  const char *values; /* CHOICE: "a|b|c"; else a description of what is accepted */
  const char *def;
  double min, max;   /* NUMBER */
  bool error;        /* a bad value fails the read (else: warning, default kept) */
  const char *what;  /* what it does, one line */
  const char *alias; /* a deprecated former name, read when `name` is unset or empty (a bad
                        value's warning or error names it); NULL: none */
} tsr__env_var;

/* The table (TSR__ENV_COUNT rows, indexed by tsr__env_id). */
const tsr__env_var *tsr__env_table(void);

/* The raw value (the alias's when the name is unset or empty), or NULL when unset or empty. */
const char *tsr__env_text(tsr__env_id id);

/* CHOICE: the index in `values` of the value, of the default when unset or empty, of the
   default after a warning when bad; -1 when unset and the default is "" (no value). For an
   `error` row a bad value returns -2 with TSR_ERR_INVALID_ARGUMENT set. */
int tsr__env_choice(tsr__env_id id);

/* NUMBER: the value; the default when unset, empty or bad (after a warning); NaN when the
   default is "" and the value is unset or bad. */
double tsr__env_number(tsr__env_id id);

/* BLOCKS: true and out[] when set and valid; false (out[] zero) when unset, or bad (after a
   warning). */
bool tsr__env_blocks(tsr__env_id id, int64_t out[3]);

/* CHOICE rows "0|1": whether the value (or the default) is 1. */
bool tsr__env_flag(tsr__env_id id);

#ifdef __cplusplus
}
#endif
#endif /* TSR_CORE_ENV_H */
