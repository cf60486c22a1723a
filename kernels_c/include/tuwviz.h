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

#include <limits.h>
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
    TUW_REDUCE_SCATTER,
    TUW_NUM_COLLECTIVES
} tuw_collective;

const char *tuw_collective_name(int coll);

/* MPI-standard signatures, one parameter list per collective: TUW_<COLL>_PARAMS.  They give
 * the function-pointer types tuw_invoke casts to, and the prototypes the registry generated
 * from kernels_c/algorithms.toml declares (TUW_PROTO(coll, fn)), so a kernel file needs no
 * header of its own. */
#define TUW_GATHER_PARAMS (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, \
                           MPI_Comm)
#define TUW_GATHERV_PARAMS (const void *, int, MPI_Datatype, void *, const int[], \
                            const int[], MPI_Datatype, int, MPI_Comm)
#define TUW_SCATTER_PARAMS (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, \
                            MPI_Comm)
#define TUW_SCATTERV_PARAMS (const void *, const int[], const int[], MPI_Datatype, void *, \
                             int, MPI_Datatype, int, MPI_Comm)
#define TUW_ALLGATHER_PARAMS (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, \
                              MPI_Comm)
#define TUW_ALLGATHERV_PARAMS (const void *, int, MPI_Datatype, void *, const int[], \
                               const int[], MPI_Datatype, MPI_Comm)
#define TUW_ALLREDUCE_PARAMS (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm)
#define TUW_REDUCE_PARAMS (const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm)
#define TUW_REDUCE_SCATTER_BLOCK_PARAMS (const void *, void *, int, MPI_Datatype, MPI_Op, \
                                         MPI_Comm)
#define TUW_REDUCE_SCATTER_PARAMS (const void *, void *, const int[], MPI_Datatype, MPI_Op, \
                                   MPI_Comm)
#define TUW_PROTO(COLL, fn) int fn TUW_##COLL##_PARAMS

typedef int(*tuw_gather_fn) TUW_GATHER_PARAMS;
typedef int(*tuw_gatherv_fn) TUW_GATHERV_PARAMS;
typedef int(*tuw_scatter_fn) TUW_SCATTER_PARAMS;
typedef int(*tuw_scatterv_fn) TUW_SCATTERV_PARAMS;
typedef int(*tuw_allgather_fn) TUW_ALLGATHER_PARAMS;
typedef int(*tuw_allgatherv_fn) TUW_ALLGATHERV_PARAMS;
typedef int(*tuw_allreduce_fn) TUW_ALLREDUCE_PARAMS;
typedef int(*tuw_reduce_fn) TUW_REDUCE_PARAMS;
typedef int(*tuw_reduce_scatter_block_fn) TUW_REDUCE_SCATTER_BLOCK_PARAMS;
typedef int(*tuw_reduce_scatter_fn) TUW_REDUCE_SCATTER_PARAMS;

/* ---- algorithm registry ------------------------------------------------------------------
 * tuw_algorithms[] is generated from kernels_c/algorithms.toml when the library is built
 * (tuwviz/kernels.py); kernels_c/common/registry.c reads it.  Flags follow the row's
 * library and restrictions fields. */
enum {
    TUW_NEEDS_COMMUTATIVE = 1 << 0, /* the algorithm reorders operands of the reduction   */
    TUW_IS_LIBRARY = 1 << 1,        /* the MPI library's own collective ("native")        */
    TUW_NEEDS_POWER_OF_TWO = 1 << 2, /* p must be a power of two                           */
    TUW_IN_PLACE = 1 << 3           /* accepts MPI_IN_PLACE where the standard allows it   */
};

