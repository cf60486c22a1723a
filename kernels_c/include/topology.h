/*
 * topology.h - who talks to whom, from integers only: the topology builders of the kernels.
 *
 * A builder takes (p, rank, root, sizes, parameters) and answers who sends what to whom;
 * it has no communicator and makes no MPI call (MPICH's treealgo and circ_graph.c do the
 * same).  Kernels execute what a builder says; the Python model mirrors every builder with
 * the same signature (tuwviz/model/topology/, mapping rule in its __init__.py), and
 * tests/test_topology.py sweeps the two against each other for p = 1..129 and every root.
 *
 * Naming: builder X lives in kernels_c/topology/X.c, its functions are tuw_X_* (prefix
 * shortened where the paper has a name: oh = ordered hypercube), its Python mirror is
 * tuwviz/model/topology/X.py with the same names minus "tuw_".
 */
#ifndef TUWVIZ_TOPOLOGY_H
#define TUWVIZ_TOPOLOGY_H

/* ---- binomial tree (binomial.c; the fixed tree of Träff 2017, Section 1) --------------
 * Virtual ranks v = (rank - root) mod p.  The parent of v > 0 is v - lowbit(v) (lowbit:
 * its lowest set bit); its children are v + 2^k for every 2^k < lowbit(v) (the root: every
 * 2^k) with v + 2^k < p, child v + 2^k joining in round k.  The subtree of v is virtual
 * ranks v .. v + size - 1, size = min(lowbit(v), p - v) (the root: p), so a child's
 * subtree is blocks 2^k .. 2^k + size' - 1 of its parent's.  In real ranks a subtree starts
 * at its own rank and may wrap from p-1 to 0.
 *   p = 6, root 2:  rank    0  1  2  3  4  5      children of 2: 3 (round 0, 1 block),
 *                   v       4  5  0  1  2  3                     4 (round 1, 2 blocks),
 *                   parent  2  0 -1  2  2  4                     0 (round 2, 2 blocks) */
#define TUW_BINOMIAL_MAX_CHILDREN 32

typedef struct {
    int rank;  /* the child; its subtree's first block is its own                    */
    int round; /* k: the child is virtual rank v + 2^k; round and tag of the edge    */
    int first; /* 2^k: its subtree starts at block `first` of mine (0 = my own)      */
    int size;  /* blocks (processes) in its subtree                                  */
} tuw_binomial_edge;

typedef struct {
    int parent; /* rank of the parent, -1 at the root                                */
    int round;  /* round (tag) of my edge to the parent, -1 at the root              */
    int size;   /* processes in my subtree: virtual ranks v .. v + size - 1           */
    int nchildren;
    tuw_binomial_edge child[TUW_BINOMIAL_MAX_CHILDREN]; /* in increasing round       */
} tuw_binomial_tree;

/* The tree as `rank` sees it.  Needs 1 <= p and 0 <= rank, root < p. */
void tuw_binomial_tree_create(int p, int rank, int root, tuw_binomial_tree *t);

/* ---- divide and conquer (divide_conquer.c; HPC course report, TU Wien 2017, 2.2) ------
 * A range [lo, hi) with subroot r splits at mid = lo + ceil((hi - lo) / 2); the half without
 * r gets subroot mid (r left of mid) or mid - 1 (r right of it), r's child at depth d (round
 * and tag); both halves split again until single processes remain.  Every subtree is a
 * range of consecutive real ranks.  ceil(log2 p) rounds.
 *   p = 6, root 2:  rank    0  1  2  3  4  5      children of 2: 3 (round 0, [3,6)),
 *                   parent  1  2 -1  2  3  3                     1 (round 1, [0,2))
 *                   round   2  1 -1  0  2  1      children of 3: 5 (round 1), 4 (round 2) */
#define TUW_DC_MAX_CHILDREN 32

typedef struct {
    int rank;   /* the child: the subroot of the half [lo, hi)                      */
    int round;  /* depth d of the split: round and tag of the edge                   */
    int lo, hi; /* the child's subtree: ranks lo .. hi-1                             */
} tuw_dc_edge;

typedef struct {
    int parent; /* rank of the parent, -1 at the root                                */
    int round;  /* round (tag) of my edge to the parent, -1 at the root              */
    int lo, hi; /* my subtree: ranks lo .. hi-1 ([0, p) at the root)                 */
    int nchildren;
    tuw_dc_edge child[TUW_DC_MAX_CHILDREN]; /* in increasing round: largest half first */
} tuw_dc_tree;

