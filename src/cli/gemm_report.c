/* SPDX-License-Identifier: BSD-3-Clause */
/* tessera-gemm's reports: the text summary on stdout and the JSON file. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemm_cli.h"

/* The version of the JSON report's layout (docs/tessera-gemm.schema.json): 2 added the
   outcome (passed, error), the timestamp, the build, the MPI library, the hosts, the devices
   as objects and the broadcasts. */
#define JSON_SCHEMA_VERSION 2

static const char *const bcast_names[4] = {"auto", "mpi", "ring", "tree"};

/* The --bcast spelling of a tsr_dist_bcast. */
static const char *bcast_name(int b) {
  return bcast_names[b >= 0 && b < 4 ? b : 0];
}

const char *algorithm_name(int a) {
  return a == TSR_DIST_GEMM_2_5D ? "2.5d" : a == TSR_DIST_GEMM_AUTO ? "auto" : "summa";
}

void print_results(const options *o, tsr_dtype dtype, const results *r) {
  say(stdout,
      "time (s): %s %.4f  compute %.4f  communication %.4f  write %.4f  (median of %lld%s)\n",
      o->a_path ? "read" : "generate", r->t_read, r->t_compute, r->t_comm, r->t_write,
      (long long)o->repeat, o->warmup ? ", after warm-up" : "");
  say(stdout, "local multiply (host wall) %.4f s; bytes per rank (max): sent %llu, received %llu\n",
      r->t_local, (unsigned long long)r->bytes_sent, (unsigned long long)r->bytes_received);
  say(stdout,
      "steps: %lld of up to %lld k columns; local GEMM calls %llu (vendor BLAS %llu); MPI "
      "progress calls from inside them %llu\n",
      (long long)r->panels, (long long)r->panel_width, (unsigned long long)r->gemm_calls,
      (unsigned long long)r->gemm_vendor_calls, (unsigned long long)r->progress_calls);
  if (r->gpu)
    say(stdout,
        "gpu: panels %s; per rank (max): H2D %.1f MiB in %llu copies, D2H %.1f MiB in %llu "
        "copies, host syncs %llu (%llu in the panel loop), copy waits %llu; GPU time %.4f s\n",
        r->staging ? "staged through pinned host memory (MPI is not GPU-aware)"
                   : "device to device (GPU-aware MPI)",
        (double)r->h2d_bytes / 1048576.0, (unsigned long long)r->h2d_copies,
        (double)r->d2h_bytes / 1048576.0, (unsigned long long)r->d2h_copies,
        (unsigned long long)r->host_syncs, (unsigned long long)r->host_syncs_in_loop,
        (unsigned long long)r->copy_waits, r->t_gpu);
  say(stdout, "algorithm: %s, replicas %d; bytes redistributed per rank (max) %llu\n",
      algorithm_name(r->algorithm), r->replicas, (unsigned long long)r->bytes_redistributed);
  if (r->bcast_mpi + r->bcast_ring + r->bcast_tree > 0)
    say(stdout, "panel broadcasts per rank (max): mpi %llu, ring %llu, tree %llu (--bcast %s)\n",
        (unsigned long long)r->bcast_mpi, (unsigned long long)r->bcast_ring,
        (unsigned long long)r->bcast_tree, bcast_name(o->bcast));
  if (dtype_complex(dtype))
    say(stdout, "performance: %.2f GFLOP/s (%s: 8 m n k real flops)\n", r->gflops,
        tsr_dtype_name(dtype));
  else
    say(stdout, "performance: %.2f GFLOP/s\n", r->gflops);
  if (!r->verified) {
    say(stdout, "verify: skipped (--no-verify)\n");
    return;
  }
  const tsr_dist_verify_result *c = &r->check;
  if (c->verdict == TSR_VERIFY_UNVERIFIED) {
    say(stdout, "verify: inputs contain %lld NaN/Inf; product not verified\n",
        (long long)c->nonfinite_inputs);
    return;
  }
  say(stdout, "verify: Freivalds residual %.3g (tolerance %.3g) over %lld rows %s\n", c->residual,
      c->tolerance, (long long)c->rows_checked, c->verdict == TSR_VERIFY_FAILED ? "FAILED" : "ok");
  if (c->rows_unverified > 0)
    say(stdout, "verify: %lld rows of the product may overflow %s; those rows not verified\n",
        (long long)c->rows_unverified, tsr_dtype_name(dtype));
  if (r->serial_done)
    say(stdout, "verify: serial float64 product, max error %.3g (tolerance %.3g) %s%s\n",
        r->serial_err, r->serial_tol, r->serial_err <= r->serial_tol ? "ok" : "FAILED",
        r->serial_skipped ? " (elements that may overflow skipped)" : "");
  else
    say(stdout, "verify: serial comparison skipped (m*n*k > 2^27)\n");
}

