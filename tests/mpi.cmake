# MPI tests (label mpi): each program runs under mpiexec with 1, 2 and 4 ranks
# (--oversubscribe: more ranks than cores), one OpenMP thread per rank.
if(NOT TSR_HAVE_MPI)
  return()
endif()
# Under the sanitizers, Open MPI's own allocations are suppressed (tests/mpi_lsan.supp); the
# slow unwinder is needed because Open MPI's libraries have no frame pointers.
set(TSR_MPI_TEST_ENV
  "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_NUM_THREADS=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mca_base_component_disable_dlclose=1;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/mpi_lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0")

foreach(t gemm matrix io)
  add_executable(test_dist_${t} test_dist_${t}.c)
  target_link_libraries(test_dist_${t} PRIVATE tsr_test_common MPI::MPI_C)
  foreach(np 1 2 4)
    add_test(NAME dist_${t}_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe
                     $<TARGET_FILE:test_dist_${t}>)
    set_tests_properties(dist_${t}_np${np} PROPERTIES LABELS mpi TIMEOUT 120
                         ENVIRONMENT "${TSR_MPI_TEST_ENV}")
  endforeach()
endforeach()

# The tessera-gemm job, driven from a serial program that starts mpiexec: exit codes,
# messages and leftover files for good and bad input.
if(TARGET tessera-gemm)
  add_executable(test_dist_cli test_dist_cli.c)
  target_link_libraries(test_dist_cli PRIVATE tsr_test_common)
  # Two groups run in parallel: the job's results and options, and the faults (full disk,
  # signals, FIFOs, device nodes, per-rank folders, long names).
  foreach(group job faults)
    set(name dist_cli)
    if(group STREQUAL "faults")
      set(name dist_cli_faults)
    endif()
    add_test(NAME ${name}
             COMMAND test_dist_cli ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:tessera-gemm>
                     ${PROJECT_SOURCE_DIR}/data ${group})
    set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 600
                         ENVIRONMENT "${TSR_MPI_TEST_ENV}")
  endforeach()
endif()

# The 2.5D schedule (tests/test_dist_25d.c): P = 2 (1x1x2), 4 (1x1x4) and 8 (2x2x2).
add_executable(test_dist_25d test_dist_25d.c)
target_link_libraries(test_dist_25d PRIVATE tsr_test_common MPI::MPI_C)
foreach(np 2 4 8)
  add_test(NAME dist_25d_np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe
                   $<TARGET_FILE:test_dist_25d>)
  set_tests_properties(dist_25d_np${np} PROPERTIES LABELS mpi TIMEOUT 300
                       ENVIRONMENT "${TSR_MPI_TEST_ENV}")
endforeach()

# The pipelined panel broadcast (src/mpi/bcast.c, internal: linked statically): every
# algorithm and root at 1, 2, 3, 4 and 6 ranks (tests/test_dist_bcast.c).
add_executable(test_dist_bcast test_dist_bcast.c common/tsr_test.c)
target_link_libraries(test_dist_bcast PRIVATE tessera_static PkgConfig::CMOCKA MPI::MPI_C m)
target_include_directories(test_dist_bcast PRIVATE ${PROJECT_SOURCE_DIR}/src common)
foreach(np 1 2 3 4 6)
  add_test(NAME dist_bcast_np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe
                   $<TARGET_FILE:test_dist_bcast>)
  set_tests_properties(dist_bcast_np${np} PROPERTIES LABELS mpi TIMEOUT 300
                       ENVIRONMENT "${TSR_MPI_TEST_ENV}")
endforeach()
