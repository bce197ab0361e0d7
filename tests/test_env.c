/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one environment reader (src/core/env.c):
 *  - its table and the README's table of environment variables name the same variables with
 *    the same defaults (and, for choices, the same values): every row of the table is in the
 *    README, every TSR_* row of the README is in the table;
 *  - no source file in src/ reads a TSR_* variable with getenv() outside the reader;
 *  - the reader: choices (without case), numbers in range, blocks; a bad value keeps the
 *    default with one warning on stderr (once per variable) naming the variable, the value and
 *    the default; a bad value of an `error` row fails with TSR_ERR_INVALID_ARGUMENT naming them;
 *  - a repeated read of a choice (answered from the reader's per-thread memory) sees every
 *    setenv, putenv (a putenv'd buffer changed in place too), unsetenv and clearenv.
 * Arguments: the README and the src/ folder (ctest passes them).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/internal.h"

static const char *readme_path, *src_path;

/* One README row: name, values cell, default cell. */
typedef struct row {
  char name[64], values[512], def[64], effect[2048];
} row;

static int readme_rows(row *rows, int max) {
  FILE *f = fopen(readme_path, "r");
  assert_non_null(f);
  char line[8192];
  int n = 0, in_table = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "| variable | values | default | effect |", 40) == 0) {
      in_table = 1;
      continue;
    }
    if (!in_table) continue;
    if (line[0] != '|') break;
    if (strncmp(line, "| ---", 5) == 0) continue;
    /* | `NAME` | values | default | effect | */
    char *cells[4] = {0};
    char *p = line + 1;
    for (int c = 0; c < 4 && p; c++) {
      char *bar = strstr(p, " | ");
      if (c < 3 && !bar) break;
      if (bar) *bar = '\0';
      cells[c] = p;
      p = bar ? bar + 3 : NULL;
    }
    assert_non_null(cells[2]);
    assert_true(n < max);
    row *r = &rows[n++];
    assert_int_equal(sscanf(cells[0], " `%63[A-Z0-9_]`", r->name), 1);
    snprintf(r->values, sizeof r->values, "%s", cells[1]);
    snprintf(r->def, sizeof r->def, "%s", cells[2]);
    snprintf(r->effect, sizeof r->effect, "%s", cells[3] ? cells[3] : "");
  }
  fclose(f);
  return n;
}

/* The README's spelling of a default: `value`, or "unset". */
static void readme_default(const tsr__env_var *e, char *buf, size_t size) {
  if (*e->def)
    snprintf(buf, size, "`%s`", e->def);
  else
    snprintf(buf, size, "unset");
}

static void test_readme_matches_table(void **state) {
  (void)state;
  static row rows[64];
  const int n = readme_rows(rows, 64);
  assert_true(n >= TSR__ENV_COUNT);
  const tsr__env_var *t = tsr__env_table();
  for (int i = 0; i < TSR__ENV_COUNT; i++) {
    int found = -1;
    for (int j = 0; j < n; j++)
      if (strcmp(rows[j].name, t[i].name) == 0) found = j;
    if (found < 0) fail_msg("%s is in src/core/env.c's table but not in the README", t[i].name);
    char def[64];
    readme_default(&t[i], def, sizeof def);
    if (strcmp(rows[found].def, def) != 0)
      fail_msg("%s: default %s in the README, %s in src/core/env.c", t[i].name, rows[found].def,
               def);
    if (t[i].kind == TSR__ENV_CHOICE) { /* every choice appears as `choice` in the values cell */
      char values[128], *save = NULL;
      snprintf(values, sizeof values, "%s", t[i].values);
      for (char *v = strtok_r(values, "|", &save); v; v = strtok_r(NULL, "|", &save)) {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "`%s`", v);
        if (!strstr(rows[found].values, quoted))
          fail_msg("%s: the README's values (%s) lack %s", t[i].name, rows[found].values, quoted);
      }
    }
    if (t[i].alias) { /* a deprecated former name: said in its row, and no row of its own */
      char quoted[64];
      snprintf(quoted, sizeof quoted, "`%s`", t[i].alias);
      if (!strstr(rows[found].effect, quoted) || !strstr(rows[found].effect, "deprecated"))
        fail_msg("%s: the README's row does not name %s as its deprecated alias", t[i].name,
                 quoted);
      for (int j = 0; j < n; j++)
        if (strcmp(rows[j].name, t[i].alias) == 0)
          fail_msg("%s has a README row: it is the deprecated alias of %s", t[i].alias, t[i].name);
    }
  }
  for (int j = 0; j < n; j++) {
    if (strncmp(rows[j].name, "TSR_", 4) != 0) continue;
    int found = 0;
    for (int i = 0; i < TSR__ENV_COUNT; i++)
      found |= strcmp(rows[j].name, t[i].name) == 0;
    if (!found) fail_msg("%s is in the README but not in src/core/env.c's table", rows[j].name);
  }
}

