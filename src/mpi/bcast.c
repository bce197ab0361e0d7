/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tessera's own non-blocking broadcast on point-to-point messages, pipelined in segments along
 * a ring or a binary tree, progressed by the caller (interface and semantics:
 * src/mpi/mpi_internal.h). The long-message broadcasts of HPL (A. Petitet, R. C. Whaley,
 * J. Dongarra, A. Cleary, "HPL", netlib 2000: the "increasing ring" and its modified forms) and
 * the ring/tree topologies of ScaLAPACK's BLACS broadcasts are the model: a panel of N bytes
 * cut into segments of S bytes reaches the last of s ranks of a ring after (s - 2 + N / S)
 * segment times instead of the (s - 1) N / beta that a flat tree costs its root.
 *
 * Cost model (alpha the per-message latency, beta the link bandwidth, N the bytes, S the segment
 * size, s the ranks):
 *   ring:  N / beta + (s - 2) (alpha + S / beta): every rank sends and receives N once, the
 *          last segment leaves the root after N / beta and needs s - 2 more hops;
 *   tree:  about 2 N / beta + log2(s) (alpha + S / beta): an inner rank sends every segment to
 *          its two children through its one link, so the panel moves at half speed, but the
 *          pipeline fills in log2(s) steps.
 * The ring wins when N / beta > (s - 2 - log2 s)(alpha + S / beta), i.e.
 *   N >= (s - 2 - log2 s) (S + alpha beta),
 * AUTO's rule between the pipelined forms. Below 64 KiB a pipeline gains nothing, and with
 * s <= 2 there is nothing to pipeline: MPI_Ibcast then for host buffers, the tree (one message
 * per child) for device buffers, which Open MPI's GPU support does not cover in collectives.
 * Host buffers also take MPI_Ibcast below TSR_BCAST_MPI_BELOW bytes (default 1 MiB): real
 * mpirun on this 2-core machine, 4 ranks, lost 3-4x with the ring at 64 and 256 KiB against
 * Open MPI's binomial MPI_Ibcast and was within the noise from 1 MiB (docs/scaling.md); a
 * fabric's alpha beta does not see the per-segment context switches and copies that cost
 * there. An oversubscribed communicator (a node holding more of its ranks than CPUs,
 * tsr__bcast_oversubscribed in binding.c, agreed once per communicator) never takes the ring:
 * it advances only while all its ranks run, and with 4 ranks on the 2 cores here it lost up
 * to 2x from 1 MiB on (0.44 against 0.24 ms at 1 MiB) while the tree, log2(s) deep, stayed
 * near MPI_Ibcast (docs/scaling.md). The segment size minimizing the ring's
 * time is S* = sqrt(N alpha beta / (s - 2)), clamped to [16 KiB, 1 MiB] in multiples of 4 KiB
 * (larger segments lose in SimGrid's model, whose single flows are window-limited: 32 MiB to 4
 * ranks took 4.4 ms in 4 MiB segments, 2.4 ms in 1 MiB, 2.1 ms in 256 KiB).
 * alpha beta is 32 KiB (1.3 us at 25 GB/s, an InfiniBand/Slingshot-class fabric; this
 * machine's shared memory measures ~5-25 KiB), or TSR_BCAST_ALPHA_BETA bytes: SimGrid's SMPI
 * model of the study's fat tree charges large messages ~11.6x the route latency (its default
 * latency factors), ~1.2 MB, and its sweep (docs/scaling.md) is where the rule was checked.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

#define BCAST_PIPE_MIN (64 * 1024) /* AUTO: no pipeline under this many bytes */
#define BCAST_ALPHA_BETA 32768.0   /* default latency x bandwidth product (bytes) */
#define BCAST_SEG_MIN (16 * 1024)
#define BCAST_SEG_MAX (1024 * 1024)
#define BCAST_TAG_MAX 32767

static double tsr__log2i(int s) {
  return log2((double)(s > 1 ? s : 1));
}

/* Sends in flight per child (TSR_BCAST_SEND_WINDOW, 1 to TSR__BCAST_WINDOW; default 2: on
   SimGrid's ring fewer sends in flight moved more, docs/scaling.md); receives are posted
   TSR__BCAST_WINDOW ahead. */
static int tsr__bcast_send_window(void) {
  return 1 + tsr__env_choice(TSR__ENV_BCAST_SEND_WINDOW); /* "1|...|8", default 2 */
}

