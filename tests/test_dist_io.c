/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective MPI-IO .npy: every flavour of input file (C/Fortran order, little/big endian,
   format 1.0/2.0/3.0, f32/f64) read through darray views on every grid, write/read round
   trips, and bad files: missing, corrupt, truncated, wrong dtype or rank, unwritable output. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, truncate */
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include "test_dist_util.h"

static char dir[256];

static int group_setup(void **state) {
  (void)state;
  if (dist_rank == 0) {
    snprintf(dir, sizeof dir, "/tmp/tsr_dist_io_XXXXXX");
    if (!mkdtemp(dir)) dir[0] = '\0';
  }
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  return dir[0] ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  MPI_Barrier(MPI_COMM_WORLD);
  if (dist_rank == 0) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[600];
    while (d && (e = readdir(d)))
      if (e->d_name[0] != '.') {
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        remove(p);
      }
    if (d) closedir(d);
    rmdir(dir);
  }
  return 0;
}

/* Number of files in the test folder whose name contains `part`. */
static int files_with(const char *part) {
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, part)) n++;
  if (d) closedir(d);
  return n;
}

/* Writes an m x n .npy file by hand (rank 0), independently of the library's writer. */
static void write_npy(const char *path, const double *x, int64_t m, int64_t n, const char *descr,
                      int fortran, int version) {
  if (dist_rank != 0) return;
  char dict[256];
  int dl =
      snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (%lld, %lld), }",
               descr, fortran ? "True" : "False", (long long)m, (long long)n);
  size_t pre = version == 1 ? 10 : 12;
  size_t total = pre + (size_t)dl + 1;
  size_t padded = (total + 63) / 64 * 64;
  unsigned char head[512];
  memcpy(head, "\x93NUMPY", 6);
  head[6] = (unsigned char)version;
  head[7] = 0;
  size_t hl = padded - pre;
  if (version == 1) {
    head[8] = (unsigned char)(hl & 0xff);
    head[9] = (unsigned char)(hl >> 8);
  } else {
    for (int b = 0; b < 4; b++)
      head[8 + b] = (unsigned char)(hl >> (8 * b));
  }
  memcpy(head + pre, dict, (size_t)dl);
  memset(head + pre + dl, ' ', padded - pre - (size_t)dl - 1);
  head[padded - 1] = '\n';
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fwrite(head, 1, padded, f);
  int f32 = descr[2] == '4', big = descr[0] == '>';
  size_t es = f32 ? 4 : 8;
  for (int64_t e = 0; e < m * n; e++) {
    int64_t i = fortran ? e % m : e / n, j = fortran ? e / m : e % n;
    unsigned char b[8];
    if (f32) {
      float v = (float)x[i * n + j];
      memcpy(b, &v, 4);
    } else {
      memcpy(b, &x[i * n + j], 8);
    }
    if (big)
      for (size_t k = 0; k < es / 2; k++) {
        unsigned char t = b[k];
        b[k] = b[es - 1 - k];
        b[es - 1 - k] = t;
      }
    fwrite(b, 1, es, f);
  }
  fclose(f);
}

static void test_read_every_flavour(void **state) {
  (void)state;
  const char *descrs[] = {"<f4", ">f4", "<f8", ">f8"};
  int64_t m = 13, n = 9;
  char path[400];
  snprintf(path, sizeof path, "%s/in.npy", dir);
  for (int d = 0; d < 4; d++)
    for (int fortran = 0; fortran < 2; fortran++)
      for (int version = 1; version <= 3; version++) {
        tsr_dtype dt = descrs[d][2] == '4' ? TSR_F32 : TSR_F64;
        double *x = dist_random(m, n, dt, (uint64_t)(d * 10 + fortran * 3 + version));
        write_npy(path, x, m, n, descrs[d], fortran, version);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int gi = 0; gi < DIST_NGRIDS; gi++) {
          if (!dist_grid_fits(gi)) continue;
          tsr_grid *g = NULL;
          TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, dist_grids[gi][0], dist_grids[gi][1], &g));
          for (int64_t nb = 2; nb <= 16; nb *= 4) {
            tsr_dmatrix *a = NULL;
            TSR_ASSERT_OK(tsr_dmatrix_read_npy(g, path, nb, nb + 1, TSR_CPU, &a));
            tsr_dmatrix_props info;
            TSR_ASSERT_OK(tsr_dmatrix_info(a, &info));
            assert_int_equal(info.m, m);
            assert_int_equal(info.n, n);
            assert_int_equal(info.dtype, dt);
            double err = dist_rel_error(a, x);
            if (err != 0.0)
              print_error("%s fortran=%d v%d grid %d: error %g\n", descrs[d], fortran, version, gi,
                          err);
            assert_true(err == 0.0);
            tsr_dmatrix_free(a);
          }
          TSR_ASSERT_OK(tsr_grid_free(g));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        free(x);
      }
}

