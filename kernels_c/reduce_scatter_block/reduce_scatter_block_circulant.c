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
 * Model: tuwviz/model/reduce.py:reduce_scatter_block_circulant.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

int TUW_Reduce_scatter_block_circulant(const void *sendbuf, void *recvbuf, int recvcount,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int rc, rank, p, skips[TUW_CIRC_MAX_SKIPS];
    int *block = NULL;
    void *mem_part = NULL, *mem_temp = NULL;
    MPI_Aint lb, extent;

    rc = tuw_reduction_begin(comm, op, 1, &rank, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Type_get_extent(datatype, &lb, &extent);
    const char *input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    MPI_Aint bsize = (MPI_Aint)recvcount * extent; /* bytes between blocks */
    int q = tuw_circ_skips(p, skips);
    if (q == 0)
        return sendbuf == MPI_IN_PLACE
                   ? MPI_SUCCESS
                   : tuw_local_copy(sendbuf, recvcount, datatype, recvbuf, recvcount, datatype);

    int b = 1 << (q - 1); /* blocks sent in round 0 */
    block = malloc(sizeof(int) * (size_t)(2 * b - 1));
    char *partbuf = tuw_alloc_elems((MPI_Aint)b * recvcount, datatype, &mem_part);
    char *tempbuf = tuw_alloc_elems((MPI_Aint)b * recvcount, datatype, &mem_temp);
    if (!block || !partbuf || !tempbuf) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    tuw_circ_relative_blocks(0, 0, q, skips, 0, block);
#define INPUT(x) (input + (MPI_Aint)((rank - (x) + p) % p) * bsize) /* block of rank - x */

    /* round 0: pack B_r^0 in send order, exchange, add my input to my own block */
    for (int j = 0; j < b && rc == MPI_SUCCESS; j++)
        rc = tuw_local_copy(INPUT(block[j]), recvcount, datatype, partbuf + j * bsize,
                            recvcount, datatype);
    if (rc == MPI_SUCCESS)
        rc = TUW_Sendrecv(partbuf, b * recvcount, datatype, tuw_circ_to(p, rank, skips, 0), 0,
                          tempbuf, b * recvcount, datatype, tuw_circ_from(p, rank, skips, 0),
                          0, comm, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = MPI_Reduce_local(INPUT(0), tempbuf, recvcount, datatype, op);
    /* round 0's selective reduction: partbuf becomes B_r^1 .. B_r^(q-1), each segment the
     * received partial sums, plus my input where the segment's round has e = 0 */
    int boff = 0, seg = b;
    for (int i = 1; i < q && rc == MPI_SUCCESS; i++) {
        seg >>= 1;
        char *dst = partbuf + boff * bsize, *got = tempbuf + (boff + 1) * bsize;
        if (tuw_circ_epsilon(skips, i) == 0) {
            for (int j = 0; j < seg && rc == MPI_SUCCESS; j++)
                rc = tuw_local_copy(INPUT(block[b + boff + j]), recvcount, datatype,
                                    dst + j * bsize, recvcount, datatype);
            if (rc == MPI_SUCCESS)
                rc = MPI_Reduce_local(got, dst, seg * recvcount, datatype, op);
        } else {
            rc = tuw_local_copy(got, seg * recvcount, datatype, dst, seg * recvcount, datatype);
        }
        boff += seg;
    }
    /* every input block has been read: my block's sum can go to recvbuf (in place too) */
    if (rc == MPI_SUCCESS)
        rc = tuw_local_copy(tempbuf, recvcount, datatype, recvbuf, recvcount, datatype);
#undef INPUT

    /* rounds 1 .. q-1: send a segment, reduce what comes back into my block and the rest */
    char *part = partbuf;
    for (int i = 1; i < q && rc == MPI_SUCCESS; i++) {
        b >>= 1;
        rc = TUW_Sendrecv(part, b * recvcount, datatype, tuw_circ_to(p, rank, skips, i), i,
                          tempbuf, b * recvcount, datatype, tuw_circ_from(p, rank, skips, i),
                          i, comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Reduce_local(tempbuf, recvbuf, recvcount, datatype, op);
        part += b * bsize;
        if (rc == MPI_SUCCESS && b > 1)
            rc = MPI_Reduce_local(tempbuf + bsize, part, (b - 1) * recvcount, datatype, op);
    }

fn_exit:
    free(block);
    free(mem_part);
    free(mem_temp);
    return rc;
}
