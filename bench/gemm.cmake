# SPDX-License-Identifier: BSD-3-Clause
# CPU GEMM benchmark: Tessera's native kernels (defaults and wisdom) against every anchor
# present (Debian OpenBLAS, BLIS, scipy-openblas32), all loaded with dlopen at run time, so the
# program builds without any of them. Links the static library: the tuning interface
# (src/omp/gemm/gemm_tune.h) is internal.
if(TSR_HAVE_OPENMP)
  add_executable(bench_gemm ${CMAKE_CURRENT_LIST_DIR}/bench_gemm.c)
  target_link_libraries(bench_gemm PRIVATE tessera_static OpenMP::OpenMP_C m ${CMAKE_DL_LIBS})
  target_include_directories(bench_gemm PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(bench_gemm PRIVATE _POSIX_C_SOURCE=200809L)
  if(TARGET tessera_blas) # Tessera's CBLAS drop-in, dlopen()ed at run time (column cblas)
    target_compile_definitions(bench_gemm PRIVATE TSR_BENCH_TESSERA_BLAS="$<TARGET_FILE:tessera_blas>")
    add_dependencies(bench_gemm tessera_blas)
  endif()
endif()
