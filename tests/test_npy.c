/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * .npy files: header parsing and formatting, load of every flavour (dtype x C/Fortran order x
 * byte order x format version), save of strided views, the real data files, and malformed
 * input. The files are written here byte by byte from the NEP 1 description, independently
 * of tsr_npy_format_header(), so a bug shared by the reader and the writer cannot hide.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "tsr_test.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TSR_DATA_DIR
#error "TSR_DATA_DIR must name the data/ folder"
#endif

static char g_dir[64];

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* ------------------------------------------------------------- independent writer ---- */

/* magic, version major.0, header length (2 bytes in 1.0, 4 in 2.0/3.0), the dict, spaces and
   '\n' up to a multiple of `align` bytes. Returns the total length. */
static size_t build_header(unsigned char *out, int major, const char *dict, size_t align) {
  size_t prefix = major == 1 ? 10 : 12;
  size_t dl = strlen(dict);
  size_t total = (prefix + dl + 1 + align - 1) / align * align;
  size_t hlen = total - prefix;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)major;
  out[7] = 0;
  for (size_t k = 0; k < prefix - 8; k++)
    out[8 + k] = (unsigned char)(hlen >> (8 * k));
  memcpy(out + prefix, dict, dl);
  memset(out + prefix + dl, ' ', total - prefix - dl - 1);
  out[total - 1] = '\n';
  return total;
}

static void write_file(const char *path, const void *a, size_t na, const void *b, size_t nb) {
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(a, 1, na, fp), na);
  if (nb) assert_int_equal(fwrite(b, 1, nb, fp), nb);
  assert_int_equal(fclose(fp), 0);
}

/* Parses a header from a heap buffer of exactly `len` bytes (ASan sees any over-read). */
static tsr_status parse_exact(const void *bytes, size_t len, tsr_npy_header *h) {
  void *copy = malloc(len ? len : 1);
  assert_non_null(copy);
  if (len) memcpy(copy, bytes, len);
  tsr_status st = tsr_npy_parse_header(len ? copy : NULL, len, h);
  free(copy);
  return st;
}

static tsr_status parse_dict(int major, const char *dict, tsr_npy_header *h) {
  unsigned char buf[4096];
  size_t n = build_header(buf, major, dict, 16);
  return parse_exact(buf, n, h);
}

static void shape_text(int ndim, const int64_t *shape, char *buf, size_t cap) {
  size_t o = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < ndim; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%" PRId64 ",", shape[i]);
  snprintf(buf + o, cap - o, ")");
}

/* --------------------------------------------------------------------- flavours ------ */

static const tsr_dtype k_dtypes[4] = {TSR_F32, TSR_F64, TSR_I32, TSR_I64};
static const char *const k_kinds[4] = {"f4", "f8", "i4", "i8"};

/* Bit pattern of a random value of the dtype (from x in [-1, 1)). */
static uint64_t value_bits(tsr_dtype dt, double x) {
  uint64_t bits = 0;
  if (dt == TSR_F32) {
    float f = (float)(x * 1000.0);
    uint32_t u;
    memcpy(&u, &f, 4);
    bits = u;
  } else if (dt == TSR_F64) {
    double d = x * 1000.0;
    memcpy(&bits, &d, 8);
  } else if (dt == TSR_I32) {
    bits = (uint32_t)(int32_t)(x * 2147483647.0);
  } else {
    bits = (uint64_t)(int64_t)(x * 9.2e18);
  }
  return bits;
}

static void put_bits(unsigned char *p, uint64_t bits, size_t itemsize, int big) {
  for (size_t k = 0; k < itemsize; k++)
    p[big ? itemsize - 1 - k : k] = (unsigned char)(bits >> (8 * k));
}

static void put_native(unsigned char *p, uint64_t bits, size_t itemsize) {
  if (itemsize == 4) {
    uint32_t u = (uint32_t)bits;
    memcpy(p, &u, 4);
  } else {
    memcpy(p, &bits, 8);
  }
}

/* Offset of C-order element c in Fortran order. */
static int64_t fortran_offset(int64_t c, int ndim, const int64_t *shape) {
  int64_t idx[8];
  for (int k = ndim - 1; k >= 0; k--) {
    idx[k] = c % shape[k];
    c /= shape[k];
  }
  int64_t f = 0;
  for (int k = ndim - 1; k >= 0; k--)
    f = f * shape[k] + idx[k];
  return f;
}

