/*
 * intercomm.c - inter-communicators for the SMPI build of the kernels.
 *
 * SimGrid 3.32's SMPI has no inter-communicators: MPI_Intercomm_create aborts the
 * simulation ("Not yet implemented").  The intergroup kernels (Kang, Träff et al., ParCo
 * 2019) need one, so the SMPI driver builds its own from what SMPI has, and smpi_shim.h
 * routes the calls the kernels make on it here:
 *
 *   the handle        a duplicate of the local group's intra-communicator, so that
 *                     MPI_Comm_size, MPI_Comm_rank, MPI_Comm_group and attributes are the
 *                     local group's, as MPI defines them for an inter-communicator;
 *   point-to-point    MPI_Send, Recv, Isend, Irecv, Sendrecv, Probe name ranks of the other
 *                     group: they run on a private duplicate of both groups (A first), the
 *                     rank shifted by the other group's offset, and the status's MPI_SOURCE
 *                     shifted back (also in MPI_Wait, Waitany and Test of such a receive);
 *   queries           MPI_Comm_test_inter says 1, MPI_Comm_remote_size and _remote_group
 *                     give the other group, MPI_Intercomm_merge orders the groups by `high`.
 *
 *   MPI_Allgather(v)  the library's intergroup collective ("native"): SMPI has none, so it
 *                     is SMPI's MPI_Allgatherv over both groups, of which each process keeps
 *                     the other group's blocks (what MPI defines the result to be).
 *
 * The calls on ordinary communicators go straight to SMPI.  Messages take the same simulated
 * links either way: an inter-communicator's message is one between the same two hosts.
 * No other collective may be called on the handle (it would run in the local group only);
 * the kernels call none (their in-group phases use the intra-communicator tuw_inter_begin
 * builds).
 */
#include <stdlib.h>
#include <string.h>

#include "smpi_shim.h"

/* this file calls SMPI's own functions (the build includes the shim's macros first) */
#undef MPI_Send
#undef MPI_Recv
#undef MPI_Isend
#undef MPI_Irecv
#undef MPI_Sendrecv
#undef MPI_Probe
#undef MPI_Wait
#undef MPI_Test
#undef MPI_Waitany
#undef MPI_Comm_test_inter
#undef MPI_Comm_remote_size
#undef MPI_Comm_remote_group
#undef MPI_Intercomm_merge
#undef MPI_Comm_free
#undef MPI_Allgather
#undef MPI_Allgatherv

typedef struct {
    MPI_Comm handle;  /* what the kernel holds: the local group */
    MPI_Comm both;    /* point-to-point: both groups, A's processes first */
    MPI_Group remote; /* the other group (of MPI_COMM_WORLD's processes) */
    int remote_offset, remote_size, high_first;
} emulated;

static emulated inters[TUW_SMPI_MAX_INTER];
static int ninters;

/* receives posted on an emulated inter-communicator, whose status needs shifting back: as
 * many as a kernel has outstanding (a linear algorithm posts one per process of the other
 * group), so the list grows rather than having a size some p would pass */
typedef struct {
    MPI_Request req;
    int offset;
} posted;
static posted *pending;
static int npending, pending_room;

static emulated *find(MPI_Comm comm)
{
    for (int k = 0; k < ninters; k++)
        if (inters[k].handle == comm && comm != MPI_COMM_NULL)
            return &inters[k];
    return NULL;
}

