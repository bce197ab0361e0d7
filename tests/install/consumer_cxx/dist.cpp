/* SPDX-License-Identifier: BSD-3-Clause */
// A C++ user program of the distributed layer (tessera/dist.h, MPI's C interface only): a 1x1
// grid on one rank. Links without MPI's C++ bindings.
#include <cstdio>

#include <tessera.h>
#include <tessera/dist.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  tsr_grid *grid = nullptr;
  tsr_grid_props props{};
  int rc = 0;
  if (tsr_grid_create(MPI_COMM_WORLD, 1, 1, &grid) != TSR_OK ||
      tsr_grid_info(grid, &props) != TSR_OK || props.nprow != 1 || props.npcol != 1) {
    std::fprintf(stderr, "consumer_cxx_dist: %s\n", tsr_last_error());
    rc = 1;
  }
  if (grid) tsr_grid_free(grid);
  if (rc == 0) std::printf("consumer_cxx_dist: 1x1 grid\n");
  MPI_Finalize();
  return rc;
}
