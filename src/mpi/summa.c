/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SUMMA (van de Geijn & Watts, "SUMMA: Scalable Universal Matrix Multiplication Algorithm",
 * Concurrency: Practice and Experience 9(4), 1997) over the 2D block-cyclic layout, with the
 * broadcasts of the next L steps in flight (look-ahead L, L + 1 panel slots; the broadcast of
 * options->bcast, src/mpi/bcast.c) while step s is multiplied by tsr_gemm on the rank's device.
 *
 * Look-ahead. L = 2 on GPUs and 1 on the CPU (TSR_SUMMA_LOOKAHEAD: auto, 1 to 3; on the CPU,
 * where the multiply and the broadcasts share the cores, L = 2 measured slower: PDGEMM n = 4096,
 * NB 256, 1x2 grid of one thread per rank on Zen 4, 62 against 81 GFLOP/s with L = 1). When
 * step s is multiplied, the panels of
 * steps s+1 .. s+L are being broadcast; step s+L goes into the slot step s-1 used. On the CPU
 * (the multiply is synchronous) step s+L is posted before step s is multiplied. On a GPU (and
 * the modeled GPU of the SimGrid study) step s's GEMM is queued first and step s+L posted
 * after it: posting waits for the GEMM of step s-1 (its slot), which ends before step s's GEMM
 * starts, so the device keeps a GEMM queued while the host forwards the next L panels. A
 * ring's fill latency ((s - 2) segment hops) and a panel's link time then overlap L
 * multiplies before the panel is needed.
 *
 * Steps. A step multiplies a panel of op(A) columns with the matching op(B) rows. On the CPU
 * a step is one distribution block (the panel width is the block size). On a GPU on a square
 * process grid a step aggregates up to TSR__SUMMA_GPU_PANEL / kb blocks of one owner
 * (global blocks b, b + P, b + 2P, ...: consecutive local blocks of the owner for A and for B),
 * so that each GEMM is wide enough to run at the GPU's speed and C is re-read fewer times.
 * A 1 x 1 grid is one step: one local GEMM of the whole k.
 *
 * Data movement. A rank copies nothing for a communicator of one rank: a 1 x 1 grid moves
 * no byte, a 1 x Q grid broadcasts only A panels. On a GPU without GPU-aware MPI (staging,
 * the usual case: Debian's Open MPI is not CUDA-aware), the root of a broadcast copies just
 * the panel it broadcasts into a pinned host buffer (a 2-D copy packs B's strided rows), the
 * others receive into pinned host buffers and copy the panel to the device. The copies run on
 * two copy streams of their own (device to host, host to device), ordered with events:
 *   root:     D2H(s) on the d2h stream (after the inputs are ready) -> host polls its event,
 *             testing MPI, then posts the broadcast;
 *   receiver: broadcast done -> H2D(s) on the h2d stream after the GEMM that last read the
 *             slot (stream wait) -> the compute stream waits for the H2D -> GEMM(s).
 * The host never waits for the compute stream inside the panel loop; it waits only for a
 * staged copy before MPI touches its buffer (stats: copy_waits), and once at the end.
 * With GPU-aware MPI panels go to MPI in device memory (B's rows packed on the GPU); the host
 * waits for the GEMM that last read a receive slot before MPI overwrites it (host_syncs_in_loop).
 * TSR_DIST_GPU_STAGING=1 forces staging, =0 the device-to-device path (for MPIs that are
 * GPU-aware without saying so through MPIX_Query_cuda_support, and the emulator of tests/gpu_emu).
 *
 * The plan. Slot buffers and events live in a plan kept on the grid's staging object
 * (staging.h), with the pinned buffers and the copy streams that the block-cyclic exchange
 * shares, and reused by every call that fits in it (same device and dtype, panels no larger),
 * so a repeated call allocates nothing (no pinned memory: the staging object's buffers only
 * grow); tsr_grid_free releases it. The staged copies go through the staging object.
 *
 * Accounting: the call's device copies, host synchronizations and GEMM calls come from the
 * library's counters (tsr__counters_read) and land in tsr_dist_stats, so tests can assert the
 * pipeline's model on the GPU emulator and on the CPU.
 *
 * The file ends with SUMMA's row of the dispatcher's schedule table (tsr__dist_summa_cost,
 * tsr__dist_summa_run), as gemm25d.c ends with 2.5D's: the two schedules are siblings.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"
#include "mpi/staging.h"

/* Open MPI progresses a non-blocking broadcast only inside MPI calls (the rendezvous of a large
   panel, a pipelined ring's forwarding), so while a CPU step multiplies, the broadcasts in flight
   are tested from inside the local GEMM: SUMMA sets the CPU GEMM's progress hook
   (core/internal.h) around the step's one GEMM call, and the driver calls it between its units
   of work (a packed block of A times a range of B's micro-panels, a millisecond or two on one
   core), at most every TSR__SUMMA_PROGRESS_NS. Before the hook the multiply ran in column chunks
   of 2 GFLOP with an MPI_Testall between them, each chunk packing the A panel again (on a 1 x 2
   grid, n = 4096, NB = 256, f64, one thread a rank: two chunks a step, ~40 ms apart; the
   pipelined ring and tree forward a segment only when tested). On the 2-vCPU Emerald Rapids VM
   the change measured within noise (pdgemm_ 1 x 2: 118 against 120 GFLOP/s, medians of 4
   alternations). Chunks remain where no hook runs: a local multiply by the vendor BLAS
   (TSR_GEMM=vendor) and the SimGrid model's, of TSR__SUMMA_CHUNK_FLOPS each (measured on the 2-core
   Zen 5 VM, n = 4096, NB = 256, f64: chunks of 512 columns, 0.5 GFLOP, 191 / 170 GFLOP/s on P = 2 /
   4, of 2048, 2.1 GFLOP, 186-200 / 178-180). TSR_SUMMA_CHUNK_FLOPS sets a chunk size for every
   local multiply. */
#define TSR__SUMMA_CHUNK_FLOPS 2e9
#define TSR__SUMMA_PROGRESS_NS 100000 /* 0.1 ms: a test costs ~1 us when nothing arrived */

/* Least k columns of a step on a GPU (square grids): K = 256 panel GEMMs run 10-20 % below
   K = 1024 on an H100 and re-read C four times as often (gpu-job-path.md, issue 29). */
#define TSR__SUMMA_GPU_PANEL 1024

/* The least flops of a CPU step's GEMM calls: TSR_SUMMA_CHUNK_FLOPS when set; else the whole
   step in one call (progressed from inside by the hook) unless the local multiply runs where
   no hook is polled (the vendor BLAS, the SimGrid model): there TSR__SUMMA_CHUNK_FLOPS. */
static double tsr__summa_chunk_flops(tsr_gemm_path path) {
  const double v = tsr__env_number(TSR__ENV_SUMMA_CHUNK_FLOPS); /* NaN when unset */
  if (!isnan(v)) return v;
  tsr_gemm_path resolved = path;
  if (tsr__gemm_resolve_path(path, &resolved) != TSR_OK) resolved = path;
  return resolved == TSR_GEMM_VENDOR || tsr__dist_modeled() ? TSR__SUMMA_CHUNK_FLOPS : INFINITY;
}

#define SUMMA_SLOTS 4 /* look-ahead at most 3 */
#define SUMMA_LOOKAHEAD 2

/* The look-ahead L (TSR_SUMMA_LOOKAHEAD, 1 to SUMMA_SLOTS - 1; auto: SUMMA_LOOKAHEAD when the
   multiply is asynchronous (a GPU, or the modeled one), else 1). */
static int tsr__summa_lookahead(bool async) {
  const int v = tsr__env_choice(TSR__ENV_SUMMA_LOOKAHEAD); /* "auto|1|2|3" */
  return v > 0 ? v : async ? SUMMA_LOOKAHEAD : 1;
}

/* One slot: device buffers for received (or, GPU-aware, packed) panels, pinned host buffers
   when staging (the staging object's TSR__STAGE_SUMMA + 2 i and + 1), and the events that
   order their reuse. */
typedef struct tsr__summa_slot {
  tsr_array *a_dev, *b_dev;
  void *a_host, *b_host;
  void *ev_d2h;  /* d2h stream: the root's panels are in the host buffers */
  void *ev_h2d;  /* h2d stream: the received panels are on the device */
  void *ev_gemm; /* compute stream: the GEMM that read the slot is done */
} tsr__summa_slot;

typedef struct tsr__summa_slots {
  tsr__staging *stage; /* the grid's staging object, which keeps this plan */
  tsr_device dev;
  tsr_dtype dtype;
  int64_t a_cap, b_cap; /* elements of each slot's A and B buffers */
  bool a_host, b_host;  /* host buffers exist (staging, communicator of more than one rank) */
  int nslots;           /* slots made (look-ahead + 1) */
  void *d2h, *h2d;      /* copy streams (NULL on the CPU) */
  void *ev_ready;       /* compute stream: the inputs are complete */
  void *ev_t0, *ev_t1;  /* compute stream: timing of the panel loop */
  tsr__summa_slot slot[SUMMA_SLOTS];
} tsr__summa_slots;

/* One step: op(A) columns [a_off, a_off + w) of the local block of process column root_a,
   op(B) rows [b_off, b_off + w) of the local block of process row root_b. */
typedef struct tsr__summa_step {
  int root_a, root_b;
  int64_t a_off, b_off, w;
} tsr__summa_step;

typedef struct tsr__summa {
  const tsr_dmatrix *a, *b;
  tsr_dmatrix *c;
  const tsr_grid *g;
  int64_t k, kb, group, steps;
  size_t es;
  MPI_Datatype type;
  bool gpu, staging;
  /* The modeled GPU of the SimGrid study (TSR_SMPI_MODEL build, TSR_SMPI_GPU=1): GEMMs run
     asynchronously on a modeled device clock (see tsr__summa_model_wait). */
  bool model_gpu;
  int slots;                    /* look-ahead + 1 */
  double dev_end;               /* model_gpu: simulated time the queued GEMMs end */
  double h2d_end;               /* model_gpu, staging: the copy engine's queue ends */
  double slot_end[SUMMA_SLOTS]; /* model_gpu: the GEMM that last read the slot ends */
  double slot_h2d[SUMMA_SLOTS]; /* model_gpu, staging: the slot's last H2D ends */
  tsr__model_timer timer;       /* model_gpu: the host's alarm while it waits for the device */
  tsr__summa_slots *plan;
  tsr_dist_bcast bcast;               /* options->bcast (AUTO: chosen per broadcast, bcast.c) */
  tsr__bcast op[SUMMA_SLOTS][2];      /* A and B broadcasts of the step in each slot */
  tsr__bcast *active[SUMMA_SLOTS][2]; /* the started ones (NULL: none, e.g. a 1-rank row) */
  tsr_dist_stats *stats;
  double chunk_flops; /* least flops of a local-multiply chunk on the CPU */
} tsr__summa;

/* Frees the plan; the pinned buffers and streams stay with the staging object. */
static void tsr__summa_slots_free(void *plan) {
  tsr__summa_slots *p = plan;
  if (!p) return;
  for (int i = 0; i < p->nslots; i++) {
    tsr__summa_slot *sl = &p->slot[i];
    tsr_array_release(sl->a_dev);
    tsr_array_release(sl->b_dev);
    tsr__dev_event_destroy(p->dev, sl->ev_d2h);
    tsr__dev_event_destroy(p->dev, sl->ev_h2d);
    tsr__dev_event_destroy(p->dev, sl->ev_gemm);
  }
  tsr__dev_event_destroy(p->dev, p->ev_ready);
  tsr__dev_event_destroy(p->dev, p->ev_t0);
  tsr__dev_event_destroy(p->dev, p->ev_t1);
  free(p);
}

/* The grid's plan for this call, made or grown when it does not fit (its pinned buffers are
   the staging object's, grown only when smaller). Local (the caller agrees on the status). */
static tsr_status tsr__summa_slots_get(tsr__summa *s, int64_t a_cap, int64_t b_cap, bool a_host,
                                       bool b_host) {
  const tsr_device dev = s->c->device;
  tsr__staging *stage = NULL;
  TSR_CALL(tsr__staging_get(s->g, dev, &stage));
  tsr__summa_slots *p = tsr__staging_summa(stage);
  if (p && tsr_device_equal(p->dev, dev) && p->dtype == s->c->dtype && p->a_cap >= a_cap &&
      p->b_cap >= b_cap && (p->a_host || !a_host) && (p->b_host || !b_host) &&
      p->nslots >= s->slots) {
    s->plan = p;
    return TSR_OK;
  }
  tsr__summa_slots_free(p);
  tsr__staging_set_summa(stage, NULL, NULL);
  p = calloc(1, sizeof *p);
  if (!p) return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "SUMMA plan");
  p->stage = stage;
  p->dev = dev;
  p->dtype = s->c->dtype;
  p->a_cap = a_cap;
  p->b_cap = b_cap;
  p->a_host = a_host;
  p->b_host = b_host;
  p->nslots = s->slots;
  const size_t es = s->es;
  tsr_status st = TSR_OK;
  for (int i = 0; i < p->nslots && st == TSR_OK; i++) {
    tsr__summa_slot *sl = &p->slot[i];
    int64_t sa[1] = {a_cap}, sb[1] = {b_cap};
    st = tsr_empty(1, sa, p->dtype, dev, &sl->a_dev);
    if (st == TSR_OK) st = tsr_empty(1, sb, p->dtype, dev, &sl->b_dev);
    if (st == TSR_OK && a_host)
      st = tsr__staging_host(stage, TSR__STAGE_SUMMA + 2 * i, (size_t)a_cap * es, &sl->a_host);
    if (st == TSR_OK && b_host)
      st = tsr__staging_host(stage, TSR__STAGE_SUMMA + 2 * i + 1, (size_t)b_cap * es, &sl->b_host);
    if (st == TSR_OK) st = tsr__dev_event_create(dev, &sl->ev_d2h);
    if (st == TSR_OK) st = tsr__dev_event_create(dev, &sl->ev_h2d);
    if (st == TSR_OK) st = tsr__dev_event_create(dev, &sl->ev_gemm);
  }
  if (st == TSR_OK) st = tsr__dev_event_create(dev, &p->ev_ready);
  if (st == TSR_OK) st = tsr__dev_event_create(dev, &p->ev_t0);
  if (st == TSR_OK) st = tsr__dev_event_create(dev, &p->ev_t1);
  if (st == TSR_OK) st = tsr__staging_streams(stage, &p->d2h, &p->h2d);
  if (st != TSR_OK) {
    tsr__summa_slots_free(p);
    return st;
  }
  tsr__staging_set_summa(stage, p, tsr__summa_slots_free);
  s->plan = p;
  return TSR_OK;
}

/* Step `st` of the schedule. Blocks are grouped `group` at a time per owner: with L =
   nprow = npcol (group > 1 only on square grids), round R covers global blocks
   [R group L, (R+1) group L), and its step c (0 <= c < L) the blocks R group L + c + i L,
   i < group: consecutive local blocks R group + i of process column and row c. */
static tsr__summa_step tsr__summa_step_of(const tsr__summa *s, int64_t st) {
  const tsr_grid *g = s->g;
  const int64_t nkb = (s->k + s->kb - 1) / s->kb;
  tsr__summa_step r;
  int64_t b0;
  if (s->group == 1) {
    b0 = st;
  } else {
    const int64_t L = g->nprow, per_round = s->group * L;
    /* Steps of a full round: L; the last round may have fewer (blocks that exist only). */
    const int64_t full = nkb / per_round;
    int64_t round, c;
    if (st < full * L) {
      round = st / L;
      c = st % L;
    } else {
      round = full;
      c = st - full * L;
    }
    b0 = round * per_round + c;
  }
  int64_t blocks = 1;
  if (s->group > 1) {
    const int64_t L = g->nprow;
    blocks = (nkb - 1 - b0) / L + 1;
    if (blocks > s->group) blocks = s->group;
  }
  const int64_t last = b0 + (blocks - 1) * (s->group > 1 ? g->nprow : 1);
  r.root_a = (int)(b0 % g->npcol);
  r.root_b = (int)(b0 % g->nprow);
  r.a_off = (b0 / g->npcol) * s->kb;
  r.b_off = (b0 / g->nprow) * s->kb;
  const int64_t last_w = s->k - last * s->kb < s->kb ? s->k - last * s->kb : s->kb;
  r.w = (blocks - 1) * s->kb + last_w;
  return r;
}

/* The number of steps (see tsr__summa_step_of). */
static int64_t tsr__summa_steps(const tsr__summa *s) {
  const int64_t nkb = (s->k + s->kb - 1) / s->kb;
  if (s->group == 1) return nkb;
  const int64_t L = s->g->nprow, per_round = s->group * L;
  const int64_t full = nkb / per_round, rest = nkb - full * per_round;
  return full * L + (rest < L ? rest : L);
}

/* The broadcasts in flight outside one slot, tested while the host waits for something else
   (a ring forwards only when its rank tests it). */
typedef struct tsr__summa_pending {
  tsr__bcast *op[2 * SUMMA_SLOTS];
  int n;
} tsr__summa_pending;

/* The started broadcasts of every slot but `except` (-1: none excepted). */
static tsr__summa_pending tsr__summa_inflight(const tsr__summa *s, int except) {
  tsr__summa_pending p;
  p.n = 0;
  for (int i = 0; i < s->slots; i++)
    for (int j = 0; j < 2 && i != except; j++)
      if (s->active[i][j]) p.op[p.n++] = s->active[i][j];
  return p;
}

static void tsr__summa_progress(const tsr__summa_pending *pending) {
  if (pending && pending->n > 0) {
    int flag = 0;
    (void)tsr__bcast_testall(pending->n, pending->op, &flag); /* errors stay in the ops */
  }
}

/* tsr__summa_progress as the CPU GEMM's progress hook (ctx: the tsr__summa_pending). */
static void tsr__summa_progress_hook(void *ctx) {
  tsr__summa_progress(ctx);
}

/* The modeled GPU (model_gpu): the host waits until simulated time `until` (a GEMM or a copy
   of the modeled device ends) while the broadcasts in `pending` progress, as the host thread
   drives MPI while a GPU computes: it blocks in MPI_Waitany on their requests and an alarm set
   for `until` (s->timer), forwarding each segment as it arrives; with TSR_SMPI_GPU_POLL > 0 it
   charges slices of that length and tests between them instead. Leftovers under 1 us (the
   alarm's latency) are charged as compute. */
static void tsr__summa_model_wait(tsr__summa *s, double until, const tsr__summa_pending *pending) {
  const double slice = tsr__dist_model_poll_seconds();
  const bool events = slice == 0 && pending && pending->n > 0;
  for (double now = MPI_Wtime(); now < until; now = MPI_Wtime()) {
    const double dt = until - now;
    if (!events || dt < 1e-6) {
      tsr__dist_model_charge(slice > 0 && dt > slice ? slice : dt);
    } else {
      if (!s->timer.running) tsr__dist_model_timer_start(&s->timer, dt);
      if (tsr__bcast_wait_any(pending->n, pending->op, &s->timer.recv))
        tsr__dist_model_timer_fired(&s->timer);
    }
    tsr__summa_progress(pending);
  }
}

/* Waits until `event` completed, testing `pending` (may be NULL) between polls
   so that their broadcasts progress. `compute` says the event is on the compute stream (a host
   synchronization) rather than a copy stream. */
static tsr_status tsr__summa_event_wait(tsr__summa *s, void *event,
                                        const tsr__summa_pending *pending, bool compute) {
  int done = 0;
  TSR_CALL(tsr__dev_event_query(s->c->device, event, &done));
  if (done) return TSR_OK;
  if (compute)
    tsr__count(TSR__COUNT_HOST_SYNCS, 1);
  else
    s->stats->copy_waits++;
  while (!done) {
    tsr__summa_progress(pending);
    TSR_CALL(tsr__dev_event_query(s->c->device, event, &done));
  }
  return TSR_OK;
}

/* The broadcast algorithm for a panel of `bytes` on a row or column of `size` ranks:
   options->bcast; AUTO is decided here when the panel is in device memory, where Open MPI's
   GPU support does not cover MPI_Ibcast: Tessera's own point-to-point broadcast then (the tree
   for what AUTO would give MPI_Ibcast, and where the grid's ranks share cores, agreed at the
   grid's creation). */
static tsr_dist_bcast tsr__summa_bcast_algo(const tsr__summa *s, int64_t bytes, int size) {
  if (s->bcast != TSR_DIST_BCAST_AUTO || !s->gpu || s->staging) return s->bcast;
  /* device memory: never MPI_Ibcast */
  return tsr__bcast_choose(bytes, size, 0, true, s->g->oversubscribed);
}

/* model_gpu: when the slot's buffers may be overwritten (its last H2D when staging, else its
   last GEMM). */
static double tsr__summa_model_slot_free(const tsr__summa *s, int sl) {
  return tsr__dist_model_staging_seconds(1) > 0 ? s->slot_h2d[sl] : s->slot_end[sl];
}

/* The A panel of a step: w whole local columns, contiguous in the column-major local block,
   broadcast along the process row from its owner (staged through the slot's host buffer when
   staging). `pending`: the broadcasts of the other slots, progressed while waiting. */
static tsr_status tsr__summa_post_a(tsr__summa *s, const tsr__summa_step *step, int sl,
                                    const tsr__summa_pending *pending) {
  const tsr_grid *g = s->g;
  tsr__summa_slots *p = s->plan;
  tsr__summa_slot *slot = &p->slot[sl];
  const tsr_device dev = s->c->device;
  const size_t es = s->es;
  tsr_status st = TSR_OK;
  const int cnt_a = (int)(s->c->mloc * step->w);
  const bool root = g->mycol == step->root_a;
  void *buf;
  if (root) {
    const char *src =
        (const char *)tsr__array_ptr(s->a->storage) + (size_t)(step->a_off * s->a->lld) * es;
    if (s->staging) {
      /* The slot's host buffer was last sent (complete) or received and copied to the
         device (the d2h stream waits for that copy). */
      st = tsr__dev_stream_wait_event(dev, p->d2h, slot->ev_h2d);
      if (st == TSR_OK)
        st = tsr__staging_d2h(p->stage, TSR__STAGE_SUMMA + 2 * sl, 0, src, 0, (size_t)cnt_a * es, 1,
                              p->d2h);
      if (st == TSR_OK) st = tsr__dev_event_record(dev, slot->ev_d2h, p->d2h);
      if (st == TSR_OK) st = tsr__summa_event_wait(s, slot->ev_d2h, pending, false);
      buf = slot->a_host;
    } else {
      if (s->model_gpu) /* staged: the panel's D2H (0 s GPU-aware) */
        tsr__summa_model_wait(s, MPI_Wtime() + tsr__dist_model_staging_seconds((double)cnt_a * es),
                              pending);
      buf = (void *)(uintptr_t)src;
    }
    s->stats->bytes_sent += (uint64_t)cnt_a * es * (uint64_t)(g->npcol - 1);
  } else {
    if (s->staging) {
      /* MPI may overwrite the host buffer once its last H2D is done. */
      st = tsr__summa_event_wait(s, slot->ev_h2d, pending, false);
      buf = slot->a_host;
    } else {
      if (s->gpu) st = tsr__summa_event_wait(s, slot->ev_gemm, pending, true);
      if (s->model_gpu) tsr__summa_model_wait(s, tsr__summa_model_slot_free(s, sl), pending);
      buf = tsr__array_ptr(slot->a_dev);
    }
    s->stats->bytes_received += (uint64_t)cnt_a * es;
  }
  /* After a local failure the (stale) buffer is still sent, so that every rank's broadcast
     matches; the failure is agreed at the end. Tag: the slot (L + 1 steps in flight). */
  tsr_status s2 =
      tsr__bcast_start(&s->op[sl][0], buf, cnt_a, s->type, step->root_a, g->row_comm,
                       tsr__summa_bcast_algo(s, (int64_t)cnt_a * (int64_t)es, g->npcol), 0, sl);
  s->active[sl][0] = &s->op[sl][0];
  if (st == TSR_OK) st = s2;
  return st;
}

/* The B panel of a step: w rows of every local column, strided in the local block, sent packed
   (w x nloc, leading dimension w) along the process column from its owner. */
static tsr_status tsr__summa_post_b(tsr__summa *s, const tsr__summa_step *step, int sl,
                                    const tsr__summa_pending *pending) {
  const tsr_grid *g = s->g;
  tsr__summa_slots *p = s->plan;
  tsr__summa_slot *slot = &p->slot[sl];
  const tsr_device dev = s->c->device;
  const size_t es = s->es;
  tsr_status st = TSR_OK;
  const int64_t nloc = s->c->nloc, w = step->w;
  const int cnt_b = (int)(w * nloc);
  const bool root = g->myrow == step->root_b;
  const char *src = (const char *)tsr__array_ptr(s->b->storage) + (size_t)step->b_off * es;
  void *buf = NULL;
  if (root && s->gpu) {
    /* Packed by a 2-D copy: to the pinned buffer (staging) or the slot's device buffer. */
    void *dst = s->staging ? slot->b_host : tsr__array_ptr(slot->b_dev);
    /* The buffer was last read by MPI (complete), by the slot's H2D (staging) or by its
       GEMM (GPU-aware): the d2h stream waits for those. */
    tsr_status s2 =
        tsr__dev_stream_wait_event(dev, p->d2h, s->staging ? slot->ev_h2d : slot->ev_gemm);
    if (s2 == TSR_OK && s->staging)
      s2 = tsr__staging_d2h(p->stage, TSR__STAGE_SUMMA + 2 * sl + 1, 0, src, (size_t)s->b->lld * es,
                            (size_t)w * es, (size_t)nloc, p->d2h);
    else if (s2 == TSR_OK)
      s2 = tsr__dev_memcpy_2d_async(dev, dst, (size_t)w * es, src, (size_t)s->b->lld * es,
                                    (size_t)w * es, (size_t)nloc, TSR__COPY_D2D, p->d2h);
    if (s2 == TSR_OK) s2 = tsr__dev_event_record(dev, slot->ev_d2h, p->d2h);
    if (s2 == TSR_OK) s2 = tsr__summa_event_wait(s, slot->ev_d2h, pending, false);
    if (st == TSR_OK) st = s2;
    buf = dst;
    s->stats->bytes_sent += (uint64_t)cnt_b * es * (uint64_t)(g->nprow - 1);
  } else if (root) {
    /* Host memory: the rows packed into the slot's buffer (the broadcast sends contiguous
       segments); the buffer's last use, step st - slots, is complete. In a modeled run
       (bench/scale) the copy is charged, not made: on the modeled GPU as the device's 2-D
       copy (to pinned memory when staging) once the slot is free, polling meanwhile. */
    buf = tsr__array_ptr(slot->b_dev);
    if (s->model_gpu)
      tsr__summa_model_wait(s, tsr__summa_model_slot_free(s, sl), pending),
          tsr__summa_model_wait(s, MPI_Wtime() + tsr__dist_model_pack_seconds((double)cnt_b * es),
                                pending);
    else if (tsr__dist_modeled())
      tsr__dist_model_copy((double)cnt_b * (double)es);
    else {
      tsr_status s2 =
          tsr__dev_memcpy_2d_async(dev, buf, (size_t)w * es, src, (size_t)s->b->lld * es,
                                   (size_t)w * es, (size_t)nloc, TSR__COPY_D2D, NULL);
      if (st == TSR_OK) st = s2;
    }
    s->stats->bytes_sent += (uint64_t)cnt_b * es * (uint64_t)(g->nprow - 1);
  } else {
    tsr_status s2 = TSR_OK;
    if (s->staging) {
      s2 = tsr__summa_event_wait(s, slot->ev_h2d, pending, false);
      buf = slot->b_host;
    } else {
      if (s->gpu) s2 = tsr__summa_event_wait(s, slot->ev_gemm, pending, true);
      if (s->model_gpu) tsr__summa_model_wait(s, tsr__summa_model_slot_free(s, sl), pending);
      buf = tsr__array_ptr(slot->b_dev);
    }
    if (st == TSR_OK) st = s2;
    s->stats->bytes_received += (uint64_t)cnt_b * es;
  }
  tsr_status s3 =
      tsr__bcast_start(&s->op[sl][1], buf, cnt_b, s->type, step->root_b, g->col_comm,
                       tsr__summa_bcast_algo(s, (int64_t)cnt_b * (int64_t)es, g->nprow), 0, sl);
  s->active[sl][1] = &s->op[sl][1];
  if (st == TSR_OK) st = s3;
  return st;
}

/* Starts the broadcasts of step `st_i` into slot sl; `pending` are the broadcasts of the other
   slots (progressed while waiting for a copy or a GEMM). */
static tsr_status tsr__summa_post(tsr__summa *s, int64_t st_i, int sl,
                                  const tsr__summa_pending *pending) {
  const tsr__summa_step step = tsr__summa_step_of(s, st_i);
  s->active[sl][0] = s->active[sl][1] = NULL;
  tsr_status st = TSR_OK;
  if (s->g->npcol > 1) st = tsr__summa_post_a(s, &step, sl, pending);
  if (s->g->nprow > 1) {
    tsr_status s2 = tsr__summa_post_b(s, &step, sl, pending);
    if (st == TSR_OK) st = s2;
  }
  return st;
}

/* model_gpu: queues step st_i's GEMM on the modeled device: with staging its received panels'
   H2D first (on the copy engine, after the GEMM that last read the slot), then the GEMM once
   the device is free (smpi_model.c's rate for the shape). Charges the host nothing. */
static void tsr__summa_model_gemm(tsr__summa *s, int64_t st_i, int sl) {
  const tsr_grid *g = s->g;
  const tsr__summa_step step = tsr__summa_step_of(s, st_i);
  const double mloc = (double)s->c->mloc, nloc = (double)s->c->nloc, w = (double)step.w;
  const double in =
      (g->mycol == step.root_a ? 0 : mloc * w) + (g->myrow == step.root_b ? 0 : w * nloc);
  double ready = MPI_Wtime();
  const double h2d = tsr__dist_model_staging_seconds(in * (double)s->es);
  if (h2d > 0) {
    double t = ready > s->h2d_end ? ready : s->h2d_end;
    t = t > s->slot_end[sl] ? t : s->slot_end[sl];
    s->h2d_end = s->slot_h2d[sl] = t + h2d;
    ready = s->h2d_end;
  }
  const double start = ready > s->dev_end ? ready : s->dev_end;
  s->dev_end = s->slot_end[sl] = start + tsr__dist_model_gemm_seconds(mloc, nloc, w, s->es);
}

/* Multiplies step `st_i` (slot sl, broadcasts complete): C += alpha * Apanel * Bpanel, or
   C = alpha * Apanel * Bpanel + beta * C for the first step. `pending` are the broadcasts in
   flight, tested between column chunks (CPU) to progress them. */
static tsr_status tsr__summa_multiply(tsr__summa *s, int64_t st_i, int sl, tsr_complex128 alpha,
                                      tsr_complex128 beta, tsr_gemm_path path,
                                      const tsr__summa_pending *pending) {
  const tsr_grid *g = s->g;
  tsr__summa_slots *p = s->plan;
  tsr__summa_slot *slot = &p->slot[sl];
  const tsr__summa_step step = tsr__summa_step_of(s, st_i);
  const tsr_device dev = s->c->device;
  const int64_t w = step.w, mloc = s->c->mloc, nloc = s->c->nloc;
  const bool own_a = g->mycol == step.root_a, own_b = g->myrow == step.root_b;
  const bool packed_b = !own_b; /* a root reads its own rows in place */
  tsr_status st = TSR_OK;
  if (s->model_gpu) {
    tsr__summa_model_gemm(s, st_i, sl);
    return TSR_OK;
  }
  if (s->staging && (!own_a || !own_b)) {
    /* Received panels to the device on the h2d stream, after the GEMM that last read the
       slot; the compute stream then waits for the copies. */
    st = tsr__dev_stream_wait_event(dev, p->h2d, slot->ev_gemm);
    if (st == TSR_OK && !own_a)
      st = tsr__staging_h2d(p->stage, TSR__STAGE_SUMMA + 2 * sl, 0, tsr__array_ptr(slot->a_dev), 0,
                            (size_t)(mloc * w) * s->es, 1, p->h2d);
    if (st == TSR_OK && !own_b)
      st = tsr__staging_h2d(p->stage, TSR__STAGE_SUMMA + 2 * sl + 1, 0, tsr__array_ptr(slot->b_dev),
                            0, (size_t)(w * nloc) * s->es, 1, p->h2d);
    if (st == TSR_OK) st = tsr__dev_event_record(dev, slot->ev_h2d, p->h2d);
    if (st == TSR_OK) st = tsr__dev_stream_wait_event(dev, NULL, slot->ev_h2d);
    if (st != TSR_OK) return st;
  }
  const int64_t lda = own_a ? s->a->lld : (mloc > 1 ? mloc : 1);
  const int64_t ldb = packed_b ? (w > 1 ? w : 1) : s->b->lld;
  const tsr_array *abase = own_a ? s->a->storage : slot->a_dev;
  const tsr_array *bbase = packed_b ? slot->b_dev : s->b->storage;
  const int64_t aoff = own_a ? step.a_off * lda : 0;
  const int64_t boff = packed_b ? 0 : step.b_off;
  int64_t chunk = nloc > 0 ? nloc : 1;
  const bool progress = !s->gpu && pending && pending->n > 0;
  if (progress && mloc > 0 && w > 0 && isfinite(s->chunk_flops)) {
    /* At least s->chunk_flops a chunk, in multiples of 256 columns. */
    const double fma = tsr__dtype_is_complex(s->c->dtype) ? 8.0 : 2.0; /* flops a multiply-add */
    const double want = s->chunk_flops / (fma * (double)mloc * (double)w);
    if (want < (double)chunk) {
      const int64_t c = ((int64_t)ceil(want) + 255) / 256 * 256;
      chunk = c < 256 ? 256 : c < chunk ? c : chunk;
    }
  }
  /* The broadcasts in flight progress from inside the CPU GEMM (see the top). */
  tsr__progress_hook hook = {.fn = tsr__summa_progress_hook,
                             .ctx = (void *)pending,
                             .interval_ns = TSR__SUMMA_PROGRESS_NS};
  tsr__progress_hook *outer = progress ? tsr__progress_set(&hook) : NULL;
  for (int64_t j0 = 0; j0 < nloc || (j0 == 0 && nloc == 0); j0 += chunk) {
    int64_t nj = nloc - j0 < chunk ? nloc - j0 : chunk;
    tsr_array *av = NULL, *bv = NULL, *cv = NULL;
    int64_t ashape[2] = {mloc, w}, astr[2] = {1, lda};
    int64_t bshape[2] = {w, nj}, bstr[2] = {1, ldb};
    int64_t cshape[2] = {mloc, nj}, cstr[2] = {1, s->c->lld};
    st = tsr__array_new_view(abase, 2, ashape, astr, aoff, &av);
    if (st == TSR_OK) st = tsr__array_new_view(bbase, 2, bshape, bstr, boff + j0 * ldb, &bv);
    if (st == TSR_OK) st = tsr__array_new_view(s->c->storage, 2, cshape, cstr, j0 * s->c->lld, &cv);
    /* tsr__dist_local_gemm: tsr_gemm_ex, or its modeled cost under SMPI (smpi_model.c). */
    if (st == TSR_OK) st = tsr__dist_local_gemm(alpha, av, bv, beta, cv, path);
    tsr_array_release(av);
    tsr_array_release(bv);
    tsr_array_release(cv);
    if (st != TSR_OK) break;
    tsr__summa_progress(pending);
    if (nloc == 0) break;
  }
  if (progress) {
    tsr__progress_set(outer);
    s->stats->progress_calls += (uint64_t)hook.calls;
  }
  if (st != TSR_OK) return st;
  return tsr__dev_event_record(dev, slot->ev_gemm, NULL);
}

/* k = 0: C = beta * C, through the local GEMM with empty operands. */
static tsr_status tsr__summa_scale_c(tsr__summa *s, tsr_complex128 alpha, tsr_complex128 beta,
                                     tsr_gemm_path path) {
  const int64_t mloc = s->c->mloc, nloc = s->c->nloc;
  tsr_status st = TSR_OK;
  tsr_array *av = NULL, *bv = NULL, *cv = NULL;
  int64_t ashape[2] = {mloc, 0}, astr[2] = {1, 1}, bshape[2] = {0, nloc}, bstr[2] = {1, 1};
  st = tsr__array_new_view(s->a->storage, 2, ashape, astr, 0, &av);
  if (st == TSR_OK) st = tsr__array_new_view(s->b->storage, 2, bshape, bstr, 0, &bv);
  if (st == TSR_OK) st = tsr_dmatrix_local(s->c, &cv);
  if (st == TSR_OK) st = tsr__dist_local_gemm(alpha, av, bv, beta, cv, path);
  tsr_array_release(av);
  tsr_array_release(bv);
  tsr_array_release(cv);
  return st;
}

/* The plan and the inputs' readiness, agreed (no broadcast has started, so a failure returns
   on every rank). */
static tsr_status tsr__summa_prepare(tsr__summa *s) {
  const tsr_grid *g = s->g;
  const tsr_device dev = s->c->device;
  const int64_t mloc = s->c->mloc, nloc = s->c->nloc;
  tsr_status st = TSR_OK;
  /* The plan (allocation failures are agreed on before any broadcast starts). Slot buffers
     hold the widest step's panels; host buffers exist only where a panel is broadcast to
     another rank through the host. */
  int64_t wmax = 0;
  for (int64_t i = 0; i < s->steps; i++) {
    const int64_t w = tsr__summa_step_of(s, i).w;
    wmax = w > wmax ? w : wmax;
  }
  s->stats->panel_width = wmax;
  /* A rank receives (or packs) A panels only when its process row has several columns, B
     panels only when its process column has several rows. */
  const int64_t a_cap = g->npcol > 1 ? (mloc > 1 ? mloc : 1) * wmax : 1;
  const int64_t b_cap = g->nprow > 1 ? wmax * (nloc > 0 ? nloc : 1) : 1;
  st =
      tsr__summa_slots_get(s, a_cap, b_cap, s->staging && g->npcol > 1, s->staging && g->nprow > 1);
  /* The inputs (queued on the compute stream) are complete before a copy stream reads them. */
  if (st == TSR_OK) st = tsr__dev_event_record(dev, s->plan->ev_ready, NULL);
  if (st == TSR_OK) st = tsr__dev_stream_wait_event(dev, s->plan->d2h, s->plan->ev_ready);
  if (st == TSR_OK && s->gpu && !s->staging && g->size > 1)
    st = tsr__summa_event_wait(s, s->plan->ev_ready, NULL, true); /* MPI reads A and B itself */
  return tsr__dist_agree(g->comm, st);
}

/* Clears the slots' state and records the events' first marks (slot events start recorded, so
   the first waits on them pass). A failure here is local: the caller still makes every
   broadcast and agrees at the end. */
static tsr_status tsr__summa_reset(tsr__summa *s) {
  const tsr_device dev = s->c->device;
  tsr__summa_slots *p = s->plan;
  tsr_status st = TSR_OK;
  for (int i = 0; i < SUMMA_SLOTS; i++) {
    s->active[i][0] = s->active[i][1] = NULL;
    s->slot_end[i] = s->slot_h2d[i] = 0;
  }
  s->dev_end = s->h2d_end = 0;
  /* Slot events start recorded, so the first waits on them pass. */
  for (int i = 0; i < s->slots && st == TSR_OK; i++) {
    st = tsr__dev_event_record(dev, p->slot[i].ev_gemm, NULL);
    if (st == TSR_OK) st = tsr__dev_event_record(dev, p->slot[i].ev_h2d, p->h2d);
  }
  if (st == TSR_OK) st = tsr__dev_event_record(dev, p->ev_t0, NULL);
  return st;
}

/* The steps with look-ahead; every rank makes every broadcast, even after a local failure (it
   then only skips its multiplies), so no rank waits forever. Returns the first local failure. */
static tsr_status tsr__summa_steps_run(tsr__summa *s, tsr_complex128 alpha, tsr_complex128 beta,
                                       tsr_gemm_path path, const tsr_dist_gemm_options *opt,
                                       tsr_status st) {
  /* Look-ahead (see the top): step 0 is posted alone (the first panel, which nothing hides,
     does not share the links with the next ones), steps 1 .. L once it arrived, then step
     kk + L into slot (kk + L) % (L + 1), the slot of step kk - 1: before step kk's multiply on
     the CPU, after its GEMM is queued on a GPU. */
  const int L = s->slots - 1;
  const bool async = s->gpu || s->model_gpu;
  int64_t posted = 0;
  {
    tsr_status pst = tsr__summa_post(s, 0, 0, NULL);
    if (st == TSR_OK) st = pst;
    posted = 1;
  }
  for (int64_t kk = 0; kk < s->steps; kk++) {
    const int sl = (int)(kk % s->slots);
    /* Step kk's broadcasts, progressing the others in flight (a ring forwards only when
       tested). */
    tsr__summa_pending others = tsr__summa_inflight(s, sl);
    double t0 = MPI_Wtime();
    tsr_status wst = tsr__bcast_wait_while(2, s->active[sl], others.n, others.op);
    double t1 = MPI_Wtime();
    s->stats->comm_seconds += t1 - t0;
    if (st == TSR_OK) st = wst;
    for (; !async && posted <= kk + L && posted < s->steps; posted++) {
      others = tsr__summa_inflight(s, (int)(posted % s->slots));
      tsr_status pst = tsr__summa_post(s, posted, (int)(posted % s->slots), &others);
      if (st == TSR_OK) st = pst;
    }
    others = tsr__summa_inflight(s, sl);
    if (st == TSR_OK)
      st = tsr__summa_multiply(s, kk, sl, alpha, kk == 0 ? beta : tsr__dist_real(1.0), path,
                               &others);
    s->stats->compute_seconds += MPI_Wtime() - t1;
    if (opt && opt->progress) { /* on a GPU: the GEMM is queued */
      TSR_API_SUSPEND(); /* the user's function: its Tessera calls are named after themselves */
      opt->progress(kk + 1, s->steps, opt->progress_ctx);
      TSR_API_RESUME();
    }
    /* GPU: the slot of step kk + L is step kk - 1's, whose GEMM ends before step kk's starts */
    for (; async && posted <= kk + L && posted < s->steps; posted++) {
      others = tsr__summa_inflight(s, (int)(posted % s->slots));
      const double t2 = MPI_Wtime();
      tsr_status pst = tsr__summa_post(s, posted, (int)(posted % s->slots), &others);
      s->stats->comm_seconds += MPI_Wtime() - t2;
      if (st == TSR_OK) st = pst;
    }
  }
  return st;
}

/* After the loop: the (modeled) device drains; GPU seconds from the events. */
static tsr_status tsr__summa_finish(tsr__summa *s) {
  const tsr_device dev = s->c->device;
  tsr__summa_slots *p = s->plan;
  tsr_status st = TSR_OK;
  if (s->model_gpu) {
    double t0 = MPI_Wtime();
    tsr__summa_model_wait(s, s->dev_end, NULL); /* the modeled device drains */
    tsr__dist_model_timer_stop(&s->timer);
    s->stats->compute_seconds += MPI_Wtime() - t0;
  }
  if (s->gpu) {
    double t0 = MPI_Wtime();
    tsr_status s2 = tsr__dev_event_record(dev, p->ev_t1, NULL);
    if (s2 == TSR_OK) s2 = tsr_device_synchronize(dev);
    if (s2 == TSR_OK) s2 = tsr__dev_event_elapsed(dev, p->ev_t0, p->ev_t1, &s->stats->gpu_seconds);
    s->stats->compute_seconds += MPI_Wtime() - t0;
    if (st == TSR_OK) st = s2;
  }
  return st;
}

static tsr_status tsr__summa_run(tsr__summa *s, tsr_complex128 alpha, tsr_complex128 beta,
                                 tsr_gemm_path path, const tsr_dist_gemm_options *opt) {
  if (s->steps == 0) return tsr__summa_scale_c(s, alpha, beta, path);
  TSR_CALL(tsr__summa_prepare(s));
  /* From here every rank makes every broadcast; the outcome is agreed at the end. */
  tsr_status st = tsr__summa_reset(s);
  uint64_t c0[TSR__COUNT_N], c1[TSR__COUNT_N];
  tsr__counters_read(c0);
  st = tsr__summa_steps_run(s, alpha, beta, path, opt, st);
  tsr__counters_read(c1);
  s->stats->host_syncs_in_loop = c1[TSR__COUNT_HOST_SYNCS] - c0[TSR__COUNT_HOST_SYNCS];
  tsr_status s2 = tsr__summa_finish(s);
  return st == TSR_OK ? s2 : st;
}

/* Blocks a step aggregates (see tsr__summa_step_of): all of k on a 1 x 1 grid; on a GPU on a
   square grid as many as make options->panel_width (default TSR__SUMMA_GPU_PANEL) columns,
   within MPI's int counts; else 1. */
static int64_t tsr__summa_group(const tsr__summa *s, const tsr_dist_gemm_options *opt) {
  const tsr_grid *g = s->g;
  const int64_t nkb = (s->k + s->kb - 1) / s->kb;
  if (g->size == 1) return nkb > 0 ? nkb : 1;
  int64_t want = opt && opt->panel_width > 0 ? opt->panel_width : s->gpu ? TSR__SUMMA_GPU_PANEL : 0;
  if (g->nprow != g->npcol || want <= s->kb) return 1;
  int64_t group = want / s->kb;
  const int64_t lld = s->c->lld, nloc = s->c->nloc > 0 ? s->c->nloc : 1;
  while (group > 1 && (lld * group * s->kb > INT_MAX || group * s->kb * nloc > INT_MAX))
    group--;
  return group;
}

tsr_status tsr__dist_summa(tsr_complex128 alpha, const tsr_dmatrix *a, const tsr_dmatrix *b,
                           tsr_complex128 beta, tsr_dmatrix *c,
                           const tsr_dist_gemm_options *options, tsr_dist_stats *stats) {
  uint64_t count0[TSR__COUNT_N];
  tsr__counters_read(count0);
  memset(stats, 0, sizeof *stats);
  tsr__summa s;
  memset(&s, 0, sizeof s);
  s.a = a;
  s.b = b;
  s.c = c;
  s.g = c->grid;
  s.k = a->n;
  s.kb = a->nb;
  s.es = tsr__dtype_size(c->dtype);
  s.type = tsr__mpi_type(c->dtype);
  s.gpu = c->device.kind != TSR_DEVICE_CPU;
  s.staging = s.gpu && tsr__dist_gpu_staging(); /* gpu_aware.c */
  s.model_gpu = !s.gpu && tsr__dist_modeled() && tsr__dist_model_gpu();
  s.slots = tsr__summa_lookahead(s.gpu || s.model_gpu) + 1;
  s.bcast = options ? options->bcast : TSR_DIST_BCAST_AUTO;
  s.group = tsr__summa_group(&s, options);
  s.steps = tsr__summa_steps(&s);
  s.stats = stats;
  s.chunk_flops = tsr__summa_chunk_flops(options ? options->path : TSR_GEMM_AUTO);
  stats->panels = s.steps;
  stats->gpu_aware_mpi = s.gpu && !s.staging;
  stats->staging = s.staging;
  tsr_status st = tsr__summa_run(&s, alpha, beta, options ? options->path : TSR_GEMM_AUTO, options);
  st = tsr__dist_agree(c->grid->comm, st);
  stats->algorithm = TSR_DIST_GEMM_SUMMA;
  stats->replicas = 1;
  tsr__dist_count_since(stats, count0);
  return st;
}

/* ------------------------------------------- SUMMA's row of the schedule table --- */
/*
 * SUMMA's row of the dispatcher's table of schedules (dist_gemm.c; 2.5D's is gemm25d.c's):
 * its cost model, SUMMA on the matrices' own P_r x Q grid, and its run, which redistributes
 * transposed operands into their transpose (tsr__dm_transpose; 2.5D transposes while it
 * slices instead) and calls the schedule above, tsr__dist_summa, on untransposed operands.
 */
/* Words a rank receives in the panel broadcasts (op(A)'s panels along the Q ranks of a
   process row, op(B)'s along the P_r of a column) plus two message rounds per panel. Applies
   to every call. */
tsr_status tsr__dist_summa_cost(const tsr__dist_shape *d, double *cost, int *replicas) {
  double w = d->m * d->k / d->pr * (1.0 - 1.0 / d->pc) + d->k * d->n / d->pc * (1.0 - 1.0 / d->pr);
  *cost = w + TSR__DIST_ROUND_WORDS * 2.0 * (double)d->panels;
  *replicas = 1;
  return TSR_OK;
}

tsr_status tsr__dist_summa_run(const tsr__dist_call *x, tsr_dist_stats *stats) {
  const tsr_dmatrix *a = x->a, *b = x->b;
  tsr_dmatrix *c = x->c;
  /* Transposed operands are redistributed into their transpose first. */
  tsr_dmatrix *at = NULL, *bt = NULL;
  tsr_status st = TSR_OK;
  if (x->ta)
    st = tsr__dm_transpose(a, tsr__dist_conj(x->ta, a->dtype), &at, &stats->bytes_sent,
                           &stats->bytes_received);
  if (st == TSR_OK && x->tb)
    st = tsr__dm_transpose(b, tsr__dist_conj(x->tb, b->dtype), &bt, &stats->bytes_sent,
                           &stats->bytes_received);
  stats->comm_seconds += MPI_Wtime() - x->t_start;
  stats->bytes_redistributed = stats->bytes_received;
  /* The call was agreed on; only a transpose can have failed since (one collective less a
     call). */
  if (x->ta || x->tb) st = tsr__dist_agree(c->grid->comm, st);
  if (st == TSR_OK) {
    tsr_dist_stats ss;
    st = tsr__dist_summa(x->alpha, at ? at : a, bt ? bt : b, x->beta, c, x->options, &ss);
    tsr__dist_stats_add_summa(stats, &ss);
  }
  tsr_dmatrix_free(at);
  tsr_dmatrix_free(bt);
  return st;
}
