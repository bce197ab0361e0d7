/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The modeled-compute mode of the distributed layer, for the SimGrid/SMPI scaling study
 * (bench/scale): built with smpicc and -DTSR_SMPI_MODEL, each local GEMM charges its 2 m n k
 * flops to the simulated host (smpi_execute_flops, at the host speed of the platform file)
 * instead of computing, and local copies charge their bytes at a memory bandwidth. In every
 * other build these are tsr_gemm_ex (tsr_gemm_complex for c64/c128) and no-ops.
 *
 * The GPU node (TSR_SMPI_GPU=1): a local GEMM of shape m x n x k then takes
 *   t = 2 m n k / (R * e(m) e(n) e(k)) + launch,   e(d) = d / (d + h),
 * R the dense rate of cuBLAS on an H100 at large shapes (TSR_SMPI_GPU_F64, default 57e12;
 * TSR_SMPI_GPU_F32, 50e12), h = 64 (TSR_SMPI_GPU_HALF: the dimension at which a GEMM runs at
 * half rate from that dimension's side) and launch = 10 us (TSR_SMPI_GPU_LAUNCH). A model, not
 * a measurement: 512-deep panels run at 0.89 R, 256-deep at 0.80 R, 16384^2 x 2048 at 0.96 R.
 * TSR_SMPI_GPU_STAGING=1 adds the host-to-device copy of both operand panels at
 * TSR_SMPI_PCIE_BW (default 50e9 B/s, PCIe 5 x16 pinned) before each multiply.
 * SUMMA runs this device asynchronously (src/mpi/summa.c, summa_model_gemm): its GEMMs and
 * staged copies queue on modeled device clocks while the host drives MPI, and only its waits
 * for a GEMM or a copy (a slot's reuse, the end of the call) charge the host.
 * tsr__dist_model_pack_seconds: a panel's 2-D pack on the device, bytes / PCIe when staging
 * (to pinned memory), else 2 bytes / TSR_SMPI_HBM_BW (read and write; default 2.5e12 B/s of
 * an H100's 3.35 TB/s HBM3). The GPU node's other local copies (tsr__dist_model_copy: 2.5D's
 * packing and unpacking of its slices and partial products, beta C) are charged the same way,
 * as device copies, not at the CPU's TSR_SMPI_MEMORY_BW. While it waits for the device, the host
 * blocks in one MPI_Waitany on the broadcasts in flight and an alarm that arrives when the
 * device is done (tsr__model_timer, mpi_internal.h): it forwards a segment the moment it
 * arrives, as a host thread blocked in MPI progress would. TSR_SMPI_GPU_POLL > 0 restores the
 * polled form (compute slices of that many seconds, MPI_Test between them), which SimGrid 3.32
 * makes quadratic in the messages of a run.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

#ifdef TSR_SMPI_MODEL
#include <simgrid/host.h>
#include <smpi/smpi.h>

/* Charges `seconds` of compute to this rank's simulated host. (smpi_execute(seconds) would
   convert them to flops at smpi/host-speed, the speed of the machine that benchmarks real code,
   20 kflop/s by default, and then run those flops at the simulated host's speed: ~0 time.) */
static void tsr__model_seconds(double seconds) {
  if (seconds > 0) smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
}
#endif

int tsr__dist_modeled(void) {
#ifdef TSR_SMPI_MODEL
  return 1;
#else
  return 0;
#endif
}

int tsr__dist_model_gpu(void) {
  return tsr__env_flag(TSR__ENV_SMPI_GPU);
}

double tsr__dist_model_gemm_seconds(double m, double n, double k, size_t es) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const double peak = tsr__env_number(es == 4 ? TSR__ENV_SMPI_GPU_F32 : TSR__ENV_SMPI_GPU_F64);
  const double h = tsr__env_number(TSR__ENV_SMPI_GPU_HALF);
  const double eff = m / (m + h) * (n / (n + h)) * (k / (k + h));
  return 2.0 * m * n * k / (peak * eff) + tsr__env_number(TSR__ENV_SMPI_GPU_LAUNCH);
}

void tsr__dist_model_charge(double seconds) {
#ifdef TSR_SMPI_MODEL
  tsr__model_seconds(seconds);
#else
  (void)seconds;
#endif
}

double tsr__dist_model_staging_seconds(double bytes) {
  if (!tsr__env_flag(TSR__ENV_SMPI_GPU_STAGING) || bytes <= 0) return 0;
  return bytes / tsr__env_number(TSR__ENV_SMPI_PCIE_BW);
}

double tsr__dist_model_poll_seconds(void) {
  return tsr__env_number(TSR__ENV_SMPI_GPU_POLL);
}

#ifdef TSR_SMPI_MODEL
/* The alarm's messages: one folded buffer for every rank (SMPI runs the ranks in one process;
   SMPI_SHARED_MALLOC memory is never copied), and the loopback's bytes per second measured on
   the alarms fired so far (the same for every rank: one platform). At most 1 GiB a message
   (SMPI 3.32 mistakes a message of 2 GiB or more for a small one). */
#define TSR__TIMER_MAX_BYTES ((int64_t)1 << 30)
#define TSR__TIMER_FIRST_BYTES ((int64_t)1 << 20)
static char *tsr__timer_buf;
static double tsr__timer_rate;
#endif

void tsr__dist_model_timer_start(tsr__model_timer *t, double seconds) {
#ifdef TSR_SMPI_MODEL
  if (!tsr__timer_buf) tsr__timer_buf = SMPI_SHARED_MALLOC((size_t)TSR__TIMER_MAX_BYTES);
  /* Until a rate is known, a 1 MiB probe; after, the bytes that take `seconds` at the measured
     rate, which latency makes a slight under-estimate: the alarm comes early, never late. */
  double want = tsr__timer_rate > 0 ? seconds * tsr__timer_rate : (double)TSR__TIMER_FIRST_BYTES;
  if (want > (double)TSR__TIMER_MAX_BYTES) want = (double)TSR__TIMER_MAX_BYTES;
  t->bytes = (int64_t)want;
  t->start = MPI_Wtime();
  MPI_Irecv(tsr__timer_buf, (int)t->bytes, MPI_BYTE, 0, 0, MPI_COMM_SELF, &t->recv);
  MPI_Isend(tsr__timer_buf, (int)t->bytes, MPI_BYTE, 0, 0, MPI_COMM_SELF, &t->send);
  t->running = 1;
#else
  (void)t, (void)seconds;
#endif
}

void tsr__dist_model_timer_fired(tsr__model_timer *t) {
#ifdef TSR_SMPI_MODEL
  if (!t->running) return;
  MPI_Wait(&t->send, MPI_STATUS_IGNORE); /* arrived with the receive: returns at once */
  const double dt = MPI_Wtime() - t->start;
  if (dt > 0 && t->bytes >= TSR__TIMER_FIRST_BYTES) {
    const double rate = (double)t->bytes / dt;
    if (rate > tsr__timer_rate) tsr__timer_rate = rate; /* larger messages: less latency in it */
  }
  t->running = 0;
#else
  (void)t;
#endif
}

void tsr__dist_model_timer_stop(tsr__model_timer *t) {
#ifdef TSR_SMPI_MODEL
  if (!t->running) return;
  if (t->recv != MPI_REQUEST_NULL) MPI_Wait(&t->recv, MPI_STATUS_IGNORE);
  tsr__dist_model_timer_fired(t);
#else
  (void)t;
#endif
}

double tsr__dist_model_pack_seconds(double bytes) {
  if (bytes <= 0) return 0;
  const double staged = tsr__dist_model_staging_seconds(bytes);
  return staged > 0 ? staged : 2.0 * bytes / tsr__env_number(TSR__ENV_SMPI_HBM_BW);
}

tsr_status tsr__dist_local_gemm(tsr_complex128 alpha, const tsr_array *a, const tsr_array *b,
                                tsr_complex128 beta, tsr_array *c, tsr_gemm_path path) {
  const bool cx = tsr__dtype_is_complex(c->dtype);
#ifdef TSR_SMPI_MODEL
  /* Row-major views m x k and k x n (the callers' local blocks are column-major views with
     strides (1, ld), shapes as in the product). k = 0 (beta C) is computed. */
  double m = (double)a->shape[0], k = (double)a->shape[1], n = (double)b->shape[1];
  if (k > 0) {
    double flops = (cx ? 8.0 : 2.0) * m * n * k;
    if (tsr__dist_model_gpu()) {
      /* The GPU node: the modeled time of the multiply at this shape, and with staged panels
         their host-to-device copies first (both operands: the owner's own panels are charged
         too, a slight over-estimate); a complex one as four real ones. */
      size_t es = tsr__dtype_size(a->dtype);
      double t = tsr__dist_model_staging_seconds((m * k + k * n) * (double)es) +
                 (cx ? 4.0 : 1.0) * tsr__dist_model_gemm_seconds(m, n, k, cx ? es / 2 : es);
      tsr__model_seconds(t);
    } else if (flops > 0) {
      smpi_execute_flops(flops);
    }
    return TSR_OK;
  }
#endif
  if (!cx) return tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, alpha.re, a, b, beta.re, c, path);
  return tsr_gemm_complex(TSR_NO_TRANS, TSR_NO_TRANS, alpha, a, b, beta, c, path);
}

void tsr__dist_model_copy(double bytes) {
#ifdef TSR_SMPI_MODEL
  static double bw = 0;
  if (bw <= 0) bw = tsr__env_number(TSR__ENV_SMPI_MEMORY_BW);
  /* The GPU node keeps its blocks on the device (the 2.5D exchanges pack and unpack there):
     a device copy, through PCIe when staging. */
  if (bytes > 0)
    tsr__model_seconds(tsr__dist_model_gpu() ? tsr__dist_model_pack_seconds(bytes) : bytes / bw);
#else
  (void)bytes;
#endif
}
