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
 * process first receives the sizes of the rest of its subtree (virtual ranks v+1 ..; it
 * knows its own: recvcount) as one MPI_INT64_T message of 8 (size - 1) bytes, sent just
 * before the data with the same tag; leaves get no sizes message.  Cost of this: one more
 * alpha and 8 (size - 1) beta on every edge to an inner process.
 *
 * Sizes are bytes of the type signature, and inner processes keep their subtree as bytes
 * (MPI_BYTE), never in units of a datatype: MPI lets the root's sendtype and each
 * process's recvtype differ (only the signatures must match), e.g. the root sends one
 * MPI_Type_contiguous(2, MPI_INT) per process while each receives 2 MPI_INT.  Counting
 * the root's sendcounts in an inner process's recvtype would receive the wrong amount.
 *
 * Reordering at the root (root != 0): a subtree that wraps from rank p-1 to rank 0 is sent
 * with an indexed datatype (block_range.c) gathering both pieces from sendbuf: no
 * temporary buffer, no copy in the kernel (MPI packs one more segment).  At most one
 * child of the root wraps.  Inner processes keep their subtree in virtual rank order.
 *
 * Cost (one-ported, m_i in bytes, D = ceil(log2 p)): worst case (all blocks empty but the
 * farthest) D (alpha + beta sum m_i) as for the gather, plus the counts messages: at most
 * D alpha + 4 (p - 1) beta more on the root's port.
 * Extra memory: a buffer of the subtree's bytes and its sizes at inner non-root processes.
 *
 * Example, p = 6, root 2 (virtual v = rank - 2 mod 6): the root sends v4 (rank 0) the
 * size of v5 (rank 1), then blocks of ranks 0, 1 (tag 2); v2 (rank 4) the size of v3,
 * then blocks of ranks 4, 5 (tag 1); v1 (rank 3) its block (tag 0).  Then 0 sends rank 1
 * and 4 sends rank 5 their blocks (tag 0).
 * Model: tuwviz/model/scatterv.py:binomial.
 */
#include <stdint.h>
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
    int64_t *vbytes = NULL; /* bytes in virtual rank order (root: all; others: subtree) */
    char *buf = NULL;
    tuw_binomial_tree t;

    for (int k = 0; k < 2 * TUW_BINOMIAL_MAX_CHILDREN; k++) /* NULL: safe to abandon on any error path */
        reqs[k] = MPI_REQUEST_NULL;
    rc = tuw_rooted_begin(comm, root, &rank, &p); /* intra-communicator, valid root */
    if (rc != MPI_SUCCESS)
        return rc;
    if (recvcount < 0 && !(rank == root && recvbuf == MPI_IN_PLACE))
        return MPI_ERR_COUNT;
    tuw_binomial_tree_create(p, rank, root, &t);

    if (rank == root) {
        int ssize;
        rc = MPI_Type_get_extent(sendtype, &lb, &extent);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_size(sendtype, &ssize);
        if (rc != MPI_SUCCESS)
            return rc;
        vbytes = malloc((size_t)p * sizeof *vbytes);
        if (!vbytes)
            return MPI_ERR_NO_MEM;
        for (int u = 0; u < p; u++)
            vbytes[u] = (int64_t)sendcounts[(root + u) % p] * ssize;
        for (int k = t.nchildren - 1; k >= 0; k--) {
            const tuw_binomial_edge *e = &t.child[k];
            MPI_Aint off;
            int count;
            if (e->size > 1) {
                rc = TUW_Isend(&vbytes[e->first + 1], e->size - 1, MPI_INT64_T, e->rank,
                               e->round, comm, &reqs[nreq++]);
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

    if (t.size == 1) { /* a leaf: my block only, straight into recvbuf */
        rc = TUW_Recv(recvbuf, recvcount, recvtype, t.parent, t.round, comm, MPI_STATUS_IGNORE);
        goto fn_exit;
    }

    /* vbytes[u] = bytes of virtual rank v + u (u = 0: mine, from my recvcount and type) */
    int rsize;
    rc = MPI_Type_size(recvtype, &rsize);
    if (rc != MPI_SUCCESS)
        return rc;
    vbytes = malloc((size_t)t.size * sizeof *vbytes);
    if (!vbytes)
        return MPI_ERR_NO_MEM;
    vbytes[0] = (int64_t)recvcount * rsize;
    rc = TUW_Recv(&vbytes[1], t.size - 1, MPI_INT64_T, t.parent, t.round, comm,
                  MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    long long total = 0;
    for (int u = 0; u < t.size; u++)
        total += vbytes[u];
    /* the subtree's sum bounds every child's size: one check before any message */
    rc = tuw_fits_int(total);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    buf = malloc((size_t)(total > 0 ? total : 1));
    if (!buf) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    rc = TUW_Recv(buf, (int)total, MPI_BYTE, t.parent, t.round, comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    for (int k = t.nchildren - 1; k >= 0; k--) {
        const tuw_binomial_edge *e = &t.child[k];
        long long off = 0, bytes = 0;
        for (int u = 0; u < e->first; u++)
            off += vbytes[u];
        for (int u = e->first; u < e->first + e->size; u++)
            bytes += vbytes[u];
        if (e->size > 1) {
            rc = TUW_Isend(&vbytes[e->first + 1], e->size - 1, MPI_INT64_T, e->rank, e->round,
                           comm, &reqs[nreq++]);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        rc = TUW_Isend(buf + off, (int)bytes, MPI_BYTE, e->rank, e->round, comm, &reqs[nreq++]);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    if (vbytes[0] > 0) { /* my block: the first bytes, unpacked into my receive type */
        rc = tuw_local_copy(buf, (int)vbytes[0], MPI_BYTE, recvbuf, recvcount, recvtype);
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
    free(vbytes);
    free(buf);
    return rc;
}
