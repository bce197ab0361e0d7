# SPDX-License-Identifier: BSD-3-Clause
# libtessera_scalapack: the ScaLAPACK drop-in (pdgemm_, psgemm_, pzgemm_, pcgemm_) over
# Tessera's distributed GEMM. Included by the top-level CMakeLists.txt when MPI is enabled.
#
# It depends on libtessera.so (DT_NEEDED, found beside it through RUNPATH $ORIGIN when
# installed or preloaded), so a program that calls tsr_* and pdgemm_ has one runtime: one
# thread pool, one error state, one wisdom cache. It uses the public API plus the drop-ins'
# internal interface (src/core/dropin.h: the MPI layer's exchange and matrix creation, the
# error and agreement helpers, the environment reader), which libtessera.so exports under a
# version node tied to the release. BLACS and PBLAS's error handler are referenced weakly and
# come from the program's ScaLAPACK at run time (no DT_NEEDED on a particular ScaLAPACK build).
add_library(tessera_scalapack SHARED ${CMAKE_CURRENT_LIST_DIR}/scalapack.c
            ${CMAKE_CURRENT_LIST_DIR}/pgemm_direct.c)
target_link_libraries(tessera_scalapack PUBLIC tessera)
target_include_directories(tessera_scalapack PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(tessera_scalapack PRIVATE TSR_BUILDING_LIBRARY _POSIX_C_SOURCE=200809L)
target_compile_options(tessera_scalapack PRIVATE -Wall -Wextra -Wpedantic)
set_target_properties(tessera_scalapack PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  EXPORT_NAME scalapack
  # Preloaded from its install directory, it must find libtessera beside it without
  # LD_LIBRARY_PATH.
  INSTALL_RPATH "$ORIGIN")
add_library(Tessera::scalapack ALIAS tessera_scalapack)
# Installed by cmake/TesseraInstall.cmake with the other libraries.