/* Written by the collective writer, read back by the serial reader and by MPI-IO. */
static void test_write_round_trip(void **state) {
  (void)state;
  char path[400];
  snprintf(path, sizeof path, "%s/out.npy", dir);
  for (int gi = 0; gi < DIST_NGRIDS; gi++) {
    if (!dist_grid_fits(gi)) continue;
    tsr_grid *g = NULL;
    TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, dist_grids[gi][0], dist_grids[gi][1], &g));
    for (int dt = 0; dt < 2; dt++)
      for (int fortran = 0; fortran < 2; fortran++) {
        tsr_dtype dtype = dt ? TSR_F64 : TSR_F32;
        int64_t m = 17, n = 6;
        double *x = dist_random(m, n, dtype, (uint64_t)(gi * 7 + dt * 2 + fortran));
        tsr_dmatrix *a = dist_matrix_from(g, x, m, n, 4, 3, dtype), *b = NULL;
        TSR_ASSERT_OK(tsr_dmatrix_write_npy(a, path, fortran));
        if (dist_rank == 0) {
          tsr_npy_header h;
          TSR_ASSERT_OK(tsr_npy_read_header(path, &h));
          assert_int_equal(h.fortran_order, fortran);
          assert_int_equal(h.big_endian, 0);
          tsr_array *s = NULL;
          TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &s));
          double *v = tsr_test_read_f64(s);
          assert_memory_equal(v, x, (size_t)(m * n) * sizeof *v);
          free(v);
          tsr_array_release(s);
        }
        TSR_ASSERT_OK(tsr_dmatrix_read_npy(g, path, 5, 2, TSR_CPU, &b));
        assert_true(dist_rel_error(b, x) == 0.0);
        DIST_ASSERT(files_with(".tessera-tmp.") == 0);
        tsr_dmatrix_free(a);
        tsr_dmatrix_free(b);
        free(x);
      }
    TSR_ASSERT_OK(tsr_grid_free(g));
  }
}