/* Writes one file and checks tsr_npy_read_header and tsr_npy_load against the values. */
static void check_flavour(int di, int fortran, int big, int major, int ndim, const int64_t *shape,
                          int style, uint64_t seed) {
  tsr_dtype dt = k_dtypes[di];
  size_t isz = (dt == TSR_F32 || dt == TSR_I32) ? 4 : 8;
  int64_t n = tsr_test_numel(ndim, shape);
  double *x = malloc((size_t)n * sizeof(double) + 8);
  unsigned char *ref = malloc((size_t)n * isz + 8), *file = malloc((size_t)n * isz + 8);
  unsigned char *got = malloc((size_t)n * isz + 8);
  assert_true(x && ref && file && got);
  tsr_test_fill_random(x, (size_t)n, seed);
  for (int64_t c = 0; c < n; c++) {
    uint64_t bits = value_bits(dt, x[c]);
    put_native(ref + c * isz, bits, isz);
    int64_t at = fortran ? fortran_offset(c, ndim, shape) : c;
    put_bits(file + at * isz, bits, isz, big);
  }

  char descr[8], sh[256], dict[512];
  snprintf(descr, sizeof descr, "%c%s", big ? '>' : '<', k_kinds[di]);
  shape_text(ndim, shape, sh, sizeof sh);
  const char *order = fortran ? "True" : "False";
  switch (style % 3) {
  case 0: /* what numpy.save writes */
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, order,
             sh);
    break;
  case 1: /* other key order, double quotes, no trailing comma */
    snprintf(dict, sizeof dict, "{\"shape\": %s, \"descr\": \"%s\", \"fortran_order\": %s}", sh,
             descr, order);
    break;
  default: /* whitespace and line breaks between tokens */
    snprintf(dict, sizeof dict, " {\n  'fortran_order' :%s ,\n\t'shape':%s,'descr' : '%s' ,\n}",
             order, sh, descr);
    break;
  }
  unsigned char header[1024];
  size_t hl = build_header(header, major, dict, style == 0 ? 64 : 16);
  char path[256], name[64];
  snprintf(name, sizeof name, "flavour_%" PRIu64 ".npy", seed);
  path_in(path, sizeof path, name);
  write_file(path, header, hl, file, (size_t)n * isz);

  tsr_npy_header h;
  TSR_ASSERT_OK(tsr_npy_read_header(path, &h));
  assert_int_equal(h.major_version, major);
  assert_int_equal(h.dtype, dt);
  assert_int_equal(h.big_endian, big);
  assert_int_equal(h.fortran_order, fortran);
  assert_int_equal(h.ndim, ndim);
  for (int k = 0; k < ndim; k++)
    assert_int_equal(h.shape[k], shape[k]);
  assert_int_equal(h.size, n);
  assert_int_equal(h.data_offset, hl);

  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &a));
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  assert_int_equal(info.dtype, dt);
  assert_int_equal(info.ndim, ndim);
  for (int k = 0; k < ndim; k++)
    assert_int_equal(info.shape[k], shape[k]);
  assert_int_equal(info.contiguous, 1);
  TSR_ASSERT_OK(tsr_array_read(a, got, (size_t)n * isz));
  if (memcmp(got, ref, (size_t)n * isz) != 0) {
    print_error("mismatch: dtype %s fortran %d big %d version %d shape %s style %d\n", descr,
                fortran, big, major, sh, style);
    fail();
  }
  tsr_array_release(a);
  remove(path);
  free(x);
  free(ref);
  free(file);
  free(got);
}

static void test_load_every_flavour(void **state) {
  (void)state;
  static const int64_t shapes[3][3] = {{3, 5, 4}, {67, 45, 1}, {11, 1, 1}};
  static const int ndims[3] = {3, 2, 1};
  uint64_t seed = 1;
  for (int di = 0; di < 4; di++)
    for (int fortran = 0; fortran < 2; fortran++)
      for (int big = 0; big < 2; big++)
        for (int major = 1; major <= 3; major++)
          for (int s = 0; s < 3; s++, seed++)
            check_flavour(di, fortran, big, major, ndims[s], shapes[s], (int)(seed % 3), seed);
}

