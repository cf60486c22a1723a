/*
 * scatter_circulant.c - Scatter on the circulant graph for any p and root (Träff, Hunold,
 * Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other collectives for
 * MPI", Section III-F): the circulant Gather run backwards.
 *
 * The regular case of scatterv_circulant.c: the root describes sendbuf as p blocks of
 * sendcount elements and sends every subtree straight from it (a wrapping one through an
 * indexed datatype: no reordering copy, unlike scatter_binomial.c); every block has the
 * bytes of the receiver's own recvcount, so no sizes are sent ahead (tuw_tree_scatterv,
 * regular).  Tag = the edge's gather round.
 *
 * Cost (one-ported; m = p b bytes, q = ceil(log2 p)):
 *     q alpha + (p - 1) b beta                  (the root's port: (p-1)/p m, optimal)
 * Extra memory: 2p ints at the root, a buffer of its subtree at an inner process.
 *
 * Example, p = 9, root 0: the root sends rank 4 blocks 4 .. 8 (tag 3), rank 2 blocks 2, 3
 * (tag 2), rank 1 block 1 (tag 1); then 4 sends 6 blocks 6 .. 8 and 5 block 5, 2 sends 3
 * block 3, 6 sends 7 blocks 7, 8, 7 sends 8 block 8.
 * Model: tuwviz/model/scatterv.py:circulant_regular.
 */
#include <stdlib.h>
#include "tuwviz.h"

int TUW_Scatter_circulant(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm)
{
    int rc, rank, p, *blocks = NULL;

    rc = tuw_rooted_begin(comm, root, &rank, &p); /* intra-communicator, valid root */
    if (rc == MPI_SUCCESS && rank == root) /* only the root's counts and displs are read */
        rc = sendcount < 0 ? MPI_ERR_COUNT : tuw_regular_blocks(p, sendcount, &blocks);
    if (rc == MPI_SUCCESS)
        rc = tuw_tree_scatterv(sendbuf, blocks, blocks ? blocks + p : NULL, sendtype, recvbuf,
                               recvcount, recvtype, root, comm, tuw_tree_view_circulant, 1);
    free(blocks);
    return rc;
}
