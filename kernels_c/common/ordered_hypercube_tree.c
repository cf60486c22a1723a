/*
 * ordered_hypercube_tree.c - distributed construction of the linear-time gather tree
 * (Träff 2017, Lemma 2.3, with the externally given root of Lemma 2.2): tuw_oh_construct,
 * and tuw_oh_setup, the start TUW_Gatherv and TUW_Scatterv share (checks, sizes, tree).
 *
 * Invariant after iteration d-1: every level-d cube has a fixed root (its last rank,
 * computable by all) and a gather root; the fixed root knows the cube's state
 * (gather root, gather time T, gather root's block), the gather root knows that it is one
 * and which blocks it holds.  Iteration d, for every pair of sibling cubes:
 *
 *   1. the two fixed roots exchange their states (MPI_Sendrecv, 24 bytes each way) and
 *      both apply tuw_oh_right_wins: the loser's gather root will send its cube (blocks
 *      lo..hi-1, a consecutive range) to the winner's gather root;
 *   2. a fixed root whose cube's gather root is another process sends it the outcome
 *      (winner, loser, loser's bytes: 24 bytes); the gather root receives it.  At level 0
 *      every process is its own fixed and gather root, so iteration 0 has no info messages,
 *      and for regular problems (ties go to the right cube) there are none at all.
 *
 * Tags are the iteration number.  A process leaves the loop once it is neither a fixed
 * root nor a gather root (both roles, once lost, never come back).
 *
 * Where the blocks sit: a gather root's subtree is one consecutive rank range, held in one
 * buffer in rank order.  The tree gives the byte offset of every child's range in it
 * (tuw_oh_edge.offset) and of the own block (tuw_oh_tree.offset): a child from the right
 * cube lands behind all that is held so far, one from the left cube in front of it, moving
 * it all back.  TUW_Gatherv receives into these places, TUW_Scatterv sends from them; so
 * the construction lives here in common/, shared by both, on top of the integer-only
 * topology of kernels_c/topology/ordered_hypercube.c.
 *
 * Cost: ceil(log2 p) dependent exchanges plus at most one info message per iteration and
 * process: at most 2 ceil(log2 p) alpha (+ constant-size beta terms), each process sending
 * and receiving at most two messages per iteration (Lemma 2.3).
 *
 * Example, p = 4, root 0, m = (1, 0, 3, 2) bytes:
 *   it. 0: 0<->1 (root 0 wins: 1 -> 0, 0 bytes, dotted), 2<->3 (T equal, 2's total larger:
 *          3 -> 2, 2 bytes);
 *   it. 1: 1<->3 exchange (fixed roots); root 0's cube wins; 1 tells gather root 0
 *          "receive 5 bytes from 2", 3 tells gather root 2 "send to 0".
 * Tree: parent = (-1, 0, 0, 2).  Rank 2 holds blocks 2..3: its own at offset 0, child 3's
 * at offset 3.  Model: tuwviz/model/ordered_hypercube.py:build_tree.
 */
#include "tuwviz.h"
#include "ordered_hypercube.h"

