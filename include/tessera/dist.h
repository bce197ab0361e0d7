/* Placeholder: the distributed API (process grid, block-cyclic matrices, SUMMA) is being
   written in src/mpi. */
#ifndef TESSERA_DIST_H
#define TESSERA_DIST_H
#include <mpi.h>
#endif