/* alpha beta in bytes: TSR_BCAST_ALPHA_BETA when a positive number, else the default. */
static double tsr__alpha_beta(void) {
  return tsr__env_number(TSR__ENV_BCAST_ALPHA_BETA); /* default BCAST_ALPHA_BETA */
}

int64_t tsr__bcast_segment_bytes(int64_t bytes, int size, bool oversubscribed) {
  /* One hop (or none) forwards nothing: one message, as MPI_Ibcast sends. */
  if (size <= 2) return bytes > BCAST_SEG_MIN ? (bytes + 4095) / 4096 * 4096 : BCAST_SEG_MIN;
  /* Oversubscribed ranks: a segment moves one hop only when its forwarder is scheduled, a
     cost no alpha beta of a fabric describes; the largest segment (the model's choice for a
     large alpha beta). 4 ranks on 2 cores here, tree at 1 / 4 MiB: 0.39 / 1.47 ms in the
     default 128 / 256 KiB segments, 0.25 / 1.11 ms in 1 MiB ones, MPI_Ibcast 0.21-0.23 /
     0.89-1.11 ms (bench_bcast --segment, docs/scaling.md). */
  if (oversubscribed) return BCAST_SEG_MAX;
  double stages = size > 3 ? (double)(size - 2) : 1.0;
  double s = sqrt((double)(bytes > 0 ? bytes : 1) * tsr__alpha_beta() / stages);
  if (s < BCAST_SEG_MIN) s = BCAST_SEG_MIN;
  if (s > BCAST_SEG_MAX) s = BCAST_SEG_MAX;
  return (int64_t)s / 4096 * 4096;
}

tsr_dist_bcast tsr__bcast_choose(int64_t bytes, int size, int64_t segment_bytes, bool device,
                                 bool oversubscribed) {
  if (!device && (double)bytes < tsr__env_number(TSR__ENV_BCAST_MPI_BELOW))
    return TSR_DIST_BCAST_MPI;
  if (size <= 2 || bytes < BCAST_PIPE_MIN) return device ? TSR_DIST_BCAST_TREE : TSR_DIST_BCAST_MPI;
  /* Oversubscribed ranks: a ring advances only while all of its ranks run, the tree's
     depth is log2(s) (real mpirun, 4 ranks on 2 cores: docs/scaling.md). */
  if (oversubscribed) return TSR_DIST_BCAST_TREE;
  if (segment_bytes <= 0) segment_bytes = tsr__bcast_segment_bytes(bytes, size, false);
  double stages = (double)size - 2.0 - tsr__log2i(size);
  return (double)bytes >= stages * ((double)segment_bytes + tsr__alpha_beta())
             ? TSR_DIST_BCAST_RING
             : TSR_DIST_BCAST_TREE;
}

/* Elements of segment i. */
static int tsr__seg_count(const tsr__bcast *op, int64_t i) {
  int64_t left = op->count - i * op->seg;
  return (int)(left < op->seg ? left : op->seg);
}

static char *tsr__seg_ptr(const tsr__bcast *op, int64_t i) {
  return op->buf + (size_t)(i * op->seg) * op->es;
}

static tsr_status tsr__fail(tsr__bcast *op, int rc, const char *what) {
  tsr_status st = tsr__mpi_error(__func__, TSR_ERR_MPI, rc, what);
  if (op->status == TSR_OK) op->status = st;
  return st;
}

