/*
 * ring_order.h - ring order and block size of the ring Allgatherv kernels
 * (Träff, Ripke, Siebert, Balaji, Thakur, Gropp: "A Pipelined Algorithm for Large,
 * Irregular All-gather Problems", IJHPCA 2010, Sections 2.2-2.4).
 *
 * tuw_ring_order, tuw_allgatherv_block_elems and tuw_ring_slot are pure integer functions
 * (no MPI communication): every process computes the same result from the same recvcounts, and
 * the Python model (tuwviz/model) implements the same rules, so traces can be compared
 * message for message.  tuw_comm_ring_order (kernels_c/common/node_map.c) adds the MPI
 * side: it applies the current tuning parameters and, for the SMP order, finds the nodes.
 */
#ifndef TUWVIZ_RING_ORDER_H
#define TUWVIZ_RING_ORDER_H

#include <mpi.h>

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

/* Pipelined ring block size B in elements of `extent` bytes (Section 2.4):
 *   block_bytes > 0: max(1, block_bytes / extent), no upper cap;
 *   block_bytes == 0: the paper's estimate, Eq. (2), in bytes, turned into elements and
 *   clamped to 1..max counts; B = max counts for a regular problem (the linear ring), 1 if
 *   all counts are 0.  alpha, beta: cost of a message of n bytes is alpha + beta n. */
long long tuw_allgatherv_block_elems(int p, const int counts[], int extent,
                                     long long block_bytes, double alpha, double beta);

/* One slot of the pipelined ring's clock (Section 2.3; kernels_c/allgatherv/
 * allgatherv_pipelined.c).  All ring positions step together; in each slot position k
 * sends its next non-empty piece if it has it: one of its own[k] own non-empty pieces, or
 * one it received in an earlier slot (position k has received sent[k-1] pieces).  nsend[k]
 * is the number of non-empty pieces position k sends in all.  Sets now[k] = 1 for the
 * positions that send in this slot (0 for the others), then adds them to sent[].  Returns
 * how many positions send in this slot (0: every position is done). */
int tuw_ring_slot(int p, const long long own[], const long long nsend[], long long sent[],
                  unsigned char now[]);

/* Node of every rank of comm, derived once from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
 * (node id = lowest rank of comm on the node) and cached on comm.  Collective over comm
 * the first time.  *node_of_rank stays owned by comm (freed with it). */
int tuw_comm_node_map(MPI_Comm comm, const int **node_of_rank);

/* The ring order the current tuning parameters ask for (tuw_get_ring_order; for SMP the
 * map of tuw_set_node_map, else tuw_comm_node_map).  Collective over comm if it has to
 * find the nodes.  Returns MPI_ERR_ARG if a node map is set whose length is not p. */
int tuw_comm_ring_order(MPI_Comm comm, const int counts[], int order[]);

/* The start both rings share (Sections 2.1, 2.2): check the counts (MPI_ERR_COUNT if
 * negative), find the ring order (*order, malloc'ed: free it) and my position *pos in it,
 * and copy my own block into recvbuf at rdispls[rank] (unless sendbuf is MPI_IN_PLACE).
 * *extent is recvtype's extent.  Collective over comm if the SMP order must find nodes. */
int tuw_ring_setup(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                   MPI_Comm comm, int **order, int *pos, MPI_Aint *extent);

#endif /* TUWVIZ_RING_ORDER_H */
