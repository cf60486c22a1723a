/*
 * params.c - tuning parameters of the kernels, set without changing any MPI signature.
 *
 * A kernel keeps the MPI-standard signature of its collective, so there is no argument for
 * "block size" or "ring order".  Such knobs are process-global settings instead: Python
 * (tuwviz/params.py) sets them on every rank before a kernel runs, and tuw_reset_params
 * restores the defaults.  They must be set to the same values on all ranks of a
 * communicator: e.g. the pipelined ring's schedule follows from the block size, and ranks
 * that disagree on it would wait for messages that never come.
 *
 * Used by kernels_c/allgatherv/ (Träff et al. 2010, pipelined ring Allgatherv).
 */
#include <stdlib.h>
#include <string.h>
#include "tuwviz.h"

static long long block_bytes = 0; /* 0: estimate B with Eq. (2) */
static double cost_alpha = TUW_DEFAULT_ALPHA;
static double cost_beta = TUW_DEFAULT_BETA;
static int ring_order = TUW_RING_RANK;
static int *node_map = NULL; /* node_map[i] = node of rank i; NULL: none set */
static int node_map_n = 0;

void tuw_set_block_bytes(long long bytes) { block_bytes = bytes > 0 ? bytes : 0; }

long long tuw_get_block_bytes(void) { return block_bytes; }

void tuw_set_cost_model(double alpha, double beta)
{
    cost_alpha = alpha;
    cost_beta = beta;
}

void tuw_get_cost_model(double *alpha, double *beta)
{
    *alpha = cost_alpha;
    *beta = cost_beta;
}

void tuw_set_ring_order(int order) { ring_order = order; }

int tuw_get_ring_order(void) { return ring_order; }

int tuw_set_node_map(int n, const int node_of_rank[])
{
    if (n < 0 || (n > 0 && !node_of_rank))
        return MPI_ERR_ARG;
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
