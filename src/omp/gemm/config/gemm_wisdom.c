/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wisdom file of the CPU GEMM (format and rules in gemm_tune.h): tessera-tune writes it,
 * the library reads it once, on the first GEMM, and ignores it (with the reason kept for
 * tessera-tune --show) when it is unreadable, malformed, stale or from another CPU. When
 * TSR_WISDOM names the file, an ignored file is also reported on stderr, once per process
 * (see tsr__gemm_wisdom_lookup in gemm_tune.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "omp/gemm/gemm_tune.h"
#include "omp/omp_internal.h"

tsr_status tsr__gemm_wisdom_path(char *path, size_t size) {
  const char *w = tsr__env_text(TSR__ENV_WISDOM), *x = getenv("XDG_CACHE_HOME"),
             *h = getenv("HOME");
  int n;
  if (w && *w)
    n = snprintf(path, size, "%s", w);
  else if (x && *x)
    n = snprintf(path, size, "%s/tessera/wisdom", x);
  else if (h && *h)
    n = snprintf(path, size, "%s/.cache/tessera/wisdom", h);
  else
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "no wisdom path: TSR_WISDOM, XDG_CACHE_HOME and HOME are all unset");
  if (n < 0 || (size_t)n >= size)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "the wisdom path is longer than %zu bytes", size);
  return TSR_OK;
}

/* Validates one entry against this CPU and build; NULL when fine, else the reason. */
static const char *tsr__wisdom_entry_problem(const tsr__gemm_wisdom_entry *e) {
  if (e->dtype != TSR_F32 && e->dtype != TSR_F64) return "an entry has a dtype other than f32/f64";
  if (e->threads < 1 || e->threads > 4096) return "an entry has a thread count out of range";
  const tsr__gemm_kernel *k = tsr__gemm_kernel_find(e->kernel, e->dtype);
  if (!k) return "an entry names a kernel this build does not have";
  if (!tsr__gemm_isa_available(k->isa)) return "an entry names a kernel this CPU cannot run";
  if (e->kc < 8 || e->kc > 4096 || e->mc < k->mr || e->mc > 65536 || e->nc < k->nr || e->nc > 65536)
    return "an entry has cache blocks out of range";
  if (e->grain < 1 || e->grain > 16) return "an entry has a thread grain out of range";
  return NULL;
}