tsr_status tsr__bcast_start(tsr__bcast *op, void *buf, int64_t count, MPI_Datatype type, int root,
                            MPI_Comm comm, tsr_dist_bcast algo, int64_t segment_bytes, int tag) {
  if (!op) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "broadcast state is NULL");
  memset(op, 0, sizeof *op);
  op->done = 1; /* until started: a failed start leaves a complete (failed) op */
  op->mreq = MPI_REQUEST_NULL;
  for (int i = 0; i < TSR__BCAST_WINDOW; i++)
    op->rreq[i] = op->sreq[0][i] = op->sreq[1][i] = MPI_REQUEST_NULL;
  tsr_status st = TSR_OK;
  if (count < 0 || segment_bytes < 0 || tag < 0 || tag > BCAST_TAG_MAX)
    st = tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                        "broadcast of count %lld, segment %lld bytes, tag %d (need count >= 0, "
                        "segment >= 0, 0 <= tag <= %d)",
                        (long long)count, (long long)segment_bytes, tag, BCAST_TAG_MAX);
  else if (!buf && count > 0)
    st = tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "broadcast buffer is NULL");
  else if (algo != TSR_DIST_BCAST_AUTO && algo != TSR_DIST_BCAST_MPI &&
           algo != TSR_DIST_BCAST_RING && algo != TSR_DIST_BCAST_TREE)
    st =
        tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "bad broadcast algorithm %d", (int)algo);
  if (st != TSR_OK) return op->status = st;
  int rc = MPI_Comm_size(comm, &op->size);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(comm, &op->rank);
  if (rc != MPI_SUCCESS) return tsr__fail(op, rc, "MPI_Comm_size/rank (broadcast)");
  int tsize = 0;
  rc = MPI_Type_size(type, &tsize);
  if (rc != MPI_SUCCESS) return tsr__fail(op, rc, "MPI_Type_size (broadcast)");
  if (tsize <= 0)
    return op->status = tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                                       "broadcast datatype of %d bytes", tsize);
  if (root < 0 || root >= op->size)
    return op->status = tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                                       "broadcast root %d outside a communicator of %d ranks", root,
                                       op->size);
  op->buf = buf;
  op->count = count;
  op->type = type;
  op->comm = comm;
  op->es = (size_t)tsize;
  op->root = root;
  op->tag = tag;
  op->parent = -1;
  int64_t bytes = count * (int64_t)op->es;
  /* AUTO and the default segment depend on whether the ranks are oversubscribed: collective the
     first time on a communicator (every rank starts its broadcasts on it in the same order), cached
     after, and at grid creation for the grid's. */
  bool oversubscribed = false;
  if (algo == TSR_DIST_BCAST_AUTO || (algo != TSR_DIST_BCAST_MPI && segment_bytes == 0)) {
    st = tsr__bcast_oversubscribed(comm, &oversubscribed);
    if (st != TSR_OK) return op->status = st;
  }
  if (segment_bytes == 0) segment_bytes = tsr__bcast_segment_bytes(bytes, op->size, oversubscribed);
  op->seg = segment_bytes / (int64_t)op->es;
  if (op->seg < 1) op->seg = 1;
  if (op->seg > INT_MAX) op->seg = INT_MAX;
  if (algo == TSR_DIST_BCAST_AUTO)
    algo = tsr__bcast_choose(bytes, op->size, segment_bytes, false, oversubscribed);
  op->algo = algo;
  /* Which broadcast ran, for tsr_dist_stats (bcast_mpi, bcast_ring, bcast_tree). */
  tsr__count(algo == TSR_DIST_BCAST_MPI    ? TSR__COUNT_BCAST_MPI
             : algo == TSR_DIST_BCAST_RING ? TSR__COUNT_BCAST_RING
                                           : TSR__COUNT_BCAST_TREE,
             1);
  op->done = 0;
  op->wait_only =
      tsr__dist_modeled() && tsr__dist_model_gpu() && tsr__dist_model_poll_seconds() == 0;
  if (op->algo == TSR_DIST_BCAST_MPI) {
    if (count > INT_MAX) {
      op->done = 1;
      return op->status =
                 tsr__set_error(TSR_ERR_OVERFLOW, __func__,
                                "MPI_Ibcast of %lld elements exceeds INT_MAX", (long long)count);
    }
    rc = MPI_Ibcast(buf, (int)count, type, root, comm, &op->mreq);
    if (rc != MPI_SUCCESS) {
      op->mreq = MPI_REQUEST_NULL;
      op->done = 1;
      return tsr__fail(op, rc, "MPI_Ibcast");
    }
    if (op->rank == root)
      op->bytes_sent = (uint64_t)bytes * (uint64_t)(op->size - 1);
    else
      op->bytes_received = (uint64_t)bytes;
    return TSR_OK;
  }
  op->nseg = count == 0 ? 0 : (count + op->seg - 1) / op->seg;
  int s = op->size, r = (op->rank - root + s) % s;
  if (op->algo == TSR_DIST_BCAST_RING) {
    if (r > 0) op->parent = (r - 1 + root) % s;
    if (r + 1 < s) op->child[op->nchild++] = (r + 1 + root) % s;
  } else {
    if (r > 0) op->parent = ((r - 1) / 2 + root) % s;
    for (int c = 2 * r + 1; c <= 2 * r + 2 && c < s; c++)
      op->child[op->nchild++] = (c + root) % s;
  }
  if (op->nseg == 0 || s == 1) op->nchild = 0, op->parent = -1, op->nseg = 0;
  /* The root has every segment. */
  if (op->parent < 0) op->recv_posted = op->recv_done = op->nseg;
  int done = 0;
  return tsr__bcast_test(op, &done);
}

