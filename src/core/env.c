/* SPDX-License-Identifier: BSD-3-Clause */
/* The one environment reader and its table (core/env.h). */
#include "core/env.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"

#define NUM(name, def, lo, hi, what)                                                               \
  { name, TSR__ENV_NUMBER, "a number", def, lo, hi, false, what }
#define FLAG(name, def, what)                                                                      \
  { name, TSR__ENV_CHOICE, "0|1", def, 0, 0, false, what }

static const tsr__env_var tsr__env_vars[TSR__ENV_COUNT] = {
    [TSR__ENV_DEVICE] = {"TSR_DEVICE", TSR__ENV_TEXT, "auto, cpu, cuda, cuda:N, hip or hip:N",
                         "auto", 0, 0, true, "the device of tsr_device_default()"},
    [TSR__ENV_GEMM] = {"TSR_GEMM", TSR__ENV_CHOICE, "auto|native|vendor", "auto", 0, 0, true,
                       "the GEMM implementation of TSR_GEMM_AUTO calls"},
    [TSR__ENV_GPU_SYNC_DEBUG] =
        FLAG("TSR_GPU_SYNC_DEBUG", "0", "every GPU kernel launch waits and checks"),
    [TSR__ENV_ERROR_TRACE] =
        FLAG("TSR_ERROR_TRACE", "0", "one line on stderr per raised error, with its raise site"),
    [TSR__ENV_GPU_CACHE_LIMIT] =
        NUM("TSR_GPU_CACHE_LIMIT", "", 0, 1e12,
            "MiB the GPU caching allocator keeps (unset: a quarter of the device)"),
    [TSR__ENV_GPU_ALLOC_CACHE] = FLAG("TSR_GPU_ALLOC_CACHE", "1", "0: no GPU caching allocator"),
    [TSR__ENV_SUMMA_CHUNK_FLOPS] =
        NUM("TSR_SUMMA_CHUNK_FLOPS", "", 1, 1e18,
            "least flops of a SUMMA CPU chunk (unset: one GEMM a step, progressed from inside)"),
    [TSR__ENV_DIST_GPU_STAGING] =
        {"TSR_DIST_GPU_STAGING", TSR__ENV_CHOICE, "auto|0|1", "auto", 0, 0, false,
         "GPU data of SUMMA and the exchanges through host buffers (1) or not (0)"},
    [TSR__ENV_SUMMA_LOOKAHEAD] = {"TSR_SUMMA_LOOKAHEAD", TSR__ENV_CHOICE, "auto|1|2|3", "auto", 0,
                                  0, false, "SUMMA's panels in flight beyond the current step"},
    [TSR__ENV_BCAST_ALPHA_BETA] =
        NUM("TSR_BCAST_ALPHA_BETA", "32768", 1, 1e12,
            "latency x bandwidth (bytes) of the pipelined broadcast's model"),
    [TSR__ENV_BCAST_SEND_WINDOW] = {"TSR_BCAST_SEND_WINDOW", TSR__ENV_CHOICE, "1|2|3|4|5|6|7|8",
                                    "2", 0, 0, false,
                                    "pipelined broadcast: segment sends in flight per child"},
    [TSR__ENV_BCAST_MPI_BELOW] =
        NUM("TSR_BCAST_MPI_BELOW", "1048576", 0, 1e15,
            "AUTO broadcast: MPI_Ibcast for host buffers below this many bytes"),
    [TSR__ENV_BCAST_OVERSUBSCRIBED] =
        {"TSR_BCAST_OVERSUBSCRIBED", TSR__ENV_CHOICE, "auto|0|1", "auto", 0, 0, false,
         "AUTO broadcast: ranks oversubscribed (1: never the ring) or not (0); auto: counted",
         "TSR_BCAST_SHARED_CORES"},
    [TSR__ENV_CPU_KERNEL] = {"TSR_CPU_KERNEL", TSR__ENV_CHOICE, "auto|portable|avx2|avx512", "auto",
                             0, 0, false, "the CPU GEMM micro-kernel ISA"},
    [TSR__ENV_CPU_GEMM_BLOCKS] = {"TSR_CPU_GEMM_BLOCKS", TSR__ENV_BLOCKS,
                                  "kc,mc,nc (integers >= 0)", "", 0, 0, false,
                                  "the CPU GEMM cache blocks"},
    [TSR__ENV_WISDOM] = {"TSR_WISDOM", TSR__ENV_TEXT, "a path", "", 0, 0, false,
                         "the CPU GEMM wisdom file"},
    [TSR__ENV_WISDOM_WARN] =
        FLAG("TSR_WISDOM_WARN", "1", "0: no warning for an ignored TSR_WISDOM file"),
    [TSR__ENV_BLAS_GPU_MIN_FLOPS] = NUM("TSR_BLAS_GPU_MIN_FLOPS", "1e9", 0, HUGE_VAL,
                                        "BLAS drop-in: smallest GEMM (2mnk flops) sent to the GPU"),
    [TSR__ENV_BLAS_VERBOSE] =
        FLAG("TSR_BLAS_VERBOSE", "0", "BLAS drop-in: one line of counts at exit"),
    [TSR__ENV_SCALAPACK_PATH] = {"TSR_SCALAPACK_PATH", TSR__ENV_CHOICE, "auto|redistribute|direct",
                                 "auto", 0, 0, false, "ScaLAPACK drop-in: force one path"},
    [TSR__ENV_SCALAPACK_REPORT] = {"TSR_SCALAPACK_REPORT", TSR__ENV_TEXT, "a path", "", 0, 0, false,
                                   "ScaLAPACK drop-in: one JSON line per process at exit"},
    [TSR__ENV_SMPI_GPU] = FLAG("TSR_SMPI_GPU", "0", "SimGrid model: local GEMMs as an H100"),
    [TSR__ENV_SMPI_GPU_F32] =
        NUM("TSR_SMPI_GPU_F32", "50e12", 1e-30, HUGE_VAL, "SimGrid model: f32 GEMM peak (flop/s)"),
    [TSR__ENV_SMPI_GPU_F64] =
        NUM("TSR_SMPI_GPU_F64", "57e12", 1e-30, HUGE_VAL, "SimGrid model: f64 GEMM peak (flop/s)"),
    [TSR__ENV_SMPI_GPU_HALF] = NUM("TSR_SMPI_GPU_HALF", "64", 1e-30, HUGE_VAL,
                                   "SimGrid model: dimension at half efficiency"),
    [TSR__ENV_SMPI_GPU_LAUNCH] = NUM("TSR_SMPI_GPU_LAUNCH", "10e-6", 1e-30, HUGE_VAL,
                                     "SimGrid model: seconds per GEMM launch"),
    [TSR__ENV_SMPI_GPU_STAGING] =
        FLAG("TSR_SMPI_GPU_STAGING", "0", "SimGrid model: charge staged panels' copies"),
    [TSR__ENV_SMPI_PCIE_BW] =
        NUM("TSR_SMPI_PCIE_BW", "50e9", 1e-30, HUGE_VAL, "SimGrid model: host-device bytes/s"),
    [TSR__ENV_SMPI_MEMORY_BW] = NUM("TSR_SMPI_MEMORY_BW", "10e9", 1e-30, HUGE_VAL,
                                    "SimGrid model: memory bytes/s of local copies"),
    [TSR__ENV_SMPI_HBM_BW] = NUM("TSR_SMPI_HBM_BW", "2.5e12", 1e-30, HUGE_VAL,
                                 "SimGrid model: device memory bytes/s of panel packs"),
    [TSR__ENV_SMPI_GPU_POLL] = NUM("TSR_SMPI_GPU_POLL", "0", 0, HUGE_VAL,
                                   "SimGrid model: seconds between broadcast tests while waiting "
                                   "(0: event-driven waits)"),
    [TSR__ENV_OMP_WAIT_POLICY] = {"OMP_WAIT_POLICY", TSR__ENV_CHOICE, "passive|active", "", 0, 0,
                                  false, "how idle CPU GEMM pool threads wait"},
};