tsr_status tsr__gemm_wisdom_read(const char *path, tsr__gemm_wisdom *w) {
  memset(w, 0, sizeof *w);
  /* Without blocking, and only a regular file: a FIFO or a device is refused, not waited on. */
  FILE *f = NULL;
  TSR_CALL(tsr__open_input_file(path, "wisdom file", &f));
  char line[512];
  int lineno = 0, version = -1;
  bool have_cpu = false;
  tsr_status st = TSR_OK;
  while (fgets(line, sizeof line, f)) {
    ++lineno;
    if (!strchr(line, '\n') && !feof(f)) {
      st = tsr__set_error(TSR_ERR_FORMAT, __func__, "%s:%d: line too long", path, lineno);
      break;
    }
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '#' || line[0] == '\0') continue;
    if (version < 0) {
      char tail;
      if (sscanf(line, "tessera-wisdom %d %c", &version, &tail) != 1) {
        st = tsr__set_error(TSR_ERR_FORMAT, __func__, "%s:%d: not a Tessera wisdom file", path,
                            lineno);
        break;
      }
      if (version != TSR__GEMM_WISDOM_VERSION) {
        st =
            tsr__set_error(TSR_ERR_FORMAT, __func__, "%s: wisdom version %d, this library reads %d",
                           path, version, TSR__GEMM_WISDOM_VERSION);
        break;
      }
      continue;
    }
    if (strncmp(line, "cpu ", 4) == 0) {
      snprintf(w->cpu, sizeof w->cpu, "%.127s", line + 4);
      have_cpu = true;
      continue;
    }
    if (strncmp(line, "entry ", 6) == 0) {
      if (w->n >= TSR__GEMM_WISDOM_MAX) {
        st = tsr__set_error(TSR_ERR_FORMAT, __func__, "%s:%d: more than %d entries", path, lineno,
                            TSR__GEMM_WISDOM_MAX);
        break;
      }
      tsr__gemm_wisdom_entry *e = &w->e[w->n];
      char dt[8], tail;
      long long kc, mc, nc;
      /* The dtype by the dtype table's name; entries exist for the dtypes with CPU kernels
         (f32, f64: the complex dtypes run on theirs). */
      if (sscanf(line + 6, "%7s %d %31s %lld %lld %lld %d %c", dt, &e->threads, e->kernel, &kc, &mc,
                 &nc, &e->grain, &tail) != 7 ||
          tsr_dtype_parse(dt, &e->dtype) != TSR_OK ||
          (e->dtype != TSR_F32 && e->dtype != TSR_F64)) {
        st = tsr__set_error(TSR_ERR_FORMAT, __func__, "%s:%d: malformed entry", path, lineno);
        break;
      }
      e->kc = kc;
      e->mc = mc;
      e->nc = nc;
      const char *why = tsr__wisdom_entry_problem(e);
      if (why) {
        st = tsr__set_error(TSR_ERR_FORMAT, __func__, "%s:%d: %s (%s)", path, lineno, why,
                            e->kernel);
        break;
      }
      w->n++;
      continue;
    }
    st = tsr__set_error(TSR_ERR_FORMAT, __func__, "%s:%d: unknown line", path, lineno);
    break;
  }
  if (st == TSR_OK && ferror(f))
    st = tsr__set_error(TSR_ERR_IO, __func__, "cannot read wisdom file %s", path);
  fclose(f);
  if (st != TSR_OK) return st;
  if (version < 0 || !have_cpu)
    return tsr__set_error(TSR_ERR_FORMAT, __func__,
                          "%s: no \"tessera-wisdom\" header or no cpu line", path);
  const char *mine = tsr__cpu_facts_get()->model_name;
  if (strcmp(w->cpu, mine) != 0)
    return tsr__set_error(TSR_ERR_INCONSISTENT, __func__,
                          "%s was written on another CPU (\"%s\", this is \"%s\")", path, w->cpu,
                          mine);
  return TSR_OK;
}

/* Creates the parent directory of path, one level (~/.cache/tessera under ~/.cache). */
static tsr_status tsr__wisdom_mkdir(const char *path) {
  char dir[4096];
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "the wisdom path is too long");
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
      return tsr__set_error(TSR_ERR_IO, __func__, "cannot create directory %s: %s", dir,
                            strerror(errno));
  }
  return TSR_OK;
}

tsr_status tsr__gemm_wisdom_check_path(const char *path) {
  TSR_CALL(tsr__wisdom_mkdir(path));
  TSR_CALL(tsr__check_output(path));
  int lock = -1;
  TSR_CALL(tsr__lock_beside(path, TSR__GEMM_WISDOM_LOCK_WAIT, &lock));
  tsr__unlock(lock);
  return TSR_OK;
}

tsr_status tsr__gemm_wisdom_write(const char *path, const tsr__gemm_wisdom *w) {
  for (int i = 0; i < w->n; ++i) {
    const char *why = tsr__wisdom_entry_problem(&w->e[i]);
    if (why)
      return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "wisdom entry %d: %s", i, why);
  }
  if (strchr(w->cpu, '\n'))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "the CPU name contains a newline");
  TSR_CALL(tsr__wisdom_mkdir(path));
  /* The text, then the library's one checked write path (fileio.c): destination checked, a
     temporary beside it, every write checked, fsync, rename. */
  char text[256 + 128 + TSR__GEMM_WISDOM_MAX * 160];
  size_t len = 0;
  int n = snprintf(text, sizeof text,
                   "tessera-wisdom %d\n# written by tessera-tune; the library ignores this file "
                   "on another CPU model\ncpu %s\n",
                   TSR__GEMM_WISDOM_VERSION, w->cpu);
  for (int i = 0; n > 0 && (len += (size_t)n) < sizeof text && i < w->n; ++i) {
    const tsr__gemm_wisdom_entry *e = &w->e[i];
    n = snprintf(text + len, sizeof text - len, "entry %s %d %s %lld %lld %lld %d\n",
                 tsr_dtype_name(e->dtype), e->threads, e->kernel, (long long)e->kc,
                 (long long)e->mc, (long long)e->nc, e->grain);
  }
  if (n < 0 || len >= sizeof text)
    return tsr__set_error(TSR_ERR_INTERNAL, __func__, "the wisdom text does not fit %zu bytes",
                          sizeof text);
  const void *parts[1] = {text};
  return tsr__save_file(path, parts, &len, 1);
}

