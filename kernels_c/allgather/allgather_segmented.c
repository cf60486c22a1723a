/*
 * allgather_segmented.c - intergroup Allgather by message segmentation: Algorithm 1 of Kang,
 * Träff, Al-Bahrani, Agrawal, Choudhary, Liao, "Scalable algorithms for MPI intergroup
 * Allgather and Allgatherv", Parallel Computing 2019, Section 4 (with the indivisible case).
 *
 * On an inter-communicator of groups A (p processes, blocks of k_A) and B (q <= p, k_B):
 *   1. exchange, ceil(p/q) rounds: the p processes of A are cut into q subgroups s_j of
 *      ceil(p/q) or floor(p/q) consecutive ranks (topology.h: tuw_ig_part); b_j exchanges
 *      with s_j, in round i with its i-th process a: a sends its whole block to b_j, b_j
 *      sends a the i-th of |s_j| almost equal segments of its block.  Every block of A is
 *      now at one process of B, every segment of B's blocks at one process of A, each
 *      already at its final place in recvbuf (the partners keep rank order);
 *   2. concurrently inside each group, an Allgatherv in place of what arrived (the
 *      circulant one, tuwviz's own): A's segments, B's runs of |s_j| blocks.
 * No reordering, no copy.  Segments are cut in elements: both groups must describe the
 * data with datatypes of the same size.  MPI_IN_PLACE is not meaningful on an
 * inter-communicator (MPI standard).
 *
 * Cost (Theorem 1; one-ported, full duplex): exchange ceil(p/q) alpha +
 * max(ceil(p/q) k_A, k_B) beta, then Allgatherv ceil(log2 p) alpha + about
 * max((p - p/q) k_A, (q - q/p) k_B) beta: transfer at most M + k_B beta with the lower
 * bound M = max(p k_A, q k_B) beta (Section 2.2).  Memory: two int arrays of the group size.
 *
 * Example (Figure 2), p = 8, q = 3: s_0 = {a0,a1,a2}, s_1 = {a3,a4,a5}, s_2 = {a6,a7};
 * b_2 receives the blocks of a6 and a7 in rounds 0 and 1 and sends them the two halves of
 * its block; then B gathers 3, 3 and 2 blocks, A the eight segments.
 * Model: tuwviz/model/intergroup.py (allgather "segmented").
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

int TUW_Allgather_segmented(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    tuw_inter_view v;
    int rc = tuw_intergroup_begin(comm, sendbuf, sendcount, recvbuf, &v);
    if (rc != MPI_SUCCESS)
        return rc;
    if (recvcount < 0)
        return MPI_ERR_COUNT;
    int p = v.is_a ? v.size : v.remote, q = v.is_a ? v.remote : v.size;
    MPI_Aint lb, rext, sext;
    if ((rc = MPI_Type_get_extent(recvtype, &lb, &rext)) != MPI_SUCCESS ||
        (rc = MPI_Type_get_extent(sendtype, &lb, &sext)) != MPI_SUCCESS)
        return rc;
    /* the final Allgatherv's blocks, counted in elements of recvtype */
    if (tuw_fits_int((long long)v.remote * recvcount) != MPI_SUCCESS)
        return MPI_ERR_COUNT;
    int *counts = malloc(2 * (size_t)v.size * sizeof *counts), *displs = counts + v.size;
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, *reqs = NULL;
    if (!counts)
        return MPI_ERR_NO_MEM;

    if (v.is_a) { /* one round's partner b_j; my segment of its block */
        long long first, n, f, s;
        int j = tuw_ig_part_of(p, q, v.rank), k = 0;
        tuw_ig_part(p, q, j, &first, &n);
        tuw_ig_part(recvcount, (int)n, (int)(v.rank - first), &f, &s);
        char *seg = (char *)recvbuf + ((MPI_Aint)j * recvcount + f) * rext;
        if (sendcount > 0) /* send, then receive: a SendRecv in the model */
            rc = TUW_Isend(sendbuf, sendcount, sendtype, j, 0, comm, &req[k++]);
        if (rc == MPI_SUCCESS && s > 0)
            rc = TUW_Irecv(seg, (int)s, recvtype, j, 0, comm, &req[k++]);
        rc = rc == MPI_SUCCESS ? TUW_Waitall(k, req, MPI_STATUSES_IGNORE) : (TUW_Abandon(k, req), rc);
        for (int r = 0; r < v.size; r++) { /* where each process of A put its segment */
            int jr = tuw_ig_part_of(p, q, r);
            tuw_ig_part(p, q, jr, &first, &n);
            tuw_ig_part(recvcount, (int)n, (int)(r - first), &f, &s);
            counts[r] = (int)s;
            displs[r] = (int)((long long)jr * recvcount + f);
        }
    } else { /* round i: my i-th segment out, the block of the i-th process of s_j in */
        long long first, n, f, s;
        tuw_ig_part(p, q, v.rank, &first, &n);
        int k = 0;
        reqs = malloc(2 * (size_t)n * sizeof *reqs);
        if (!reqs)
            rc = MPI_ERR_NO_MEM;
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
            int a = (int)first + i;
            tuw_ig_part(sendcount, (int)n, i, &f, &s);
            if (s > 0)
                rc = TUW_Isend((const char *)sendbuf + f * sext, (int)s, sendtype, a, 0, comm,
                               &reqs[k++]);
            if (rc == MPI_SUCCESS && recvcount > 0)
                rc = TUW_Irecv((char *)recvbuf + (MPI_Aint)a * recvcount * rext, recvcount,
                               recvtype, a, 0, comm, &reqs[k++]);
        }
        if (reqs)
            rc = rc == MPI_SUCCESS ? TUW_Waitall(k, reqs, MPI_STATUSES_IGNORE)
                                   : (TUW_Abandon(k, reqs), rc);
        for (int r = 0; r < v.size; r++) { /* b_r holds the blocks of s_r */
            tuw_ig_part(p, q, r, &first, &n);
            counts[r] = (int)(n * recvcount);
            displs[r] = (int)(first * recvcount);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = TUW_Allgatherv_circulant(MPI_IN_PLACE, 0, recvtype, recvbuf, counts, displs,
                                      recvtype, v.local);
    free(reqs);
    free(counts);
    return rc;
}
