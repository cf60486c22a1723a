/*
 * my_gather.c - MY_Gather: your Gather, with exactly MPI_Gather's signature and meaning.
 *
 * Every process contributes sendcount elements of sendtype; the root receives them, in
 * rank order, p blocks of recvcount elements of recvtype each (MPI-4.1, Section 6.5).
 * Only the type *signatures* must match: the root's recvtype may differ from the senders'
 * sendtype (e.g. MPI_Type_contiguous(2, MPI_INT) at the root, 2 MPI_INT elsewhere), and
 * a datatype may have gaps (MPI_Type_vector) - so forward other processes' data as bytes
 * (MPI_Type_size), never in counts of your own type.  At the root sendbuf may be
 * MPI_IN_PLACE: its block is then already in recvbuf.
 *
 * Your goal (see assignment.ipynb): a tree of ceil(log2 p) communication rounds in which
 * the root receives only the (p-1)/p m bytes it must, using as little temporary memory as
 * possible, and fast for any root (root 2 as well as root 0).
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

int MY_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rank, p;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);

    /* TODO 1: refuse a root outside 0..p-1 and negative counts. */

    /* TODO 2: the tree: who is my parent, who are my children, which blocks do I
     * collect?  (Virtual ranks relative to the root, or halves of the rank range.) */

    /* TODO 3: receive my children's blocks, add my own, send them to my parent; the
     * root puts every block at its place in recvbuf. */

    (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcount;
    (void)recvtype, (void)root, (void)rank, (void)p;
    return tuw_not_written("MY_Gather"); /* TODO: remove when MY_Gather works */
}
