/*
 * allgatherv_root_gathering.c - intergroup Allgatherv as MPI libraries do it: the "root
 * gathering algorithm" (Kang, Träff et al., ParCo 2019, Section 3.1; MPICH's
 * remote-gather-local-bcast), the baseline the segmented Algorithm 2 is measured against.
 *
 * On an inter-communicator of groups A (p processes, blocks k_{A,i}) and B (q, k_{B,j}):
 *   1. every a_i sends its block to b_0, which receives them in rank order, one after
 *      another (it knows A's counts: they are its recvcounts); b_0 then broadcasts all K_A
 *      elements in B as MPICH does (tuw_bcast_library: a binomial tree below 12288 bytes
 *      or 8 processes, else binomial scatter and ring Allgatherv).  The blocks land straight
 *      in recvbuf when rdispls place them one after another, else in a scratch buffer that
 *      is copied out at the end;
 *   2. then the same from B to a_0 and A.
 * A is the larger group (on a tie, the one whose first process has the lower
 * MPI_COMM_WORLD rank) and goes first, as the libraries do it sequentially.  Empty blocks
 * are still sent (0-element messages), block-size oblivious as the libraries are.
 * MPI_IN_PLACE is not meaningful on an inter-communicator.
 *
 * Cost (one-ported): b_0 receives K_A = sum_i k_{A,i} from p senders one after another:
 * p alpha + K_A beta, then the broadcast: ceil(log2 q) (alpha + K_A beta) on the tree, about
 * (ceil(log2 q) + q - 1) alpha + 2 K_A beta by scatter and ring; then the same for B's data
 * in A.  Memory: K elements when rdispls scatter the blocks.
 *
 * Example, p = 3, q = 2: a_0, a_1, a_2 -> b_0, b_0 -> b_1 (all of A's), then b_0, b_1 ->
 * a_0, a_0 -> a_2, a_0 -> a_1.
 * Model: tuwviz/model/intergroup.py (allgatherv "root_gathering").
 */
#include <stdlib.h>
#include "tuwviz.h"

int TUW_Allgatherv_root_gathering(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm)
{
    tuw_inter_view v;
    int rc = tuw_intergroup_begin(comm, sendbuf, sendcount, recvbuf, &v);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint lb, extent;
    if ((rc = MPI_Type_get_extent(recvtype, &lb, &extent)) != MPI_SUCCESS)
        return rc;
    /* the other group's blocks one after another, as broadcast: in recvbuf if rdispls
     * place them so, else in a scratch buffer copied out at the end */
    long long K;
    char *all;
    void *mem;
    rc = tuw_packed_blocks(recvbuf, v.remote, recvcounts, rdispls, recvtype, &K, &all, &mem);
    if (rc != MPI_SUCCESS)
        return rc;
    /* phase 0: A's blocks to b_0 and B; phase 1: B's to a_0 and A */
    for (int phase = 0; phase < 2 && rc == MPI_SUCCESS; phase++) {
        int sending = phase == 0 ? v.is_a : !v.is_a;
        if (sending)
            rc = TUW_Send(sendbuf, sendcount, sendtype, 0, 1, comm);
        else {
            long long start = 0;
            for (int i = 0; i < v.remote && rc == MPI_SUCCESS && v.rank == 0; i++) {
                rc = TUW_Recv(all + start * extent, recvcounts[i], recvtype, i, 1, comm,
                              MPI_STATUS_IGNORE);
                start += recvcounts[i];
            }
            if (rc == MPI_SUCCESS)
                rc = tuw_bcast_library(all, (int)K, recvtype, v.local);
        }
    }
    if (rc == MPI_SUCCESS && mem) /* the blocks to their rdispls */
        rc = tuw_unpack_blocks(all, v.remote, recvcounts, rdispls, recvtype, recvbuf);
    free(mem);
    return rc;
}