/* ---------------------------------------------------------------- JSON ---------------- */

typedef struct strbuf {
  char *p;
  size_t len, cap;
  int failed;
} strbuf;

static void put(strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(strbuf *b, const char *fmt, ...) {
  if (b->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->failed = 1;
      return;
    }
    if (b->p && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = (b->cap + (size_t)n + 1) * 2;
    char *q = realloc(b->p, cap);
    if (!q) {
      b->failed = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates,
   at most U+10FFFF), or 0 when the bytes there are not one. */
static int utf8_len(const unsigned char *p) {
  if (p[0] < 0x80) return 1;
  int n = p[0] >= 0xC2 && p[0] <= 0xDF   ? 2
          : p[0] >= 0xE0 && p[0] <= 0xEF ? 3
          : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4
                                         : 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xC0) != 0x80) return 0; /* also stops at the terminating NUL */
  if (n == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0))) return 0;
  if (n == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90))) return 0;
  return n;
}

/* A JSON string (RFC 8259): quotes, backslashes and control characters escaped; well-formed
   UTF-8 copied; each byte that is not part of well-formed UTF-8 (a path is any bytes, -c
   $'c\xff.npy') written as \uFFFD, the replacement character, so the report is valid JSON
   (the byte itself cannot be represented in a JSON string). */
static void put_string(strbuf *b, const char *s) {
  if (!s) {
    put(b, "null");
    return;
  }
  put(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int n = utf8_len(p);
    if (n == 0) {
      put(b, "\\ufffd");
      p++;
    } else if (*p == '"' || *p == '\\') {
      put(b, "\\%c", *p++);
    } else if (*p < 0x20 || *p == 0x7f) {
      put(b, "\\u%04x", *p++);
    } else {
      put(b, "%.*s", n, (const char *)p);
      p += n;
    }
  }
  put(b, "\"");
}

static void put_i64_array(strbuf *b, const int64_t *v, int n) {
  put(b, "[");
  for (int i = 0; v && i < n; i++)
    put(b, "%s%lld", i ? ", " : "", (long long)v[i]);
  put(b, "]");
}

/* The verification's outcome, one word (the schema's enum), and a sentence. */
static const char *verdict_name(const options *o, const results *r, const char **detail) {
  if (!o->verify) {
    *detail = "not checked (--no-verify)";
    return "skipped";
  }
  if (!r->verified) {
    *detail = "the run stopped before the check";
    return "not_run";
  }
  if (!r->passed) {
    *detail = "the product is wrong (Freivalds' check or the serial float64 comparison)";
    return "failed";
  }
  switch (r->check.verdict) {
  case TSR_VERIFY_PASSED: *detail = "the product is right"; return "passed";
  case TSR_VERIFY_FAILED: break;
  case TSR_VERIFY_UNVERIFIED: *detail = "not verified: NaN/Inf in the inputs"; return "unverified";
  case TSR_VERIFY_PARTIAL:
    *detail = "partially verified: rows that may overflow were not checked";
    return "partial";
  }
  *detail = "the product is wrong";
  return "failed";
}

static const char *json_bool(int v) {
  return v ? "true" : "false";
}

