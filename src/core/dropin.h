/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-ins' internal interface: the few internal functions that libtessera_blas and
 * libtessera_scalapack call in libtessera.so, so that a process that uses the public API and a
 * drop-in has one runtime (one thread pool, one error state, one wisdom cache, one environment
 * reader) instead of a private copy per library.
 *
 * Everything else internal stays hidden (-fvisibility=hidden). The functions named here are
 * exported from libtessera.so under the symbol version TESSERA_INTERNAL_<project version>
 * (the version script is generated from the lists below, cmake/TesseraDropin.cmake), never
 * unversioned: a drop-in binds to the exact release it was built with, and a libtessera.so of
 * another release fails at load time ("version `TESSERA_INTERNAL_...' not found") instead of
 * running with a different struct layout. This is not an API: programs use include/tessera/.
 * tests/exports.sh checks that libtessera.so exports the public tsr_ names and exactly these,
 * versioned, and that the drop-ins export their entry points only.
 *
 * To add a function: it must be declared in core/internal.h (CORE) or mpi/mpi_internal.h
 * (MPI); add its name to the list here (the header's end applies TSR__DROPIN_EXPORT to it).
 */
#ifndef TSR_CORE_DROPIN_H
#define TSR_CORE_DROPIN_H

/* One name a line: cmake/TesseraDropin.cmake reads the X(tsr__...) entries. */
#define TSR__DROPIN_CORE(X)                                                                        \
  X(tsr__set_error_at)                                                                             \
  X(tsr__api_enter)                                                                                \
  X(tsr__api_leave)                                                                                \
  X(tsr__array_ptr)                                                                                \
  X(tsr__dtype_size)                                                                               \
  X(tsr__open_append)                                                                              \
  X(tsr__write_all)                                                                                \
  X(tsr__env_text)                                                                                 \
  X(tsr__env_choice)                                                                               \
  X(tsr__env_number)                                                                               \
  X(tsr__env_flag)                                                                                 \
  X(tsr__count)                                                                                    \
  X(tsr__counters_read)                                                                            \
  X(tsr__counters_mark)                                                                            \
  X(tsr__counters_since)                                                                           \
  X(tsr__gemm_host_tiny)

#define TSR__DROPIN_MPI(X)                                                                         \
  X(tsr__dist_agree)                                                                               \
  X(tsr__mpi_error_at)                                                                             \
  X(tsr__dm_create)                                                                                \
  X(tsr__bc_owner)                                                                                 \
  X(tsr__bc_local)                                                                                 \
  X(tsr__bc_next)                                                                                  \
  X(tsr__bc_redistribute)

/* Gives an already declared function default visibility (the version script then puts it in
   the TESSERA_INTERNAL node). C only: the definitions are C, and the drop-ins are C. */
#if !defined(__cplusplus) && defined(__GNUC__)
#define TSR__DROPIN_EXPORT(name)                                                                   \
  extern __typeof__(name) name __attribute__((visibility("default")));
#else
#define TSR__DROPIN_EXPORT(name)
#endif

#endif /* TSR_CORE_DROPIN_H */
