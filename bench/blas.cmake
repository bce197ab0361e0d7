# SPDX-License-Identifier: BSD-3-Clause
# BLAS drop-in benchmark: a plain C program calling dgemm_, linked against OpenBLAS (the
# anchor); it runs itself once as is and once with libtessera_blas LD_PRELOADed. It must not
# link libtessera_blas (that would replace the anchor): it only uses its header.
if(TARGET tessera_blas)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(TSR_BENCH_BLAS_OPENBLAS QUIET IMPORTED_TARGET openblas)
  endif()
  if(TSR_BENCH_BLAS_OPENBLAS_FOUND)
    add_executable(bench_blas ${CMAKE_CURRENT_LIST_DIR}/bench_blas.c)
    target_link_libraries(bench_blas PRIVATE PkgConfig::TSR_BENCH_BLAS_OPENBLAS ${CMAKE_DL_LIBS})
    target_include_directories(bench_blas PRIVATE
      $<TARGET_PROPERTY:tessera,INTERFACE_INCLUDE_DIRECTORIES>)
    target_compile_options(bench_blas PRIVATE -Wall -Wextra -Wpedantic)
    target_compile_definitions(bench_blas PRIVATE
      TSR_BENCH_TESSERA_BLAS="$<TARGET_FILE:tessera_blas>")
    add_dependencies(bench_blas tessera_blas)
  else()
    message(STATUS "bench_blas: OpenBLAS not found (pkg-config openblas): not built")
  endif()
endif()
