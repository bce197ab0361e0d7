# Install and export: headers, libraries (shared with SONAME, static), tessera-gemm, the BLAS
# drop-in, the CMake package (find_package(Tessera CONFIG) -> Tessera::tessera) and tessera.pc.
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

# pkg-config: the public headers include mpi.h in MPI builds, so its include flags are part
# of Cflags; the libraries the static archive needs are Libs.private.
set(TSR_PC_CFLAGS "")
set(TSR_PC_LIBS_PRIVATE "-lm -lpthread")
if(TSR_HAVE_OPENMP)
  string(APPEND TSR_PC_LIBS_PRIVATE " ${OpenMP_C_FLAGS}")
endif()
if(TSR_HAVE_MPI)
  foreach(dir ${MPI_C_INCLUDE_DIRS})
    string(APPEND TSR_PC_CFLAGS " -I${dir}")
  endforeach()
  foreach(lib ${MPI_C_LIBRARIES})
    string(APPEND TSR_PC_LIBS_PRIVATE " ${lib}")
  endforeach()
endif()
if(DEFINED TESSERA_PC_EXTRA_LIBS)
  string(APPEND TSR_PC_LIBS_PRIVATE " ${TESSERA_PC_EXTRA_LIBS}")
endif()
# Relocatable: the prefix is found from the .pc file's own folder (${pcfiledir}), so the
# installed tree works wherever `cmake --install --prefix` put it.
file(RELATIVE_PATH TSR_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(cmake/tessera.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tessera.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tessera.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TARGET tessera_scalapack)
  configure_file(cmake/tessera-scalapack.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tessera-scalapack.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tessera-scalapack.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