int tuw_smpi_intercomm(MPI_Comm local, MPI_Comm both, int a_size, MPI_Comm *out)
{
    int rank, size, rc;
    MPI_Group all, remote;
    if (ninters == TUW_SMPI_MAX_INTER)
        return MPI_ERR_INTERN;
    MPI_Comm_rank(both, &rank);
    MPI_Comm_size(both, &size);
    int in_a = rank < a_size, offset = in_a ? a_size : 0, n = in_a ? size - a_size : a_size;
    int range[1][3] = {{offset, offset + n - 1, 1}};
    if ((rc = MPI_Comm_group(both, &all)) != MPI_SUCCESS)
        return rc;
    rc = MPI_Group_range_incl(all, 1, range, &remote);
    MPI_Group_free(&all);
    if (rc != MPI_SUCCESS)
        return rc;
    emulated *e = &inters[ninters];
    if ((rc = MPI_Comm_dup(local, &e->handle)) != MPI_SUCCESS
        || (rc = MPI_Comm_dup(both, &e->both)) != MPI_SUCCESS)
        return rc;
    MPI_Comm_set_errhandler(e->handle, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(e->both, MPI_ERRORS_RETURN);
    e->remote = remote;
    e->remote_offset = offset;
    e->remote_size = n;
    ninters++;
    *out = e->handle;
    return MPI_SUCCESS;
}

static void forget(emulated *e)
{
    MPI_Comm_free(&e->both);
    MPI_Group_free(&e->remote);
    *e = inters[--ninters];
}

static int shift(const emulated *e, int rank)
{
    return rank >= 0 ? rank + e->remote_offset : rank; /* MPI_ANY_SOURCE, MPI_PROC_NULL stay */
}

static void unshift(int offset, MPI_Status *st)
{
    if (st != MPI_STATUS_IGNORE && st->MPI_SOURCE >= 0)
        st->MPI_SOURCE -= offset;
}

static int remember(MPI_Request req, int offset)
{
    if (npending == pending_room) {
        int room = pending_room ? 2 * pending_room : 64;
        posted *more = realloc(pending, sizeof *more * (size_t)room);
        if (!more)
            return MPI_ERR_NO_MEM;
        pending = more;
        pending_room = room;
    }
    pending[npending].req = req;
    pending[npending++].offset = offset;
    return MPI_SUCCESS;
}

/* The offset of a receive posted on an emulated inter-communicator (forgotten), or -1. */
static int recall(MPI_Request req)
{
    for (int k = 0; k < npending; k++)
        if (pending[k].req == req) {
            int offset = pending[k].offset;
            pending[k] = pending[--npending];
            return offset;
        }
    return -1;
}

int tuw_smpi_send(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    emulated *e = find(comm);
    return e ? MPI_Send(buf, count, t, shift(e, dest), tag, e->both)
             : MPI_Send(buf, count, t, dest, tag, comm);
}

int tuw_smpi_recv(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
                  MPI_Status *st)
{
    emulated *e = find(comm);
    if (!e)
        return MPI_Recv(buf, count, t, source, tag, comm, st);
    int rc = MPI_Recv(buf, count, t, shift(e, source), tag, e->both, st);
    unshift(e->remote_offset, st);
    return rc;
}

int tuw_smpi_isend(const void *buf, int count, MPI_Datatype t, int dest, int tag,
                   MPI_Comm comm, MPI_Request *req)
{
    emulated *e = find(comm);
    return e ? MPI_Isend(buf, count, t, shift(e, dest), tag, e->both, req)
             : MPI_Isend(buf, count, t, dest, tag, comm, req);
}

int tuw_smpi_irecv(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    emulated *e = find(comm);
    if (!e)
        return MPI_Irecv(buf, count, t, source, tag, comm, req);
    int rc = MPI_Irecv(buf, count, t, shift(e, source), tag, e->both, req);
    return rc == MPI_SUCCESS ? remember(*req, e->remote_offset) : rc;
}

int tuw_smpi_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                      void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                      MPI_Comm comm, MPI_Status *st)
{
    emulated *e = find(comm);
    if (!e)
        return MPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
                            comm, st);
    int rc = MPI_Sendrecv(sbuf, scount, stype, shift(e, dest), stag, rbuf, rcount, rtype,
                          shift(e, source), rtag, e->both, st);
    unshift(e->remote_offset, st);
    return rc;
}

int tuw_smpi_probe(int source, int tag, MPI_Comm comm, MPI_Status *st)
{
    emulated *e = find(comm);
    if (!e)
        return MPI_Probe(source, tag, comm, st);
    int rc = MPI_Probe(shift(e, source), tag, e->both, st);
    unshift(e->remote_offset, st);
    return rc;
}

int tuw_smpi_wait(MPI_Request *req, MPI_Status *st)
{
    MPI_Request was = *req;
    MPI_Status mine;
    int rc = MPI_Wait(req, st == MPI_STATUS_IGNORE ? &mine : st);
    int offset = was != MPI_REQUEST_NULL ? recall(was) : -1;
    if (offset >= 0)
        unshift(offset, st);
    return rc;
}

int tuw_smpi_test(MPI_Request *req, int *flag, MPI_Status *st)
{
    MPI_Request was = *req;
    MPI_Status mine;
    int rc = MPI_Test(req, flag, st == MPI_STATUS_IGNORE ? &mine : st);
    if (*flag && was != MPI_REQUEST_NULL) {
        int offset = recall(was);
        if (offset >= 0)
            unshift(offset, st);
    }
    return rc;
}

