/*
 * allgatherv_pipelined.c - the pipelined (blocked) ring Allgatherv (Träff, Ripke, Siebert,
 * Balaji, Thakur, Gropp: "A Pipelined Algorithm for Large, Irregular All-gather Problems",
 * IJHPCA 2010, Sections 2.2-2.4, Figures 2 and 3).
 *
 * Idea (Section 2.2).  On a cluster whose nodes hold different numbers of processes, the
 * linear ring with regular blocks is still bandwidth optimal if each node's processes are
 * consecutive on the ring (Figure 1).  Read backwards, an irregular problem is a regular
 * one on "virtual nodes": process i's data of m_i elements is cut into
 *     b_i = max(1, ceil(m_i / B))
 * pieces of at most B elements, one per virtual process, and process i simulates a virtual
 * node with b_i virtual processes.  Virtual processes of one node need not send to each
 * other, so each real process sends to its successor and receives from its predecessor
 * once per round, as in the linear ring - but pieces of at most B instead of the largest
 * m_i.  With b = sum b_i pieces, process i has everything after b - b_i rounds; the whole
 * operation takes (Eq. 1)
 *     r = max_i (b - b_i) = b - min_i b_i  rounds of at most alpha + beta B each.
 *
 * What travels, in which order (Figure 2).  Number the pieces 0 .. b-1 along the ring:
 * ring position k (rank order[k], topology.h) owns pieces first_k .. first_k + b_k - 1,
 * first_k = sum_{j<k} b_j; piece j of position k is elements [j B, min((j+1) B, m_k)) of
 * its block.  Virtual process v holds piece v - t in Eq. (1)'s round t and passes it on,
 * so in round t position k
 *     sends    piece first_k + b_k - 1 - t (mod b)   for t < b - b_{k+1}  (what k+1 lacks)
 *     receives piece first_k - 1 - t     (mod b)     for t < b - b_k      (what k lacks)
 * Figure 2: "starts sending block j+k-1 and receiving block j-1".  So a process sends its
 * own pieces (last first), then passes on what it received, in the order received.
 *
 * Empty pieces and slots (Section 2.3).  Only processes with m_i = 0 have an empty piece
 * (their one piece).  Both ends know every piece's size from recvcounts, so empty pieces
 * are neither sent nor received.  For this to save time (Figure 3: 9 instead of r = 11
 * rounds when the empty processes are spread out, TUW_RING_SPREAD), a process must not
 * wait for the round number of its next real piece but send it as soon as it has it.  So
 * the messages run in "slots", rounds in time: all positions step together; in each slot
 * a position sends its next non-empty piece if it has it - an own piece, or one received in
 * an earlier slot - and its successor receives it in the same slot (tuw_ring_slot,
 * topology/ring.c).  Every process runs this clock for the whole ring (integers only, O(p)
 * per slot) and does its own part: per slot one MPI_Sendrecv, or only a send, or only a
 * receive, or nothing; tag = slot.  There are never more slots than Eq. (1)'s r, and
 * exactly r if no process is empty.
 *
 * Why it cannot deadlock.  Every message has one slot that both ends compute alike: my
 * send in slot s matches my successor's receive in slot s (same piece, same size, tag s).
 * Suppose some processes waited forever, and take one waiting in the smallest slot s.
 * Each of its two partners is in slot s or further (a process in an earlier slot would be
 * waiting too, or still running): if it is past slot s it has completed the matching
 * operation, if it is in slot s it has posted it.  Either way the slot-s operations are
 * matched and MPI completes them (MPI_Sendrecv posts both halves at once, so neither half
 * waits for the other): a contradiction.
 *
 * Block size B: tuw_set_block_bytes, else the Eq. (2) estimate (topology.h).  With all
 * m_i equal B = m_i and the algorithm is the standard linear ring (Section 2.4).
 *
 * Cost (one-ported, bidirectional, linear model): at most (b - min_i b_i)(alpha + beta B'),
 * B' = B in bytes; with the p - z processes with data spread out and every b_i > z/(p-z):
 * sum_i ceil(m_i / B) - 1 + floor(z / (p - z)) slots (Section 2.3).  Data go straight from
 * and into recvbuf at rdispls (no copies beyond the own block, no temporary buffers).
 * Extra memory: 5p long longs, p ints, p bytes.
 *
 * Example, p = 3, rank order, m = (5, 0, 2) elements, B = 2: b_k = (3, 1, 1), first_k =
 * (0, 3, 4), b = 5; pieces 0, 1, 2 of rank 0 (2, 2, 1 elements), 3 of rank 1 (empty), 4 of
 * rank 2 (2 elements).  Non-empty pieces sent: rank 0: 2, 1, 0, 4;  rank 1: 2, 1, 0 (piece
 * 3 is empty);  rank 2: 4 (its successor, rank 0, lacks only that).  Slots:
 *     slot 0: 0 -> 1 piece 2,  2 -> 0 piece 4  (own pieces go at once)
 *     slot 1: 0 -> 1 piece 1,  1 -> 2 piece 2  (received in slot 0)
 *     slot 2: 0 -> 1 piece 0,  1 -> 2 piece 1
 *     slot 3: 0 -> 1 piece 4,  1 -> 2 piece 0
 * 8 messages in 4 slots = r = b - min b_k (Eq. 1).  Model: tuwviz/model/allgatherv.py.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "ring_order.h"

/* The pieces of one call: who owns which, where they live in recvbuf, who sends how many. */
typedef struct {
    int p;
    const int *order;  /* order[k]: rank at ring position k */
    const int *counts; /* recvcounts, by rank */
    const int *displs; /* rdispls, by rank */
    MPI_Aint extent;   /* of recvtype */
    long long B;       /* piece size in elements */
    long long b;       /* total number of pieces, empty ones included */
    long long *nblk;   /* nblk[k] = b_k of ring position k */
    long long *first;  /* first[k] = sum_{j<k} b_j */
    long long *own;    /* own[k] = non-empty pieces of position k: b_k, or 0 if m_k = 0 */
    long long *nsend;  /* nsend[k] = non-empty pieces position k sends */
} pieces;