static void raw_file(const char *path, const void *bytes, size_t len) {
  if (dist_rank == 0) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(bytes, 1, len, f);
    fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_bad_files(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_dmatrix *a = NULL;
  char path[400];
  snprintf(path, sizeof path, "%s/missing.npy", dir);
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 4, 4, TSR_CPU, &a), TSR_ERR_IO, NULL);
  assert_null(a);

  snprintf(path, sizeof path, "%s/corrupt.npy", dir);
  raw_file(path, "this is not a numpy file at all, not at all........", 52);
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 4, 4, TSR_CPU, &a), TSR_ERR_FORMAT, NULL);

  /* A valid header whose data is cut short. */
  double x[20];
  for (int i = 0; i < 20; i++)
    x[i] = i + 0.5;
  snprintf(path, sizeof path, "%s/trunc.npy", dir);
  write_npy(path, x, 4, 5, "<f8", 0, 1);
  if (dist_rank == 0) assert_int_equal(truncate(path, 64 + 8 * 10), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 4, 4, TSR_CPU, &a), TSR_ERR_FORMAT, NULL);

  /* An integer file is valid .npy but not a matrix we multiply. */
  snprintf(path, sizeof path, "%s/int.npy", dir);
  write_npy(path, x, 4, 5, "<f8", 0, 1);
  if (dist_rank == 0) {
    FILE *f = fopen(path, "r+b");
    char buf[64];
    assert_int_equal(fread(buf, 1, 64, f), 64);
    /* The magic and version hold NUL bytes: search the dictionary part only. */
    buf[63] = '\0';
    char *p = strstr(buf + 10, "<f8");
    assert_non_null(p);
    p[1] = 'i';
    buf[63] = '\n';
    fseek(f, 0, SEEK_SET);
    fwrite(buf, 1, 64, f);
    fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 4, 4, TSR_CPU, &a), TSR_ERR_DTYPE, "i64");

  /* Not 2-D. */
  snprintf(path, sizeof path, "%s/vec.npy", dir);
  if (dist_rank == 0) {
    tsr_array *v = NULL;
    int64_t shape[1] = {5};
    TSR_ASSERT_OK(tsr_from_host(1, shape, TSR_F64, TSR_CPU, x, &v));
    TSR_ASSERT_OK(tsr_npy_save(path, v));
    tsr_array_release(v);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 4, 4, TSR_CPU, &a), TSR_ERR_SHAPE, "2-D");
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, NULL, 4, 4, TSR_CPU, &a), TSR_ERR_NULL_POINTER, NULL);
  assert_null(a);

  /* Unwritable output: an error on every rank and no file left behind. */
  tsr_dmatrix *b = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 6, 6, 2, 2, TSR_F64, TSR_CPU, &b));
  TSR_ASSERT_OK(tsr_dmatrix_fill_random(b, 1, 0, 1));
  snprintf(path, sizeof path, "%s/no/such/dir/out.npy", dir);
  TSR_ASSERT_STATUS(tsr_dmatrix_write_npy(b, path, 0), TSR_ERR_IO, "does not exist");
  DIST_ASSERT(files_with(".tessera-tmp.") == 0);
  tsr_dmatrix_free(b);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* tsr_dmatrix_npy_open / _header / _read / _close: the header of the one open, two reads of
   one open file with other block sizes (C-order f32 and Fortran-order f64) against the values
   written, every NULL argument, and the open's errors (missing, FIFO, 1-D, i64). */
