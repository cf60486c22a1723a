/*
 * gather_divide_conquer.c - divide-and-conquer Gather: the course project's other MY_Gather
 * (HPC course report, TU Wien 2017, Sections 1.1 and 2.2), an instructor's reference
 * solution of `tuwviz assignment new gather-scatter`.  The D&C Scatter run backwards.
 *
 * The tree is topology/divide_conquer.c's (tuw_dc_tree_create): the ranks split into two
 * halves, the half without the root gets a subroot next to the cut, and both halves split
 * again.  Each process's subtree is a range [lo, hi) of consecutive *real* ranks, so the
 * blocks a subroot collects are already in rank order: the root receives each child's half
 * straight into recvbuf, for any root.  No virtual ranks and no reordering copy, which is
 * why the report found D&C faster than the binomial tree for root = 2 (Figure 2).
 * A process posts the receives of all its children, smallest (latest round) first, waits,
 * then sends its whole range to its parent; tag = the edge's round.  A leaf sends its
 * block straight from sendbuf.  Every edge carries a message (0 bytes for empty blocks).
 *
 * Memory: a leaf and the root need no buffer; a subroot one of its range, hi - lo blocks.
 *
 * Datatypes: every block is b = sendcount * size(sendtype) bytes (at the root recvcount *
 * size(recvtype)); subroots keep and forward bytes, the root receives in recvtype.
 *
 * Cost (one-ported, D = ceil(log2 p), m = p b bytes): the root receives D messages, the
 * halves of decreasing size, about m/2 + m/4 + ... = (p - 1) b bytes:
 *     D alpha + (p - 1) b beta          (the root's port: (p-1)/p m beta, optimal)
 * and no copy beyond the root's own block.  Rounds: D; a process first sends after the
 * rounds of its own subtree, no algorithmic latency beyond the tree's depth.
 *
 * Example, p = 6, root 2, blocks of b bytes (tree of divide_conquer.c):
 *   round 2: 4 -> 3 (b), 0 -> 1 (b)
 *   round 1: 5 -> 3 (b), 1 -> 2 (2b: ranks 0, 1, into recvbuf at block 0)
 *   round 0: 3 -> 2 (3b: ranks 3, 4, 5, into recvbuf at block 3)
 * Model: tuwviz/model/gatherv.py:divide_conquer.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

int TUW_Gather_divide_conquer(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm)
{
    int rc, rank, p, nreq = 0, tsize;
    MPI_Aint lb, extent = 1;
    MPI_Request reqs[TUW_DC_MAX_CHILDREN];
    char *buf = NULL, *into; /* the range's first block: recvbuf at the root, else buf */
    MPI_Datatype unit;       /* what `into` holds: recvtype at the root, else bytes */
    long long per;           /* elements of `unit` per block */
    tuw_dc_tree t;

    for (int k = 0; k < TUW_DC_MAX_CHILDREN; k++) /* NULL: safe to abandon on any error path */
        reqs[k] = MPI_REQUEST_NULL;
    rc = tuw_rooted_begin(comm, root, &rank, &p); /* intra-communicator, valid root */
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rank == root && recvcount < 0) || (sendcount < 0 && !(rank == root && sendbuf == MPI_IN_PLACE)))
        return MPI_ERR_COUNT;
    tuw_dc_tree_create(p, rank, root, &t);

    rc = MPI_Type_size(rank == root ? recvtype : sendtype, &tsize);
    if (rc != MPI_SUCCESS)
        return rc;
    long long b = (long long)(rank == root ? recvcount : sendcount) * tsize; /* bytes a block */

    if (t.nchildren == 0 && rank != root) /* a leaf: the own block as it is */
        return TUW_Send(sendbuf, sendcount, sendtype, t.parent, t.round, comm);

    if (rank == root) { /* t.lo == 0: block i of the range is rank i's place in recvbuf */
        rc = MPI_Type_get_extent(recvtype, &lb, &extent);
        if (rc != MPI_SUCCESS)
            return rc;
        into = recvbuf;
        unit = recvtype;
        per = recvcount;
    } else {
        rc = tuw_fits_int((t.hi - t.lo) * b);
        if (rc != MPI_SUCCESS)
            return rc;
        buf = malloc((t.hi - t.lo) * b > 0 ? (size_t)((t.hi - t.lo) * b) : 1);
        if (!buf)
            return MPI_ERR_NO_MEM;
        into = buf;
        unit = MPI_BYTE;
        per = b;
    }
    for (int k = t.nchildren - 1; k >= 0 && rc == MPI_SUCCESS; k--) { /* smallest half first */
        const tuw_dc_edge *e = &t.child[k];
        long long n = (long long)(e->hi - e->lo) * per;
        rc = tuw_fits_int(n);
        if (rc == MPI_SUCCESS)
            rc = TUW_Irecv(into + (MPI_Aint)(e->lo - t.lo) * per * extent, (int)n, unit, e->rank,
                           e->round, comm, &reqs[nreq++]);
    }
    if (rc == MPI_SUCCESS && !(rank == root && sendbuf == MPI_IN_PLACE))
        rc = tuw_local_copy(sendbuf, sendcount, sendtype,
                            into + (MPI_Aint)(rank - t.lo) * per * extent, (int)per, unit);
    if (rc == MPI_SUCCESS)
        rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    nreq = rc == MPI_SUCCESS ? 0 : nreq;
    if (rc == MPI_SUCCESS && rank != root)
        rc = TUW_Send(buf, (int)((t.hi - t.lo) * b), MPI_BYTE, t.parent, t.round, comm);

    if (rc != MPI_SUCCESS) /* complete or cancel what is posted before buffers go */
        TUW_Abandon(nreq, reqs);
    free(buf);
    return rc;
}
