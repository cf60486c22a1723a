/*
 * allgatherv_segmented.c - intergroup Allgatherv by balanced segments with receive ordering:
 * Algorithm 2 of Kang, Träff, Al-Bahrani, Agrawal, Choudhary, Liao, "Scalable algorithms
 * for MPI intergroup Allgather and Allgatherv", Parallel Computing 2019, Section 4.1.
 *
 * On an inter-communicator of groups A (p processes, blocks k_{A,i}) and B (q, k_{B,j}):
 *   1. inside each group, the total K and each process's exclusive prefix sum R of the
 *      counts (the paper's Allreduce and Exscan; one recursive-doubling pass,
 *      count_sums below);
 *   2. exchange: a group's elements, numbered in rank order (the global index), are cut
 *      into as many almost equal parts as the other group has processes (K_A into q, K_B
 *      into p; topology.h: tuw_ig_part); a sender sends to every receiver whose part its
 *      block overlaps, in receiver rank order; a receiver takes first the sender that goes
 *      on to higher receivers, then those that send only to it, last the one that came from
 *      lower receivers (tuw_ig_recv_order; Theorem 3's "compact" receiving).  Every piece
 *      lands at its final place;
 *   3. concurrently inside each group, an Allgatherv in place of the parts (the circulant
 *      one, tuwviz's own).
 * Every process knows the other group's counts (recvcounts), so it computes its own part
 * and senders without communication; its own group's it learns in step 1.  With rdispls
 * that do not place the blocks one after another the parts are assembled in a scratch buffer of
 * K elements and copied out.  Parts are cut in elements: both groups must describe the data
 * with datatypes of the same size.
 *
 * Cost (Theorem 3; one-ported, full duplex): transfer at most
 * M + (max(max_i k_{A,i}, max_j k_{B,j}) + log(pq)) beta, M = max(K_A, K_B) beta;
 * ceil(log2 p) + 1 + (receivers per sender) + ceil(log2 p) rounds of alpha.  Memory: two int
 * arrays of the group size and the senders of one part; K elements for scattered rdispls.
 *
 * Example (Figure 3 shape), p = 6 senders of 3 1 4 1 5 2 elements to q = 3 receivers: parts
 * [0,6) [6,11) [11,16); a_2 (elements 4..7) sends 2 to b_0 and then 2 to b_1; b_1 receives
 * from a_4 (goes on to b_2), a_3, then a_2.
 * Model: tuwviz/model/intergroup.py (allgatherv "segmented").
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

static long long min_ll(long long a, long long b) { return a < b ? a : b; }
static long long max_ll(long long a, long long b) { return a > b ? a : b; }

/* Sum and exclusive prefix sum of one count per process (Algorithm 2's Allreduce and
 * Exscan): recursive doubling, tag 2^k, then the total broadcast from rank p-1. */
static int count_sums(long long mine, long long *total, long long *prefix, MPI_Comm comm)
{
    int rank, p, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    /* recursive doubling: after round k, `part` is the sum of ranks rank - 2^(k+1) + 1 ..
     * rank and `before` that of ranks rank - 2^(k+1) + 1 .. rank - 1 (clipped at 0); the
     * exclusive prefix is `before`; the total is the last rank's part, sent back down. */
    long long part = mine, before = 0, in;
    for (int d = 1; d < p && rc == MPI_SUCCESS; d <<= 1) {
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int k = 0;
        if (rank - d >= 0)
            rc = TUW_Irecv(&in, 1, MPI_LONG_LONG, rank - d, d, comm, &req[k++]);
        long long out = part;
        if (rc == MPI_SUCCESS && rank + d < p)
            rc = TUW_Isend(&out, 1, MPI_LONG_LONG, rank + d, d, comm, &req[k++]);
        if (rc == MPI_SUCCESS)
            rc = TUW_Waitall(k, req, MPI_STATUSES_IGNORE);
        else
            TUW_Abandon(k, req);
        if (rc == MPI_SUCCESS && rank - d >= 0) {
            part += in;
            before += in;
        }
    }
    *prefix = before;
    *total = part; /* right at rank p-1; the others get it from there */
    if (rc == MPI_SUCCESS && p > 1)
        rc = tuw_bcast_binomial(total, 1, MPI_LONG_LONG, p - 1, comm);
    return rc;
}

