/*
 * gatherv_binomial.c - fixed, block-size-oblivious binomial-tree Gatherv (the baseline of
 * Träff 2017, Section 1: "fixed (block oblivious) trees of logarithmic depth").
 *
 * The tree (topology/binomial.c, tuw_binomial_tree_create) is in virtual ranks relative to
 * the root, v = (rank - root) mod p.  In round k (mask = 2^k) a process with bit k of v set
 * sends its subtree - virtual ranks v .. min(v + 2^k, p) - 1 - to v - 2^k and is done;
 * otherwise, if v + 2^k < p, it receives the subtree of v + 2^k.  The tree ignores block
 * sizes: children always send, even 0 bytes.  Tag = round k.
 *
 * Learning sizes: a non-root parent does not know its children's block sizes.  It learns
 * each message's size with TUW_Probe (not traced: it transfers nothing), grows its buffer
 * and receives with a traced TUW_Recv; blocks are appended in virtual rank order, so no
 * process reorders anything.  The root knows recvcounts: it posts non-blocking receives
 * for all children straight into recvbuf at displs.
 *
 * Reordering at the root (root != 0): a subtree's virtual range is consecutive in real
 * ranks except when it wraps from rank p-1 to rank 0; then its message holds blocks
 * (root+v) .. p-1 followed by 0 .. .  The root receives such a message with an indexed
 * datatype (block_range.c) that puts both pieces in place: no temporary buffer and no
 * copy in the kernel - MPI unpacks the one message into two places (same bytes, one more
 * segment).  At most one child of the root wraps.
 *
 * Cost (one-ported, m_i in bytes, D = ceil(log2 p)): every process's subtree crosses one
 * edge per level above it.  The root receives D messages; in the worst case (all blocks
 * empty but the one farthest from the root, virtual rank 2^D - 1 when p is a power of
 * two) that block is sent D times:  D (alpha + beta sum_{i != r} m_i).  For p not a
 * power of two the deepest virtual rank has floor(log2 p) ancestors:
 * D alpha + floor(log2 p) beta m.  Regular blocks m: D alpha + (p - 1) beta m.
 * Extra memory: a buffer of the subtree's size at inner non-root processes.
 *
 * Example, p = 6, root 2 (virtual v = rank - 2 mod 6):
 *   round 0: v1->v0, v3->v2, v5->v4   (ranks 3->2, 5->4, 1->0)
 *   round 1: v2->v0 (blocks of v2,v3 = ranks 4,5)
 *   round 2: v4->v0 (blocks of v4,v5 = ranks 0,1)
 *   Root 2 receives from 3, 4, 0; no range wraps here (p - root = 4 is a subtree start).
 * Model: tuwviz/model/gatherv.py:binomial.
 */
#include <stdlib.h>
#include <string.h>
#include "tuwviz.h"
#include "block_range.h"
#include "topology.h"

int TUW_Gatherv_binomial(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rc = MPI_SUCCESS, rank, p, nreq = 0;
    MPI_Aint lb, extent;
    MPI_Request reqs[TUW_BINOMIAL_MAX_CHILDREN];
    MPI_Datatype types[TUW_BINOMIAL_MAX_CHILDREN];
    char *buf = NULL;
    tuw_binomial_tree t;

    for (int k = 0; k < TUW_BINOMIAL_MAX_CHILDREN; k++) /* NULL: safe to abandon on any error path */
        reqs[k] = MPI_REQUEST_NULL;
    rc = tuw_rooted_begin(comm, root, &rank, &p); /* intra-communicator, valid root */
    if (rc != MPI_SUCCESS)
        return rc;
    if (sendcount < 0 && !(rank == root && sendbuf == MPI_IN_PLACE))
        return MPI_ERR_COUNT;
    tuw_binomial_tree_create(p, rank, root, &t);

    if (rank == root) {
        rc = MPI_Type_get_extent(recvtype, &lb, &extent);
        if (rc != MPI_SUCCESS)
            return rc;
        for (int k = 0; k < t.nchildren; k++) {
            const tuw_binomial_edge *e = &t.child[k];
            MPI_Aint off;
            int count;
            rc = tuw_block_range(recvcounts, displs, p, e->rank, e->size, recvtype, extent,
                                 &off, &count, &types[nreq]);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
            rc = TUW_Irecv((char *)recvbuf + off, count, types[nreq], e->rank, e->round, comm,
                           &reqs[nreq]);
            nreq++;
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        if (sendbuf != MPI_IN_PLACE && recvcounts[root] > 0) {
            rc = tuw_local_copy(sendbuf, sendcount, sendtype,
                                (char *)recvbuf + (MPI_Aint)displs[root] * extent,
                                recvcounts[root], recvtype);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        goto fn_exit;
    }

    if (t.nchildren == 0) { /* a leaf: send the own block as it is */
        rc = TUW_Send(sendbuf, sendcount, sendtype, t.parent, t.round, comm);
        goto fn_exit;
    }

    /* An inner process keeps its subtree as bytes (MPI_BYTE): each process may use its own
     * sendtype (only the type signatures must match the root's recvtype), so a child's
     * block need not be a whole number of my sendtype's elements. */
    int ssize;
    rc = MPI_Type_size(sendtype, &ssize);
    if (rc != MPI_SUCCESS)
        return rc;
    long long used = (long long)sendcount * ssize, cap = used > 0 ? used : 1;
    buf = malloc((size_t)cap);
    if (!buf) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    if (used > 0) {
        rc = tuw_fits_int(used);
        if (rc == MPI_SUCCESS)
            rc = tuw_local_copy(sendbuf, sendcount, sendtype, buf, (int)used, MPI_BYTE);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    for (int k = 0; k < t.nchildren; k++) { /* subtrees behind mine, in round order */
        const tuw_binomial_edge *e = &t.child[k];
        int n;
        MPI_Status st;
        rc = TUW_Probe(e->rank, e->round, comm, &st);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        rc = MPI_Get_count(&st, MPI_BYTE, &n);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        if (used + n > cap) {
            while (cap < used + n)
                cap *= 2;
            char *grown = realloc(buf, (size_t)cap);
            if (!grown) {
                rc = MPI_ERR_NO_MEM;
                goto fn_exit;
            }
            buf = grown;
        }
        rc = TUW_Recv(buf + used, n, MPI_BYTE, e->rank, e->round, comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        used += n;
    }
    rc = tuw_fits_int(used); /* all receives are complete here */
    if (rc == MPI_SUCCESS)
        rc = TUW_Send(buf, (int)used, MPI_BYTE, t.parent, t.round, comm);

fn_exit:
    if (rc != MPI_SUCCESS) /* complete or cancel what is posted before buffers go */
        TUW_Abandon(nreq, reqs);
    for (int k = 0; k < nreq; k++) {
        int rc2 = tuw_block_range_free(&types[k], recvtype);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    free(buf);
    return rc;
}
