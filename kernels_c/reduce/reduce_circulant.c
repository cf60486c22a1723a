/*
 * reduce_circulant.c - reduction-to-root on the circulant graph for any p and any root
 * (Träff, Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other
 * collectives for MPI", Section III-C, Listings 3-4).  Needs a commutative operator.
 *
 * The reduction-to-all pattern with every message dropped that the root does not depend
 * on.  In virtual ranks v = (rank - root) mod p, v sends its partial sum once, in round
 * pathhead(v), along its circulant to-edge, and is done; before that it receives the
 * partial sums of its children, in increasing round, and adds them up
 * (topology/circulant.c: tuw_circ_tree_create).  Only one partial sum is kept, so one
 * reduction per round on the way to the root, half the work of the reduction-to-all.
 * The first child's sum is received straight into the accumulator and the own input is
 * added to it: no copy (a leaf sends sendbuf itself; common/reduction.c: tuw_tree_reduce).
 *
 * Cost (one-ported; m elements, gamma per element reduced):
 *     ceil(log2 p) (alpha + beta m + gamma m)                         (Table I)
 * the path from virtual rank p - 1 has q rounds, one message and one reduction each.
 * Extra memory: m elements at an inner process, m at the root when it has 2 or more
 * children (its first child is received into recvbuf); none at a leaf.
 *
 * Example, p = 9, root 0 (jumps 1 1 2 4): 8 -> 7 (round 0), 7 -> 6 and 3 -> 2 and 5 -> 4
 * and 1 -> 0 (round 1), 6 -> 4 and 2 -> 0 (round 2), 4 -> 0 (round 3).
 *
 * Written from the text and Listing 4; Listing 3 is garbled (it assigns ciro twice and
 * sets it to MPI_PROC_NULL on both branches).  MPI_IN_PLACE at the root: its input is in
 * recvbuf; every child's sum is received into scratch space and added.
 * Model: tuwviz/model/reduce.py:reduce_circulant.
 */
#include "tuwviz.h"
#include "topology.h"

int TUW_Reduce_circulant(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, int root, MPI_Comm comm)
{
    int rc, rank, p, child[TUW_CIRC_MAX_SKIPS], tag[TUW_CIRC_MAX_SKIPS];
    tuw_circ_tree t;

    rc = tuw_reduction_begin(comm, op, 1, &rank, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    if (root < 0 || root >= p)
        return MPI_ERR_ROOT;
    tuw_circ_tree_create(p, rank, root, &t);
    for (int c = 0; c < t.nchildren; c++)
        child[c] = t.child[c].rank, tag[c] = t.child[c].round;
    return tuw_tree_reduce(sendbuf, recvbuf, count, datatype, op, t.parent, t.round,
                           t.nchildren, child, tag, comm);
}
