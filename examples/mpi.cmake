# SPDX-License-Identifier: BSD-3-Clause
# The distributed GEMM example, run as a test under mpiexec with 2 ranks.
if(NOT TSR_HAVE_MPI)
  return()
endif()
add_executable(dist_gemm dist_gemm.c)
target_link_libraries(dist_gemm PRIVATE tessera MPI::MPI_C m)
if(TESSERA_BUILD_TESTS)
  add_test(NAME example_dist_gemm
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe
                   $<TARGET_FILE:dist_gemm> dist_gemm_c.npy
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(example_dist_gemm PROPERTIES LABELS "mpi;example" TIMEOUT 60
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_NUM_THREADS=1")
endif()
