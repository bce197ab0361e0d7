/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An LD_PRELOAD shim that counts the MPI communication calls a process makes (through the
 * MPI profiling interface: each MPI_X here counts and calls PMPI_X). bench_pdgemm_calls reads
 * the counts around a run of pdgemm_ calls (tsr_mpi_count_read, found with dlsym), so that
 * the per-call message count of ScaLAPACK's PDGEMM and of Tessera's paths can be compared
 * exactly, whatever the machine's load.
 */
#include <mpi.h>
#include <stdint.h>

static uint64_t tsr_mpi_p2p, tsr_mpi_coll;

/* Point-to-point calls (sends and receives) and collective calls so far. */
__attribute__((visibility("default"))) void tsr_mpi_count_read(uint64_t *p2p, uint64_t *coll) {
  *p2p = tsr_mpi_p2p;
  *coll = tsr_mpi_coll;
}

#define TSR__P2P tsr_mpi_p2p++
#define TSR__COLL tsr_mpi_coll++

int MPI_Send(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m) {
  TSR__P2P;
  return PMPI_Send(b, c, t, d, g, m);
}
int MPI_Isend(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r) {
  TSR__P2P;
  return PMPI_Isend(b, c, t, d, g, m, r);
}
int MPI_Rsend(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m) {
  TSR__P2P;
  return PMPI_Rsend(b, c, t, d, g, m);
}
int MPI_Recv(void *b, int c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Status *st) {
  TSR__P2P;
  return PMPI_Recv(b, c, t, s, g, m, st);
}
int MPI_Irecv(void *b, int c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Request *r) {
  TSR__P2P;
  return PMPI_Irecv(b, c, t, s, g, m, r);
}
int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int d, int sg, void *rb, int rc,
                 MPI_Datatype rt, int s, int rg, MPI_Comm m, MPI_Status *status) {
  TSR__P2P;
  return PMPI_Sendrecv(sb, sc, st, d, sg, rb, rc, rt, s, rg, m, status);
}
int MPI_Bcast(void *b, int c, MPI_Datatype t, int root, MPI_Comm m) {
  TSR__COLL;
  return PMPI_Bcast(b, c, t, root, m);
}
int MPI_Allreduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m) {
  TSR__COLL;
  return PMPI_Allreduce(s, r, c, t, o, m);
}
int MPI_Reduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm m) {
  TSR__COLL;
  return PMPI_Reduce(s, r, c, t, o, root, m);
}
int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int *rc, const int *d,
                   MPI_Datatype rt, MPI_Comm m) {
  TSR__COLL;
  return PMPI_Allgatherv(s, sc, st, r, rc, d, rt, m);
}
int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                  MPI_Comm m) {
  TSR__COLL;
  return PMPI_Allgather(s, sc, st, r, rc, rt, m);
}
int MPI_Alltoallv(const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r,
                  const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm m) {
  TSR__COLL;
  return PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, m);
}
int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                 MPI_Comm m) {
  TSR__COLL;
  return PMPI_Alltoall(s, sc, st, r, rc, rt, m);
}
int MPI_Barrier(MPI_Comm m) {
  TSR__COLL;
  return PMPI_Barrier(m);
}
int MPI_Ibcast(void *b, int c, MPI_Datatype t, int root, MPI_Comm m, MPI_Request *r) {
  TSR__COLL;
  return PMPI_Ibcast(b, c, t, root, m, r);
}
