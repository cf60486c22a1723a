/*
 * gather_circulant.c - Gather on the circulant graph for any p and root (Träff, Hunold,
 * Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other collectives for
 * MPI", Section III-F): the circulant Reduce tree (Section III-C) with concatenation as
 * the operator, as gatherv_circulant.c explains.
 *
 * The regular case of gatherv_circulant.c: the root describes its recvbuf as p blocks of
 * recvcount elements (counts and displacements, p ints each) and runs the same engine
 * (common/tree.c), so its children's subtrees land straight in place, a wrapping
 * one through an indexed datatype: no reordering copy at the root, unlike
 * gather_binomial.c.  Tag = round.
 *
 * Cost (one-ported; m = p b bytes, q = ceil(log2 p)):
 *     q alpha + (p - 1) b beta                  (the root's port: (p-1)/p m, optimal)
 * Extra memory: 2p ints at the root, a buffer of its subtree at an inner process.
 *
 * Example, p = 9, root 3 (virtual v = rank - 3 mod 9; see gatherv_circulant.c for the tree
 * at root 0): the root's children are ranks 4 (round 1, block 4), 5 (round 2, blocks 5, 6)
 * and 7 (round 3, blocks 7, 8, 0, 1, 2: this one wraps).
 * Model: tuwviz/model/gatherv.py:circulant.
 */
#include <stdlib.h>
#include "tuwviz.h"

int TUW_Gather_circulant(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm)
{
    int rc, rank, p, *blocks = NULL;

    rc = tuw_rooted_begin(comm, root, &rank, &p); /* intra-communicator, valid root */
    if (rc == MPI_SUCCESS && rank == root) /* only the root's counts and displs are read */
        rc = recvcount < 0 ? MPI_ERR_COUNT : tuw_regular_blocks(p, recvcount, &blocks);
    if (rc == MPI_SUCCESS)
        rc = tuw_tree_gatherv(sendbuf, sendcount, sendtype, recvbuf, blocks,
                              blocks ? blocks + p : NULL, recvtype, root, comm,
                              tuw_tree_view_circulant, 1);
    free(blocks);
    return rc;
}
