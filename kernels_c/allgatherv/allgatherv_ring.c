/*
 * allgatherv_ring.c - the standard linear ring Allgatherv (Träff, Ripke, Siebert, Balaji,
 * Thakur, Gropp: "A Pipelined Algorithm for Large, Irregular All-gather Problems", IJHPCA
 * 2010, Section 2.1): the folklore algorithm many MPI libraries use for MPI_Allgatherv.
 *
 * The processes form a ring in the order of the ring-order parameter (topology.h: rank
 * order by default; SMP or spread on request).  In round t = 0 .. p-2 the process at ring
 * position k sends the block of position k - t (its own in round 0) to its successor and
 * receives the block of position k - 1 - t from its predecessor, with one Sendrecv, tag t.
 * After p - 1 rounds every process has every block.  Blocks go straight from and into
 * recvbuf at rdispls; the own block is copied in locally first.  Empty blocks are still
 * sent as 0-count messages: this is the algorithm as libraries implement it, block-size
 * oblivious, and the baseline the pipelined ring improves on.
 *
 * Cost (one-ported, bidirectional, linear alpha-beta model, m_i in bytes):
 *     (p - 1)(alpha + beta max_i m_i)
 * In every round each of the p blocks is on its way from some process to the next, so
 * every round lasts as long as the largest block: up to a factor p - 1 more than the
 * m - m_i a process must receive (Section 2.1).  Optimal for regular problems.  Extra
 * memory: p ints.
 *
 * Example, p = 3, rank order, m = (2, 0, 1): round 0: 0 -> 1 block 0 (2 elements),
 * 1 -> 2 block 1 (0 elements), 2 -> 0 block 2 (1); round 1: 0 -> 1 block 2, 1 -> 2 block 0,
 * 2 -> 0 block 1 (0 elements).  Model: tuwviz/model (allgatherv "ring").
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "ring_order.h"

/* x mod p in 0..p-1, also for negative x */
static int mod(int x, int p) { return ((x % p) + p) % p; }

int TUW_Allgatherv_ring(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc, p, pos;
    int *order;
    MPI_Aint extent;

    MPI_Comm_size(comm, &p);
    rc = tuw_ring_setup(sendbuf, sendcount, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                        comm, &order, &pos, &extent);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    int succ = order[mod(pos + 1, p)], pred = order[mod(pos - 1, p)];

    for (int t = 0; t < p - 1; t++) {
        int s = order[mod(pos - t, p)];     /* block I pass on: received last round */
        int r = order[mod(pos - 1 - t, p)]; /* block my predecessor passes on */
        rc = TUW_Sendrecv((char *)recvbuf + (MPI_Aint)rdispls[s] * extent, recvcounts[s],
                          recvtype, succ, t,
                          (char *)recvbuf + (MPI_Aint)rdispls[r] * extent, recvcounts[r],
                          recvtype, pred, t, comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }

fn_exit:
    free(order);
    return rc;
}
