/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the .npy header parser (tsr_npy_parse_header): any input must give
 * TSR_OK, TSR_ERR_FORMAT or TSR_ERR_DTYPE (a well-formed header of another dtype) with a
 * message, never a crash, an over-read (ASan) or undefined
 * behaviour (UBSan). An accepted header must also be self-consistent and survive a round trip
 * through tsr_npy_format_header. Built by tests/fuzz.cmake, run by scripts/test.d/fuzz.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(cond)                                                                              \
  do {                                                                                             \
    if (!(cond)) __builtin_trap();                                                                 \
  } while (0)

static void check_accepted(const uint8_t *data, size_t size, const tsr_npy_header *h) {
  REQUIRE(h->major_version >= 1 && h->major_version <= 3);
  REQUIRE(data[6] == h->major_version && data[7] == 0);
  REQUIRE(tsr__dtype_valid(h->dtype)); /* any row of TSR_DTYPE_MAP, complex included */
  REQUIRE(h->big_endian == 0 || h->big_endian == 1);
  REQUIRE(h->fortran_order == 0 || h->fortran_order == 1);
  REQUIRE(h->ndim >= 0 && h->ndim <= TSR_MAX_DIMS);
  size_t hlen = h->major_version == 1 ? (size_t)data[8] | (size_t)data[9] << 8
                                      : (size_t)data[8] | (size_t)data[9] << 8 |
                                            (size_t)data[10] << 16 | (size_t)data[11] << 24;
  REQUIRE(h->data_offset == (h->major_version == 1 ? 10u : 12u) + hlen);
  REQUIRE(h->data_offset <= size);
  int64_t product = 1;
  for (int k = 0; k < TSR_MAX_DIMS; k++) {
    REQUIRE(h->shape[k] >= 0);
    if (k >= h->ndim) REQUIRE(h->shape[k] == 1);
    REQUIRE(!__builtin_mul_overflow(product, h->shape[k], &product));
  }
  REQUIRE(h->size == product);
  int64_t bytes;
  REQUIRE(!__builtin_mul_overflow(h->size, (int64_t)tsr__dtype_size(h->dtype), &bytes));

  /* What the writer makes of it must parse back to the same array description. */
  char buf[1024];
  size_t len = 0;
  REQUIRE(tsr_npy_format_header(h->dtype, h->fortran_order, h->ndim, h->shape, buf, sizeof buf,
                                &len) == TSR_OK);
  REQUIRE(len % 64 == 0 && len <= sizeof buf && buf[len - 1] == '\n');
  tsr_npy_header again;
  REQUIRE(tsr_npy_parse_header(buf, len, &again) == TSR_OK);
  REQUIRE(again.major_version == 1 && again.big_endian == 0 && again.data_offset == len);
  REQUIRE(again.dtype == h->dtype && again.fortran_order == h->fortran_order);
  REQUIRE(again.ndim == h->ndim && again.size == h->size);
  REQUIRE(memcmp(again.shape, h->shape, sizeof h->shape) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A heap copy of exactly `size` bytes, so that ASan catches a read one byte too far. */
  uint8_t *copy = (uint8_t *)malloc(size ? size : 1);
  if (!copy) return 0;
  if (size) memcpy(copy, data, size);
  tsr_npy_header h;
  tsr_clear_error();
  tsr_status st = tsr_npy_parse_header(size ? copy : NULL, size, &h);
  if (st == TSR_OK) {
    check_accepted(copy, size, &h);
  } else {
    REQUIRE(st == TSR_ERR_FORMAT || st == TSR_ERR_DTYPE);
    REQUIRE(strncmp(tsr_last_error(), "tsr_npy_parse_header: ", 22) == 0);
    REQUIRE(strlen(tsr_last_error()) > 22);
  }
  free(copy);
  return 0;
}
