# SPDX-License-Identifier: BSD-3-Clause
# .npy format (parser, writer, load/save) and the host Philox fill.
tsr_add_test(NAME test_npy SOURCES test_npy.c)
target_compile_definitions(test_npy PRIVATE TSR_DATA_DIR="${PROJECT_SOURCE_DIR}/data")

# tsr__rng_fill_host is hidden in the shared library: link the static one, whose objects
# resolve every tsr_ symbol of this program before the shared library is searched.
tsr_add_test(NAME test_philox SOURCES test_philox.c LIBS tessera_static)
target_include_directories(test_philox PRIVATE ${PROJECT_SOURCE_DIR}/src)

# Safe writes and non-blocking reads of the C API: FIFO, device nodes, symlinks, long names,
# full disk (file size limit; a tmpfs when mountable). Also run by the asan variant.
tsr_add_test(NAME test_reliability SOURCES test_reliability.c)
set_tests_properties(test_reliability PROPERTIES TIMEOUT 120)
