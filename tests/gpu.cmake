# Cross-device tests of the GPU backend (GPU builds only). The backend-agnostic suite
# (core.cmake) also runs on the GPU as <name>_cuda / <name>_hip. Without a GPU, the kernels
# can still be exercised on the host with tests/gpu_emu/run.sh (a CUDA emulator; minutes).
if(TSR_HAVE_CUDA OR TSR_HAVE_HIP)
  if(TSR_HAVE_CUDA)
    set(tsr_gpu_label cuda)
  else()
    set(tsr_gpu_label hip)
  endif()
  # GPU against CPU on the same inputs; skipped (77) without a device.
  tsr_add_test(NAME gpu_cross SOURCES test_gpu_cross.c LABELS ${tsr_gpu_label})
  # The no-device path of a GPU build: runs (label cpu) where there is no GPU, skipped where
  # there is one.
  tsr_add_test(NAME gpu_no_device SOURCES test_gpu_no_device.c LABELS cpu)
  if(TSR_HAVE_HIP)
    # The build-time hipify left no CUDA runtime or cuBLAS name in the translated sources.
    add_test(NAME gpu_hipify_clean
             COMMAND ${CMAKE_COMMAND} -DCHECK_DIR=${PROJECT_BINARY_DIR}/hipified/src/gpu
                     -P ${PROJECT_SOURCE_DIR}/cmake/TesseraHipify.cmake)
    set_tests_properties(gpu_hipify_clean PROPERTIES LABELS hip)
  endif()
endif()
