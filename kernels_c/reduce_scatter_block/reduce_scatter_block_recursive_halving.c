/*
 * reduce_scatter_block_recursive_halving.c - recursive-halving Reduce_scatter_block with
 * the correction for p not a power of two: the butterfly baseline of the "Standard"
 * column of Table I in Träff, Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter
 * and (most) other collectives for MPI".  Needs a commutative operator.
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
 * Cost (one-ported, bidirectional; m = p c elements, gamma per element reduced or copied),
 * p not a power of two (a power of two has no pre- and post-step):
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
 * The algorithm is reduce_scatter/reduce_scatter_recursive_halving.c's with equal
 * blocks: this file passes it recvcounts of p times recvcount.
 * Model: tuwviz/model/reduce.py:reduce_scatter_block_recursive_halving.
 */
#include "tuwviz.h"

TUW_PROTO(REDUCE_SCATTER, TUW_Reduce_scatter_recursive_halving); /* the general case */

int TUW_Reduce_scatter_block_recursive_halving(const void *sendbuf, void *recvbuf, int recvcount,
                                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return tuw_reduce_scatter_regular(TUW_Reduce_scatter_recursive_halving, sendbuf, recvbuf,
                                      recvcount, datatype, op, comm);
}
