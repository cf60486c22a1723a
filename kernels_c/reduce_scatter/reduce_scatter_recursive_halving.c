/*
 * reduce_scatter_recursive_halving.c - recursive-halving Reduce_scatter (block i has
 * recvcounts[i] elements) with the correction for p not a power of two: the butterfly
 * baseline of the "Standard" column of Table I in Träff, Hunold, Vardas, Funk, "Uniform
 * algorithms for reduce-scatter and (most) other collectives for MPI".  Needs a
 * commutative operator.  reduce_scatter_block_recursive_halving.c is its regular case.
 *
 * p' = the largest power of two <= p, x = p - p'.  Pre-step: of the first 2x ranks each
 * even one sends its whole input (p blocks) to the odd one above it, which adds it, and
 * sits out.  The p' remaining ranks get new ranks n (odd ranks below 2x: n = r/2, then
 * n = r - x); new rank n answers for the result blocks lo(n) .. lo(n+1) - 1, lo(n) = 2n
 * for n < x and n + x after (both blocks of a pair, or its own).  Round k = 0 .. log2 p'
 * - 1: with d = p'/2^(k+1), rank n and its partner n XOR d split their current range of
 * new ranks in halves; each sends the blocks of the partner's half and adds the partner's
 * blocks of its own half.  After log2 p' rounds n holds its blocks summed; the post-step
 * sends block 2n to the even rank 2n that sat out.  Tags: 0 pre-step, k + 1 round k,
 * log2 p' + 1 post-step.
 *
 * Cost (one-ported, bidirectional; equal blocks, m = p c elements, gamma per element
 * reduced or copied), p not a power of two (a power of two has no pre- and post-step):
 *     alpha + (beta + gamma) m                                         (pre-step)
 *   + log2 p' alpha + (beta + gamma) (about (p' - 1)/p' m)             (halving)
 *   + alpha + beta m/p                                                 (post-step)
 *   + gamma m/p                                                        (own block copied)
 * The halving moves whole blocks: a half of new ranks holds as many blocks as it has
 * pairs plus ranks, so the volume of a round is what its half holds, not exactly m/2^k.
 * Table I's "butterfly" entry, alpha + beta m/2 + gamma m/2 + q alpha + (beta + gamma)
 * (2^q - 1) 2m/p + alpha + beta m/p, has a half-vector pre-step (an exchange of halves,
 * Rabenseifner-Träff 2004) and twice this volume even for p a power of two, where
 * recursive halving sends (p - 1)/p m; tests/test_reduction_model.py states both.
 * Extra memory: 2m elements.
 *
 * Example, p = 6 (p' = 4, x = 2; new ranks 0..3 = ranks 1, 3, 4, 5 answer for blocks
 * {0,1}, {2,3}, {4}, {5}): pre-step 0 -> 1 and 2 -> 3 (6 blocks each); round 0 (d = 2):
 * 1 <-> 4 and 3 <-> 5, ranks 1 and 3 send blocks 4, 5 and get blocks 0..3; round 1
 * (d = 1): 1 <-> 3 (1 sends 2, 3, gets 0, 1), 4 <-> 5 (4 sends 5, gets 4); post-step
 * 1 -> 0 (block 0), 3 -> 2 (block 2).
 * MPI_IN_PLACE: the input is in recvbuf; the result goes to its first block.
 * With unequal blocks a half's volume is the sum of its blocks' recvcounts.
 * Model: tuwviz/model/reduce.py:reduce_scatter_recursive_halving.
 */
#include <stdlib.h>
#include "tuwviz.h"

/* first result block of new rank n */
static int first_block(int n, int x) { return n < x ? 2 * n : n + x; }

int TUW_Reduce_scatter_recursive_halving(const void *sendbuf, void *recvbuf,
                                         const int recvcounts[], MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm)
{
    int rc, rank, p;
    void *mem_acc = NULL, *mem_temp = NULL;
    MPI_Aint lb, ext, *displ = NULL;

    rc = tuw_reduce_scatter_begin(comm, op, recvcounts, &rank, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Type_get_extent(datatype, &lb, &ext);
    displ = malloc(sizeof(MPI_Aint) * (size_t)(p + 1)); /* block i: displ[i] .. displ[i+1] */
    if (!displ)
        return MPI_ERR_NO_MEM;
    displ[0] = 0;
    for (int i = 0; i < p; i++)
        displ[i + 1] = displ[i] + recvcounts[i];
    const char *have = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf; /* my current sums */
    int pp = 1, rounds = 0, mine = recvcounts[rank];
    while (2 * pp <= p)
        pp *= 2, rounds++;
    int x = p - pp;
    if ((rc = tuw_fits_int(displ[p])) != MPI_SUCCESS)
        goto fn_exit;
    int total = (int)displ[p];
    char *acc = tuw_alloc_elems(total, datatype, &mem_acc);
    char *temp = tuw_alloc_elems(total, datatype, &mem_temp);
    if (!acc || !temp) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    if (rank < 2 * x && rank % 2 == 0) { /* pre-step: hand everything over, wait for my block */
        rc = TUW_Send(have, total, datatype, rank + 1, 0, comm);
        if (rc == MPI_SUCCESS)
            rc = TUW_Recv(recvbuf, mine, datatype, rank + 1, rounds + 1, comm,
                          MPI_STATUS_IGNORE);
        goto fn_exit;
    }
    if (rank < 2 * x) { /* pre-step, receiving side: acc = its input + mine */
        rc = TUW_Recv(acc, total, datatype, rank - 1, 0, comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Reduce_local(have, acc, total, datatype, op);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        have = acc;
    }
    int n = rank < 2 * x ? rank / 2 : rank - x, lo = 0, hi = pp; /* my range of new ranks */
    for (int k = 0; k < rounds; k++) {
        int d = pp >> (k + 1), partner = n ^ d, mid = lo + d;
        int peer = partner < x ? 2 * partner + 1 : partner + x;
        int keep_lo = n < mid ? lo : mid, keep_hi = n < mid ? mid : hi;
        int send_lo = n < mid ? mid : lo, send_hi = n < mid ? hi : mid;
        MPI_Aint kb = displ[first_block(keep_lo, x)], kn = displ[first_block(keep_hi, x)] - kb;
        MPI_Aint sb = displ[first_block(send_lo, x)], sn = displ[first_block(send_hi, x)] - sb;
        char *in = have == acc ? temp : acc; /* acc holds no sums yet: receive into it */
        rc = TUW_Sendrecv(have + sb * ext, (int)sn, datatype, peer, k + 1, in + kb * ext, (int)kn,
                          datatype, peer, k + 1, comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Reduce_local((in == acc ? have : temp) + kb * ext, acc + kb * ext, (int)kn,
                                  datatype, op);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        have = acc;
        lo = keep_lo, hi = keep_hi;
    }
    if (have + displ[rank] * ext != (char *)recvbuf) /* p = 1 in place: already there */
        rc = tuw_local_copy(have + displ[rank] * ext, mine, datatype, recvbuf, mine, datatype);
    if (rc == MPI_SUCCESS && rank < 2 * x) /* post-step: the block of the rank that sat out */
        rc = TUW_Send(have + displ[rank - 1] * ext, recvcounts[rank - 1], datatype, rank - 1,
                      rounds + 1, comm);

fn_exit:
    free(displ);
    free(mem_acc);
    free(mem_temp);
    return rc;
}