static atomic_bool tsr__env_warned[TSR__ENV_COUNT];

const tsr__env_var *tsr__env_table(void) {
  return tsr__env_vars;
}

extern char **environ; /* POSIX: the program declares it */

/* getenv's search, giving the entry's index too: the value of the first "name=" entry of env,
   or NULL with *slot the number of entries. */
static const char *tsr__env_find(char **env, const char *name, size_t len, int *slot) {
  int i = 0;
  if (env)
    for (; env[i]; ++i)
      if (strncmp(env[i], name, len) == 0 && env[i][len] == '=') {
        *slot = i;
        return env[i] + len + 1;
      }
  *slot = i;
  return NULL;
}

/* The variable's value in env: its own, or its alias's when it has one and its own is unset or
   empty; *as: the name it was found under. *slot: the name's own search (tsr__env_find). */
static const char *tsr__env_lookup(char **env, const tsr__env_var *e, int *slot, const char **as) {
  const char *v = tsr__env_find(env, e->name, strlen(e->name), slot);
  *as = e->name;
  if (e->alias && (!v || !*v)) {
    int alias_slot;
    const char *a = tsr__env_find(env, e->alias, strlen(e->alias), &alias_slot);
    if (a && *a) {
      *as = e->alias;
      return a;
    }
  }
  return v;
}

