/*
 * scatterv_tuw.c - TUW_Scatterv: linear-time, fully distributed irregular scatter on the
 * ordered hypercube tree of Träff 2017 (Lemmas 2.1-2.3, Theorem 2.4; fixed root: Lemma
 * 2.2; "the linear time gather trees can likewise be used for the irregular scatter
 * problem").
 *
 * Phase 1 is TUW_Gatherv's tree construction (tuw_oh_setup), with m_i = recvcount of
 * process i: every process knows only its own block size.
 * Phase 2 is the gather run backwards: every non-root process receives its whole subtree
 * (blocks of a consecutive rank range, in rank order) from its parent with one message,
 * then sends each child its range, from the offset the tree gives it, with non-blocking
 * sends, latest iteration first (the exact time reversal of the gather, so the model
 * predicts the same time), and copies its own block out.  Subtrees of 0 bytes get no message (the paper's dotted edges).  The root
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
 *
 * Counts beyond int: an edge of more than INT_MAX elements cannot be one message.  Both
 * ends know its size from the construction (tuw_oh_too_big), so both skip it.  A process
 * that did not get its subtree (skipped, or a message shorter than the tree says) sends
 * its children empty messages, so they learn it too, and every such rank returns
 * MPI_ERR_COUNT; nobody waits forever and no buffer is read past its count.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "block_range.h"
#include "ordered_hypercube.h"

int TUW_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    int rc = MPI_SUCCESS, rank, p, nreq = 0, ssize, rsize, overflow = 0, got;
    MPI_Status st;
    MPI_Aint sextent, rextent;
    MPI_Request reqs[TUW_OH_MAX_DIMS];
    MPI_Datatype types[TUW_OH_MAX_DIMS];
    char *buf = NULL;
    tuw_oh_tree t;

    for (int k = 0; k < TUW_OH_MAX_DIMS; k++) /* NULL: safe to abandon on any error path */
        reqs[k] = MPI_REQUEST_NULL;
    rc = tuw_require_intracomm(comm); /* an inter-communicator fails here, no hang */
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    /* own block: the receive side; the root's counts describe the send side */
    rc = tuw_oh_setup(root, recvbuf == MPI_IN_PLACE, recvcount, recvtype, sendcounts, sendtype,
                      comm, &rsize, &rextent, &ssize, &sextent, &t);
    if (rc != MPI_SUCCESS)
        return rc;

    if (rank == root) {
        for (int k = t.nchildren - 1; k >= 0; k--) {
            const tuw_oh_edge *e = &t.child[k];
            MPI_Aint off;
            int count;
            if (e->bytes == 0)
                continue;
            if (tuw_oh_too_big(e->bytes, ssize)) { /* cannot be one message: see above */
                overflow = 1;
                continue;
            }
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
        if (t.bytes > 0) {
            rc = TUW_Recv(recvbuf, recvcount, recvtype, t.parent.peer, t.parent.iteration,
                          comm, &st);
            if (rc == MPI_SUCCESS && (MPI_Get_count(&st, recvtype, &got) != MPI_SUCCESS ||
                                      got != recvcount))
                overflow = 1; /* an empty message: a subtree above me was too big */
        }
        goto fn_exit;
    }
    if (tuw_oh_too_big(t.bytes, rsize)) { /* my parent skips my edge */
        overflow = 1;
        goto tell_children;
    }

    /* inner process: the whole subtree into one buffer, then out to children and self */
    buf = malloc((size_t)(t.bytes / rsize) * (size_t)rextent + 1);
    if (!buf) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    if (t.bytes > 0) {
        rc = TUW_Recv(buf, (int)(t.bytes / rsize), recvtype, t.parent.peer, t.parent.iteration,
                      comm, &st);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        if (MPI_Get_count(&st, recvtype, &got) != MPI_SUCCESS || got != t.bytes / rsize) {
            overflow = 1; /* empty: a subtree above me was too big */
            goto tell_children;
        }
    }
    for (int k = t.nchildren - 1; k >= 0; k--) {
        const tuw_oh_edge *e = &t.child[k];
        if (e->bytes == 0)
            continue;
        rc = TUW_Isend(buf + e->offset / rsize * rextent, (int)(e->bytes / rsize), recvtype,
                       e->peer, e->iteration, comm, &reqs[nreq++]);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    rc = tuw_local_copy(buf + t.offset / rsize * rextent, recvcount, recvtype, recvbuf,
                        recvcount, recvtype);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);

    goto fn_exit;

tell_children: /* no data for my subtree: empty messages, so my children fail too */
    for (int k = t.nchildren - 1; k >= 0 && rc == MPI_SUCCESS; k--) {
        const tuw_oh_edge *e = &t.child[k];
        if (e->bytes > 0 && !tuw_oh_too_big(e->bytes, rsize))
            rc = TUW_Send(NULL, 0, recvtype, e->peer, e->iteration, comm);
    }

fn_exit:
    if (rc == MPI_SUCCESS && overflow)
        rc = MPI_ERR_COUNT;
    if (rc != MPI_SUCCESS) /* complete or cancel what is posted before buffers go */
        TUW_Abandon(nreq, reqs);
    if (rank == root)
        for (int k = 0; k < nreq; k++) {
            int rc2 = tuw_block_range_free(&types[k], sendtype);
            if (rc == MPI_SUCCESS)
                rc = rc2;
        }
    free(buf);
    return rc;
}