typedef struct {
    const char *name;        /* short, unique within its collective ("linear")          */
    int collective;          /* a tuw_collective                                         */
    void (*fn)(void);        /* cast to the collective's tuw_*_fn type before calling    */
    const char *description; /* one line, shown by `tuwviz list` and in notebooks          */
    int flags;               /* TUW_NEEDS_COMMUTATIVE, TUW_IS_LIBRARY, ...                 */
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
    const int *recvcounts; /* gatherv, allgatherv, reduce_scatter */
    const int *rdispls;    /* gatherv, allgatherv */
    int datatype;          /* a TUW_DT_* code: the order of tuwviz.problems.DATATYPES */
    int op;                /* a TUW_OP_* code: the order of tuwviz.problems.OPS       */
    int root;
} tuw_args;

enum { TUW_DT_BYTE = 0, TUW_DT_INT = 1, TUW_DT_DOUBLE = 2 };
/* user_sum and user_first are user-defined (MPI_Op_create, made on first use): an
 * element-wise sum declared commutative, and a o b = a, not commutative (invoke.c) */
enum { TUW_OP_SUM = 0, TUW_OP_MAX = 1, TUW_OP_MIN = 2, TUW_OP_BOR = 3, TUW_OP_USER_SUM = 4,
       TUW_OP_USER_FIRST = 5 };

MPI_Datatype tuw_datatype(int code);
MPI_Op tuw_op(int code);

/* Call algorithm `index` of the registry with the arguments in `a`, after tuw_check_params
 * (collective); returns its MPI code. */
int tuw_invoke(int index, const tuw_args *a, MPI_Comm comm);
/* The same without tuw_check_params: for loops that checked once (tuw_time). */
int tuw_invoke_unchecked(int index, const tuw_args *a, MPI_Comm comm);

/* ---- timing harness (kernels_c/common/harness.c) --------------------------------------- */
enum { TUW_OK = 0, TUW_TIME_LIMIT = -1 };

/* Run `warmup` untimed calls, then up to `reps` timed repetitions, each preceded by
 * MPI_Barrier; times[k] is this rank's local time of repetition k in seconds.  If
 * time_limit > 0 and the measurement (warm-up included) has run longer than time_limit
 * seconds on rank 0, the loop stops after the current repetition on all ranks (ReproMPI's
 * per-measurement time limit).  *done is the number of repetitions completed.  The tuning
 * parameters are compared once before the loop (tuw_check_params).  Returns
 * MPI_SUCCESS, TUW_TIME_LIMIT, or the kernel's MPI error code. */
int tuw_time(int index, const tuw_args *a, MPI_Comm comm, int warmup, int reps,
             double time_limit, double *times, int *done);

/* MPICH's heavy yield (control variable MPIR_CVAR_ENABLE_HEAVY_YIELD) set to `on` (0 or 1)
 * while this process runs, through the MPI tool interface; on < 0 only reads it.  Returns
 * the value before, or -1 if this MPI has no such variable (then nothing changes). */
int tuw_heavy_yield(int on);

/* ---- calibration loops (kernels_c/common/calibrate.c; tuwviz calibrate) ---------------- */
/* Ranks 0 and 1 bounce `bytes` bytes while the others wait; times[k] is this rank's round
 * trip of repetition k (0 on the others).  Collective. */
int tuw_pingpong(MPI_Comm comm, long long bytes, int warmup, int reps, double *times);
/* Every rank sends `bytes` bytes to rank + 1 and receives from rank - 1 at once
 * (MPI_Sendrecv: one round of a ring algorithm); times[k] as tuw_pingpong's.  Collective. */
int tuw_ring_shift(MPI_Comm comm, long long bytes, int warmup, int reps, double *times);
/* Local: times of memcpy of `bytes` bytes, and of MPI_Reduce_local on `count` elements of
 * a TUW_DT_ datatype with a TUW_OP_ operator. */
int tuw_copy_time(long long bytes, int reps, double *times);
int tuw_reduce_time(int count, int datatype, int op, int reps, double *times);

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
/* Error paths: cancel and complete every non-null request of reqs, so nothing still writes
 * into (or reads from) a buffer the caller frees next.  Records nothing; returns the first
 * error of MPI_Cancel/MPI_Wait. */
int TUW_Abandon(int n, MPI_Request *reqs);

/* Copy a block between two local buffers (types may differ, as in MPI_Sendrecv).  Not a
 * message, so not traced: the model has no message for a process's own block either. */
