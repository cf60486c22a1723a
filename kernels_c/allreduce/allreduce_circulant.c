/*
 * allreduce_circulant.c - reduction-to-all on the circulant graph for any p (Träff,
 * Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other
 * collectives for MPI", Section III-B, Listing 2, Proposition 1): the census algorithm of
 * Bar-Noy, Kipnis and Schieber.  Needs a commutative operator.
 *
 * Invariant: after round k rank r holds S_r^k, the sum of the inputs of the skips[k+1] - 1
 * ranks after it (r+1 .. r+skips[k+1]-1, mod p), in partbuf, and V_r + S_r^k in recvbuf.
 * In round k it sends to t = r - jump_k and receives from f = r + jump_k
 * (topology/circulant.c): if skips[k+1] is even (e_k = 0) it sends V_r + S_r^(k-1)
 * (recvbuf), else S_r^(k-1) (partbuf), and adds what it receives to both sums.  After
 * q = ceil(log2 p) rounds recvbuf holds the sum of all p inputs, on every rank.
 * Two reductions per round, because MPI_Reduce_local has only two arguments (round 0 has
 * one, and the copy of sendbuf into recvbuf).  The paper notes the partbuf reductions of
 * the last rounds could be saved; the listing does them, and so does this kernel, so the
 * cost is Table I's exactly.
 *
 * Cost (one-ported, bidirectional; m elements, gamma per element reduced or copied):
 *     ceil(log2 p) (alpha + beta m + 2 gamma m)                       (Table I)
 * q rounds, m elements sent and received per round.  Extra memory: 2m elements.
 *
 * Example, p = 11 (Figure 2): skips 1 2 3 6 11, jumps 1 1 3 5, e = 0 1 0 1.  Rank 0 sends
 * to 10, 10, 8, 6 and receives from 1, 1, 3, 5: after round 0 it has S = V1 (partbuf),
 * after round 1 S = V1 + S_1^0 = V1 + V2, after round 2 (e = 0: rank 3 sends V3 + S_3^1)
 * S = V1..V5, after round 3 (e = 1: rank 5 sends S_5^2 = V6..V10) S = V1..V10.
 *
 * Corrected from Listing 2: its first ciro is ciri, the from-process (the receive's
 * source).  MPI_IN_PLACE: the input is in recvbuf and nothing is copied.
 *
 * Identical results on every rank.  Rank r ends with V_r + S_r^(q-1), the inputs summed
 * in an order and bracketing that start at r: every rank its own.  For integers, bitwise
 * operators and max/min that gives the same bits everywhere (tuw_order_free), and the
 * kernel is the paper's.  For a floating-point sum or product, or a user-defined operator,
 * rounding differs between orders and the ranks would disagree (MPICH's allred_float test
 * at N = 3..8; an iterative solver whose ranks disagree on a residual deadlocks).  No
 * schedule of ceil(log2 p) rounds of whole vectors can avoid that for p not a power of
 * two: every rank must end with the same last combination A + B, so half the ranks hold A
 * and half B before the last round, and so on down: p = 2^q.  So for those (datatype,
 * operator) pairs this kernel runs the butterfly (allreduce_butterfly.c), where the two
 * partners of every step combine the same two operands:
 *     p a power of two:  log2 p (alpha + beta m + gamma m), one reduction less per round
 *     otherwise:         ceil(log2 p) (alpha + beta m + gamma m) + alpha + beta m,
 *                        one round more than the paper's algorithm.
 * What it costs, measured: the row's note in `tuwviz list`.
 * Model: tuwviz/model/reduce.py:allreduce_circulant (the same choice, by
 * tuwviz.problems.order_free).
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

TUW_PROTO(ALLREDUCE, TUW_Allreduce_butterfly);

int TUW_Allreduce_circulant(const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int rc, rank, p, skips[TUW_CIRC_MAX_SKIPS];
    void *mem_part = NULL, *mem_temp = NULL;

    if (!tuw_order_free(datatype, op)) /* identical results need the butterfly: see above */
        return TUW_Allreduce_butterfly(sendbuf, recvbuf, count, datatype, op, comm);
    rc = tuw_reduction_begin(comm, op, 1, &rank, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return MPI_ERR_COUNT;
    if (sendbuf != MPI_IN_PLACE) {
        rc = tuw_local_copy(sendbuf, count, datatype, recvbuf, count, datatype);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    int q = tuw_circ_skips(p, skips);
    char *partbuf = tuw_alloc_elems(count, datatype, &mem_part);
    char *tempbuf = tuw_alloc_elems(count, datatype, &mem_temp);
    if (!partbuf || !tempbuf) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    char *inbuf = partbuf; /* round 0 receives S_r^0 = V_(r+1) straight into partbuf */
    for (int k = 0; k < q; k++) {
        void *outbuf = tuw_circ_epsilon(skips, k) ? partbuf : recvbuf;
        rc = TUW_Sendrecv(outbuf, count, datatype, tuw_circ_to(p, rank, skips, k), k,
                          inbuf, count, datatype, tuw_circ_from(p, rank, skips, k), k, comm,
                          MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        rc = MPI_Reduce_local(inbuf, recvbuf, count, datatype, op);
        if (rc == MPI_SUCCESS && inbuf == tempbuf)
            rc = MPI_Reduce_local(tempbuf, partbuf, count, datatype, op);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        inbuf = tempbuf;
    }

fn_exit:
    free(mem_part);
    free(mem_temp);
    return rc;
}
