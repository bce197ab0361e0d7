# Sources of src/omp, the CPU backend (owned by that layer). GEMM has its own file.
target_sources(tessera_objects PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/backend.c)
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/gemm.cmake)
  include(${CMAKE_CURRENT_LIST_DIR}/gemm.cmake)
endif()
