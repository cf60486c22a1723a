/*
 * node_map.c - which processes share a node, and the ring order the tuning parameters ask
 * for (kernels_c/include/ring_order.h; the orders themselves: kernels_c/topology/ring.c).
 *
 * The SMP ring order (Träff et al. 2010, Figure 1) needs the node of every rank.  Unless
 * the user gave one with tuw_set_node_map, it is asked from MPI once per communicator:
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups the processes that share memory, the
 * lowest rank in each group names the node, and an allgather tells everybody.  These are
 * MPI collectives, not traced messages: finding the topology is set-up, not part of the
 * algorithm the model describes.  The result is cached on the communicator as an
 * attribute, so only the first call pays for it.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "ring_order.h"

static int node_map_keyval = MPI_KEYVAL_INVALID;

/* Called by MPI when the communicator is freed: the cached map goes with it. */
static int free_node_map(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    free(attr);
    return MPI_SUCCESS;
}

/* Ask MPI which ranks of comm share a node; map[i] = lowest rank on rank i's node. */
static int derive_node_map(MPI_Comm comm, int map[])
{
    MPI_Comm shm;
    int rank, node;
    MPI_Comm_rank(comm, &rank);
    int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Allreduce(&rank, &node, 1, MPI_INT, MPI_MIN, shm);
    MPI_Comm_free(&shm);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Allgather(&node, 1, MPI_INT, map, 1, MPI_INT, comm);
}

int tuw_comm_node_map(MPI_Comm comm, const int **node_of_rank)
{
    int rc, p, found;
    int *map;

    if (node_map_keyval == MPI_KEYVAL_INVALID) {
        rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_node_map, &node_map_keyval,
                                    NULL);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    rc = MPI_Comm_get_attr(comm, node_map_keyval, &map, &found);
    if (rc != MPI_SUCCESS)
        return rc;
    if (found) {
        *node_of_rank = map;
        return MPI_SUCCESS;
    }

    MPI_Comm_size(comm, &p);
    map = malloc((size_t)p * sizeof *map);
    /* every rank must join the collectives below, even one without memory: agree first */
    int ok = map != NULL, all_ok;
    rc = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (rc == MPI_SUCCESS && !all_ok)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = derive_node_map(comm, map);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_attr(comm, node_map_keyval, map);
    if (rc != MPI_SUCCESS) {
        free(map);
        return rc;
    }
    *node_of_rank = map;
    return MPI_SUCCESS;
}

int tuw_comm_ring_order(MPI_Comm comm, const int counts[], int order[])
{
    int p, kind = tuw_get_ring_order();
    const int *nodes = NULL;

    MPI_Comm_size(comm, &p);
    if (kind == TUW_RING_SMP) {
        int n = tuw_get_node_map(&nodes);
        if (n > 0 && n != p)
            return MPI_ERR_ARG; /* a map for another number of processes */
        if (n == 0) {
            int rc = tuw_comm_node_map(comm, &nodes);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return tuw_ring_order(p, counts, nodes, kind, order);
}

int tuw_ring_setup(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                   MPI_Comm comm, int **order, int *pos, MPI_Aint *extent)
{
    int rc, rank, p;

    *order = NULL;
    rc = tuw_allgatherv_begin(comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, &rank, &p, extent);
    if (rc != MPI_SUCCESS)
        return rc;
    *order = malloc((size_t)p * sizeof **order);
    if (!*order)
        return MPI_ERR_NO_MEM;
    rc = tuw_comm_ring_order(comm, recvcounts, *order);
    if (rc != MPI_SUCCESS)
        return rc;
    for (*pos = 0; (*order)[*pos] != rank; (*pos)++)
        ;
    return MPI_SUCCESS;
}
