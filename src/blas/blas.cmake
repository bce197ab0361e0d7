# SPDX-License-Identifier: BSD-3-Clause
# libtessera_blas: the BLAS-compatible drop-in (s/d/c/zgemm_, cblas_s/d/c/zgemm, c/zgemm3m) on
# top of libtessera. Included by the top-level CMakeLists.txt after the main libraries exist.
add_library(tessera_blas SHARED
  ${CMAKE_CURRENT_LIST_DIR}/blas.c
  ${CMAKE_CURRENT_LIST_DIR}/xerbla.c)
# Threads: the lock that serializes CBLAS error reports (xerbla.c).
target_link_libraries(tessera_blas PUBLIC tessera PRIVATE Threads::Threads)
target_include_directories(tessera_blas PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(tessera_blas PRIVATE TSR_BUILDING_LIBRARY _POSIX_C_SOURCE=200809L)
target_compile_options(tessera_blas PRIVATE -Wall -Wextra -Wpedantic)
set_target_properties(tessera_blas PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  # Preloaded from its install directory, it must find libtessera beside it without
  # LD_LIBRARY_PATH.
  INSTALL_RPATH "$ORIGIN")
add_library(Tessera::tessera_blas ALIAS tessera_blas)
# Installed by cmake/TesseraInstall.cmake with the other libraries.