static void test_load_high_rank_fortran(void **state) {
  (void)state;
  const int64_t shape[8] = {2, 3, 1, 2, 3, 2, 1, 3};
  check_flavour(1, 1, 1, 1, 8, shape, 0, 9001);
  check_flavour(2, 1, 0, 2, 8, shape, 1, 9002);
}

/* 0-d arrays, zero-size arrays, '=' and bare descr (native order), Python 2 'L' suffixes. */
static void test_parse_variants(void **state) {
  (void)state;
  tsr_npy_header h;
  TSR_ASSERT_OK(parse_dict(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &h));
  assert_int_equal(h.ndim, 0);
  assert_int_equal(h.size, 1);
  TSR_ASSERT_OK(parse_dict(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (0, 7), }", &h));
  assert_int_equal(h.ndim, 2);
  assert_int_equal(h.size, 0);
  assert_int_equal(h.shape[1], 7);
  TSR_ASSERT_OK(parse_dict(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3L, 4L), }", &h));
  assert_int_equal(h.size, 12);
  assert_int_equal(h.fortran_order, 1);
  const uint16_t one = 1;
  int host_big = *(const unsigned char *)&one == 0;
  TSR_ASSERT_OK(parse_dict(1, "{'descr': '=i8', 'fortran_order': False, 'shape': (5,)}", &h));
  assert_int_equal(h.dtype, TSR_I64);
  assert_int_equal(h.big_endian, host_big);
  TSR_ASSERT_OK(parse_dict(3, "{'descr': 'f8', 'fortran_order': False, 'shape': (5,)}", &h));
  assert_int_equal(h.dtype, TSR_F64);
  assert_int_equal(h.big_endian, host_big);
  assert_int_equal(h.major_version, 3);
  /* The largest f4 array whose byte count fits int64: 2^61 - 1 elements. */
  TSR_ASSERT_OK(parse_dict(2,
                           "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, "
                           "1, 1, 1, 2305843009213693951)}",
                           &h));
  assert_int_equal(h.ndim, 8);
  assert_int_equal(h.big_endian, 1);
  assert_int_equal(h.size, 2305843009213693951);
  TSR_ASSERT_STATUS(parse_dict(2,
                               "{'descr': '>f4', 'fortran_order': False, 'shape': "
                               "(2305843009213693952,)}",
                               &h),
                    TSR_ERR_FORMAT, "byte count overflows");
  /* A zero dimension does not excuse the others from overflowing. */
  TSR_ASSERT_STATUS(parse_dict(1,
                               "{'descr': '<f8', 'fortran_order': False, 'shape': "
                               "(0, 4611686018427387904, 4611686018427387904)}",
                               &h),
                    TSR_ERR_FORMAT, "overflows");
}

/* ---------------------------------------------------------------- malformed input ---- */

static const char k_good[] = "{'descr': '<f8', 'fortran_order': False, 'shape': (178, 13), }";

static void test_malformed(void **state) {
  (void)state;
  tsr_npy_header h;
  unsigned char buf[512];
  size_t n = build_header(buf, 1, k_good, 64);
  assert_int_equal(n, 128);
  TSR_ASSERT_OK(parse_exact(buf, n, &h));
  assert_int_equal(h.data_offset, 128);

  unsigned char bad[512];
  memcpy(bad, buf, n);
  bad[5] = 'X';
  TSR_ASSERT_STATUS(parse_exact(bad, n, &h), TSR_ERR_FORMAT, "magic");
  memcpy(bad, buf, n);
  bad[6] = 4;
  TSR_ASSERT_STATUS(parse_exact(bad, n, &h), TSR_ERR_FORMAT, "version 4.0");
  bad[6] = 1;
  bad[7] = 1;
  TSR_ASSERT_STATUS(parse_exact(bad, n, &h), TSR_ERR_FORMAT, "version 1.1");
  TSR_ASSERT_STATUS(parse_exact(buf, 40, &h), TSR_ERR_FORMAT,
                    "truncated header: need 128 bytes, file has 40");
  TSR_ASSERT_STATUS(parse_exact(buf, 0, &h), TSR_ERR_FORMAT, "empty");

  struct {
    const char *dict, *needle;
  } cases[] = {
      {"{'descr': '<f8' 'fortran_order': False, 'shape': (2, 3), }", "malformed"},
      {"{'descr': '|f8', 'fortran_order': False, 'shape': (2,), }", "'|'"},
      {"{'descr': '<c9', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype '<c9'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3, 4, 5, 6, 7, 8, 9), }",
       "more than 8"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, -4), }", "negative dimension -4"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, "
       "4611686018427387904), }",
       "overflows"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976,), }",
       "byte count overflows"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }",
       "does not fit in int64"},
      {"{'descr': '<f8', 'fortran_order': False, }", "missing key 'shape'"},
      {"{'fortran_order': False, 'shape': (2,), }", "missing key 'descr'"},
      {"{'descr': '<f8', 'shape': (2,), }", "missing key 'fortran_order'"},
      {"{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
       "duplicate key 'descr'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "unknown key"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5), }", "not a tuple"},
      {"{'descr': '<f8', 'fortran_order': 0, 'shape': (5,), }", "True or False"},
      {"{'descr': '<f8', 'fortran_order': Falsey, 'shape': (5,), }", "True or False"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5,), } x", "after the dictionary"},
      {"{'descr': '<f8, 'fortran_order': False, 'shape': (5,), }", "unsupported dtype"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (05,), }", "leading zero"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5,,), }", "malformed"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5.0,), }", "malformed"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': [5], }", "malformed"},
      {"{'descr': '<f\\x38', 'fortran_order': False, 'shape': (5,), }", "escape"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5,), ", "malformed"},
      {"'descr': '<f8', 'fortran_order': False, 'shape': (5,)", "malformed"},
      {"{}", "missing key"},
      {"", "malformed"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int major = 1; major <= 3; major++) {
      tsr_status st = parse_dict(major, cases[i].dict, &h);
      if (st != TSR_ERR_FORMAT || !strstr(tsr_last_error(), cases[i].needle)) {
        print_error("case %zu (%s): got %s \"%s\", want TSR_ERR_FORMAT with \"%s\"\n", i,
                    cases[i].dict, tsr_status_name(st), tsr_last_error(), cases[i].needle);
        fail();
      }
      assert_non_null(strstr(tsr_last_error(), "tsr_npy_parse_header: "));
    }
  }
  /* Well-formed headers of dtypes NumPy writes and Tessera does not read: TSR_ERR_DTYPE. */
  struct {
    const char *dict, *needle;
  } dtypes[] = {
      {"{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", "unsupported dtype '<f2'"},
      {"{'descr': '<c32', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype '<c32'"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype '<u4'"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", "structured"},
  };
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    for (int major = 1; major <= 3; major++)
      TSR_ASSERT_STATUS(parse_dict(major, dtypes[i].dict, &h), TSR_ERR_DTYPE, dtypes[i].needle);
  TSR_ASSERT_STATUS(tsr_npy_parse_header(buf, n, NULL), TSR_ERR_NULL_POINTER, "header");
  TSR_ASSERT_STATUS(tsr_npy_parse_header(NULL, 10, &h), TSR_ERR_NULL_POINTER, "buf");
}