/* Every getenv("TSR_...") in src/ is the reader's (the reader itself takes names from its
   table, so its getenv has no literal). */
static void scan_dir(const char *dir, int *hits) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (e->d_type == DT_DIR) {
      scan_dir(path, hits);
      continue;
    }
    FILE *f = fopen(path, "r");
    if (!f) continue;
    char line[4096];
    int ln = 0;
    while (fgets(line, sizeof line, f)) {
      ++ln;
      if (strstr(line, "getenv(\"TSR_") || strstr(line, "getenv(\"OMP_WAIT_POLICY")) {
        print_error("%s:%d reads a variable of the table without the reader: %s", path, ln, line);
        ++*hits;
      }
    }
    fclose(f);
  }
  closedir(d);
}

static void test_no_other_reader(void **state) {
  (void)state;
  int hits = 0;
  scan_dir(src_path, &hits);
  assert_int_equal(hits, 0);
}

/* stderr into a temporary file while `body` runs; returns the text (static buffer). */
static FILE *capture_begin(int *saved) {
  fflush(stderr);
  FILE *f = tmpfile();
  assert_non_null(f);
  *saved = dup(STDERR_FILENO);
  assert_true(*saved >= 0);
  assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
  return f;
}

static const char *capture_end(FILE *f, int saved) {
  static char text[4096];
  fflush(stderr);
  assert_true(dup2(saved, STDERR_FILENO) >= 0);
  close(saved);
  rewind(f);
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  return text;
}

static int occurrences(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
    ++n;
  return n;
}

static void test_reader(void **state) {
  (void)state;
  /* Choices: index, case, default when unset. */
  unsetenv("TSR_SCALAPACK_PATH");
  assert_int_equal(tsr__env_choice(TSR__ENV_SCALAPACK_PATH), 0);
  setenv("TSR_SCALAPACK_PATH", "Redistribute", 1);
  assert_int_equal(tsr__env_choice(TSR__ENV_SCALAPACK_PATH), 1);
  unsetenv("OMP_WAIT_POLICY");
  assert_int_equal(tsr__env_choice(TSR__ENV_OMP_WAIT_POLICY), -1);
  setenv("TSR_DIST_GPU_STAGING", "", 1); /* empty is unset */
  assert_int_equal(tsr__env_choice(TSR__ENV_DIST_GPU_STAGING), 0);
  assert_null(tsr__env_text(TSR__ENV_DIST_GPU_STAGING));
  unsetenv("TSR_DIST_GPU_STAGING");
  /* Flags. */
  setenv("TSR_BLAS_VERBOSE", "1", 1);
  assert_true(tsr__env_flag(TSR__ENV_BLAS_VERBOSE));
  unsetenv("TSR_BLAS_VERBOSE");
  assert_false(tsr__env_flag(TSR__ENV_BLAS_VERBOSE));
  assert_true(tsr__env_flag(TSR__ENV_WISDOM_WARN)); /* default 1 */
  /* Numbers: value, default, NaN for an unset "" default. */
  setenv("TSR_SUMMA_CHUNK_FLOPS", "1.5e7", 1);
  assert_true(tsr__env_number(TSR__ENV_SUMMA_CHUNK_FLOPS) == 1.5e7);
  unsetenv("TSR_SUMMA_CHUNK_FLOPS");
  /* Unset: NaN, the library's own choice (one GEMM a step, summa.c). */
  assert_true(isnan(tsr__env_number(TSR__ENV_SUMMA_CHUNK_FLOPS)));
  unsetenv("TSR_BCAST_ALPHA_BETA");
  assert_true(tsr__env_number(TSR__ENV_BCAST_ALPHA_BETA) == 32768); /* its default */
  unsetenv("TSR_GPU_CACHE_LIMIT");
  assert_true(isnan(tsr__env_number(TSR__ENV_GPU_CACHE_LIMIT)));
  /* Blocks. */
  int64_t b[3];
  setenv("TSR_CPU_GEMM_BLOCKS", "512,0,2048", 1);
  assert_true(tsr__env_blocks(TSR__ENV_CPU_GEMM_BLOCKS, b));
  assert_true(b[0] == 512 && b[1] == 0 && b[2] == 2048);
  unsetenv("TSR_CPU_GEMM_BLOCKS");
  assert_false(tsr__env_blocks(TSR__ENV_CPU_GEMM_BLOCKS, b));
}