tsr_status tsr__gemm_wisdom_update(const char *path, const tsr__gemm_wisdom *fresh, int *total) {
  int lock = -1;
  TSR_CALL(tsr__wisdom_mkdir(path));
  TSR_CALL(tsr__lock_beside(path, TSR__GEMM_WISDOM_LOCK_WAIT, &lock));
  /* Under the lock: what the file holds now (another tuner may have written it since this one
     started), less the (dtype, threads) pairs measured again, plus the fresh entries. A file
     that is missing, invalid or from another CPU is replaced. */
  tsr__gemm_wisdom *old = malloc(sizeof *old), *out = malloc(sizeof *out);
  tsr_status st = TSR_OK;
  if (!old || !out) st = tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "wisdom tables");
  if (st == TSR_OK) {
    *out = *fresh;
    out->n = 0;
    if (access(path, F_OK) == 0 && tsr__gemm_wisdom_read(path, old) == TSR_OK) {
      for (int i = 0; i < old->n && st == TSR_OK; ++i) {
        bool again = false;
        for (int j = 0; j < fresh->n; ++j)
          again = again || (old->e[i].dtype == fresh->e[j].dtype &&
                            old->e[i].threads == fresh->e[j].threads);
        if (!again) out->e[out->n++] = old->e[i];
      }
    }
    tsr_clear_error();
    for (int j = 0; j < fresh->n && st == TSR_OK; ++j) {
      if (out->n >= TSR__GEMM_WISDOM_MAX)
        st = tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                            "%s would hold more than %d entries", path, TSR__GEMM_WISDOM_MAX);
      else
        out->e[out->n++] = fresh->e[j];
    }
  }
  if (st == TSR_OK) st = tsr__gemm_wisdom_write(path, out);
  if (st == TSR_OK && total) *total = out->n;
  free(old);
  free(out);
  tsr__unlock(lock);
  return st;
}

/* ---------------------------------------------------------------- the library's use --- */

static tsr__gemm_wisdom tsr__wisdom;
static atomic_bool tsr__wisdom_valid;
static char tsr__wisdom_state[640] = "none";
static pthread_once_t tsr__wisdom_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tsr__wisdom_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool tsr__wisdom_warned, tsr__wisdom_quiet;

/* The one line on stderr when TSR_WISDOM names a file that is ignored (once per process;
   TSR_WISDOM_WARN=0 or tsr__gemm_wisdom_set_warn(false) silences it). */
static void tsr__wisdom_warn(const char *why) {
  const char *named = tsr__env_text(TSR__ENV_WISDOM);
  if (!named || atomic_load(&tsr__wisdom_quiet) || !tsr__env_flag(TSR__ENV_WISDOM_WARN)) return;
  if (atomic_exchange(&tsr__wisdom_warned, true)) return;
  fprintf(stderr,
          "tessera: warning: TSR_WISDOM=%s is ignored (%s); the built-in GEMM configurations "
          "apply (TSR_WISDOM_WARN=0 silences this)\n",
          named, why);
}

void tsr__gemm_wisdom_set_warn(bool on) {
  atomic_store(&tsr__wisdom_quiet, !on);
}

