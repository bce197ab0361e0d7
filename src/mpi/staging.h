/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one transport between device memory and MPI (staging.c): a grid's staging object, used
 * by SUMMA's panel broadcasts (summa.c) and by the block-cyclic exchange (redistribute.c)
 * alike, and so by 2.5D, which moves its data through both.
 *
 * What it keeps, made on first use and kept with the grid until tsr_grid_free (grow-only: a
 * call that fits allocates nothing, so no pinned allocation happens in a call after the first
 * of its size):
 *  - pinned host buffers, one per use (TSR__STAGE_*), for MPIs that are not GPU-aware;
 *  - device message buffers of the exchange (send, receive);
 *  - the two copy streams (device to host, host to device) of SUMMA's pipeline;
 *  - SUMMA's slots (device panel buffers and events; summa.c's own struct, opaque here).
 * The staged copies (a device region to or from a packed host buffer, counted as one
 * host<->device copy each) and the wait that makes queued device work complete before MPI
 * reads a buffer are here too, so the two schedules run one protocol. What crosses is only
 * what goes to other ranks: the exchange copies a rank's own part device to device, never
 * through a buffer (redistribute.c).
 *
 * The object hangs off the grid (struct tsr_grid::staging, which tsr_grid_free releases
 * through staging_free).
 * Local functions (no MPI call); callers agree on the statuses.
 */
#ifndef TSR_MPI_STAGING_H
#define TSR_MPI_STAGING_H

#include "mpi/mpi_internal.h"

typedef struct tsr__staging tsr__staging;

/* The pinned host buffers, by use. */
enum {
  TSR__STAGE_SEND = 0,  /* the exchange: messages to other ranks */
  TSR__STAGE_RECV = 1,  /* the exchange: messages from other ranks */
  TSR__STAGE_SUMMA = 2, /* SUMMA: slot i's A panel at TSR__STAGE_SUMMA + 2 i, B panel at + 1 */
  TSR__STAGE_NBUF = TSR__STAGE_SUMMA + 2 * 4
};

/* The grid's staging object for `dev`: made on first use; when the grid's last call ran on
   another device, emptied first. */
tsr_status tsr__staging_get(const tsr_grid *g, tsr_device dev, tsr__staging **out);

/* Pinned host buffer `which` (TSR__STAGE_*) of at least `bytes`; grown (after the device's
   queued work completed) only when smaller. */
tsr_status tsr__staging_host(tsr__staging *s, int which, size_t bytes, void **ptr);

/* Device message buffer `which` (TSR__STAGE_SEND or TSR__STAGE_RECV) of at least `bytes`,
   grown only when smaller (stream-ordered: work queued on the old one completes first). */
tsr_status tsr__staging_dev(tsr__staging *s, int which, size_t bytes, void **ptr);

/* The copy streams (device to host, host to device), made once; NULL on a CPU. */
tsr_status tsr__staging_streams(tsr__staging *s, void **d2h, void **h2d);

/* A staged copy: `rows` runs of `width` bytes from device memory `src` (runs `spitch` apart)
   into host buffer `which` at byte `off`, packed (tsr__staging_d2h), or from there into device
   memory `dst` (runs `dpitch` apart; tsr__staging_h2d); queued on `stream` (NULL: the device's
   own). One counted host<->device copy each. */
tsr_status tsr__staging_d2h(tsr__staging *s, int which, size_t off, const void *src, size_t spitch,
                            size_t width, size_t rows, void *stream);
tsr_status tsr__staging_h2d(tsr__staging *s, int which, size_t off, void *dst, size_t dpitch,
                            size_t width, size_t rows, void *stream);

/* The device's queued work is complete (a host synchronization): before MPI reads or writes
   a buffer that device work used. */
tsr_status tsr__staging_ready(tsr__staging *s);

/* SUMMA's slots on this grid (NULL until set), kept and freed with the staging object. */
void *tsr__staging_summa(const tsr__staging *s);
void tsr__staging_set_summa(tsr__staging *s, void *slots, void (*free_fn)(void *));

#endif /* TSR_MPI_STAGING_H */
