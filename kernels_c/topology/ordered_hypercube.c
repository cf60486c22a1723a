/*
 * ordered_hypercube.c - ordered hypercube topology from integers only (Träff 2017, Sec. 2).
 *
 * At level d the ranks 0..p-1 fall into consecutive cubes [c 2^d, (c+1) 2^d), the last one
 * cut at p; cubes 2c and 2c+1 of level d form cube c of level d+1.  The fixed root of a
 * cube is its last rank, min((c+1) 2^d, p) - 1, so every process can compute it.
 *
 * Partners (the paper's last paragraphs of Section 2): a fixed root f of level d flips bit
 * d; if the result is beyond p-1 it takes p-1 instead.  Rank p-1 is the only special case:
 * in iteration d, with bit d set it pairs with floor((p-1)/2^d) 2^d - 1; with bit d clear
 * its cube has no sibling and it has no role.
 *
 *   p = 11:  iteration 0: 0-1 2-3 4-5 6-7 8-9      (10 idle: bit 0 clear)
 *            iteration 1: 1-3 5-7 9-10             (9 flips to 11 > 10: takes 10)
 *            iteration 2: 3-7                      (10 idle: bit 2 clear)
 *            iteration 3: 7-10                     (7 flips to 15 > 10: takes 10)
 *
 * Winner rule (same at both fixed roots, so they agree without further messages): the
 * cube holding the external root wins (Lemma 2.2); else the larger gather time T (bytes
 * outside the gather root) wins, then the larger total (Lemma 2.1: the cube with the
 * smaller gather time, ties broken towards the smaller amount of data, sends), then the
 * right cube - whose fixed root stays fixed root, so regular problems need no info
 * messages.  Because T compares bytes only, the tree depends on the block sizes, not on
 * alpha and beta.
 *
 * Cost (local computation): O(log p) for tuw_oh_dims, O(1) for the others; no memory.
 *
 * Python mirror: tuwviz/model/topology/ordered_hypercube.py (oh_dims, oh_cube,
 * oh_fixed_root, oh_is_fixed_root, oh_has_sibling, oh_partner, oh_right_wins).
 */
#include "topology.h"

int tuw_oh_dims(int p)
{
    int d = 0;
    while (d < TUW_OH_MAX_DIMS - 1 && (1LL << d) < p)
        d++;
    return d;
}

void tuw_oh_cube(int p, int d, int rank, int *lo, int *hi)
{
    long long l = ((long long)rank >> d) << d, h = l + (1LL << d);
    *lo = (int)l;
    *hi = (int)(h < p ? h : p);
}

int tuw_oh_fixed_root(int p, int d, int rank)
{
    int lo, hi;
    tuw_oh_cube(p, d, rank, &lo, &hi);
    return hi - 1;
}

int tuw_oh_is_fixed_root(int p, int d, int rank)
{
    return rank == p - 1 || (((long long)rank + 1) & ((1LL << d) - 1)) == 0;
}

int tuw_oh_has_sibling(int p, int d, int rank)
{
    long long c = (long long)rank >> d;
    return (c & 1) || ((c + 1) << d) < p;
}

int tuw_oh_partner(int p, int d, int f)
{
    long long bit = 1LL << d;
    if (!tuw_oh_is_fixed_root(p, d, f))
        return -1;
    if (f == p - 1)
        return (f & bit) ? (int)((((long long)f >> d) << d) - 1) : -1;
    if (f & bit)
        return (int)(f - bit);
    return f + bit > p - 1 ? p - 1 : (int)(f + bit);
}

int tuw_oh_right_wins(const tuw_oh_state *left, const tuw_oh_state *right, int root)
{
    if (left->groot == root)
        return 0;
    if (right->groot == root)
        return 1;
    if (left->time != right->time)
        return right->time > left->time;
    long long lt = left->time + left->rootblock, rt = right->time + right->rootblock;
    if (lt != rt)
        return rt > lt;
    return 1;
}
