# SPDX-License-Identifier: BSD-3-Clause
# The GPU backend: src/gpu/*.cu and *.cuh are CUDA, the one source of truth.
#  - TESSERA_ENABLE_CUDA: compiled by nvcc as a CMake CUDA language target.
#  - TESSERA_ENABLE_HIP: each file is hipified at build time into
#    <build>/hipified/src/gpu (cmake/TesseraHipify.cmake) and compiled by hipcc through custom
#    commands; the objects join the libraries at the end of the top-level configure. (CMake's
#    HIP language is not used: Debian installs ROCm's CMake files under the multiarch lib
#    directory, where CMake 3.25 does not look for them.)
#
# Vendor BLAS: the GPU's vendor GEMM path (cuBLAS, hipBLAS) is built whenever the library is
# found and TESSERA_GPU_VENDOR_BLAS is ON (the default). It is independent of
# TESSERA_WITH_VENDOR_BLAS, which is about a CPU CBLAS: cuBLAS ships with every CUDA toolkit,
# and it is the anchor of bench_gpu. Without it the path returns TSR_ERR_UNSUPPORTED.
option(TESSERA_GPU_VENDOR_BLAS "GPU vendor GEMM path (cuBLAS / hipBLAS) when the library is found" ON)

file(GLOB TSR_GPU_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cu)
file(GLOB TSR_GPU_HEADERS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cuh)
set(TSR_GPU_VENDOR_BLAS 0)

if(TESSERA_ENABLE_CUDA)
  # Ampere and Hopper by default; CUDA 13 no longer targets anything before sm_75.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80;90")
  endif()
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  # The shared cudart, carried by TESSERA_LINK_LIBS (not CMake's static default, which would
  # put a second copy of the runtime into every executable linking the static library).
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)

  target_sources(tessera_objects PRIVATE ${TSR_GPU_SOURCES})
  # tessera_objects exists before CUDA is enabled: its CUDA properties are not initialized
  # from the variables above.
  set_target_properties(tessera_objects PROPERTIES
    CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}" CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
  # No exceptions and no guarded statics in the host code nvcc generates: the objects then
  # need no C++ runtime, and C programs link the static library with the C linker.
  target_compile_options(tessera_objects PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-fno-exceptions,-fno-threadsafe-statics>)
  list(APPEND TESSERA_LINK_LIBS CUDA::cudart)
  if(TESSERA_GPU_VENDOR_BLAS AND TARGET CUDA::cublas)
    set(TSR_GPU_VENDOR_BLAS 1)
    list(APPEND TESSERA_LINK_LIBS CUDA::cublas)
  endif()
  set_source_files_properties(${TSR_GPU_SOURCES} PROPERTIES
    COMPILE_DEFINITIONS TSR_GPU_VENDOR_BLAS=${TSR_GPU_VENDOR_BLAS})
  set(TSR_HAVE_CUDA 1)
  set(TSR_HAVE_GPU_VENDOR_BLAS ${TSR_GPU_VENDOR_BLAS})
  message(STATUS "Tessera GPU backend: CUDA, architectures ${CMAKE_CUDA_ARCHITECTURES}, "
                 "cuBLAS path ${TSR_GPU_VENDOR_BLAS}")

