/* tessera-gemm's reports: the text summary on stdout and the JSON file. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_cli.h"

const char *algorithm_name(int a) {
  return a == TSR_DIST_GEMM_2_5D ? "2.5d" : a == TSR_DIST_GEMM_AUTO ? "auto" : "summa";
}

void print_results(const options *o, tsr_dtype dtype, const results *r) {
  say(stdout,
      "time (s): read %.4f  compute %.4f  communication %.4f  write %.4f  (median of %lld%s)\n",
      r->t_read, r->t_compute, r->t_comm, r->t_write, (long long)o->repeat,
      o->warmup ? ", after warm-up" : "");
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

static const char *verdict_name(const results *r) {
  if (!r->verified) return "skipped";
  switch (r->check.verdict) {
  case TSR_VERIFY_PASSED: return "passed";
  case TSR_VERIFY_FAILED: return "failed";
  case TSR_VERIFY_UNVERIFIED: return "not verified: NaN/Inf in the inputs";
  case TSR_VERIFY_PARTIAL: return "partially verified: rows may overflow";
  }
  return "?";
}

int write_json(const options *o, const job_info *ji, const results *r, int code) {
  if (!o->json_path) return 0;
  char msg[1024] = "";
  int rc = 0;
  if (g_rank == 0) {
    strbuf b = {0};
    put(&b, "{\n  \"program\": \"tessera-gemm\",\n  \"version\": \"%s\",\n", TSR_VERSION_STRING);
    put(&b, "  \"m\": %lld, \"n\": %lld, \"k\": %lld,\n", (long long)ji->m, (long long)ji->n,
        (long long)ji->k);
    put(&b, "  \"dtype\": \"%s\", \"transa\": %s, \"transb\": %s,\n", tsr_dtype_name(ji->dtype),
        o->transa ? "true" : "false", o->transb ? "true" : "false");
    put(&b, "  \"alpha\": %.17g, \"beta\": %.17g,\n", o->alpha, o->beta);
    put(&b, "  \"input\": \"%s\", \"a\": ", o->a_path ? "files" : "random");
    put_string(&b, o->a_path);
    put(&b, ", \"b\": ");
    put_string(&b, o->b_path);
    put(&b, ", \"c\": ");
    put_string(&b, o->c_path);
    put(&b, ",\n  \"ranks\": %d, \"grid\": [%d, %d], \"block\": %lld,\n", g_size, ji->nprow,
        ji->npcol, (long long)o->block);
    put(&b, "  \"devices\": [");
    for (int i = 0; ji->devices && i < g_size; i++) {
      put(&b, "%s", i ? ", " : "");
      put_string(&b, ji->devices + i * 64);
    }
    put(&b, "],\n  \"binding_advice\": [");
    for (int i = 0; ji->advice && i < g_size; i++) {
      put(&b, "%s", i ? ", " : "");
      put_string(&b, ji->advice + (size_t)i * (size_t)ji->advice_len);
    }
    put(&b, "],\n  \"repeat\": %lld, \"warmup\": %lld,\n", (long long)o->repeat,
        (long long)o->warmup);
    put(&b,
        "  \"seconds\": {\"read\": %.6g, \"compute\": %.6g, \"communication\": %.6g, "
        "\"local_gemm\": %.6g, \"gpu\": %.6g, \"write\": %.6g},\n",
        r->t_read, r->t_compute, r->t_comm, r->t_local, r->t_gpu, r->t_write);
    put(&b,
        "  \"pipeline\": {\"device\": \"%s\", \"staging\": %s, \"steps\": %lld, "
        "\"panel_width\": %lld, \"gemm_calls\": %llu, \"gemm_vendor_calls\": %llu, "
        "\"gemm_path\": \"%s\",\n    \"h2d_bytes\": %llu, \"h2d_copies\": %llu, "
        "\"d2h_bytes\": %llu, \"d2h_copies\": %llu, \"host_syncs\": %llu, "
        "\"host_syncs_in_loop\": %llu, \"copy_waits\": %llu, \"progress_calls\": %llu},\n",
        r->gpu ? "gpu" : "cpu", r->staging ? "true" : "false", (long long)r->panels,
        (long long)r->panel_width, (unsigned long long)r->gemm_calls,
        (unsigned long long)r->gemm_vendor_calls,
        r->gemm_vendor_calls == 0               ? "native"
        : r->gemm_vendor_calls == r->gemm_calls ? "vendor"
                                                : "mixed",
        (unsigned long long)r->h2d_bytes, (unsigned long long)r->h2d_copies,
        (unsigned long long)r->d2h_bytes, (unsigned long long)r->d2h_copies,
        (unsigned long long)r->host_syncs, (unsigned long long)r->host_syncs_in_loop,
        (unsigned long long)r->copy_waits, (unsigned long long)r->progress_calls);
    put(&b, "  \"gflops\": %.6g,\n", r->gflops);
    put(&b, "  \"bytes_sent_max_rank\": %llu, \"bytes_received_max_rank\": %llu,\n",
        (unsigned long long)r->bytes_sent, (unsigned long long)r->bytes_received);
    put(&b, "  \"algorithm\": \"%s\", \"replicas\": %d, \"bytes_redistributed_max_rank\": %llu,\n",
        algorithm_name(r->algorithm), r->replicas, (unsigned long long)r->bytes_redistributed);
    put(&b, "  \"memory_needed_bytes\": ");
    put_i64_array(&b, r->mem_needed, r->mem_needed ? g_size : 0);
    put(&b, ",\n  \"peak_memory_bytes\": ");
    put_i64_array(&b, r->peak_rss, r->peak_rss ? g_size : 0);
    put(&b, ",\n  \"verify\": {\"done\": %s, \"verdict\": \"%s\"", r->verified ? "true" : "false",
        verdict_name(r));
    if (r->verified) {
      const tsr_dist_verify_result *c = &r->check;
      put(&b, ", \"nonfinite_inputs\": %lld, \"rows_checked\": %lld, \"rows_unverified\": %lld",
          (long long)c->nonfinite_inputs, (long long)c->rows_checked,
          (long long)c->rows_unverified);
      if (c->verdict != TSR_VERIFY_UNVERIFIED)
        put(&b, ", \"freivalds_residual\": %.6g, \"freivalds_tolerance\": %.6g",
            c->residual < 1e308 ? c->residual : 1e308, c->tolerance);
      if (r->serial_done)
        put(&b, ", \"serial_max_error\": %.6g, \"serial_tolerance\": %.6g",
            r->serial_err < 1e308 ? r->serial_err : 1e308, r->serial_tol);
      put(&b, ", \"passed\": %s", r->passed ? "true" : "false");
    }
    put(&b, "},\n  \"output\": ");
    put_string(&b, r->written ? o->out_path : NULL);
    put(&b, ",\n  \"exit_code\": %d\n}\n", code);
    if (b.failed) {
      snprintf(msg, sizeof msg, "cannot write the JSON report '%s': out of memory", o->json_path);
      rc = EXIT_RUNTIME;
    } else {
      /* No interruption between the temporary file and the rename. */
      sigset_t block, old;
      sigemptyset(&block);
      sigaddset(&block, SIGINT);
      sigaddset(&block, SIGTERM);
      sigaddset(&block, SIGHUP);
      sigprocmask(SIG_BLOCK, &block, &old);
      if (tsr_file_write(o->json_path, b.p, b.len) != TSR_OK) {
        snprintf(msg, sizeof msg, "cannot write the JSON report: %s", tsr_last_error());
        rc = EXIT_RUNTIME;
      }
      sigprocmask(SIG_SETMASK, &old, NULL);
    }
    free(b.p);
  }
  return agree(rc, msg);
}
