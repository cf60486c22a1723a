/*
 * scatter_divide_conquer.c - divide-and-conquer Scatter: the course project's MY_Scatter
 * (HPC course report, TU Wien 2017, Section 2.2), the instructor's reference solution of
 * `tuwviz assignment new gather-scatter`.
 *
 * "The processes are split into two sets and the root node selects one process, denoted
 * as subroot, from the other set and sends half of the data to it.  This is repeated for
 * both sets until every node has received its data."  The tree is topology/
 * divide_conquer.c's (tuw_dc_tree_create).  Each subtree is a range [lo, hi) of
 * consecutive real ranks, so the root sends each half straight from sendbuf, whatever the
 * root ("cases where the Scatter root has rank != 0 are already covered"): no reordering.
 * A subroot receives its range from its parent into a buffer, sends each child its half,
 * largest (earliest round) first, and keeps its own block; a leaf receives straight into
 * recvbuf.  Tag = the edge's round.  Every edge carries a message (0 bytes for empty
 * blocks); all blocks are equal, so no sizes are sent ahead.
 *
 * Memory: a leaf and the root need no buffer; a subroot one of its range, hi - lo blocks.
 *
 * Datatypes: every block is b = recvcount * size(recvtype) bytes (at the root sendcount *
 * size(sendtype)); the root sends in sendtype, subroots forward bytes.
 *
 * Cost (one-ported, D = ceil(log2 p), blocks of b bytes): the root sends D messages of
 * halves of decreasing size, (p - 1) b bytes in all:
 *     D alpha + (p - 1) b beta          (the report's (p-1)/p m beta, optimal)
 * Rounds: D; the number of senders doubles every round (Section 2.3).
 *
 * Example, p = 6, root 2 (tree of divide_conquer.c):
 *   round 0: 2 -> 3 (3b: ranks 3, 4, 5, from sendbuf at block 3)
 *   round 1: 2 -> 1 (2b: ranks 0, 1), 3 -> 5 (b)
 *   round 2: 3 -> 4 (b), 1 -> 0 (b)
 * Model: tuwviz/model/scatterv.py:divide_conquer.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

int TUW_Scatter_divide_conquer(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm)
{
    int rc, rank, p, tsize;
    MPI_Aint lb, extent = 1;
    char *buf = NULL;
    const char *from; /* the range's first block: sendbuf at the root, else buf */
    MPI_Datatype unit; /* what `from` holds: sendtype at the root, else bytes */
    long long per;     /* elements of `unit` per block */
    tuw_dc_tree t;

    rc = tuw_rooted_begin(comm, root, &rank, &p); /* intra-communicator, valid root */
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rank == root && sendcount < 0) || (recvcount < 0 && !(rank == root && recvbuf == MPI_IN_PLACE)))
        return MPI_ERR_COUNT;
    tuw_dc_tree_create(p, rank, root, &t);

    rc = MPI_Type_size(rank == root ? sendtype : recvtype, &tsize);
    if (rc != MPI_SUCCESS)
        return rc;
    long long b = (long long)(rank == root ? sendcount : recvcount) * tsize; /* bytes a block */

    if (t.nchildren == 0 && rank != root) /* a leaf: straight into place */
        return TUW_Recv(recvbuf, recvcount, recvtype, t.parent, t.round, comm, MPI_STATUS_IGNORE);

    if (rank == root) { /* t.lo == 0: block i of the range is rank i's in sendbuf */
        rc = MPI_Type_get_extent(sendtype, &lb, &extent);
        if (rc != MPI_SUCCESS)
            return rc;
        from = sendbuf;
        unit = sendtype;
        per = sendcount;
    } else {
        rc = tuw_fits_int((t.hi - t.lo) * b);
        if (rc != MPI_SUCCESS)
            return rc;
        buf = malloc((t.hi - t.lo) * b > 0 ? (size_t)((t.hi - t.lo) * b) : 1);
        if (!buf)
            return MPI_ERR_NO_MEM;
        rc = TUW_Recv(buf, (int)((t.hi - t.lo) * b), MPI_BYTE, t.parent, t.round, comm,
                      MPI_STATUS_IGNORE);
        from = buf;
        unit = MPI_BYTE;
        per = b;
    }
    for (int k = 0; k < t.nchildren && rc == MPI_SUCCESS; k++) { /* largest half first */
        const tuw_dc_edge *e = &t.child[k];
        long long n = (long long)(e->hi - e->lo) * per;
        rc = tuw_fits_int(n);
        if (rc == MPI_SUCCESS)
            rc = TUW_Send(from + (MPI_Aint)(e->lo - t.lo) * per * extent, (int)n, unit, e->rank,
                          e->round, comm);
    }
    if (rc == MPI_SUCCESS && !(rank == root && recvbuf == MPI_IN_PLACE))
        rc = tuw_local_copy(from + (MPI_Aint)(rank - t.lo) * per * extent, (int)per, unit,
                            recvbuf, recvcount, recvtype);
    free(buf);
    return rc;
}
