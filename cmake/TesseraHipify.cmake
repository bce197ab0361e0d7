# SPDX-License-Identifier: BSD-3-Clause
# Build-time translation of the CUDA sources of src/gpu (the source of truth) to HIP.
#
# Used two ways:
#  - include(TesseraHipify): defines tessera_hipify(), which adds one custom command per
#    .cu/.cuh file writing its HIP version into the build tree (never into the sources), re-run
#    when the source, the mapping table or this file changes;
#  - cmake -DIN=<file.cu> -DOUT=<file> -DMAP=<hipify_map.txt> [-DHIPIFY_PERL=<exe>]
#          -P TesseraHipify.cmake
#    translates one file: ROCm's hipify-perl first when given, then the project's mapping
#    table (cmake/hipify_map.txt) for whatever CUDA names remain; fails naming any CUDA
#    runtime or cuBLAS identifier still left, so nothing untranslated reaches the compiler;
#  - cmake -DCHECK_DIR=<dir> -P TesseraHipify.cmake
#    the CI check: fails when a translated file under <dir> still contains a CUDA name.
# The output starts with a #line directive, so compiler messages point at the .cu source.

# Identifiers that must not survive translation (CUDA runtime, cuBLAS, their headers).
set(_TSR_HIPIFY_LEFTOVER_RE
    "[^A-Za-z0-9_](cuda[A-Z_][A-Za-z0-9_]*|cublas[A-Za-z0-9_]*|CUBLAS_[A-Za-z0-9_]*|cuda_runtime[A-Za-z0-9_.]*)")

function(_tsr_hipify_leftovers text out_var)
  string(REGEX MATCHALL "${_TSR_HIPIFY_LEFTOVER_RE}" found "${text}")
  set(names "")
  foreach(f IN LISTS found)
    string(REGEX REPLACE "^[^A-Za-z0-9_]" "" f "${f}")
    list(APPEND names "${f}")
  endforeach()
  list(REMOVE_DUPLICATES names)
  set(${out_var} "${names}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  if(DEFINED CHECK_DIR)
    file(GLOB_RECURSE files "${CHECK_DIR}/*.cu" "${CHECK_DIR}/*.cuh")
    if(NOT files)
      message(FATAL_ERROR "no hipified sources under ${CHECK_DIR}")
    endif()
    set(bad "")
    foreach(f IN LISTS files)
      file(READ "${f}" text)
      _tsr_hipify_leftovers("\n${text}" names)
      if(names)
        list(APPEND bad "${f}: ${names}")
      endif()
    endforeach()
    if(bad)
      string(REPLACE ";" "\n  " bad "${bad}")
      message(FATAL_ERROR "CUDA names left in hipified sources:\n  ${bad}")
    endif()
    list(LENGTH files n)
    message(STATUS "${n} hipified sources contain no CUDA runtime or cuBLAS names")
    return()
  endif()

  foreach(v IN ITEMS IN OUT MAP)
    if(NOT DEFINED ${v})
      message(FATAL_ERROR "TesseraHipify.cmake: -D${v}=... is required")
    endif()
  endforeach()
  if(HIPIFY_PERL)
    execute_process(COMMAND "${HIPIFY_PERL}" "${IN}" OUTPUT_VARIABLE text
                    ERROR_VARIABLE err RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "hipify-perl failed on ${IN} (${rc}): ${err}")
    endif()
  else()
    file(READ "${IN}" text)
  endif()
  # A leading newline lets the whole-word patterns match at the start of the file too.
  set(text "\n${text}")
  file(STRINGS "${MAP}" lines)
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line STREQUAL "" OR line MATCHES "^#")
      continue()
    endif()
    if(NOT line MATCHES "^([^ \t]+)[ \t]+([^ \t]+)$")
      message(FATAL_ERROR "${MAP}: malformed line '${line}' (want: <cuda name> <hip name>)")
    endif()
    set(from "${CMAKE_MATCH_1}")
    set(to "${CMAKE_MATCH_2}")
    if(from MATCHES "^<")
      string(REPLACE "${from}" "${to}" text "${text}")
    else()
      # Twice: one pass cannot replace two occurrences separated by a single character,
      # since the character is consumed by the first match.
      foreach(pass 1 2)
        string(REGEX REPLACE "([^A-Za-z0-9_])${from}([^A-Za-z0-9_])" "\\1${to}\\2" text
                             "${text}")
      endforeach()
    endif()
  endforeach()
  _tsr_hipify_leftovers("${text}" names)
  if(names)
    message(FATAL_ERROR "${IN}: no HIP mapping for ${names}: add them to ${MAP}")
  endif()
  string(SUBSTRING "${text}" 1 -1 text)
  file(WRITE "${OUT}"
       "// Generated from ${IN} by cmake/TesseraHipify.cmake at build time: do not edit.\n"
       "#line 1 \"${IN}\"\n${text}")
  return()
endif()

set(_TSR_HIPIFY_SCRIPT "${CMAKE_CURRENT_LIST_FILE}")
find_program(TESSERA_HIPIFY_PERL hipify-perl HINTS $ENV{ROCM_PATH}/bin /opt/rocm/bin
             DOC "ROCm's hipify-perl; when absent the mapping table cmake/hipify_map.txt alone is used")

# tessera_hipify(<out_var> BASE <dir> DESTINATION <dir> MAP <table> SOURCES <files...>)
# Adds a custom command per source writing DESTINATION/<path relative to BASE>; sets out_var
# to the translated files.
function(tessera_hipify out_var)
  cmake_parse_arguments(H "" "BASE;DESTINATION;MAP" "SOURCES" ${ARGN})
  set(outs "")
  foreach(src IN LISTS H_SOURCES)
    file(RELATIVE_PATH rel "${H_BASE}" "${src}")
    set(out "${H_DESTINATION}/${rel}")
    add_custom_command(
      OUTPUT "${out}"
      COMMAND "${CMAKE_COMMAND}" "-DIN=${src}" "-DOUT=${out}" "-DMAP=${H_MAP}"
              "-DHIPIFY_PERL=${TESSERA_HIPIFY_PERL}" -P "${_TSR_HIPIFY_SCRIPT}"
      DEPENDS "${src}" "${H_MAP}" "${_TSR_HIPIFY_SCRIPT}"
      COMMENT "Hipifying ${rel}"
      VERBATIM)
    list(APPEND outs "${out}")
  endforeach()
  set(${out_var} "${outs}" PARENT_SCOPE)
endfunction()
