/*
 * allgather_root_gathering.c - intergroup Allgather as MPI libraries do it: the "root
 * gathering algorithm" (Kang, Träff et al., ParCo 2019, Section 3.1; MPICH's
 * local-gather-remote-bcast), the baseline the segmented Algorithm 1 is measured against.
 *
 * On an inter-communicator of groups A (p processes, blocks of k_A) and B (q, k_B):
 *   1. concurrently, each group gathers its blocks at its rank 0 (binomial tree, tuwviz's
 *      gather/binomial);
 *   2. a_0 sends A's p k_A to b_0, which broadcasts them in B as MPICH does
 *      (tuw_bcast_library: a binomial tree, whole message per edge, below 12288 bytes or 8
 *      processes; else a binomial scatter of q almost equal pieces and a ring Allgatherv);
 *   3. then b_0 sends B's q k_B to a_0, which broadcasts them in A.
 * Steps 2 and 3 run one after the other, as in the libraries (Section 3.1: "performed
 * sequentially"); A is the larger group (on a tie, the one whose first process has the
 * lower MPI_COMM_WORLD rank).  MPI_IN_PLACE is not meaningful on an inter-communicator.
 *
 * Cost (one-ported): gather ceil(log2 p) alpha + (p - 1) k_A beta (in parallel with B's);
 * then alpha + p k_A beta and B's broadcast: ceil(log2 q) (alpha + p k_A beta) on the tree,
 * (ceil(log2 q) + q - 1) alpha + about 2 p k_A beta by scatter and ring; then the same for
 * B's data in A.  For large messages that is Eq. (2): transfer
 * max((p-1) k_A, (q-1) k_B) + 3 p k_A + 3 q k_B, against the lower bound
 * M = max(p k_A, q k_B) beta.
 * Memory: p k_A at a_0 and q k_B at b_0.
 *
 * Example, p = 3, q = 2: a_1 -> a_0, a_2 -> a_0 (gather; b_1 -> b_0 meanwhile), a_0 -> b_0
 * (3 blocks), b_0 -> b_1, then b_0 -> a_0 (2 blocks), a_0 -> a_2, a_0 -> a_1.
 * Model: tuwviz/model/intergroup.py (allgather "root_gathering").
 */
#include <stdlib.h>
#include "tuwviz.h"

int TUW_Allgather_root_gathering(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm)
{
    tuw_inter_view v;
    int rc = tuw_intergroup_begin(comm, sendbuf, sendcount, recvbuf, &v);
    if (rc != MPI_SUCCESS)
        return rc;
    if (recvcount < 0)
        return MPI_ERR_COUNT;
    if (tuw_fits_int((long long)v.size * sendcount) != MPI_SUCCESS ||
        tuw_fits_int((long long)v.remote * recvcount) != MPI_SUCCESS)
        return MPI_ERR_COUNT;
    void *mem = NULL;
    char *all = NULL; /* my group's blocks, at my group's rank 0 */
    int ok = 1;
    if (v.rank == 0)
        ok = (all = tuw_alloc_elems((MPI_Aint)v.size * sendcount, sendtype, &mem)) != NULL;
    if (!ok)
        return MPI_ERR_NO_MEM;
    rc = TUW_Gather_binomial(sendbuf, sendcount, sendtype, all, sendcount, sendtype, 0, v.local);
    /* phase 0: A's data to B; phase 1: B's to A */
    for (int phase = 0; phase < 2 && rc == MPI_SUCCESS; phase++) {
        int sending = phase == 0 ? v.is_a : !v.is_a;
        if (sending && v.rank == 0)
            rc = TUW_Send(all, v.size * sendcount, sendtype, 0, 1, comm);
        else if (!sending) {
            if (v.rank == 0)
                rc = TUW_Recv(recvbuf, v.remote * recvcount, recvtype, 0, 1, comm,
                              MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = tuw_bcast_library(recvbuf, v.remote * recvcount, recvtype, v.local);
        }
    }
    free(mem);
    return rc;
}
