/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A benchmark's output file (JSON): the text is built in memory (bench_out_open, a stdio
 * stream from open_memstream) and written with the library's one checked write path,
 * tsr_file_write (bench_out_close): the target is checked first (a FIFO, device, directory or
 * symbolic link is refused, never replaced or waited on), the data goes to a temporary file
 * beside it with every write checked, is synced and renamed; nothing is left on failure.
 * bench_blas, which must not link libtessera, writes its JSON with stdio itself.
 */
#ifndef TSR_BENCH_OUT_H
#define TSR_BENCH_OUT_H

#include <stdio.h>
#include <stdlib.h>

#include "tessera/io.h"
#include "tessera/status.h"

typedef struct bench_out {
  FILE *f;
  char *buf;
  size_t len;
} bench_out;

/* The stream to fprintf into, or NULL (out of memory). */
static inline FILE *bench_out_open(bench_out *o) {
  o->buf = NULL;
  o->len = 0;
  o->f = open_memstream(&o->buf, &o->len);
  return o->f;
}

/* Writes what was printed to path; 0, or 1 after saying why on stderr (prog: the program). */
static inline int bench_out_close(bench_out *o, const char *prog, const char *path) {
  int bad = ferror(o->f) != 0;
  bad = (fclose(o->f) != 0) || bad;
  int rc = 0;
  if (bad) {
    fprintf(stderr, "%s: cannot write %s: out of memory\n", prog, path);
    rc = 1;
  } else if (tsr_file_write(path, o->buf, o->len) != TSR_OK) {
    fprintf(stderr, "%s: %s\n", prog, tsr_last_error());
    rc = 1;
  }
  free(o->buf);
  o->buf = NULL;
  return rc;
}

#endif /* TSR_BENCH_OUT_H */
