/* SPDX-License-Identifier: BSD-3-Clause */
/* tessera-gemm's shared state (gemm_cli.h): the rank and size, printing from rank 0, the
   message of a failure (for the JSON report), and the agreement of all ranks on an exit code
   and its message (the library's tsr_dist_agree, so the job and the library agree by one
   rule). Every other file of the job uses these; none of them is defined twice, and none of
   them is defined in tessera_gemm.c. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gemm_cli.h"

int g_rank = 0, g_size = 1;

void say(FILE *f, const char *fmt, ...) {
  if (g_rank != 0) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
}

/* The job's failure or warning message for the JSON report (rank 0's, which after an
   agreement is every rank's). */
static char g_message[TSR_DIST_AGREE_MSG];

void note_message(const char *msg) {
  snprintf(g_message, sizeof g_message, "%s", msg ? msg : "");
}

const char *job_message(void) {
  return g_message;
}

int agree(int code, const char *msg) {
  /* The library's agreement (tsr_dist_agree): the lowest failing rank's code and message,
     " (rank r)" appended when some ranks succeeded. */
  char buf[TSR_DIST_AGREE_MSG];
  snprintf(buf, sizeof buf, "%s", msg ? msg : "");
  if (tsr_dist_agree(MPI_COMM_WORLD, &code, buf, sizeof buf) != TSR_OK) {
    say(stderr, "tessera-gemm: error: %s\n", tsr_last_error());
    note_message(tsr_last_error());
    return EXIT_RUNTIME;
  }
  if (code == 0) return 0;
  say(stderr, "tessera-gemm: error: %s\n", buf);
  note_message(buf);
  if (code == EXIT_USAGE) say(stderr, "try 'tessera-gemm --help'\n");
  return code;
}
