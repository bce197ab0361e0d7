# SPDX-License-Identifier: BSD-3-Clause
# CPU GEMM (included from omp.cmake, top-level scope), in three folders as BLIS lays it out:
#   frame/   the algorithm (driver, macro-kernel, packing, threads, vendor path): no ISA code;
#   kernels/ the micro-kernels and small-matrix kernels per ISA, and their table;
#   config/  which kernel and blocks a CPU gets (registry rows, the wisdom file).
# This file compiles them, with per-file ISA flags for the kernels, and the vendor path.
file(GLOB TSR_GEMM_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/frame/*.c
     ${CMAKE_CURRENT_LIST_DIR}/kernels/*.c ${CMAKE_CURRENT_LIST_DIR}/config/*.c)
target_sources(tessera_objects PRIVATE ${TSR_GEMM_SOURCES})

# Each ISA micro-kernel is compiled with its own instruction-set flags and called only after
# run-time CPU feature detection (gemm_kernels.c), so the rest of the library stays baseline
# x86-64 and runs on any CPU. On other architectures the files compile to nothing.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/kernels/gemm_ukr_avx2.c
    ${CMAKE_CURRENT_LIST_DIR}/kernels/gemm_small_avx2.c ${CMAKE_CURRENT_LIST_DIR}/kernels/gemm_pack_avx2.c
    PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/kernels/gemm_ukr_avx512.c
    ${CMAKE_CURRENT_LIST_DIR}/kernels/gemm_pack_avx512.c
    ${CMAKE_CURRENT_LIST_DIR}/kernels/gemm_small_avx512_f32.c ${CMAKE_CURRENT_LIST_DIR}/kernels/gemm_small_avx512_f64.c
    PROPERTIES COMPILE_OPTIONS "-mavx512f;-mfma;-mprfchw")
endif()

# Vendor path (TSR_GEMM_VENDOR on the CPU): a CBLAS, OpenBLAS preferred. It is NOT linked: the
# library is dlopen()ed by its soname at first use and cblas_sgemm/cblas_dgemm are looked up
# in that handle, so that Tessera's own BLAS drop-in, when LD_PRELOADed, cannot intercept the
# call and recurse into Tessera (see frame/gemm_vendor.c). Only the soname (and the full path as a second
# try) is recorded here.
if(TESSERA_WITH_VENDOR_BLAS)
  set(_tsr_cblas_hints "")
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(TSR_OPENBLAS_PC QUIET openblas)
    if(TSR_OPENBLAS_PC_FOUND)
      set(_tsr_cblas_hints ${TSR_OPENBLAS_PC_LIBRARY_DIRS})
    endif()
  endif()
  find_library(TSR_CBLAS_LIBRARY NAMES openblas cblas HINTS ${_tsr_cblas_hints}
               DOC "CBLAS library for the CPU vendor GEMM path (dlopen()ed at run time)")
  if(TSR_CBLAS_LIBRARY)
    get_filename_component(_tsr_cblas_real "${TSR_CBLAS_LIBRARY}" REALPATH)
    get_filename_component(_tsr_cblas_soname "${_tsr_cblas_real}" NAME)
    if(CMAKE_OBJDUMP)
      execute_process(COMMAND ${CMAKE_OBJDUMP} -p "${_tsr_cblas_real}"
                      OUTPUT_VARIABLE _tsr_objdump ERROR_QUIET RESULT_VARIABLE _tsr_rc)
      if(_tsr_rc EQUAL 0 AND _tsr_objdump MATCHES "SONAME +([^ \n]+)")
        set(_tsr_cblas_soname "${CMAKE_MATCH_1}")
      endif()
    endif()
    message(STATUS "Tessera CPU vendor GEMM: ${_tsr_cblas_soname} (${_tsr_cblas_real}), dlopen()ed at run time")
    set(TSR_HAVE_VENDOR_BLAS 1)
    set_property(SOURCE ${CMAKE_CURRENT_LIST_DIR}/frame/gemm_vendor.c APPEND PROPERTY COMPILE_DEFINITIONS
      "TSR_OMP_VENDOR_BLAS_LIB=\"${_tsr_cblas_soname}\""
      "TSR_OMP_VENDOR_BLAS_PATH=\"${_tsr_cblas_real}\"")
    target_link_libraries(tessera_objects PRIVATE ${CMAKE_DL_LIBS})
    if(CMAKE_DL_LIBS)
      list(APPEND TESSERA_LINK_LIBS ${CMAKE_DL_LIBS})
    endif()
  else()
    message(WARNING "TESSERA_WITH_VENDOR_BLAS: no CBLAS (OpenBLAS) found; the CPU vendor GEMM "
                    "path will return TSR_ERR_UNSUPPORTED (Debian: apt-get install libopenblas-dev)")
  endif()
endif()