/* Every strict prefix of a valid header fails cleanly; single-byte mutations never crash. */
static void test_truncations_and_mutations(void **state) {
  (void)state;
  tsr_npy_header h;
  unsigned char buf[512], m[512];
  for (int major = 1; major <= 3; major++) {
    size_t n = build_header(buf, major, k_good, 64);
    for (size_t len = 0; len < n; len++)
      TSR_ASSERT_STATUS(parse_exact(buf, len, &h), TSR_ERR_FORMAT, NULL);
    static const unsigned char values[] = {0,   ' ', '\'', '"', ',', ')',  '(',
                                           '}', '{', '-',  '9', 'L', 0x80, 0xff};
    for (size_t i = 0; i < n; i++)
      for (size_t v = 0; v < sizeof values; v++) {
        memcpy(m, buf, n);
        m[i] = values[v];
        tsr_status st = parse_exact(m, n, &h);
        assert_true(st == TSR_OK || st == TSR_ERR_FORMAT);
        if (st == TSR_OK) {
          assert_true(h.ndim >= 0 && h.ndim <= 8);
          assert_true(h.data_offset <= n);
        }
      }
  }
}

/* -------------------------------------------------------------- format_header -------- */

static void test_format_header(void **state) {
  (void)state;
  char buf[1024];
  size_t len = 0;
  const int64_t wine[2] = {178, 13};
  TSR_ASSERT_OK(tsr_npy_format_header(TSR_F64, 0, 2, wine, buf, sizeof buf, &len));
  assert_int_equal(len, 128);
  /* Byte for byte what numpy.save wrote into data/wine.npy. */
  unsigned char ref[128];
  FILE *fp = fopen(TSR_DATA_DIR "/wine.npy", "rb");
  assert_non_null(fp);
  assert_int_equal(fread(ref, 1, 128, fp), 128);
  fclose(fp);
  assert_memory_equal(buf, ref, 128);

  const int64_t shapes[4][8] = {{0}, {5}, {0, 3}, {1, 2, 3, 4, 5, 6, 7, 8}};
  const int ndims[4] = {0, 1, 2, 8};
  for (int s = 0; s < 4; s++)
    for (int di = 0; di < 4; di++)
      for (int fortran = 0; fortran < 2; fortran++) {
        TSR_ASSERT_OK(tsr_npy_format_header(k_dtypes[di], fortran, ndims[s], shapes[s], buf,
                                            sizeof buf, &len));
        assert_int_equal(len % 64, 0);
        assert_int_equal(buf[len - 1], '\n');
        tsr_npy_header h;
        TSR_ASSERT_OK(parse_exact(buf, len, &h));
        assert_int_equal(h.major_version, 1);
        assert_int_equal(h.dtype, k_dtypes[di]);
        assert_int_equal(h.fortran_order, fortran);
        assert_int_equal(h.big_endian, 0);
        assert_int_equal(h.ndim, ndims[s]);
        for (int k = 0; k < ndims[s]; k++)
          assert_int_equal(h.shape[k], shapes[s][k]);
        assert_int_equal(h.data_offset, len);
      }
  TSR_ASSERT_STATUS(tsr_npy_format_header(TSR_F64, 0, 2, wine, buf, 100, &len),
                    TSR_ERR_INVALID_ARGUMENT, "too small");
  TSR_ASSERT_STATUS(tsr_npy_format_header((tsr_dtype)7, 0, 2, wine, buf, sizeof buf, &len),
                    TSR_ERR_DTYPE, NULL);
  TSR_ASSERT_STATUS(tsr_npy_format_header(TSR_F64, 0, 9, shapes[3], buf, sizeof buf, &len),
                    TSR_ERR_INVALID_ARGUMENT, "ndim 9");
  const int64_t neg[2] = {3, -1};
  TSR_ASSERT_STATUS(tsr_npy_format_header(TSR_F64, 0, 2, neg, buf, sizeof buf, &len),
                    TSR_ERR_INVALID_ARGUMENT, "negative");
  TSR_ASSERT_STATUS(tsr_npy_format_header(TSR_F64, 0, 2, wine, NULL, 0, &len), TSR_ERR_NULL_POINTER,
                    NULL);
}

