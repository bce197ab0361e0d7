/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI datatype of each dtype: the MPI column of TSR_DTYPE_MAP (tessera/dtypes.h), kept here
 * so that the public header needs no <mpi.h>. One row per row of TSR_DTYPE_MAP, keyed by the
 * enum: X(ENUM, mpi_type). A dtype without its row here fails the build (the count below).
 */
#ifndef TSR_MPI_DTYPES_H
#define TSR_MPI_DTYPES_H

#include <mpi.h>

#include "tessera/dtypes.h"

#define TSR__MPI_DTYPE_MAP(X)                                                                      \
  X(TSR_F32, MPI_FLOAT)                                                                            \
  X(TSR_F64, MPI_DOUBLE)                                                                           \
  X(TSR_I32, MPI_INT32_T)                                                                          \
  X(TSR_I64, MPI_INT64_T)                                                                          \
  X(TSR_C64, MPI_C_FLOAT_COMPLEX)                                                                  \
  X(TSR_C128, MPI_C_DOUBLE_COMPLEX)

#define TSR__MPI_DTYPE_ONE(ENUM, mpi_type) +1
_Static_assert((0 TSR__MPI_DTYPE_MAP(TSR__MPI_DTYPE_ONE)) == TSR_NUM_DTYPES,
               "every row of TSR_DTYPE_MAP has its row in TSR__MPI_DTYPE_MAP");
#undef TSR__MPI_DTYPE_ONE

/* The MPI datatype of a dtype, MPI_DATATYPE_NULL for an invalid one (tsr__mpi_type's body). */
static inline MPI_Datatype tsr__mpi_dtype_of(tsr_dtype dtype) {
#define TSR__MPI_DTYPE_CASE(ENUM, mpi_type)                                                        \
  case ENUM: return mpi_type;
  switch (dtype) { TSR__MPI_DTYPE_MAP(TSR__MPI_DTYPE_CASE) }
#undef TSR__MPI_DTYPE_CASE
  return MPI_DATATYPE_NULL;
}

#endif /* TSR_MPI_DTYPES_H */
