/*
 * driver.c - the MPI program SimGrid's SMPI runs: tuwviz's cases on simulated ranks.
 *
 * Under SMPI every rank is a simulated process of one real program, so the Python ranks of
 * the mpiexec path (tuwviz.run.worker) cannot run there.  This program does their work in
 * C, with the same kernels, the same registry and the same timing harness (tuw_time):
 *
 *   verify   fill the send buffers with small integers (a function of seed, rank and
 *            index), run the MPI library's collective (here SMPI's, chosen by its named
 *            selector) and the kernel on the same input, and compare every received byte;
 *   measure  tuw_time's repetitions, the slowest rank's time of each (MPI_Wtime is
 *            simulated time), on buffers of SMPI's shared malloc (see place()).
 *
 * The task file (written by tuwviz.run.smpi) is plain text:
 *
 *   tuwviz-smpi-task 2 <fill byte> <ncases>
 *   case <mode 0=verify 1=measure> <algorithm index> <p> <q> <root> <datatype> <op> <seed>
 *        <warmup> <reps> <time limit s> <nparams>
 *   counts <c_0> ... <c_{p+q-1}>        (each rank's block, as tuwviz.problems gives them)
 *   param <name> <n> <v_1> ... <v_n>    (nparams lines: tuw_driver_set, generated)
 *
 * Rank 0 prints one line per event on stdout, "TUWVIZ <json>": hello (every rank's host),
 * result (per case), error (a kernel's MPI error, naming the rank).  Buffer layouts and
 * checks follow tuwviz.run.runner.make_buffers, so a case means the same on both paths.
 *
 * Two groups (q > 0: the intergroup Allgather(v), group A = ranks 0..p-1, B the q after
 * them) run on an inter-communicator of intercomm.c (SMPI has none).  SMPI has no
 * intergroup collective either, so the reference is its MPI_Allgatherv over both groups
 * (an intra-communicator), of which each process keeps the other group's blocks: exactly
 * what MPI defines the intergroup Allgather(v) to deliver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuwviz.h"

/* generated from the algorithm table by tuwviz.kernels.build: a parameter's C setter by name */
int tuw_driver_set(const char *name, int n, char **values);

/* what starts each event line: tuwviz.run.worker.PREFIX, the ranks' own (a test keeps them equal) */
#define TUW_EVENT "TUWVIZ "

enum { MODE_VERIFY = 0, MODE_MEASURE = 1 };

typedef struct {
    int mode, index, p, q, root, datatype, op, warmup, reps, nparams;
    unsigned long long seed;
    double time_limit;
    int *counts;
    char ***params; /* nparams lists: name, n, values */
    int *param_n;
} task_case;

static const int ITEM[] = {1, 4, 8}; /* bytes per element: byte, int, double */