static void test_npy_handle(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  const int64_t m = 11, n = 7;
  double *x = dist_random(m, n, TSR_F32, 77);
  char path[400];
  for (int fortran = 0; fortran <= 1; fortran++) {
    tsr_dtype dt = fortran ? TSR_F64 : TSR_F32;
    snprintf(path, sizeof path, "%s/handle%d.npy", dir, fortran);
    write_npy(path, x, m, n, fortran ? "<f8" : "<f4", fortran, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    tsr_dmatrix_npy *f = NULL;
    TSR_ASSERT_OK(tsr_dmatrix_npy_open(g, path, &f));
    tsr_npy_header h;
    TSR_ASSERT_OK(tsr_dmatrix_npy_header(f, &h));
    DIST_ASSERT(h.ndim == 2 && h.shape[0] == m && h.shape[1] == n && h.dtype == dt &&
                h.fortran_order == fortran);
    const int64_t blocks[2][2] = {{3, 2}, {5, 8}};
    for (int r = 0; r < 2; r++) {
      tsr_dmatrix *a = NULL;
      TSR_ASSERT_OK(tsr_dmatrix_npy_read(f, blocks[r][0], blocks[r][1], TSR_CPU, &a));
      DIST_ASSERT(dist_rel_error(a, x) == 0.0);
      tsr_dmatrix_free(a);
    }
    tsr_dmatrix *a = NULL;
    TSR_ASSERT_STATUS(tsr_dmatrix_npy_read(f, 0, 2, TSR_CPU, &a), TSR_ERR_INVALID_ARGUMENT, NULL);
    assert_null(a);
    TSR_ASSERT_STATUS(tsr_dmatrix_npy_read(f, 2, 2, TSR_CPU, NULL), TSR_ERR_NULL_POINTER, "out");
    TSR_ASSERT_STATUS(tsr_dmatrix_npy_header(f, NULL), TSR_ERR_NULL_POINTER, "header");
    TSR_ASSERT_OK(tsr_dmatrix_npy_close(f));
  }
  free(x);
  tsr_dmatrix_npy *f = NULL;
  tsr_npy_header h;
  TSR_ASSERT_STATUS(tsr_dmatrix_npy_open(NULL, path, &f), TSR_ERR_NULL_POINTER, "grid");
  TSR_ASSERT_STATUS(tsr_dmatrix_npy_open(g, path, NULL), TSR_ERR_NULL_POINTER, "out");
  TSR_ASSERT_STATUS(tsr_dmatrix_npy_open(g, NULL, &f), TSR_ERR_NULL_POINTER, "path");
  TSR_ASSERT_STATUS(tsr_dmatrix_npy_header(NULL, &h), TSR_ERR_NULL_POINTER, "file");
  TSR_ASSERT_STATUS(tsr_dmatrix_npy_read(NULL, 2, 2, TSR_CPU, NULL), TSR_ERR_NULL_POINTER, "file");
  TSR_ASSERT_OK(tsr_dmatrix_npy_close(NULL));
  snprintf(path, sizeof path, "%s/nothere.npy", dir);
  TSR_ASSERT_STATUS(tsr_dmatrix_npy_open(g, path, &f), TSR_ERR_IO, "nothere.npy");
  assert_null(f);
  /* A FIFO is refused without opening it (no writer would ever come: an open would block). */
  snprintf(path, sizeof path, "%s/pipe.npy", dir);
  if (dist_rank == 0) assert_int_equal(mkfifo(path, 0600), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_ASSERT_STATUS(tsr_dmatrix_npy_open(g, path, &f), TSR_ERR_IO, "FIFO");
  MPI_Barrier(MPI_COMM_WORLD);
  if (dist_rank == 0) unlink(path);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* tsr_dist_agree: the lowest failing rank's code and message, " (rank r)" only when some ranks
   succeeded; nothing changes when none failed; truncation to cap; NULL code. */
static void test_agree(void **state) {
  (void)state;
  char msg[64];
  /* Nobody failed: code 0, message untouched. */
  int code = 0;
  snprintf(msg, sizeof msg, "untouched");
  TSR_ASSERT_OK(tsr_dist_agree(MPI_COMM_WORLD, &code, msg, sizeof msg));
  DIST_ASSERT(code == 0 && strcmp(msg, "untouched") == 0);
  /* Odd ranks fail with code 10 + rank: rank 1 wins, with its rank named. */
  code = dist_rank % 2 ? 10 + dist_rank : 0;
  snprintf(msg, sizeof msg, "failure of rank %d", dist_rank);
  TSR_ASSERT_OK(tsr_dist_agree(MPI_COMM_WORLD, &code, msg, sizeof msg));
  if (dist_size == 1)
    DIST_ASSERT(code == 0);
  else
    DIST_ASSERT(code == 11 && strcmp(msg, "failure of rank 1 (rank 1)") == 0);
  /* Every rank fails (the highest rank with the largest code): rank 0's code and message, as
     they are. */
  code = 5 + dist_rank;
  snprintf(msg, sizeof msg, "failure of rank %d", dist_rank);
  TSR_ASSERT_OK(tsr_dist_agree(MPI_COMM_WORLD, &code, msg, sizeof msg));
  DIST_ASSERT(code == 5 && strcmp(msg, "failure of rank 0") == 0);
  /* A short buffer gets a terminated prefix; a NULL message travels as "". */
  code = 3;
  snprintf(msg, sizeof msg, "a long message");
  TSR_ASSERT_OK(tsr_dist_agree(MPI_COMM_WORLD, &code, msg, 7));
  DIST_ASSERT(code == 3 && strcmp(msg, "a long") == 0);
  code = 4;
  TSR_ASSERT_OK(tsr_dist_agree(MPI_COMM_WORLD, &code, NULL, 0));
  DIST_ASSERT(code == 4);
  TSR_ASSERT_STATUS(tsr_dist_agree(MPI_COMM_WORLD, NULL, msg, sizeof msg), TSR_ERR_NULL_POINTER,
                    "code");
  /* Issue 48: MPI_COMM_NULL is TSR_ERR_MPI, found before any MPI call (Open MPI's default
     error handler would abort the job), *code and msg unchanged. */
  code = 7;
  snprintf(msg, sizeof msg, "mine");
  TSR_ASSERT_STATUS(tsr_dist_agree(MPI_COMM_NULL, &code, msg, sizeof msg), TSR_ERR_MPI,
                    "tsr_dist_agree: comm is MPI_COMM_NULL");
  DIST_ASSERT(code == 7 && strcmp(msg, "mine") == 0);
}

/* Paths that only some ranks can use (node-local folders), a FIFO, a device node, a name of
   244 bytes and a matrix over the MPI-IO INT_MAX limit: clean errors on every rank, no hang
   (alarm), nothing left behind, and the long name written. */
static void test_unlucky_paths(void **state) {
  (void)state;
  alarm(60);
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_dmatrix *a = NULL, *b = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 9, 7, 2, 2, TSR_F64, TSR_CPU, &b));
  TSR_ASSERT_OK(tsr_dmatrix_fill_random(b, 3, -1, 1));
  char path[600], name[300];

  if (dist_size > 1) {
    /* The input exists for rank 0 only: every rank fails, naming the rank that cannot see it. */
    snprintf(path, sizeof path, "%s/here.npy", dir);
    TSR_ASSERT_OK(tsr_dmatrix_write_npy(b, path, 0));
    if (dist_rank > 0) snprintf(path, sizeof path, "%s/only_rank0/here.npy", dir);
    TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, TSR_CPU, &a), TSR_ERR_IO, "rank 1");
    assert_null(a);
    /* The output folder exists for rank 0 only. */
    snprintf(path, sizeof path, "%s/rank0only.npy", dir);
    if (dist_rank > 0) snprintf(path, sizeof path, "%s/only_rank0/rank0only.npy", dir);
    TSR_ASSERT_STATUS(tsr_dmatrix_write_npy(b, path, 0), TSR_ERR_IO, "does not exist");
    DIST_ASSERT(files_with("rank0only") == 0);
    DIST_ASSERT(files_with(".tessera-tmp.") == 0);
  }

  /* A FIFO as input and as output. */
  snprintf(path, sizeof path, "%s/fifo.npy", dir);
  if (dist_rank == 0) assert_int_equal(mkfifo(path, 0600), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, TSR_CPU, &a), TSR_ERR_IO, "FIFO");
  TSR_ASSERT_STATUS(tsr_dmatrix_write_npy(b, path, 0), TSR_ERR_IO, "FIFO");
  struct stat sb;
  assert_int_equal(lstat(path, &sb), 0);
  assert_true(S_ISFIFO(sb.st_mode));
  MPI_Barrier(MPI_COMM_WORLD);
  if (dist_rank == 0) unlink(path);
  /* A device node is never replaced. */
  TSR_ASSERT_STATUS(tsr_dmatrix_write_npy(b, "/dev/null", 0), TSR_ERR_IO, "character device");
  assert_int_equal(stat("/dev/null", &sb), 0);
  assert_true(S_ISCHR(sb.st_mode));

  /* A legal 244-byte name: written (the temporary name stays short) and read back. */
  memset(name, 'L', 240);
  memcpy(name + 240, ".npy", 5);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  TSR_ASSERT_OK(tsr_dmatrix_write_npy(b, path, 0));
  DIST_ASSERT(files_with(".tessera-tmp.") == 0);
  {
    /* Read back through the host reader: the same values as the matrix. */
    tsr_array *back = NULL;
    TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &back));
    double *got = tsr_test_read_f64(back), *want = malloc(63 * sizeof *want);
    TSR_ASSERT_OK(tsr_dmatrix_gather(b, 0, want, TSR_ROW_MAJOR, 0));
    if (dist_rank == 0) assert_memory_equal(got, want, 63 * sizeof *want);
    free(got), free(want);
    tsr_array_release(back);
  }
  /* Open MPI's MPI-IO cannot open it (its shared-file-pointer file would exceed NAME_MAX): a
     clean error instead of an abort inside MPI_File_open. */