/* x mod b in 0..b-1, also for negative x */
static long long lmod(long long x, long long b) { return ((x % b) + b) % b; }

static int alloc_pieces(pieces *pc)
{
    size_t n = (size_t)pc->p;
    pc->nblk = malloc(n * sizeof *pc->nblk);
    pc->first = malloc(n * sizeof *pc->first);
    pc->own = malloc(n * sizeof *pc->own);
    pc->nsend = malloc(n * sizeof *pc->nsend);
    return pc->nblk && pc->first && pc->own && pc->nsend ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void free_pieces(pieces *pc)
{
    free(pc->nblk);
    free(pc->first);
    free(pc->own);
    free(pc->nsend);
}

/* Cut every process's block into pieces of at most B elements: b_k, first_k, b, and how
 * many non-empty pieces each position owns and sends. */
static void cut_into_pieces(pieces *pc)
{
    int p = pc->p;
    long long nonempty = 0;
    pc->b = 0;
    for (int k = 0; k < p; k++) {
        long long c = pc->counts[pc->order[k]];
        long long n = (c + pc->B - 1) / pc->B;
        pc->nblk[k] = n > 1 ? n : 1; /* an empty process still has one (empty) piece */
        pc->own[k] = c > 0 ? pc->nblk[k] : 0;
        pc->first[k] = pc->b;
        pc->b += pc->nblk[k];
        nonempty += pc->own[k];
    }
    /* Position k passes on every piece except its successor's (b - b_{k+1} rounds), so it
     * sends all non-empty pieces but the successor's own. */
    for (int k = 0; k < p; k++)
        pc->nsend[k] = p > 1 ? nonempty - pc->own[(k + 1) % p] : 0;
}

/* Piece v (0 <= v < b): sets *addr to its place in recvbuf and returns its size in
 * elements (0 only for the piece of an empty process). */
static int piece(const pieces *pc, long long v, char *recvbuf, char **addr)
{
    int lo = 0, hi = pc->p - 1; /* binary search: the last position k with first_k <= v */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (pc->first[mid] <= v)
            lo = mid;
        else
            hi = mid - 1;
    }
    int owner = pc->order[lo];
    long long start = (v - pc->first[lo]) * pc->B; /* piece j = v - first_k starts at j B */
    long long size = pc->counts[owner] - start;
    if (size > pc->B)
        size = pc->B;
    if (size < 0)
        size = 0;
    *addr = recvbuf + ((MPI_Aint)pc->displs[owner] + (MPI_Aint)start) * pc->extent;
    return (int)size;
}

