# SPDX-License-Identifier: BSD-3-Clause
# MPI tests (label mpi): each program runs under mpiexec with 1, 2 and 4 ranks
# (--oversubscribe: more ranks than cores), one OpenMP thread per rank.
if(NOT TSR_HAVE_MPI)
  return()
endif()
# Under the sanitizers, Open MPI's own allocations are suppressed (tests/mpi_lsan.supp); the
# slow unwinder is needed because Open MPI's libraries have no frame pointers.
set(TSR_MPI_TEST_ENV
  "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_NUM_THREADS=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mca_base_component_disable_dlclose=1;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/mpi_lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0")
# Under load (other MPI jobs, `ctest -j`), Open MPI can fail to start a job at all. Every MPI
# test therefore (1) declares its rank count as PROCESSORS, so that `ctest -j N` never runs
# more ranks than N at once (a test wanting more than N runs alone), (2) holds the
# RESOURCE_LOCK tessera_mpi, so that this suite starts one MPI job at a time, and (3) runs
# through tests/mpi_run.sh, which says "MPI launcher failed (not a test failure of Tessera)"
# when the launcher, not the test, failed, and retries such a run once.
set(TSR_MPI_RUN sh ${CMAKE_CURRENT_SOURCE_DIR}/mpi_run.sh)
set(TSR_MPI_LOCK tessera_mpi)

foreach(t gemm matrix io pipeline complex)
  add_executable(test_dist_${t} test_dist_${t}.c)
  target_link_libraries(test_dist_${t} PRIVATE tsr_test_common MPI::MPI_C)
  foreach(np 1 2 4)
    add_test(NAME dist_${t}_np${np}
             COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                     --oversubscribe $<TARGET_FILE:test_dist_${t}>)
    set_tests_properties(dist_${t}_np${np} PROPERTIES LABELS mpi TIMEOUT 300
                         ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS ${np}
                         RESOURCE_LOCK ${TSR_MPI_LOCK})
  endforeach()
endforeach()

# The public entries taking an MPI_Comm before MPI_Init, on MPI_COMM_NULL and after
# MPI_Finalize: statuses, never an abort (issue 48).
add_executable(test_dist_comm test_dist_comm.c)
target_link_libraries(test_dist_comm PRIVATE tsr_test_common MPI::MPI_C)
foreach(np 1 2)
  add_test(NAME dist_comm_np${np}
           COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                   --oversubscribe $<TARGET_FILE:test_dist_comm>)
  set_tests_properties(dist_comm_np${np} PROPERTIES LABELS mpi TIMEOUT 120
                       ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS ${np}
                       RESOURCE_LOCK ${TSR_MPI_LOCK})
endforeach()

# A grid and its matrices freed after MPI_Finalize, and the entries that would communicate
# called then: statuses ("MPI is already finalized"), never an MPI call (issue 49).
add_executable(test_dist_finalize test_dist_finalize.c)
target_link_libraries(test_dist_finalize PRIVATE tsr_test_common MPI::MPI_C)
foreach(np 1 2)
  add_test(NAME dist_finalize_np${np}
           COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                   --oversubscribe $<TARGET_FILE:test_dist_finalize>)
  set_tests_properties(dist_finalize_np${np} PROPERTIES LABELS mpi TIMEOUT 120
                       ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS ${np}
                       RESOURCE_LOCK ${TSR_MPI_LOCK})
endforeach()

# The raise site across ranks (issue 49): only rank 1 fails, every rank's site is rank 1's.
add_executable(test_dist_error_site test_dist_error_site.c)
target_link_libraries(test_dist_error_site PRIVATE tsr_test_common MPI::MPI_C)
add_test(NAME dist_error_site_np2
         COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
                 --oversubscribe $<TARGET_FILE:test_dist_error_site>)
set_tests_properties(dist_error_site_np2 PROPERTIES LABELS mpi TIMEOUT 120
                     ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS 2
                     RESOURCE_LOCK ${TSR_MPI_LOCK})

# Transposed operands through the one block-cyclic exchange on every grid of 1 to 6 ranks
# (odd and prime counts included).
add_executable(test_dist_transpose test_dist_transpose.c)
target_link_libraries(test_dist_transpose PRIVATE tsr_test_common MPI::MPI_C)
foreach(np 1 2 3 4 5 6)
  add_test(NAME dist_transpose_np${np}
           COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                   --oversubscribe $<TARGET_FILE:test_dist_transpose>)
  set_tests_properties(dist_transpose_np${np} PROPERTIES LABELS mpi TIMEOUT 300
                       ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS ${np}
                       RESOURCE_LOCK ${TSR_MPI_LOCK})
endforeach()