#if defined(OMPI_MAJOR_VERSION)
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, TSR_CPU, &a), TSR_ERR_INVALID_ARGUMENT,
                    "longer than");
  assert_null(a);
#endif
  /* 196 bytes (a path of 220): read with MPI-IO. */
  MPI_Barrier(MPI_COMM_WORLD);
  memset(name, 'S', 192);
  memcpy(name + 192, ".npy", 5);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  TSR_ASSERT_OK(tsr_dmatrix_write_npy(b, path, 0));
  TSR_ASSERT_OK(tsr_dmatrix_read_npy(g, path, 2, 2, TSR_CPU, &a));
  tsr_dmatrix_props info;
  TSR_ASSERT_OK(tsr_dmatrix_info(a, &info));
  assert_true(info.m == 9 && info.n == 7);
  tsr_dmatrix_free(a);
  a = NULL;

  /* Over INT_MAX rows (no data: 0 columns): the message names the file. */
  snprintf(path, sizeof path, "%s/huge.npy", dir);
  write_npy(path, NULL, INT64_C(2147483648), 0, "<f8", 0, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, TSR_CPU, &a), TSR_ERR_OVERFLOW, "huge.npy");
  assert_null(a);
  alarm(0);
  tsr_dmatrix_free(b);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* A well-formed .npy header of any descr for an m x n matrix (rank 0), followed by m * n
   zero elements of `itemsize` bytes. */