/* MPI_SUCCESS if `n` elements fit MPI's int count, else MPI_ERR_COUNT.  Subtree sizes are
 * summed as long long; a sum past INT_MAX must fail, not wrap into a wrong message size. */
static inline int tuw_fits_int(long long n)
{
    return n >= 0 && n <= INT_MAX ? MPI_SUCCESS : MPI_ERR_COUNT;
}

int tuw_local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                   MPI_Datatype rtype);

/* MPI_SUCCESS for an intra-communicator.  For an inter-communicator an error code of class
 * MPI_ERR_COMM whose MPI_Error_string says the kernel needs an intra-communicator: every
 * kernel written for one group calls this first, so it fails at once instead of hanging
 * or truncating (rank numbers would name the other group). */
int tuw_require_intracomm(MPI_Comm comm);

/* The start of every rooted kernel: tuw_require_intracomm, then *rank and *p, then
 * MPI_ERR_ROOT for a root outside 0..p-1 (MPI_SUCCESS otherwise). */
int tuw_rooted_begin(MPI_Comm comm, int root, int *rank, int *p);

/* The start of every Allgather kernel: tuw_require_intracomm, then *rank and *p, then
 * MPI_ERR_COUNT for a negative recvcount or (without MPI_IN_PLACE) sendcount. */
int tuw_allgather_begin(MPI_Comm comm, const void *sendbuf, int sendcount, int recvcount,
                        int *rank, int *p);

/* The start of every Allgatherv kernel: tuw_require_intracomm, *rank and *p, MPI_ERR_COUNT
 * for a negative count, *extent of recvtype, then (without MPI_IN_PLACE) the own block
 * copied to recvbuf at rdispls[rank]. */
int tuw_allgatherv_begin(MPI_Comm comm, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype, int *rank, int *p,
                         MPI_Aint *extent);

/* ---- broadcasts (kernels_c/bcast/): algorithms other kernels build on, not table rows -- */
/* Broadcast along the binomial tree (topology.h) from root, whole message per edge, tag =
 * round; through the traced wrappers. */