/* ------------------------------------------------------------------- real files ------ */

/* Reads `count` elements at the offset the header's own length field gives. */
static void *raw_data(const char *path, size_t itemsize, size_t count, size_t *offset) {
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  unsigned char pre[10];
  assert_int_equal(fread(pre, 1, 10, fp), 10);
  assert_int_equal(pre[6], 1);
  *offset = 10 + (size_t)pre[8] + 256 * (size_t)pre[9];
  void *data = malloc(itemsize * count);
  assert_non_null(data);
  assert_int_equal(fseek(fp, (long)*offset, SEEK_SET), 0);
  assert_int_equal(fread(data, itemsize, count, fp), count);
  fclose(fp);
  return data;
}

static void test_real_files(void **state) {
  (void)state;
  struct {
    const char *name;
    tsr_dtype dtype;
    size_t itemsize;
    int ndim;
    int64_t shape[2];
  } files[] = {{"wine.npy", TSR_F64, 8, 2, {178, 13}},
               {"wine_labels.npy", TSR_I64, 8, 1, {178, 1}},
               {"flower_gray_f32.npy", TSR_F32, 4, 2, {427, 640}}};
  for (size_t f = 0; f < 3; f++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TSR_DATA_DIR, files[f].name);
    size_t count = (size_t)tsr_test_numel(files[f].ndim, files[f].shape), offset;
    void *ref = raw_data(path, files[f].itemsize, count, &offset);
    assert_int_equal(offset, 128);
    tsr_array *a = NULL;
    TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &a));
    tsr_array_props info;
    TSR_ASSERT_OK(tsr_array_info(a, &info));
    assert_int_equal(info.dtype, files[f].dtype);
    assert_int_equal(info.ndim, files[f].ndim);
    for (int k = 0; k < info.ndim; k++)
      assert_int_equal(info.shape[k], files[f].shape[k]);
    void *got = malloc(count * files[f].itemsize);
    assert_non_null(got);
    TSR_ASSERT_OK(tsr_array_read(a, got, count * files[f].itemsize));
    assert_memory_equal(got, ref, count * files[f].itemsize);
    if (files[f].dtype == TSR_I64) { /* the cultivars: 59, 71 and 48 wines (data/README.md) */
      int counts[3] = {0, 0, 0};
      for (size_t i = 0; i < count; i++) {
        int64_t v = ((int64_t *)got)[i];
        assert_true(v >= 0 && v <= 2);
        counts[v]++;
      }
      assert_int_equal(counts[0], 59);
      assert_int_equal(counts[1], 71);
      assert_int_equal(counts[2], 48);
    }
    free(got);
    free(ref);
    tsr_array_release(a);
  }
}

