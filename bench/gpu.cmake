# SPDX-License-Identifier: BSD-3-Clause
# GPU benchmark (CUDA or HIP builds): native GEMM vs cuBLAS/hipBLAS, elementwise bandwidth
# vs a device copy, launch overhead, GPU vs CPU matmul. Links the static library for the
# internal device operations (the event timers tsr__dev_event_*, src/core/internal.h).
if(TSR_HAVE_CUDA OR TSR_HAVE_HIP)
  add_executable(bench_gpu ${CMAKE_CURRENT_LIST_DIR}/bench_gpu.c)
  target_link_libraries(bench_gpu PRIVATE tessera_static m)
  target_include_directories(bench_gpu PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(bench_gpu PRIVATE _POSIX_C_SOURCE=200809L)
  target_compile_options(bench_gpu PRIVATE -Wall -Wextra -Wpedantic)
endif()
