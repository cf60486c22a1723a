/*
 * intergroup.c - who sends which segment to whom between two groups (Kang, Träff,
 * Al-Bahrani, Agrawal, Choudhary, Liao, "Scalable algorithms for MPI intergroup Allgather
 * and Allgatherv", Parallel Computing 2019, Sections 4 and 4.1), from integers only.
 *
 * One rule cuts everything: `total` items cut into n almost equal parts, in order, the first
 * total mod n parts one item larger (ceil(total/n)) than the others (floor(total/n)).
 *   - Algorithm 1, indivisible case: the p processes of the larger group A cut into q
 *     subgroups s_0..s_{q-1} (p = 8, q = 3: {0,1,2} {3,4,5} {6,7}); b_j exchanges with s_j,
 *     and b_j's block is cut into |s_j| segments, segment i going to the i-th process of s_j.
 *   - Algorithm 2: the bytes of one group's blocks, numbered in rank order (the global
 *     index), cut into as many parts as the other group has processes (K_A into q parts,
 *     K_B into p parts); a sender sends to every receiver whose part its block overlaps.
 * Receive order (Section 4.1): a receiver takes first the sender that goes on to higher
 * receivers (it sends to this one first), then the senders that send only to it, in rank
 * order, and last the sender that came from lower receivers (it sends to this one last).
 *
 * Example, Algorithm 2 with p = 6 senders of 3, 1, 4, 1, 5, 2 bytes (K = 16) and q = 3
 * receivers: parts [0,6) [6,11) [11,16); sender 2 (bytes 4..7) sends to receivers 0 and 1;
 * receiver 1 receives from 4 (goes on to receiver 2) first, then 3, then 2.
 *
 * Cost: O(1) per call, except tuw_ig_recv_order: O(ns).
 * Kernels: allgather_segmented.c, allgatherv_segmented.c.
 * Python mirror: tuwviz/model/topology/intergroup.py.
 */
#include "tuwviz.h"
#include "topology.h"

void tuw_ig_part(long long total, int n, int i, long long *first, long long *size)
{
    long long c = total / n, r = total % n;
    if (i < r) {
        *first = (long long)i * (c + 1);
        *size = c + 1;
    } else {
        *first = r * (c + 1) + (long long)(i - r) * c;
        *size = c;
    }
}

int tuw_ig_part_of(long long total, int n, long long index)
{
    long long c = total / n, r = total % n;
    if (index < r * (c + 1))
        return (int)(index / (c + 1));
    return (int)(r + (index - r * (c + 1)) / c);
}

int tuw_ig_receivers(long long total, int n, long long start, long long count, int *lo)
{
    if (count <= 0) {
        *lo = 0;
        return 0;
    }
    *lo = tuw_ig_part_of(total, n, start);
    return tuw_ig_part_of(total, n, start + count - 1) - *lo + 1;
}

int tuw_ig_recv_order(int ns, const int counts[], int n, int k, int order[])
{
    long long total = 0;
    for (int i = 0; i < ns; i++)
        total += counts[i];
    long long first, size;
    tuw_ig_part(total, n, k, &first, &size);
    if (size == 0)
        return 0;
    long long end = first + size, at = 0;
    int lo = -1, hi = -1; /* the first and the last sender overlapping [first, end) */
    for (int i = 0; i < ns; i++) {
        long long s = at, e = at + counts[i];
        at = e;
        if (counts[i] > 0 && s < end && e > first) {
            if (lo < 0)
                lo = i;
            hi = i;
        }
    }
    long long lo_start = 0, hi_end = 0;
    for (int i = 0; i < ns; i++) { /* where lo starts and hi ends in the global index */
        if (i < lo)
            lo_start += counts[i];
        if (i <= hi)
            hi_end += counts[i];
    }
    /* hi goes on to higher receivers after this one: it sends here first, so take it first;
     * lo came from lower receivers: it sends here last, so take it last */
    int first_hi = hi != lo && hi_end > end, last_lo = hi != lo && lo_start < first;
    int n_out = 0;
    if (first_hi)
        order[n_out++] = hi;
    for (int i = lo + last_lo; i <= hi - first_hi; i++)
        if (counts[i] > 0)
            order[n_out++] = i;
    if (last_lo)
        order[n_out++] = lo;
    return n_out;
}
