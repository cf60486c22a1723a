/*
 * reduce_scatter_circulant.c - the irregular reduce-scatter (MPI_Reduce_scatter: block i
 * has recvcounts[i] elements) on the circulant graph, for any p (Träff, Hunold, Vardas,
 * Funk, "Uniform algorithms for reduce-scatter and (most) other collectives for MPI",
 * Section III-D, Listings 5-6 with block sizes from recvcounts).  Needs a commutative
 * operator.  reduce_scatter_block_circulant.c is its regular case and calls it.
 *
 * The pattern of the regular algorithm, block for block: in round k rank r sends to
 * t = r - jump_k the partial sums of the blocks B_r^k and receives from f = r + jump_k
 * those of its own block and of B_r^(k+1), ..., B_r^(q-1), in the order it sends them on
 * (topology/circulant.c: tuw_circ_relative_blocks).  Every process knows recvcounts, so
 * it knows the size of every message; blocks are packed in send order once, in round 0,
 * and reduced in place afterwards.  A block goes out with r's own input in it when
 * skips[k+1] is even (e_k = 0), without when odd: round 0's "selective reduction" adds
 * V_r's blocks to exactly the segments of the rounds with e_k = 0.
 *
 * Cost (one-ported, bidirectional; gamma per element reduced or copied): ceil(log2 p)
 * rounds; round k moves the 2^(q-1-k) blocks of B_r^k, so with equal blocks of c elements
 * ceil(log2 p) alpha + (beta + gamma)(2^q - 1) c (Table I, Proposition 2), and in the
 * worst case (one block holds all m elements) up to ceil(log2 p) m: the "graceful
 * degradation" of Section III-D.  Not counted in Table I: round 0's permute-pack, the
 * copies of V_r's blocks into the e_k = 0 segments and of the result into recvbuf.
 * Extra memory: about twice the largest volume of a round, p + 2^q - 1 integers.
 *
 * Example, p = 9, rank 8 (Section III-D): jumps 1 1 2 4; it sends the blocks of ranks
 * 7 6 4 0 2 5 1 3 to rank 7 (their recvcounts summed), then 7 5 1 3 to 7, 6 2 to 6, 4 to
 * 4; it receives from rank 0 blocks 8 7 5 1 3 6 2 4, from 0 blocks 8 6 2 4, from 1 blocks
 * 8 4, from 3 block 8: its own block first, then those it passes on.
 *
 * Listing 6 copies the own block into recvbuf before round 0's selective reduction reads
 * the input; with MPI_IN_PLACE that would overwrite the input's first block, so the own
 * block is summed in scratch space and copied once all input blocks have been read.
 * MPI_IN_PLACE: the input (all blocks) is in recvbuf; the result goes to its start.
 * Model: tuwviz/model/reduce.py:reduce_scatter_circulant.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

int TUW_Reduce_scatter_circulant(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int rc, rank, p, skips[TUW_CIRC_MAX_SKIPS];
    int *order = NULL;
    MPI_Aint *displ = NULL, *off = NULL, lb, ext;
    void *mem_part = NULL, *mem_temp = NULL;

    rc = tuw_reduce_scatter_begin(comm, op, recvcounts, &rank, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Type_get_extent(datatype, &lb, &ext);
    const char *input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int mine = recvcounts[rank], q = tuw_circ_skips(p, skips);
    if (q == 0)
        return sendbuf == MPI_IN_PLACE
                   ? MPI_SUCCESS
                   : tuw_local_copy(sendbuf, mine, datatype, recvbuf, mine, datatype);

    int b = 1 << (q - 1), nb = 2 * b - 1; /* blocks sent in round 0; in all rounds */
    displ = malloc(sizeof(MPI_Aint) * (size_t)p); /* input block i starts at displ[i] */
    order = malloc(sizeof(int) * (size_t)nb);      /* the rank of each block sent, in order */
    off = malloc(sizeof(MPI_Aint) * (size_t)b);    /* offsets of rounds 1.. in partbuf */
    if (!displ || !order || !off) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    displ[0] = 0;
    for (int i = 1; i < p; i++)
        displ[i] = displ[i - 1] + recvcounts[i - 1];
    tuw_circ_relative_blocks(0, 0, q, skips, 0, order);
    for (int j = 0; j < nb; j++)
        order[j] = (rank - order[j] + p) % p; /* offset x names the block of rank - x */
    long long first = 0; /* elements sent in round 0 */
    for (int j = 0; j < b; j++)
        first += recvcounts[order[j]];
    off[0] = 0; /* partbuf after round 0: the segments of rounds 1 .. q-1, b - 1 blocks */
    for (int i = 0; i + 1 < b; i++)
        off[i + 1] = off[i] + recvcounts[order[b + i]];
    long long rest = off[b - 1], got = mine + rest; /* round 0 receives my block + rest */
    if ((rc = tuw_fits_int(first)) != MPI_SUCCESS || (rc = tuw_fits_int(got)) != MPI_SUCCESS)
        goto fn_exit;
    char *partbuf = tuw_alloc_elems(first > rest ? first : rest, datatype, &mem_part);
    char *tempbuf = tuw_alloc_elems(got, datatype, &mem_temp);
    if (!partbuf || !tempbuf) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
