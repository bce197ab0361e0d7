# SPDX-License-Identifier: BSD-3-Clause
# The panel broadcasts against MPI_Ibcast on this machine (bench/bench_bcast.c, run under
# mpirun; the calibration of docs/scaling.md). Internal functions: linked statically.
if(NOT TSR_HAVE_MPI)
  return()
endif()
add_executable(bench_bcast ${CMAKE_CURRENT_LIST_DIR}/bench_bcast.c)
target_link_libraries(bench_bcast PRIVATE tessera_static MPI::MPI_C m)
target_include_directories(bench_bcast PRIVATE ${PROJECT_SOURCE_DIR}/src)
