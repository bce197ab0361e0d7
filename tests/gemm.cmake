# CPU GEMM kernels. The program calls the backend's internal tsr__omp_gemm, so it links the
# static library (hidden symbols are reachable there) and compiles the shared test helpers
# itself instead of linking tsr_test_common (which links the shared library: two copies of
# the library's state in one process).
add_executable(test_gemm_kernels test_gemm_kernels.c common/tsr_test.c)
target_link_libraries(test_gemm_kernels PRIVATE tessera_static PkgConfig::CMOCKA m)
target_include_directories(test_gemm_kernels PRIVATE ${PROJECT_SOURCE_DIR}/src
                           ${CMAKE_CURRENT_SOURCE_DIR}/common)
target_compile_definitions(test_gemm_kernels PRIVATE _POSIX_C_SOURCE=200809L)
if(TSR_HAVE_OPENMP)
  target_link_libraries(test_gemm_kernels PRIVATE OpenMP::OpenMP_C)
endif()
# One run per micro-kernel, forced through TSR_CPU_KERNEL; a kernel this CPU lacks is skipped.
foreach(kernel portable avx2 avx512)
  add_test(NAME gemm_kernels_${kernel} COMMAND test_gemm_kernels)
  set_tests_properties(gemm_kernels_${kernel} PROPERTIES LABELS cpu SKIP_RETURN_CODE 77
                       ENVIRONMENT "TSR_CPU_KERNEL=${kernel}")
endforeach()

# The wisdom file of the CPU GEMM (tessera-tune's output): written, read back, used, and
# ignored when corrupt, foreign or missing. Internal API: links the static library.
add_executable(test_wisdom test_wisdom.c common/tsr_test.c)
target_link_libraries(test_wisdom PRIVATE tessera_static PkgConfig::CMOCKA m)
target_include_directories(test_wisdom PRIVATE ${PROJECT_SOURCE_DIR}/src
                           ${CMAKE_CURRENT_SOURCE_DIR}/common)
target_compile_definitions(test_wisdom PRIVATE _POSIX_C_SOURCE=200809L)
if(TSR_HAVE_OPENMP)
  target_link_libraries(test_wisdom PRIVATE OpenMP::OpenMP_C)
endif()
add_test(NAME gemm_wisdom COMMAND test_wisdom)
set_tests_properties(gemm_wisdom PROPERTIES LABELS cpu)

# tessera-tune end to end: a short run writes a wisdom file that --show reports as used.
if(TARGET tessera-tune)
  add_test(NAME gemm_tune_cli COMMAND sh -c
    "d=$(mktemp -d) && $<TARGET_FILE:tessera-tune> --seconds 3 --threads 1 --dtypes d --out $d/w \
     && grep -q '^entry f64 1 ' $d/w \
     && TSR_WISDOM=$d/w $<TARGET_FILE:tessera-tune> --show | grep -q '^wisdom: used' \
     && TSR_WISDOM=$d/w $<TARGET_FILE:tessera-tune> --show | grep -q 'f64, 1 thread(s): .*(wisdom)' \
     && printf 'tessera-wisdom 1\\ncpu elsewhere\\n' > $d/w \
     && TSR_WISDOM=$d/w $<TARGET_FILE:tessera-tune> --show | grep -q '^wisdom: ignored: .*another CPU' \
     && ! $<TARGET_FILE:tessera-tune> --seconds 99 2>/dev/null; rc=$?; rm -rf $d; exit $rc")
  set_tests_properties(gemm_tune_cli PROPERTIES LABELS cpu)
endif()
