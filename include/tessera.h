/**
 * @file tessera.h
 * @brief Tessera umbrella header: the only header a user needs.
 *
 * Dense arrays and matrix multiplication on CPUs (OpenMP), NVIDIA GPUs (CUDA) and AMD GPUs
 * (HIP), and SUMMA matrix multiplication over MPI. See README.md for a tour.
 */
#ifndef TESSERA_H
#define TESSERA_H

#include "tessera/config.h"
#include "tessera/status.h"
#include "tessera/device.h"
#include "tessera/array.h"
#include "tessera/ops.h"
#include "tessera/linalg.h"
#include "tessera/io.h"
#if TSR_HAVE_MPI
#include "tessera/dist.h"
#endif

#endif /* TESSERA_H */
