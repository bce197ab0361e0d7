# SPDX-License-Identifier: BSD-3-Clause
# Tests of the ScaLAPACK drop-in (libtessera_scalapack), label mpi:
#  - scalapack_pdgemm_np{1,2,4}: our cmocka test, linked before ScaLAPACK: pdgemm_/psgemm_
#    against a float64 reference on random inputs (transposes, ragged sizes, both descriptor
#    kinds, offsets, source processes, row- and column-major BLACS grids, beta = 0 with NaN in
#    C, alpha = 0 with NaN in A and B), the error codes, the paths taken, and the MPI calls of
#    a blocked reduction's update (one broadcast for both panels).
#  - scalapack_pblas_{d,s}_{general,sources}: Debian's PBLAS testers (dpb3tst, spb3tst) with
#    the library preloaded, over our input files (tests/scalapack/pdblas3_*.dat), error exits
#    on; every test and error exit must pass and the library's report must show every call.
#    scalapack_pblas_{z,c}_general: zpb3tst/cpb3tst over tests/scalapack/pzblas3_general.dat
#    (PZGEMM/PCGEMM, 'C' operations, complex ALPHA and BETA).
#  - scalapack_pzgemm_np{1,2,4}: pzgemm_/pcgemm_ against a float64-complex reference.
#  - scalapack_{xdlu,xdqr,xdllt,xdinv,xdhrd,xdbrd,xdtrd,xzlu,xclu,xzinv,xzhrd,xzbrd,xztrd}:
#    ScaLAPACK's own testers without and
#    with the library preloaded must give the same counts (the reductions xdhrd, xdbrd, xdtrd
#    make thousands of small pdgemm_ calls on submatrices). Debian's LLT.dat hangs in PDPORFS with 4 ranks even
#    without the library, so LLT runs our tests/scalapack/LLT.dat (iterative refinement off).
# scripts/test.sh installs scalapack-mpi-test; without it the tester tests are skipped (77).
if(NOT TARGET tessera_scalapack)
  return()
endif()

find_library(TSR_SCALAPACK_LIBRARY NAMES scalapack-openmpi scalapack
             DOC "ScaLAPACK (with BLACS) for the drop-in's tests")
