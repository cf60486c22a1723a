/*
 * params.c - tuning parameters of the kernels, set without changing any MPI signature.
 *
 * A kernel keeps the MPI-standard signature of its collective, so there is no argument for
 * "block size" or "ring order".  Such knobs are process-global settings instead: Python
 * (tuwviz/params.py, from the [parameter.*] entries of kernels_c/algorithms.toml) sets
 * them on every rank before a kernel runs, and tuw_reset_params restores the defaults.
 * They must be set to the same values on all ranks of a
 * communicator: e.g. the pipelined ring's schedule follows from the block size, and ranks
 * that disagree on it would wait for messages that never come.  tuw_check_params (called
 * by tuw_invoke and once by tuw_time) compares them across the communicator, so such a
 * run fails on every rank with one message instead of hanging.
 *
 * Setters refuse out-of-range values with MPI_ERR_ARG and then store the default: a caller
 * that ignores the code runs with a known value, not with whatever the last run left.
 *
 * Used by kernels_c/allgatherv/ (Träff et al. 2010, pipelined ring Allgatherv).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tuwviz.h"

static long long block_bytes = 0; /* 0: estimate B with Eq. (2) */
static double cost_alpha = TUW_DEFAULT_ALPHA;
static double cost_beta = TUW_DEFAULT_BETA;
static int ring_order = TUW_RING_RANK;
static int *node_map = NULL; /* node_map[i] = node of rank i; NULL: none set */
static int node_map_n = 0;
static char last_error[512] = "";

int tuw_set_block_bytes(long long bytes)
{
    block_bytes = bytes >= 0 ? bytes : 0;
    return bytes >= 0 ? MPI_SUCCESS : MPI_ERR_ARG;
}

long long tuw_get_block_bytes(void) { return block_bytes; }

/* alpha, beta >= 0 and finite: Eq. (2) takes a square root of their ratio */
static int cost_ok(double x) { return isfinite(x) && x >= 0.0; }

int tuw_set_cost_model(double alpha, double beta)
{
    int a = tuw_set_cost_alpha(alpha), b = tuw_set_cost_beta(beta);
    return a != MPI_SUCCESS ? a : b;
}

int tuw_set_cost_alpha(double alpha)
{
    cost_alpha = cost_ok(alpha) ? alpha : TUW_DEFAULT_ALPHA;
    return cost_ok(alpha) ? MPI_SUCCESS : MPI_ERR_ARG;
}

int tuw_set_cost_beta(double beta)
{
    cost_beta = cost_ok(beta) ? beta : TUW_DEFAULT_BETA;
    return cost_ok(beta) ? MPI_SUCCESS : MPI_ERR_ARG;
}

void tuw_get_cost_model(double *alpha, double *beta)
{
    *alpha = cost_alpha;
    *beta = cost_beta;
}

int tuw_set_ring_order(int order)
{
    int ok = order == TUW_RING_RANK || order == TUW_RING_SMP || order == TUW_RING_SPREAD;
    ring_order = ok ? order : TUW_RING_RANK;
    return ok ? MPI_SUCCESS : MPI_ERR_ARG;
}

int tuw_get_ring_order(void) { return ring_order; }

int tuw_set_node_map(int n, const int node_of_rank[])
{
    if (n < 0 || (n > 0 && !node_of_rank))
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (node_of_rank[i] < 0)
            return MPI_ERR_ARG; /* node ids are >= 0 (algorithms.toml: min = 0) */
    int *copy = NULL;
    if (n > 0) {
        copy = malloc((size_t)n * sizeof *copy);
        if (!copy)
            return MPI_ERR_NO_MEM; /* the old map stays in place */
        memcpy(copy, node_of_rank, (size_t)n * sizeof *copy);
    }
    free(node_map);
    node_map = copy;
    node_map_n = n;
    return MPI_SUCCESS;
}

int tuw_get_node_map(const int **node_of_rank)
{
    *node_of_rank = node_map;
    return node_map_n;
}

void tuw_reset_params(void)
{
    block_bytes = 0;
    cost_alpha = TUW_DEFAULT_ALPHA;
    cost_beta = TUW_DEFAULT_BETA;
    ring_order = TUW_RING_RANK;
    tuw_set_node_map(0, NULL);
}

const char *tuw_last_error(void) { return last_error; }

void tuw_clear_error(void) { last_error[0] = '\0'; }

int tuw_not_written(const char *function)
{
    snprintf(last_error, sizeof last_error,
             "%s is not written yet: fill in the TODO markers of its C file", function);
    return MPI_ERR_OTHER;
}