/* ------------------------------------------------------------------------ save ------- */

/* Saves a transposed, sliced (negative and positive steps) view and reads it back both with
   tsr_npy_load and by hand. */
static void test_save_strided_views(void **state) {
  (void)state;
  for (int di = 0; di < 4; di++) {
    const int64_t shape[2] = {9, 8};
    double *host = NULL;
    tsr_array *a = tsr_test_random_array(2, shape, k_dtypes[di], TSR_CPU, 77 + di, &host);
    tsr_array *t = NULL, *s = NULL, *r = NULL;
    TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));                  /* 8x9 */
    TSR_ASSERT_OK(tsr_slice(t, 1, 1, TSR_SLICE_END, 2, &s));    /* 8x4: cols 1,3,5,7 */
    TSR_ASSERT_OK(tsr_slice(s, 0, -1, -TSR_SLICE_END, -3, &r)); /* 3x4: rows 7,4,1 */
    double ref[12];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        ref[i * 4 + j] = host[(1 + 2 * j) * 8 + (7 - 3 * i)];

    char path[256];
    path_in(path, sizeof path, "view.npy");
    TSR_ASSERT_OK(tsr_npy_save(path, r));
    tsr_array *b = NULL;
    TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &b));
    tsr_array_props info;
    TSR_ASSERT_OK(tsr_array_info(b, &info));
    assert_int_equal(info.ndim, 2);
    assert_int_equal(info.shape[0], 3);
    assert_int_equal(info.shape[1], 4);
    assert_int_equal(info.dtype, k_dtypes[di]);
    double *got = tsr_test_read_f64(b);
    for (int i = 0; i < 12; i++)
      assert_true(got[i] == ref[i]);

    /* By hand: version 1.0, little-endian C order, data on a 64-byte boundary. */
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    unsigned char file[1024];
    size_t n = fread(file, 1, sizeof file, fp);
    fclose(fp);
    size_t off = 10 + (size_t)file[8] + 256 * (size_t)file[9];
    assert_int_equal(file[6], 1);
    assert_int_equal(off % 64, 0);
    char expect[128];
    snprintf(expect, sizeof expect, "{'descr': '<%s', 'fortran_order': False, 'shape': (3, 4), }",
             k_kinds[di]);
    assert_memory_equal(file + 10, expect, strlen(expect));
    size_t isz = (k_dtypes[di] == TSR_F32 || k_dtypes[di] == TSR_I32) ? 4 : 8;
    assert_int_equal(n, off + 12 * isz);
    for (int i = 0; i < 12; i++) {
      uint64_t bits = 0;
      for (size_t k = 0; k < isz; k++)
        bits |= (uint64_t)file[off + i * isz + k] << (8 * k);
      double v;
      if (k_dtypes[di] == TSR_F32) {
        uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, 4);
        v = f;
      } else if (k_dtypes[di] == TSR_F64) {
        memcpy(&v, &bits, 8);
      } else if (k_dtypes[di] == TSR_I32) {
        v = (int32_t)(uint32_t)bits;
      } else {
        v = (double)(int64_t)bits;
      }
      assert_true(v == ref[i]);
    }
    free(got);
    free(host);
    tsr_array_release(a);
    tsr_array_release(t);
    tsr_array_release(s);
    tsr_array_release(r);
    tsr_array_release(b);
    remove(path);
  }
}