int TUW_Allgatherv_segmented(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    tuw_inter_view v;
    int rc = tuw_intergroup_begin(comm, sendbuf, sendcount, recvbuf, &v);
    if (rc != MPI_SUCCESS)
        return rc;
    long long K;  /* the other group's elements, their global index from `parts` on */
    char *parts;
    void *mem;
    rc = tuw_packed_blocks(recvbuf, v.remote, recvcounts, rdispls, recvtype, &K, &parts, &mem);
    if (rc != MPI_SUCCESS)
        return rc;

    long long mine_total, mine_before; /* step 1: my group's total and my prefix */
    rc = count_sums(sendcount, &mine_total, &mine_before, v.local);
    MPI_Aint lb, rext, sext;
    if (rc == MPI_SUCCESS && (rc = MPI_Type_get_extent(recvtype, &lb, &rext)) == MPI_SUCCESS)
        rc = MPI_Type_get_extent(sendtype, &lb, &sext);
    if (rc != MPI_SUCCESS) {
        free(mem);
        return rc;
    }
    int *order = malloc(((size_t)v.remote + 2 * (size_t)v.size) * sizeof *order);
    int *counts = order ? order + v.remote : NULL, *displs = counts ? counts + v.size : NULL;
    int nto = 0, lo = 0;
    if (order)
        nto = tuw_ig_receivers(mine_total, v.remote, mine_before, sendcount, &lo);
    MPI_Request *reqs = order ? malloc(((size_t)v.remote + (size_t)nto) * sizeof *reqs) : NULL;
    if (!reqs) {
        free(order);
        free(mem);
        return MPI_ERR_NO_MEM;
    }

    /* step 2: receives in Section 4.1's order, then sends in receiver order */
    long long f, s, g, t;
    int k = 0, nfrom = tuw_ig_recv_order(v.remote, recvcounts, v.size, v.rank, order);
    tuw_ig_part(K, v.size, v.rank, &f, &s);
    for (int x = 0; x < nfrom && rc == MPI_SUCCESS; x++) {
        int i = order[x];
        long long start = 0;
        for (int y = 0; y < i; y++)
            start += recvcounts[y];
        long long a = max_ll(f, start), b = min_ll(f + s, start + recvcounts[i]);
        rc = TUW_Irecv(parts + a * rext, (int)(b - a), recvtype, i, 0, comm, &reqs[k++]);
    }
    for (int r = lo; r < lo + nto && rc == MPI_SUCCESS; r++) {
        tuw_ig_part(mine_total, v.remote, r, &g, &t);
        long long a = max_ll(g, mine_before), b = min_ll(g + t, mine_before + sendcount);
        rc = TUW_Isend((const char *)sendbuf + (a - mine_before) * sext, (int)(b - a), sendtype,
                       r, 0, comm, &reqs[k++]);
    }
    rc = rc == MPI_SUCCESS ? TUW_Waitall(k, reqs, MPI_STATUSES_IGNORE) : (TUW_Abandon(k, reqs), rc);

    /* step 3: the parts gathered inside my group */
    for (int r = 0; r < v.size; r++) {
        tuw_ig_part(K, v.size, r, &g, &t);
        counts[r] = (int)t;
        displs[r] = (int)g;
    }
    if (rc == MPI_SUCCESS)
        rc = TUW_Allgatherv_circulant(MPI_IN_PLACE, 0, recvtype, parts, counts, displs,
                                      recvtype, v.local);
    if (rc == MPI_SUCCESS && mem) /* the blocks to their rdispls */
        rc = tuw_unpack_blocks(parts, v.remote, recvcounts, rdispls, recvtype, recvbuf);
    free(reqs);
    free(order);
    free(mem);
    return rc;
}
