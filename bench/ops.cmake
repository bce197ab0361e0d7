# SPDX-License-Identifier: BSD-3-Clause
# CPU elementwise/reduction benchmark against the memory bandwidth measured in the same run.
# Links the static library so that the backend's binary kernel can be timed on its own
# (without the result allocation that the public tsr_add includes).
add_executable(bench_ops ${CMAKE_CURRENT_LIST_DIR}/bench_ops.c)
target_link_libraries(bench_ops PRIVATE tessera_static m)
target_include_directories(bench_ops PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(bench_ops PRIVATE _POSIX_C_SOURCE=200809L)
