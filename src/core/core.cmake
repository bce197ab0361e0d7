# Sources of src/core (owned by that layer).
target_sources(tessera_objects PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/status.c)
