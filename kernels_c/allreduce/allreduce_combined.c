/*
 * allreduce_combined.c - reduction-to-all as the circulant Reduce_scatter followed by the
 * circulant Allgatherv (Träff, Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter
 * and (most) other collectives for MPI", Section III-G; the right-hand side of Guideline
 * (4)).  Needs a commutative operator.
 *
 * The m = count elements are cut into p almost equal blocks (the first m mod p ranks one
 * element more); reduce_scatter_circulant.c leaves rank r's reduced block at its place in
 * recvbuf, and allgatherv_circulant.c (in place) brings every rank all the others.
 *
 * Cost (one-ported, bidirectional; q = ceil(log2 p), m elements, blocks of about m/p):
 *     2q alpha + beta ((2^q - 1) + (p - 1)) m/p + gamma (reduce-scatter's reductions and
 *     copies, about (2^q - 1) m/p + 2 m/p)
 * Twice the direct circulant Allreduce's rounds (q (alpha + beta m + 2 gamma m)), but
 * under 3 beta m in volume (2 (p-1)/p beta m for p a power of two) instead of q beta m: for
 * large m it wins, for small m the direct one does (Section IV-B: "a factor of two slower ... for smaller counts").  Extra
 * memory: the reduce-scatter's, plus one block with MPI_IN_PLACE.
 *
 * Example, p = 3, m = 7: blocks of 3, 2, 2 elements; the reduce-scatter (q = 2 rounds)
 * leaves rank 1 the sum of elements 3 .. 4 in recvbuf[3 .. 4]; the Allgatherv (2 rounds)
 * fills in 0 .. 2 and 5 .. 6.
 * Model: tuwviz/model/combined.py:allreduce_combined.
 */
#include "tuwviz.h"

TUW_PROTO(REDUCE_SCATTER, TUW_Reduce_scatter_circulant);
TUW_PROTO(ALLGATHERV, TUW_Allgatherv_circulant);

int TUW_Allreduce_combined(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm)
{
    return tuw_allreduce_combined(TUW_Reduce_scatter_circulant, TUW_Allgatherv_circulant, 1,
                                  sendbuf, recvbuf, count, datatype, op, comm);
}
