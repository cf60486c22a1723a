/*
 * calibrate.c - the timing loops behind `tuwviz calibrate`: the cost model's alpha, beta
 * and gamma measured on the running ranks (tuwviz/calibrate.py fits and caches them).
 *
 * tuw_ring_shift: every rank sends `bytes` bytes to rank + 1 and receives as many from
 * rank - 1 at the same time (MPI_Sendrecv).  That is one round of a ring algorithm, and
 * the unit of the one-ported, bidirectional model: each process sends one message and
 * receives one in alpha + beta * bytes.  All ranks take part, so a layout with more ranks
 * than cores is measured under its own load.  Each repetition starts at a barrier.
 *
 * tuw_pingpong: ranks 0 and 1 bounce one message while the others sleep (OSU's
 * osu_latency): one transfer alone, half a round trip, also in an oversubscribed layout.
 *
 * times[k] is this rank's time of repetition k (0 on ranks without a part); the caller
 * takes the slowest rank's.
 *
 * tuw_copy_time: memcpy of `bytes` bytes (the cost of a process's own block).
 * tuw_reduce_time: MPI_Reduce_local of `count` elements of datatype/op code (the
 * reductions' gamma per element).
 *
 * Plain MPI calls, not the TUW_ wrappers: these are not kernels and record no trace.
 * All return MPI_SUCCESS, MPI_ERR_NO_MEM, MPI_ERR_COUNT or MPI's error code.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tuwviz.h"

/* Wait for every rank of comm; ranks without a part sleep between tests instead of
 * polling, so the CPU is left to those that time something. */
static int quiet_barrier(MPI_Comm comm, int sleeper)
{
    MPI_Request req;
    int rc = MPI_Ibarrier(comm, &req), done = 0;
    while (rc == MPI_SUCCESS && !done) {
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && !done && sleeper) {
            struct timespec nap = {0, 200000}; /* 0.2 ms */
            nanosleep(&nap, NULL);
        }
    }
    return rc;
}

int tuw_pingpong(MPI_Comm comm, long long bytes, int warmup, int reps, double *times)
{
    int rank, size, rc = MPI_SUCCESS;
    if (bytes < 0 || bytes > INT_MAX)
        return MPI_ERR_COUNT;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int peer = rank < 2 && size > 1 ? 1 - rank : MPI_PROC_NULL;
    char *buf = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (buf == NULL)
        return MPI_ERR_NO_MEM;
    memset(buf, 0x5A, bytes > 0 ? (size_t)bytes : 1); /* touch the pages before timing */
    int n = (int)bytes, first = rank == 0;
    /* The pair synchronizes itself, as osu_latency's; the others sleep meanwhile. */
    for (int k = -warmup; k < reps && rc == MPI_SUCCESS; k++) {
        double t0 = MPI_Wtime();
        if (peer != MPI_PROC_NULL) {
            if (first) {
                rc = MPI_Send(buf, n, MPI_BYTE, peer, 7, comm);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Recv(buf, n, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE);
            } else {
                rc = MPI_Recv(buf, n, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Send(buf, n, MPI_BYTE, peer, 7, comm);
            }
        }
        if (k >= 0)
            times[k] = peer == MPI_PROC_NULL ? 0.0 : MPI_Wtime() - t0;
    }
    int rc2 = quiet_barrier(comm, peer == MPI_PROC_NULL);
    free(buf);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* Two buffers of n bytes, their pages touched (first-touch faults stay out of the timed
 * loops); MPI_ERR_NO_MEM if either cannot be had. */
static int two_buffers(size_t n, char **a, char **b)
{
    *a = malloc(n);
    *b = malloc(n);
    if (*a == NULL || *b == NULL) {
        free(*a);
        free(*b);
        return MPI_ERR_NO_MEM;
    }
    memset(*a, 0x5A, n);
    memset(*b, 0, n);
    return MPI_SUCCESS;
}

int tuw_ring_shift(MPI_Comm comm, long long bytes, int warmup, int reps, double *times)
{
    int rank, size, rc = MPI_SUCCESS;
    if (bytes < 0 || bytes > INT_MAX)
        return MPI_ERR_COUNT;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t n = bytes > 0 ? (size_t)bytes : 1;
    char *out, *in;
    if (two_buffers(n, &out, &in) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int k = -warmup; k < reps && rc == MPI_SUCCESS; k++) {
        rc = MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        if (rc == MPI_SUCCESS)
            rc = MPI_Sendrecv(out, (int)bytes, MPI_BYTE, next, 8, in, (int)bytes, MPI_BYTE, prev,
                              8, comm, MPI_STATUS_IGNORE);
        if (k >= 0)
            times[k] = MPI_Wtime() - t0;
    }
    free(out);
    free(in);
    return rc;
}

int tuw_copy_time(long long bytes, int reps, double *times)
{
    size_t n = bytes > 0 ? (size_t)bytes : 1;
    char *a, *b;
    if (two_buffers(n, &a, &b) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    for (int k = -1; k < reps; k++) { /* one untimed copy: the caches as in a kernel's loop */
        double t0 = MPI_Wtime();
        memcpy(b, a, n);
        double t1 = MPI_Wtime();
        if (k >= 0)
            times[k] = t1 - t0;
        a[k & 63] = b[(k + 1) & 63]; /* the copies depend on each other: none is elided */
    }
    free(a);
    free(b);
    return MPI_SUCCESS;
}

int tuw_reduce_time(int count, int datatype, int op, int reps, double *times)
{
    MPI_Datatype type = tuw_datatype(datatype);
    MPI_Aint lb, extent;
    if (count < 0)
        return MPI_ERR_COUNT;
    MPI_Type_get_extent(type, &lb, &extent);
    size_t n = (size_t)(count > 0 ? count : 1) * (size_t)extent;
    char *in = calloc(n, 1), *inout = calloc(n, 1); /* zeros: no overflow, no NaN */
    if (in == NULL || inout == NULL) {
        free(in);
        free(inout);
        return MPI_ERR_NO_MEM;
    }
    int rc = MPI_SUCCESS;
    for (int k = -1; k < reps && rc == MPI_SUCCESS; k++) {
        double t0 = MPI_Wtime();
        rc = MPI_Reduce_local(in, inout, count, type, tuw_op(op));
        double t1 = MPI_Wtime();
        if (k >= 0)
            times[k] = t1 - t0;
    }
    free(in);
    free(inout);
    return rc;
}
