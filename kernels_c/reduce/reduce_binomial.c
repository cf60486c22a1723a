/*
 * reduce_binomial.c - binomial-tree Reduce, any root: the "Standard" reduction-to-root of
 * Table I in Träff, Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and
 * (most) other collectives for MPI", the baseline of the circulant Reduce.  Needs a
 * commutative operator (the sums are added in tree order, not rank order).
 *
 * The tree is topology/binomial.c's in virtual ranks v = (rank - root) mod p: a process
 * receives the partial sum of each child v + 2^k in increasing round k and adds it, then
 * sends its own to v - lowbit(v), tag = round.  The first child's sum is received into
 * the accumulator and the own input added to it, so nothing is copied; a leaf sends its
 * input as it is (common/reduction.c: tuw_tree_reduce, shared with reduce_circulant.c).
 *
 * Cost (one-ported; m elements, gamma per element reduced):
 *     ceil(log2 p) (alpha + beta m + gamma m)                          (Table I)
 * the root's last child (round q - 1) finishes after q - 1 such steps.  Extra memory: m
 * elements at an inner process (and at the root with 2 or more children).
 *
 * Example, p = 6, root 2 (v = rank - 2 mod 6): round 0: 3 -> 2, 5 -> 4, 1 -> 0;
 * round 1: 4 -> 2; round 2: 0 -> 2.
 * MPI_IN_PLACE at the root: its input is in recvbuf; every child's sum is received into
 * scratch space.  Model: tuwviz/model/reduce.py:reduce_binomial.
 */
#include "tuwviz.h"
#include "topology.h"

int TUW_Reduce_binomial(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, int root, MPI_Comm comm)
{
    int rc, rank, p, child[TUW_BINOMIAL_MAX_CHILDREN], tag[TUW_BINOMIAL_MAX_CHILDREN];
    tuw_binomial_tree t;

    rc = tuw_reduction_begin(comm, op, 1, &rank, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    if (root < 0 || root >= p)
        return MPI_ERR_ROOT;
    tuw_binomial_tree_create(p, rank, root, &t);
    for (int c = 0; c < t.nchildren; c++)
        child[c] = t.child[c].rank, tag[c] = t.child[c].round;
    return tuw_tree_reduce(sendbuf, recvbuf, count, datatype, op, t.parent, t.round,
                           t.nchildren, child, tag, comm);
}
