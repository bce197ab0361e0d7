# SPDX-License-Identifier: BSD-3-Clause
# Sources of src/core: backend-neutral validation, arrays, devices, .npy, Philox.
# Build variants are whole files (alloc_<variant>.c behind tsr__host_block), one per build:
# the SimGrid model build (bench/scale: the compile definition TSR_SMPI_MODEL) takes
# alloc_smpi.c, every other build alloc_system.c.
file(GLOB TSR_CORE_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
list(FILTER TSR_CORE_SOURCES EXCLUDE REGEX "/alloc_[a-z]+\\.c$")
get_directory_property(tsr_core_defs COMPILE_DEFINITIONS)
if("TSR_SMPI_MODEL" IN_LIST tsr_core_defs)
  list(APPEND TSR_CORE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/alloc_smpi.c)
else()
  list(APPEND TSR_CORE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/alloc_system.c)
endif()
target_sources(tessera_objects PRIVATE ${TSR_CORE_SOURCES})
