/*
 * gatherv_binomial.c - fixed, block-size-oblivious binomial-tree Gatherv (the baseline of
 * Träff 2017, Section 1: "fixed (block oblivious) trees of logarithmic depth").
 *
 * The tree (topology/binomial.c, tuw_binomial_tree_create) is in virtual ranks relative to
 * the root, v = (rank - root) mod p.  In round k (mask = 2^k) a process with bit k of v set
 * sends its subtree - virtual ranks v .. min(v + 2^k, p) - 1 - to v - 2^k and is done;
 * otherwise, if v + 2^k < p, it receives the subtree of v + 2^k.  The tree ignores block
 * sizes: children always send, even 0 bytes.  Tag = round k.
 *
 * Learning sizes (common/tree.c, the engine this kernel shares with the circulant
 * Gatherv): a non-root parent does not know its children's block sizes, so every process
 * whose parent is not the root sends its subtree's byte size ahead (one int64_t, same
 * tag); the parent then receives each child's subtree at its place behind its own block,
 * in virtual rank order, so no process reorders anything.  (It used to MPI_Probe each
 * child in turn: with more ranks than cores every probe waited a time slice, 12-25x the
 * library's time; now 1.2-1.6x at 8 ranks on 2 cores.)  The root knows recvcounts: it posts non-blocking
 * receives for all children straight into recvbuf at displs.
 *
 * Reordering at the root (root != 0): a subtree's virtual range is consecutive in real
 * ranks except when it wraps from rank p-1 to rank 0; then its message holds blocks
 * (root+v) .. p-1 followed by 0 .. .  The root receives such a message with an indexed
 * datatype (block_range.c) that puts both pieces in place: no temporary buffer and no
 * copy in the kernel - MPI unpacks the one message into two places (same bytes, one more
 * segment).  At most one child of the root wraps.
 *
 * Cost (one-ported, m_i in bytes, D = ceil(log2 p)): every process's subtree crosses one
 * edge per level above it; the sizes add at most (D - 1) alpha before the data.  The root receives D messages; in the worst case (all blocks
 * empty but the one farthest from the root, virtual rank 2^D - 1 when p is a power of
 * two) that block is sent D times:  D (alpha + beta sum_{i != r} m_i).  For p not a
 * power of two the deepest virtual rank has floor(log2 p) ancestors:
 * D alpha + floor(log2 p) beta m.  Regular blocks m: D alpha + (p - 1) beta m.
 * Extra memory: a buffer of the subtree's size at inner non-root processes.
 *
 * Example, p = 6, root 2 (virtual v = rank - 2 mod 6):
 *   round 0: v1->v0, v3->v2, v5->v4   (ranks 3->2, 5->4, 1->0)
 *   round 1: v2->v0 (blocks of v2,v3 = ranks 4,5)
 *   round 2: v4->v0 (blocks of v4,v5 = ranks 0,1)
 *   Root 2 receives from 3, 4, 0; no range wraps here (p - root = 4 is a subtree start).
 * Model: tuwviz/model/gatherv.py:binomial.
 */
#include "tuwviz.h"

int TUW_Gatherv_binomial(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return tuw_tree_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm, tuw_tree_view_binomial, 0);
}
