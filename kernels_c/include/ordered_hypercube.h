/*
 * ordered_hypercube.h - the linear-time gather tree of Träff 2017, "Practical, Linear-time,
 * Fully Distributed Algorithms for Irregular Gather and Scatter" (EuroMPI/USA '17), Lemmas
 * 2.1-2.3, as the tree kernels use it.
 *
 * Two layers, as MPICH's treealgo separates them:
 *   - kernels_c/topology/ordered_hypercube.c (topology.h): cubes, fixed roots, partners
 *     with the rank p-1 rule, the winner rule; integers only, no communicator;
 *   - kernels_c/common/ordered_hypercube_tree.c (this header): tuw_oh_construct, the
 *     distributed tree construction of Lemma 2.3, communicating through the TUW_ wrappers.
 * TUW_Gatherv and TUW_Scatterv build the same tree and only differ in the data phase.
 * Python mirror: tuwviz/model/topology/ordered_hypercube.py (topology),
 * tuwviz/model/ordered_hypercube.py:build_tree (construction).
 */
#ifndef TUWVIZ_ORDERED_HYPERCUBE_H
#define TUWVIZ_ORDERED_HYPERCUBE_H

#include <mpi.h>
#include "topology.h"

/* The fixed root -> gather root info message (24 bytes): the outcome of one iteration. */
typedef struct {
    long long winner; /* gather root of the union                        */
    long long loser;  /* gather root that sends its cube to the winner    */
    long long nbytes; /* the loser's total bytes (0: no data message)     */
} tuw_oh_info;

/* ---- the constructed tree, as one process sees it --------------------------------- */
typedef struct {
    int iteration;    /* iteration that made the edge; also the message tag          */
    int peer;         /* the rank at the other end                                   */
    int lo, hi;       /* the edge carries the blocks of ranks lo..hi-1               */
    long long bytes;  /* their total; 0 = the paper's dotted edge, no message        */
    long long offset; /* child edge: bytes before its blocks in my subtree's buffer;
                         parent edge: 0 (it carries my whole subtree)                */
} tuw_oh_edge;

typedef struct {
    int nchildren;
    tuw_oh_edge child[TUW_OH_MAX_DIMS]; /* in iteration order; peer = the child     */
    int has_parent;                     /* 0 only at the root                        */
    tuw_oh_edge parent;                 /* peer = the parent; lo..hi = my subtree    */
    int lo, hi;                         /* ranks of my subtree (0..p at the root)    */
    long long bytes;                    /* bytes of my subtree                       */
    long long offset;                   /* bytes before my own block within lo..hi   */
} tuw_oh_tree;

/* Build the gather tree of Lemma 2.3 with the external root `root` (Lemma 2.2): this
 * process contributes `mybytes`.  Every process of `comm` must call it.  Messages: one
 * 24-byte exchange (MPI_Sendrecv) per iteration a process is a fixed root with a partner,
 * one 24-byte info message per iteration its cube's fixed root and gather root differ;
 * tag = iteration.  Returns an MPI error code. */
int tuw_oh_construct(int p, int rank, int root, long long mybytes, MPI_Comm comm,
                     tuw_oh_tree *tree);

/* The start both tree kernels share, with the roles of send and receive side mirrored:
 * check the root (MPI_ERR_ROOT), find the datatype sizes and the own block's bytes, and
 * build the tree (tuw_oh_construct) from them.  "own" is this rank's own block (gather: the
 * send side; scatter: the receive side); "root" is the side of the root's counts vector,
 * looked at only at the root.  At the root with in_place, the own block is
 * root_counts[root] elements of root_type and own_type is not looked at.  Returns
 * MPI_ERR_COUNT for a negative own count, MPI_ERR_TYPE for an own type of size 0 (blocks
 * are counted in its elements), the error of MPI_Type_size/MPI_Type_get_extent, or that of
 * the construction.  Sizes and extents not looked at are set to 0. */
int tuw_oh_setup(int root, int in_place, int own_count, MPI_Datatype own_type,
                 const int root_counts[], MPI_Datatype root_type, MPI_Comm comm,
                 int *own_size, MPI_Aint *own_extent, int *root_size, MPI_Aint *root_extent,
                 tuw_oh_tree *tree);

/* Whether an edge of `bytes` cannot be one message: more than INT_MAX elements of `size`
 * bytes (MPI counts are ints).  Both ends of an edge know its bytes from the construction,
 * so both decide alike: such an edge carries no message, and the kernels return
 * MPI_ERR_COUNT on the ranks it touches instead of truncating a cast count. */
static inline int tuw_oh_too_big(long long bytes, int size)
{
    return size > 0 && bytes / size > 2147483647LL;
}

#endif /* TUWVIZ_ORDERED_HYPERCUBE_H */
