# SPDX-License-Identifier: BSD-3-Clause
# The CPU GEMM by BLIS's rooms (tests/gemm/: test_gemm_frame, test_gemm_kernels, the complex
# dtypes by the 1m method test_gemm_complex,
# test_gemm_config, their shared helpers in gemm_test.c), the kernel table's rows
# (test_gemm_table) and the wisdom file of the CPU GEMM
# (test_wisdom, tessera-tune's output: written, read back, used, and ignored when corrupt,
# foreign or missing). They call the library's internals (tsr__omp_gemm, the registry), so they
# link the static library (hidden symbols are reachable there) and compile the shared test
# helpers themselves instead of linking tsr_test_common (which links the shared library: two
# copies of the library's state in one process).
set(TSR_GEMM_ROOMS frame kernels config complex)
foreach(room ${TSR_GEMM_ROOMS})
  add_executable(test_gemm_${room} gemm/test_gemm_${room}.c gemm/gemm_test.c common/tsr_test.c)
endforeach()
add_executable(test_gemm_table gemm/test_gemm_table.c common/tsr_test.c)
add_executable(test_wisdom test_wisdom.c common/tsr_test.c)
foreach(t test_gemm_frame test_gemm_kernels test_gemm_config test_gemm_complex test_gemm_table
        test_wisdom)
  target_link_libraries(${t} PRIVATE tessera_static PkgConfig::CMOCKA m)
  target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/src
                             ${CMAKE_CURRENT_SOURCE_DIR}/common)
  target_compile_definitions(${t} PRIVATE _POSIX_C_SOURCE=200809L)
  if(TSR_HAVE_OPENMP)
    target_link_libraries(${t} PRIVATE OpenMP::OpenMP_C)
  endif()
endforeach()

# Each room's program once per ISA, forced through TSR_CPU_KERNEL; an ISA this CPU lacks is
# skipped. gemm_<room>_<isa>: gemm_frame_avx2, gemm_kernels_avx512, ... The ISAs are the folders
# of src/omp/gemm/kernels/ (TSR_GEMM_ISAS, src/omp/gemm/gemm.cmake): a new folder adds its tests.
foreach(kernel ${TSR_GEMM_ISAS})
  foreach(room ${TSR_GEMM_ROOMS})
    add_test(NAME gemm_${room}_${kernel} COMMAND test_gemm_${room})
    # The complex room over the ISA kernels takes 1.5 minutes each under the sanitizers
    # (Debug): "slow" there (skipped by that variant); its packing is ISA-independent C, which
    # gemm_complex_portable keeps under the sanitizers.
    set(labels cpu)
    if(room STREQUAL "complex" AND NOT kernel STREQUAL "portable")
      set(labels "cpu;slow")
    endif()
    set_tests_properties(gemm_${room}_${kernel} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77
                         ENVIRONMENT "TSR_CPU_KERNEL=${kernel}")
  endforeach()
endforeach()

# Every row of the compiled kernel table against the ISA folders (gemm_table): one per folder,
# named after it, and every kernel's fields, names, register block and packers.
string(REPLACE ";" "," _tsr_isa_csv "${TSR_GEMM_ISAS}")
target_compile_definitions(test_gemm_table PRIVATE "TSR_GEMM_ISA_FOLDERS=\"${_tsr_isa_csv}\"")
add_test(NAME gemm_table COMMAND test_gemm_table)
set_tests_properties(gemm_table PROPERTIES LABELS cpu)

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
     && ! $<TARGET_FILE:tessera-tune> --seconds 99 --out $d/x 2>/dev/null; rc=$?; rm -rf $d; exit $rc")
  set_tests_properties(gemm_tune_cli PROPERTIES LABELS cpu)
  # Its destination (devices, FIFOs, links refused before tuning), --dtypes, a FIFO as
  # TSR_WISDOM, and four concurrent tuners merging into one file (issue 30).
  add_test(NAME gemm_tune_targets
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tune/tune_targets.sh $<TARGET_FILE:tessera-tune>)
  set_tests_properties(gemm_tune_targets PROPERTIES LABELS cpu TIMEOUT 300 PROCESSORS 2)
endif()
