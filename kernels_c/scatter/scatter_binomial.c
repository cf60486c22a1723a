/*
 * scatter_binomial.c - binomial-tree Scatter with virtual ranks and reordering at the root:
 * the binomial variant of the course project's MY_Scatter (HPC course report, TU Wien
 * 2017, Section 2.1), an instructor's reference solution of `tuwviz assignment new
 * gather-scatter`.  The Gather of gather/gather_binomial.c run backwards.
 *
 * The tree is topology/binomial.c's (tuw_binomial_tree_create) in virtual ranks
 * v = (rank - root) mod p.  A process receives its whole subtree (virtual ranks
 * v .. v + size - 1, its own block first) from its parent, then sends each child v + 2^k
 * its subtree, cut out at block 2^k, largest k first, and keeps its own block; a leaf
 * receives straight into recvbuf.  Tag = round k.  Every edge carries a message (of 0
 * bytes for empty blocks).  All blocks are equal (Scatter), so every process knows every
 * message's size: no sizes are sent ahead (scatterv/scatterv_binomial.c must send them).
 *
 * Memory: a leaf needs no buffer; an inner process a buffer of its subtree,
 * min(2^tz(v), p - v) blocks; the root none when root == 0 (virtual = real ranks, every
 * subtree is consecutive in sendbuf and is sent from there) and p blocks when root != 0:
 * it first *reorders* the blocks into virtual order, one local copy of every block, the
 * overhead the report measured for root = 2 (Figures 3, 4).
 *
 * Datatypes: every block is b = recvcount * size(recvtype) bytes (at the root sendcount *
 * size(sendtype)): processes forward bytes, never counts of someone else's type.
 *
 * Cost (one-ported, D = ceil(log2 p), blocks of b bytes): the root sends D messages, the
 * first of about half the data:  D alpha + (p - 1) b beta,  optimal in the root's port
 * ((p-1)/p m beta); plus the reordering copy of p - 1 blocks when root != 0.
 *
 * Example, p = 6, root 2 (v = rank - 2 mod 6):
 *   round 2: rank 2 -> 0 (2b: ranks 0, 1)
 *   round 1: rank 2 -> 4 (2b: ranks 4, 5)
 *   round 0: rank 2 -> 3 (b), 4 -> 5 (b), 0 -> 1 (b)
 * Model: tuwviz/model/scatterv.py:binomial_regular.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

int TUW_Scatter_binomial(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm)
{
    int rc, rank, p, tsize;
    MPI_Aint lb, extent = 0;
    char *buf = NULL;
    const char *from; /* my subtree in virtual order: own block first, child k's at 2^k */
    MPI_Datatype unit; /* what one element of `from` is: sendtype at a root 0, else bytes */
    long long per;     /* elements of `unit` per block */
    tuw_binomial_tree t;

    rc = tuw_rooted_begin(comm, root, &rank, &p); /* intra-communicator, valid root */
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rank == root && sendcount < 0) || (recvcount < 0 && !(rank == root && recvbuf == MPI_IN_PLACE)))
        return MPI_ERR_COUNT;
    tuw_binomial_tree_create(p, rank, root, &t);

    rc = MPI_Type_size(rank == root ? sendtype : recvtype, &tsize);
    if (rc != MPI_SUCCESS)
        return rc;
    long long b = (long long)(rank == root ? sendcount : recvcount) * tsize; /* bytes a block */

    if (t.nchildren == 0 && rank != root) /* a leaf: straight into place */
        return TUW_Recv(recvbuf, recvcount, recvtype, t.parent, t.round, comm, MPI_STATUS_IGNORE);

    if (rank == root) {
        rc = MPI_Type_get_extent(sendtype, &lb, &extent);
        if (rc != MPI_SUCCESS)
            return rc;
        if (recvbuf != MPI_IN_PLACE) {
            rc = tuw_local_copy((const char *)sendbuf + (MPI_Aint)root * sendcount * extent,
                                sendcount, sendtype, recvbuf, recvcount, recvtype);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    if (rank == root && root == 0) { /* virtual = real ranks: send from sendbuf */
        from = sendbuf;
        unit = sendtype;
        per = sendcount;
    } else {
        rc = tuw_fits_int(t.size * b);
        if (rc != MPI_SUCCESS)
            return rc;
        buf = malloc(t.size * b > 0 ? (size_t)(t.size * b) : 1);
        if (!buf)
            return MPI_ERR_NO_MEM;
        if (rank == root) /* reorder: rank v + root's block to virtual position v */
            for (int v = 1; v < p && rc == MPI_SUCCESS; v++)
                rc = tuw_local_copy((const char *)sendbuf + (MPI_Aint)((v + root) % p) * sendcount * extent,
                                    sendcount, sendtype, buf + v * b, (int)b, MPI_BYTE);
        else
            rc = TUW_Recv(buf, (int)(t.size * b), MPI_BYTE, t.parent, t.round, comm,
                          MPI_STATUS_IGNORE);
        from = buf;
        unit = MPI_BYTE;
        per = b;
        extent = 1;
    }
    for (int k = t.nchildren - 1; k >= 0 && rc == MPI_SUCCESS; k--) { /* largest subtree first */
        const tuw_binomial_edge *e = &t.child[k];
        long long n = e->size * per;
        rc = tuw_fits_int(n);
        if (rc == MPI_SUCCESS)
            rc = TUW_Send(from + (MPI_Aint)e->first * per * extent, (int)n, unit, e->rank, e->round,
                          comm);
    }
    if (rc == MPI_SUCCESS && rank != root)
        rc = tuw_local_copy(buf, (int)b, MPI_BYTE, recvbuf, recvcount, recvtype);
    free(buf);
    return rc;
}
