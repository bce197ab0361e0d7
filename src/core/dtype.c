/* SPDX-License-Identifier: BSD-3-Clause */
/* Element types: sizes, names, the parser and the .npy type strings, all generated from the
   rows of TSR_DTYPE_MAP (include/tessera/dtypes.h). */
#include <string.h>

#include "core/internal.h"

typedef struct tsr__dtype_row {
  const char *name; /* "f32" */
  const char *npy;  /* "f4": the .npy type string without its byte order */
  size_t size;
  bool is_float;
  bool is_complex;
} tsr__dtype_row;

/* Indexed by the enum. The static asserts make a row's size sizeof(c_type); the table's length
   TSR_NUM_DTYPES makes the values 0 .. TSR_NUM_DTYPES - 1 (a value past the end would lengthen
   it, a repeated one would leave a row out and -Woverride-init says so). */
#define TSR__DTYPE_ROW(name, ENUM, value, c_type, size, npy, is_float, is_complex)                 \
  [ENUM] = {#name, npy, size, is_float, is_complex},
static const tsr__dtype_row tsr__dtypes[] = {TSR_DTYPE_MAP(TSR__DTYPE_ROW)};
#undef TSR__DTYPE_ROW
_Static_assert(sizeof tsr__dtypes / sizeof tsr__dtypes[0] == TSR_NUM_DTYPES,
               "the dtype values are 0 .. TSR_NUM_DTYPES - 1");
#define TSR__DTYPE_CHECK(name, ENUM, value, c_type, size, npy, is_float, is_complex)               \
  _Static_assert(sizeof(c_type) == (size), #name ": size is not sizeof(c_type)");                  \
  _Static_assert((int)ENUM == (value), #name ": the enum's value is not the row's");
TSR_DTYPE_MAP(TSR__DTYPE_CHECK)
#undef TSR__DTYPE_CHECK

/* The row of a dtype, NULL for an invalid one. */
static const tsr__dtype_row *tsr__dtype_row_of(tsr_dtype dtype) {
  return (unsigned)dtype < TSR_NUM_DTYPES ? &tsr__dtypes[dtype] : NULL;
}

size_t tsr__dtype_size(tsr_dtype dtype) {
  const tsr__dtype_row *r = tsr__dtype_row_of(dtype);
  return r ? r->size : 0;
}

bool tsr__dtype_valid(tsr_dtype dtype) {
  return tsr__dtype_row_of(dtype) != NULL;
}

bool tsr__dtype_is_float(tsr_dtype dtype) {
  const tsr__dtype_row *r = tsr__dtype_row_of(dtype);
  return r && r->is_float;
}

bool tsr__dtype_is_complex(tsr_dtype dtype) {
  const tsr__dtype_row *r = tsr__dtype_row_of(dtype);
  return r && r->is_complex;
}

/* The real dtype of a complex dtype's parts (f32 for c64, f64 for c128); the dtype itself for
   a real one. */
tsr_dtype tsr__dtype_part(tsr_dtype dtype) {
  return dtype == TSR_C64 ? TSR_F32 : dtype == TSR_C128 ? TSR_F64 : dtype;
}

const char *tsr__dtype_npy(tsr_dtype dtype) {
  const tsr__dtype_row *r = tsr__dtype_row_of(dtype);
  return r ? r->npy : NULL;
}

bool tsr__dtype_from_npy(const char *t, size_t n, tsr_dtype *dtype) {
  for (int d = 0; d < TSR_NUM_DTYPES; d++)
    if (strlen(tsr__dtypes[d].npy) == n && memcmp(tsr__dtypes[d].npy, t, n) == 0) {
      *dtype = (tsr_dtype)d;
      return true;
    }
  return false;
}

tsr_status tsr_dtype_size(tsr_dtype dtype, size_t *bytes) {
  TSR_API_ENTRY();
  TSR_CHECK(bytes != NULL, TSR_ERR_NULL_POINTER, "bytes is NULL");
  size_t n = tsr__dtype_size(dtype);
  TSR_CHECK(n != 0, TSR_ERR_DTYPE, "unknown dtype %d", (int)dtype);
  *bytes = n;
  return TSR_OK;
}

const char *tsr_dtype_name(tsr_dtype dtype) {
  const tsr__dtype_row *r = tsr__dtype_row_of(dtype);
  return r ? r->name : "unknown";
}

/* "f32, f64, i32, i64" for the parser's message. */
#define TSR__DTYPE_NAME_ITEM(name, ENUM, value, c_type, size, npy, is_float, is_complex) ", " #name
static const char tsr__dtype_names[] = TSR_DTYPE_MAP(TSR__DTYPE_NAME_ITEM);
#undef TSR__DTYPE_NAME_ITEM

tsr_status tsr_dtype_parse(const char *text, tsr_dtype *dtype) {
  TSR_API_ENTRY();
  TSR_CHECK(text != NULL, TSR_ERR_NULL_POINTER, "text is NULL");
  TSR_CHECK(dtype != NULL, TSR_ERR_NULL_POINTER, "dtype is NULL");
  for (int d = 0; d < TSR_NUM_DTYPES; d++)
    if (strcmp(text, tsr__dtypes[d].name) == 0) {
      *dtype = (tsr_dtype)d;
      return TSR_OK;
    }
  return tsr__set_error(TSR_ERR_DTYPE, __func__, "\"%.64s\" is not a dtype (expected one of %s)",
                        text, tsr__dtype_names + 2);
}
