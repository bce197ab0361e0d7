# libtessera_scalapack: the ScaLAPACK drop-in (pdgemm_, psgemm_) over Tessera's distributed
# GEMM. Included by the top-level CMakeLists.txt when MPI is enabled.
#
# It needs the MPI layer's internals (distributed-matrix struct, redistribution), so it is
# linked with the static library and hides everything but its own exports
# (--exclude-libs): the drop-in is self-contained and cannot clash with a libtessera.so that
# the program also loads. BLACS and PBLAS's error handler are referenced weakly and come from
# the program's ScaLAPACK at run time (no DT_NEEDED on a particular ScaLAPACK build).
add_library(tessera_scalapack SHARED ${CMAKE_CURRENT_LIST_DIR}/scalapack.c)
target_link_libraries(tessera_scalapack PRIVATE tessera_static)
target_include_directories(tessera_scalapack PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(tessera_scalapack PRIVATE TSR_BUILDING_LIBRARY _POSIX_C_SOURCE=200809L)
target_compile_options(tessera_scalapack PRIVATE -Wall -Wextra -Wpedantic)
target_link_options(tessera_scalapack PRIVATE "LINKER:--exclude-libs,ALL")
set_target_properties(tessera_scalapack PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  EXPORT_NAME scalapack)
add_library(Tessera::scalapack ALIAS tessera_scalapack)
# Installed by cmake/TesseraInstall.cmake with the other libraries.