/* splitmix64: data that depends on (seed, rank, p, index) only, like the Python path's */
static unsigned long long mix(unsigned long long x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static void *data(const task_case *c, int rank, long long n)
{
    char *buf = malloc((size_t)(n > 0 ? n : 1) * ITEM[c->datatype]);
    if (!buf)
        return NULL;
    unsigned long long base = mix(c->seed * 1000003ULL + (unsigned long long)rank * 7919ULL
                                  + (unsigned long long)c->p);
    for (long long i = 0; i < n; i++) {
        unsigned long long h = mix(base + (unsigned long long)i);
        if (c->datatype == TUW_DT_BYTE)
            ((unsigned char *)buf)[i] = (unsigned char)(h & 0xff);
        else {
            /* small integers: sums are exact in any order, so reductions compare bit for bit */
            int v = (int)(h % 2000) - 1000;
            if (c->datatype == TUW_DT_INT)
                ((int *)buf)[i] = v;
            else
                ((double *)buf)[i] = (double)v;
        }
    }
    return buf;
}

static void *empty(const task_case *c, long long n, int fill)
{
    size_t bytes = (size_t)(n > 0 ? n : 1) * ITEM[c->datatype];
    char *buf = malloc(bytes);
    if (buf)
        memset(buf, fill, bytes);
    return buf;
}

static int *prefix(const int *counts, int p)
{
    int *d = malloc(sizeof(int) * (p > 0 ? p : 1));
    long long s = 0;
    for (int i = 0; i < p; i++) {
        d[i] = (int)s;
        s += counts[i];
    }
    return d;
}

typedef struct {
    void *send, *recv;
    long long nrecv; /* elements of recv */
    int has_output;  /* MPI leaves recvbuf undefined at non-roots of gather and reduce */
    int shared;      /* send and recv from SMPI's shared malloc (timing runs) */
    int *displs;
    tuw_args a;
} buffers;

/* The send and receive buffers of `b`, once make_buffers has sized them.  Timing runs
 * (`shared`) take them from SMPI's shared malloc: every simulated process gets the same
 * few physical pages, and SMPI moves no payload bytes in or out of them, so a 576-rank
 * Allgatherv of megabytes per rank fits in memory and its wall time follows the number of
 * messages, not their bytes.  Simulated time does not depend on the bytes' values, which
 * are garbage there; verification keeps private buffers filled with known data. */
static int place(const task_case *c, int rank, long long nsend, int fill, int shared,
                 buffers *b)
{
    size_t item = (size_t)ITEM[c->datatype];
    b->shared = shared;
    if (shared) {
        b->send = SMPI_SHARED_MALLOC((size_t)(nsend > 0 ? nsend : 1) * item);
        b->recv = SMPI_SHARED_MALLOC((size_t)(b->nrecv > 0 ? b->nrecv : 1) * item);
    } else {
        b->send = data(c, rank, nsend);
        b->recv = empty(c, b->nrecv, fill);
    }
    b->a.sendbuf = b->send;
    b->a.recvbuf = b->recv;
    return b->send && b->recv ? 0 : -1;
}

/* Two groups: rank's own block, and room for the other group's blocks in rank order. */
static int inter_buffers(const task_case *c, int rank, int fill, int shared, buffers *b)
{
    int in_a = rank < c->p, first = in_a ? c->p : 0, n = in_a ? c->q : c->p;
    memset(b, 0, sizeof *b);
    b->has_output = 1;
    tuw_args *a = &b->a;
    a->datatype = c->datatype;
    a->op = c->op;
    a->sendcount = c->counts[rank];
    const int *remote = c->counts + first;
    for (int i = 0; i < n; i++)
        b->nrecv += remote[i];
    if (tuw_algorithm_get(c->index)->collective == TUW_ALLGATHER)
        a->recvcount = n ? remote[0] : 0;
    else {
        a->recvcounts = (int *)remote;
        a->rdispls = b->displs = prefix(remote, n);
    }
    return place(c, rank, a->sendcount, fill, shared, b);
}

static int make_buffers(const task_case *c, int rank, int fill, int shared, buffers *b)
{
    if (c->q)
        return inter_buffers(c, rank, fill, shared, b);

    int p = c->p, root = c->root, blk = 0, mine = c->counts[rank], is_root = rank == c->root;
    long long total = 0;
    for (int i = 0; i < p; i++) {
        total += c->counts[i];
        if (c->counts[i] > blk)
            blk = c->counts[i];
    }
    memset(b, 0, sizeof *b);
    b->has_output = 1;
    tuw_args *a = &b->a;
    a->datatype = c->datatype;
    a->op = c->op;
    a->root = root;
    long long nsend = 0;
    switch (tuw_algorithm_get(c->index)->collective) {
    case TUW_GATHER:
        nsend = blk; b->nrecv = is_root ? (long long)p * blk : 0; b->has_output = is_root;
        a->sendcount = a->recvcount = blk;
        break;
    case TUW_GATHERV:
        nsend = mine; b->nrecv = is_root ? total : 0; b->has_output = is_root;
        a->sendcount = mine; a->recvcounts = c->counts;
        a->rdispls = b->displs = prefix(c->counts, p);
        break;
    case TUW_SCATTER:
        nsend = is_root ? (long long)p * blk : 0; b->nrecv = blk;
        a->sendcount = a->recvcount = blk;
        break;
    case TUW_SCATTERV:
        nsend = is_root ? total : 0; b->nrecv = mine;
        a->sendcounts = c->counts; a->sdispls = b->displs = prefix(c->counts, p);
        a->recvcount = mine;
        break;
    case TUW_ALLGATHER:
        nsend = blk; b->nrecv = (long long)p * blk;
        a->sendcount = a->recvcount = blk;
        break;
    case TUW_ALLGATHERV:
        nsend = mine; b->nrecv = total;
        a->sendcount = mine; a->recvcounts = c->counts;
        a->rdispls = b->displs = prefix(c->counts, p);
        break;
    case TUW_ALLREDUCE:
        nsend = blk; b->nrecv = blk; a->recvcount = blk;
        break;
    case TUW_REDUCE:
        nsend = blk; b->nrecv = blk; a->recvcount = blk; b->has_output = is_root;
        break;
    case TUW_REDUCE_SCATTER_BLOCK:
        nsend = (long long)p * blk; b->nrecv = blk; a->recvcount = blk;
        break;
    case TUW_REDUCE_SCATTER:
        nsend = total; b->nrecv = mine; a->recvcount = mine; a->recvcounts = c->counts;
        break;
    default:
        return -1;
    }
    return place(c, rank, nsend, fill, shared, b);
}

static void free_buffers(buffers *b)
{
    if (b->shared) {
        SMPI_SHARED_FREE(b->send);
        SMPI_SHARED_FREE(b->recv);
    } else {
        free(b->send);
        free(b->recv);
    }
    free(b->displs);
}

/* Two groups: SMPI's MPI_Allgatherv over both (`both`, A first), the other group's part kept. */
static int inter_reference(const task_case *c, buffers *b, MPI_Comm both)
{
    int rank, n = c->p + c->q, rc;
    MPI_Comm_rank(both, &rank);
    int *displs = prefix(c->counts, n);
    long long total = 0;
    for (int i = 0; i < n; i++)
        total += c->counts[i];
    void *all = empty(c, total, 0);
    if (!displs || !all) {
        free(displs);
        free(all);
        return MPI_ERR_NO_MEM;
    }
    MPI_Datatype t = tuw_datatype(c->datatype);
    rc = MPI_Allgatherv(b->a.sendbuf, b->a.sendcount, t, all, c->counts, displs, t, both);
    if (rc == MPI_SUCCESS) {
        int first = rank < c->p ? c->p : 0;
        memcpy(b->recv, (char *)all + (size_t)displs[first] * ITEM[c->datatype],
               (size_t)b->nrecv * ITEM[c->datatype]);
    }
    free(displs);
    free(all);
    return rc;
}

/* The library's own collective, called directly (not through the registry), on `b`. */
static int reference(const task_case *c, buffers *b, MPI_Comm comm)
{
    tuw_args *a = &b->a;
    MPI_Datatype t = tuw_datatype(c->datatype);
    MPI_Op op = tuw_op(c->op);
    switch (tuw_algorithm_get(c->index)->collective) {
    case TUW_GATHER:
        return MPI_Gather(a->sendbuf, a->sendcount, t, a->recvbuf, a->recvcount, t, a->root, comm);
    case TUW_GATHERV:
        return MPI_Gatherv(a->sendbuf, a->sendcount, t, a->recvbuf, a->recvcounts, a->rdispls, t,
                           a->root, comm);
    case TUW_SCATTER:
        return MPI_Scatter(a->sendbuf, a->sendcount, t, a->recvbuf, a->recvcount, t, a->root, comm);
    case TUW_SCATTERV:
        return MPI_Scatterv(a->sendbuf, a->sendcounts, a->sdispls, t, a->recvbuf, a->recvcount,
                            t, a->root, comm);
    case TUW_ALLGATHER:
        return MPI_Allgather(a->sendbuf, a->sendcount, t, a->recvbuf, a->recvcount, t, comm);
    case TUW_ALLGATHERV:
        return MPI_Allgatherv(a->sendbuf, a->sendcount, t, a->recvbuf, a->recvcounts, a->rdispls,
                              t, comm);
    case TUW_ALLREDUCE:
        return MPI_Allreduce(a->sendbuf, a->recvbuf, a->recvcount, t, op, comm);
    case TUW_REDUCE:
        return MPI_Reduce(a->sendbuf, a->recvbuf, a->recvcount, t, op, a->root, comm);
    case TUW_REDUCE_SCATTER_BLOCK:
        return MPI_Reduce_scatter_block(a->sendbuf, a->recvbuf, a->recvcount, t, op, comm);
    case TUW_REDUCE_SCATTER:
        return MPI_Reduce_scatter(a->sendbuf, a->recvbuf, a->recvcounts, t, op, comm);
    default:
        return MPI_ERR_ARG;
    }
}

/* What rank 0 learns about one rank's result: where it first differs from the library's. */
typedef struct {
    long long index, differing, elements;
    double expected, got;
    int never_written, rank, bad;
} mismatch;

static double value(const task_case *c, const void *buf, long long i)
{
    if (c->datatype == TUW_DT_BYTE)
        return ((const unsigned char *)buf)[i];
    if (c->datatype == TUW_DT_INT)
        return ((const int *)buf)[i];
    return ((const double *)buf)[i];
}

static mismatch compare(const task_case *c, const buffers *ref, const buffers *got, int rank,
                        int fill)
{
    mismatch m = {0};
    m.rank = rank;
    m.index = -1;
    m.elements = got->nrecv;
    if (!ref->has_output)
        return m;
    size_t item = ITEM[c->datatype];
    for (long long i = 0; i < got->nrecv; i++) {
        const char *x = (const char *)ref->recv + i * item, *y = (const char *)got->recv + i * item;
        if (memcmp(x, y, item) != 0) {
            if (m.index < 0) {
                m.index = i;
                m.expected = value(c, ref->recv, i);
                m.got = value(c, got->recv, i);
                m.never_written = 1;
                for (size_t k = 0; k < item; k++)
                    m.never_written &= (unsigned char)y[k] == (unsigned char)fill;
            }
            m.differing++;
        }
    }
    m.bad = m.index >= 0;
    return m;
}

static void print_error(int ncase, int rank, int rc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    for (char *s = text; *s; s++) /* a JSON string: no quotes or backslashes inside */
        if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
            *s = ' ';
    printf(TUW_EVENT "{\"kind\": \"error\", \"case\": %d, \"rank\": %d, \"code\": %d, "
           "\"what\": \"%s\", \"message\": \"%s\"}\n", ncase, rank, rc, what, text);
    fflush(stdout);
}

/* Every rank learns whether any rank failed (rc != MPI_SUCCESS); the lowest failing rank's
 * code reaches rank 0, which reports it.  Returns 1 if one failed.  One Allreduce when all
 * went well: it runs three times a case. */
static int failed_anywhere(int rc, int ncase, const char *what, MPI_Comm comm)
{
    int rank, mine, lowest;
    MPI_Comm_rank(comm, &rank);
    mine = rc == MPI_SUCCESS ? INT_MAX : rank;
    MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm);
    if (lowest == INT_MAX)
        return 0;
    int code = rank == lowest ? rc : 0;
    if (lowest != 0) { /* the failing rank's code, to rank 0 */
        if (rank == lowest)
            MPI_Send(&code, 1, MPI_INT, 0, 99, comm);
        else if (rank == 0)
            MPI_Recv(&code, 1, MPI_INT, lowest, 99, comm, MPI_STATUS_IGNORE);
    }
    if (rank == 0)
        print_error(ncase, lowest, code, what);
    return 1;
}

