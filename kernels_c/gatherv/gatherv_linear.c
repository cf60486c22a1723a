/*
 * gatherv_linear.c - linear (direct-to-root) Gatherv.
 *
 * Every non-root process sends its block straight to the root; the root posts one
 * non-blocking receive per non-empty block, in rank order, straight into place in recvbuf,
 * and copies its own block locally.  Empty blocks are neither sent nor received: both ends
 * know the size (the root from recvcounts, the sender from sendcount).
 *
 * Cost (one-ported, k = number of non-root processes with m_i > 0):
 *     k.alpha + beta.sum_{i != r} m_i
 * The root's port is the bottleneck; this is the "simple, direct to root" algorithm the
 * gatherv paper (Träff 2017, Section 1 and Table 1) finds in MPI libraries' MPI_Gatherv.
 * Extra memory: none at non-roots; p requests at the root.
 *
 * Example, p = 4, root 1, m = (2, 0, 1, 3): rank 0 sends 2 elements, rank 3 sends 3,
 * rank 2 sends 1; the root receives from 0, 2, 3 (in that order) and rank 1 copies its own
 * (empty) block.  Model: tuwviz/model/gatherv.py:linear.
 */
#include <stdlib.h>
#include <string.h>
#include "tuwviz.h"

int TUW_Gatherv_linear(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int displs[],
                       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rc = MPI_SUCCESS, rank, p, nreq = 0;
    MPI_Request *reqs = NULL;
    MPI_Aint lb, extent;

    rc = tuw_rooted_begin(comm, root, &rank, &p); /* intra-communicator, valid root */
    if (rc != MPI_SUCCESS)
        return rc;
    /* Checked before any communication, so a negative own count fails locally and no rank
     * waits for a message that never comes. */
    if (sendcount < 0 && !(rank == root && sendbuf == MPI_IN_PLACE))
        return MPI_ERR_COUNT;

    if (rank != root) {
        if (sendcount > 0)
            rc = TUW_Send(sendbuf, sendcount, sendtype, root, 0, comm);
        return rc;
    }

    for (int i = 0; i < p; i++) /* the root's counts: checked before anything is posted */
        if (recvcounts[i] < 0)
            return MPI_ERR_COUNT;
    rc = MPI_Type_get_extent(recvtype, &lb, &extent);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    reqs = malloc((size_t)p * sizeof *reqs);
    if (!reqs) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    for (int i = 0; i < p; i++)
        reqs[i] = MPI_REQUEST_NULL;
    for (int i = 0; i < p; i++) {
        if (i == root || recvcounts[i] == 0)
            continue;
        char *dst = (char *)recvbuf + (MPI_Aint)displs[i] * extent;
        rc = TUW_Irecv(dst, recvcounts[i], recvtype, i, 0, comm, &reqs[nreq++]);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    if (sendbuf != MPI_IN_PLACE && recvcounts[root] > 0) {
        char *dst = (char *)recvbuf + (MPI_Aint)displs[root] * extent;
        rc = tuw_local_copy(sendbuf, sendcount, sendtype, dst, recvcounts[root], recvtype);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);

fn_exit:
    if (rc != MPI_SUCCESS && reqs) /* no receive may outlive the call */
        TUW_Abandon(nreq, reqs);
    free(reqs);
    return rc;
}
