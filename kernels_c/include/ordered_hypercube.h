/*
 * ordered_hypercube.h - the ordered hypercubes and linear-time gather tree of Träff 2017,
 * "Practical, Linear-time, Fully Distributed Algorithms for Irregular Gather and Scatter"
 * (EuroMPI/USA '17), Lemmas 2.1-2.3.
 *
 * Two layers, as MPICH's treealgo separates them:
 *   - kernels_c/gatherv/ordered_hypercube.c: topology from integers only (cubes, fixed
 *     roots, partners with the rank p-1 rule, the winner rule); no communicator;
 *   - kernels_c/gatherv/ordered_hypercube_tree.c: tuw_oh_construct, the distributed tree
 *     construction of Lemma 2.3, communicating through the TUW_ wrappers.
 * TUW_Gatherv and TUW_Scatterv build the same tree and only differ in the data phase.
 * Python mirror, function for function: tuwviz/model/ordered_hypercube.py.
 */
#ifndef TUWVIZ_ORDERED_HYPERCUBE_H
#define TUWVIZ_ORDERED_HYPERCUBE_H

#include <mpi.h>

/* More iterations than any int rank count needs. */
#define TUW_OH_MAX_DIMS 32

/* The fixed-root exchange message (3 x 8 = 24 bytes): what a fixed root knows of its cube. */
typedef struct {
    long long groot;     /* the cube's gather root                                     */
    long long time;      /* gather time estimate T: bytes of the cube outside groot    */
    long long rootblock; /* bytes of groot's own block                                 */
} tuw_oh_state;

/* The fixed root -> gather root info message (24 bytes): the outcome of one iteration. */
typedef struct {
    long long winner; /* gather root of the union                        */
    long long loser;  /* gather root that sends its cube to the winner    */
    long long nbytes; /* the loser's total bytes (0: no data message)     */
} tuw_oh_info;

/* ---- topology from integers (ordered_hypercube.c) ------------------------------------- */
int tuw_oh_dims(int p);                                  /* ceil(log2 p)                  */
void tuw_oh_cube(int p, int d, int rank, int *lo, int *hi); /* level-d cube of rank       */
int tuw_oh_fixed_root(int p, int d, int rank);           /* last rank of that cube        */
int tuw_oh_is_fixed_root(int p, int d, int rank);
int tuw_oh_has_sibling(int p, int d, int rank);          /* cube takes part in iteration d */
int tuw_oh_partner(int p, int d, int f);                 /* partner fixed root, or -1     */
int tuw_oh_right_wins(const tuw_oh_state *left, const tuw_oh_state *right, int root);

/* ---- the constructed tree, as one process sees it (ordered_hypercube_tree.c) ---------- */
typedef struct {
    int iteration;   /* iteration that made the edge; also the message tag      */
    int peer;        /* the rank at the other end                               */
    int lo, hi;      /* the edge carries the blocks of ranks lo..hi-1          */
    long long bytes; /* their total; 0 = the paper's dotted edge, no message    */
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

/* Datatype sizes and the own block's bytes for a tree kernel, which gather and scatter need
 * alike with the roles mirrored.  "own" is this rank's own block (gather: the send side;
 * scatter: the receive side); "root" is the side of the root's counts vector, looked at only
 * at the root.  At the root with in_place, the own block is root_counts[root] elements of
 * root_type and own_type is not looked at.  Returns MPI_ERR_COUNT for a negative own count,
 * MPI_ERR_TYPE for an own type of size 0 (blocks are counted in its elements), or the error
 * of MPI_Type_size/MPI_Type_get_extent.  Sizes and extents not looked at are set to 0. */
int tuw_oh_own_block(int is_root, int in_place, int own_count, MPI_Datatype own_type,
                     const int root_counts[], int root, MPI_Datatype root_type,
                     int *own_size, MPI_Aint *own_extent, int *root_size,
                     MPI_Aint *root_extent, long long *bytes);

#endif /* TUWVIZ_ORDERED_HYPERCUBE_H */