/* The tree as `rank` sees it.  Needs 1 <= p and 0 <= rank, root < p. */
void tuw_dc_tree_create(int p, int rank, int root, tuw_dc_tree *t);

/* ---- ordered hypercubes (ordered_hypercube.c; Träff 2017, Section 2, Lemmas 2.1-2.3) --
 * Cubes, fixed roots, partners with the rank p-1 rule, and the winner rule.  The tree
 * built from them by communicating is tuw_oh_construct (ordered_hypercube.h). */
#define TUW_OH_MAX_DIMS 32 /* more iterations than any int rank count needs */

/* The fixed-root exchange message (3 x 8 = 24 bytes): what a fixed root knows of its cube. */
typedef struct {
    long long groot;     /* the cube's gather root                                     */
    long long time;      /* gather time estimate T: bytes of the cube outside groot    */
    long long rootblock; /* bytes of groot's own block                                 */
} tuw_oh_state;

int tuw_oh_dims(int p);                                     /* ceil(log2 p)               */
void tuw_oh_cube(int p, int d, int rank, int *lo, int *hi); /* level-d cube of rank       */
int tuw_oh_fixed_root(int p, int d, int rank);              /* last rank of that cube     */
int tuw_oh_is_fixed_root(int p, int d, int rank);
int tuw_oh_has_sibling(int p, int d, int rank); /* the cube takes part in iteration d     */
int tuw_oh_partner(int p, int d, int f);        /* partner fixed root; -1: none, or f is
                                                   no fixed root                          */
int tuw_oh_right_wins(const tuw_oh_state *left, const tuw_oh_state *right, int root);

/* ---- rings (ring.c; Träff, Ripke, Siebert, Balaji, Thakur, Gropp, IJHPCA 2010, 2.2-2.4)
 * Every process computes the same answer from recvcounts, which all know in
 * MPI_Allgatherv.  tuw_comm_ring_order (ring_order.h) adds the communicator side. */

/* Ring order: order[k] = rank at ring position k (a permutation of 0..p-1).  counts[i] =
 * elements of rank i.  kind is TUW_RING_RANK, TUW_RING_SMP or TUW_RING_SPREAD (tuwviz.h).
 *   RANK    order[k] = k.
 *   SMP     (Figure 1) nodes in the order of their lowest rank, each node's ranks
 *           consecutive: first those with counts 0, then those with counts > 0, each group
 *           by increasing rank (so the node's last process, which sends off-node, has data
 *           whenever any process of the node has: Section 2.3, last paragraph).
 *           node_of_rank[i] = any integer naming rank i's node.
 *   SPREAD  (Section 2.3) ranks with data placed equidistantly among the empty ones:
 *           for each rank with data, in increasing order, first its share of the empty
 *           ranks (z / n each, the first z % n one more), then itself.
 * node_of_rank may be NULL unless kind == TUW_RING_SMP.  Returns MPI_SUCCESS, MPI_ERR_ARG
 * (unknown kind, p < 1, SMP without node_of_rank) or MPI_ERR_NO_MEM. */
int tuw_ring_order(int p, const int counts[], const int node_of_rank[], int kind, int order[]);

/* One slot of the pipelined ring's clock (Section 2.3; kernels_c/allgatherv/
 * allgatherv_pipelined.c).  All ring positions step together; in each slot position k
 * sends its next non-empty piece if it has it: one of its own[k] own non-empty pieces, or
 * one it received in an earlier slot (position k has received sent[k-1] pieces).  nsend[k]
 * is the number of non-empty pieces position k sends in all.  Sets now[k] = 1 for the
 * positions that send in this slot (0 for the others), then adds them to sent[].  Returns
 * how many positions send in this slot (0: every position is done). */
int tuw_ring_slot(int p, const long long own[], const long long nsend[], long long sent[],
                  unsigned char now[]);

/* Pipelined ring block size B in elements of `extent` bytes (Section 2.4):
 *   block_bytes > 0: max(1, block_bytes / extent), no upper cap;
 *   block_bytes == 0: the paper's estimate, Eq. (2), in bytes, turned into elements and
 *   clamped to 1..max counts; B = max counts for a regular problem (the linear ring), 1 if
 *   all counts are 0.  alpha, beta: cost of a message of n bytes is alpha + beta n. */
long long tuw_allgatherv_block_elems(int p, const int counts[], int extent,
                                     long long block_bytes, double alpha, double beta);

