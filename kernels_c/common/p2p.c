/*
 * p2p.c - the one point-to-point layer every kernel communicates through.
 *
 * Each wrapper calls the MPI function of the same name and, while tracing is on, records
 * one tuw_event per message.  A non-blocking operation is recorded when it is posted (so
 * the per-rank order of events is the kernel's program order, the order the model
 * compares) and completed - end time, and for receives the bytes actually received - in
 * TUW_Wait / TUW_Waitall.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "tuwviz.h"

static int tracing = 0;
static tuw_event *events = NULL;
static int n_events = 0, cap_events = 0;

/* Posted, not yet completed non-blocking operations: request handle -> event index. */
typedef struct {
    MPI_Request req;
    int ev;
} pending_op;
static pending_op *pending = NULL;
static int n_pending = 0, cap_pending = 0;

void tuw_trace_start(void)
{
    n_events = 0;
    n_pending = 0;
    tracing = 1;
}

void tuw_trace_stop(void) { tracing = 0; }

int tuw_trace_count(void) { return n_events; }

int tuw_trace_copy(tuw_event *out, int n)
{
    int k = n < n_events ? n : n_events;
    for (int i = 0; i < k; i++)
        out[i] = events[i];
    return k;
}

/* Append an event; returns its index, or -1 if tracing is off or memory ran out. */
static int record(MPI_Comm comm, int peer, int dir, int tag, long long bytes, double t0)
{
    if (!tracing)
        return -1;
    if (n_events == cap_events) {
        if (cap_events > INT_MAX / 2) { /* the capacity would not fit an int */
            tracing = 0;
            return -1;
        }
        int cap = cap_events ? 2 * cap_events : 1024;
        tuw_event *grown = realloc(events, (size_t)cap * sizeof *grown);
        if (!grown) {
            tracing = 0; /* an incomplete trace is worse than none: stop recording */
            return -1;
        }
        events = grown;
        cap_events = cap;
    }
    tuw_event *e = &events[n_events];
    MPI_Comm_rank(comm, &e->rank);
    e->peer = peer;
    e->remote = 0;
    MPI_Comm_test_inter(comm, &e->remote);
    e->dir = dir;
    e->tag = tag;
    e->bytes = bytes;
    e->t_start = t0;
    e->t_end = t0;
    return n_events++;
}

static long long type_bytes(int count, MPI_Datatype type)
{
    int size;
    if (MPI_Type_size(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED)
        return -1; /* unknown: recorded as -1 bytes rather than garbage */
    return (long long)count * size;
}

static long long received_bytes(const MPI_Status *st)
{
    MPI_Count n;
    if (MPI_Get_count_c(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED)
        return -1;
    return (long long)n;
}

static void remember_pending(MPI_Request req, int ev)
{
    if (ev < 0)
        return;
    if (n_pending == cap_pending) {
        if (cap_pending > INT_MAX / 2) {
            tracing = 0;
            return;
        }
        int cap = cap_pending ? 2 * cap_pending : 64;
        pending_op *grown = realloc(pending, (size_t)cap * sizeof *grown);
        if (!grown) {
            tracing = 0;
            return;
        }
        pending = grown;
        cap_pending = cap;
    }
    pending[n_pending].req = req;
    pending[n_pending].ev = ev;
    n_pending++;
}

/* Remove and return the event index of a pending request (-1 if not traced). */
static int take_pending(MPI_Request req)
{
    for (int i = 0; i < n_pending; i++) {
        if (pending[i].req == req) {
            int ev = pending[i].ev;
            pending[i] = pending[--n_pending];
            return ev;
        }
    }
    return -1;
}

int TUW_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    double t0 = MPI_Wtime();
    int rc = MPI_Send(buf, count, type, dest, tag, comm);
    int ev = record(comm, dest, TUW_DIR_SEND, tag, type_bytes(count, type), t0);
    if (ev >= 0)
        events[ev].t_end = MPI_Wtime();
    return rc;
}

int TUW_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    MPI_Status st;
    double t0 = MPI_Wtime();
    int rc = MPI_Recv(buf, count, type, source, tag, comm, &st);
    if (rc == MPI_SUCCESS) {
        int ev = record(comm, st.MPI_SOURCE, TUW_DIR_RECV, tag, received_bytes(&st), t0);
        if (ev >= 0)
            events[ev].t_end = MPI_Wtime();
    }
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}

