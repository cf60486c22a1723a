/*
 * binomial.c - the fixed binomial tree of the binomial Gatherv and Scatterv kernels, from
 * integers only (the block-size-oblivious baseline of Träff 2017, Section 1: "fixed
 * (block oblivious) trees of logarithmic depth").
 *
 * Virtual ranks relative to the root, at the edges only (Open MPI): v = (rank - root) mod
 * p, rank = (v + root) mod p.  v > 0 hangs below v - lowbit(v), joined in round
 * log2 lowbit(v); its children are v + 2^k for every 2^k below lowbit(v) with v + 2^k < p
 * (the root: every 2^k < p), in increasing round k.  The subtree of v is virtual ranks
 * v .. v + size - 1, size = min(lowbit(v), p - v): consecutive in virtual rank order, with
 * v's own block first and the child of round k's subtree from block 2^k on.  So a gather
 * appends its children's subtrees behind its own block in round order, a scatter cuts them
 * out at `first` = 2^k, and nobody reorders; only at the root does a subtree that wraps from
 * rank p-1 to 0 need two pieces of the user's buffer (common/block_range.c).
 *
 * Cost (local computation): O(log p) time, no memory beyond the struct.  The tree has
 * ceil(log2 p) levels; the root has ceil(log2 p) children.
 *
 * Example, p = 6, root 2 (v = rank - 2 mod 6; rank in brackets):
 *
 *              v0 [2]                    round 2: v4 -> v0, blocks v4..v5 = ranks 0, 1
 *          /     |     \                 round 1: v2 -> v0, blocks v2..v3 = ranks 4, 5
 *      v1 [3]  v2 [4]  v4 [0]            round 0: v1 -> v0, v3 -> v2, v5 -> v4
 *                |       |
 *              v3 [5]  v5 [1]
 *
 * Rank 4 (v2): parent 2, round 1, size 2, one child: rank 5, round 0, first 1, size 1.
 * Kernels: gatherv/gatherv_binomial.c, scatterv/scatterv_binomial.c.
 * Python mirror: tuwviz/model/topology/binomial.py (binomial_tree_create).
 */
#include "topology.h"

void tuw_binomial_tree_create(int p, int rank, int root, tuw_binomial_tree *t)
{
    long long v = ((long long)rank - root + p) % p;
    long long low = v ? v & -v : 1LL << 32; /* the root: every 2^k < p is a child */

    t->size = (int)(low < p - v ? low : p - v);
    t->parent = v ? (int)(((long long)rank - low + p) % p) : -1;
    t->round = -1;
    if (v)
        for (t->round = 0; (1LL << t->round) < low; t->round++)
            ;
    t->nchildren = 0;
    for (int k = 0; (1LL << k) < low && v + (1LL << k) < p; k++) {
        long long mask = 1LL << k, rest = p - v - mask; /* virtual ranks from the child on */
        tuw_binomial_edge *e = &t->child[t->nchildren++];
        e->rank = (int)((rank + mask) % p);
        e->round = k;
        e->first = (int)mask;
        e->size = (int)(mask < rest ? mask : rest);
    }
}
