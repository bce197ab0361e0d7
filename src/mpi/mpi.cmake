# SPDX-License-Identifier: BSD-3-Clause
# Sources of src/mpi: process grid, block-cyclic matrices, SUMMA, MPI-IO .npy.
# Included by the top CMakeLists.txt when TSR_HAVE_MPI.
file(GLOB TSR_MPI_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
target_sources(tessera_objects PRIVATE ${TSR_MPI_SOURCES})