int tuw_bcast_binomial(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
/* MPICH's broadcast from rank 0, as its default selection picks it: the binomial tree below
 * TUW_BCAST_SHORT_MSG bytes or TUW_BCAST_MIN_PROCS processes, else a binomial scatter of
 * almost equal pieces (tuw_ig_part) and a ring Allgatherv of them (Eq. (2)'s "factor of
 * two off" broadcast). */
#define TUW_BCAST_SHORT_MSG 12288
#define TUW_BCAST_MIN_PROCS 8
int tuw_bcast_library(void *buf, int count, MPI_Datatype type, MPI_Comm comm);

/* ---- intergroup kernels (kernels_c/common/intergroup.c) ------------------------------- */
/* An inter-communicator as one process of it sees it.  The paper's group A is the larger
 * one (p >= q); on a tie the one whose first process has the lower MPI_COMM_WORLD rank. */
typedef struct {
    MPI_Comm inter; /* the inter-communicator: ranks name the other group                */
    MPI_Comm local; /* my group as an intra-communicator (cached on inter, freed with it)  */
    int is_a;       /* 1 in group A                                                        */
    int rank, size; /* my rank in my group, my group's size                                */
    int remote;     /* the other group's size                                              */
} tuw_inter_view;

/* The start of every intergroup kernel: an error code of class MPI_ERR_COMM for an
 * intra-communicator, else the view (collective over both groups the first time). */
int tuw_inter_begin(MPI_Comm comm, tuw_inter_view *v);
/* The start of every intergroup Allgather(v) kernel: tuw_inter_begin, then MPI_ERR_BUFFER
 * for MPI_IN_PLACE (not meaningful on an inter-communicator) and MPI_ERR_COUNT for a
 * negative sendcount. */
int tuw_intergroup_begin(MPI_Comm comm, const void *sendbuf, int sendcount, void *recvbuf,
                         tuw_inter_view *v);
/* Both groups as one intra-communicator, A first (cached): for checks across the groups. */
int tuw_inter_merged(MPI_Comm comm, MPI_Comm *merged);
/* Where the n blocks of the other group travel one after another (*K elements): `*packed`
 * is recvbuf at rdispls[0] when rdispls place them so (*mem = NULL), else a scratch buffer
 * (*mem, to free) copied out with tuw_unpack_blocks at the end.  MPI_ERR_COUNT for a
 * negative count or a total beyond int. */
int tuw_packed_blocks(void *recvbuf, int n, const int recvcounts[], const int rdispls[],
                      MPI_Datatype type, long long *K, char **packed, void **mem);
/* n blocks of counts[i] elements, one after another from `packed`, copied to `buf` at
 * displs[i] (the end of a kernel that assembled scattered rdispls in scratch). */
int tuw_unpack_blocks(const char *packed, int n, const int counts[], const int displs[],
                      MPI_Datatype type, void *buf);
/* The intragroup Allgathervs the intergroup kernels run inside each group (in place). */
TUW_PROTO(ALLGATHERV, TUW_Allgatherv_circulant);
TUW_PROTO(ALLGATHERV, TUW_Allgatherv_ring);
/* The local gather of the root-gathering Allgather. */
TUW_PROTO(GATHER, TUW_Gather_binomial);

/* ---- tree engines (kernels_c/common/tree.c) -------------------------------------------- */
/* The most children a tree of topology.h gives one process (binomial 32, circulant 33). */
#define TUW_TREE_MAX_CHILDREN 33

/* An ordered tree as one process sees it: every subtree is `size` consecutive virtual ranks
 * (rank - root mod p) from its own, its children's subtrees one after another from block
 * first[k] of it, in the order k = 0, 1, ... (increasing round).  Gather appends, scatter
 * cuts, nobody reorders.  Filled from topology.h's binomial or circulant builder. */
typedef struct {
    int parent, round; /* -1 at the root; round = tag of my edge                          */
    int size;          /* processes in my subtree                                          */
    int n;             /* children                                                         */
    int child[TUW_TREE_MAX_CHILDREN], tag[TUW_TREE_MAX_CHILDREN];
    int first[TUW_TREE_MAX_CHILDREN], csize[TUW_TREE_MAX_CHILDREN];
} tuw_tree_view;

typedef void (*tuw_tree_view_fn)(int p, int rank, int root, tuw_tree_view *t);
void tuw_tree_view_binomial(int p, int rank, int root, tuw_tree_view *t);
void tuw_tree_view_circulant(int p, int rank, int root, tuw_tree_view *t);

/* Gatherv along the tree `view` builds: tuw_rooted_begin and the count checks, then the
 * root receives each child's subtree straight into recvbuf at displs; an inner process
 * receives its children's subtrees behind its own block and sends the whole to its
 * parent.  Without `regular` every process whose parent is not the root first sends it
 * its subtree's byte size (one MPI_INT64_T message, same tag); with `regular` (Gather:
 * every block sendcount elements) no sizes are sent. */
int tuw_tree_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     int root, MPI_Comm comm, tuw_tree_view_fn view, int regular);
/* Scatterv along the tree `view` builds, children served last first (largest subtree
 * first): tuw_rooted_begin and the count checks, then the root sends each child its
 * subtree straight from sendbuf at displs; an inner process receives its subtree and cuts
 * it.  Without `regular` a child with a subtree of more than one process first gets the
 * byte sizes of the rest of it (one MPI_INT64_T message, same tag); with `regular`
 * (Scatter: every block recvcount elements) no sizes are sent. */
int tuw_tree_scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, tuw_tree_view_fn view,
                      int regular);
/* Counts and displacements of p blocks of `count` elements, for a regular collective run
 * by a v-engine: *blocks = malloc'ed counts[p] then displs[p] (free it).  MPI_ERR_COUNT if
 * a displacement would not fit an int, MPI_ERR_NO_MEM. */
