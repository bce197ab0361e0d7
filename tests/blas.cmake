# SPDX-License-Identifier: BSD-3-Clause
# Tests of the BLAS drop-in (libtessera_blas).
#  - blas_gemm: our own cmocka test, linked against the library: the four entry points at
#    sizes in the hundreds with ragged leading dimensions against a float64 reference, the
#    reference special cases (NaN in C with beta = 0, alpha = 0, quick returns), the xerbla
#    positions, the routing, the call counts of concurrent threads, and tsr_from_host_view (the zero-copy wrap it relies on).
#  - blas_tester_<tester>_<set>: the reference testers of Debian's libblas-test (xblat3s,
#    xblat3d, xscblat3, xdcblat3; complex: xblat3c, xblat3z, xccblat3, xzcblat3) with the library LD_PRELOADed in front of the system BLAS,
#    only GEMM enabled and error exits on, once with the stock sizes and once with the
#    largest ones the testers accept (up to 65: the edges of the blocked paths).
#  - blas_numpy: NumPy (Debian's python3-numpy, whose BLAS is libblas/libcblas) with the
#    library preloaded, against float64 references from a run without it (blas/run_numpy.sh).
if(NOT TARGET tessera_blas)
  return()
endif()

tsr_add_test(NAME blas_gemm SOURCES blas/test_blas.c LIBS tessera_blas LABELS "cpu;blas")
target_link_libraries(blas_gemm PRIVATE Threads::Threads) # test_stats_threads
tsr_add_test(NAME blas_host_view SOURCES blas/test_host_view.c LABELS "cpu;blas")
# The drop-in through dlopen after another library took 1 KiB of the static TLS surplus (a plain
# program that does not link libtessera: it must not be loaded at start-up). It links the
# libraries libtessera needs (OpenMP, MPI, the GPU runtime: some take static TLS of their own),
# kept with --no-as-needed, so that they load at start-up and the dlopen asks the surplus for
# libtessera's own TLS only.
add_library(tsr_test_ie_tls SHARED blas/ie_tls.c)
add_executable(blas_dlopen_tls blas/test_dlopen_tls.c)
target_link_options(blas_dlopen_tls PRIVATE "LINKER:--no-as-needed")
target_link_libraries(blas_dlopen_tls PRIVATE ${TESSERA_LINK_LIBS} ${CMAKE_DL_LIBS})
target_compile_definitions(blas_dlopen_tls PRIVATE
  TSR_TEST_IE_LIB="$<TARGET_FILE:tsr_test_ie_tls>"
  TSR_TEST_BLAS_LIB="$<TARGET_FILE:tessera_blas>")
add_dependencies(blas_dlopen_tls tsr_test_ie_tls tessera_blas)
add_test(NAME blas_dlopen_tls COMMAND blas_dlopen_tls)
set_tests_properties(blas_dlopen_tls PROPERTIES LABELS "cpu;blas" SKIP_RETURN_CODE 77)
# The drop-in with TSR_WISDOM naming a FIFO (issue 30): the library reads the wisdom file
# without blocking, so blas_gemm's tests of the four real entry points
# run (under timeout) and pass, and the process says once, on stderr, that the file is ignored
# and why.
add_test(NAME blas_wisdom_fifo COMMAND sh -c
  "d=$(mktemp -d) && mkfifo $d/w && TSR_WISDOM=$d/w timeout 300 $<TARGET_FILE:blas_gemm> 'test_*gemm' > $d/out 2>&1; \
   rc=$?; tail -3 $d/out; grep 'is ignored (' $d/out; \
   [ $(grep -c 'TSR_WISDOM=.* is ignored (.*a FIFO' $d/out) = 1 ] || rc=1; rm -rf $d; exit $rc")
set_tests_properties(blas_wisdom_fifo PROPERTIES LABELS "cpu;blas" TIMEOUT 330)

