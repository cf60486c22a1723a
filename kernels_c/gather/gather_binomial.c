/*
 * gather_binomial.c - binomial-tree Gather with virtual ranks and reordering at the root:
 * the course project's MY_Gather (HPC course report, TU Wien 2017, Section 1.2), the
 * instructor's reference solution of `tuwviz assignment new gather-scatter`.
 *
 * The tree is topology/binomial.c's (tuw_binomial_tree_create) in virtual ranks
 * v = (rank - root) mod p, as the report's vrnk = (rank - root - N) mod N.  A process with
 * children receives their subtrees, in round order, behind its own block in a temporary
 * buffer, then sends the whole subtree to its parent; a leaf sends its block straight from
 * sendbuf.  Tag = round k.  Every edge carries a message (of 0 bytes for empty blocks): the
 * tree does not look at sizes.
 *
 * Memory, as the report minimizes it: a leaf needs no buffer; an inner process a buffer of
 * min(2^tz(v), p - v) blocks, its subtree (tz: trailing zeros); the root p - 1 blocks'
 * worth plus its own when root != 0, none when root == 0.  With root == 0 virtual and real
 * ranks coincide, so every child's subtree is consecutive in recvbuf and is received
 * straight into place.  With root != 0 a subtree may wrap from rank p-1 to rank 0: the root
 * receives all subtrees in virtual order into a temporary buffer and then *reorders*, one
 * local copy of every block, the overhead the report measured for root = 2 (Figures 1, 2).
 * (gatherv/gatherv_binomial.c avoids that copy with an indexed datatype.)
 *
 * Datatypes: all processes' blocks have the same type signature (MPI's rule for Gather),
 * so every block is b = sendcount * size(sendtype) bytes, at the root recvcount *
 * size(recvtype); inner processes keep and forward bytes, never counts of their own type.
 *
 * Cost (one-ported, D = ceil(log2 p), m = p b bytes in all): the root receives D messages,
 * the last one of about m/2 bytes; the subtree of the root's child of round k crosses one
 * edge per level, so
 *     D alpha + (p - 1) b beta            (the root's port: (p-1)/p m beta, optimal)
 * plus, for root != 0, gamma-like copy cost of p - 1 blocks at the root.  Rounds: D, and
 * every process sends after at most tz(v) rounds of receiving (no algorithmic latency).
 *
 * Example, p = 6, root 2 (v = rank - 2 mod 6), blocks of b bytes:
 *   round 0: ranks 3 -> 2 (b), 5 -> 4 (b), 1 -> 0 (b)
 *   round 1: rank 4 -> 2 (2b: ranks 4, 5)
 *   round 2: rank 0 -> 2 (2b: ranks 0, 1)
 *   The root's buffer holds virtual 0..5 = ranks 2, 3, 4, 5, 0, 1; it copies them into
 *   recvbuf in rank order.
 * Model: tuwviz/model/gatherv.py:binomial (the same tree and messages; Gather is the
 * regular case of Gatherv).
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

int TUW_Gather_binomial(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm)
{
    int rc, rank, p, nreq = 0, tsize;
    MPI_Aint lb, extent = 0;
    MPI_Request reqs[TUW_BINOMIAL_MAX_CHILDREN];
    char *buf = NULL;
    tuw_binomial_tree t;

    for (int k = 0; k < TUW_BINOMIAL_MAX_CHILDREN; k++) /* NULL: safe to abandon on any error path */
        reqs[k] = MPI_REQUEST_NULL;
    rc = tuw_rooted_begin(comm, root, &rank, &p); /* intra-communicator, valid root */
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rank == root && recvcount < 0) || (sendcount < 0 && !(rank == root && sendbuf == MPI_IN_PLACE)))
        return MPI_ERR_COUNT;
    tuw_binomial_tree_create(p, rank, root, &t);

    /* b: bytes of one block, from my own side's count and type */
    rc = MPI_Type_size(rank == root ? recvtype : sendtype, &tsize);
    if (rc != MPI_SUCCESS)
        return rc;
    long long b = (long long)(rank == root ? recvcount : sendcount) * tsize;

    if (t.nchildren == 0 && rank != root) /* a leaf: the own block as it is */
        return TUW_Send(sendbuf, sendcount, sendtype, t.parent, t.round, comm);

    if (rank == root) {
        rc = MPI_Type_get_extent(recvtype, &lb, &extent);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    char *own = rank == root ? (char *)recvbuf + (MPI_Aint)root * recvcount * extent : NULL;
    if (rank == root && root == 0) { /* virtual = real: subtrees straight into place */
        for (int k = 0; k < t.nchildren && rc == MPI_SUCCESS; k++) {
            const tuw_binomial_edge *e = &t.child[k];
            long long n = (long long)e->size * recvcount;
            rc = tuw_fits_int(n);
            if (rc == MPI_SUCCESS)
                rc = TUW_Irecv((char *)recvbuf + (MPI_Aint)e->first * recvcount * extent, (int)n,
                               recvtype, e->rank, e->round, comm, &reqs[nreq++]);
        }
        if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
            rc = tuw_local_copy(sendbuf, sendcount, sendtype, own, recvcount, recvtype);
        if (rc == MPI_SUCCESS)
            rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        goto fn_exit;
    }

    /* my subtree in virtual order, as bytes: own block first, child k's from block 2^k */
    rc = tuw_fits_int(t.size * b);
    if (rc != MPI_SUCCESS)
        return rc;
    buf = malloc(t.size * b > 0 ? (size_t)(t.size * b) : 1);
    if (!buf)
        return MPI_ERR_NO_MEM;
    for (int k = 0; k < t.nchildren && rc == MPI_SUCCESS; k++) {
        const tuw_binomial_edge *e = &t.child[k];
        if (rank == root) /* every child's subtree at once; the root waits for all below */
            rc = TUW_Irecv(buf + e->first * b, (int)(e->size * b), MPI_BYTE, e->rank, e->round,
                           comm, &reqs[nreq++]);
        else
            rc = TUW_Recv(buf + e->first * b, (int)(e->size * b), MPI_BYTE, e->rank, e->round,
                          comm, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    if (rank != root) {
        rc = tuw_local_copy(sendbuf, sendcount, sendtype, buf, (int)b, MPI_BYTE);
        if (rc == MPI_SUCCESS)
            rc = TUW_Send(buf, (int)(t.size * b), MPI_BYTE, t.parent, t.round, comm);
        goto fn_exit;
    }
    /* the root, root != 0: its own block, then reorder virtual rank v into rank v + root */
    if (sendbuf != MPI_IN_PLACE)
        rc = tuw_local_copy(sendbuf, sendcount, sendtype, own, recvcount, recvtype);
    if (rc == MPI_SUCCESS)
        rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    for (int v = 1; v < p && rc == MPI_SUCCESS; v++) {
        int real = (v + root) % p;
        rc = tuw_local_copy(buf + v * b, (int)b, MPI_BYTE,
                            (char *)recvbuf + (MPI_Aint)real * recvcount * extent, recvcount,
                            recvtype);
    }

fn_exit:
    if (rc != MPI_SUCCESS) /* complete or cancel what is posted before buffers go */
        TUW_Abandon(nreq, reqs);
    free(buf);
    return rc;
}
