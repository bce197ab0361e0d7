# SPDX-License-Identifier: BSD-3-Clause
# Consumer test: install into a scratch prefix and build a tiny external project against it
# with find_package(Tessera CONFIG) and with pkg-config. Not in the sanitizer build (the
# consumer would need the sanitizer runtime flags).
if(NOT TESSERA_ENABLE_SANITIZERS)
  add_test(NAME install_consumer
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install/run_consumer.sh ${PROJECT_BINARY_DIR}
                   ${CMAKE_CURRENT_SOURCE_DIR}/install/consumer ${CMAKE_CURRENT_BINARY_DIR}/install-consumer)
  set_tests_properties(install_consumer PROPERTIES LABELS "cpu;install" RUN_SERIAL TRUE)
  # The Lmod module file (share/modulefiles/tessera/<version>.lua): skipped without Lmod.
  add_test(NAME install_module
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install/run_module.sh ${PROJECT_BINARY_DIR}
                   ${CMAKE_CURRENT_SOURCE_DIR}/install/consumer ${CMAKE_CURRENT_BINARY_DIR}/install-module
                   ${PROJECT_VERSION})
  set_tests_properties(install_module PROPERTIES LABELS "cpu;install" SKIP_RETURN_CODE 77)
endif()

# What the shared libraries export: the public API, the drop-ins' versioned internal interface
# (src/core/dropin.h) and nothing else; the drop-ins depend on libtessera.so (one runtime).
add_test(NAME library_exports
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/exports.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                 ${PROJECT_VERSION})
set_tests_properties(library_exports PROPERTIES LABELS "cpu;install")
