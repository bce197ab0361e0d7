# SPDX-License-Identifier: BSD-3-Clause
# The drop-ins' internal interface (src/core/dropin.h): a version script for libtessera.so that
# exports the functions listed there under the node TESSERA_INTERNAL_<project version>. The
# public tsr_ names keep their default visibility and stay unversioned; every other symbol is
# hidden by -fvisibility=hidden, so the script only names the drop-ins' functions, and makes
# every C++ symbol local (`_Z*`): the public API is C, and hip-clang gives the host stubs of
# __global__ kernel templates default visibility whatever -fvisibility says.
file(READ ${PROJECT_SOURCE_DIR}/src/core/dropin.h tsr_dropin_text)
# An entry added to the list regenerates the script at the next build (no stale exports).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/core/dropin.h)
string(REGEX MATCHALL "  X\\(tsr__[a-z0-9_]+\\)" tsr_dropin_entries "${tsr_dropin_text}")
set(tsr_dropin_names "")
foreach(entry ${tsr_dropin_entries})
  string(REGEX REPLACE "^  X\\((tsr__[a-z0-9_]+)\\)$" "\\1" name "${entry}")
  # The MPI layer's entries exist only in MPI builds.
  if(name MATCHES "^tsr__(dist_|mpi_|dm_|bc_)" AND NOT TSR_HAVE_MPI)
    continue()
  endif()
  string(APPEND tsr_dropin_names "    ${name};\n")
endforeach()
set(TESSERA_INTERNAL_VERSION "TESSERA_INTERNAL_${PROJECT_VERSION}")
set(tsr_dropin_map ${CMAKE_CURRENT_BINARY_DIR}/tessera_dropin.map)
file(WRITE ${tsr_dropin_map}.in
     "/* Generated from src/core/dropin.h by cmake/TesseraDropin.cmake. */\n"
     "${TESSERA_INTERNAL_VERSION} {\n  global:\n${tsr_dropin_names}  local:\n    _Z*;\n};\n")
configure_file(${tsr_dropin_map}.in ${tsr_dropin_map} COPYONLY)
target_link_options(tessera PRIVATE "LINKER:--version-script=${tsr_dropin_map}")
# The library's calls to its own exported functions (the public tsr_* and the drop-ins' list
# above) bind inside it: direct calls instead of PLT jumps (a public call such as
# tsr_gemm_host makes several: its API context, the error helpers), and nothing from outside
# can interpose them. Measured (issue 31): cblas_sgemm 1x1x1 ... ns.
if(NOT APPLE)
  target_link_options(tessera PRIVATE "LINKER:-Bsymbolic-functions")
endif()
set_property(TARGET tessera APPEND PROPERTY LINK_DEPENDS ${tsr_dropin_map})
