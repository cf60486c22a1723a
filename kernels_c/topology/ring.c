/*
 * ring.c - which process sits where on the ring, when each piece of the pipelined ring
 * moves, and how big its pieces are (Träff, Ripke, Siebert, Balaji, Thakur, Gropp, IJHPCA
 * 2010, Sections 2.2-2.4).  Integers only, no communicator: every process computes the same
 * answer from recvcounts, which all processes know in MPI_Allgatherv.  The rules are in
 * topology.h; the communicator side (nodes, tuning parameters) is common/node_map.c.
 *
 * Cost (local computation): SMP order O(p log p) (two sorts), RANK and SPREAD O(p); one
 * slot of the clock O(p); the block size O(p).  Extra memory: the SMP order sorts 4p ints.
 *
 * Example, SPREAD, counts (5, 0, 0, 3, 0, 0, 0): n = 2 ranks with data, z = 5 empty, so
 * rank 0 gets 5/2 + 1 = 3 empty ranks in front, rank 3 gets 2: order (1, 2, 4, 0, 5, 6, 3).
 * Slot clock, p = 3, own = (3, 0, 1), nsend = (4, 3, 1): senders per slot (1,0,1),
 * (1,1,0), (1,1,0), (1,1,0), then none (the example of allgatherv_pipelined.c).
 *
 * Python mirror: tuwviz/model/topology/ring.py (ring_order, ring_slot,
 * allgatherv_block_elems).
 */
#include <math.h>
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

/* ---- TUW_RING_SMP: nodes one after the other (Figure 1) ---------------------------------- */

/* Sort key of three ints, compared lexicographically. */
typedef struct {
    int a, b, c;
} triple;

static int cmp_triple(const void *x, const void *y)
{
    const triple *s = x, *t = y;
    if (s->a != t->a)
        return s->a < t->a ? -1 : 1;
    if (s->b != t->b)
        return s->b < t->b ? -1 : 1;
    if (s->c != t->c)
        return s->c < t->c ? -1 : 1;
    return 0;
}

/*
 * Two sorts, O(p log p) also for the large p of the model:
 *   1. by (node, rank): each node's ranks become one run whose first entry is its lowest
 *      rank, the node's "leader";
 *   2. by (leader, has data, rank): nodes in the order of their lowest rank, inside a node
 *      the empty processes first, so the node's last process (the one sending to the next
 *      node) has data if any process of the node has: the node then sends real blocks
 *      from the first round on (Section 2.3, last paragraph).
 */
static int smp_order(int p, const int counts[], const int node_of_rank[], int order[])
{
    triple *item = malloc((size_t)p * sizeof *item);
    int *leader = malloc((size_t)p * sizeof *leader);
    if (!item || !leader) {
        free(item);
        free(leader);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < p; i++)
        item[i] = (triple){node_of_rank[i], i, 0};
    qsort(item, (size_t)p, sizeof *item, cmp_triple);
    for (int j = 0; j < p; j++) {
        int first_of_run = j == 0 || item[j].a != item[j - 1].a;
        leader[item[j].b] = first_of_run ? item[j].b : leader[item[j - 1].b];
    }

    for (int i = 0; i < p; i++)
        item[i] = (triple){leader[i], counts[i] > 0, i};
    qsort(item, (size_t)p, sizeof *item, cmp_triple);
    for (int k = 0; k < p; k++)
        order[k] = item[k].c;

    free(item);
    free(leader);
    return MPI_SUCCESS;
}

/* ---- TUW_RING_SPREAD: data equidistant among the empty processes (Section 2.3) ------------ */

/* The first rank >= from that has data (with_data = 1) or is empty (with_data = 0). */
static int next_rank(int p, const int counts[], int from, int with_data)
{
    while (from < p && (counts[from] > 0) != with_data)
        from++;
    return from;
}

/*
 * A process preceded by z' empty processes receives nothing real in the first z' rounds;
 * if it has at least z' blocks of its own to send meanwhile, the idle rounds cost nothing
 * (Section 2.3).  Spreading the z empty processes evenly, about z / n in front of each of
 * the n processes with data, keeps every z' small: the paper's z' = floor(z / (p - z)).
 */
