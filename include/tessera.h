/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file tessera.h
 * @brief Tessera umbrella header: the one header a program without MPI needs.
 *
 * Dense arrays and matrix multiplication on CPUs (OpenMP), NVIDIA GPUs (CUDA) and AMD GPUs
 * (HIP), and SUMMA matrix multiplication over MPI. See README.md for a tour.
 *
 * This header needs no MPI: the distributed layer is `tessera/dist.h` (it includes `mpi.h`),
 * which a program that uses it includes itself, after this one.
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
#include "tessera/version.h"

#endif /* TESSERA_H */
