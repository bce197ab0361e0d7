# SPDX-License-Identifier: BSD-3-Clause
# tessera-tune, the CPU GEMM's empirical tuner (writes the wisdom file; README "CPU GEMM
# tuning"). It drives the internal tuning interface (src/omp/gemm/gemm_tune.h), so it links the
# static library. Installed beside tessera-gemm; not exported (a program, not a library).
if(TSR_HAVE_OPENMP)
  add_executable(tessera-tune ${CMAKE_CURRENT_LIST_DIR}/tessera_tune.c)
  target_link_libraries(tessera-tune PRIVATE tessera_static OpenMP::OpenMP_C m)
  target_include_directories(tessera-tune PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(tessera-tune PRIVATE _POSIX_C_SOURCE=200809L)
  target_compile_options(tessera-tune PRIVATE -Wall -Wextra -Wpedantic)
  install(TARGETS tessera-tune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
