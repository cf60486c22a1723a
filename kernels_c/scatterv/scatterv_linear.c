/*
 * scatterv_linear.c - linear (direct-from-root) Scatterv, the mirror of gatherv_linear.c.
 *
 * The root posts one non-blocking send per non-empty non-root block, in rank order,
 * straight from sendbuf at displs, and copies its own block locally.  Every non-root
 * process with a non-empty block receives it from the root.  Empty blocks are neither sent
 * nor received: both ends know the size (the root from sendcounts, the receiver from
 * recvcount).  Tag 0.
 *
 * Cost (one-ported, k = number of non-root processes with m_i > 0):
 *     k.alpha + beta.sum_{i != r} m_i
 * The root's port is the bottleneck: the "direct communication with the root" baseline of
 * Träff 2017 (Section 1).  Extra memory: p requests at the root.
 *
 * Example, p = 4, root 1, m = (2, 0, 1, 3): the root sends 2 elements to rank 0, 1 to
 * rank 2 and 3 to rank 3 (in that order) and copies its own (empty) block; rank 1 ... 3
 * each receive once, rank 1's block needs no message.  Model: tuwviz/model/scatterv.py:linear.
 */
#include <stdlib.h>
#include "tuwviz.h"

int TUW_Scatterv_linear(const void *sendbuf, const int sendcounts[], const int displs[],
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rc = MPI_SUCCESS, rank, p, nreq = 0;
    MPI_Request *reqs = NULL;
    MPI_Aint lb, extent;

    rc = tuw_rooted_begin(comm, root, &rank, &p); /* intra-communicator, valid root */
    if (rc != MPI_SUCCESS)
        return rc;
    if (recvcount < 0 && !(rank == root && recvbuf == MPI_IN_PLACE))
        return MPI_ERR_COUNT;

    if (rank != root) {
        if (recvcount > 0)
            rc = TUW_Recv(recvbuf, recvcount, recvtype, root, 0, comm, MPI_STATUS_IGNORE);
        return rc;
    }

    rc = MPI_Type_get_extent(sendtype, &lb, &extent);
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
        if (i == root || sendcounts[i] == 0)
            continue;
        const char *src = (const char *)sendbuf + (MPI_Aint)displs[i] * extent;
        rc = TUW_Isend(src, sendcounts[i], sendtype, i, 0, comm, &reqs[nreq++]);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    if (recvbuf != MPI_IN_PLACE && sendcounts[root] > 0) {
        const char *src = (const char *)sendbuf + (MPI_Aint)displs[root] * extent;
        rc = tuw_local_copy(src, sendcounts[root], sendtype, recvbuf, recvcount, recvtype);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);

fn_exit:
    if (rc != MPI_SUCCESS && reqs) /* no send may outlive the call */
        TUW_Abandon(nreq, reqs);
    free(reqs);
    return rc;
}
