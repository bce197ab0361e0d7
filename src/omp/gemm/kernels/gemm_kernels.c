/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU GEMM micro-kernel table (BLIS's kernels/<arch> side): one row per ISA folder of
 * kernels/ (kernels/<isa>/gemm_isa_<isa>.c: the ISA's micro-kernels with their register blocks,
 * packing routines, streaming-store and sup-path variants, and whether this CPU runs it),
 * listed here from the folder names (TSR__GEMM_ISA_FOLDERS, which gemm.cmake generates), and
 * the look-ups over it. The registry (gemm_registry.c) and the wisdom file (gemm_wisdom.c)
 * name kernels from this table; it calls neither.
 */
#include <string.h>

#include "omp/gemm/gemm_tune.h"
#include "omp/gemm/kernels/gemm_isas.h"
#include "omp/gemm/kernels/kernels.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>
#endif
#include "omp/omp_internal.h"

#define TSR__GEMM_ISA_DECLARE(isa) extern const tsr__gemm_isa tsr__gemm_isa_##isa;
TSR__GEMM_ISA_FOLDERS(TSR__GEMM_ISA_DECLARE)
#undef TSR__GEMM_ISA_DECLARE

#define TSR__GEMM_ISA_ENTRY(isa) &tsr__gemm_isa_##isa,
const tsr__gemm_isa *const tsr__gemm_isas[] = {TSR__GEMM_ISA_FOLDERS(TSR__GEMM_ISA_ENTRY)};
#undef TSR__GEMM_ISA_ENTRY
const int tsr__gemm_nisas = (int)(sizeof tsr__gemm_isas / sizeof tsr__gemm_isas[0]);

/* The i-th ISA row by rank, highest first (ties in folder order); NULL past the last. A few
   compares: the table has a handful of rows and nothing hot walks it. */
static const tsr__gemm_isa *tsr__gemm_isa_at(int i) {
  for (int c = 0; c < tsr__gemm_nisas; ++c) {
    int before = 0;
    for (int o = 0; o < tsr__gemm_nisas; ++o)
      before += tsr__gemm_isas[o]->rank > tsr__gemm_isas[c]->rank ||
                (tsr__gemm_isas[o]->rank == tsr__gemm_isas[c]->rank && o < c);
    if (before == i) return tsr__gemm_isas[c];
  }
  return NULL;
}

static const tsr__gemm_isa *tsr__gemm_isa_named(const char *isa) {
  for (int i = 0; i < tsr__gemm_nisas; ++i)
    if (strcmp(tsr__gemm_isas[i]->name, isa) == 0) return tsr__gemm_isas[i];
  return NULL;
}

const char *tsr__gemm_isa_name(int i) {
  const tsr__gemm_isa *r = i >= 0 ? tsr__gemm_isa_at(i) : NULL;
  return r ? r->name : NULL;
}

unsigned tsr__gemm_isa_bit(const char *isa) {
  for (int i = 0; i < tsr__gemm_nisas && i < 32; ++i)
    if (strcmp(tsr__gemm_isas[i]->name, isa) == 0) return 1u << i;
  return 0;
}

bool tsr__gemm_isa_available(const char *isa) {
  const tsr__gemm_isa *r = tsr__gemm_isa_named(isa);
  return r && r->nkernels > 0 && r->available();
}

const tsr__gemm_kernel *tsr__gemm_kernel_find(const char *name, tsr_dtype dtype) {
  for (int i = 0; i < tsr__gemm_nisas; ++i)
    for (int j = 0; j < tsr__gemm_isas[i]->nkernels; ++j) {
      const tsr__gemm_kernel *k = &tsr__gemm_isas[i]->kernels[j];
      if (k->dtype == dtype && strcmp(k->name, name) == 0) return k;
    }
  return NULL;
}

const tsr__gemm_kernel *tsr__gemm_kernel_first(const char *isa, tsr_dtype dtype) {
  const tsr__gemm_isa *r = tsr__gemm_isa_named(isa);
  for (int j = 0; r && j < r->nkernels; ++j)
    if (r->kernels[j].dtype == dtype) return &r->kernels[j];
  return NULL;
}

int tsr__gemm_kernel_list(tsr_dtype dtype, const tsr__gemm_kernel **out, int max) {
  int n = 0;
  for (int i = 0; n < max; ++i) {
    const tsr__gemm_isa *r = tsr__gemm_isa_at(i);
    if (!r) break;
    if (r->nkernels == 0 || !r->available()) continue;
    for (int j = 0; j < r->nkernels && n < max; ++j)
      if (r->kernels[j].dtype == dtype) out[n++] = &r->kernels[j];
  }
  return n;
}

int tsr__gemm_max_tile(void) {
  int m = 0;
  for (int i = 0; i < tsr__gemm_nisas; ++i)
    for (int j = 0; j < tsr__gemm_isas[i]->nkernels; ++j) {
      const tsr__gemm_kernel *k = &tsr__gemm_isas[i]->kernels[j];
      if (k->mr * k->nr > m) m = k->mr * k->nr;
    }
  return m;
}

void tsr__gemm_store_fence(void) {
#if defined(TSR__GEMM_X86)
  _mm_sfence();
#endif
}
