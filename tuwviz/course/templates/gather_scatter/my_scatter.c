/*
 * my_scatter.c - MY_Scatter: your Scatter, with exactly MPI_Scatter's signature and meaning.
 *
 * The root holds p blocks of sendcount elements of sendtype, in rank order; process i
 * receives block i as recvcount elements of recvtype (MPI-4.1, Section 6.6).  Only the
 * type *signatures* must match: the root's sendtype may differ from the receivers'
 * recvtype, and a datatype may have gaps (MPI_Type_vector) - so forward other processes'
 * data as bytes (MPI_Type_size), never in counts of your own type.  At the root recvbuf
 * may be MPI_IN_PLACE: the root's block then stays where it is in sendbuf.
 *
 * Your goal (see assignment.ipynb): ceil(log2 p) communication rounds, the root sending
 * only the (p-1)/p m bytes it must, little temporary memory, fast for any root.
 *
 * Communicate only through these wrappers: they are the MPI functions of the same name
 * and also record every message, which is how `tuwviz grade` counts your rounds and bytes:
 *   TUW_Send, TUW_Recv, TUW_Sendrecv, TUW_Isend, TUW_Irecv, TUW_Wait, TUW_Waitall
 * and copy a block locally with
 *   tuw_local_copy(src, scount, stype, dst, rcount, rtype)
 * Return MPI_SUCCESS, or an MPI error code (MPI_ERR_ROOT for a root outside 0..p-1,
 * MPI_ERR_COUNT for a negative count).
 */
#include <stdlib.h>
#include "tuwviz.h"

int MY_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
               void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rank, p;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);

    /* TODO 1: refuse a root outside 0..p-1 and negative counts. */

    /* TODO 2: the tree: who sends me my blocks, to whom do I pass which of them? */

    /* TODO 3: receive my part from my parent, send each child its blocks, keep my own
     * block in recvbuf. */

    (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcount;
    (void)recvtype, (void)root, (void)rank, (void)p;
    return tuw_not_written("MY_Scatter"); /* TODO: remove when MY_Scatter works */
}
