# SPDX-License-Identifier: BSD-3-Clause
# Contradictory or malformed build options stop the configure with Tessera's own message, before
# any compiler is looked for (so a Spack spec or an easyconfig with a wrong value fails at once,
# on any machine). packaging/tests/option_checks.sh configures with each bad value and greps the
# message.

# CUDA: CMAKE_CUDA_ARCHITECTURES takes compute capabilities as CMake spells them (80, 90,
# 90a, 80-real, 90-virtual) or all, all-major, native; nvcc's own spellings (sm_80,
# compute_80) and dotted versions (8.0) are what recipes most often get wrong.
if(TESSERA_ENABLE_CUDA AND DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(tsr_cuda_archs "${CMAKE_CUDA_ARCHITECTURES}")
  if(tsr_cuda_archs STREQUAL "")
    message(FATAL_ERROR "Tessera: CMAKE_CUDA_ARCHITECTURES is empty; give compute capabilities "
                        "such as 80;90 (or leave it unset for 80;90)")
  endif()
  foreach(arch IN LISTS tsr_cuda_archs)
    if(NOT arch MATCHES "^([1-9][0-9]+[af]?(-real|-virtual)?|all|all-major|native)$")
      message(FATAL_ERROR "Tessera: '${arch}' in CMAKE_CUDA_ARCHITECTURES is not a CUDA "
                          "architecture: give compute capabilities as CMake spells them, e.g. "
                          "80, 90, 90a, 80-real (not sm_80 or 8.0), or all, all-major, native")
    endif()
  endforeach()
elseif(NOT TESSERA_ENABLE_CUDA AND CMAKE_CUDA_ARCHITECTURES AND TESSERA_ENABLE_HIP)
  message(FATAL_ERROR "Tessera: CMAKE_CUDA_ARCHITECTURES is set for a HIP build; AMD GPU "
                      "architectures go in TESSERA_HIP_ARCHITECTURES (e.g. gfx90a;gfx942)")
endif()

# HIP: TESSERA_HIP_ARCHITECTURES takes offload architectures, gfx<id> with optional target
# features (gfx90a, gfx942, gfx90a:xnack-).
if(TESSERA_ENABLE_HIP AND TESSERA_HIP_ARCHITECTURES)
  foreach(arch IN LISTS TESSERA_HIP_ARCHITECTURES)
    if(NOT arch MATCHES "^gfx[0-9a-f]+(:(sramecc|xnack)[+-])*$")
      message(FATAL_ERROR "Tessera: '${arch}' in TESSERA_HIP_ARCHITECTURES is not an AMD GPU "
                          "architecture: give offload architectures such as gfx90a, gfx942, "
                          "gfx90a:xnack-")
    endif()
  endforeach()
elseif(NOT TESSERA_ENABLE_HIP AND TESSERA_HIP_ARCHITECTURES AND TESSERA_ENABLE_CUDA)
  message(FATAL_ERROR "Tessera: TESSERA_HIP_ARCHITECTURES is set for a CUDA build; CUDA "
                      "architectures go in CMAKE_CUDA_ARCHITECTURES (e.g. 80;90)")
endif()
