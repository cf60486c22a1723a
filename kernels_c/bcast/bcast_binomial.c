/*
 * bcast_binomial.c - broadcast along a binomial tree, the whole message on every edge: the
 * broadcast MPICH uses for short messages and small groups, and the one the intergroup
 * root gathering does inside a group (Kang, Träff et al., "Scalable algorithms for MPI
 * intergroup Allgather and Allgatherv", ParCo 2019, Section 3.1: "the root ... broadcasts
 * the data to the processes in its group").  Not a row of algorithms.toml: only other
 * kernels call it (allgather_root_gathering.c, allgatherv_root_gathering.c, through
 * tuw_bcast_library).
 *
 * The tree is topology.h's binomial tree rooted at `root` (tuw_binomial_tree_create): a
 * process receives from its parent, then sends to its children from the largest subtree
 * (latest round) down, so the deepest path starts first; the tag is the edge's round.
 *
 * Cost (one-ported, linear alpha-beta model, m bytes): ceil(log2 p)(alpha + beta m), the
 * root's ceil(log2 p) sends one after another.  Optimal in rounds, a factor log2 p off in
 * bandwidth for large m (bcast_library.c is the remedy).  Extra memory: none.
 *
 * Example, p = 5, root 0: the root's children are 1 (tag 0), 2 (tag 1) and 4 (tag 2), 2's
 * child is 3 (tag 0).  Step 1: 0 -> 4; step 2: 0 -> 2; step 3: 0 -> 1 and 2 -> 3.
 * Model: tuwviz/model/intergroup.py (_bcast).
 */
#include "tuwviz.h"
#include "topology.h"

int tuw_bcast_binomial(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    int rank, p, rc = MPI_SUCCESS;
    tuw_binomial_tree t;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    tuw_binomial_tree_create(p, rank, root, &t);
    if (t.parent >= 0)
        rc = TUW_Recv(buf, count, type, t.parent, t.round, comm, MPI_STATUS_IGNORE);
    /* children from the largest subtree (latest round) down: the deepest path starts first */
    for (int k = t.nchildren - 1; k >= 0 && rc == MPI_SUCCESS; k--)
        rc = TUW_Send(buf, count, type, t.child[k].rank, t.child[k].round, comm);
    return rc;
}