if(TSR_SCALAPACK_LIBRARY)
  # With bench/mpi_count.c's PMPI wrappers, which count the library's MPI calls.
  add_executable(test_scalapack scalapack/test_scalapack.c ${PROJECT_SOURCE_DIR}/bench/mpi_count.c)
  # The drop-in first, so that pdgemm_/psgemm_ resolve to it and the rest to ScaLAPACK.
  target_link_libraries(test_scalapack PRIVATE tsr_test_common tessera_scalapack
                        ${TSR_SCALAPACK_LIBRARY} MPI::MPI_C m)
  # Its PB_Cabort (recording the error codes) must be the one the libraries call.
  set_target_properties(test_scalapack PROPERTIES ENABLE_EXPORTS ON)
  foreach(np 1 2 4)
    add_test(NAME scalapack_pdgemm_np${np}
             COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                     --oversubscribe $<TARGET_FILE:test_scalapack>)
    set_tests_properties(scalapack_pdgemm_np${np} PROPERTIES LABELS "mpi;scalapack" TIMEOUT 180
                         ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS ${np}
                         RESOURCE_LOCK ${TSR_MPI_LOCK})
  endforeach()
  # pzgemm_/pcgemm_ against a float64-complex reference ('N'/'T'/'C', complex scalars).
  add_executable(test_scalapack_complex scalapack/test_scalapack_complex.c)
  target_link_libraries(test_scalapack_complex PRIVATE tsr_test_common tessera_scalapack
                        ${TSR_SCALAPACK_LIBRARY} MPI::MPI_C m)
  set_target_properties(test_scalapack_complex PROPERTIES ENABLE_EXPORTS ON)
  foreach(np 1 2 4)
    add_test(NAME scalapack_pzgemm_np${np}
             COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                     --oversubscribe $<TARGET_FILE:test_scalapack_complex>)
    set_tests_properties(scalapack_pzgemm_np${np} PROPERTIES LABELS "mpi;scalapack" TIMEOUT 180
                         ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS ${np}
                         RESOURCE_LOCK ${TSR_MPI_LOCK})
  endforeach()
  # Every case on each path alone (the rule's choice is what the tests above run).
  foreach(path direct redistribute)
    add_test(NAME scalapack_pdgemm_np4_${path}
             COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4
                     --oversubscribe -x TSR_SCALAPACK_PATH=${path} $<TARGET_FILE:test_scalapack>)
    set_tests_properties(scalapack_pdgemm_np4_${path} PROPERTIES LABELS "mpi;scalapack"
                         TIMEOUT 180 ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS 4
                         RESOURCE_LOCK ${TSR_MPI_LOCK})
    add_test(NAME scalapack_pzgemm_np4_${path}
             COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4
                     --oversubscribe -x TSR_SCALAPACK_PATH=${path}
                     $<TARGET_FILE:test_scalapack_complex>)
    set_tests_properties(scalapack_pzgemm_np4_${path} PROPERTIES LABELS "mpi;scalapack"
                         TIMEOUT 180 ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS 4
                         RESOURCE_LOCK ${TSR_MPI_LOCK})
  endforeach()
  # One runtime per process (issue 32): tsr_*, pdgemm_ and dgemm_ in one program share
  # libtessera.so's thread pool, error state, wisdom cache and environment reader.
  add_executable(test_one_runtime scalapack/test_one_runtime.c)
  target_link_libraries(test_one_runtime PRIVATE tessera_scalapack tessera_blas tessera
                        ${TSR_SCALAPACK_LIBRARY} MPI::MPI_C m)
  add_test(NAME scalapack_one_runtime
           COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 1
                   --oversubscribe $<TARGET_FILE:test_one_runtime>)
  set_tests_properties(scalapack_one_runtime PROPERTIES LABELS "mpi;scalapack" TIMEOUT 180
                       ENVIRONMENT "${TSR_MPI_TEST_ENV};OMP_NUM_THREADS=3;TSR_WISDOM=/nonexistent/tessera-one-runtime-wisdom;TSR_SCALAPACK_PATH=sideways;TSR_WISDOM_WARN=1"
                       PROCESSORS 1 RESOURCE_LOCK ${TSR_MPI_LOCK})
  # TSR_SCALAPACK_REPORT naming a FIFO, a directory or a symbolic link: the products are
  # computed, the processes exit (the report is opened without blocking), no line is written
  # and stderr says why; a regular file gets one line per process (issue 30).
  add_test(NAME scalapack_report_targets
           COMMAND ${TSR_MPI_RUN} sh ${CMAKE_CURRENT_SOURCE_DIR}/scalapack/report_targets.sh
                   ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_scalapack>)
  set_tests_properties(scalapack_report_targets PROPERTIES LABELS "mpi;scalapack" TIMEOUT 300
                       ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS 2
                       RESOURCE_LOCK ${TSR_MPI_LOCK})
  # Rank-identical replicated results (issue 48): each rank runs the CPU GEMM with its own
  # kernel, k block and thread count; every replicated element of C must have the same bits on
  # every rank that holds it, on the path the rule picks and on each path forced.
  add_executable(test_rank_identical scalapack/test_rank_identical.c)
  target_link_libraries(test_rank_identical PRIVATE tsr_test_common tessera_scalapack
                        ${TSR_SCALAPACK_LIBRARY} MPI::MPI_C m)
  if(TSR_HAVE_OPENMP)
    target_link_libraries(test_rank_identical PRIVATE OpenMP::OpenMP_C)
  endif()
  foreach(np 2 4)
    add_test(NAME scalapack_rank_identical_np${np}
             COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                     --oversubscribe $<TARGET_FILE:test_rank_identical>)
    set_tests_properties(scalapack_rank_identical_np${np} PROPERTIES LABELS "mpi;scalapack"
                         TIMEOUT 180 ENVIRONMENT "${TSR_MPI_TEST_ENV}" PROCESSORS ${np}
                         RESOURCE_LOCK ${TSR_MPI_LOCK})
  endforeach()
  foreach(path direct redistribute)
    add_test(NAME scalapack_rank_identical_np4_${path}
             COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4
                     --oversubscribe -x TSR_SCALAPACK_PATH=${path}
                     $<TARGET_FILE:test_rank_identical>)
    set_tests_properties(scalapack_rank_identical_np4_${path} PROPERTIES
                         LABELS "mpi;scalapack" TIMEOUT 180 ENVIRONMENT "${TSR_MPI_TEST_ENV}"
                         PROCESSORS 4 RESOURCE_LOCK ${TSR_MPI_LOCK})
  endforeach()
endif()

# The testers are not instrumented: under the sanitizers they are left out (as for the BLAS
# testers with Clang); the cmocka test above covers the library there.
if(TESSERA_ENABLE_SANITIZERS)
  return()