static void test_save_scalar_and_empty(void **state) {
  (void)state;
  char path[256];
  path_in(path, sizeof path, "scalar.npy");
  double x = 3.25;
  tsr_array *a = NULL, *b = NULL;
  TSR_ASSERT_OK(tsr_from_host(0, NULL, TSR_F64, TSR_CPU, &x, &a));
  TSR_ASSERT_OK(tsr_npy_save(path, a));
  TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &b));
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(b, &info));
  assert_int_equal(info.ndim, 0);
  double y = 0;
  TSR_ASSERT_OK(tsr_array_read(b, &y, sizeof y));
  assert_true(y == x);
  tsr_array_release(a);
  tsr_array_release(b);

  const int64_t shape[2] = {0, 3};
  TSR_ASSERT_OK(tsr_empty(2, shape, TSR_I32, TSR_CPU, &a));
  TSR_ASSERT_OK(tsr_npy_save(path, a));
  TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &b));
  TSR_ASSERT_OK(tsr_array_info(b, &info));
  assert_int_equal(info.ndim, 2);
  assert_int_equal(info.shape[0], 0);
  assert_int_equal(info.shape[1], 3);
  assert_int_equal(info.size, 0);
  tsr_array_release(a);
  tsr_array_release(b);
  remove(path);
}

/* Counts the entries of a folder (besides . and ..). */
static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

static void test_save_errors_leave_nothing(void **state) {
  (void)state;
  char dir[256], path[512];
  path_in(dir, sizeof dir, "save_errors");
  assert_int_equal(mkdir(dir, 0700), 0);
  const int64_t shape[2] = {4, 5};
  tsr_array *a = tsr_test_random_array(2, shape, TSR_F64, TSR_CPU, 5, NULL);

  snprintf(path, sizeof path, "%s/no/such/folder/x.npy", dir);
  TSR_ASSERT_STATUS(tsr_npy_save(path, a), TSR_ERR_IO, "No such file or directory");
  assert_int_equal(count_entries(dir), 0);

  /* The rename fails (the target is a folder): the complete temporary file must go too. */
  snprintf(path, sizeof path, "%s/target", dir);
  assert_int_equal(mkdir(path, 0700), 0);
  TSR_ASSERT_STATUS(tsr_npy_save(path, a), TSR_ERR_IO, "is a directory");
  assert_int_equal(count_entries(dir), 1);
  rmdir(path);

  /* Replacing an existing file is atomic and leaves only the file. */
  snprintf(path, sizeof path, "%s/x.npy", dir);
  TSR_ASSERT_OK(tsr_npy_save(path, a));
  tsr_array *t = NULL, *b = NULL;
  TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));
  TSR_ASSERT_OK(tsr_npy_save(path, t));
  assert_int_equal(count_entries(dir), 1);
  TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &b));
  double *want = tsr_test_read_f64(t), *got = tsr_test_read_f64(b);
  for (int i = 0; i < 20; i++)
    assert_true(got[i] == want[i]);
  free(want);
  free(got);
  remove(path);

  TSR_ASSERT_STATUS(tsr_npy_save(NULL, a), TSR_ERR_NULL_POINTER, NULL);
  TSR_ASSERT_STATUS(tsr_npy_save(path, NULL), TSR_ERR_NULL_POINTER, NULL);
  assert_int_equal(count_entries(dir), 0);
  tsr_array_release(a);
  tsr_array_release(t);
  tsr_array_release(b);
  rmdir(dir);
}

