/*
 * gatherv_circulant.c - Gatherv on the circulant graph for any p and root (Träff, Hunold,
 * Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other collectives for
 * MPI", Section III-F).  The paper gets the rooted operations from the all-to-all ones by
 * leaving out the communication the root does not depend on; for reduction to a root that
 * leaves the pathhead tree of Section III-C (topology/circulant.c, tuw_circ_tree_create),
 * and this kernel runs that tree with concatenation as the operator: in virtual ranks
 * v = rank - root mod p, v sends in round pathhead(v), once, to v - jump (its circulant
 * to-process of that round); its children v + jump_j join in the rounds j < pathhead(v).  Each subtree is consecutive virtual ranks, the children's
 * subtrees one after another in round order (tuw_circ_subtree_size), so a process appends
 * its children's blocks behind its own and forwards them: the engine common/tree.c,
 * the same as the binomial Gatherv's, with this tree.  Tag = round.
 *
 * Cost (one-ported; m_i bytes, q = ceil(log2 p)): the root receives q messages at most
 * (one per child), the data of virtual rank v crosses one edge per round from pathhead(v)
 * up, at most q:
 *     q alpha + beta (sum over edges of the subtree bytes)  <=  q (alpha + beta m)
 * Regular blocks: the root receives (p - 1)/p m in q rounds, as the binomial tree.  Extra
 * memory: a buffer of its subtree's bytes at an inner process.
 *
 * Example, p = 9, root 0 (skips 1 2 3 5 9, jumps 1 1 2 4), subtree sizes 9 1 2 1 5 1 3 2 1:
 *   round 0: 8 -> 7 (block 8)
 *   round 1: 1 -> 0 (block 1), 3 -> 2 (3), 5 -> 4 (5), 7 -> 6 (blocks 7, 8)
 *   round 2: 2 -> 0 (blocks 2, 3), 6 -> 4 (blocks 6, 7, 8)
 *   round 3: 4 -> 0 (blocks 4 .. 8)
 * A root other than 0 shifts every rank by it; a subtree that wraps past rank p-1 lands in
 * two pieces of recvbuf through one indexed datatype.
 * Model: tuwviz/model/gatherv.py:circulant.
 */
#include "tuwviz.h"

int TUW_Gatherv_circulant(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[], const int displs[],
                          MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return tuw_tree_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm, tuw_tree_view_circulant, 0);
}
