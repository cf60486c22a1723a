/*
 * allreduce_combined_native.c - reduction-to-all as the MPI library's MPI_Reduce_scatter
 * followed by its MPI_Allgatherv: the right-hand side of Guideline (4) of Träff, Hunold,
 * Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other collectives for
 * MPI", Section IV-C, built from the library's own operations.  The baseline Figure 7
 * normalizes the library's times to: a library whose MPI_Allreduce is slower than this
 * violates the guideline.
 *
 * The same cut as allreduce_combined.c (p almost equal blocks, rank r's block reduced to
 * its place in recvbuf, then an in-place Allgatherv).  Any operator the library accepts,
 * commutative or not: MPI_Reduce_scatter keeps the rank order.
 *
 * Cost: the library's Reduce_scatter plus its Allgatherv; not modelled (the library's
 * algorithms are its own).  Example: as allreduce_combined.c.
 */
#include "tuwviz.h"

int TUW_Allreduce_combined_native(const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return tuw_allreduce_combined(MPI_Reduce_scatter, MPI_Allgatherv, 0, sendbuf, recvbuf,
                                  count, datatype, op, comm);
}
