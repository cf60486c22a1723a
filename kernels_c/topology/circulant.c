/*
 * circulant.c - the circulant communication graph of Träff, Hunold, Vardas, Funk, "Uniform
 * algorithms for reduce-scatter and (most) other collectives for MPI" (Section III-A..D),
 * from integers only.
 *
 * Skips (Listing 1): q = ceil(log2 p) rounds; skips[q] = p and skips[k] = skips[k+1] -
 * floor(skips[k+1] / 2), i.e. repeated halving of p rounded up (Table II: p = 33 gives
 * 1 2 3 5 9 17 33).  Lemma 1: skips[k+1] <= 2 skips[k] <= skips[k+1] + 1, skips[0] = 1,
 * skips[1] = 2 for p > 1.
 *
 * Round k, rank r (Section III-B): the correction e_k = skips[k+1] mod 2 (1 iff 2 skips[k] =
 * skips[k+1] + 1), the jump skips[k] - e_k = skips[k+1] - skips[k], the to-process
 * t = (r - skips[k] + e_k) mod p and the from-process f = (r + skips[k] - e_k) mod p.  In
 * every round each rank sends to t and receives from f; f's to-process is r, so the
 * pattern is deadlock-free.  The jumps of rounds 0..q-1 add up to p - 1.
 *
 * Reduce (Section III-C, Listing 4): in virtual ranks v = (r - root) mod p every v > 0 is
 * a sum of jumps of distinct rounds, chosen greedily from round q-1 down; pathhead(v) is
 * the lowest of those rounds: v sends its partial sum in that round, to v - jump, and is
 * done.  So v's parent is v minus its lowest jump, and v's children are v + jump_k for the
 * rounds k below pathhead(v) whose greedy decomposition ends in k.  Root: pathhead q.
 *
 * Reduce_scatter (Section III-D, Listing 5): relative_blocks enumerates the sets B_r^k of
 * blocks rank r sends in round k as offsets x (the block of rank r - x): B_r^k = {jump_k + S
 * : S a sum of jumps of distinct rounds > k}, 2^(q-1-k) offsets, enumerated depth first.
 * From (off 0, round 0) it writes 2^q - 1 offsets: 2^(q-1) of round 0, then 2^(q-2) of
 * round 1, ..., 1 of round q-1, each set a subset of the one before in the same order.
 *
 * Example, p = 9 (the paper's): skips 1 2 3 5 9, e = 0 1 1 1, jumps 1 1 2 4; rank 8 sends
 * to 7 7 6 4 and receives from 0 0 1 3; B_8^0 = 7 6 4 0 2 5 1 3, B_8^1 = 7 5 1 3,
 * B_8^2 = 6 2, B_8^3 = 4 (offsets 1 2 4 8 6 3 7 5 | 1 3 7 5 | 2 6 | 4).
 *
 * Corrected from the paper's listings: Listing 1 halves p rounding down (giving
 * floor(log2 p) rounds; Table II needs ceil); Listing 2 assigns ciro twice (the first is
 * ciri, the from-process).
 *
 * Cost: O(q) per call (relative_blocks: O(2^(q-k)), the size of what it writes).
 * Kernels: allreduce_circulant.c, reduce_circulant.c, reduce_scatter_block_circulant.c.
 * Python mirror: tuwviz/model/topology/circulant.py.
 */
#include "topology.h"

int tuw_circ_skips(int p, int skips[])
{
    int q = 0;
    for (long long n = p; n > 1; n = (n + 1) / 2)
        q++;
    skips[q] = p;
    for (int k = q - 1; k >= 0; k--)
        skips[k] = skips[k + 1] - skips[k + 1] / 2;
    return q;
}

int tuw_circ_epsilon(const int skips[], int k) { return skips[k + 1] & 1; }

int tuw_circ_to(int p, int rank, const int skips[], int k)
{
    long long t = (long long)rank - skips[k] + tuw_circ_epsilon(skips, k);
    return (int)((t % p + p) % p);
}

int tuw_circ_from(int p, int rank, const int skips[], int k)
{
    long long f = (long long)rank + skips[k] - tuw_circ_epsilon(skips, k);
    return (int)(f % p);
}

int tuw_circ_pathhead(int virt, int q, const int skips[])
{
    if (virt == 0 || virt == skips[q])
        return q;
    long long offs = 0;
    int i = q;
    do {
        i--;
        long long jump = skips[i] - tuw_circ_epsilon(skips, i);
        if (offs + jump == virt)
            break;
        if (offs + jump < virt)
            offs += jump;
    } while (i > 0);
    return i;
}

int tuw_circ_relative_blocks(int off, int k, int q, const int skips[], int b, int block[])
{
    for (int i = k; i < q; i++) {
        block[b] = off + skips[i] - tuw_circ_epsilon(skips, i);
        b = tuw_circ_relative_blocks(block[b], i + 1, q, skips, b + 1, block);
    }
    return b;
}

void tuw_circ_tree_create(int p, int rank, int root, tuw_circ_tree *t)
{
    int skips[TUW_CIRC_MAX_SKIPS];
    int q = tuw_circ_skips(p, skips);
    int v = (int)(((long long)rank - root + p) % p);
    int head = tuw_circ_pathhead(v, q, skips);

    t->nchildren = 0;
    for (int j = 0; j < head; j++) {
        long long c = (long long)v + skips[j] - tuw_circ_epsilon(skips, j);
        if (c < p && tuw_circ_pathhead((int)c, q, skips) == j) {
            t->child[t->nchildren].rank = (int)((c + root) % p);
            t->child[t->nchildren++].round = j;
        }
    }
    t->parent = v ? tuw_circ_to(p, rank, skips, head) : -1;
    t->round = v ? head : -1;
}

int tuw_circ_subtree_size(int p, int rank, int root)
{
    /* v's subtree ends where its next sibling's begins (children come in increasing round
     * and virtual rank); the last child's ends where its parent's does; the root's at p */
    long long v = ((long long)rank - root + p) % p;
    tuw_circ_tree t, u;
    for (int x = rank; x != root; x = t.parent) {
        tuw_circ_tree_create(p, x, root, &t);
        tuw_circ_tree_create(p, t.parent, root, &u);
        for (int k = 0; k < u.nchildren; k++)
            if (u.child[k].round > t.round)
                return (int)((((long long)u.child[k].rank - root + p) % p) - v);
    }
    return (int)(p - v);
}
