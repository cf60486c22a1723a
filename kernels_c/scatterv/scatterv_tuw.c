/*
 * scatterv_tuw.c - TUW_Scatterv: linear-time, fully distributed irregular scatter on the
 * ordered hypercube tree of Träff 2017 (Lemmas 2.1-2.3, Theorem 2.4; fixed root: Lemma
 * 2.2; "the linear time gather trees can likewise be used for the irregular scatter
 * problem").
 *
 * Phase 1 is TUW_Gatherv's tree construction (tuw_oh_construct), with m_i = recvcount of
 * process i: every process knows only its own block size.
 * Phase 2 is the gather run backwards: every non-root process receives its whole subtree
 * (blocks of a consecutive rank range, in rank order) from its parent with one message,
 * then sends each child its range with non-blocking sends, latest iteration first (the
 * exact time reversal of the gather, so the model predicts the same time), and copies its
 * own block out.  Subtrees of 0 bytes get no message (the paper's dotted edges).  The root
 * sends each child's range straight from sendbuf at displs (one contiguous piece when
 * displs are prefix sums, else an indexed datatype): no copies, no reordering.  Leaves
 * receive straight into recvbuf.  Tag = iteration of the tree edge.
 *
 * Cost (one-ported, linear alpha-beta model, m_i in bytes, r the root): as TUW_Gatherv,
 *     3 ceil(log2 p) alpha + beta sum_{i != r} m_i + beta (M_d' - m_{r_d'} - sum_{j<d'} M_j)
 * (construction <= 2 ceil(log2 p) alpha; the scatter is the gather reversed in time).
 * Extra memory: one buffer of the subtree's size at inner non-root processes; the copy of
 * the own block out of it costs beta' m_i locally (not in the model).
 * Restriction: as TUW_Gatherv, all processes use one basic type for their blocks.
 *
 * Example, p = 4, root 0, m = (1, 0, 3, 2) elements: the tree of TUW_Gatherv
 * (1 -> 0 dotted, 3 -> 2, 2 -> 0) reversed: 0 sends blocks 2..3 (5 elements, tag 1) to 2,
 * which keeps its 3 elements and sends block 3 (2 elements, tag 0) to 3; 1 gets nothing.
 * Model: tuwviz/model/scatterv.py:tuw.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "kernels.h"
#include "block_range.h"
#include "ordered_hypercube.h"

int TUW_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    int rc = MPI_SUCCESS, rank, p, nreq = 0, ssize, rsize;
    MPI_Aint sextent, rextent;
    MPI_Request reqs[TUW_OH_MAX_DIMS];
    MPI_Datatype types[TUW_OH_MAX_DIMS];
    char *buf = NULL;
    long long mybytes;
    tuw_oh_tree t;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (root < 0 || root >= p)
        return MPI_ERR_ROOT;
    /* own block: the receive side; the root's counts describe the send side */
    rc = tuw_oh_own_block(rank == root, recvbuf == MPI_IN_PLACE, recvcount, recvtype,
                          sendcounts, root, sendtype, &rsize, &rextent, &ssize, &sextent,
                          &mybytes);
    if (rc != MPI_SUCCESS)
        return rc;

    rc = tuw_oh_construct(p, rank, root, mybytes, comm, &t);
    if (rc != MPI_SUCCESS)
        return rc;

    if (rank == root) {
        for (int k = t.nchildren - 1; k >= 0; k--) {
            const tuw_oh_edge *e = &t.child[k];
            MPI_Aint off;
            int count;
            if (e->bytes == 0)
                continue;
            rc = tuw_block_range(sendcounts, displs, p, e->lo, e->hi - e->lo, sendtype,
                                 sextent, &off, &count, &types[nreq]);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
            rc = TUW_Isend((const char *)sendbuf + off, count, types[nreq], e->peer,
                           e->iteration, comm, &reqs[nreq]);
            nreq++;
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        if (recvbuf != MPI_IN_PLACE) {
            rc = tuw_local_copy((const char *)sendbuf + (MPI_Aint)displs[root] * sextent,
                                sendcounts[root], sendtype, recvbuf, recvcount, recvtype);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        goto fn_exit;
    }

    if (t.nchildren == 0) { /* a leaf receives its own block, if any */
        if (t.bytes > 0)
            rc = TUW_Recv(recvbuf, recvcount, recvtype, t.parent.peer, t.parent.iteration,
                          comm, MPI_STATUS_IGNORE);
        goto fn_exit;
    }

    /* inner process: the whole subtree into one buffer, then out to children and self */
    buf = malloc((size_t)(t.bytes / rsize) * (size_t)rextent + 1);
    if (!buf) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    if (t.bytes > 0) {
        rc = TUW_Recv(buf, (int)(t.bytes / rsize), recvtype, t.parent.peer, t.parent.iteration,
                      comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    for (int k = t.nchildren - 1; k >= 0; k--) {
        const tuw_oh_edge *e = &t.child[k];
        long long before = e->lo > rank ? mybytes : 0; /* bytes left of this child */
        for (int j = 0; j < t.nchildren; j++)
            if (t.child[j].lo < e->lo)
                before += t.child[j].bytes;
        if (e->bytes == 0)
            continue;
        rc = TUW_Isend(buf + before / rsize * rextent, (int)(e->bytes / rsize), recvtype,
                       e->peer, e->iteration, comm, &reqs[nreq++]);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    rc = tuw_local_copy(buf + t.offset / rsize * rextent, recvcount, recvtype, recvbuf,
                        recvcount, recvtype);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);

fn_exit:
    if (rank == root)
        for (int k = 0; k < nreq; k++) {
            int rc2 = tuw_block_range_free(&types[k], sendtype);
            if (rc == MPI_SUCCESS)
                rc = rc2;
        }
    free(buf);
    return rc;
}
