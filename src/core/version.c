/* SPDX-License-Identifier: BSD-3-Clause */
/* tsr_version(): the release of the loaded library (project(VERSION) in CMakeLists.txt,
   through the generated tessera/config.h). */
#include "tessera/version.h"

tsr_status tsr_version(int *major, int *minor, int *patch, const char **text) {
  if (major) *major = TSR_VERSION_MAJOR;
  if (minor) *minor = TSR_VERSION_MINOR;
  if (patch) *patch = TSR_VERSION_PATCH;
  if (text) *text = TSR_VERSION_STRING;
  return TSR_OK;
}