/* A deprecated alias (TSR_BCAST_SHARED_CORES of TSR_BCAST_OVERSUBSCRIBED): read when the name
   is unset or empty, never when it is set; a bad value warns under the name it was found under;
   the per-thread memory of choices never answers with a stale alias. */
static void test_alias(void **state) {
  (void)state;
  const tsr__env_id id = TSR__ENV_BCAST_OVERSUBSCRIBED;
  assert_string_equal(tsr__env_table()[id].name, "TSR_BCAST_OVERSUBSCRIBED");
  assert_string_equal(tsr__env_table()[id].alias, "TSR_BCAST_SHARED_CORES");
  for (int i = 0; i < TSR__ENV_COUNT; i++)
    if (i != (int)id) assert_null(tsr__env_table()[i].alias);
  unsetenv("TSR_BCAST_OVERSUBSCRIBED");
  unsetenv("TSR_BCAST_SHARED_CORES");
  assert_int_equal(tsr__env_choice(id), 0); /* auto */
  assert_int_equal(tsr__env_choice(id), 0); /* the memory's answer */
  setenv("TSR_BCAST_SHARED_CORES", "1", 1);
  assert_int_equal(tsr__env_choice(id), 2);
  assert_string_equal(tsr__env_text(id), "1");
  setenv("TSR_BCAST_SHARED_CORES", "0", 1); /* the alias changed: never a remembered answer */
  assert_int_equal(tsr__env_choice(id), 1);
  assert_int_equal(tsr__env_choice(id), 1);
  setenv("TSR_BCAST_OVERSUBSCRIBED", "1", 1); /* the name wins */
  assert_int_equal(tsr__env_choice(id), 2);
  assert_int_equal(tsr__env_choice(id), 2);
  setenv("TSR_BCAST_OVERSUBSCRIBED", "", 1); /* empty reads as unset: the alias again */
  assert_int_equal(tsr__env_choice(id), 1);
  unsetenv("TSR_BCAST_OVERSUBSCRIBED");
  assert_int_equal(tsr__env_choice(id), 1);
  unsetenv("TSR_BCAST_SHARED_CORES");
  assert_int_equal(tsr__env_choice(id), 0);
  assert_null(tsr__env_text(id));
  int saved;
  FILE *f = capture_begin(&saved);
  setenv("TSR_BCAST_SHARED_CORES", "maybe", 1);
  const int c = tsr__env_choice(id);
  unsetenv("TSR_BCAST_SHARED_CORES");
  const char *text = capture_end(f, saved);
  assert_int_equal(c, 0);
  assert_non_null(strstr(
      text, "TSR_BCAST_SHARED_CORES=\"maybe\" is not one of auto|0|1; the default auto is used"));
}