static void test_load_errors(void **state) {
  (void)state;
  char path[256];
  tsr_array *a = NULL;
  tsr_npy_header h;
  path_in(path, sizeof path, "missing.npy");
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, &a), TSR_ERR_IO, "No such file or directory");
  assert_null(a);
  TSR_ASSERT_STATUS(tsr_npy_read_header(path, &h), TSR_ERR_IO, path);
  TSR_ASSERT_STATUS(tsr_npy_load(g_dir, TSR_CPU, &a), TSR_ERR_IO, "not a regular file");
  TSR_ASSERT_STATUS(tsr_npy_load(NULL, TSR_CPU, &a), TSR_ERR_NULL_POINTER, NULL);
  /* A device that exists in no build: the staged data must not leak (ASan). */
  const tsr_device nowhere = {TSR_DEVICE_CUDA, 99};
  TSR_ASSERT_STATUS(tsr_npy_load(TSR_DATA_DIR "/wine.npy", nowhere, &a), TSR_ERR_NO_DEVICE, NULL);
  assert_null(a);
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, NULL), TSR_ERR_NULL_POINTER, NULL);

  /* Unsupported dtype: the message names the function, what was found and the file. */
  unsigned char header[256];
  size_t hl =
      build_header(header, 1, "{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }", 64);
  unsigned char data[800];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (unsigned char)(i * 7 + 1);
  path_in(path, sizeof path, "unsigned.npy");
  write_file(path, header, hl, data, 32);
  char want[512];
  snprintf(want, sizeof want,
           "tsr_npy_load: unsupported dtype '<u8' (supported: f4, f8, i4, i8, c8, c16 "
           "in either byte order) in %s",
           path);
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, &a), TSR_ERR_DTYPE, want);
  remove(path);

  /* Truncated data: 10x10 f8 needs 800 bytes, the file has 799. */
  hl = build_header(header, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (10, 10), }", 64);
  path_in(path, sizeof path, "short.npy");
  write_file(path, header, hl, data, 799);
  /* The message names the public function called, never an internal helper. */
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, &a), TSR_ERR_FORMAT,
                    "tsr_npy_load: truncated data");
  char sizes[96];
  snprintf(sizes, sizeof sizes, "need %zu bytes", hl + 800);
  assert_non_null(strstr(tsr_last_error(), sizes));
  snprintf(sizes, sizeof sizes, "file has %zu", hl + 799);
  assert_non_null(strstr(tsr_last_error(), sizes));
  TSR_ASSERT_STATUS(tsr_npy_read_header(path, &h), TSR_ERR_FORMAT,
                    "tsr_npy_read_header: truncated data");
  assert_non_null(strstr(tsr_last_error(), path));
  write_file(path, header, hl, data, 800);
  TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &a));
  tsr_array_release(a);
  a = NULL;

  /* Truncated header, through the file: 40 bytes of a 128-byte header. */
  write_file(path, header, 40, NULL, 0);
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, &a), TSR_ERR_FORMAT,
                    "truncated header: need 128 bytes, file has 40");
  write_file(path, header, 3, NULL, 0);
  TSR_ASSERT_STATUS(tsr_npy_read_header(path, &h), TSR_ERR_FORMAT, "truncated header");
  static const char zip[] = "PK\x03\x04 this is a zip";
  write_file(path, zip, sizeof zip - 1, NULL, 0);
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, &a), TSR_ERR_FORMAT, "magic");
  write_file(path, "", 0, NULL, 0);
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, &a), TSR_ERR_FORMAT, "empty");
  /* A header length far beyond the file. */
  memcpy(header, "\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
  write_file(path, header, 128, NULL, 0);
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, &a), TSR_ERR_FORMAT, "file has 128");
  assert_null(a);
  /* A failed load clears *out rather than leaving the caller's pointer as it was. */
  a = (tsr_array *)&h;
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, &a), TSR_ERR_FORMAT, "tsr_npy_load: ");
  assert_null(a);
  remove(path);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/tsr_test_npy_XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return rmdir(g_dir); /* fails, and so flags a leftover file, unless the folder is empty */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_variants),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_truncations_and_mutations),
      cmocka_unit_test(test_format_header),
      cmocka_unit_test(test_load_every_flavour),
      cmocka_unit_test(test_load_high_rank_fortran),
      cmocka_unit_test(test_real_files),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_save_strided_views),
      cmocka_unit_test(test_save_scalar_and_empty),
      cmocka_unit_test(test_save_errors_leave_nothing),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
