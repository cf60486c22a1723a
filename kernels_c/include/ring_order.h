/*
 * ring_order.h - the communicator side of the ring Allgatherv kernels (Träff, Ripke,
 * Siebert, Balaji, Thakur, Gropp: "A Pipelined Algorithm for Large, Irregular All-gather
 * Problems", IJHPCA 2010, Sections 2.1-2.3), kernels_c/common/node_map.c.
 *
 * The ring orders themselves (RANK, SMP, SPREAD), the pipelined ring's slot clock and its
 * block size are pure integer functions in kernels_c/topology/ring.c (topology.h): every
 * process computes the same result from the same recvcounts, and the Python model mirrors
 * them (tuwviz/model/topology/ring.py), so traces can be compared message for message.
 * This header adds what needs a communicator: the nodes of its ranks, the ring order the
 * current tuning parameters ask for, and the start both rings share.
 */
#ifndef TUWVIZ_RING_ORDER_H
#define TUWVIZ_RING_ORDER_H

#include <mpi.h>
#include "topology.h"

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
