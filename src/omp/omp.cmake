# SPDX-License-Identifier: BSD-3-Clause
# Sources of src/omp, the CPU backend. GEMM (BLIS's layout: gemm/frame knows no ISA,
# gemm/kernels holds the per-ISA micro-kernels with their own compile flags, gemm/config which
# kernel and blocks a CPU gets) is described in gemm/gemm.cmake.
file(GLOB TSR_OMP_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
target_sources(tessera_objects PRIVATE ${TSR_OMP_SOURCES})
include(${CMAKE_CURRENT_LIST_DIR}/gemm/gemm.cmake)
