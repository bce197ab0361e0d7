# SPDX-License-Identifier: BSD-3-Clause
# Distributed GEMM benchmark: Tessera SUMMA against ScaLAPACK PDGEMM (Debian's
# libscalapack-openmpi on OpenBLAS) and the single-process OpenBLAS ceiling.
# Run it with bench/run_dist_gemm.sh.
if(NOT TSR_HAVE_MPI)
  return()
endif()
find_library(TSR_SCALAPACK_LIB NAMES scalapack-openmpi scalapack)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(TSR_DIST_OPENBLAS QUIET IMPORTED_TARGET openblas)
endif()
if(NOT TSR_SCALAPACK_LIB OR NOT TSR_DIST_OPENBLAS_FOUND)
  message(STATUS "bench_dist_gemm: ScaLAPACK or OpenBLAS not found: not built")
  return()
endif()
add_executable(bench_dist_gemm ${CMAKE_CURRENT_LIST_DIR}/bench_dist_gemm.c)
target_link_libraries(bench_dist_gemm PRIVATE tessera ${TSR_SCALAPACK_LIB}
                      PkgConfig::TSR_DIST_OPENBLAS MPI::MPI_C m)
if(TSR_HAVE_OPENMP)
  target_link_libraries(bench_dist_gemm PRIVATE OpenMP::OpenMP_C)
endif()