static void write_typed(const char *path, const char *descr, int64_t m, int64_t n,
                        size_t itemsize) {
  if (dist_rank == 0) {
    char dict[200];
    int dl = snprintf(dict, sizeof dict,
                      "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld), }", descr,
                      (long long)m, (long long)n);
    size_t padded = (10 + (size_t)dl + 1 + 63) / 64 * 64, data = (size_t)(m * n) * itemsize;
    unsigned char *file = calloc(1, padded + data);
    memcpy(file, "\x93NUMPY\x01\x00", 8);
    file[8] = (unsigned char)((padded - 10) & 0xff);
    file[9] = (unsigned char)((padded - 10) >> 8);
    memcpy(file + 10, dict, (size_t)dl);
    memset(file + 10 + dl, ' ', padded - 11 - (size_t)dl);
    file[padded - 1] = '\n';
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(file, 1, padded + data, f), padded + data);
    fclose(f);
    free(file);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Issue 48: every argument of tsr_dmatrix_read_npy is checked, and agreed on, before the file
   is touched; the path here does not exist, so each call failing with TSR_ERR_IO would mean
   it went to the file first. */
static void test_arguments_before_file(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  char path[400];
  snprintf(path, sizeof path, "%s/never_written.npy", dir);
  tsr_dmatrix *a = NULL;
  const tsr_device nowhere = {TSR_DEVICE_CUDA, 99};
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, TSR_CPU, NULL), TSR_ERR_NULL_POINTER,
                    "tsr_dmatrix_read_npy: out is NULL");
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(NULL, path, 2, 2, TSR_CPU, &a), TSR_ERR_NULL_POINTER,
                    "tsr_dmatrix_read_npy: grid is NULL");
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 0, 2, TSR_CPU, &a), TSR_ERR_INVALID_ARGUMENT,
                    "tsr_dmatrix_read_npy: block size 0 x 2 must be >= 1");
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, -3, TSR_CPU, &a), TSR_ERR_INVALID_ARGUMENT,
                    "block size 2 x -3 must be >= 1");
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, NULL, 0, 2, TSR_CPU, &a), TSR_ERR_INVALID_ARGUMENT,
                    "block size 0 x 2");
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, INT64_MAX, 2, TSR_CPU, &a), TSR_ERR_OVERFLOW,
                    "the row block size mb = 9223372036854775807 is over INT_MAX (2147483647)");
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, nowhere, &a), TSR_ERR_NO_DEVICE,
                    "tsr_dmatrix_read_npy: no CUDA device 99");
  if (dist_size > 1) {
    /* One rank's device is missing: every rank fails before the file, naming that rank. */
    TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, dist_rank == 1 ? nowhere : TSR_CPU, &a),
                      TSR_ERR_NO_DEVICE, "(rank 1)");
    TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2 + (dist_rank == 1), 2, TSR_CPU, &a),
                      TSR_ERR_INCONSISTENT, "mb, nb");
  }
  assert_null(a);
  /* The control: with good arguments the missing file is what fails. */
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, TSR_CPU, &a), TSR_ERR_IO,
                    "never_written.npy");
  assert_null(a);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* Issue 48: block sizes over MPI-IO's INT_MAX name the block size and the limit (not the
   matrix), when reading and when writing. */
