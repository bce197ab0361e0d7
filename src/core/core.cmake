# Sources of src/core: backend-neutral validation, arrays, devices, .npy, Philox.
file(GLOB TSR_CORE_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
target_sources(tessera_objects PRIVATE ${TSR_CORE_SOURCES})