int tuw_smpi_waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st)
{
    MPI_Request *was = malloc(sizeof(MPI_Request) * (size_t)(n > 0 ? n : 1));
    if (!was)
        return MPI_ERR_NO_MEM;
    memcpy(was, reqs, sizeof(MPI_Request) * (size_t)(n > 0 ? n : 0));
    MPI_Status mine;
    int rc = MPI_Waitany(n, reqs, index, st == MPI_STATUS_IGNORE ? &mine : st);
    if (*index != MPI_UNDEFINED && *index >= 0) {
        int offset = recall(was[*index]);
        if (offset >= 0)
            unshift(offset, st);
    }
    free(was);
    return rc;
}

int tuw_smpi_comm_test_inter(MPI_Comm comm, int *flag)
{
    if (find(comm)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    return MPI_Comm_test_inter(comm, flag);
}

int tuw_smpi_comm_remote_size(MPI_Comm comm, int *size)
{
    emulated *e = find(comm);
    if (!e)
        return MPI_ERR_COMM; /* an intra-communicator has no remote group */
    *size = e->remote_size;
    return MPI_SUCCESS;
}

int tuw_smpi_comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    emulated *e = find(comm);
    if (!e)
        return MPI_ERR_COMM;
    /* a group of the caller's own, as MPI_Comm_remote_group gives (the caller frees it) */
    int range[1][3] = {{0, e->remote_size - 1, 1}};
    return MPI_Group_range_incl(e->remote, 1, range, group);
}

int tuw_smpi_intercomm_merge(MPI_Comm comm, int high, MPI_Comm *out)
{
    emulated *e = find(comm);
    if (!e)
        return MPI_ERR_COMM;
    int rank, size;
    MPI_Comm_rank(e->both, &rank);
    MPI_Comm_size(e->both, &size);
    /* the group passing high = 0 first; if both pass the same, A (the lower ranks) first */
    return MPI_Comm_split(e->both, 0, (high ? size : 0) + rank, out);
}

int tuw_smpi_comm_free(MPI_Comm *comm)
{
    emulated *e = find(*comm);
    if (e)
        forget(e);
    return MPI_Comm_free(comm);
}

/* The intergroup Allgatherv over both groups: see the top of this file.  Blocks are of
 * basic (contiguous) types, which is all the driver passes. */
static int inter_allgatherv(const emulated *e, const void *sbuf, int scount, MPI_Datatype stype,
                            void *rbuf, const int *rcounts, int rcount, const int *rdispls,
                            MPI_Datatype rtype)
{
    int n, rc;
    MPI_Aint lb, ext;
    MPI_Comm_size(e->both, &n);
    MPI_Type_get_extent(rtype, &lb, &ext);
    int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    if (!counts || !displs) {
        free(counts);
        free(displs);
        return MPI_ERR_NO_MEM;
    }
    rc = MPI_Allgather(&scount, 1, MPI_INT, counts, 1, MPI_INT, e->both);
    long long total = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = (int)total;
        total += counts[i];
    }
    char *all = rc == MPI_SUCCESS ? malloc((size_t)(total > 0 ? total : 1) * (size_t)ext) : NULL;
    if (rc == MPI_SUCCESS && !all)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = MPI_Allgatherv(sbuf, scount, stype, all, counts, displs, rtype, e->both);
    for (int i = 0; rc == MPI_SUCCESS && i < e->remote_size; i++) {
        int want = rcounts ? rcounts[i] : rcount, from = e->remote_offset + i;
        if (want != counts[from]) {
            rc = MPI_ERR_TRUNCATE; /* the counts given disagree with what was sent */
            break;
        }
        MPI_Aint at = rdispls ? (MPI_Aint)rdispls[i] : (MPI_Aint)i * rcount;
        memcpy((char *)rbuf + at * ext, all + (MPI_Aint)displs[from] * ext,
               (size_t)want * (size_t)ext);
    }
    free(all);
    free(counts);
    free(displs);
    return rc;
}

int tuw_smpi_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    emulated *e = find(comm);
    return e ? inter_allgatherv(e, sbuf, scount, stype, rbuf, NULL, rcount, NULL, rtype)
             : MPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int tuw_smpi_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        const int *rcounts, const int *rdispls, MPI_Datatype rtype, MPI_Comm comm)
{
    emulated *e = find(comm);
    return e ? inter_allgatherv(e, sbuf, scount, stype, rbuf, rcounts, 0, rdispls, rtype)
             : MPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, rdispls, rtype, comm);
}