endif()
set(TSR_SCALAPACK_TESTER_DIR "/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/scalapack/openmpi-tests"
    CACHE PATH "Directory of ScaLAPACK's testers (Debian package scalapack-mpi-test)")
set(tsr_sp_run ${TSR_MPI_RUN} sh ${CMAKE_CURRENT_SOURCE_DIR}/scalapack/run_tester.sh)
set(tsr_sp_env "${TSR_MPI_TEST_ENV};OPENBLAS_NUM_THREADS=1")
foreach(prec d s)
  string(TOUPPER ${prec} P)
  foreach(set general sources)
    set(name scalapack_pblas_${prec}_${set})
    add_test(NAME ${name}
             COMMAND ${tsr_sp_run} pblas ${TSR_SCALAPACK_TESTER_DIR}/PBLAS/${prec}pb3tst
                     ${CMAKE_CURRENT_SOURCE_DIR}/scalapack/pdblas3_${set}.dat
                     P${P}BLAS3TST.dat P${P}GEMM 4 $<TARGET_FILE:tessera_scalapack>
                     ${MPIEXEC_EXECUTABLE})
    set_tests_properties(${name} PROPERTIES LABELS "mpi;scalapack" SKIP_RETURN_CODE 77
                         TIMEOUT 300 ENVIRONMENT "${tsr_sp_env}" PROCESSORS 4
                         RESOURCE_LOCK ${TSR_MPI_LOCK})
  endforeach()
endforeach()
# The complex PBLAS testers over our complex input (N/T/C, complex ALPHA and BETA).
foreach(prec z c)
  string(TOUPPER ${prec} P)
  set(name scalapack_pblas_${prec}_general)
  add_test(NAME ${name}
           COMMAND ${tsr_sp_run} pblas ${TSR_SCALAPACK_TESTER_DIR}/PBLAS/${prec}pb3tst
                   ${CMAKE_CURRENT_SOURCE_DIR}/scalapack/pzblas3_general.dat
                   P${P}BLAS3TST.dat P${P}GEMM 4 $<TARGET_FILE:tessera_scalapack>
                   ${MPIEXEC_EXECUTABLE})
  set_tests_properties(${name} PROPERTIES LABELS "mpi;scalapack" SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT "${tsr_sp_env}" PROCESSORS 4
                       RESOURCE_LOCK ${TSR_MPI_LOCK})
endforeach()
foreach(entry "xdlu|LU.dat|${TSR_SCALAPACK_TESTER_DIR}/LU.dat"
              "xdqr|QR.dat|${TSR_SCALAPACK_TESTER_DIR}/QR.dat"
              "xdllt|LLT.dat|${CMAKE_CURRENT_SOURCE_DIR}/scalapack/LLT.dat"
              "xdinv|INV.dat|${TSR_SCALAPACK_TESTER_DIR}/INV.dat"
              "xdhrd|HRD.dat|${TSR_SCALAPACK_TESTER_DIR}/HRD.dat"
              "xdbrd|BRD.dat|${TSR_SCALAPACK_TESTER_DIR}/BRD.dat"
              "xdtrd|TRD.dat|${TSR_SCALAPACK_TESTER_DIR}/TRD.dat"
              # Complex: their routines call pzgemm_/pcgemm_ (issue 50).
              "xzlu|LU.dat|${TSR_SCALAPACK_TESTER_DIR}/LU.dat"
              "xclu|LU.dat|${TSR_SCALAPACK_TESTER_DIR}/LU.dat"
              "xzinv|INV.dat|${TSR_SCALAPACK_TESTER_DIR}/INV.dat"
              "xzhrd|HRD.dat|${TSR_SCALAPACK_TESTER_DIR}/HRD.dat"
              "xzbrd|BRD.dat|${TSR_SCALAPACK_TESTER_DIR}/BRD.dat"
              "xztrd|TRD.dat|${TSR_SCALAPACK_TESTER_DIR}/TRD.dat")
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 tester)
  list(GET fields 1 datname)
  list(GET fields 2 input)
  add_test(NAME scalapack_${tester}
           COMMAND ${tsr_sp_run} lapack ${TSR_SCALAPACK_TESTER_DIR}/${tester} ${input} ${datname}
                   - 4 $<TARGET_FILE:tessera_scalapack> ${MPIEXEC_EXECUTABLE})
  set_tests_properties(scalapack_${tester} PROPERTIES LABELS "mpi;scalapack" SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT "${tsr_sp_env}" PROCESSORS 4
                       RESOURCE_LOCK ${TSR_MPI_LOCK})
endforeach()
