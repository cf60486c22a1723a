/*
 * scatterv_binomial.c - fixed, block-size-oblivious binomial-tree Scatterv (the baseline
 * of Träff 2017, Section 1), the reverse of gatherv_binomial.c.
 *
 * The tree (topology/binomial.c, tuw_binomial_tree_create) is in virtual ranks relative to
 * the root: v = (rank - root) mod p.  A process receives its subtree - virtual ranks
 * v .. min(v + lowbit(v), p) - 1 - from v - lowbit(v) (the root holds everything), then
 * sends each child v + 2^k, largest subtree first (k descending), its subtree's blocks,
 * which start at block 2^k of its own.  The tree ignores block sizes: every child receives
 * a data message, even of 0 bytes.  Tag = round k.
 *
 * Learning sizes (common/tree.c, the engine this kernel shares with the circulant
 * Scatterv): only the root knows sendcounts.  A child whose subtree has more than one
 * process first receives the sizes of the rest of its subtree (virtual ranks v+1 ..; it
 * knows its own: recvcount) as one MPI_INT64_T message of 8 (size - 1) bytes, sent just
 * before the data with the same tag; leaves get no sizes message.  Cost of this: one more
 * alpha and 8 (size - 1) beta on every edge to an inner process.
 *
 * Sizes are bytes of the type signature, and inner processes keep their subtree as bytes
 * (MPI_BYTE), never in units of a datatype: MPI lets the root's sendtype and each
 * process's recvtype differ (only the signatures must match), e.g. the root sends one
 * MPI_Type_contiguous(2, MPI_INT) per process while each receives 2 MPI_INT.  Counting
 * the root's sendcounts in an inner process's recvtype would receive the wrong amount.
 *
 * Reordering at the root (root != 0): a subtree that wraps from rank p-1 to rank 0 is sent
 * with an indexed datatype (block_range.c) gathering both pieces from sendbuf: no
 * temporary buffer, no copy in the kernel (MPI packs one more segment).  At most one
 * child of the root wraps.  Inner processes keep their subtree in virtual rank order.
 *
 * Cost (one-ported, m_i in bytes, D = ceil(log2 p)): worst case (all blocks empty but the
 * farthest) D (alpha + beta sum m_i) as for the gather, plus the counts messages: at most
 * D alpha + 4 (p - 1) beta more on the root's port.
 * Extra memory: a buffer of the subtree's bytes and its sizes at inner non-root processes.
 *
 * Example, p = 6, root 2 (virtual v = rank - 2 mod 6): the root sends v4 (rank 0) the
 * size of v5 (rank 1), then blocks of ranks 0, 1 (tag 2); v2 (rank 4) the size of v3,
 * then blocks of ranks 4, 5 (tag 1); v1 (rank 3) its block (tag 0).  Then 0 sends rank 1
 * and 4 sends rank 5 their blocks (tag 0).
 * Model: tuwviz/model/scatterv.py:binomial.
 */
#include "tuwviz.h"

int TUW_Scatterv_binomial(const void *sendbuf, const int sendcounts[], const int displs[],
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return tuw_tree_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                             recvtype, root, comm, tuw_tree_view_binomial, 0);
}
