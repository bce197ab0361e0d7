# SPDX-License-Identifier: BSD-3-Clause
# libFuzzer target for the .npy header parser (option TESSERA_ENABLE_FUZZ; needs clang and
# its sanitizer runtimes, Debian's libclang-rt-dev). scripts/test.d/fuzz.sh builds it in a
# separate build folder and runs it for a bounded time on a generated seed corpus.
if(TESSERA_ENABLE_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TESSERA_ENABLE_FUZZ needs clang as the C compiler "
                        "(-DCMAKE_C_COMPILER=clang); this one is ${CMAKE_C_COMPILER_ID}")
  endif()
  # The parser and the error machinery compiled into the target itself, so that they carry
  # the fuzzer's coverage instrumentation (the library's objects do not). npy.c depends on
  # nothing else by design; status.c keeps the message in the per-thread state (thread_state.c)
  # and reads TSR_ERROR_TRACE through the environment reader (env.c).
  add_executable(fuzz_npy fuzz/fuzz_npy.c ${PROJECT_SOURCE_DIR}/src/core/npy.c
                          ${PROJECT_SOURCE_DIR}/src/core/status.c
                          ${PROJECT_SOURCE_DIR}/src/core/thread_state.c
                          ${PROJECT_SOURCE_DIR}/src/core/env.c
                          ${PROJECT_SOURCE_DIR}/src/core/dtype.c)
  target_include_directories(fuzz_npy PRIVATE ${PROJECT_SOURCE_DIR}/include
                             ${PROJECT_BINARY_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(fuzz_npy PRIVATE _POSIX_C_SOURCE=200809L)
  set(TSR_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
      -fno-omit-frame-pointer)
  target_compile_options(fuzz_npy PRIVATE ${TSR_FUZZ_FLAGS} -g -O1 -Wall -Wextra -Wpedantic)
  target_link_options(fuzz_npy PRIVATE ${TSR_FUZZ_FLAGS})
  # A few seconds of fuzzing from an empty corpus as a smoke test of the target; the long run
  # is scripts/test.d/fuzz.sh.
  add_test(NAME fuzz_npy_smoke
           COMMAND fuzz_npy -runs=20000 -seed=1 -max_len=512
                   -dict=${CMAKE_CURRENT_SOURCE_DIR}/fuzz/npy.dict)
  set_tests_properties(fuzz_npy_smoke PROPERTIES LABELS "cpu;fuzz")
endif()
