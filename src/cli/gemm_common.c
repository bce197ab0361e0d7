/* tessera-gemm's shared state (gemm_cli.h): the rank and size, printing from rank 0, and the
   agreement of all ranks on an exit code and its message. Every other file of the job uses
   these; none of them is defined twice. */
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

int agree(int code, const char *msg) {
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == 0) return 0;
  int mine = code == worst ? g_rank : g_size, first = g_size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  char buf[1200];
  memset(buf, 0, sizeof buf);
  if (g_rank == first) snprintf(buf, sizeof buf, "%s", msg ? msg : "");
  MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, MPI_COMM_WORLD);
  buf[sizeof buf - 1] = '\0';
  say(stderr, "tessera-gemm: error: %s\n", buf);
  if (worst == EXIT_USAGE) say(stderr, "try 'tessera-gemm --help'\n");
  return worst;
}
