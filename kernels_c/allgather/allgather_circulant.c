/*
 * allgather_circulant.c - all-to-all broadcast on the circulant graph for any p (Träff,
 * Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other
 * collectives for MPI", Section III-E, Listing 7, Proposition 3).
 *
 * The reduction-to-all pattern with concatenation for the sum: after round k rank r holds
 * the blocks of ranks r .. r + skips[k+1] - 1 (mod p), in that order, in a buffer of
 * relative positions (position j holds the block of rank r + j).  In round k it receives
 * the b = skips[k+1] - skips[k] blocks of positions skips[k] .. skips[k+1] - 1 from
 * f = r + jump_k, which sends its positions e_k .. e_k + b - 1 (topology/circulant.c).
 *
 * The buffer trick: positions 0 .. last - 1 (last = skips[q-1] = ceil(p/2)) live in lowrbuf,
 * positions last .. p - 1 (the last round's floor(p/2) blocks) in upprbuf.  Of the two ranges
 * of ranks at most one wraps past p - 1; the other is received straight into recvbuf, and
 * only the wrapping one goes through scratch space and is copied afterwards: at most
 * ceil(p/2) blocks, none at rank 0 (Section III-E).
 *
 * Cost (one-ported, bidirectional; m = p c elements, gamma per element copied):
 *     ceil(log2 p) alpha + beta (p - 1) c + gamma (copies)               (Table I:
 *     ceil(log2 p) alpha + (p - 1)/p beta m + gamma ceil(m/2))
 * the copies being the own block (c, none with MPI_IN_PLACE when it lands in recvbuf) and
 * floor(p/2) or ceil(p/2) blocks after the rounds.  Extra memory: ceil(p/2) blocks.
 *
 * Example, p = 5 (skips 1 2 3 5, jumps 1 1 2, last = 3), rank 3: round 0 receives block 4
 * from 4, round 1 block 0 from 4 (its position 1), round 2 blocks 1, 2 from 0 (its
 * positions 1, 2) into upprbuf.  lowrbuf holds 3 4 0, which wraps (3 + 3 > 5): it is scratch
 * and is copied into recvbuf afterwards; upprbuf is recvbuf's blocks 1, 2 themselves.
 *
 * Corrected from Listing 7: its loop body uses i for the round (k) and `last` is
 * skips[q-1].  MPI_IN_PLACE: the own block is in recvbuf at its place.
 * Model: tuwviz/model/allgather.py:circulant.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

int TUW_Allgather_circulant(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc, rank, p, skips[TUW_CIRC_MAX_SKIPS];
    void *mem = NULL;
    MPI_Aint lb, ext;

    rc = tuw_allgather_begin(comm, sendbuf, sendcount, recvcount, &rank, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Type_get_extent(recvtype, &lb, &ext);
    MPI_Aint bs = (MPI_Aint)recvcount * ext; /* bytes between blocks */
    char *rbuf = recvbuf, *mine = rbuf + rank * bs;
    int in_place = sendbuf == MPI_IN_PLACE;
    int q = tuw_circ_skips(p, skips);
    if (q == 0)
        return in_place ? MPI_SUCCESS
                        : tuw_local_copy(sendbuf, sendcount, sendtype, mine, recvcount, recvtype);

    int last = skips[q - 1];
    int wraps = rank + last > p; /* which range goes through scratch space */
    char *lowrbuf, *upprbuf;
    if (!wraps) {
        lowrbuf = mine;
        if (rank == 0) { /* recvbuf itself, which may be NULL for a zero-size call */
            upprbuf = rbuf + (MPI_Aint)last * bs;
        } else if (!(upprbuf = tuw_alloc_elems((MPI_Aint)(p - last) * recvcount, recvtype,
                                               &mem))) {
            return MPI_ERR_NO_MEM;
        }
        if (!in_place)
            rc = tuw_local_copy(sendbuf, sendcount, sendtype, lowrbuf, recvcount, recvtype);
    } else {
        lowrbuf = tuw_alloc_elems((MPI_Aint)last * recvcount, recvtype, &mem);
        upprbuf = rbuf + (MPI_Aint)(rank + last - p) * bs;
        if (!lowrbuf)
            return MPI_ERR_NO_MEM;
        rc = in_place ? tuw_local_copy(mine, recvcount, recvtype, lowrbuf, recvcount, recvtype)
                      : tuw_local_copy(sendbuf, sendcount, sendtype, lowrbuf, recvcount,
                                       recvtype);
    }
    for (int k = 0; k < q && rc == MPI_SUCCESS; k++) {
        int b = skips[k + 1] - skips[k], e = tuw_circ_epsilon(skips, k);
        char *into = k < q - 1 ? lowrbuf + (MPI_Aint)skips[k] * bs : upprbuf;
        if ((rc = tuw_fits_int((long long)b * recvcount)) != MPI_SUCCESS)
            break;
        rc = TUW_Sendrecv(lowrbuf + (MPI_Aint)e * bs, b * recvcount, recvtype,
                          tuw_circ_to(p, rank, skips, k), k, into, b * recvcount, recvtype,
                          tuw_circ_from(p, rank, skips, k), k, comm, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS && wraps) { /* lowrbuf: ranks rank .. p-1, then 0 .. */
        int head = p - rank;
        rc = tuw_local_copy(lowrbuf, head * recvcount, recvtype, mine, head * recvcount,
                            recvtype);
        if (rc == MPI_SUCCESS)
            rc = tuw_local_copy(lowrbuf + (MPI_Aint)head * bs, (last - head) * recvcount,
                                recvtype, rbuf, (last - head) * recvcount, recvtype);
    } else if (rc == MPI_SUCCESS && rank > 0) { /* upprbuf: ranks rank+last .. p-1, 0 .. */
        int head = p - rank - last;
        char *tail = rbuf + (MPI_Aint)(rank + last) * bs;
        rc = tuw_local_copy(upprbuf, head * recvcount, recvtype, tail, head * recvcount,
                            recvtype);
        if (rc == MPI_SUCCESS)
            rc = tuw_local_copy(upprbuf + (MPI_Aint)head * bs, rank * recvcount, recvtype, rbuf,
                                rank * recvcount, recvtype);
    }
    free(mem);
    return rc;
}
