/*
 * allreduce_butterfly.c - butterfly (recursive doubling) Allreduce with the correction for
 * p not a power of two: the "Standard" column of Table I in Träff, Hunold, Vardas, Funk,
 * "Uniform algorithms for reduce-scatter and (most) other collectives for MPI", the
 * baseline the circulant Allreduce is compared with.  Needs a commutative operator.
 *
 * p' = the largest power of two <= p, x = p - p'.  Pre-step: of the first 2x ranks each
 * even one sends its input to the odd one above it, which adds it, and sits out.  The p'
 * remaining ranks (new rank n: the odd ranks below 2x as n = r/2, then n = r - x) run
 * log2 p' rounds; in round k rank n exchanges its sum with n XOR 2^k and adds what it
 * gets.  Post-step: each odd rank below 2x sends the result to the even rank below it.
 * Tags: 0 for the pre-step, k + 1 for round k, log2 p' + 1 for the post-step.
 *
 * Cost (one-ported, bidirectional; m elements, gamma per element reduced):
 *     ceil(log2 p) (alpha + beta m + gamma m) + alpha + beta m          (Table I)
 * for p not a power of two (the pre-step is one of the ceil(log2 p) reducing steps, the
 * post-step the extra alpha + beta m), log2 p (alpha + beta m + gamma m) for a power of
 * two.  No copies: the first message is received into recvbuf and the input added to it.
 * Extra memory: m elements.
 *
 * Example, p = 6 (p' = 4, x = 2): pre-step 0 -> 1, 2 -> 3; rounds among 1, 3, 4, 5 (new
 * ranks 0..3): 1 <-> 3, 4 <-> 5, then 1 <-> 4, 3 <-> 5; post-step 1 -> 0, 3 -> 2.
 * MPI_IN_PLACE: the input is in recvbuf; messages are received into scratch space.
 * Model: tuwviz/model/reduce.py:allreduce_butterfly.
 */
#include <stdlib.h>
#include "tuwviz.h"

int TUW_Allreduce_butterfly(const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int rc, rank, p;
    void *mem = NULL;

    rc = tuw_reduction_begin(comm, op, 1, &rank, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return MPI_ERR_COUNT;
    int in_place = sendbuf == MPI_IN_PLACE;
    int pp = 1, rounds = 0;
    while (2 * pp <= p)
        pp *= 2, rounds++;
    int x = p - pp;
    if (p == 1)
        return in_place ? MPI_SUCCESS
                        : tuw_local_copy(sendbuf, count, datatype, recvbuf, count, datatype);
    char *temp = tuw_alloc_elems(count, datatype, &mem);
    if (!temp)
        return MPI_ERR_NO_MEM;
    /* `have`: what holds my current sum; my input alone until something is added */
    const void *have = in_place ? recvbuf : sendbuf;

    if (rank < 2 * x && rank % 2 == 0) { /* pre-step: hand my input over, wait for the end */
        rc = TUW_Send(have, count, datatype, rank + 1, 0, comm);
        if (rc == MPI_SUCCESS)
            rc = TUW_Recv(recvbuf, count, datatype, rank + 1, rounds + 1, comm,
                          MPI_STATUS_IGNORE);
        goto fn_exit;
    }
    for (int k = -1; k < rounds; k++) {
        int peer;
        if (k < 0) { /* the pre-step, receiving side */
            if (rank >= 2 * x)
                continue;
            peer = rank - 1;
        } else {
            int n = rank < 2 * x ? rank / 2 : rank - x, m = n ^ (1 << k);
            peer = m < x ? 2 * m + 1 : m + x;
        }
        int fresh = have != recvbuf; /* recvbuf does not hold my sum yet: receive into it */
        char *in = fresh ? recvbuf : temp;
        if (k < 0)
            rc = TUW_Recv(in, count, datatype, peer, 0, comm, MPI_STATUS_IGNORE);
        else
            rc = TUW_Sendrecv(have, count, datatype, peer, k + 1, in, count, datatype, peer,
                              k + 1, comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Reduce_local(fresh ? have : temp, recvbuf, count, datatype, op);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        have = recvbuf;
    }
    if (rank < 2 * x) /* post-step */
        rc = TUW_Send(recvbuf, count, datatype, rank - 1, rounds + 1, comm);

fn_exit:
    free(mem);
    return rc;
}
