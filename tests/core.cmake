# SPDX-License-Identifier: BSD-3-Clause
# The backend-agnostic core suite: every program runs once per backend of this build
# (<name>_cpu, <name>_cuda, <name>_hip) with TSR_TEST_DEVICE set, and reads results back with
# tsr_array_read, so the GPU builds run the same checks.
set(TSR_CORE_SUITE status device creation views transfer binary unary reduce matmul random
    bad_input error_names)
foreach(t ${TSR_CORE_SUITE})
  tsr_add_suite_test(NAME core_${t} SOURCES test_${t}.c core_util.c)
endforeach()
# The thread-locality test of the last error and the concurrent-callers test start threads.
target_link_libraries(core_status PRIVATE Threads::Threads)
target_link_libraries(core_matmul PRIVATE Threads::Threads)

# The complex dtypes through the array API on the CPU (issue 50): creation, conversions, Philox,
# elementwise, reductions, .npy, the GEMM entries against a float64-complex reference.
tsr_add_test(NAME test_complex SOURCES test_complex.c)

# The one environment reader (src/core/env.c): its table against the README's, no other
# reader of TSR_* in src/, bad values (internal functions: the static library).
add_executable(test_env test_env.c)
target_link_libraries(test_env PRIVATE tsr_test_common tessera_static)
target_include_directories(test_env PRIVATE ${PROJECT_SOURCE_DIR}/src)
add_test(NAME test_env COMMAND test_env ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/src)
set_tests_properties(test_env PROPERTIES LABELS "cpu")

# Registered, checked data (issue 49): the dtypes' rows round-trip through names, the parser,
# sizes and .npy type strings; every backend table of the build has its required entries and
# classifies every entry (internal functions and tables: the static library).
foreach(t dtypes backend_tables)
  add_executable(test_${t} test_${t}.c)
  target_link_libraries(test_${t} PRIVATE tsr_test_common tessera_static)
  target_include_directories(test_${t} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  add_test(NAME test_${t} COMMAND test_${t})
  set_tests_properties(test_${t} PROPERTIES LABELS "cpu")
endforeach()

# The raise site of errors (issue 49): tsr_last_error_site, its lifetime, per thread, and
# TSR_ERROR_TRACE's lines; the src/ folder lets it check that a reported line raises.
add_executable(test_error_site test_error_site.c)
target_link_libraries(test_error_site PRIVATE tsr_test_common Threads::Threads)
add_test(NAME test_error_site COMMAND test_error_site ${PROJECT_SOURCE_DIR}/src)
set_tests_properties(test_error_site PROPERTIES LABELS "cpu")

# The docs against the tree (issue 49): the paths docs/architecture.md and docs/conventions.md
# quote exist, the count of src/core/dropin.h's functions and the internal headers the drop-ins
# may include are the ones architecture.md states, and no table row outgrows a screen.
find_program(TSR_PYTHON3 python3)
if(TSR_PYTHON3)
  add_test(NAME docs_check COMMAND ${TSR_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_docs.py
                                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(docs_check PROPERTIES LABELS "cpu")
  # Calls go one way (docs/conventions.md): no circle of files in src/ (scripts/callgraph.py;
  # dispatch through tables of functions is an inversion, not a dependency).
  add_test(NAME arch_no_file_circles
           COMMAND ${TSR_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/callgraph.py cycles --root
                   ${PROJECT_SOURCE_DIR}/src)
  set_tests_properties(arch_no_file_circles PROPERTIES LABELS "cpu")
endif()
