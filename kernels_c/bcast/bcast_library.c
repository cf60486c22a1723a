/*
 * bcast_library.c - MPICH's broadcast from rank 0 as its default selection picks it: the
 * binomial tree (bcast_binomial.c) for short messages or small groups, else a binomial
 * scatter of almost equal pieces followed by a ring Allgatherv of them.  The intergroup
 * root gathering broadcasts with it inside a group (Kang, Träff et al., ParCo 2019,
 * Section 3.1), so the baseline the paper's Algorithms 1 and 2 beat is the one MPICH runs.
 * Not a row of algorithms.toml: only other kernels call it.
 *
 * The switch is MPICH's defaults: below TUW_BCAST_SHORT_MSG (12288) bytes or
 * TUW_BCAST_MIN_PROCS (8) processes the tree, else scatter + ring.  Piece i (for rank i)
 * is tuw_ig_part's almost equal share of the count.  The scatter runs down the binomial
 * tree rooted at 0: a process receives the pieces of its whole subtree (ranks rank ..
 * rank + size - 1) from its parent and sends each child its subtree's pieces, largest
 * subtree first; every process knows every piece's size, so no sizes travel.  Then
 * TUW_Allgatherv_ring (allgatherv_ring.c) in place completes every process's copy: an
 * algorithm built on another collective's algorithm, as MPICH's is, never a helper doing
 * so.
 *
 * Cost (one-ported, linear alpha-beta model, m bytes): scatter ceil(log2 p) alpha +
 * (p-1)/p m beta, ring (p - 1)(alpha + beta ceil(m/p)): about (ceil(log2 p) + p - 1) alpha
 * + 2 m beta, "a factor of two off" the lower bound m beta (the intergroup paper's
 * discussion of Eq. (2)), against ceil(log2 p)(alpha + m beta) on the tree.
 * Extra memory: 2p ints.
 *
 * Example, p = 8, count 16 ints (64 bytes < 12288): the tree.  p = 8, count 4096 ints
 * (16384 bytes): pieces of 512; 0 -> 4 pieces 4-7, 0 -> 2 pieces 2-3, 4 -> 6 pieces 6-7,
 * ..., then 7 ring rounds of one piece each.
 * Model: tuwviz/model/intergroup.py (_bcast_library).
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

int tuw_bcast_library(void *buf, int count, MPI_Datatype type, MPI_Comm comm)
{
    int rank, p, size, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if ((rc = MPI_Type_size(type, &size)) != MPI_SUCCESS)
        return rc;
    if ((long long)count * size < TUW_BCAST_SHORT_MSG || p < TUW_BCAST_MIN_PROCS)
        return tuw_bcast_binomial(buf, count, type, 0, comm);
    MPI_Aint lb, ext;
    if ((rc = MPI_Type_get_extent(type, &lb, &ext)) != MPI_SUCCESS)
        return rc;
    int *counts = malloc(2 * (size_t)p * sizeof *counts), *displs = counts ? counts + p : NULL;
    if (!counts)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < p; i++) { /* piece i, for rank i; they fit: count does */
        long long f, s;
        tuw_ig_part(count, p, i, &f, &s);
        displs[i] = (int)f;
        counts[i] = (int)s;
    }
    tuw_binomial_tree t;
    tuw_binomial_tree_create(p, rank, 0, &t);
#define PIECES_END(r, n) ((r) + (n) < p ? displs[(r) + (n)] : count)
    if (t.parent >= 0)
        rc = TUW_Recv((char *)buf + (MPI_Aint)displs[rank] * ext,
                      PIECES_END(rank, t.size) - displs[rank], type, t.parent, t.round, comm,
                      MPI_STATUS_IGNORE);
    for (int k = t.nchildren - 1; k >= 0 && rc == MPI_SUCCESS; k--) {
        int c = t.child[k].rank;
        rc = TUW_Send((char *)buf + (MPI_Aint)displs[c] * ext,
                      PIECES_END(c, t.child[k].size) - displs[c], type, c, t.child[k].round,
                      comm);
    }
#undef PIECES_END
    if (rc == MPI_SUCCESS)
        rc = TUW_Allgatherv_ring(MPI_IN_PLACE, 0, type, buf, counts, displs, type, comm);
    free(counts);
    return rc;
}