static void test_bad_values(void **state) {
  (void)state;
  int saved;
  FILE *f = capture_begin(&saved);
  /* A number out of range or not a number: default, one warning for two reads. */
  setenv("TSR_BCAST_ALPHA_BETA", "-3", 1);
  const double x1 = tsr__env_number(TSR__ENV_BCAST_ALPHA_BETA);
  setenv("TSR_BCAST_ALPHA_BETA", "lots", 1);
  const double x2 = tsr__env_number(TSR__ENV_BCAST_ALPHA_BETA);
  unsetenv("TSR_BCAST_ALPHA_BETA");
  /* A choice that is none of the values. */
  setenv("TSR_GPU_ALLOC_CACHE", "off", 1);
  const int c = tsr__env_choice(TSR__ENV_GPU_ALLOC_CACHE);
  unsetenv("TSR_GPU_ALLOC_CACHE");
  /* Blocks with a fourth field. */
  int64_t b[3];
  setenv("TSR_CPU_GEMM_BLOCKS", "1,2,3,4", 1);
  const bool ok = tsr__env_blocks(TSR__ENV_CPU_GEMM_BLOCKS, b);
  unsetenv("TSR_CPU_GEMM_BLOCKS");
  const char *text = capture_end(f, saved);
  assert_true(x1 == 32768 && x2 == 32768);
  assert_int_equal(c, 1);
  assert_false(ok);
  assert_true(b[0] == 0 && b[1] == 0 && b[2] == 0);
  assert_int_equal(occurrences(text, "TSR_BCAST_ALPHA_BETA="), 1);
  assert_non_null(strstr(
      text,
      "TSR_BCAST_ALPHA_BETA=\"-3\" is not a number in [1, 1e+12]; the default 32768 is used"));
  assert_non_null(
      strstr(text, "TSR_GPU_ALLOC_CACHE=\"off\" is not one of 0|1; the default 1 is used"));
  assert_non_null(strstr(text, "TSR_CPU_GEMM_BLOCKS=\"1,2,3,4\" is not kc,mc,nc"));
  assert_int_equal(occurrences(text, "tessera: warning: "), 3);

  /* An error row: a status and a message naming the variable and the value; no warning. */
  f = capture_begin(&saved);
  setenv("TSR_GEMM", "fastest", 1);
  const int g = tsr__env_choice(TSR__ENV_GEMM);
  unsetenv("TSR_GEMM");
  text = capture_end(f, saved);
  assert_int_equal(g, -2);
  assert_string_equal(text, "");
  assert_non_null(
      strstr(tsr_last_error(), "TSR_GEMM=\"fastest\" is not one of auto|native|vendor"));
}

/* tsr__env_choice's per-thread memory of a variable's entry (env.c, tsr__env_memo): a repeated
   read gives what a new read of the environment gives after every way a program changes it
   (TSR_GEMM is read by every tsr_gemm call, and tests change it between calls). */
