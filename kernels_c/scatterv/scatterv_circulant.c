/*
 * scatterv_circulant.c - Scatterv on the circulant graph for any p and root (Träff,
 * Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other
 * collectives for MPI", Section III-F: "by reversing the direction of the communication,
 * also the rooted scatter operations can be implemented with the circulant graph
 * communication pattern").
 *
 * gatherv_circulant.c run backwards: the circulant Reduce tree (topology/circulant.c) in
 * virtual ranks v = rank - root mod p; a process receives its subtree (consecutive virtual
 * ranks, tuw_circ_subtree_size) from its parent, then sends each child its part, the child
 * of the last gather round first (the largest subtree), so the last gather round is the
 * first scatter round.  Only the root knows sendcounts: a child whose subtree has more than
 * one process first gets the byte sizes of the rest of it (one MPI_INT64_T message, same
 * tag).  The engine is common/tree.c's, the same as the binomial Scatterv's.  Tag = the
 * edge's gather round.
 *
 * Cost (one-ported; m_i bytes, q = ceil(log2 p)):
 *     q alpha + beta (sum over edges of the subtree bytes) + the sizes messages
 *  <= q (alpha + beta m) + q alpha + 8 (p - 1) beta on the root's port
 * Regular blocks: the root sends (p - 1)/p m in q rounds.  Extra memory: a buffer of its
 * subtree's bytes (and sizes) at an inner process.
 *
 * Example, p = 9, root 0 (the tree of gatherv_circulant.c): the root sends rank 4 the sizes
 * of blocks 5 .. 8, then blocks 4 .. 8 (tag 3); rank 2 the size of block 3, then blocks 2, 3
 * (tag 2); rank 1 block 1 (tag 1).  Rank 4 sends 6 blocks 6 .. 8 (with sizes), then 5 its
 * block; 6 sends 7 blocks 7, 8; 7 sends 8 its block (tag 0).
 * Model: tuwviz/model/scatterv.py:circulant.
 */
#include "tuwviz.h"

int TUW_Scatterv_circulant(const void *sendbuf, const int sendcounts[], const int displs[],
                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return tuw_tree_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                             recvtype, root, comm, tuw_tree_view_circulant, 0);
}