/* The value or NULL when unset or empty, and the name it was found under. */
static const char *tsr__env_get(tsr__env_id id, const char **as) {
  int slot;
  const char *v = tsr__env_lookup(environ, &tsr__env_vars[id], &slot, as);
  return v && *v ? v : NULL;
}

const char *tsr__env_text(tsr__env_id id) {
  const char *as;
  return tsr__env_get(id, &as);
}

/*
 * tsr__env_choice's memory of its last good answer on this thread, so that a variable read on
 * every call (TSR_GEMM, by every tsr_gemm with TSR_GEMM_AUTO) costs a few compares instead of
 * a scan of the environment (issue 31: the scan was ~280 instructions of a ~2000-instruction
 * 1x1x1 tsr_gemm). The value is still the one in the environment at the call: the memory
 * holds where the variable's entry sits in environ and its text, and is used only while
 *  - environ is the same array and the entry at that index is the same string with the same
 *    value (setenv and putenv of the variable put another string there, or the same string
 *    with other text: a putenv'd buffer changed in place; unsetenv of any variable moves the
 *    entries after it down), or
 *  - when the variable was unset, environ is the same array with the same last entry and no
 *    entry after it (setenv or putenv of a new variable appends one; unsetenv moves the last).
 * Anything else (clearenv: environ is NULL or another array) reads the environment again. What
 * it cannot see: another entry's putenv'd buffer renamed in place to the variable, and a
 * clearenv whose next environ array is allocated at the old one's address, both before the
 * next read on this thread (as getenv racing with setenv, not something a program does). Per
 * thread (nothing shared, no locks), a TLS-descriptor thread-local like the API context (no
 * __tls_get_addr per call), one variable at a time (the per-call
 * reads are TSR_GEMM's). Bad values are never remembered: their error or warning comes from
 * the full read.
 */
typedef struct tsr__env_memo {
  char **env;        /* environ at the read */
  const char *entry; /* set: env[slot], "NAME=value"; unset: env[slot - 1] (NULL if slot 0) */
  int slot;          /* set: the entry's index; unset: the number of entries */
  signed char id;    /* the variable, -1: nothing remembered */
  signed char answer;
  unsigned char vofs; /* set: strlen(NAME) + 1, where the value starts in the entry; 0: unset */
  char value[13];     /* set: the value (shorter values only) */
} tsr__env_memo;

static _Thread_local tsr__env_memo tsr__env_memo_of_thread = {.id = -1};

static bool tsr__env_memo_hit(const tsr__env_memo *m, tsr__env_id id, char **env) {
  if (m->id != (int)id || env != m->env) return false;
  if (!env) return true; /* no environment then and now */
  if (!m->vofs) return env[m->slot] == NULL && (m->slot == 0 || env[m->slot - 1] == m->entry);
  if (env[m->slot] != m->entry) return false;
  const char *v = m->entry + m->vofs;
  for (int i = 0; v[i] == m->value[i]; ++i)
    if (!v[i]) return true;
  return false;
}

/* Remembers a good answer read from env (value: the variable's value, NULL when unset). */
static void tsr__env_memo_keep(tsr__env_memo *m, tsr__env_id id, char **env, int slot,
                               const char *value, size_t name_len, int answer) {
  m->id = -1;
  if (value && strlen(value) >= sizeof m->value) return; /* no choice is that long */
  m->env = env;
  m->slot = slot;
  m->answer = (signed char)answer;
  if (value) {
    m->entry = env[slot];
    m->vofs = (unsigned char)(name_len + 1);
    strcpy(m->value, value);
  } else {
    m->entry = slot > 0 ? env[slot - 1] : NULL;
    m->vofs = 0;
  }
  m->id = (signed char)id;
}