/* Cancels and completes the receives, frees the sends (after an error). */
void tsr__bcast_abandon(tsr__bcast *op) {
  if (!op || op->done) return;
  if (op->mreq != MPI_REQUEST_NULL) {
    /* A collective cannot be cancelled: released, MPI completes it in the background. */
    MPI_Request_free(&op->mreq);
  }
  for (int i = 0; i < TSR__BCAST_WINDOW; i++) {
    if (op->rreq[i] != MPI_REQUEST_NULL) {
      MPI_Cancel(&op->rreq[i]);
      MPI_Wait(&op->rreq[i], MPI_STATUS_IGNORE); /* returns for a cancelled receive */
    }
    for (int c = 0; c < 2; c++)
      if (op->sreq[c][i] != MPI_REQUEST_NULL) MPI_Request_free(&op->sreq[c][i]);
  }
  op->done = 1;
}

/* tsr__bcast_test of an MPI_Ibcast: one MPI_Test. */
static void tsr__test_mpi(tsr__bcast *op) {
  if (op->mreq == MPI_REQUEST_NULL) { /* completed by a wait */
    op->done = 1;
    return;
  }
#ifdef TSR_SMPI_MODEL
  /* SimGrid's SMPI (3.32) progresses a non-blocking collective in MPI_Test only by injecting
     simulated time (smpi/test, 100 us a call), and never with smpi/test:0, which the study
     sets for the point-to-point pipelines: in the modeled build only the waits (MPI_Waitany)
     complete it. */
  return;
#endif
  int flag = 0;
  int rc = MPI_Test(&op->mreq, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    tsr__fail(op, rc, "MPI_Ibcast (test)");
    tsr__bcast_abandon(op);
  } else if (flag) {
    op->done = 1;
  }
}

/* Whether a segment's request completed: a null request did (tsr__wait_any completed it); in
   a wait_only op a pending one is not asked (only waits complete it), else MPI_Test. */
static int tsr__bcast_req_test(const tsr__bcast *op, MPI_Request *q, int *flag) {
  *flag = *q == MPI_REQUEST_NULL;
  if (*flag || op->wait_only) return MPI_SUCCESS;
  return MPI_Test(q, flag, MPI_STATUS_IGNORE);
}

/* The receives of a ring/tree: post up to the window, complete them in order. Returns false
   after an error that abandoned the op. */
static bool tsr__test_receives(tsr__bcast *op, bool *moved) {
  int rc, flag = 0;
  while (op->recv_posted < op->nseg && op->recv_posted - op->recv_done < TSR__BCAST_WINDOW) {
    int64_t i = op->recv_posted;
    MPI_Request *q = &op->rreq[i % TSR__BCAST_WINDOW];
    rc = MPI_Irecv(tsr__seg_ptr(op, i), tsr__seg_count(op, i), op->type, op->parent, op->tag,
                   op->comm, q);
    if (rc != MPI_SUCCESS) {
      *q = MPI_REQUEST_NULL;
      tsr__fail(op, rc, "MPI_Irecv (broadcast segment)");
      tsr__bcast_abandon(op);
      return false;
    }
    op->recv_posted++;
  }
  while (op->recv_done < op->recv_posted) {
    int64_t i = op->recv_done;
    MPI_Request *q = &op->rreq[i % TSR__BCAST_WINDOW];
    /* A request completed by tsr__wait_any is null: done (SMPI 3.32's MPI_Test answers flag 0
       for a null request, so it is not asked). */
    rc = tsr__bcast_req_test(op, q, &flag);
    if (rc != MPI_SUCCESS) {
      tsr__fail(op, rc, "MPI_Irecv (broadcast segment)");
      if (*q != MPI_REQUEST_NULL) {
        /* The request is still there: it cannot be trusted to complete; stop here. */
        tsr__bcast_abandon(op);
        return false;
      }
      /* It completed with an error (e.g. a truncated segment): recorded, and the segment
         is forwarded anyway so that the ranks below complete (with undefined data) instead
         of waiting forever; the caller agrees on the outcome. */
      flag = 1;
    }
    if (!flag) break;
    op->bytes_received += (uint64_t)tsr__seg_count(op, i) * op->es;
    op->recv_done++;
    *moved = true;
  }
  return true;
}

