# SPDX-License-Identifier: BSD-3-Clause
# The GPU kernels on the host, as build targets of a CUDA build (included by tests/gpu.cmake).
#
#  - tessera_emu: a static library of the library's C objects (core, omp, mpi: those of
#    tessera_objects outside src/gpu) and the backend's own src/gpu/*.cu compiled as C++ by the
#    host compiler against the CUDA emulator (tsr_emu.h, included first, and tsr_emu.cpp). Each
#    .cu is compiled through a one-line wrapper that includes it: the kernels are not rewritten,
#    they launch through TSR__LAUNCH (src/gpu/gpu_port.cuh), which the emulator defines.
#  - emu_<test>: the test programs run.sh runs, linked with tessera_emu; emu_tessera_gemm: the
#    job itself (tests/gpu_emu/job.sh).
# The emulator has no cuBLAS: its config.h is the build's with TSR_HAVE_GPU_VENDOR_BLAS 0, put
# first on the include path of the emulated sources and the test programs.
enable_language(CXX)
set(tsr_emu_dir ${CMAKE_CURRENT_BINARY_DIR}/gpu_emu)
set(tsr_emu_src ${CMAKE_CURRENT_SOURCE_DIR}/gpu_emu)
file(READ ${PROJECT_BINARY_DIR}/include/tessera/config.h tsr_emu_config)
string(REPLACE "#define TSR_HAVE_GPU_VENDOR_BLAS 1" "#define TSR_HAVE_GPU_VENDOR_BLAS 0"
       tsr_emu_config "${tsr_emu_config}")
file(CONFIGURE OUTPUT ${tsr_emu_dir}/inc/tessera/config.h CONTENT "${tsr_emu_config}" @ONLY)
# The kernels include <cuda_runtime.h>; the emulator's declarations are already in.
file(CONFIGURE OUTPUT ${tsr_emu_dir}/inc/cuda_runtime.h
     CONTENT "/* The CUDA emulator of the tests: its declarations come from tsr_emu.h. */\n")

file(GLOB tsr_emu_cu CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/gpu/*.cu)
set(tsr_emu_wrappers "")
foreach(cu ${tsr_emu_cu})
  get_filename_component(name ${cu} NAME_WE)
  file(CONFIGURE OUTPUT ${tsr_emu_dir}/src/${name}.cpp CONTENT "#include \"${cu}\"\n")
  list(APPEND tsr_emu_wrappers ${tsr_emu_dir}/src/${name}.cpp)
endforeach()
set_source_files_properties(${tsr_emu_wrappers} PROPERTIES
  COMPILE_OPTIONS "-O1;-g;-w;-include;${tsr_emu_src}/tsr_emu.h"
  COMPILE_DEFINITIONS "TSR_GPU_VENDOR_BLAS=0")

add_library(tessera_emu STATIC ${tsr_emu_wrappers} ${tsr_emu_src}/tsr_emu.cpp
            $<FILTER:$<TARGET_OBJECTS:tessera_objects>,EXCLUDE,/src/gpu/>)
set_target_properties(tessera_emu PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                                             CXX_EXTENSIONS OFF)
target_include_directories(tessera_emu BEFORE PUBLIC ${tsr_emu_dir}/inc)
target_include_directories(tessera_emu PUBLIC ${PROJECT_SOURCE_DIR}/include
                           ${PROJECT_BINARY_DIR}/include ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(tessera_emu PUBLIC m Threads::Threads stdc++)
if(TSR_HAVE_OPENMP)
  find_package(OpenMP REQUIRED COMPONENTS CXX)
  target_link_libraries(tessera_emu PUBLIC OpenMP::OpenMP_C OpenMP::OpenMP_CXX)
endif()
if(TSR_HAVE_MPI)
  target_link_libraries(tessera_emu PUBLIC MPI::MPI_C)
endif()

# The test programs, named as run.sh takes them. Those CTest runs (gpu_emu_warp32/64,
# tests/gpu.cmake takes these lists) are built with the library; the core suites against the
# emulated kernels only on request, for run.sh by hand (cmake --build BUILD --target emu_reduce).
set(tsr_emu_run gpu_cross kernel_helpers gpu_fault gpu_alloc emu_complex)
set(tsr_emu_run_mpi "")
if(TSR_HAVE_MPI)
  set(tsr_emu_run_mpi dist_gemm dist_pipeline dist_25d dist_transpose dist_complex dist_bcast)
endif()
set(tsr_emu_on_request reduce binary unary random transfer creation views matmul bad_input)
foreach(t ${tsr_emu_run} ${tsr_emu_run_mpi} ${tsr_emu_on_request})
  set(srcs ${CMAKE_CURRENT_SOURCE_DIR}/test_${t}.c)
  set(all "")
  if(t STREQUAL "emu_complex")
    set(srcs ${tsr_emu_src}/test_emu_complex.c)
  elseif(t IN_LIST tsr_emu_on_request)
    list(APPEND srcs ${CMAKE_CURRENT_SOURCE_DIR}/core_util.c)
    set(all EXCLUDE_FROM_ALL)
  endif()
  add_executable(emu_${t} ${all} ${srcs} ${CMAKE_CURRENT_SOURCE_DIR}/common/tsr_test.c)
  set_target_properties(emu_${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${tsr_emu_dir}/bin
                                            OUTPUT_NAME ${t})
  target_compile_options(emu_${t} PRIVATE -O1 -g)
  target_compile_definitions(emu_${t} PRIVATE _POSIX_C_SOURCE=200809L)
  target_include_directories(emu_${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/common
                             ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(emu_${t} PRIVATE tessera_emu PkgConfig::CMOCKA)
endforeach()
if(TARGET tessera-gemm)
  get_target_property(tsr_emu_job_sources tessera-gemm SOURCES) # src/cli/cli.cmake's list
  add_executable(emu_tessera_gemm ${tsr_emu_job_sources})
  set_target_properties(emu_tessera_gemm PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${tsr_emu_dir}/bin
                                                    OUTPUT_NAME tessera-gemm)
  target_compile_options(emu_tessera_gemm PRIVATE -O1 -g)
  target_link_libraries(emu_tessera_gemm PRIVATE tessera_emu)
endif()
