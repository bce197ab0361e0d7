# SPDX-License-Identifier: BSD-3-Clause
# PDGEMM benchmark (bench/run_pdgemm.sh): a plain ScaLAPACK program, linked against Debian's
# ScaLAPACK only (the anchor); the runner preloads libtessera_scalapack for the comparison.
if(TARGET tessera_scalapack)
  find_library(TSR_BENCH_SCALAPACK NAMES scalapack-openmpi scalapack)
  if(TSR_BENCH_SCALAPACK)
    add_executable(bench_pdgemm ${CMAKE_CURRENT_LIST_DIR}/bench_pdgemm.c)
    target_link_libraries(bench_pdgemm PRIVATE ${TSR_BENCH_SCALAPACK} MPI::MPI_C ${CMAKE_DL_LIBS})
    target_compile_options(bench_pdgemm PRIVATE -Wall -Wextra)
    add_dependencies(bench_pdgemm tessera_scalapack)
    # Per-call PDGEMM (bench/run_pdgemm_calls.sh): the small and odd calls of ScaLAPACK's own
    # routines, across sizes and block sizes.
    add_executable(bench_pdgemm_calls ${CMAKE_CURRENT_LIST_DIR}/bench_pdgemm_calls.c)
    target_link_libraries(bench_pdgemm_calls PRIVATE ${TSR_BENCH_SCALAPACK} MPI::MPI_C
                          ${CMAKE_DL_LIBS})
    target_compile_options(bench_pdgemm_calls PRIVATE -Wall -Wextra)
    add_dependencies(bench_pdgemm_calls tessera_scalapack)
    # The MPI call counter the runner's --count preloads (PMPI).
    add_library(tsr_mpi_count SHARED ${CMAKE_CURRENT_LIST_DIR}/mpi_count.c)
    target_link_libraries(tsr_mpi_count PRIVATE MPI::MPI_C)
    add_dependencies(bench_pdgemm_calls tsr_mpi_count)
  else()
    message(STATUS "bench_pdgemm: ScaLAPACK not found: not built")
  endif()
endif()