/* ---- circulant graphs (circulant.c; Träff, Hunold, Vardas, Funk, "Uniform algorithms for
 * reduce-scatter and (most) other collectives for MPI", Sections III-A..D) -------------
 * q = ceil(log2 p) rounds.  In round k rank r sends to (r - jump_k) mod p and receives from
 * (r + jump_k) mod p, jump_k = skips[k] - e_k = skips[k+1] - skips[k].
 *   p = 9:  skips 1 2 3 5 9, e_k 0 1 1 1, jumps 1 1 2 4; rank 8 sends to 7 7 6 4. */
#define TUW_CIRC_MAX_SKIPS 33 /* skips[0..q], q <= 31 for an int p */

/* skips[0..q] by repeated halving of p rounded up, skips[q] = p (Listing 1, Table II);
 * returns q.  Needs p >= 1 and room for q + 1 ints (TUW_CIRC_MAX_SKIPS always suffices). */
int tuw_circ_skips(int p, int skips[]);
/* The correction e_k = skips[k+1] mod 2 of round k, 0 <= k < q (Section III-B). */
int tuw_circ_epsilon(const int skips[], int k);
/* To- and from-process of `rank` in round k: (rank -+ (skips[k] - e_k)) mod p. */
int tuw_circ_to(int p, int rank, const int skips[], int k);
int tuw_circ_from(int p, int rank, const int skips[], int k);
/* The round in which virtual rank virt (rank - root mod p) sends its partial sum towards
 * virtual root 0 (Reduce, Listing 4); q for virt 0 (the root never sends). */
int tuw_circ_pathhead(int virt, int q, const int skips[]);

/* The Reduce tree (Section III-C): v sends in round pathhead(v) to v - jump and is done;
 * its children are v + jump_j for the rounds j < pathhead(v), v + jump_j < p, whose
 * pathhead is j.  p = 9, root 0: children of 0: 1 (round 1), 2 (round 2), 4 (round 3). */
typedef struct {
    int rank;  /* the child                                                            */
    int round; /* the round it sends its partial sum in                                */
} tuw_circ_edge;

typedef struct {
    int parent; /* rank to send my partial sum to, -1 at the root                       */
    int round;  /* round of that send, -1 at the root                                   */
    int nchildren;
    tuw_circ_edge child[TUW_CIRC_MAX_SKIPS]; /* in increasing round                     */
} tuw_circ_tree;

/* The tree as `rank` sees it.  Needs 1 <= p and 0 <= rank, root < p. */
void tuw_circ_tree_create(int p, int rank, int root, tuw_circ_tree *t);
/* Processes in the subtree of `rank`: virtual ranks v .. v + size - 1, consecutive, its
 * children's subtrees one after another in round order (Gather and Scatter, Section III-F).
 * p = 9, root 0: sizes 9 1 2 1 5 1 3 2 1.  O(log^2 p). */
int tuw_circ_subtree_size(int p, int rank, int root);
/* Write the offsets of the sets B^i, i = k .. q-1, relative to `off` into block[b ...]
 * (Reduce_scatter, Listing 5; offset x names the block of rank r - x); returns the index
 * after the last written: from (0, 0) it writes 2^q - 1 offsets, 2^(q-1-i) of round i. */
int tuw_circ_relative_blocks(int off, int k, int q, const int skips[], int b, int block[]);

/* ---- intergroup segments (intergroup.c; Kang, Träff, Al-Bahrani, Agrawal, Choudhary,
 * Liao, ParCo 2019, Sections 4 and 4.1) ------------------------------------------------
 * total items cut into n almost equal parts in order: parts 0 .. (total mod n) - 1 have
 * ceil(total/n) items, the others floor(total/n).  p = 8 processes into q = 3 subgroups:
 * {0,1,2} {3,4,5} {6,7}. */
/* Part i (0 <= i < n) of total items: its first item and its size.  Needs n >= 1. */
void tuw_ig_part(long long total, int n, int i, long long *first, long long *size);
/* The part that holds item `index` (0 <= index < total). */
int tuw_ig_part_of(long long total, int n, long long index);
/* A sender's items [start, start + count) of total cut into n parts: returns how many
 * receivers (parts) they overlap, *lo the first (0 receivers for count 0). */
int tuw_ig_receivers(long long total, int n, long long start, long long count, int *lo);
/* Receive order of receiver k (Algorithm 2, Section 4.1): senders 0..ns-1 hold counts[i]
 * items one after another, cut into n parts; order[] gets the senders overlapping part k
 * (empty blocks left out): first the one that goes on to higher receivers, then those that
 * send only to k in rank order, last the one that came from lower receivers.  Returns how
 * many.  order needs room for ns ints. */
int tuw_ig_recv_order(int ns, const int counts[], int n, int k, int order[]);

#endif /* TUWVIZ_TOPOLOGY_H */