elseif(TESSERA_ENABLE_HIP)
  include(${PROJECT_SOURCE_DIR}/cmake/TesseraHipify.cmake)
  find_program(TESSERA_HIPCC NAMES hipcc HINTS $ENV{ROCM_PATH}/bin /opt/rocm/bin REQUIRED)
  find_library(TESSERA_AMDHIP64 NAMES amdhip64 HINTS $ENV{ROCM_PATH}/lib /opt/rocm/lib REQUIRED)

  # gfx90a (MI200) and gfx942 (MI300) by default; an architecture the installed compiler does
  # not know (ROCm 5.2's clang predates gfx942) is dropped with a warning. An explicit
  # TESSERA_HIP_ARCHITECTURES is used as given.
  set(TESSERA_HIP_ARCHITECTURES "" CACHE STRING
      "AMD GPU architectures (offload archs) for the HIP build; empty: gfx90a;gfx942 where the compiler supports them")
  if(TESSERA_HIP_ARCHITECTURES)
    set(tsr_hip_archs ${TESSERA_HIP_ARCHITECTURES})
  else()
    set(tsr_hip_archs "")
    file(WRITE ${CMAKE_BINARY_DIR}/hipified/arch_probe.cu
         "#include <hip/hip_runtime.h>\n__global__ void tsr_probe(int *x) { *x = 1; }\n")
    foreach(arch gfx90a gfx942)
      # Successes are cached; a failure is probed again (a newer compiler may appear).
      if(NOT TSR_HIP_ARCH_OK_${arch})
        execute_process(
          COMMAND ${TESSERA_HIPCC} -x hip --offload-arch=${arch} -c
                  ${CMAKE_BINARY_DIR}/hipified/arch_probe.cu -o ${CMAKE_BINARY_DIR}/hipified/arch_probe.o
          RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
        if(rc EQUAL 0)
          set(TSR_HIP_ARCH_OK_${arch} 1 CACHE INTERNAL "hipcc accepts --offload-arch=${arch}")
        endif()
      endif()
      if(TSR_HIP_ARCH_OK_${arch})
        list(APPEND tsr_hip_archs ${arch})
      else()
        message(STATUS "Tessera: hipcc does not support --offload-arch=${arch}: not built for it")
      endif()
    endforeach()
    if(NOT tsr_hip_archs)
      message(FATAL_ERROR "hipcc supports none of gfx90a, gfx942: set TESSERA_HIP_ARCHITECTURES")
    endif()
  endif()

  find_path(TESSERA_HIPBLAS_INCLUDE_DIR hipblas.h HINTS $ENV{ROCM_PATH}/include /opt/rocm/include
            PATH_SUFFIXES hipblas)
  find_library(TESSERA_HIPBLAS_LIBRARY hipblas HINTS $ENV{ROCM_PATH}/lib /opt/rocm/lib)
  set(tsr_hip_flags -x hip -std=c++17 -O3 -fPIC -fvisibility=hidden -fvisibility-inlines-hidden
      -fno-exceptions -fno-threadsafe-statics -Wall -Wextra -DTSR_BUILDING_LIBRARY
      -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_BINARY_DIR}/include -I${PROJECT_SOURCE_DIR}/src)
  foreach(arch IN LISTS tsr_hip_archs)
    list(APPEND tsr_hip_flags --offload-arch=${arch})
  endforeach()
  if(TESSERA_GPU_VENDOR_BLAS AND TESSERA_HIPBLAS_INCLUDE_DIR AND TESSERA_HIPBLAS_LIBRARY)
    set(TSR_GPU_VENDOR_BLAS 1)
    list(APPEND tsr_hip_flags -I${TESSERA_HIPBLAS_INCLUDE_DIR})
  endif()
  list(APPEND tsr_hip_flags -DTSR_GPU_VENDOR_BLAS=${TSR_GPU_VENDOR_BLAS})

  set(tsr_hip_dir ${PROJECT_BINARY_DIR}/hipified/src/gpu)
  tessera_hipify(tsr_hip_headers BASE ${CMAKE_CURRENT_LIST_DIR} DESTINATION ${tsr_hip_dir}
                 MAP ${PROJECT_SOURCE_DIR}/cmake/hipify_map.txt SOURCES ${TSR_GPU_HEADERS})
  tessera_hipify(tsr_hip_sources BASE ${CMAKE_CURRENT_LIST_DIR} DESTINATION ${tsr_hip_dir}
                 MAP ${PROJECT_SOURCE_DIR}/cmake/hipify_map.txt SOURCES ${TSR_GPU_SOURCES})
  file(GLOB tsr_core_headers ${PROJECT_SOURCE_DIR}/src/core/*.h ${PROJECT_SOURCE_DIR}/src/gpu/*.h
       ${PROJECT_SOURCE_DIR}/include/tessera/*.h)
  set(TSR_HIP_OBJECTS "")
  foreach(src IN LISTS tsr_hip_sources)
    get_filename_component(name ${src} NAME_WE)
    set(obj ${PROJECT_BINARY_DIR}/hipified/obj/${name}.o)
    set(extra "")
    if(name STREQUAL "rng")
      # Philox values must match the CPU bit for bit: no fused multiply-adds.
      set(extra -ffp-contract=off)
    elseif(name STREQUAL "backend")
      # Host code only: hip-clang would also emit the const table for the device, where the
      # host functions it points to do not exist.
      set(extra --cuda-host-only)
    endif()
    add_custom_command(
      OUTPUT ${obj}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/hipified/obj
      COMMAND ${TESSERA_HIPCC} ${tsr_hip_flags} ${extra} -c ${src} -o ${obj}
      DEPENDS ${src} ${tsr_hip_headers} ${tsr_core_headers}
              ${PROJECT_BINARY_DIR}/include/tessera/config.h
      COMMENT "Compiling HIP object ${name}.o"
      VERBATIM)
    list(APPEND TSR_HIP_OBJECTS ${obj})
  endforeach()
  set_source_files_properties(${TSR_HIP_OBJECTS} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  # One target builds the objects, so the two libraries that use them never race on the rules.
  add_custom_target(tessera_hip_objects DEPENDS ${TSR_HIP_OBJECTS})

  # The libraries are created after this file is included: attach the objects at the end of
  # the top-level directory.
  function(tsr__gpu_attach_hip_objects)
    foreach(t tessera tessera_static)
      if(TARGET ${t})
        target_sources(${t} PRIVATE ${TSR_HIP_OBJECTS})
        add_dependencies(${t} tessera_hip_objects)
      endif()
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL tsr__gpu_attach_hip_objects)

  list(APPEND TESSERA_LINK_LIBS ${TESSERA_AMDHIP64})
  if(TSR_GPU_VENDOR_BLAS)
    list(APPEND TESSERA_LINK_LIBS ${TESSERA_HIPBLAS_LIBRARY})
  endif()
  set(TSR_HAVE_HIP 1)
  set(TSR_HAVE_GPU_VENDOR_BLAS ${TSR_GPU_VENDOR_BLAS})
  if(TESSERA_HIPIFY_PERL)
    set(tsr_hipify_how "hipify-perl + cmake/hipify_map.txt")
  else()
    set(tsr_hipify_how "cmake/hipify_map.txt")
  endif()
  message(STATUS "Tessera GPU backend: HIP (hipified at build time by ${tsr_hipify_how}), "
                 "architectures ${tsr_hip_archs}, hipBLAS path ${TSR_GPU_VENDOR_BLAS}")
endif()
