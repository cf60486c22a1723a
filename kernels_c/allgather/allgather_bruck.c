/*
 * allgather_bruck.c - Bruck's all-to-all broadcast (Bruck, Ho, Kipnis, Upfal, Weathersby,
 * IEEE TPDS 1997), the "Bruck" row of Table I in Träff, Hunold, Vardas, Funk, "Uniform
 * algorithms for reduce-scatter and (most) other collectives for MPI": straight doubling,
 * the baseline of the circulant Allgather.
 *
 * Rank r collects blocks in a scratch buffer in relative order (position j holds the block
 * of rank r + j mod p), its own first.  In round k = 0 .. ceil(log2 p) - 1 it sends its
 * first min(2^k, p - 2^k) positions to r - 2^k and receives as many from r + 2^k into
 * positions 2^k ...: after the rounds it has all p.  Then it copies them into recvbuf in
 * rank order: all p blocks, twice the circulant Allgather's copy (Section III-E: the
 * doubling pattern cannot keep the wrapping range small).
 *
 * Cost (one-ported, bidirectional; m = p c elements, gamma per element copied):
 *     ceil(log2 p) alpha + (p - 1)/p beta m + gamma m                  (Table I, Bruck)
 * plus the own block's copy into the scratch buffer (gamma m/p).  Extra memory: m.
 *
 * Example, p = 5, rank 3: round 0 gets block 4 from 4, round 1 blocks 0, 1 from 0 (its
 * positions 0, 1), round 2 block 2 from 2 (its position 0); scratch 3 4 0 1 2 is copied
 * into recvbuf as 0 1 2 | 3 4.
 * MPI_IN_PLACE: the own block is taken from recvbuf.
 * Model: tuwviz/model/allgather.py:bruck.
 */
#include <stdlib.h>
#include "tuwviz.h"

int TUW_Allgather_bruck(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc, rank, p;
    void *mem = NULL;
    MPI_Aint lb, ext;

    rc = tuw_allgather_begin(comm, sendbuf, sendcount, recvcount, &rank, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Type_get_extent(recvtype, &lb, &ext);
    MPI_Aint bs = (MPI_Aint)recvcount * ext;
    char *rbuf = recvbuf, *mine = rbuf + rank * bs;
    if (p == 1)
        return sendbuf == MPI_IN_PLACE
                   ? MPI_SUCCESS
                   : tuw_local_copy(sendbuf, sendcount, sendtype, mine, recvcount, recvtype);
    char *tmp = tuw_alloc_elems((MPI_Aint)p * recvcount, recvtype, &mem);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    rc = sendbuf == MPI_IN_PLACE
             ? tuw_local_copy(mine, recvcount, recvtype, tmp, recvcount, recvtype)
             : tuw_local_copy(sendbuf, sendcount, sendtype, tmp, recvcount, recvtype);
    for (int k = 0, d = 1; d < p && rc == MPI_SUCCESS; k++, d *= 2) {
        int n = d < p - d ? d : p - d;
        if ((rc = tuw_fits_int((long long)n * recvcount)) != MPI_SUCCESS)
            break;
        rc = TUW_Sendrecv(tmp, n * recvcount, recvtype, (rank - d + p) % p, k,
                          tmp + (MPI_Aint)d * bs, n * recvcount, recvtype, (rank + d) % p, k,
                          comm, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS) /* positions 0 .. p-rank-1 are ranks rank .. p-1 */
        rc = tuw_local_copy(tmp, (p - rank) * recvcount, recvtype, mine, (p - rank) * recvcount,
                            recvtype);
    if (rc == MPI_SUCCESS && rank > 0)
        rc = tuw_local_copy(tmp + (MPI_Aint)(p - rank) * bs, rank * recvcount, recvtype, rbuf,
                            rank * recvcount, recvtype);
    free(mem);
    return rc;
}