# Concurrent invalid CBLAS calls under ThreadSanitizer (issue 48): the drop-in's two sources
# compiled again with -fsanitize=thread into a library of their own (the libtessera under it
# is the plain one; no GEMM runs, only error reports), and threads that make invalid calls at
# once and check what their cblas_xerbla saw of RowMajorStrg. TSan's report of a race exits 66
# (a failure); a kernel whose address layout TSan cannot run on skips (77). Not in sanitizer
# builds (ASan and TSan do not mix), and in the CPU build only: the error path is the same in
# every build, and TSan is not meant to run beside the GPU runtimes' own threads.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=thread)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=thread)
check_c_source_compiles("int main(void) { return 0; }" TSR_HAVE_TSAN)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(TSR_HAVE_TSAN AND NOT TESSERA_ENABLE_SANITIZERS AND NOT TSR_HAVE_CUDA AND NOT TSR_HAVE_HIP)
  add_library(tsr_blas_tsan SHARED ${PROJECT_SOURCE_DIR}/src/blas/blas.c
                                   ${PROJECT_SOURCE_DIR}/src/blas/xerbla.c)
  target_link_libraries(tsr_blas_tsan PUBLIC tessera PRIVATE Threads::Threads)
  target_include_directories(tsr_blas_tsan PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(tsr_blas_tsan PRIVATE TSR_BUILDING_LIBRARY _POSIX_C_SOURCE=200809L)
  target_compile_options(tsr_blas_tsan PRIVATE -fsanitize=thread -g -O1)
  target_link_options(tsr_blas_tsan PRIVATE -fsanitize=thread)
  add_executable(blas_xerbla_threads blas/test_xerbla_threads.c)
  target_link_libraries(blas_xerbla_threads PRIVATE tsr_blas_tsan Threads::Threads)
  target_compile_options(blas_xerbla_threads PRIVATE -fsanitize=thread -g -O1)
  target_link_options(blas_xerbla_threads PRIVATE -fsanitize=thread)
  add_test(NAME blas_xerbla_threads COMMAND sh -c
    "out=$(TSAN_OPTIONS=halt_on_error=1 $<TARGET_FILE:blas_xerbla_threads> 2>&1); rc=$?; \
     echo \"$out\" | tail -40; \
     case \"$out\" in *'FATAL: ThreadSanitizer'*) [ $rc -ne 0 ] && exit 77;; esac; exit $rc")
  set_tests_properties(blas_xerbla_threads PROPERTIES LABELS "cpu;blas" SKIP_RETURN_CODE 77
                       TIMEOUT 120)
endif()

set(TSR_BLAS_TESTER_DIR "/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/blas"
    CACHE PATH "Directory of the reference BLAS testers (Debian package libblas-test)")

# LD_PRELOAD value. A sanitized library needs the sanitizer runtime loaded first, since the
# testers themselves are not instrumented (GCC's shared libasan; Clang links its runtime
# statically, which cannot be preloaded into another program, so the testers are left out).
set(tsr_blas_preload $<TARGET_FILE:tessera_blas>)
# Two threads exercise the parallel partitioning at the testers' edge sizes; passive waiting
# keeps a loaded machine from burning the time in spinning barriers.
set(tsr_blas_tester_env "OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
set(tsr_blas_testers ON)
if(TESSERA_ENABLE_SANITIZERS)
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE tsr_asan_rt OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(tsr_blas_preload "${tsr_asan_rt}:$<TARGET_FILE:tessera_blas>")
    # Leaks of the uninstrumented Fortran testers are not ours; blas_gemm checks our leaks.
    list(APPEND tsr_blas_tester_env "ASAN_OPTIONS=detect_leaks=0")
  else()
    set(tsr_blas_testers OFF)
  endif()
endif()

if(tsr_blas_testers)
  # tester  input prefix  routine as printed  entry point counted by the library
  set(tsr_blas_tester_list
      "xblat3s|sblat3|SGEMM|sgemm_"
      "xblat3d|dblat3|DGEMM|dgemm_"
      "xscblat3|scblat3|cblas_sgemm|cblas_sgemm"
      "xdcblat3|dcblat3|cblas_dgemm|cblas_dgemm"
      "xblat3c|cblat3|CGEMM|cgemm_"
      "xblat3z|zblat3|ZGEMM|zgemm_"
      "xccblat3|ccblat3|cblas_cgemm|cblas_cgemm"
      "xzcblat3|zcblat3|cblas_zgemm|cblas_zgemm")
  foreach(entry ${tsr_blas_tester_list})
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 tester)
    list(GET fields 1 prefix)
    list(GET fields 2 routine)
    list(GET fields 3 symbol)
    foreach(set stock edges)
      if(set STREQUAL "stock")
        set(input ${CMAKE_CURRENT_SOURCE_DIR}/blas/${prefix}_gemm.in)
      else()
        set(input ${CMAKE_CURRENT_SOURCE_DIR}/blas/${prefix}_gemm_edges.in)
      endif()
      set(name blas_tester_${tester}_${set})
      add_test(NAME ${name}
               COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/blas/run_tester.sh
                       ${TSR_BLAS_TESTER_DIR}/${tester} ${input} ${routine} ${symbol}
                       "${tsr_blas_preload}")
      # The CBLAS complex testers' edge sets take about a minute each under the sanitizers
      # (Debug): "slow" there (the sanitizer variant skips that label); the Fortran complex
      # edges, which reach the same code, stay in it.
      set(labels "cpu;blas")
      if(set STREQUAL "edges" AND tester MATCHES "^x[cz]cblat3$")
        set(labels "cpu;blas;slow")
      endif()
      set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77
                           ENVIRONMENT "${tsr_blas_tester_env}")
    endforeach()
  endforeach()
  # NumPy, where users meet the drop-in (issue 31): small and ragged products in every layout
  # NumPy hands to CBLAS, checked against float64 references from a run without the library.
  set(TSR_NUMPY_PYTHON "/usr/bin/python3" CACHE FILEPATH "Python whose NumPy uses the system BLAS")
  add_test(NAME blas_numpy
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/blas/run_numpy.sh ${TSR_NUMPY_PYTHON}
                   ${CMAKE_CURRENT_SOURCE_DIR}/blas/numpy_dropin.py "${tsr_blas_preload}")
  set_tests_properties(blas_numpy PROPERTIES LABELS "cpu;blas" SKIP_RETURN_CODE 77
                       ENVIRONMENT "${tsr_blas_tester_env}")
endif()