/* ---- agreement across ranks ------------------------------------------------------------ */

/* One rank's settings as compared; doubles compared bit for bit (a value set from the same
 * text is the same double everywhere). */
typedef struct {
    long long block_bytes;
    double alpha, beta;
    long long ring;
    long long nodes_n;
    unsigned long long nodes_hash; /* FNV-1a of the node map */
} settings;

static unsigned long long fnv1a(const int *v, int n)
{
    unsigned long long h = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) {
        unsigned int x = (unsigned int)v[i];
        for (int k = 0; k < 4; k++) {
            h ^= (x >> (8 * k)) & 0xffu;
            h *= 1099511628211ULL;
        }
    }
    return h;
}

static const char *ring_name(long long r)
{
    static const char *names[] = {"rank", "smp", "spread"}; /* order of TUW_RING_* */
    return r >= 0 && r < 3 ? names[r] : "unknown";
}

/* Node map of `rank` as text ("0,1,0" or "none"), broadcast from it: every rank calls this
 * with the same arguments, so all take part in the same broadcasts. */
static int node_map_text(int rank, int n, MPI_Comm comm, char *out, size_t size)
{
    int me, rc;
    MPI_Comm_rank(comm, &me);
    int *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return MPI_ERR_NO_MEM; /* malloc of a few ints: treated as fatal by the caller */
    if (me == rank && n > 0)
        memcpy(v, node_map, (size_t)n * sizeof *v);
    rc = n > 0 ? MPI_Bcast(v, n, MPI_INT, rank, comm) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS) {
        size_t used = 0;
        out[0] = '\0';
        if (n == 0)
            snprintf(out, size, "none");
        for (int i = 0; i < n && used + 16 < size; i++)
            used += (size_t)snprintf(out + used, size - used, "%s%d", i ? "," : "", v[i]);
        if (n > 0 && used + 16 >= size)
            snprintf(out + used, size - used, ",...");
    }
    free(v);
    return rc;
}

int tuw_check_params(MPI_Comm comm)
{
    int rc, p;
    settings mine = {block_bytes, cost_alpha, cost_beta, ring_order, node_map_n,
                     fnv1a(node_map, node_map_n)};
    settings *all;

    tuw_clear_error();
    int inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    /* an inter-communicator's collectives pair the groups: compare over both as one */
    if (inter && (rc = tuw_inter_merged(comm, &comm)) != MPI_SUCCESS)
        return rc;
    MPI_Comm_size(comm, &p);
    all = malloc((size_t)p * sizeof *all);
    /* every rank must join the allgather even without memory: agree on that first */
    int ok = all != NULL, all_ok;
    rc = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (rc == MPI_SUCCESS && !all_ok)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                           comm);
    if (rc != MPI_SUCCESS)
        goto fn_exit;

    /* every rank compares the same data, so all reach the same verdict and message */
    for (int r = 1; r < p; r++) {
        const settings *a = &all[0], *b = &all[r];
        char va[200], vb[200];
        const char *name = NULL;
        if (a->block_bytes != b->block_bytes) {
            name = "block_bytes";
            snprintf(va, sizeof va, "%lld", a->block_bytes);
            snprintf(vb, sizeof vb, "%lld", b->block_bytes);
        } else if (memcmp(&a->alpha, &b->alpha, sizeof a->alpha) != 0) {
            name = "alpha";
            snprintf(va, sizeof va, "%.17g", a->alpha);
            snprintf(vb, sizeof vb, "%.17g", b->alpha);
        } else if (memcmp(&a->beta, &b->beta, sizeof a->beta) != 0) {
            name = "beta";
            snprintf(va, sizeof va, "%.17g", a->beta);
            snprintf(vb, sizeof vb, "%.17g", b->beta);
        } else if (a->ring != b->ring) {
            name = "ring";
            snprintf(va, sizeof va, "%s", ring_name(a->ring));
            snprintf(vb, sizeof vb, "%s", ring_name(b->ring));
        } else if (a->nodes_n != b->nodes_n || a->nodes_hash != b->nodes_hash) {
            name = "nodes";
            rc = node_map_text(0, (int)a->nodes_n, comm, va, sizeof va);
            if (rc == MPI_SUCCESS)
                rc = node_map_text(r, (int)b->nodes_n, comm, vb, sizeof vb);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
        if (name) {
            snprintf(last_error, sizeof last_error,
                     "tuning parameter %s differs between ranks: rank 0 has %s, rank %d has %s",
                     name, va, r, vb);
            rc = MPI_ERR_ARG;
            goto fn_exit;
        }
    }

fn_exit:
    free(all);
    return rc;
}
