/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file version.h
 * @brief The release: compile-time macros and tsr_version() at run time.
 *
 * The version has one source, `project(VERSION)` in CMakeLists.txt; CMake writes it into the
 * generated `tessera/config.h` as `TSR_VERSION_MAJOR`, `TSR_VERSION_MINOR`,
 * `TSR_VERSION_PATCH` and `TSR_VERSION_STRING` (the headers a program was compiled against),
 * and tsr_version() returns the same numbers from the library the program runs with.
 */
#ifndef TESSERA_VERSION_H
#define TESSERA_VERSION_H

#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The version of the loaded library, for comparison with the headers' `TSR_VERSION_STRING`
 * (a program built against one release and run with another one of the same major version).
 * Every pointer may be NULL; those given are filled.
 *
 * @param[out] major  the major version (incompatible changes of the API or ABI), or NULL
 * @param[out] minor  the minor version, or NULL
 * @param[out] patch  the patch version, or NULL
 * @param[out] text   "MAJOR.MINOR.PATCH", a static string, or NULL
 * @return ::TSR_OK (the call cannot fail)
 */
TSR_API tsr_status tsr_version(int *major, int *minor, int *patch, const char **text);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_VERSION_H */