int tuw_oh_construct(int p, int rank, int root, long long mybytes, MPI_Comm comm,
                     tuw_oh_tree *t)
{
    int rc = MPI_SUCCESS, is_groot = 1;
    int dims = tuw_oh_dims(p);
    tuw_oh_state st = {rank, 0, mybytes}; /* meaningful while this process is a fixed root */

    t->nchildren = 0;
    t->has_parent = 0;
    t->lo = rank;
    t->hi = rank + 1;
    t->bytes = mybytes;
    t->offset = 0;

    for (int d = 0; d < dims; d++) {
        int fixed = tuw_oh_is_fixed_root(p, d, rank);
        if (!fixed && !is_groot)
            break;
        if (!tuw_oh_has_sibling(p, d, rank))
            continue; /* the last cube of this level passes through unchanged */

        int lo, hi, right = (rank >> d) & 1;
        tuw_oh_cube(p, d, rank, &lo, &hi);
        long long size = 1LL << d;
        int sib_lo = right ? (int)(lo - size) : hi;
        int sib_hi = right ? lo : (int)(hi + size < p ? hi + size : p);
        tuw_oh_info info;

        if (fixed) {
            tuw_oh_state other;
            int q = tuw_oh_partner(p, d, rank);
            rc = TUW_Sendrecv(&st, 3, MPI_LONG_LONG, q, d, &other, 3, MPI_LONG_LONG, q, d,
                              comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
            const tuw_oh_state *l = right ? &other : &st, *r = right ? &st : &other;
            int rw = tuw_oh_right_wins(l, r, root);
            const tuw_oh_state *w = rw ? r : l, *x = rw ? l : r;
            info.winner = w->groot;
            info.loser = x->groot;
            info.nbytes = x->time + x->rootblock;
            tuw_oh_state merged = {w->groot, w->time + info.nbytes, w->rootblock};
            if (st.groot != rank) {
                rc = TUW_Send(&info, 3, MPI_LONG_LONG, (int)st.groot, d, comm);
                if (rc != MPI_SUCCESS)
                    goto fn_exit;
            }
            st = merged;
        } else { /* gather root, not fixed root: the fixed root tells the outcome */
            rc = TUW_Recv(&info, 3, MPI_LONG_LONG, tuw_oh_fixed_root(p, d, rank), d, comm,
                          MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }

        if (!is_groot)
            continue;
        if (info.winner == rank) { /* the sibling cube's gather root sends to me */
            tuw_oh_edge *e = &t->child[t->nchildren];
            e->iteration = d;
            e->peer = (int)info.loser;
            e->lo = sib_lo;
            e->hi = sib_hi;
            e->bytes = info.nbytes;
            e->offset = right ? 0 : t->bytes;
            if (right) { /* the sibling cube lies left of mine: all I hold moves behind it */
                t->offset += info.nbytes;
                for (int k = 0; k < t->nchildren; k++)
                    t->child[k].offset += info.nbytes;
            }
            t->nchildren++;
            t->bytes += info.nbytes;
            t->lo = right ? sib_lo : lo;
            t->hi = right ? hi : sib_hi;
        } else { /* I send my whole cube to the winner and am done */
            t->has_parent = 1;
            t->parent.iteration = d;
            t->parent.peer = (int)info.winner;
            t->parent.lo = lo;
            t->parent.hi = hi;
            t->parent.bytes = t->bytes;
            t->parent.offset = 0;
            is_groot = 0;
        }
    }

fn_exit:
    return rc;
}

/* MPI_Type_size and MPI_Type_get_extent of `type`. */
static int type_info(MPI_Datatype type, int *size, MPI_Aint *extent)
{
    MPI_Aint lb;
    int rc = MPI_Type_size(type, size);
    return rc == MPI_SUCCESS ? MPI_Type_get_extent(type, &lb, extent) : rc;
}

/* Datatype sizes and the own block's bytes, as tuw_oh_setup describes them. */
static int own_block(int is_root, int in_place, int own_count, MPI_Datatype own_type,
                     const int root_counts[], int root, MPI_Datatype root_type,
                     int *own_size, MPI_Aint *own_extent, int *root_size,
                     MPI_Aint *root_extent, long long *bytes)
{
    int rc;

    *own_size = *root_size = 0;
    *own_extent = *root_extent = 0;
    if (is_root && (rc = type_info(root_type, root_size, root_extent)) != MPI_SUCCESS)
        return rc;
    if (is_root && in_place) {
        *bytes = (long long)root_counts[root] * *root_size;
        return MPI_SUCCESS;
    }
    if (own_count < 0)
        return MPI_ERR_COUNT;
    if ((rc = type_info(own_type, own_size, own_extent)) != MPI_SUCCESS)
        return rc;
    if (*own_size == 0)
        return MPI_ERR_TYPE; /* blocks are counted in elements of the own type */
    *bytes = (long long)own_count * *own_size;
    return MPI_SUCCESS;
}

int tuw_oh_setup(int root, int in_place, int own_count, MPI_Datatype own_type,
                 const int root_counts[], MPI_Datatype root_type, MPI_Comm comm,
                 int *own_size, MPI_Aint *own_extent, int *root_size, MPI_Aint *root_extent,
                 tuw_oh_tree *tree)
{
    int rc, rank, p;
    long long mybytes;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (root < 0 || root >= p)
        return MPI_ERR_ROOT;
    rc = own_block(rank == root, in_place, own_count, own_type, root_counts, root, root_type,
                   own_size, own_extent, root_size, root_extent, &mybytes);
    if (rc != MPI_SUCCESS)
        return rc;
    return tuw_oh_construct(p, rank, root, mybytes, comm, tree);
}
