# SPDX-License-Identifier: BSD-3-Clause
# The BLAS drop-in: a plain C program calling the Fortran BLAS dgemm_, linked against
# libtessera_blas instead of a BLAS (LD_PRELOAD in front of any BLAS works as well, docs/blas.md).
if(TARGET tessera_blas)
  tsr_add_example(NAME blas_dropin SOURCES blas_dropin.c LIBS tessera_blas LABELS "cpu;blas")
endif()
