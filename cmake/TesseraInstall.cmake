# SPDX-License-Identifier: BSD-3-Clause
# Install and export: headers, libraries (shared with SONAME, static), tessera-gemm,
# tessera-tune, the BLAS drop-in, the CMake package (find_package(Tessera CONFIG) ->
# Tessera::tessera), tessera.pc (and tessera-mpi.pc), the license and an Lmod module file
# (share/modulefiles/tessera/<version>.lua).
include(CMakePackageConfigHelpers)

set(TESSERA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)

install(FILES include/tessera.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/tessera/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera
        FILES_MATCHING PATTERN "*.h")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/include/tessera/config.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera)

set_target_properties(tessera PROPERTIES EXPORT_NAME tessera)
set_target_properties(tessera_static PROPERTIES EXPORT_NAME tessera_static)
set(TESSERA_INSTALL_TARGETS tessera tessera_static)
if(TARGET tessera_blas)
  list(APPEND TESSERA_INSTALL_TARGETS tessera_blas)
endif()
# The ScaLAPACK drop-in, exported as Tessera::scalapack (needs libtessera beside it: RUNPATH
# $ORIGIN, set below).
if(TARGET tessera_scalapack)
  list(APPEND TESSERA_INSTALL_TARGETS tessera_scalapack)
endif()
if(TARGET tessera-gemm)
  list(APPEND TESSERA_INSTALL_TARGETS tessera-gemm)
endif()
if(TARGET tessera-tune)
  install(TARGETS tessera-tune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(FILES LICENSE CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Installed programs and the BLAS drop-in find libtessera wherever the prefix is.
file(RELATIVE_PATH TSR_BIN_TO_LIB ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
if(TARGET tessera-gemm)
  set_target_properties(tessera-gemm PROPERTIES INSTALL_RPATH "$ORIGIN/${TSR_BIN_TO_LIB}")
endif()
foreach(t tessera_blas tessera_scalapack)
  if(TARGET ${t})
    set_target_properties(${t} PROPERTIES INSTALL_RPATH "$ORIGIN")
  endif()
endforeach()
install(TARGETS ${TESSERA_INSTALL_TARGETS} EXPORT TesseraTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${TESSERA_CMAKE_DIR})

configure_package_config_file(cmake/TesseraConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/TesseraConfig.cmake INSTALL_DESTINATION ${TESSERA_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/TesseraConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/TesseraConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/TesseraConfigVersion.cmake
        DESTINATION ${TESSERA_CMAKE_DIR})

# pkg-config. tessera.pc is for programs that include tessera.h, which needs no MPI: Cflags has
# no MPI include directory, Libs links libtessera.so and records where it is (-Wl,-rpath: the
# program then starts without LD_LIBRARY_PATH; the shared library finds its own OpenMP and MPI
# through its NEEDED entries). Libs.private lists what the static archive needs
# (pkg-config --static). There is no Requires.private: pkg-config would add its Cflags (MPI's)
# to every program. tessera-mpi.pc (MPI builds) is for programs that include tessera/dist.h and
# call MPI: it adds MPI's include directories and libraries as this build found them
# (`pkg-config --cflags --libs tessera-mpi`; with mpicc, tessera.pc is enough).
set(TSR_PC_CFLAGS "")
set(TSR_PC_LIBS_PRIVATE "-lm -lpthread")
if(TSR_HAVE_OPENMP)
  string(APPEND TSR_PC_LIBS_PRIVATE " ${OpenMP_C_FLAGS}")
endif()
set(TSR_PC_MPI_CFLAGS "-DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1")
set(TSR_PC_MPI_LIBS "")
if(TSR_HAVE_MPI)
  foreach(dir ${MPI_C_INCLUDE_DIRS})
    string(APPEND TSR_PC_MPI_CFLAGS " -I${dir}")
  endforeach()
  foreach(lib ${MPI_C_LIBRARIES})
    string(APPEND TSR_PC_LIBS_PRIVATE " ${lib}")
    string(APPEND TSR_PC_MPI_LIBS " ${lib}")
  endforeach()
  string(STRIP "${TSR_PC_MPI_LIBS}" TSR_PC_MPI_LIBS)
endif()
if(DEFINED TESSERA_PC_EXTRA_LIBS)
  string(APPEND TSR_PC_LIBS_PRIVATE " ${TESSERA_PC_EXTRA_LIBS}")
endif()
# Relocatable: the prefix is found from the .pc file's own folder (${pcfiledir}), so the
# installed tree works wherever `cmake --install --prefix` put it.
file(RELATIVE_PATH TSR_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(cmake/tessera.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tessera.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tessera.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TSR_HAVE_MPI)
  configure_file(cmake/tessera-mpi.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tessera-mpi.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tessera-mpi.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
if(TARGET tessera_scalapack)
  configure_file(cmake/tessera-scalapack.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tessera-scalapack.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tessera-scalapack.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

# The Lmod module file: `module use <prefix>/share/modulefiles; module load tessera`. It finds
# the prefix from its own path (TSR_MODULE_DEPTH folders above it), so it stays right after
# `cmake --install --prefix` elsewhere or a move of the whole tree.
set(TSR_MODULE_DIR ${CMAKE_INSTALL_DATADIR}/modulefiles/tessera)
string(REGEX MATCHALL "[^/]+" tsr_module_parts "${TSR_MODULE_DIR}/${PROJECT_VERSION}.lua")
list(LENGTH tsr_module_parts TSR_MODULE_DEPTH)
set(TSR_MODULE_BACKENDS "CPU (OpenMP ${TSR_HAVE_OPENMP})")
if(TSR_HAVE_MPI)
  string(APPEND TSR_MODULE_BACKENDS ", MPI (${MPI_C_LIBRARY_VERSION_STRING})")
endif()
if(TSR_HAVE_CUDA)
  string(APPEND TSR_MODULE_BACKENDS ", CUDA")
endif()
if(TSR_HAVE_HIP)
  string(APPEND TSR_MODULE_BACKENDS ", HIP")
endif()
# One line, and nothing that would end Lua's [[...]] strings.
string(REGEX REPLACE "[\r\n\t ]+" " " TSR_MODULE_BACKENDS "${TSR_MODULE_BACKENDS}")
string(REPLACE "]" ")" TSR_MODULE_BACKENDS "${TSR_MODULE_BACKENDS}")
string(REPLACE "[" "(" TSR_MODULE_BACKENDS "${TSR_MODULE_BACKENDS}")
string(STRIP "${TSR_MODULE_BACKENDS}" TSR_MODULE_BACKENDS)
configure_file(cmake/tessera.lua.in ${CMAKE_CURRENT_BINARY_DIR}/modulefiles/${PROJECT_VERSION}.lua @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/modulefiles/${PROJECT_VERSION}.lua DESTINATION ${TSR_MODULE_DIR})