int TUW_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status st;
    double t0 = MPI_Wtime();
    int rc = MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                          recvtype, source, recvtag, comm, &st);
    if (rc == MPI_SUCCESS) {
        double t1 = MPI_Wtime();
        /* the send half is recorded first, as the model's SendRecv lists it */
        int es = record(comm, dest, TUW_DIR_SEND, sendtag, type_bytes(sendcount, sendtype), t0);
        int er = record(comm, st.MPI_SOURCE, TUW_DIR_RECV, recvtag, received_bytes(&st), t0);
        if (es >= 0)
            events[es].t_end = t1;
        if (er >= 0)
            events[er].t_end = t1;
    }
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}

int TUW_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    double t0 = MPI_Wtime();
    int rc = MPI_Isend(buf, count, type, dest, tag, comm, req);
    if (rc == MPI_SUCCESS)
        remember_pending(*req, record(comm, dest, TUW_DIR_SEND, tag, type_bytes(count, type), t0));
    return rc;
}

int TUW_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    double t0 = MPI_Wtime();
    int rc = MPI_Irecv(buf, count, type, source, tag, comm, req);
    /* bytes are filled in on completion: a receive may get less than it posted */
    if (rc == MPI_SUCCESS)
        remember_pending(*req, record(comm, source, TUW_DIR_RECV, tag, 0, t0));
    return rc;
}

static void complete(int ev, const MPI_Status *st)
{
    if (ev < 0)
        return;
    events[ev].t_end = MPI_Wtime();
    if (events[ev].dir == TUW_DIR_RECV) {
        events[ev].peer = st->MPI_SOURCE; /* the sender, even if posted as MPI_ANY_SOURCE */
        events[ev].bytes = received_bytes(st);
    }
}

int TUW_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return MPI_Probe(source, tag, comm, status); /* no event: nothing is transferred */
}

int TUW_Wait(MPI_Request *req, MPI_Status *status)
{
    MPI_Status st;
    int ev = take_pending(*req);
    int rc = MPI_Wait(req, &st);
    if (rc == MPI_SUCCESS)
        complete(ev, &st);
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}

int TUW_Waitall(int n, MPI_Request *reqs, MPI_Status *statuses)
{
    /* Completed one by one with MPI_Waitany so each event gets its own end time. */
    int *evs = malloc((size_t)(n > 0 ? n : 1) * sizeof *evs);
    if (!evs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        evs[i] = reqs[i] == MPI_REQUEST_NULL ? -1 : take_pending(reqs[i]);
    int rc = MPI_SUCCESS;
    for (int k = 0; k < n; k++) {
        int i;
        MPI_Status st;
        rc = MPI_Waitany(n, reqs, &i, &st);
        if (rc != MPI_SUCCESS || i == MPI_UNDEFINED)
            break;
        complete(evs[i], &st);
        if (statuses != MPI_STATUSES_IGNORE)
            statuses[i] = st;
    }
    free(evs);
    return rc;
}

int TUW_Abandon(int n, MPI_Request *reqs)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        take_pending(reqs[i]); /* its event stays as posted: it never completed */
        int rc1 = MPI_Cancel(&reqs[i]);
        int rc2 = MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = rc1 != MPI_SUCCESS ? rc1 : rc2;
    }
    return rc;
}

/* Bytes of count elements of type if they lie as one run from the buffer's start (a basic
 * type, MPI_BYTE, a contiguous type without holes or a moved lower bound), else -1. */