/* The one warning of a bad value (once per variable and process): the variable (the name it
   was found under, `as`), the value, what is accepted and the default used. */
static void tsr__env_warn(tsr__env_id id, const char *as, const char *value) {
  const tsr__env_var *e = &tsr__env_vars[id];
  if (atomic_exchange(&tsr__env_warned[id], true)) return;
  char accepted[128];
  if (e->kind == TSR__ENV_NUMBER && isinf(e->max))
    snprintf(accepted, sizeof accepted, "a number >= %g", e->min);
  else if (e->kind == TSR__ENV_NUMBER)
    snprintf(accepted, sizeof accepted, "a number in [%g, %g]", e->min, e->max);
  else
    snprintf(accepted, sizeof accepted, "%s%s", e->kind == TSR__ENV_CHOICE ? "one of " : "",
             e->values);
  fprintf(stderr, "tessera: warning: %s=\"%.64s\" is not %s; the default %s is used\n", as, value,
          accepted, *e->def ? e->def : "(unset)");
}

/* Index of text in the "a|b|c" list, or -1. */
static int tsr__env_index(const char *values, const char *text) {
  size_t len = strlen(text);
  int i = 0;
  for (const char *p = values;; ++i) {
    const char *bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    if (n == len && strncasecmp(p, text, n) == 0) return i;
    if (!bar) return -1;
    p = bar + 1;
  }
}

/* tsr__env_choice's full read, out of its line (the memory's hit is the whole per-call cost). */
static __attribute__((noinline)) int tsr__env_choice_read(tsr__env_id id, tsr__env_memo *m,
                                                          char **env) {
  const tsr__env_var *e = &tsr__env_vars[id];
  const int dflt = *e->def ? tsr__env_index(e->values, e->def) : -1;
  const size_t len = strlen(e->name);
  int slot;
  const char *as;
  const char *v = tsr__env_lookup(env, e, &slot, &as);
  /* The memory follows the name's own entry: an answer that an alias's entry could change (the
     name unset or empty, the alias present) is not kept. */
  bool keep = true;
  if (e->alias && (as != e->name || !v || !*v)) {
    int alias_slot;
    keep = !v && !tsr__env_find(env, e->alias, strlen(e->alias), &alias_slot);
    if (!keep) m->id = -1;
  }
  if (!v || !*v) {
    if (keep) tsr__env_memo_keep(m, id, env, slot, v, len, dflt); /* "" reads as unset */
    return dflt;
  }
  const int i = tsr__env_index(e->values, v);
  if (i >= 0) {
    if (keep) tsr__env_memo_keep(m, id, env, slot, v, len, i);
    return i;
  }
  if (e->error) {
    tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "%s=\"%.64s\" is not one of %s", as, v,
                   e->values);
    return -2;
  }
  tsr__env_warn(id, as, v);
  return dflt;
}

int tsr__env_choice(tsr__env_id id) {
  tsr__env_memo *m = &tsr__env_memo_of_thread;
  char **env = environ;
  return tsr__env_memo_hit(m, id, env) ? m->answer : tsr__env_choice_read(id, m, env);
}

bool tsr__env_flag(tsr__env_id id) {
  return tsr__env_choice(id) == 1;
}

double tsr__env_number(tsr__env_id id) {
  const tsr__env_var *e = &tsr__env_vars[id];
  const double dflt = *e->def ? strtod(e->def, NULL) : NAN;
  const char *as;
  const char *v = tsr__env_get(id, &as);
  if (!v) return dflt;
  char *end = NULL;
  const double x = strtod(v, &end);
  if (end != v && *end == '\0' && x >= e->min && x <= e->max) return x;
  tsr__env_warn(id, as, v);
  return dflt;
}

bool tsr__env_blocks(tsr__env_id id, int64_t out[3]) {
  out[0] = out[1] = out[2] = 0;
  const char *as;
  const char *v = tsr__env_get(id, &as);
  if (!v) return false;
  long long b[3];
  int used = 0;
  if (sscanf(v, "%lld,%lld,%lld%n", &b[0], &b[1], &b[2], &used) == 3 && v[used] == '\0' &&
      b[0] >= 0 && b[1] >= 0 && b[2] >= 0) {
    for (int i = 0; i < 3; ++i)
      out[i] = (int64_t)b[i];
    return true;
  }
  tsr__env_warn(id, as, v);
  return false;
}