int tuw_regular_blocks(int p, int count, int **blocks);

/* ---- reductions (kernels_c/common/reduction.c) ---------------------------------------- */
/* The start of every reduction kernel: tuw_require_intracomm, then *rank and *p; if
 * needs_commutative, an error code of class MPI_ERR_OP (MPI_Error_string says why) for an
 * operator that is not commutative, before any communication. */
int tuw_reduction_begin(MPI_Comm comm, MPI_Op op, int needs_commutative, int *rank, int *p);
/* 1 if combining the p contributions in any order and bracketing gives the same bits: a
 * predefined sum, product, logical or bitwise operator on an integer type (byte and bool
 * included: two's-complement arithmetic is exact), max or min on an integer or
 * floating-point type, minloc or maxloc on a pair type.  0 for sums and products of
 * floating-point types and for user-defined operators (their results depend on the order
 * of the operands) and for derived datatypes.  The same on every rank, since MPI requires
 * every rank to pass the same datatype and operator.  Signed zeros and NaNs are left out:
 * max(+0, -0) depends on the operand order in MPI's own operators too.  Mirrored by
 * tuwviz.problems.order_free. */
int tuw_order_free(MPI_Datatype type, MPI_Op op);
/* The same for a Reduce_scatter kernel (commutative operator), then MPI_ERR_COUNT if any of
 * recvcounts is negative. */
int tuw_reduce_scatter_begin(MPI_Comm comm, MPI_Op op, const int recvcounts[], int *rank,
                             int *p);
/* Scratch space for n elements of `type` (its lower bound and gaps accounted for): returns
 * the address of element 0, NULL if out of memory; free(*mem) releases it. */
char *tuw_alloc_elems(MPI_Aint n, MPI_Datatype type, void **mem);
/* Reduce along a tree, as seen by one process: receive the partial sum of each child
 * (ranks child[], tags child_tag[], in that order) and add it, then send the sum to
 * `parent` with parent_tag (parent < 0: this is the root, the sum goes to recvbuf).  The
 * first child's sum is received into the accumulator and the input added to it, so
 * nothing is copied; a leaf sends sendbuf as it is.  MPI_IN_PLACE at the root: the input
 * is in recvbuf.  Extra memory: count elements at an inner process, and one more buffer
 * with two or more children.  Used by reduce_binomial.c and reduce_circulant.c. */
int tuw_tree_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, int parent, int parent_tag, int nchildren, const int child[],
                    const int child_tag[], MPI_Comm comm);
/* Reduce_scatter_block as the Reduce_scatter `fn` with recvcounts of p times recvcount:
 * the block kernels that are the regular case of an irregular one. */