static MPI_Aint contiguous_bytes(int count, MPI_Datatype type)
{
    int size;
    MPI_Aint lb, extent, tlb, textent;
    if (MPI_Type_size(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED ||
        MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(type, &tlb, &textent) != MPI_SUCCESS)
        return -1;
    if (lb != 0 || tlb != 0 || extent != size || textent != size)
        return -1;
    return (MPI_Aint)count * size;
}

int tuw_local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                   MPI_Datatype rtype)
{
    if (scount == 0 && rcount == 0)
        return MPI_SUCCESS;
    /* Contiguous on both sides: memcpy, as the libraries' own local copies do (a message to
     * MPI_COMM_SELF costs a trip through the matching engine, noticeable at small sizes). */
    MPI_Aint sbytes = contiguous_bytes(scount, stype), rbytes = contiguous_bytes(rcount, rtype);
    if (scount >= 0 && rcount >= 0 && sbytes >= 0 && rbytes >= 0) {
        if (sbytes > rbytes)
            return MPI_ERR_TRUNCATE;
        if (sbytes > 0 && src != dst)
            memmove(dst, src, (size_t)sbytes);
        return MPI_SUCCESS;
    }
    return MPI_Sendrecv(src, scount, stype, 0, 0, dst, rcount, rtype, 0, 0, MPI_COMM_SELF,
                        MPI_STATUS_IGNORE);
}

int tuw_require_intracomm(MPI_Comm comm)
{
    static int code = MPI_ERR_COMM; /* an error code of class MPI_ERR_COMM with our text */
    int inter = 0, rc = MPI_Comm_test_inter(comm, &inter);

    if (rc != MPI_SUCCESS)
        return rc;
    if (!inter)
        return MPI_SUCCESS;
    if (code == MPI_ERR_COMM && MPI_Add_error_code(MPI_ERR_COMM, &code) == MPI_SUCCESS)
        MPI_Add_error_string(code, "tuwviz: this kernel needs an intra-communicator "
                                   "(it was given an inter-communicator)");
    return code;
}

int tuw_rooted_begin(MPI_Comm comm, int root, int *rank, int *p)
{
    int rc = tuw_require_intracomm(comm); /* an inter-communicator fails here, no hang */

    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, p);
    /* the same root on every rank: a bad one fails everywhere before anyone communicates */
    return root < 0 || root >= *p ? MPI_ERR_ROOT : MPI_SUCCESS;
}

int tuw_allgather_begin(MPI_Comm comm, const void *sendbuf, int sendcount, int recvcount,
                        int *rank, int *p)
{
    int rc = tuw_require_intracomm(comm);

    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, p);
    /* the same recvcount on every rank, so all return here together */
    if (recvcount < 0 || (sendbuf != MPI_IN_PLACE && sendcount < 0))
        return MPI_ERR_COUNT;
    return MPI_SUCCESS;
}

int tuw_allgatherv_begin(MPI_Comm comm, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype, int *rank, int *p,
                         MPI_Aint *extent)
{
    MPI_Aint lb;
    int rc = tuw_require_intracomm(comm); /* an inter-communicator fails here, no hang */

    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, p);
    /* recvcounts are the same on every rank, so all return here together */
    if (sendbuf != MPI_IN_PLACE && sendcount < 0)
        return MPI_ERR_COUNT;
    for (int i = 0; i < *p; i++)
        if (recvcounts[i] < 0)
            return MPI_ERR_COUNT;
    rc = MPI_Type_get_extent(recvtype, &lb, extent);
    if (rc != MPI_SUCCESS || sendbuf == MPI_IN_PLACE)
        return rc;
    return tuw_local_copy(sendbuf, sendcount, sendtype,
                          (char *)recvbuf + (MPI_Aint)rdispls[*rank] * *extent,
                          recvcounts[*rank], recvtype);
}
