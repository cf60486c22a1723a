/*
 * gatherv_tuw.c - TUW_Gatherv: linear-time, fully distributed irregular gather on an
 * ordered hypercube tree (Träff 2017, Lemmas 2.1-2.3, Theorem 2.4; fixed root: Lemma 2.2).
 *
 * Phase 1, tree construction (tuw_oh_setup, common/ordered_hypercube_tree.c): ceil(log2 p)
 * iterations of constant-size exchanges between the fixed roots of sibling subcubes, plus
 * fixed root -> gather root info messages.  No process needs the other block sizes in
 * advance; the root's recvcounts are only used to place data.
 *
 * Phase 2, gather along the tree: every process posts non-blocking receives for all its
 * children (in iteration order; late children are absorbed, whoever is ready first is
 * received first), waits for them, then sends its whole subtree - blocks of a consecutive
 * rank range, already in rank order - to its parent with one message.  A subtree with 0
 * bytes sends nothing (the paper's dotted edges).  Tag = iteration of the tree edge.
 *   - leaves send straight from sendbuf;
 *   - inner processes receive into one buffer of their subtree's size, each child at the
 *     offset the tree gives it, left and right of their own block, which they copy in (the
 *     paper's prototype does the same; cost beta' m_i, a local copy, not in the model);
 *   - the root receives each child's range straight into recvbuf at displs (one contiguous
 *     piece when displs are prefix sums; otherwise an indexed datatype): no reordering, no
 *     intermediate buffer.
 *
 * Cost (one-ported, linear alpha-beta model, m_i in bytes, r the root):
 *     3 ceil(log2 p) alpha + beta sum_{i != r} m_i
 *       + beta (M_d' - m_{r_d'} - sum_{j < d'} M_j)          (Theorem 2.4 / Lemma 2.2)
 * where M_j is the data of the subcube from which the root receives in iteration j (gather
 * root r_j) and d' the last iteration in which the root waits for it; the penalty is less
 * than beta sum_{i != r} m_i.  Construction: <= 2 ceil(log2 p) alpha.  Compare: fixed
 * binomial tree ceil(log2 p)(alpha + beta sum m_i) in the worst case, linear (p-1) alpha.
 * Extra memory: one buffer of the subtree's size at inner non-root processes.
 * Restriction (as the paper's prototype): intermediate buffers hold elements of the
 * process's own sendtype, so all processes must describe blocks with one basic type
 * (same type signature per element) whose extent equals its size.
 *
 * Example, p = 4, root 0, m = (1, 0, 3, 2) elements:
 *   construction  it. 0: 0<->1, 2<->3;  it. 1: 1<->3, info 1->0 and 3->2
 *   tree          1 -> 0 (0 elements: dotted, no message), 3 -> 2 (2), 2 -> 0 (blocks 2..3)
 *   data          3 sends 2 elements to 2 (tag 0); 2 receives them behind its own block and
 *                 sends blocks 2..3 (5 elements, tag 1) to 0, which receives them at
 *                 recvbuf + displs[2].
 * Model: tuwviz/model/gatherv.py:tuw.
 *
 * Counts beyond int: an edge of more than INT_MAX elements cannot be one message.  Both
 * ends know its size from the construction (tuw_oh_too_big), so both skip it; the ranks
 * above it (whose subtrees contain it) skip theirs too, receive and drop what their other
 * children send (nobody waits forever), and return MPI_ERR_COUNT, as does the root.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "block_range.h"
#include "ordered_hypercube.h"

int TUW_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    int rc = MPI_SUCCESS, rank, p, nreq = 0, ssize, rsize, overflow = 0;
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
    /* own block: the send side; the root's counts describe the receive side */
    rc = tuw_oh_setup(root, sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcounts, recvtype,
                      comm, &ssize, &sextent, &rsize, &rextent, &t);
    if (rc != MPI_SUCCESS)
        return rc;

    if (rank == root) {
        for (int k = 0; k < t.nchildren; k++) {
            const tuw_oh_edge *e = &t.child[k];
            MPI_Aint off;
            int count;
            if (e->bytes == 0)
                continue;
            if (tuw_oh_too_big(e->bytes, rsize)) { /* the child cannot send it: see above */
                overflow = 1;
                continue;
            }
            rc = tuw_block_range(recvcounts, displs, p, e->lo, e->hi - e->lo, recvtype,
                                 rextent, &off, &count, &types[nreq]);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
            rc = TUW_Irecv((char *)recvbuf + off, count, types[nreq], e->peer, e->iteration,
                           comm, &reqs[nreq]);
            nreq++;
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        if (sendbuf != MPI_IN_PLACE) {
            rc = tuw_local_copy(sendbuf, sendcount, sendtype,
                                (char *)recvbuf + (MPI_Aint)displs[root] * rextent,
                                recvcounts[root], recvtype);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        goto fn_exit;
    }

    if (t.nchildren == 0) { /* a leaf sends its own block, if any */
        if (t.bytes > 0)
            rc = TUW_Send(sendbuf, sendcount, sendtype, t.parent.peer, t.parent.iteration,
                          comm);
        goto fn_exit;
    }

    if (tuw_oh_too_big(t.bytes, ssize)) { /* my subtree cannot go up as one message */
        overflow = 1;
        for (int k = 0; k < t.nchildren && rc == MPI_SUCCESS; k++) {
            const tuw_oh_edge *e = &t.child[k];
            if (e->bytes == 0 || tuw_oh_too_big(e->bytes, ssize))
                continue; /* no message on this edge */
            char *tmp = malloc((size_t)(e->bytes / ssize) * (size_t)sextent + 1);
            rc = tmp ? TUW_Recv(tmp, (int)(e->bytes / ssize), sendtype, e->peer, e->iteration,
                                comm, MPI_STATUS_IGNORE)
                     : MPI_ERR_NO_MEM;
            free(tmp);
        }
        goto fn_exit;
    }

    /* inner process: children and own block into one buffer, in rank order */
    buf = malloc((size_t)(t.bytes / ssize) * (size_t)sextent + 1);
    if (!buf) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    for (int k = 0; k < t.nchildren; k++) {
        const tuw_oh_edge *e = &t.child[k];
        if (e->bytes == 0)
            continue;
        rc = TUW_Irecv(buf + e->offset / ssize * sextent, (int)(e->bytes / ssize), sendtype,
                       e->peer, e->iteration, comm, &reqs[nreq++]);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    rc = tuw_local_copy(sendbuf, sendcount, sendtype, buf + t.offset / ssize * sextent,
                        sendcount, sendtype);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    if (t.bytes > 0)
        rc = TUW_Send(buf, (int)(t.bytes / ssize), sendtype, t.parent.peer,
                      t.parent.iteration, comm);

fn_exit:
    if (rc == MPI_SUCCESS && overflow)
        rc = MPI_ERR_COUNT;
    if (rc != MPI_SUCCESS) /* complete or cancel what is posted before buffers go */
        TUW_Abandon(nreq, reqs);
    if (rank == root)
        for (int k = 0; k < nreq; k++) {
            int rc2 = tuw_block_range_free(&types[k], recvtype);
            if (rc == MPI_SUCCESS)
                rc = rc2;
        }
    free(buf);
    return rc;
}