/* The next non-empty piece of a sequence (from - t) mod b, t = *t, *t + 1, ... (Eq. (1)'s
 * round order); advances *t past it.  Returns its size, *addr its place in recvbuf. */
static int next_piece(const pieces *pc, long long from, long long *t, char *recvbuf,
                      char **addr)
{
    int size;
    do
        size = piece(pc, lmod(from - (*t)++, pc->b), recvbuf, addr);
    while (size == 0);
    return size;
}

/* Number of usable tags: slot s has tag s % tags, i.e. s itself unless there are more
 * slots than MPI_TAG_UB (at least 32767 by the standard); wrapping is safe because
 * messages between two processes never overtake each other. */
static int tag_count(MPI_Comm comm, long long *tags)
{
    int *ub, found;
    int rc = MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &found);
    *tags = rc == MPI_SUCCESS && found ? (long long)*ub + 1 : 32768;
    return rc;
}

/* One slot: whichever of the two transfers happen, as one operation. */
static int exchange(char *sbuf, int scount, int succ, char *rbuf, int rcount, int pred,
                    MPI_Datatype type, int tag, MPI_Comm comm)
{
    if (scount > 0 && rcount > 0)
        return TUW_Sendrecv(sbuf, scount, type, succ, tag, rbuf, rcount, type, pred, tag,
                            comm, MPI_STATUS_IGNORE);
    if (scount > 0)
        return TUW_Send(sbuf, scount, type, succ, tag, comm);
    if (rcount > 0)
        return TUW_Recv(rbuf, rcount, type, pred, tag, comm, MPI_STATUS_IGNORE);
    return MPI_SUCCESS; /* nothing for me in this slot */
}

/* Run the slot clock until this process (ring position pos) has sent and received all
 * its pieces. */
static int run_slots(const pieces *pc, int pos, char *recvbuf, MPI_Datatype type,
                     MPI_Comm comm)
{
    int p = pc->p, rc = MPI_SUCCESS;
    int prev = (pos - 1 + p) % p, succ = pc->order[(pos + 1) % p], pred = pc->order[prev];
    long long *sent = calloc((size_t)p, sizeof *sent);
    unsigned char *now = malloc((size_t)p);
    long long ts = 0, tr = 0; /* Eq. (1) rounds walked through by my sends, my receives */
    long long tags;
    if (!sent || !now) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    rc = tag_count(comm, &tags);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    for (long long slot = 0; sent[pos] < pc->nsend[pos] || sent[prev] < pc->nsend[prev];
         slot++) {
        char *sbuf = NULL, *rbuf = NULL;
        int scount = 0, rcount = 0;
        tuw_ring_slot(p, pc->own, pc->nsend, sent, now);
        if (now[pos]) /* my own pieces last to first, then what I received */
            scount = next_piece(pc, pc->first[pos] + pc->nblk[pos] - 1, &ts, recvbuf, &sbuf);
        if (now[prev]) /* my predecessor sends me its next piece */
            rcount = next_piece(pc, pc->first[pos] - 1, &tr, recvbuf, &rbuf);
        rc = exchange(sbuf, scount, succ, rbuf, rcount, pred, type, (int)(slot % tags), comm);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }

fn_exit:
    free(sent);
    free(now);
    return rc;
}

int TUW_Allgatherv_pipelined(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc, p, pos;
    int *order;
    MPI_Aint extent;
    pieces pc = {0};
    double alpha, beta;

    MPI_Comm_size(comm, &p);
    rc = tuw_ring_setup(sendbuf, sendcount, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                        comm, &order, &pos, &extent);
    if (rc != MPI_SUCCESS)
        goto fn_exit;

    if (extent > 2147483647) { /* block_elems takes an int extent; same type everywhere */
        rc = MPI_ERR_COUNT;
        goto fn_exit;
    }
    tuw_get_cost_model(&alpha, &beta);
    pc = (pieces){.p = p, .order = order, .counts = recvcounts, .displs = rdispls,
                  .extent = extent};
    pc.B = tuw_allgatherv_block_elems(p, recvcounts, (int)extent, tuw_get_block_bytes(),
                                      alpha, beta);
    rc = alloc_pieces(&pc);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    cut_into_pieces(&pc);
    rc = run_slots(&pc, pos, recvbuf, recvtype, comm);

fn_exit:
    free(order);
    free_pieces(&pc);
    return rc;
}
