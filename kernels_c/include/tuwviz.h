/*
 * tuwviz.h - public header of the tuwviz collective kernels.
 *
 * Every kernel has the MPI-standard signature of the collective it implements, so it is a
 * drop-in replacement for the library's function.  Kernels do ALL their communication
 * through the TUW_ point-to-point wrappers below; with tracing on, each wrapper records one
 * event per message (rank, peer, direction, bytes, tag, start and end time), which tests
 * compare with the Python model's schedule (tuwviz/model).
 *
 * Adding an algorithm: one C file (kernels_c/<collective>/<collective>_<algo>.c), one line
 * in kernels_c/common/registry.c, one model schedule in tuwviz/model/.  Algorithm knobs
 * that the MPI signature has no room for (block size, ring order) are the process-global
 * tuning parameters below.
 */
#ifndef TUWVIZ_H
#define TUWVIZ_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- collectives (same order as tuwviz/collectives.py) -------------------------------- */
typedef enum {
    TUW_GATHER = 0,
    TUW_GATHERV,
    TUW_SCATTER,
    TUW_SCATTERV,
    TUW_ALLGATHER,
    TUW_ALLGATHERV,
    TUW_ALLREDUCE,
    TUW_REDUCE,
    TUW_REDUCE_SCATTER_BLOCK,
    TUW_NUM_COLLECTIVES
} tuw_collective;

const char *tuw_collective_name(int coll);

/* MPI-standard signatures, one typedef per collective. */
typedef int (*tuw_gather_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                             int, MPI_Comm);
typedef int (*tuw_gatherv_fn)(const void *, int, MPI_Datatype, void *, const int[],
                              const int[], MPI_Datatype, int, MPI_Comm);
typedef int (*tuw_scatter_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                              int, MPI_Comm);
typedef int (*tuw_scatterv_fn)(const void *, const int[], const int[], MPI_Datatype, void *,
                               int, MPI_Datatype, int, MPI_Comm);
typedef int (*tuw_allgather_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                                MPI_Comm);
typedef int (*tuw_allgatherv_fn)(const void *, int, MPI_Datatype, void *, const int[],
                                 const int[], MPI_Datatype, MPI_Comm);
typedef int (*tuw_allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*tuw_reduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
typedef int (*tuw_reduce_scatter_block_fn)(const void *, void *, int, MPI_Datatype, MPI_Op,
                                           MPI_Comm);

/* ---- algorithm registry (kernels_c/common/registry.c) --------------------------------- */
enum {
    TUW_NEEDS_COMMUTATIVE = 1 << 0, /* the algorithm reorders operands of the reduction   */
    TUW_IS_LIBRARY = 1 << 1         /* the MPI library's own collective ("native")        */
};

typedef struct {
    const char *name;        /* short, unique within its collective ("linear")          */
    int collective;          /* a tuw_collective                                         */
    void (*fn)(void);        /* cast to the collective's tuw_*_fn type before calling    */
    const char *description; /* one line, shown by `tuwviz list` and in notebooks          */
    int flags;               /* TUW_NEEDS_COMMUTATIVE, TUW_IS_LIBRARY                      */
} tuw_algorithm;

extern const tuw_algorithm tuw_algorithms[];
extern const int tuw_num_algorithms;

int tuw_algorithm_count(void);
const tuw_algorithm *tuw_algorithm_get(int index);

/* ---- uniform invocation (kernels_c/common/invoke.c) ------------------------------------ */
/* All arguments any collective needs; unused ones are ignored.  Datatypes and operators
 * are passed as small codes (tuw_datatype / tuw_op) so callers need no MPI handles. */
typedef struct {
    const void *sendbuf;
    int sendcount;
    const int *sendcounts; /* scatterv */
    const int *sdispls;    /* scatterv */
    void *recvbuf;
    int recvcount;
    const int *recvcounts; /* gatherv, allgatherv */
    const int *rdispls;    /* gatherv, allgatherv */
    int datatype;          /* 0 byte, 1 int, 2 double: same order as tuwviz.problems.DATATYPES */
    int op;                /* 0 sum, 1 max, 2 min: same order as tuwviz.problems.OPS           */
    int root;
} tuw_args;

MPI_Datatype tuw_datatype(int code);
MPI_Op tuw_op(int code);

/* Call algorithm `index` of the registry with the arguments in `a`; returns its MPI code. */
int tuw_invoke(int index, const tuw_args *a, MPI_Comm comm);

/* ---- timing harness (kernels_c/common/harness.c) --------------------------------------- */
enum { TUW_OK = 0, TUW_TIME_LIMIT = -1 };

/* Run `warmup` untimed calls, then up to `reps` timed repetitions, each preceded by
 * MPI_Barrier; times[k] is this rank's local time of repetition k in seconds.  If
 * time_limit > 0 and the measurement (warm-up included) has run longer than time_limit
 * seconds on rank 0, the loop stops after the current repetition on all ranks (ReproMPI's
 * per-measurement time limit).  *done is the number of repetitions completed.  Returns
 * MPI_SUCCESS, TUW_TIME_LIMIT, or the kernel's MPI error code. */
int tuw_time(int index, const tuw_args *a, MPI_Comm comm, int warmup, int reps,
             double time_limit, double *times, int *done);

/* ---- point-to-point wrappers with tracing (kernels_c/common/p2p.c) --------------------- */
int TUW_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int TUW_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status);
int TUW_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status);
int TUW_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req);
int TUW_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req);
int TUW_Wait(MPI_Request *req, MPI_Status *status);
/* MPI_Probe; records nothing (it transfers nothing): a kernel that must learn a message's
 * size first probes, then receives it with a recorded TUW_Recv. */