static int set_params(const task_case *c)
{
    tuw_reset_params();
    for (int k = 0; k < c->nparams; k++) {
        int rc = tuw_driver_set(c->params[k][0], c->param_n[k], c->params[k] + 1);
        if (rc != 0)
            return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

/* `comm`: the case's ranks, for the driver's own messages; `kcomm`: the kernel's (the same,
 * or the inter-communicator of two groups) */
static int run_verify(int ncase, const task_case *c, int fill, MPI_Comm comm, MPI_Comm kcomm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    buffers ref, got;
    int rc = make_buffers(c, rank, fill, 0, &ref) || make_buffers(c, rank, fill, 0, &got)
                 ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    if (failed_anywhere(rc, ncase, "buffers", comm))
        return 1;
    rc = c->q ? inter_reference(c, &ref, comm) : reference(c, &ref, comm);
    if (failed_anywhere(rc, ncase, "library", comm))
        return 1;
    rc = set_params(c);
    if (rc == MPI_SUCCESS)
        rc = tuw_invoke(c->index, &got.a, kcomm);
    tuw_reset_params();
    if (failed_anywhere(rc, ncase, "kernel", comm))
        return 1;
    mismatch m = compare(c, &ref, &got, rank, fill);
    mismatch *all = rank == 0 ? malloc(sizeof(mismatch) * size) : NULL;
    MPI_Gather(&m, (int)sizeof m, MPI_BYTE, all, (int)sizeof m, MPI_BYTE, 0, comm);
    if (rank == 0) {
        int bad = 0;
        for (int r = 0; r < size; r++)
            bad += all[r].bad;
        printf(TUW_EVENT "{\"kind\": \"result\", \"case\": %d, \"ok\": %s, \"mismatches\": [",
               ncase, bad ? "false" : "true");
        for (int r = 0, first = 1; r < size; r++) {
            if (!all[r].bad)
                continue;
            printf("%s{\"rank\": %d, \"index\": %lld, \"expected\": %.17g, \"got\": %.17g, "
                   "\"never_written\": %s, \"differing_elements\": %lld, \"elements\": %lld}",
                   first ? "" : ", ", all[r].rank, all[r].index, all[r].expected, all[r].got,
                   all[r].never_written ? "true" : "false", all[r].differing, all[r].elements);
            first = 0;
        }
        printf("]}\n");
        fflush(stdout);
        free(all);
    }
    free_buffers(&ref);
    free_buffers(&got);
    return 0;
}

static int run_measure(int ncase, const task_case *c, int fill, MPI_Comm comm, MPI_Comm kcomm)
{
    int rank, done = 0;
    MPI_Comm_rank(comm, &rank);
    buffers b;
    int rc = make_buffers(c, rank, fill, 1, &b) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    double *times = calloc((size_t)(c->reps > 0 ? c->reps : 1), sizeof(double));
    double *slowest = calloc((size_t)(c->reps > 0 ? c->reps : 1), sizeof(double));
    if (!times || !slowest)
        rc = MPI_ERR_NO_MEM;
    if (failed_anywhere(rc, ncase, "buffers", comm))
        return 1;
    rc = set_params(c);
    if (rc == MPI_SUCCESS)
        rc = tuw_time(c->index, &b.a, kcomm, c->warmup, c->reps, c->time_limit, times, &done);
    tuw_reset_params();
    int limited = rc == TUW_TIME_LIMIT;
    if (limited)
        rc = MPI_SUCCESS; /* the repetitions done are kept; Python decides what it means */
    if (failed_anywhere(rc, ncase, "kernel", comm))
        return 1;
    /* a repetition's time is the slowest rank's (gatherv paper, Section 5) */
    MPI_Reduce(times, slowest, done, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (rank == 0) {
        printf(TUW_EVENT "{\"kind\": \"result\", \"case\": %d, \"reps\": %d, \"time_limited\": %s, "
               "\"times_us\": [", ncase, done, limited ? "true" : "false");
        for (int k = 0; k < done; k++)
            printf("%s%.9g", k ? ", " : "", slowest[k] * 1e6);
        printf("]}\n");
        fflush(stdout);
    }
    free(times);
    free(slowest);
    free_buffers(&b);
    return 0;
}

static int read_case(FILE *f, task_case *c)
{
    char word[64];
    memset(c, 0, sizeof *c);
    if (fscanf(f, "%63s %d %d %d %d %d %d %d %llu %d %d %lf %d", word, &c->mode, &c->index,
               &c->p, &c->q, &c->root, &c->datatype, &c->op, &c->seed, &c->warmup, &c->reps, &c->time_limit,
               &c->nparams) != 13 || strcmp(word, "case") != 0)
        return -1;
    if (c->p < 1 || c->q < 0 || c->datatype < 0 || c->datatype > 2 || c->nparams < 0 || c->reps < 0
        || !tuw_algorithm_get(c->index))
        return -1;
    c->counts = malloc(sizeof(int) * (c->p + c->q));
    if (fscanf(f, "%63s", word) != 1 || strcmp(word, "counts") != 0)
        return -1;
    for (int i = 0; i < c->p + c->q; i++)
        if (fscanf(f, "%d", &c->counts[i]) != 1 || c->counts[i] < 0)
            return -1;
    c->params = calloc((size_t)(c->nparams ? c->nparams : 1), sizeof(char **));
    c->param_n = calloc((size_t)(c->nparams ? c->nparams : 1), sizeof(int));
    for (int k = 0; k < c->nparams; k++) {
        char name[64];
        int n;
        if (fscanf(f, "%63s %63s %d", word, name, &n) != 3 || strcmp(word, "param") != 0
            || n < 0)
            return -1;
        c->params[k] = calloc((size_t)n + 1, sizeof(char *));
        c->params[k][0] = strdup(name);
        c->param_n[k] = n;
        for (int i = 0; i < n; i++) {
            char v[64];
            if (fscanf(f, "%63s", v) != 1)
                return -1;
            c->params[k][i + 1] = strdup(v);
        }
    }
    return 0;
}

static void free_case(task_case *c)
{
    for (int k = 0; k < c->nparams && c->params && c->params[k]; k++) {
        for (int i = 0; i <= c->param_n[k]; i++)
            free(c->params[k][i]);
        free(c->params[k]);
    }
    free(c->params);
    free(c->param_n);
    free(c->counts);
}

/* The communicator of a case's first p ranks (MPI_COMM_NULL on the others), made once per
 * p and kept: under SMPI a new communicator's first collectives cost seconds of wall time
 * at p = 576 (SMPI builds its node-aware sub-communicators, O(p^2) work), which a split per
 * case paid again every case.  With every rank in the case it is MPI_COMM_WORLD itself. */
enum { MAX_COMMS = 64 };
static struct {
    int p;
    MPI_Comm comm;
} comms[MAX_COMMS];
static int ncomms;

/* The inter-communicators of the cases' group shapes (p, size), one entry per shape on
 * every rank (MPI_COMM_NULL outside the shape's ranks): every rank reads every case, so all
 * keep the same entries and, when TUW_SMPI_MAX_INTER shapes are there, free them together.
 * (A cache of more entries than intercomm.c can hold failed every case from the 17th shape
 * on as a deadlock.) */
static struct {
    int p, size;
    MPI_Comm inter;
} inters[TUW_SMPI_MAX_INTER];
static int ninters;

static void free_inters(void)
{
    for (int k = 0; k < ninters; k++)
        if (inters[k].inter != MPI_COMM_NULL)
            MPI_Comm_free(&inters[k].inter);
    ninters = 0;
}

static void free_comms(void)
{
    free_inters();
    for (int k = 0; k < ncomms; k++)
        if (comms[k].comm != MPI_COMM_NULL)
            MPI_Comm_free(&comms[k].comm);
    ncomms = 0;
}

/* Two groups on `both` (a case's communicator of `size` ranks, MPI_COMM_NULL outside it): A
 * its first p ranks, B the rest; made once per (p, size) like case_comm's, called by every
 * rank.  An inter-communicator of intercomm.c (SMPI has none). */
static MPI_Comm case_intercomm(int p, int size, MPI_Comm both)
{
    for (int k = 0; k < ninters; k++)
        if (inters[k].p == p && inters[k].size == size)
            return inters[k].inter;
    if (ninters == TUW_SMPI_MAX_INTER)
        free_inters();
    MPI_Comm local, inter = MPI_COMM_NULL;
    if (both != MPI_COMM_NULL) {
        int rank;
        MPI_Comm_rank(both, &rank);
        if (MPI_Comm_split(both, rank < p, rank, &local) == MPI_SUCCESS) {
            if (tuw_smpi_intercomm(local, both, p, &inter) != MPI_SUCCESS)
                inter = MPI_COMM_NULL;
            MPI_Comm_free(&local);
        }
    }
    inters[ninters].p = p;
    inters[ninters].size = size;
    inters[ninters++].inter = inter;
    return inter;
}

static MPI_Comm case_comm(int p, int rank)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (p == size) /* all ranks: the world, whose first collective (hello) is already paid */
        return MPI_COMM_WORLD;
    for (int k = 0; k < ncomms; k++)
        if (comms[k].p == p)
            return comms[k].comm;
    if (ncomms == MAX_COMMS)
        free_comms(); /* every rank reads the same task, so all of them free together */
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank < p ? 0 : MPI_UNDEFINED, rank, &comm);
    if (comm != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    comms[ncomms].p = p;
    comms[ncomms++].comm = comm;
    return comm;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, status = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* errors are returned, not fatal: a kernel's error code is a result to report */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    MPI_Get_processor_name(host, &len);
    char *hosts = rank == 0 ? malloc((size_t)size * MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        printf(TUW_EVENT "{\"kind\": \"hello\", \"hosts\": [");
        for (int r = 0; r < size; r++)
            printf("%s\"%s\"", r ? ", " : "", hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME);
        printf("]}\n");
        fflush(stdout);
        free(hosts);
    }

    /* every rank reads the task: a simulated process reads a file like a real one */
    FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
    int version = 0, fill = 0, ncases = 0;
    char magic[64] = "";
    if (!f || fscanf(f, "%63s %d %d %d", magic, &version, &fill, &ncases) != 4
        || strcmp(magic, "tuwviz-smpi-task") != 0 || version != 2) {
        if (rank == 0)
            fprintf(stderr, "tuwviz smpi driver: cannot read the task file %s\n",
                    argc > 1 ? argv[1] : "(none given)");
        MPI_Finalize();
        return 2;
    }
    for (int i = 0; i < ncases && status == 0; i++) {
        task_case c;
        if (read_case(f, &c) != 0) {
            if (rank == 0)
                fprintf(stderr, "tuwviz smpi driver: case %d of the task file is malformed\n", i);
            free_case(&c);
            status = 2;
            break;
        }
        MPI_Comm comm = case_comm(c.p + c.q, rank), kcomm = comm;
        if (c.q)
            kcomm = case_intercomm(c.p, c.p + c.q, comm);
        if (comm != MPI_COMM_NULL) {
            int failed = c.mode == MODE_VERIFY ? run_verify(i, &c, fill, comm, kcomm)
                                               : run_measure(i, &c, fill, comm, kcomm);
            status = failed ? 1 : 0;
        }
        /* ranks outside the case learn whether to go on */
        MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
        free_case(&c);
    }
    fclose(f);
    free_comms();
    MPI_Finalize();
    return status;
}