static void test_block_size_over_int_max(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  char path[400];
  snprintf(path, sizeof path, "%s/seven_by_five.npy", dir);
  double *x = dist_random(7, 5, TSR_F64, 48);
  write_npy(path, x, 7, 5, "<f8", 0, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  tsr_dmatrix_npy *f = NULL;
  tsr_dmatrix *a = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_npy_open(g, path, &f));
  TSR_ASSERT_STATUS(tsr_dmatrix_npy_read(f, INT64_MAX, INT64_MAX, TSR_CPU, &a), TSR_ERR_OVERFLOW,
                    "seven_by_five.npy': the row block size mb = 9223372036854775807 is over "
                    "INT_MAX (2147483647)");
  DIST_ASSERT(strstr(tsr_last_error(), "7 x 5") == NULL);
  TSR_ASSERT_STATUS(tsr_dmatrix_npy_read(f, 3, (int64_t)INT_MAX + 1, TSR_CPU, &a), TSR_ERR_OVERFLOW,
                    "the column block size nb = 2147483648 is over INT_MAX");
  assert_null(a);
  /* Blocks larger than the matrix but within INT_MAX read as usual. */
  TSR_ASSERT_OK(tsr_dmatrix_npy_read(f, 1000, 3, TSR_CPU, &a));
  DIST_ASSERT(dist_rel_error(a, x) == 0.0);
  tsr_dmatrix_free(a);
  TSR_ASSERT_OK(tsr_dmatrix_npy_close(f));
  /* The writer of a matrix whose row block is over INT_MAX. */
  tsr_dmatrix *b = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 7, 5, INT64_MAX, 2, TSR_F64, TSR_CPU, &b));
  snprintf(path, sizeof path, "%s/huge_blocks.npy", dir);
  TSR_ASSERT_STATUS(tsr_dmatrix_write_npy(b, path, 0), TSR_ERR_OVERFLOW,
                    "huge_blocks.npy': the row block size mb = 9223372036854775807 is over "
                    "INT_MAX (2147483647)");
  DIST_ASSERT(files_with("huge_blocks") == 0);
  tsr_dmatrix_free(b);
  free(x);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* Issue 48: a well-formed .npy of a dtype Tessera does not read is TSR_ERR_DTYPE naming the
   descr, from tsr_dmatrix_npy_open and tsr_dmatrix_read_npy alike; a malformed descr stays
   TSR_ERR_FORMAT. */
static void test_unsupported_dtypes(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  static const struct {
    const char *descr;
    size_t itemsize;
  } types[] = {{"<c32", 32}, {"<u8", 8}, {"<f2", 2}, {"<u4", 4}, {"|b1", 1}};
  char path[400], want[120];
  snprintf(path, sizeof path, "%s/typed.npy", dir);
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    write_typed(path, types[t].descr, 7, 5, types[t].itemsize);
    snprintf(want, sizeof want, "unsupported dtype '%s'", types[t].descr);
    tsr_dmatrix_npy *f = NULL;
    tsr_dmatrix *a = NULL;
    TSR_ASSERT_STATUS(tsr_dmatrix_npy_open(g, path, &f), TSR_ERR_DTYPE, want);
    assert_null(f);
    TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, TSR_CPU, &a), TSR_ERR_DTYPE, want);
    assert_null(a);
  }
  write_typed(path, "<c9", 7, 5, 9);
  tsr_dmatrix *a = NULL;
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, TSR_CPU, &a), TSR_ERR_FORMAT,
                    "unsupported dtype '<c9'");
  TSR_ASSERT_OK(tsr_grid_free(g));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_read_every_flavour),
    cmocka_unit_test(test_write_round_trip),
    cmocka_unit_test(test_bad_files),
    cmocka_unit_test(test_unlucky_paths),
    cmocka_unit_test(test_npy_handle),
    cmocka_unit_test(test_agree),
    cmocka_unit_test(test_arguments_before_file),
    cmocka_unit_test(test_block_size_over_int_max),
    cmocka_unit_test(test_unsupported_dtypes),
};

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &dist_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &dist_size);
  int fails = cmocka_run_group_tests(tests, group_setup, group_teardown);
  int worst = 0;
  MPI_Allreduce(&fails, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst ? 1 : 0;
}
