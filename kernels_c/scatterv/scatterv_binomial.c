/*
 * scatterv_binomial.c - fixed, block-size-oblivious binomial-tree Scatterv (the baseline
 * of Träff 2017, Section 1), the reverse of gatherv_binomial.c.
 *
 * The tree (topology/binomial.c, tuw_binomial_tree_create) is in virtual ranks relative to
 * the root: v = (rank - root) mod p.  A process receives its subtree - virtual ranks
 * v .. min(v + lowbit(v), p) - 1 - from v - lowbit(v) (the root holds everything), then
 * sends each child v + 2^k, largest subtree first (k descending), its subtree's blocks,
 * which start at block 2^k of its own.  The tree ignores block sizes: every child receives
 * a data message, even of 0 bytes.  Tag = round k.
 *
 * Learning sizes: only the root knows sendcounts.  A child whose subtree has more than one
 * process first receives the counts of the rest of its subtree (virtual ranks v+1 ..; it
 * knows its own: recvcount) as one MPI_INT message of 4 (size - 1) bytes, sent just before
 * the data with the same tag; leaves get no counts message.  Cost of this: one more alpha
 * and 4 (size - 1) beta on every edge to an inner process.
 *
 * Reordering at the root (root != 0): a subtree that wraps from rank p-1 to rank 0 is sent
 * with an indexed datatype (block_range.c) gathering both pieces from sendbuf: no
 * temporary buffer, no copy in the kernel (MPI packs one more segment).  At most one
 * child of the root wraps.  Inner processes keep their subtree in virtual rank order.
 *
 * Cost (one-ported, m_i in bytes, D = ceil(log2 p)): worst case (all blocks empty but the
 * farthest) D (alpha + beta sum m_i) as for the gather, plus the counts messages: at most
 * D alpha + 4 (p - 1) beta more on the root's port.
 * Extra memory: a buffer of the subtree's size and its counts at inner non-root processes.
 *
 * Example, p = 6, root 2 (virtual v = rank - 2 mod 6): the root sends v4 (rank 0) the
 * counts of v5 (rank 1), then blocks of ranks 0, 1 (tag 2); v2 (rank 4) the count of v3,
 * then blocks of ranks 4, 5 (tag 1); v1 (rank 3) its block (tag 0).  Then 0 sends rank 1
 * and 4 sends rank 5 their blocks (tag 0).
 * Model: tuwviz/model/scatterv.py:binomial.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "block_range.h"
#include "topology.h"

int TUW_Scatterv_binomial(const void *sendbuf, const int sendcounts[], const int displs[],
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rc = MPI_SUCCESS, rank, p, nreq = 0, ntypes = 0;
    MPI_Aint lb, extent;
    MPI_Request reqs[2 * TUW_BINOMIAL_MAX_CHILDREN];
    MPI_Datatype types[TUW_BINOMIAL_MAX_CHILDREN];
    int *vcounts = NULL; /* counts in virtual rank order (root: all; others: subtree) */
    char *buf = NULL;
    tuw_binomial_tree t;

    for (int k = 0; k < 2 * TUW_BINOMIAL_MAX_CHILDREN; k++) /* NULL: safe to abandon on any error path */
        reqs[k] = MPI_REQUEST_NULL;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (root < 0 || root >= p)
        return MPI_ERR_ROOT;
    if (recvcount < 0 && !(rank == root && recvbuf == MPI_IN_PLACE))
        return MPI_ERR_COUNT;
    tuw_binomial_tree_create(p, rank, root, &t);

    if (rank == root) {
        rc = MPI_Type_get_extent(sendtype, &lb, &extent);
        if (rc != MPI_SUCCESS)
            return rc;
        vcounts = malloc((size_t)p * sizeof *vcounts);
        if (!vcounts)
            return MPI_ERR_NO_MEM;
        for (int u = 0; u < p; u++)
            vcounts[u] = sendcounts[(root + u) % p];
        for (int k = t.nchildren - 1; k >= 0; k--) {
            const tuw_binomial_edge *e = &t.child[k];
            MPI_Aint off;
            int count;
            if (e->size > 1) {
                rc = TUW_Isend(&vcounts[e->first + 1], e->size - 1, MPI_INT, e->rank, e->round,
                               comm, &reqs[nreq++]);
                if (rc != MPI_SUCCESS)
                    goto fn_exit;
            }
            rc = tuw_block_range(sendcounts, displs, p, e->rank, e->size, sendtype, extent,
                                 &off, &count, &types[ntypes]);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
            rc = TUW_Isend((const char *)sendbuf + off, count, types[ntypes], e->rank, e->round,
                           comm, &reqs[nreq++]);
            ntypes++;
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        if (recvbuf != MPI_IN_PLACE && sendcounts[root] > 0) {
            rc = tuw_local_copy((const char *)sendbuf + (MPI_Aint)displs[root] * extent,
                                sendcounts[root], sendtype, recvbuf, recvcount, recvtype);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        goto fn_exit;
    }

    rc = MPI_Type_get_extent(recvtype, &lb, &extent);
    if (rc != MPI_SUCCESS)
        return rc;
    if (t.size == 1) { /* a leaf: my block only, straight into recvbuf */
        rc = TUW_Recv(recvbuf, recvcount, recvtype, t.parent, t.round, comm, MPI_STATUS_IGNORE);
        goto fn_exit;
    }

    /* vcounts[u] = count of virtual rank v + u (u = 0: mine) */
    vcounts = malloc((size_t)t.size * sizeof *vcounts);
    if (!vcounts)
        return MPI_ERR_NO_MEM;
    vcounts[0] = recvcount;
    rc = TUW_Recv(&vcounts[1], t.size - 1, MPI_INT, t.parent, t.round, comm,
                  MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    long long total = 0;
    for (int u = 0; u < t.size; u++)
        total += vcounts[u];
    /* the subtree's sum bounds every child's count: one check before any message */
    rc = tuw_fits_int(total);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    buf = malloc((size_t)(total > 0 ? total : 1) * (size_t)extent);
    if (!buf) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    rc = TUW_Recv(buf, (int)total, recvtype, t.parent, t.round, comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    for (int k = t.nchildren - 1; k >= 0; k--) {
        const tuw_binomial_edge *e = &t.child[k];
        long long off = 0, count = 0;
        for (int u = 0; u < e->first; u++)
            off += vcounts[u];
        for (int u = e->first; u < e->first + e->size; u++)
            count += vcounts[u];
        if (e->size > 1) {
            rc = TUW_Isend(&vcounts[e->first + 1], e->size - 1, MPI_INT, e->rank, e->round,
                           comm, &reqs[nreq++]);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        rc = TUW_Isend(buf + off * extent, (int)count, recvtype, e->rank, e->round, comm,
                       &reqs[nreq++]);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    if (recvcount > 0) {
        rc = tuw_local_copy(buf, recvcount, recvtype, recvbuf, recvcount, recvtype);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);

fn_exit:
    if (rc != MPI_SUCCESS) /* complete or cancel what is posted before buffers go */
        TUW_Abandon(nreq, reqs);
    for (int k = 0; k < ntypes; k++) {
        int rc2 = tuw_block_range_free(&types[k], sendtype);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    free(vcounts);
    free(buf);
    return rc;
}