static const char *thread_level_name(int level) {
  return level == MPI_THREAD_SINGLE       ? "single"
         : level == MPI_THREAD_FUNNELED   ? "funneled"
         : level == MPI_THREAD_SERIALIZED ? "serialized"
         : level == MPI_THREAD_MULTIPLE   ? "multiple"
                                          : "unknown";
}

/* The outcome, the time, the build and the MPI library. */
static void put_header(strbuf *b, const job_info *ji, int code) {
  char when[32] = "1970-01-01T00:00:00Z";
  time_t t = (time_t)ji->started;
  struct tm tm;
  if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  put(b, "{\n  \"program\": \"tessera-gemm\",\n  \"schema_version\": %d,\n  \"version\": \"%s\",\n",
      JSON_SCHEMA_VERSION, TSR_VERSION_STRING);
  put(b, "  \"timestamp\": \"%s\",\n  \"exit_code\": %d,\n  \"passed\": %s,\n  \"error\": ", when,
      code, json_bool(code == 0));
  put_string(b, code == 0 ? NULL : job_message());
  /* The library the job runs with (a shared library of another release may be loaded). */
  const char *lib = NULL;
  if (tsr_version(NULL, NULL, NULL, &lib) != TSR_OK || !lib) lib = TSR_VERSION_STRING;
  put(b, ",\n  \"build\": {\"version\": \"%s\", \"library_version\": ", TSR_VERSION_STRING);
  put_string(b, lib);
  put(b,
      ", \"backends\": [\"cpu\"%s%s], \"openmp\": %s, \"mpi\": %s, \"vendor_blas\": %s, "
      "\"gpu_vendor_blas\": %s},\n",
      TSR_HAVE_CUDA ? ", \"cuda\"" : "", TSR_HAVE_HIP ? ", \"hip\"" : "",
      json_bool(TSR_HAVE_OPENMP), json_bool(TSR_HAVE_MPI), json_bool(TSR_HAVE_VENDOR_BLAS),
      json_bool(TSR_HAVE_GPU_VENDOR_BLAS));
  char libv[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
  int len = 0, major = 0, minor = 0, level = -1;
  if (MPI_Get_library_version(libv, &len) != MPI_SUCCESS) len = 0;
  libv[len > 0 && len <= MPI_MAX_LIBRARY_VERSION_STRING ? len : 0] = '\0';
  libv[strcspn(libv, "\r\n")] = '\0'; /* the first line */
  MPI_Get_version(&major, &minor);
  MPI_Query_thread(&level);
  put(b, "  \"mpi\": {\"library\": ");
  put_string(b, libv);
  put(b, ", \"standard\": \"%d.%d\", \"thread_level\": \"%s\"},\n", major, minor,
      thread_level_name(level));
}

/* The hosts with their ranks, and every rank's device. */
static void put_ranks(strbuf *b, const job_info *ji) {
  const rank_desc *rk = ji->ranks;
  put(b, "  \"hosts\": [");
  for (int i = 0, first = 1; rk && i < g_size; i++) {
    int seen = 0;
    for (int h = 0; h < i && !seen; h++)
      seen = strcmp(rk[h].host, rk[i].host) == 0;
    if (seen) continue;
    put(b, "%s\n    {\"name\": ", first ? "" : ",");
    put_string(b, rk[i].host);
    put(b, ", \"ranks\": [");
    for (int r = i, n = 0; r < g_size; r++)
      if (strcmp(rk[r].host, rk[i].host) == 0) put(b, "%s%d", n++ ? ", " : "", r);
    put(b, "]}");
    first = 0;
  }
  put(b, "%s],\n  \"devices\": [", rk ? "\n  " : "");
  for (int i = 0; rk && i < g_size; i++) {
    const rank_desc *d = &rk[i];
    size_t kl = strcspn(d->device, ":");
    put(b, "%s\n    {\"rank\": %d, \"host\": ", i ? "," : "", i);
    put_string(b, d->host);
    put(b, ", \"local_rank\": %d, \"kind\": \"%.*s\", \"device\": ", d->local_rank, (int)kl,
        d->device);
    put_string(b, d->device);
    put(b, ", \"name\": ");
    put_string(b, d->name);
    put(b, ", \"arch\": ");
    put_string(b, d->arch);
    put(b, ", \"memory_bytes\": %lld, \"threads\": %d}", (long long)d->memory, d->threads);
  }
  put(b, "%s],\n  \"binding_advice\": [", rk ? "\n  " : "");
  for (int i = 0; ji->advice && i < g_size; i++) {
    put(b, "%s", i ? ", " : "");
    put_string(b, ji->advice + (size_t)i * (size_t)ji->advice_len);
  }
  put(b, "],\n");
}

/* The problem and the grid. */
static void put_problem(strbuf *b, const options *o, const job_info *ji) {
  put(b, "  \"m\": %lld, \"n\": %lld, \"k\": %lld,\n", (long long)ji->m, (long long)ji->n,
      (long long)ji->k);
  put(b, "  \"dtype\": \"%s\", \"transa\": %s, \"transb\": %s,\n", tsr_dtype_name(ji->dtype),
      json_bool(o->transa), json_bool(o->transb));
  put(b, "  \"op_a\": \"%s\", \"op_b\": \"%s\",\n", trans_name(o->transa), trans_name(o->transb));
  put(b, "  \"alpha\": %.17g, \"beta\": %.17g, \"alpha_im\": %.17g, \"beta_im\": %.17g,\n",
      o->alpha, o->beta, o->alpha_im, o->beta_im);
  put(b, "  \"input\": \"%s\", \"a\": ", o->a_path ? "files" : "random");
  put_string(b, o->a_path);
  put(b, ", \"b\": ");
  put_string(b, o->b_path);
  put(b, ", \"c\": ");
  put_string(b, o->c_path);
  put(b, ",\n  \"ranks\": %d, \"grid\": [%d, %d], \"block\": %lld,\n", g_size, ji->nprow, ji->npcol,
      (long long)o->block);
  put(b, "  \"repeat\": %lld, \"warmup\": %lld,\n", (long long)o->repeat,
      (long long)(o->warmup > 0 ? o->warmup : 0));
}

/* Times, the pipeline's counts, traffic, the schedule and the broadcasts. */
static void put_figures(strbuf *b, const options *o, const results *r) {
  put(b,
      "  \"seconds\": {\"read\": %.6g, \"generate\": %.6g, \"compute\": %.6g, "
      "\"communication\": %.6g, \"local_gemm\": %.6g, \"gpu\": %.6g, \"write\": %.6g},\n",
      o->a_path ? r->t_read : 0.0, o->a_path ? 0.0 : r->t_read, r->t_compute, r->t_comm, r->t_local,
      r->t_gpu, r->t_write);
  put(b,
      "  \"pipeline\": {\"device\": \"%s\", \"staging\": %s, \"steps\": %lld, "
      "\"panel_width\": %lld, \"gemm_calls\": %llu, \"gemm_vendor_calls\": %llu, "
      "\"gemm_path\": \"%s\",\n    \"h2d_bytes\": %llu, \"h2d_copies\": %llu, "
      "\"d2h_bytes\": %llu, \"d2h_copies\": %llu, \"host_syncs\": %llu, "
      "\"host_syncs_in_loop\": %llu, \"copy_waits\": %llu, \"progress_calls\": %llu},\n",
      r->gpu ? "gpu" : "cpu", json_bool(r->staging), (long long)r->panels,
      (long long)r->panel_width, (unsigned long long)r->gemm_calls,
      (unsigned long long)r->gemm_vendor_calls,
      r->gemm_vendor_calls == 0               ? "native"
      : r->gemm_vendor_calls == r->gemm_calls ? "vendor"
                                              : "mixed",
      (unsigned long long)r->h2d_bytes, (unsigned long long)r->h2d_copies,
      (unsigned long long)r->d2h_bytes, (unsigned long long)r->d2h_copies,
      (unsigned long long)r->host_syncs, (unsigned long long)r->host_syncs_in_loop,
      (unsigned long long)r->copy_waits, (unsigned long long)r->progress_calls);
  put(b, "  \"gflops\": %.6g,\n", r->gflops);
  put(b, "  \"bytes_sent_max_rank\": %llu, \"bytes_received_max_rank\": %llu,\n",
      (unsigned long long)r->bytes_sent, (unsigned long long)r->bytes_received);
  put(b, "  \"algorithm\": \"%s\", \"replicas\": %d, \"bytes_redistributed_max_rank\": %llu,\n",
      algorithm_name(r->algorithm), r->replicas, (unsigned long long)r->bytes_redistributed);
  const uint64_t used[4] = {0, r->bcast_mpi, r->bcast_ring, r->bcast_tree};
  put(b, "  \"bcast\": {\"requested\": \"%s\", \"used\": [", bcast_name(o->bcast));
  for (int i = 1, n = 0; i < 4; i++)
    if (used[i]) put(b, "%s\"%s\"", n++ ? ", " : "", bcast_names[i]);
  put(b, "], \"broadcasts_max_rank\": {\"mpi\": %llu, \"ring\": %llu, \"tree\": %llu}},\n",
      (unsigned long long)used[1], (unsigned long long)used[2], (unsigned long long)used[3]);
  put(b, "  \"memory_needed_bytes\": ");
  put_i64_array(b, r->mem_needed, r->mem_needed ? g_size : 0);
  put(b, ",\n  \"peak_memory_bytes\": ");
  put_i64_array(b, r->peak_rss, r->peak_rss ? g_size : 0);
  put(b, ",\n");
}

static void put_verify(strbuf *b, const options *o, const results *r) {
  const char *detail = "";
  const char *verdict = verdict_name(o, r, &detail);
  put(b, "  \"verify\": {\"done\": %s, \"verdict\": \"%s\", \"detail\": \"%s\"",
      json_bool(r->verified), verdict, detail);
  if (r->verified) {
    const tsr_dist_verify_result *c = &r->check;
    put(b, ", \"nonfinite_inputs\": %lld, \"rows_checked\": %lld, \"rows_unverified\": %lld",
        (long long)c->nonfinite_inputs, (long long)c->rows_checked, (long long)c->rows_unverified);
    if (c->verdict != TSR_VERIFY_UNVERIFIED)
      put(b, ", \"freivalds_residual\": %.6g, \"freivalds_tolerance\": %.6g",
          c->residual < 1e308 ? c->residual : 1e308, c->tolerance);
    if (r->serial_done)
      put(b, ", \"serial_max_error\": %.6g, \"serial_tolerance\": %.6g",
          r->serial_err < 1e308 ? r->serial_err : 1e308, r->serial_tol);
  }
  put(b, "},\n");
}

/* Writes b to the JSON path with SIGINT, SIGTERM and SIGHUP blocked (no interruption between
   the temporary file and the rename). Returns 0 or EXIT_RUNTIME with msg. */
static int save(const options *o, const strbuf *b, char *msg, size_t cap) {
  if (b->failed) {
    snprintf(msg, cap, "cannot write the JSON report '%s': out of memory", o->json_path);
    return EXIT_RUNTIME;
  }
  int rc = 0;
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &old);
  if (tsr_file_write(o->json_path, b->p, b->len) != TSR_OK) {
    snprintf(msg, cap, "cannot write the JSON report: %s", tsr_last_error());
    rc = EXIT_RUNTIME;
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return rc;
}

/* The report's fields and their meaning: docs/tessera-gemm.schema.json (checked by
   tests/test_dist_cli.c). */
int write_json(const options *o, const job_info *ji, const results *r, int code) {
  if (!o->json_path) return 0;
  char msg[1024] = "";
  int rc = 0;
  if (g_rank == 0) {
    strbuf b = {0};
    put_header(&b, ji, code);
    put_ranks(&b, ji);
    put_problem(&b, o, ji);
    put_figures(&b, o, r);
    put_verify(&b, o, r);
    put(&b, "  \"output\": ");
    put_string(&b, r->written ? o->out_path : NULL);
    put(&b, "\n}\n");
    rc = save(o, &b, msg, sizeof msg);
    free(b.p);
  }
  return agree(rc, msg);
}
