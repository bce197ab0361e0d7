# SPDX-License-Identifier: BSD-3-Clause
# GPU-related tests.
#
# The helpers the CPU backend and the GPU kernels share (src/core/convert.h, layout.h), on
# every backend this build has (kernel_helpers_<backend>): conversion edges and axis collapsing.
tsr_add_suite_test(NAME kernel_helpers SOURCES test_kernel_helpers.c)
target_include_directories(kernel_helpers PRIVATE ${PROJECT_SOURCE_DIR}/src)

# Cross-device tests of the GPU backend (GPU builds only). The backend-agnostic suite
# (core.cmake) also runs on the GPU as <name>_cuda / <name>_hip.
if(TSR_HAVE_CUDA OR TSR_HAVE_HIP)
  if(TSR_HAVE_CUDA)
    set(tsr_gpu_label cuda)
  else()
    set(tsr_gpu_label hip)
  endif()
  # GPU against CPU (and GEMM against float64) on the same inputs; skipped (77) without a device.
  tsr_add_test(NAME gpu_cross SOURCES test_gpu_cross.c LABELS ${tsr_gpu_label})
  # > 2^31 elements and > 65535 x 128 GEMM rows; skipped without a GPU of >= 40 GiB or with
  # less than 26 GiB of it free. It runs alone (RUN_SERIAL): beside other GPU programs under
  # ctest -j their contexts and caches would take the memory it measured as free. Its timeout
  # stays under the device runbook's 10-minute calls (scripts/gpu_session.sh).
  tsr_add_test(NAME gpu_large SOURCES test_gpu_large.c LABELS "${tsr_gpu_label};gpu_large")
  set_tests_properties(gpu_large PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
  # The no-device path of a GPU build: runs (label cpu) where there is no GPU, skipped where
  # there is one.
  tsr_add_test(NAME gpu_no_device SOURCES test_gpu_no_device.c LABELS cpu)
  # A lost GPU context (sticky error): meaningful only under the emulator's fault injection
  # (gpu_emu_warp*); skipped (77) when run directly.
  tsr_add_test(NAME gpu_fault SOURCES test_gpu_fault.c LABELS ${tsr_gpu_label})
  if(TSR_HAVE_HIP)
    # The build-time hipify left no CUDA runtime or cuBLAS name in the translated sources.
    add_test(NAME gpu_hipify_clean
             COMMAND ${CMAKE_COMMAND} -DCHECK_DIR=${PROJECT_BINARY_DIR}/hipified/src/gpu
                     -P ${PROJECT_SOURCE_DIR}/cmake/TesseraHipify.cmake)
    set_tests_properties(gpu_hipify_clean PROPERTIES LABELS hip)
  endif()

  # SUMMA with GPU-resident matrices (tests/test_dist_util.h reads TSR_TEST_DEVICE): the
  # default panel path (device to device when MPI is GPU-aware, else staged), and the staged
  # path forced. Skipped (77) without a GPU. Registered at the end of this directory, once
  # tests/mpi.cmake has defined test_dist_gemm and the MPI test environment.
  function(tsr__gpu_dist_tests)
    if(NOT TARGET test_dist_gemm)
      return()
    endif()
    foreach(np 2 4)
      foreach(path default staging)
        set(env "${TSR_MPI_TEST_ENV};TSR_TEST_DEVICE=${tsr_gpu_label}")
        if(path STREQUAL "staging")
          list(APPEND env TSR_DIST_GPU_STAGING=1)
        endif()
        add_test(NAME dist_gemm_${tsr_gpu_label}_${path}_np${np}
                 COMMAND ${TSR_MPI_RUN} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                         --oversubscribe $<TARGET_FILE:test_dist_gemm>)
        set_tests_properties(dist_gemm_${tsr_gpu_label}_${path}_np${np} PROPERTIES
                             LABELS "${tsr_gpu_label};mpi" TIMEOUT 300 SKIP_RETURN_CODE 77
                             ENVIRONMENT "${env}" PROCESSORS ${np}
                             RESOURCE_LOCK ${TSR_MPI_LOCK})
      endforeach()
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} CALL tsr__gpu_dist_tests)
endif()

# The GPU kernels on the host (label gpu-emu, CUDA builds): tests/gpu_emu/emu.cmake builds
# src/gpu with a small CUDA emulator (threads of a block as fibers, warps of 32 or wavefronts
# of 64 lanes) into the library tessera_emu and the programs emu_<test>, and
# tests/gpu_emu/run.sh runs them, on a machine without a GPU. It checks indexing, tiling, edge
# tiles, vector paths, split-K, shuffles and barriers' placement, and (warp 32, MPI builds)
# SUMMA's GPU panel paths under mpirun -np 2; it cannot see races inside a barrier interval
# (threads run one at a time, in order), misaligned-access faults (host loads do not fault),
# memory spaces or timing. TSR_EMU_QUICK=1 keeps it to a few minutes (the GEMM cases on edge
# tiles, both tile configurations and split-K; the other tests in full).
if(TSR_HAVE_CUDA)
  find_program(TSR_BASH bash)
  if(TSR_BASH)
    include(${CMAKE_CURRENT_SOURCE_DIR}/gpu_emu/emu.cmake)
    foreach(warp 32 64)
      set(tsr_emu_tests ${tsr_emu_run}) # tests/gpu_emu/emu.cmake's lists
      if(TSR_HAVE_MPI AND warp EQUAL 32)
        # SUMMA with emulated-GPU matrices, staged and device-to-device panels: its products
        # (2 ranks) and its counted data movement (4 ranks: 1x1, 1x4, 2x2, 4x1 grids); 2.5D
        # (4 ranks); the transposes (2 ranks); complex SUMMA, 2.5D and the complex Freivalds'
        # check through the device matvec (2 ranks); the pipelined panel broadcast from
        # emulated device buffers (3 ranks); the tessera-gemm job itself at -np 1, 2, 4
        # against NumPy (job.sh).
        list(APPEND tsr_emu_tests ${tsr_emu_run_mpi} job)
      endif()
      add_test(NAME gpu_emu_warp${warp}
               COMMAND ${TSR_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_emu/run.sh ${PROJECT_BINARY_DIR}
                       ${warp} ${tsr_emu_tests})
      # warp 64 also runs in the sync-debug mode (every launch waits and checks) and with the
      # exact-size allocator (TSR_GPU_ALLOC_CACHE=0, the sanitizer runs' mode).
      set(env TSR_EMU_QUICK=1)
      if(warp EQUAL 64)
        list(APPEND env TSR_GPU_SYNC_DEBUG=1 TSR_GPU_ALLOC_CACHE=0)
      endif()
      set_tests_properties(gpu_emu_warp${warp} PROPERTIES LABELS gpu-emu TIMEOUT 900
                           ENVIRONMENT "${env}"
                           DEPENDS gpu_cross)
    endforeach()
  endif()
endif()