# The tessera-gemm job, driven from a serial program that starts mpiexec: exit codes,
# messages and leftover files for good and bad input.
if(TARGET tessera-gemm)
  add_executable(test_dist_cli test_dist_cli.c)
  target_link_libraries(test_dist_cli PRIVATE tsr_test_common)
  # The LD_PRELOAD shim that counts the job's opens of its inputs (test_opens_once); plain C,
  # not instrumented (it is preloaded ahead of the sanitizer runtime).
  add_library(tsr_open_count MODULE open_count.c)
  target_compile_options(tsr_open_count PRIVATE -fno-sanitize=all)
  target_link_options(tsr_open_count PRIVATE -fno-sanitize=all)
  target_link_libraries(tsr_open_count PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(test_dist_cli tsr_open_count)
  target_compile_definitions(test_dist_cli
                             PRIVATE TSR_OPEN_COUNT_SHIM="$<TARGET_FILE:tsr_open_count>")
  # Three groups: usage and devices (dist_cli_devices: what differs between CPU and GPU
  # builds), the job's results and options (dist_cli), and the faults (dist_cli_faults: full
  # disk, signals, FIFOs, device nodes, per-rank folders, long names). The GPU builds' CI
  # variants run only the first (scripts/test.d/cuda.sh, hip.sh).
  foreach(group devices job faults)
    set(name dist_cli)
    if(NOT group STREQUAL "job")
      set(name dist_cli_${group})
    endif()
    add_test(NAME ${name}
             COMMAND ${TSR_MPI_RUN} $<TARGET_FILE:test_dist_cli> ${MPIEXEC_EXECUTABLE}
                     $<TARGET_FILE:tessera-gemm> ${PROJECT_SOURCE_DIR}/data ${group})
    # Its jobs run one at a time, mostly on 2 ranks (some on 4). Many of them exit non-zero on
    # purpose; Open MPI's launcher then waits odls_base_sigkill_timeout (1 s) before it reaps
    # the ranks, which have all exited by then: 0 halves the suite's time (no rank is cut short:
    # the job exits only after its ranks agreed and printed).
    set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 600
                         ENVIRONMENT "${TSR_MPI_TEST_ENV};OMPI_MCA_odls_base_sigkill_timeout=0"
                         PROCESSORS 2
                         RESOURCE_LOCK ${TSR_MPI_LOCK})
  endforeach()
endif()

# The 2.5D schedule (tests/test_dist_25d.c): P = 2 (1x1x2), 4 (1x1x4) and 8 (2x2x2).
add_executable(test_dist_25d test_dist_25d.c)
target_link_libraries(test_dist_25d PRIVATE tsr_test_common MPI::MPI_C)
foreach(np 2 4 8)
  add_test(NAME dist_25d_np${np}
           COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                   --oversubscribe $<TARGET_FILE:test_dist_25d>)
  set_tests_properties(dist_25d_np${np} PROPERTIES LABELS mpi TIMEOUT 300
                       ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS ${np}
                       RESOURCE_LOCK ${TSR_MPI_LOCK})
endforeach()

# The dispatcher's table of schedules (internal: linked statically): its rows and the row it
# picks against the documented rule, on one rank without MPI calls (tests/test_dist_schedules.c).
add_executable(test_dist_schedules test_dist_schedules.c common/tsr_test.c)
target_link_libraries(test_dist_schedules PRIVATE tessera_static PkgConfig::CMOCKA MPI::MPI_C m)
target_include_directories(test_dist_schedules PRIVATE ${PROJECT_SOURCE_DIR}/src
                           ${CMAKE_CURRENT_SOURCE_DIR}/common)
if(TSR_HAVE_OPENMP)
  target_link_libraries(test_dist_schedules PRIVATE OpenMP::OpenMP_C)
endif()
add_test(NAME dist_schedules COMMAND test_dist_schedules)
set_tests_properties(dist_schedules PROPERTIES LABELS mpi TIMEOUT 120)

# Threads per rank (tsr_dist_binding_get): the rule on synthetic counts and this run's counts.
# Links the static library (the rule is internal) and compiles the test helpers itself.
add_executable(test_dist_binding test_dist_binding.c common/tsr_test.c)
target_link_libraries(test_dist_binding PRIVATE tessera_static PkgConfig::CMOCKA MPI::MPI_C m)
target_include_directories(test_dist_binding PRIVATE ${PROJECT_SOURCE_DIR}/src
                           ${CMAKE_CURRENT_SOURCE_DIR}/common)
if(TSR_HAVE_OPENMP)
  target_link_libraries(test_dist_binding PRIVATE OpenMP::OpenMP_C)
endif()
foreach(np 1 2)
  add_test(NAME dist_binding_np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe
                   $<TARGET_FILE:test_dist_binding>)
  set_tests_properties(dist_binding_np${np} PROPERTIES LABELS mpi TIMEOUT 60
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
