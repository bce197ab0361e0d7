/* SPDX-License-Identifier: BSD-3-Clause */
/* Element types: sizes and names. */
#include "core/internal.h"

size_t tsr__dtype_size(tsr_dtype dtype) {
  switch (dtype) {
  case TSR_F32:
  case TSR_I32: return 4;
  case TSR_F64:
  case TSR_I64: return 8;
  }
  return 0;
}

bool tsr__dtype_valid(tsr_dtype dtype) {
  return tsr__dtype_size(dtype) != 0;
}

bool tsr__dtype_is_float(tsr_dtype dtype) {
  return dtype == TSR_F32 || dtype == TSR_F64;
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
  switch (dtype) {
  case TSR_F32: return "f32";
  case TSR_F64: return "f64";
  case TSR_I32: return "i32";
  case TSR_I64: return "i64";
  }
  return "unknown";
}
