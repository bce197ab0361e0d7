/* SPDX-License-Identifier: BSD-3-Clause */
/* What the ScaLAPACK benchmarks (bench_pdgemm, bench_pdgemm_calls) share: the BLACS and
   ScaLAPACK entries they call and the deterministic matrix entries they fill. */
#ifndef TSR_BENCH_SCALAPACK_H
#define TSR_BENCH_SCALAPACK_H

extern void Cblacs_pinfo(int *rank, int *nprocs);
extern void Cblacs_get(int ctxt, int what, int *val);
extern void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int ctxt);
extern int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc,
                   const int *nprocs);
extern int indxl2g_(const int *il, const int *nb, const int *iproc, const int *isrc,
                    const int *nprocs);
extern void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                    const double *alpha, const double *a, const int *ia, const int *ja,
                    const int *desca, const double *b, const int *ib, const int *jb,
                    const int *descb, const double *beta, double *c, const int *ic, const int *jc,
                    const int *descc);
/* Double complex: A, B, C as (re, im) pairs, alpha and beta one complex each. */
extern void pzgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                    const double *alpha, const double *a, const int *ia, const int *ja,
                    const int *desca, const double *b, const int *ib, const int *jb,
                    const int *descb, const double *beta, double *c, const int *ic, const int *jc,
                    const int *descc);

/* A deterministic matrix with entries in [-1, 1]. */
static inline double value(int i, int j, int which) {
  unsigned h = (unsigned)i * 2654435761u ^ (unsigned)j * 40503u ^ (unsigned)which * 97u;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return (double)(h % 2001u) / 1000.0 - 1.0;
}

#endif /* TSR_BENCH_SCALAPACK_H */
