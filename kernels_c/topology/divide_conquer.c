/*
 * divide_conquer.c - the divide-and-conquer tree of the D&C Gather and Scatter kernels,
 * from integers only (HPC course report, TU Wien 2017, Section 2.2: "the processes are
 * split into two sets and the root node selects one process, denoted as subroot, from the
 * other set and sends half of the data to it; this is repeated for both sets").
 *
 * A range of ranks [lo, hi) with its subroot r (at first [0, p) and the root) splits at
 * mid = lo + ceil((hi - lo) / 2).  The half without r gets a subroot: mid if r is left of
 * mid, mid - 1 if r is right of it (the process next to the cut: neighbours in rank order
 * tend to share a node).  That subroot is r's child at depth d, the edge's round and tag;
 * then both halves split again, each with its own subroot, until every range is a single
 * process.  Every subtree is a range of consecutive *real* ranks, so a scatter sends
 * (and a gather receives) each half straight from (into) the user's buffer at the root,
 * whatever the root: no virtual ranks, no reordering (compare binomial.c).
 *
 * Rounds: a half has at most ceil(n/2) processes, so there are ceil(log2 p) depths; r's
 * children come in increasing depth, halves of decreasing size.
 *
 * Cost (local computation): O(log p) time, no memory beyond the struct.
 *
 * Example, p = 6, root 2:
 *   depth 0: [0,6) splits into [0,3) | [3,6); root 2 is left: subroot 3 gets [3,6)
 *   depth 1: [0,3) -> [0,2) | [2,3): 2 -> 1 gets [0,2);  [3,6) -> [3,5) | [5,6): 3 -> 5
 *   depth 2: [0,2) -> [0,1) | [1,2): 1 -> 0;             [3,5) -> [3,4) | [4,5): 3 -> 4
 *
 *                2 [0,6)
 *          d0 /       \ d1
 *        3 [3,6)     1 [0,2)
 *     d1 /   \ d2      | d2
 *   5 [5,6) 4 [4,5)  0 [0,1)
 *
 * Rank 3: parent 2, round 0, range [3,6), children 5 (round 1, [5,6)), 4 (round 2, [4,5)).
 * Kernels: gather/gather_divide_conquer.c, scatter/scatter_divide_conquer.c.
 * Python mirror: tuwviz/model/topology/divide_conquer.py (dc_tree_create).
 */
#include "topology.h"

void tuw_dc_tree_create(int p, int rank, int root, tuw_dc_tree *t)
{
    int lo = 0, hi = p, r = root; /* the range holding `rank`, and its subroot */

    t->parent = -1;
    t->round = -1;
    t->lo = 0;
    t->hi = p;
    t->nchildren = 0;
    for (int d = 0; hi - lo > 1; d++) {
        int mid = lo + (hi - lo) / 2 + (hi - lo) % 2; /* left half: ceil(n / 2) */
        int r_left = r < mid;
        int olo = r_left ? mid : lo, ohi = r_left ? hi : mid; /* the half without r */
        int sub = r_left ? mid : mid - 1;

        if (rank == r) {
            tuw_dc_edge *e = &t->child[t->nchildren++];
            e->rank = sub;
            e->round = d;
            e->lo = olo;
            e->hi = ohi;
        }
        if (rank >= olo && rank < ohi) { /* follow the other half, below its subroot */
            if (rank == sub) {
                t->parent = r;
                t->round = d;
                t->lo = olo;
                t->hi = ohi;
            }
            r = sub;
            lo = olo;
            hi = ohi;
        } else if (r_left) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
}