/* The sends to child c: complete finished ones, forward every segment held, up to the window.
   Returns false after an error that abandoned the op. */
static bool tsr__test_sends(tsr__bcast *op, int c, bool *moved) {
  int rc, flag = 0;
  while (op->send_done[c] < op->sent[c]) {
    MPI_Request *q = &op->sreq[c][op->send_done[c] % TSR__BCAST_WINDOW];
    rc = tsr__bcast_req_test(op, q, &flag);
    if (rc != MPI_SUCCESS) {
      tsr__fail(op, rc, "MPI_Isend (broadcast segment)");
      tsr__bcast_abandon(op);
      return false;
    }
    if (!flag) break;
    op->send_done[c]++;
    *moved = true;
  }
  while (op->sent[c] < op->recv_done && op->sent[c] - op->send_done[c] < tsr__bcast_send_window()) {
    int64_t i = op->sent[c];
    MPI_Request *q = &op->sreq[c][i % TSR__BCAST_WINDOW];
    rc = MPI_Isend(tsr__seg_ptr(op, i), tsr__seg_count(op, i), op->type, op->child[c], op->tag,
                   op->comm, q);
    if (rc != MPI_SUCCESS) {
      *q = MPI_REQUEST_NULL;
      tsr__fail(op, rc, "MPI_Isend (broadcast segment)");
      tsr__bcast_abandon(op);
      return false;
    }
    op->bytes_sent += (uint64_t)tsr__seg_count(op, i) * op->es;
    op->sent[c]++;
    *moved = true;
  }
  return true;
}

/* tsr__bcast_test of a ring/tree: receives and sends until nothing moves or all is done. */
static void tsr__test_segments(tsr__bcast *op) {
  for (;;) {
    bool moved = false;
    if (!tsr__test_receives(op, &moved)) return;
    for (int c = 0; c < op->nchild; c++)
      if (!tsr__test_sends(op, c, &moved)) return;
    bool all = op->recv_done == op->nseg;
    for (int c = 0; c < op->nchild; c++)
      all = all && op->send_done[c] == op->nseg;
    if (all) {
      op->done = 1;
      return;
    }
    if (!moved) return;
  }
}

tsr_status tsr__bcast_test(tsr__bcast *op, int *done) {
  if (done) *done = 0;
  if (!op) return TSR_OK;
  if (!op->done) {
    if (op->algo == TSR_DIST_BCAST_MPI)
      tsr__test_mpi(op);
    else
      tsr__test_segments(op);
  }
  if (done) *done = op->done;
  return op->status;
}

tsr_status tsr__bcast_testall(int n, tsr__bcast *const *ops, int *done) {
  tsr_status first = TSR_OK;
  int all = 1;
  for (int i = 0; i < n; i++) {
    if (!ops[i]) continue;
    int d = 0;
    tsr_status st = tsr__bcast_test(ops[i], &d);
    if (st != TSR_OK && first == TSR_OK) first = st;
    all = all && d;
  }
  if (done) *done = all;
  return first;
}

/* Blocks in MPI_Waitany until one of the pending requests of the ops completes (a segment
   arrived or left): no spinning (Open MPI progresses inside Waitany; under SimGrid's SMPI a
   spinning MPI_Test loop would charge its injected test time instead). An error completes the
   request and is recorded on its op. n <= BCAST_WAIT_OPS. `extra` (may be NULL): one more
   request to wait on, the caller's; true when it completed (then null). */