static void spread_order(int p, const int counts[], int order[])
{
    int n = 0;
    for (int i = 0; i < p; i++)
        n += counts[i] > 0;
    int z = p - n;
    if (n == 0 || z == 0) { /* nothing to spread: the identity */
        for (int k = 0; k < p; k++)
            order[k] = k;
        return;
    }
    int q = z / n, r = z % n, k = 0;
    int empty = next_rank(p, counts, 0, 0), full = next_rank(p, counts, 0, 1);
    for (int j = 0; j < n; j++) {
        int share = q + (j < r ? 1 : 0); /* empty processes in front of the j-th full one */
        for (int s = 0; s < share; s++) {
            order[k++] = empty;
            empty = next_rank(p, counts, empty + 1, 0);
        }
        order[k++] = full;
        full = next_rank(p, counts, full + 1, 1);
    }
}

int tuw_ring_order(int p, const int counts[], const int node_of_rank[], int kind, int order[])
{
    if (p < 1)
        return MPI_ERR_ARG;
    switch (kind) {
    case TUW_RING_RANK:
        for (int k = 0; k < p; k++)
            order[k] = k;
        return MPI_SUCCESS;
    case TUW_RING_SMP:
        if (!node_of_rank)
            return MPI_ERR_ARG;
        return smp_order(p, counts, node_of_rank, order);
    case TUW_RING_SPREAD:
        spread_order(p, counts, order);
        return MPI_SUCCESS;
    default:
        return MPI_ERR_ARG;
    }
}

/* ---- the pipelined ring's slot clock (Section 2.3) --------------------------------------- */

/*
 * Skipping empty pieces only saves time if the skipped rounds disappear: a process that
 * sent its own pieces and has nothing new to pass on should not wait for a round number,
 * but send the next real piece as soon as it has one.  The clock counts rounds in time
 * ("slots"): every position sends at most one piece per slot, as early as it can.  Both
 * ends of a message compute the same slot, so it serves as the message's tag and blocking
 * operations run in slot order cannot deadlock.
 */
int tuw_ring_slot(int p, const long long own[], const long long nsend[], long long sent[],
                  unsigned char now[])
{
    int senders = 0;
    for (int k = 0; k < p; k++) {
        long long received = sent[(k - 1 + p) % p]; /* before this slot: not updated yet */
        int has_piece = sent[k] < own[k] || sent[k] - own[k] < received;
        now[k] = sent[k] < nsend[k] && has_piece;
        senders += now[k];
    }
    for (int k = 0; k < p; k++)
        sent[k] += now[k];
    return senders;
}

/* ---- block size B (Section 2.4) --------------------------------------------------------- */

/*
 * Eq. (2): with z empty processes and n = p - z with data, the pipelined ring needs about
 * m/B + D rounds of cost alpha + beta B each, D = (p + z)/2 - 1 + floor(z / (p - z));
 * minimizing (m/B + D)(alpha + beta B) over B gives B = sqrt(m alpha / (beta D)).  If only
 * one process has data (z = p - 1) the ring is a linear broadcast pipeline, which needs
 * m/B + p - 2 rounds: D = p - 2.  Returns B in bytes (the caller converts and clamps); a
 * non-positive D means "no pipelining": the caller takes the largest block.
 */
static double eq2_block_bytes(double m, int p, int z, double alpha, double beta, int *no_pipe)
{
    double d = z == p - 1 ? (double)(p - 2) : (p + z) / 2.0 - 1.0 + (double)(z / (p - z));
    *no_pipe = d <= 0;
    if (*no_pipe)
        return 0;
    return sqrt(m * alpha / (beta * d)); /* this order, so the Python model agrees bit for bit */
}

long long tuw_allgatherv_block_elems(int p, const int counts[], int extent,
                                     long long block_bytes, double alpha, double beta)
{
    if (extent < 1)
        extent = 1; /* no element size to divide by: count in bytes */
    if (block_bytes > 0) { /* B given from the outside, as in the paper's experiments */
        long long b = block_bytes / extent;
        return b > 0 ? b : 1;
    }

    long long m = 0; /* total bytes */
    int z = 0, maxc = 0, regular = 1;
    for (int i = 0; i < p; i++) {
        m += (long long)counts[i] * extent;
        z += counts[i] == 0;
        if (counts[i] > maxc)
            maxc = counts[i];
        regular = regular && counts[i] == counts[0];
    }
    if (maxc == 0)
        return 1; /* nothing to send: any B works */
    if (regular)
        return maxc; /* B = m': the algorithm is the standard linear ring (Section 2.4) */

    int no_pipe;
    double bytes = eq2_block_bytes((double)m, p, z, alpha, beta, &no_pipe);
    if (no_pipe)
        return maxc;
    double elems = floor(bytes / (double)extent);
    /* clamp before converting: a cost model with beta = 0 gives infinity, alpha < 0 NaN */
    if (!(elems >= 1.0))
        return 1;
    if (elems >= (double)maxc)
        return maxc;
    return (long long)elems;
}