int TUW_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int TUW_Waitall(int n, MPI_Request *reqs, MPI_Status *statuses);

/* Copy a block between two local buffers (types may differ, as in MPI_Sendrecv).  Not a
 * message, so not traced: the model has no message for a process's own block either. */
int tuw_local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                   MPI_Datatype rtype);

/* ---- tuning parameters (kernels_c/common/params.c) -------------------------------------- */
/* Knobs of algorithms whose MPI signature has no place for them.  Process-global: set the
 * same values on every rank before calling a kernel (tuwviz/params.py does); the kernels
 * read them at each call.  tuw_reset_params restores all defaults. */
enum { TUW_RING_RANK = 0, TUW_RING_SMP = 1, TUW_RING_SPREAD = 2 };
#define TUW_DEFAULT_ALPHA 1e-6 /* seconds per message, for Eq. (2) */
#define TUW_DEFAULT_BETA 1e-9  /* seconds per byte, for Eq. (2) */

/* Pipelined ring's block size B in bytes; 0 (default) = Eq. (2) estimate.  Negative
 * values are stored as 0. */
void tuw_set_block_bytes(long long bytes);
long long tuw_get_block_bytes(void);
/* alpha, beta of the linear cost model; used only by the Eq. (2) estimate of B. */
void tuw_set_cost_model(double alpha, double beta);
void tuw_get_cost_model(double *alpha, double *beta);
/* Ring order of the ring Allgatherv kernels: TUW_RING_RANK (default), TUW_RING_SMP,
 * TUW_RING_SPREAD (see kernels_c/include/ring_order.h).  An unknown value makes those
 * kernels return MPI_ERR_ARG. */
void tuw_set_ring_order(int order);
int tuw_get_ring_order(void);
/* Node of each rank for TUW_RING_SMP (copied).  n = 0 clears it; SMP then asks the
 * communicator which ranks share memory.  Returns MPI_SUCCESS, MPI_ERR_NO_MEM (the old map
 * is kept) or MPI_ERR_ARG (n < 0, or n > 0 and node_of_rank NULL). */
int tuw_set_node_map(int n, const int node_of_rank[]);
/* The map set by tuw_set_node_map (NULL if none); returns its length n. */
int tuw_get_node_map(const int **node_of_rank);
void tuw_reset_params(void); /* all defaults, node map cleared */

/* ---- trace (kernels_c/common/p2p.c) ----------------------------------------------------- */
enum { TUW_DIR_SEND = 0, TUW_DIR_RECV = 1 };

typedef struct {
    int rank;      /* rank of the recording process in the kernel's communicator */
    int peer;      /* rank of the partner in the same communicator                */
    int dir;       /* TUW_DIR_SEND or TUW_DIR_RECV                                */
    int tag;       /* MPI tag; kernels use it for the round number               */
    long long bytes; /* bytes sent, or bytes actually received                  */
    double t_start;  /* MPI_Wtime when the operation was posted                  */
    double t_end;    /* MPI_Wtime when it completed                              */
} tuw_event;

void tuw_trace_start(void);   /* clear and start recording */
void tuw_trace_stop(void);
int tuw_trace_count(void);
int tuw_trace_copy(tuw_event *out, int n); /* copy up to n events; returns how many */

#ifdef __cplusplus
}
#endif
#endif /* TUWVIZ_H */