/* Puts back a last-error message saved before (tsr_last_error is "fn: message"). */
static void tsr__restore_error(const char *saved) {
  const char *sep = strstr(saved, ": ");
  if (!sep) {
    tsr_clear_error();
    return;
  }
  char fn[128];
  snprintf(fn, sizeof fn, "%.*s", (int)(sep - saved < 127 ? sep - saved : 127), saved);
  (void)tsr__set_error(TSR_OK, fn, "%s", sep + 2);
}

/* Bumped by every (re)load: configurations cached from the wisdom (tsr__gemm_serial_get's)
   are stale when it moved (gemm_tune.h). */
atomic_uint tsr__gemm_wisdom_gen;
static void tsr__wisdom_load(void);

unsigned tsr__gemm_wisdom_generation(void) {
  pthread_once(&tsr__wisdom_once, tsr__wisdom_load);
  return atomic_load_explicit(&tsr__gemm_wisdom_gen, memory_order_acquire);
}

static void tsr__wisdom_load(void) {
  atomic_fetch_add(&tsr__gemm_wisdom_gen, 1);
  atomic_store(&tsr__wisdom_valid, false);
  char path[4096];
  /* Reading wisdom must not leave a message behind for the user's next failing call, and its
     own messages (kept for tessera-tune --show) name the wisdom file, not the user's call. */
  char saved[1024];
  snprintf(saved, sizeof saved, "%s", tsr_last_error());
  TSR_API_SUSPEND();
  if (tsr__gemm_wisdom_path(path, sizeof path) != TSR_OK) {
    snprintf(tsr__wisdom_state, sizeof tsr__wisdom_state, "none: %.620s", tsr__last_error_detail());
  } else if (access(path, F_OK) != 0) {
    snprintf(tsr__wisdom_state, sizeof tsr__wisdom_state, "none: no file at %.560s", path);
    tsr__wisdom_warn("no such file");
  } else if (tsr__gemm_wisdom_read(path, &tsr__wisdom) != TSR_OK) {
    snprintf(tsr__wisdom_state, sizeof tsr__wisdom_state, "ignored: %.620s",
             tsr__last_error_detail());
    tsr__wisdom_warn(tsr__last_error_detail());
  } else {
    snprintf(tsr__wisdom_state, sizeof tsr__wisdom_state, "used: %.560s (%d entries)", path,
             tsr__wisdom.n);
    atomic_store(&tsr__wisdom_valid, true);
  }
  tsr__restore_error(saved);
  TSR_API_RESUME();
}

bool tsr__gemm_wisdom_lookup(tsr_dtype dtype, int nt, tsr__gemm_config *out) {
  pthread_once(&tsr__wisdom_once, tsr__wisdom_load);
  if (!atomic_load_explicit(&tsr__wisdom_valid, memory_order_acquire)) return false;
  for (int i = 0; i < tsr__wisdom.n; ++i) {
    const tsr__gemm_wisdom_entry *e = &tsr__wisdom.e[i];
    if (e->dtype != dtype || e->threads != nt) continue;
    *out = (tsr__gemm_config){.ker = tsr__gemm_kernel_find(e->kernel, dtype),
                              .kc = e->kc,
                              .mc = e->mc,
                              .nc = e->nc,
                              .grain = e->grain,
                              .source = "wisdom"};
    return out->ker != NULL;
  }
  return false;
}

void tsr__gemm_wisdom_status(char *buf, size_t size) {
  pthread_once(&tsr__wisdom_once, tsr__wisdom_load);
  pthread_mutex_lock(&tsr__wisdom_lock);
  snprintf(buf, size, "%s", tsr__wisdom_state);
  pthread_mutex_unlock(&tsr__wisdom_lock);
}

void tsr__gemm_wisdom_reload(void) {
  pthread_once(&tsr__wisdom_once, tsr__wisdom_load);
  pthread_mutex_lock(&tsr__wisdom_lock);
  tsr__wisdom_load();
  pthread_mutex_unlock(&tsr__wisdom_lock);
}
