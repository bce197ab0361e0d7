# SPDX-License-Identifier: BSD-3-Clause
# tsr_export_link_libs(OUT libs...): the link interface of the libraries, for the build tree
# and for the installed package. In the build tree the libraries are used as found here; in the
# installed package OpenMP::OpenMP_C and MPI::MPI_C become Tessera::OpenMP and Tessera::MPI,
# which TesseraConfig.cmake creates from the components of the languages the consumer enabled
# (C if it is enabled, else CXX with MPI's C++ bindings skipped). A consumer project in C++
# alone then finds the package (OpenMP_C and MPI_C need the C language), and never links
# libmpi_cxx.
function(tsr_export_link_libs out)
  set(result "")
  foreach(lib IN LISTS ARGN)
    if(lib STREQUAL "OpenMP::OpenMP_C")
      list(APPEND result "$<BUILD_INTERFACE:${lib}>" "$<INSTALL_INTERFACE:Tessera::OpenMP>")
    elseif(lib STREQUAL "MPI::MPI_C")
      list(APPEND result "$<BUILD_INTERFACE:${lib}>" "$<INSTALL_INTERFACE:Tessera::MPI>")
    else()
      list(APPEND result "${lib}")
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()