#define INPUT(i) (input + displ[i] * ext)

    /* round 0: pack B_r^0 in send order, exchange, add my input to my own block */
    MPI_Aint pos = 0;
    for (int j = 0; j < b && rc == MPI_SUCCESS; j++) {
        int n = recvcounts[order[j]];
        rc = tuw_local_copy(INPUT(order[j]), n, datatype, partbuf + pos * ext, n, datatype);
        pos += n;
    }
    if (rc == MPI_SUCCESS)
        rc = TUW_Sendrecv(partbuf, (int)first, datatype, tuw_circ_to(p, rank, skips, 0), 0,
                          tempbuf, (int)got, datatype, tuw_circ_from(p, rank, skips, 0), 0,
                          comm, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = MPI_Reduce_local(INPUT(rank), tempbuf, mine, datatype, op);
    /* round 0's selective reduction: partbuf becomes the segments of rounds 1 .. q-1, the
     * received partial sums, plus my input where the segment's round has e = 0 */
    int boff = 0, seg = b;
    for (int i = 1; i < q && rc == MPI_SUCCESS; i++) {
        seg >>= 1;
        int n = (int)(off[boff + seg] - off[boff]);
        char *dst = partbuf + off[boff] * ext, *from = tempbuf + (mine + off[boff]) * ext;
        if (tuw_circ_epsilon(skips, i) == 0) {
            for (int j = boff; j < boff + seg && rc == MPI_SUCCESS; j++) {
                int c = recvcounts[order[b + j]];
                rc = tuw_local_copy(INPUT(order[b + j]), c, datatype, partbuf + off[j] * ext, c,
                                    datatype);
            }
            if (rc == MPI_SUCCESS)
                rc = MPI_Reduce_local(from, dst, n, datatype, op);
        } else {
            rc = tuw_local_copy(from, n, datatype, dst, n, datatype);
        }
        boff += seg;
    }
    /* every input block has been read: my block's sum can go to recvbuf (in place too) */
    if (rc == MPI_SUCCESS)
        rc = tuw_local_copy(tempbuf, mine, datatype, recvbuf, mine, datatype);
#undef INPUT

    /* rounds 1 .. q-1: send a segment; what comes back is my block and the later segments */
    boff = 0, seg = b;
    for (int i = 1; i < q && rc == MPI_SUCCESS; i++) {
        seg >>= 1;
        int n = (int)(off[boff + seg] - off[boff]), after = (int)(rest - off[boff + seg]);
        rc = TUW_Sendrecv(partbuf + off[boff] * ext, n, datatype, tuw_circ_to(p, rank, skips, i),
                          i, tempbuf, mine + after, datatype, tuw_circ_from(p, rank, skips, i),
                          i, comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Reduce_local(tempbuf, recvbuf, mine, datatype, op);
        if (rc == MPI_SUCCESS && after > 0)
            rc = MPI_Reduce_local(tempbuf + (MPI_Aint)mine * ext, partbuf + off[boff + seg] * ext,
                                  after, datatype, op);
        boff += seg;
    }

fn_exit:
    free(displ);
    free(order);
    free(off);
    free(mem_part);
    free(mem_temp);
    return rc;
}
