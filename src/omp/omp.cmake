# Sources of src/omp, the CPU backend. GEMM (BLIS layers, per-ISA micro-kernels with their
# own compile flags) is described in gemm.cmake.
file(GLOB TSR_OMP_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
target_sources(tessera_objects PRIVATE ${TSR_OMP_SOURCES})
include(${CMAKE_CURRENT_LIST_DIR}/gemm.cmake)