int tuw_reduce_scatter_regular(tuw_reduce_scatter_fn fn, const void *sendbuf, void *recvbuf,
                               int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
/* Allreduce as Reduce_scatter `rs` followed by Allgatherv `agv` (Section III-G, Guideline
 * (4)): the count elements cut into p blocks of floor(count/p) or ceil(count/p) (the first
 * count mod p larger), rs leaves rank r's block at its place in recvbuf and agv (in place)
 * completes it.  MPI_IN_PLACE: rs reduces recvbuf into a scratch block that is then copied
 * to its place.  MPI_ERR_COUNT for a negative count; with needs_commutative, MPI_ERR_OP as
 * tuw_reduction_begin. */
int tuw_allreduce_combined(tuw_reduce_scatter_fn rs, tuw_allgatherv_fn agv,
                           int needs_commutative, const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

/* ---- tuning parameters (kernels_c/common/params.c) -------------------------------------- */
/* Knobs of algorithms whose MPI signature has no place for them.  Process-global: set the
 * same values on every rank before calling a kernel (tuwviz/params.py does); the kernels
 * read them at each call.  tuw_reset_params restores all defaults. */
enum { TUW_RING_RANK = 0, TUW_RING_SMP = 1, TUW_RING_SPREAD = 2 };
#define TUW_DEFAULT_ALPHA 1e-6 /* seconds per message, for Eq. (2) */
#define TUW_DEFAULT_BETA 1e-9  /* seconds per byte, for Eq. (2) */

/* Setters return MPI_SUCCESS, or MPI_ERR_ARG for a value out of range, which they do not
 * store: the parameter is set to its default instead. */
/* Pipelined ring's block size B in bytes; 0 (default) = Eq. (2) estimate.  Negative: error. */
int tuw_set_block_bytes(long long bytes);
long long tuw_get_block_bytes(void);
/* alpha, beta of the linear cost model; used only by the Eq. (2) estimate of B.  Each must
 * be finite and >= 0. */
int tuw_set_cost_model(double alpha, double beta);
int tuw_set_cost_alpha(double alpha); /* one at a time: what tuwviz's parameter table sets */
int tuw_set_cost_beta(double beta);
void tuw_get_cost_model(double *alpha, double *beta);
/* Ring order of the ring Allgatherv kernels: TUW_RING_RANK (default), TUW_RING_SMP,
 * TUW_RING_SPREAD (see kernels_c/include/ring_order.h).  Any other value: error. */
int tuw_set_ring_order(int order);
int tuw_get_ring_order(void);
/* Node of each rank for TUW_RING_SMP (copied).  n = 0 clears it; SMP then asks the
 * communicator which ranks share memory.  Returns MPI_SUCCESS, MPI_ERR_NO_MEM (the old map
 * is kept) or MPI_ERR_ARG (n < 0, n > 0 and node_of_rank NULL, or a negative node). */
int tuw_set_node_map(int n, const int node_of_rank[]);
/* The map set by tuw_set_node_map (NULL if none); returns its length n. */
int tuw_get_node_map(const int **node_of_rank);
void tuw_reset_params(void); /* all defaults, node map cleared */
/* Collective over comm: compare every rank's tuning parameters.  Ranks that disagree would
 * hang or truncate inside a kernel, so all ranks return MPI_ERR_ARG together, and
 * tuw_last_error() names the parameter, two ranks and their values.  tuw_invoke calls it
 * before every kernel, tuw_time once before its loop. */
int tuw_check_params(MPI_Comm comm);
/* Text of the last error tuw_check_params found ("" if none); tuw_clear_error empties it. */
const char *tuw_last_error(void);
/* What an assignment's template returns until the student writes the kernel: sets the
 * last error to "<function> is not written yet: ..." and returns MPI_ERR_OTHER. */
int tuw_not_written(const char *function);
void tuw_clear_error(void);

/* ---- trace (kernels_c/common/p2p.c) ----------------------------------------------------- */
enum { TUW_DIR_SEND = 0, TUW_DIR_RECV = 1 };

typedef struct {
    int rank;      /* rank of the recording process in the kernel's communicator (its group's) */
    int peer;      /* rank of the partner in the same communicator                */
    int dir;       /* TUW_DIR_SEND or TUW_DIR_RECV                                */
    int tag;       /* MPI tag; kernels use it for the round number               */
    int remote;    /* 1: comm is an inter-communicator, peer a rank of the other group */
    long long bytes; /* bytes sent, or bytes actually received                  */
    double t_start;  /* MPI_Wtime when the operation was posted                  */
    double t_end;    /* MPI_Wtime when it completed                              */
} tuw_event;

void tuw_trace_start(void);   /* clear and start recording */
void tuw_trace_stop(void);
int tuw_trace_count(void);
int tuw_trace_copy(tuw_event *out, int n); /* copy up to n events; returns how many */

/* ---- constants Python mirrors (kernels_c/common/constants.c) ---------------------------
 * Value of a named constant or struct layout ("TUW_DT_INT", "sizeof tuw_args",
 * "offsetof tuw_args.root", ...); NaN for an unknown name.  tuwviz.kernels compares its own
 * copies with these when it loads the library and names any that differ. */
double tuw_constant(const char *name);
const char *tuw_constant_name(int index); /* NULL past the last */

#ifdef __cplusplus
}
#endif
#endif /* TUWVIZ_H */