static void test_repeat_reads(void **state) {
  (void)state;
  extern char **environ;
  const tsr__env_id g = TSR__ENV_GEMM; /* auto|native|vendor, default auto */
  unsetenv("TSR_GEMM");
  assert_int_equal(tsr__env_choice(g), 0);
  assert_int_equal(tsr__env_choice(g), 0); /* remembered: unset */
  setenv("TSR_GEMM", "native", 1);         /* appended: after the remembered last entry */
  assert_int_equal(tsr__env_choice(g), 1);
  assert_int_equal(tsr__env_choice(g), 1);
  setenv("TSR_GEMM", "VENDOR", 1); /* replaced: another string in the slot */
  assert_int_equal(tsr__env_choice(g), 2);
  setenv("TSR_GEMM", "native", 1); /* back to a text read before (glibc may reuse its string) */
  assert_int_equal(tsr__env_choice(g), 1);
  /* Another variable set before it and removed: the entries after it move down. */
  setenv("TSR_TEST_MEMO_OTHER", "x", 1);
  assert_int_equal(tsr__env_choice(g), 1);
  unsetenv("TSR_TEST_MEMO_OTHER");
  assert_int_equal(tsr__env_choice(g), 1);
  /* Another variable: the one remembered is replaced, and the first one read again. */
  setenv("TSR_SCALAPACK_PATH", "redistribute", 1);
  assert_int_equal(tsr__env_choice(TSR__ENV_SCALAPACK_PATH), 1);
  assert_int_equal(tsr__env_choice(g), 1);
  unsetenv("TSR_SCALAPACK_PATH");
  /* A bad value is not remembered: every read fails with its message. */
  setenv("TSR_GEMM", "fastest", 1);
  for (int i = 0; i < 2; ++i) {
    tsr_clear_error();
    assert_int_equal(tsr__env_choice(g), -2);
    assert_non_null(strstr(tsr_last_error(), "TSR_GEMM=\"fastest\""));
  }
  /* putenv: the environment holds the caller's buffer, and a change of its text is a change of
     the variable, with no call in between. */
  static char buf[] = "TSR_GEMM=vendor";
  assert_int_equal(putenv(buf), 0);
  assert_int_equal(tsr__env_choice(g), 2);
  memcpy(buf + 9, "native", 7);
  assert_int_equal(tsr__env_choice(g), 1);
  memcpy(buf + 9, "fast!", 6);
  assert_int_equal(tsr__env_choice(g), -2);
  memcpy(buf + 9, "auto", 5);
  assert_int_equal(tsr__env_choice(g), 0);
  unsetenv("TSR_GEMM"); /* the last entry moves: remembered "auto" must not answer */
  setenv("TSR_GEMM", "vendor", 1);
  assert_int_equal(tsr__env_choice(g), 2);
  /* An empty value reads as unset (the default), and is remembered as such. */
  setenv("TSR_GEMM", "", 1);
  assert_int_equal(tsr__env_choice(g), 0);
  assert_int_equal(tsr__env_choice(g), 0);
  setenv("TSR_GEMM", "native", 1);
  assert_int_equal(tsr__env_choice(g), 1);
  /* clearenv (environ NULL), then a new environment: the copies of the old one put back. */
  size_t n = 0;
  while (environ[n])
    ++n;
  char **saved = malloc((n + 1) * sizeof *saved);
  assert_non_null(saved);
  for (size_t i = 0; i < n; ++i)
    assert_non_null(saved[i] = strdup(environ[i]));
  assert_int_equal(clearenv(), 0);
  assert_int_equal(tsr__env_choice(g), 0);
  assert_int_equal(tsr__env_choice(g), 0);
  setenv("TSR_GEMM", "vendor", 1);
  assert_int_equal(tsr__env_choice(g), 2);
  assert_int_equal(clearenv(), 0);
  for (size_t i = 0; i < n; ++i) {
    if (strncmp(saved[i], "TSR_GEMM=", 9) == 0) { /* removed below: set as a copy */
      assert_int_equal(setenv("TSR_GEMM", saved[i] + 9, 1), 0);
      free(saved[i]);
    } else {
      assert_int_equal(putenv(saved[i]), 0); /* the environment keeps it: not freed */
    }
  }
  free(saved);
  assert_int_equal(tsr__env_choice(g), 1); /* the "native" of before */
  unsetenv("TSR_GEMM");
  assert_int_equal(tsr__env_choice(g), 0);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s README.md SRC_DIR\n", argv[0]);
    return 2;
  }
  readme_path = argv[1];
  src_path = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_readme_matches_table),
      cmocka_unit_test(test_no_other_reader),
      cmocka_unit_test(test_reader),
      cmocka_unit_test(test_bad_values),
      cmocka_unit_test(test_alias),
      cmocka_unit_test(test_repeat_reads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