#define BCAST_WAIT_OPS 16
static bool tsr__wait_any(int n, tsr__bcast *const *ops, MPI_Request *extra) {
  MPI_Request req[BCAST_WAIT_OPS * (3 * TSR__BCAST_WINDOW + 1) + 1];
  MPI_Request *where[BCAST_WAIT_OPS * (3 * TSR__BCAST_WINDOW + 1) + 1];
  tsr__bcast *owner[BCAST_WAIT_OPS * (3 * TSR__BCAST_WINDOW + 1) + 1];
  int cnt = 0;
  if (n > BCAST_WAIT_OPS) n = BCAST_WAIT_OPS;
  for (int i = 0; i < n; i++) {
    tsr__bcast *op = ops[i];
    if (!op || op->done) continue;
    MPI_Request *all[3 * TSR__BCAST_WINDOW + 1];
    int na = 0;
    /* Not an MPI_Ibcast beside the caller's request (the modeled host's alarm): it completes
       in tsr__bcast_wait_while, as with the polled host, which never completed one while it
       waited for the device. */
    if (!extra) all[na++] = &op->mreq;
    for (int w = 0; w < TSR__BCAST_WINDOW; w++) {
      all[na++] = &op->rreq[w];
      all[na++] = &op->sreq[0][w];
      all[na++] = &op->sreq[1][w];
    }
    for (int j = 0; j < na; j++)
      if (*all[j] != MPI_REQUEST_NULL) {
        req[cnt] = *all[j];
        where[cnt] = all[j];
        owner[cnt++] = op;
      }
  }
  const int nops = cnt;
  if (extra && *extra != MPI_REQUEST_NULL) req[cnt++] = *extra;
  if (cnt == 0) return false;
  int idx = MPI_UNDEFINED;
  int rc = MPI_Waitany(cnt, req, &idx, MPI_STATUS_IGNORE);
  if (idx == nops && idx < cnt) {
    *extra = MPI_REQUEST_NULL;
    return true;
  }
  if (idx >= 0 && idx < nops) {
    /* Completed (MPI_Waitany freed it): the op's own test sees a null request, i.e. done. */
    *where[idx] = MPI_REQUEST_NULL;
    if (rc != MPI_SUCCESS) {
      const tsr__bcast *op = owner[idx];
      const MPI_Request *q = where[idx];
      tsr__fail(owner[idx], rc,
                q == &op->mreq ? "MPI_Ibcast (wait)"
                : q >= op->rreq && q < op->rreq + TSR__BCAST_WINDOW
                    ? "MPI_Irecv (broadcast segment)"
                    : "MPI_Isend (broadcast segment)");
    }
  } else if (rc != MPI_SUCCESS) {
    for (int i = 0; i < n; i++)
      if (ops[i] && !ops[i]->done) {
        tsr__fail(ops[i], rc, "MPI_Waitany (broadcast)");
        tsr__bcast_abandon(ops[i]);
      }
  }
  return false;
}

bool tsr__bcast_wait_any(int n, tsr__bcast *const *ops, MPI_Request *extra) {
  return tsr__wait_any(n, ops, extra);
}

tsr_status tsr__bcast_wait_while(int n, tsr__bcast *const *ops, int n_also,
                                 tsr__bcast *const *also) {
  tsr__bcast *all[BCAST_WAIT_OPS];
  int na = 0;
  bool complete = true; /* all distinct ops fit in `all` */
  for (int i = 0; i < n + n_also; i++) {
    tsr__bcast *op = i < n ? ops[i] : also[i - n];
    bool seen = !op;
    for (int j = 0; j < na && !seen; j++)
      seen = all[j] == op; /* a request must appear once in MPI_Waitany's array */
    if (seen) continue;
    if (na == BCAST_WAIT_OPS) {
      complete = false;
      break;
    }
    all[na++] = op;
  }
  for (;;) {
    int done = 0, ignored = 0;
    if (n_also > 0) tsr__bcast_testall(n_also, also, &ignored); /* their errors stay theirs */
    tsr_status st = tsr__bcast_testall(n, ops, &done);
    if (done) return st;
    /* More ops than tsr__wait_any takes: spin on the tests (wait_only ops complete only in
       waits: wait on the first ones). */
    if (complete || (na > 0 && all[0] && all[0]->wait_only)) tsr__wait_any(na, all, NULL);
  }
}

tsr_status tsr__bcast_waitall(int n, tsr__bcast *const *ops) {
  return tsr__bcast_wait_while(n, ops, 0, NULL);
}

tsr_status tsr__bcast_wait(tsr__bcast *op) {
  tsr__bcast *const ops[1] = {op};
  return tsr__bcast_waitall(1, ops);
}
