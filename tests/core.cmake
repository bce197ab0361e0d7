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
