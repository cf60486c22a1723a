/*
 * reduce_scatter_block_circulant.c - reduce-scatter on the circulant graph for any p
 * (Träff, Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other
 * collectives for MPI", Section III-D, Listings 5-6, Proposition 2).  Needs a commutative
 * operator.
 *
 * The reduction-to-all pattern, per block: in round k rank r sends to t = r - jump_k the
 * partial sums of the blocks B_r^k (2^(q-1-k) of them: t's own block and every block t
 * passes on later) and receives from f = r + jump_k its own block's partial sum and
 * those of B_r^(k+1), ..., B_r^(q-1), in the order r sends them on
 * (topology/circulant.c: tuw_circ_relative_blocks).  So all reductions are in place and
 * nothing is reordered after round 0, which packs the input into send order once.
 * As in the reduction-to-all, a block goes out with r's own input in it when
 * skips[k+1] is even (e_k = 0) and without when it is odd: round 0's "selective
 * reduction" puts V_r's blocks into exactly the segments of the rounds with e_k = 0.
 *
 * Cost (one-ported, bidirectional; m = p c elements of input, c per block, gamma per
 * element reduced or copied):
 *     ceil(log2 p) alpha + (beta + gamma) (2^q - 1) c                 (Table I)
 * q = ceil(log2 p) rounds sending 2^(q-1), 2^(q-2), ..., 1 blocks: (2^q - 1)/p m in all,
 * and as many blocks reduced (a received block without own input is copied instead).
 * Not in Table I: round 0's permute-pack of 2^(q-1) blocks, the copy of V_r's blocks into
 * the e_k = 0 segments (2^(q-1-k) blocks each) and of the result block into recvbuf.
 * Extra memory: 2^q blocks and 2^q - 1 ints.
 *
 * Example, p = 9, rank 8 (Section III-D): jumps 1 1 2 4; it sends B_8^0 = blocks
 * 7 6 4 0 2 5 1 3 to rank 7, then 7 5 1 3 to 7, 6 2 to 6, 4 to 4; it receives from rank 0
 * blocks 8 7 5 1 3 6 2 4 (its own, then the 4 + 2 + 1 it passes on), from 0 blocks 8 6 2 4,
 * from 1 blocks 8 4, from 3 block 8.
 *
 * Listing 6 copies the own block into recvbuf before round 0's selective reduction reads
 * the input; with MPI_IN_PLACE that would overwrite block 0 of the input, so the own block
 * is summed in scratch space and copied once all input blocks have been read.
 * The algorithm is reduce_scatter/reduce_scatter_circulant.c's with equal blocks: this
 * file passes it recvcounts of p times recvcount.
 * Model: tuwviz/model/reduce.py:reduce_scatter_block_circulant.
 */
#include "tuwviz.h"

TUW_PROTO(REDUCE_SCATTER, TUW_Reduce_scatter_circulant); /* the general case */

int TUW_Reduce_scatter_block_circulant(const void *sendbuf, void *recvbuf, int recvcount,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return tuw_reduce_scatter_regular(TUW_Reduce_scatter_circulant, sendbuf, recvbuf,
                                      recvcount, datatype, op, comm);
}
