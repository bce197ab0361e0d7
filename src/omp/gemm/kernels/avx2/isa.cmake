# SPDX-License-Identifier: BSD-3-Clause
# The AVX2 kernels' flags (gemm.cmake applies them to this folder's files but the row): x86-64
# with GCC or Clang only; elsewhere the files compile to nothing.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  set(TSR_GEMM_ISA_FLAGS "-mavx2;-mfma")
endif()
