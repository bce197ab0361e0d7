# SPDX-License-Identifier: BSD-3-Clause
# tessera-gemm, the distributed matrix multiplication job (installed by the packaging rules).
add_executable(tessera-gemm ${CMAKE_CURRENT_LIST_DIR}/tessera_gemm.c ${CMAKE_CURRENT_LIST_DIR}/gemm_options.c
                            ${CMAKE_CURRENT_LIST_DIR}/gemm_guard.c ${CMAKE_CURRENT_LIST_DIR}/gemm_report.c
                            ${CMAKE_CURRENT_LIST_DIR}/gemm_common.c)
target_link_libraries(tessera-gemm PRIVATE tessera MPI::MPI_C m)
if(TSR_HAVE_OPENMP)
  target_link_libraries(tessera-gemm PRIVATE OpenMP::OpenMP_C)
endif()
target_compile_options(tessera-gemm PRIVATE -Wall -Wextra -Wpedantic)
