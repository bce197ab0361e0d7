/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file status.h
 * @brief Status codes and the thread-local last-error message.
 *
 * Every public Tessera function returns a ::tsr_status; ::TSR_OK (0) means success and
 * results come back through out parameters. On failure, tsr_last_error() returns a message
 * that names the function and the offending values, for example
 * `tsr_matmul: inner dimensions differ: a is 3x4, b is 5x2`.
 */
#ifndef TESSERA_STATUS_H
#define TESSERA_STATUS_H

#include "tessera/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The one list of status codes: X(name, value, description). It generates the enum below,
 * tsr_status_name() and tsr_strerror(), so the three never disagree.
 */
#define TSR_STATUS_LIST(X)                                                                         \
  X(TSR_OK, 0, "success")                                                                          \
  X(TSR_ERR_INVALID_ARGUMENT, 1, "invalid argument")                                               \
  X(TSR_ERR_NULL_POINTER, 2, "a required pointer argument is NULL")                                \
  X(TSR_ERR_SHAPE, 3, "shapes do not match or cannot be broadcast")                                \
  X(TSR_ERR_DTYPE, 4, "dtype mismatch or dtype not supported by this operation")                   \
  X(TSR_ERR_DEVICE_MISMATCH, 5, "arrays live on different devices")                                \
  X(TSR_ERR_NO_DEVICE, 6, "no such device")                                                        \
  X(TSR_ERR_OUT_OF_MEMORY, 7, "out of memory")                                                     \
  X(TSR_ERR_OVERFLOW, 8, "size computation overflows")                                             \
  X(TSR_ERR_UNSUPPORTED, 9, "operation not supported on this device or build")                     \
  X(TSR_ERR_FORMAT, 10, "malformed or unsupported file format")                                    \
  X(TSR_ERR_IO, 11, "file input/output error")                                                     \
  X(TSR_ERR_MPI, 12, "MPI error")                                                                  \
  X(TSR_ERR_GPU, 13, "GPU runtime error")                                                          \
  X(TSR_ERR_BLAS, 14, "vendor BLAS error")                                                         \
  X(TSR_ERR_INCONSISTENT, 15, "arguments differ between MPI ranks")                                \
  X(TSR_ERR_INTERNAL, 16, "internal error (a bug in Tessera)")

/** Status returned by every public function. */
typedef enum tsr_status {
#define TSR__STATUS_ENUM(name, value, text) name = value,
  TSR_STATUS_LIST(TSR__STATUS_ENUM)
#undef TSR__STATUS_ENUM
} tsr_status;

/**
 * Name of a status code as a string, e.g. "TSR_ERR_SHAPE". Never NULL: an unknown value gives
 * "TSR_ERR_UNKNOWN". This function (like tsr_strerror and tsr_last_error) returns its result
 * directly because it cannot fail.
 */
TSR_API const char *tsr_status_name(tsr_status status);

/** One-line description of a status code, e.g. "out of memory". Never NULL. */
TSR_API const char *tsr_strerror(tsr_status status);

/**
 * The message recorded by the last failing Tessera call on this thread, naming the function
 * and the values that were wrong. Empty string ("") when no call has failed or after
 * tsr_clear_error(). The pointer stays valid until the next Tessera call on this thread.
 */
TSR_API const char *tsr_last_error(void);

/** Clears this thread's last-error message and its raise site (tsr_last_error_site()). */
TSR_API void tsr_clear_error(void);

/**
 * Where inside Tessera the error of tsr_last_error() was raised, for bug reports and
 * debugging (the message itself names the public function called, never an internal one):
 * `*file` is the source file relative to Tessera's `src/` (e.g. "core/npy.c"), `*line` its
 * line (> 0) and `*function` the internal function that raised it (e.g.
 * "tsr__npy_unsupported"). The site belongs to the last error, as the message does: it is
 * replaced by the next error on this thread, never by a successful call, and cleared by
 * tsr_clear_error(). When this thread has no error (none yet, or cleared), or its last error
 * has no site (one recorded by tsr_set_error(), or a message lost for lack of memory), `*file`
 * and `*function` are "" and `*line` is 0. After a distributed call failed, or
 * tsr_dist_agree() reported a failure, every rank's site is the lowest failing rank's (the
 * rank is in the message). Thread-local like tsr_last_error(); the strings stay valid until
 * the next Tessera call on this thread. Any of the pointers may be NULL (that part is not
 * written). Cannot fail. `TSR_ERROR_TRACE=1` in the environment also prints every raised
 * error with its site on stderr (README, "Devices and environment variables").
 */
TSR_API void tsr_last_error_site(const char **file, int *line, const char **function);

/**
 * Records a message for tsr_last_error() on this thread and returns `code`, so that layers
 * built on Tessera's public API (the BLAS drop-in, user extensions) report through the same
 * channel as the library. The message becomes "function: " followed by the printf-style
 * formatted text (truncated to the message buffer, 1024 bytes). Such an error has no raise site
 * (tsr_last_error_site() gives "", 0, ""). Inside a Tessera call the name
 * of the public function the user called wins over `function` (the one error rule of
 * docs/architecture.md). `function` may be NULL ("tessera" is used); `fmt` NULL is taken as "".
 * @return `code`, unchanged (it is not validated: any ::tsr_status may be passed).
 */
TSR_API tsr_status tsr_set_error(tsr_status code, const char *function, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_STATUS_H */
