/*
 * allgatherv_circulant.c - irregular all-to-all broadcast on the circulant graph for any p
 * (Träff, Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other
 * collectives for MPI", Section III-E, Proposition 4).
 *
 * The circulant Allgather's rounds (allgather_circulant.c), keeping track of how many
 * elements each round's run of blocks holds: after round k rank r has the blocks of ranks
 * r .. r + skips[k+1] - 1 (mod p).  In round k it sends the b = skips[k+1] - skips[k]
 * blocks of ranks r + e_k .. r + e_k + b - 1 to r - jump_k and receives those of ranks
 * r + skips[k] .. r + skips[k+1] - 1 from r + jump_k (jump_k = skips[k] - e_k, Lemma 1).
 *
 * Where the blocks live: MPI_Allgatherv places block i at rdispls[i], in any order, so
 * Listing 7's lowrbuf/upprbuf trick (which needs the blocks consecutive in rank order) does
 * not apply.  Instead each round's run of blocks is one message described by an indexed
 * datatype over rdispls (block_range.c), sent from and received into recvbuf itself: no
 * copy but the own block's, whatever the displacements.  With prefix-sum displacements and
 * a run that does not wrap the run is plain contiguous elements.
 *
 * Cost (one-ported, bidirectional; m = sum m_i elements; M_k = elements of the blocks
 * received in round k):
 *     ceil(log2 p) alpha + beta sum_k M_k + gamma m_r
 * Regular blocks: sum_k M_k = m - m_r = (p-1)/p m (Proposition 3).  Worst case (one process
 * holds all m): that block travels in every round, ceil(log2 p) beta m (Proposition 4).
 * Extra memory: none (the indexed datatypes' p ints).
 *
 * Example, p = 5 (skips 1 2 3 5, e_k 0 1 1, jumps 1 1 2), counts (2, 0, 1, 3, 1), rank 3:
 *   round 0: sends block 3 (3 elements) to 2, receives block 4 (1) from 4;
 *   round 1: sends block 4 (1) to 2, receives block 0 (2) from 4;
 *   round 2: sends blocks 4, 0 (3) to 1, receives blocks 1, 2 (0 + 1) from 0.
 *   Received 1 + 2 + 1 = 4 = m - m_3 elements.
 * MPI_IN_PLACE: the own block is already at rdispls[rank].
 * Model: tuwviz/model/allgather.py:allgatherv_circulant.
 */
#include "tuwviz.h"
#include "block_range.h"
#include "topology.h"

int TUW_Allgatherv_circulant(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc, rank, p, skips[TUW_CIRC_MAX_SKIPS];
    MPI_Aint extent;

    rc = tuw_allgatherv_begin(comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, &rank, &p, &extent);
    if (rc != MPI_SUCCESS)
        return rc;
    int q = tuw_circ_skips(p, skips);
    for (int k = 0; k < q && rc == MPI_SUCCESS; k++) {
        int b = skips[k + 1] - skips[k], e = tuw_circ_epsilon(skips, k), scount, rcount;
        MPI_Aint soff, roff;
        MPI_Datatype stype = recvtype, rtype = recvtype;
        rc = tuw_block_range(recvcounts, rdispls, p, (rank + e) % p, b, recvtype, extent,
                             &soff, &scount, &stype);
        if (rc == MPI_SUCCESS)
            rc = tuw_block_range(recvcounts, rdispls, p, (rank + skips[k]) % p, b, recvtype,
                                 extent, &roff, &rcount, &rtype);
        if (rc == MPI_SUCCESS)
            rc = TUW_Sendrecv((char *)recvbuf + soff, scount, stype,
                              tuw_circ_to(p, rank, skips, k), k, (char *)recvbuf + roff,
                              rcount, rtype, tuw_circ_from(p, rank, skips, k), k, comm,
                              MPI_STATUS_IGNORE);
        tuw_block_range_free(&stype, recvtype);
        tuw_block_range_free(&rtype, recvtype);
    }
    return rc;
}
